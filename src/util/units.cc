#include "kvbill/util/units.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace kvbill {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<double> ParseDecimal(std::string_view text) {
  // from_chars reads decimal and exponent notation only: no hexadecimal
  // ("0x2", which strtod read as 2), no leading blanks or '+'.
  double v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<double> ParsePositiveNumber(const std::string& text) {
  const std::optional<double> v = ParseDecimal(text);
  if (!v || !(*v > 0)) return std::nullopt;
  return v;
}

Result<Tokens> ParseTokenCount(std::string_view text) {
  const std::string_view s = Trim(text);
  const std::string quoted = "\"" + std::string(text) + "\"";
  if (s.empty()) return Error("empty token count");
  std::int64_t multiplier = 1;
  std::string_view number = s;
  auto strip = [&](std::string_view suffix, std::int64_t m) {
    if (number.size() > suffix.size() && number.ends_with(suffix)) {
      number.remove_suffix(suffix.size());
      multiplier = m;
      return true;
    }
    return false;
  };
  strip("Ki", 1024) || strip("k", 1024) || strip("K", 1024) || strip("Mi", 1 << 20) ||
      strip("M", 1 << 20);

  if (multiplier == 1) {
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || ptr != number.data() + number.size()) {
      return Error("bad token count " + quoted + " (expected e.g. 8192, 32k or 1M)");
    }
    if (value <= 0) return Error("token count " + quoted + " must be positive");
    if (value > kMaxTokenCount) return Error("token count " + quoted + " is above 2^40");
    return value;
  }
  double mantissa = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), mantissa);
  if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(mantissa)) {
    return Error("bad token count " + quoted + " (expected e.g. 8192, 32k or 1M)");
  }
  const double value = mantissa * static_cast<double>(multiplier);
  if (value <= 0) return Error("token count " + quoted + " must be positive");
  if (value > static_cast<double>(kMaxTokenCount)) {
    return Error("token count " + quoted + " is above 2^40");
  }
  if (value != std::floor(value)) {
    return Error("token count " + quoted + " is not a whole number of tokens");
  }
  return static_cast<Tokens>(value);
}

Result<std::vector<Tokens>> ParseTokenCountList(std::string_view text) {
  std::vector<Tokens> out;
  std::size_t start = 0;
  std::string_view previous;  // the item before, as written
  auto digits = [](std::string_view item, std::size_t lo, std::size_t hi) {
    return item.size() >= lo && item.size() <= hi &&
           item.find_first_not_of("0123456789") == std::string_view::npos;
  };
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    // "32,768" or "1,000": a thousands separator read as the list's comma
    // (32 and 768 tokens as a list of contexts is no one's intent).
    if (start > 0 && digits(item, 3, 3) && digits(previous, 1, 3)) {
      const std::string written = std::string(previous) + "," + std::string(item);
      return Error("\"" + written +
                   "\" reads as a number with a thousands separator, but commas separate the "
                   "list's counts: write " +
                   std::string(previous) + std::string(item) + " (or 32k, 1M)");
    }
    auto parsed = ParseTokenCount(item);
    if (!parsed) return parsed.error();
    out.push_back(*parsed);
    previous = item;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string FormatWithSeparators(std::int64_t value) {
  const bool negative = value < 0;
  std::string digits = std::to_string(negative ? -(value + 1) + 1 : value);
  if (negative && value == INT64_MIN) digits = "9223372036854775808";
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[static_cast<std::size_t>(i)]);
  }
  return negative ? "-" + out : out;
}

std::string ShortestDecimal(double value) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

std::string FormatPercentOf(double fraction) {
  const double percent = fraction * 100;
  for (int decimals = 0; decimals < 2; ++decimals) {
    const double scale = std::pow(10.0, decimals);
    if (std::fabs(percent * scale - std::round(percent * scale)) < 1e-9) {
      return FormatFixed(percent, decimals);
    }
  }
  return FormatFixed(percent, 2);
}

std::string FormatRate(double value) {
  if (!(std::fabs(value) < 10) || value == 0) return FormatFixed(value, 0);
  const int decimals =
      static_cast<int>(std::clamp(2 - std::floor(std::log10(std::fabs(value))), 0.0, 12.0));
  return FormatFixed(value, decimals);
}

std::string FormatUsdAmount(double usd) {
  const double a = std::fabs(usd);
  int decimals = 4;
  if (a > 0 && a < 0.01) decimals = std::min(12, 2 - static_cast<int>(std::floor(std::log10(a))));
  return "$" + FormatFixed(a, decimals);
}

std::string FormatFixed(double value, int decimals) {
  if (!std::isfinite(value)) return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(value));
  std::string s(buf);
  const std::size_t dot = s.find('.');
  std::string whole = s.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : s.substr(dot);
  std::string grouped;
  const int n = static_cast<int>(whole.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) grouped.push_back(',');
    grouped.push_back(whole[static_cast<std::size_t>(i)]);
  }
  const bool negative = value < 0 && std::stod(s) != 0.0;
  return (negative ? "-" : "") + grouped + frac;
}

std::string FormatTokenCount(Tokens tokens) {
  // The short forms while they stay short (under 10,000 of the unit): 10^12
  // tokens is "1,000,000,000,000", not "976562500k".
  constexpr Tokens kShort = 10000;
  if (tokens > 0 && tokens % (1 << 20) == 0 && (tokens >> 20) < kShort) {
    return std::to_string(tokens >> 20) + "M";
  }
  if (tokens > 0 && tokens % 1024 == 0 && (tokens >> 10) < kShort) {
    return std::to_string(tokens >> 10) + "k";
  }
  return FormatWithSeparators(tokens);
}

std::string FormatBinaryBytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a < kBytesPerKiB) return FormatWithSeparators(static_cast<std::int64_t>(bytes)) + " B";
  // A unit serves while its two-decimal text stays below 1,024.00 (1023.995
  // rounds up to it); the last unit serves from there on.
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double unit = kBytesPerKiB;
  for (const char* name : kUnits) {
    if (a < 1023.995 * unit) return FormatFixed(bytes / unit, 2) + " " + name;
    unit *= 1024.0;
  }
  return FormatFixed(bytes / unit, 2) + " EiB";
}

std::string FormatDuration(Seconds seconds) {
  // Each unit's upper bound is where its rounded text would read 10.00 s,
  // 60.0 s, 60.0 min or 24.0 h.
  const double a = std::fabs(seconds);
  if (a < 9.995) return FormatFixed(seconds, 2) + " s";
  if (a < 59.95) return FormatFixed(seconds, 1) + " s";
  if (a < 59.95 * 60.0) return FormatFixed(seconds / 60.0, 1) + " min";
  if (a < 23.95 * 3600.0) return FormatFixed(seconds / 3600.0, 1) + " h";
  return FormatFixed(seconds / 86400.0, 1) + " days";
}

}  // namespace kvbill
