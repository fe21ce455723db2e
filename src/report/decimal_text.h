// Locale-independent printing of doubles for generated documents (SVG), so
// that equal inputs give byte-identical output whatever the process locale.
#ifndef KVBILL_REPORT_DECIMAL_TEXT_H_
#define KVBILL_REPORT_DECIMAL_TEXT_H_

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

namespace kvbill {

// `value` with exactly `decimals` places and a '.' point: FixedText(2.5, 2)
// is "2.50". Negative zero prints without its sign ("0.00"); non-finite
// values print as "0".
inline std::string FixedText(double value, int decimals) {
  if (!std::isfinite(value)) return "0";
  char buf[400];  // the widest double in fixed notation has 309 integer digits
  const auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, decimals);
  if (ec != std::errc()) return "0";
  std::string s(buf, end);
  if (s.front() == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

// A length in SVG user units (px), two decimals: Px(7) is "7.00".
inline std::string Px(double value) { return FixedText(value, 2); }

// The charts' fonts: DejaVu Sans first, whose advances label_layout.cc
// measures labels with.
inline constexpr char kChartFontFamily[] = "DejaVu Sans, Arial, sans-serif";

// The shortest text that reads back as `value` ("0.1", "1e+300"), for error
// messages.
inline std::string ShortestText(double value) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : "?";
}

}  // namespace kvbill

#endif  // KVBILL_REPORT_DECIMAL_TEXT_H_
