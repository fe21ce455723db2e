#include "trace/timestamp.h"

#include <cstdint>
#include <string>

namespace kvbill {
namespace {

// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
std::int64_t DaysFromCivil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Reads exactly `n` digits at *pos.
bool Digits(std::string_view s, std::size_t* pos, int n, std::int64_t* out) {
  if (*pos + static_cast<std::size_t>(n) > s.size()) return false;
  std::int64_t value = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[*pos + static_cast<std::size_t>(i)];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *pos += static_cast<std::size_t>(n);
  *out = value;
  return true;
}

bool Expect(std::string_view s, std::size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

Result<Timestamp> ParseTimestamp(std::string_view text) {
  // Built only on failure: this runs once per imported call.
  const auto bad = [text] {
    return Error("bad timestamp \"" + std::string(text.substr(0, 40)) +
                 (text.size() > 40 ? "..." : "") + "\"");
  };
  std::size_t pos = 0;
  std::int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, &pos, 4, &year) || !Expect(text, &pos, '-') || !Digits(text, &pos, 2, &month) ||
      !Expect(text, &pos, '-') || !Digits(text, &pos, 2, &day)) {
    return bad();
  }
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != ' ')) return bad();
  ++pos;
  if (!Digits(text, &pos, 2, &hour) || !Expect(text, &pos, ':') ||
      !Digits(text, &pos, 2, &minute) || !Expect(text, &pos, ':') ||
      !Digits(text, &pos, 2, &second)) {
    return bad();
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return bad();
  }
  // The month's own length: 2023-11-31 was silently December 1st.
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  constexpr std::int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return bad();
  std::int64_t fraction_ns = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::int64_t scale = 100'000'000;
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      fraction_ns += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad();
  }
  std::int64_t offset_s = 0;
  if (pos < text.size()) {
    if (text[pos] == 'Z') {
      ++pos;
    } else if (text[pos] == '+' || text[pos] == '-') {
      const int sign = text[pos] == '+' ? 1 : -1;
      ++pos;
      std::int64_t oh = 0, om = 0;
      if (!Digits(text, &pos, 2, &oh) || !Expect(text, &pos, ':') || !Digits(text, &pos, 2, &om)) {
        return bad();
      }
      offset_s = sign * (oh * 3600 + om * 60);
    }
  }
  if (pos != text.size()) return bad();
  // Nanoseconds since 1970, and the difference of any two such times, then
  // fit in 64 bits (which reach 2262-04-11).
  if (year < 1970 || year > 2261) {
    return Error("bad timestamp \"" + std::string(text) + "\": outside the years 1970 to 2261");
  }
  const std::int64_t whole =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  return Timestamp{whole * 1'000'000'000 + fraction_ns};
}

}  // namespace kvbill
