// Units used across kvbill, and parsing / printing of sizes and token counts.
//
// Tokens are integers. Bytes of one sequence fit in 64 bits (2 MiB/token at
// 2^20 tokens is 2^41); sums over long traces use the wider types of the
// metrics code. GiB means 2^30 bytes and GB means 10^9 bytes, everywhere.
#ifndef KVBILL_UTIL_UNITS_H_
#define KVBILL_UTIL_UNITS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill {

using Tokens = std::int64_t;
using Bytes = std::int64_t;
using Seconds = double;

inline constexpr double kBytesPerKiB = 1024.0;
inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kMillisecondsPerSecond = 1000.0;
inline constexpr std::int64_t kNsPerS = 1'000'000'000;

// a / b rounded up, for a >= 0 and b > 0: blocks that hold a tokens, bytes
// that hold a bits. No intermediate sum, so no overflow up to INT64_MAX.
inline constexpr std::int64_t CeilDiv(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

// Whole bytes that hold `bits` (>= 0).
inline constexpr Bytes BitsToBytes(std::int64_t bits) { return CeilDiv(bits, 8); }

// The largest token count kvbill accepts anywhere (flags, scenarios, every
// count a trace or log reader reads, a task's prompt): 2^40 =
// 1,099,511,627,776. Sums of a few such counts, and a count times the largest
// KV bytes per token (2^21), stay far inside 64 bits. docs/robustness.md.
inline constexpr Tokens kMaxTokenCount = Tokens{1} << 40;

// The longest stretch of time a simulation can time: 10^9 s (31.7 years).
// Times are doubles in seconds, whose spacing there is 1.2e-7 s, so
// iteration times of microseconds still add up; at 10^16 s the spacing is
// 2 s and a whole task would take no time at all. Every trace reader holds
// its tasks to it (trace.h CheckServable, reader.h). docs/robustness.md.
inline constexpr Seconds kMaxSimulatedSeconds = 1e9;

// Parses a token count: a plain integer is exact ("1000000"); the suffixes
// k, K, Ki mean 2^10 and M, Mi mean 2^20 ("32k" = 32,768, "1M" = 1,048,576);
// a decimal mantissa is allowed with a suffix when the result is whole
// ("1.5k" = 1,536). Fails on anything else, on zero or negative counts and on
// counts above 2^40.
Result<Tokens> ParseTokenCount(std::string_view text);

// Parses a finite decimal number, the whole of `text` ("0.25", "-3",
// "1e-3"); nullopt on anything else (empty, blanks, hexadecimal, trailing
// characters, inf, nan).
std::optional<double> ParseDecimal(std::string_view text);

// Parses a positive finite decimal number, the whole of `text` ("0.25",
// "1e-3"); nullopt on anything else (empty, trailing characters, 0, a
// negative number, inf, nan, hexadecimal).
std::optional<double> ParsePositiveNumber(const std::string& text);

// Parses a comma-separated list of token counts ("32k,128k,1M").
Result<std::vector<Tokens>> ParseTokenCountList(std::string_view text);

// "32k" style label for a count that is a whole number of 2^10 or 2^20
// tokens, else the plain integer with thousands separators ("1,000,000").
std::string FormatTokenCount(Tokens tokens);

// Bytes in the binary unit that keeps the number below 1,024, with two
// decimals: "256.00 KiB", "8.00 GiB", "1.92 PiB"; below 1 KiB the exact
// integer ("512 B"); from 1,024 PiB on, EiB. KiB = 2^10 bytes, PiB = 2^50.
std::string FormatBinaryBytes(double bytes);

// A duration in the unit a reader expects, with one decimal (two below 10 s):
// "0.35 s", "42.0 s" below a minute, "3.5 min" below an hour, "2.1 h" below a
// day, "195.6 days" from then on (thousands separated).
std::string FormatDuration(Seconds seconds);

// An integer with thousands separators: 70272 -> "70,272".
std::string FormatWithSeparators(std::int64_t value);

// A double with `decimals` places and thousands separators: "1,234.50".
std::string FormatFixed(double value, int decimals);

// A fraction as a percentage with the decimals it needs, up to two:
// 0.9 -> "90", 0.835 -> "83.5", 0.8125 -> "81.25" (a memory share of 0.835
// once read "84").
std::string FormatPercentOf(double fraction);

// Dollars with four decimals, or three significant digits below a cent:
// 0.22 -> "$0.2200", 0.0000312 -> "$0.0000312" (a cheap task's amount
// still says how much, not "$0.0000"). The sign is dropped.
std::string FormatUsdAmount(double usd);

// A rate or count that may be fractional ("2,134", "3.50", "0.0465"):
// whole with separators from 10 up, three significant digits below (a
// few tasks over weeks once printed "0 tasks a day").
std::string FormatRate(double value);

// The shortest decimal that reads back as the same double: "0.25", "4",
// "300.0000001", "1e-300" (for values echoed in messages: a rounded echo
// says "got 300" of 300.0000001).
std::string ShortestDecimal(double value);

}  // namespace kvbill

#endif  // KVBILL_UTIL_UNITS_H_
