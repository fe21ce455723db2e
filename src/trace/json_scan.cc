#include "trace/json_scan.h"

#include <charconv>
#include <cmath>

namespace kvbill {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool JsonScanner::ScanEscape() {
  // At the backslash.
  const auto code_unit = [this](const char* at, int* out) {
    if (end_ - at < 4) return false;
    int value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = HexDigit(at[i]);
      if (digit < 0) return false;
      value = value * 16 + digit;
    }
    *out = value;
    return true;
  };
  if (end_ - p_ < 2) return false;
  switch (p_[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      p_ += 2;
      return true;
    case 'u': {
      int unit = 0;
      if (!code_unit(p_ + 2, &unit)) return false;
      p_ += 6;
      if (unit >= 0xDC00 && unit <= 0xDFFF) return false;  // a low surrogate alone
      if (unit >= 0xD800 && unit <= 0xDBFF) {
        // A high surrogate must be followed by "\u" and a low one.
        int low = 0;
        if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u' || !code_unit(p_ + 2, &low) ||
            low < 0xDC00 || low > 0xDFFF) {
          return false;
        }
        p_ += 6;
      }
      return true;
    }
    default:
      return false;
  }
}

bool JsonScanner::ScanUtf8() {
  // Well-formed sequences as in Unicode 15, Table 3-7 (nlohmann checks the same).
  const auto b = [this](std::ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
  const auto in = [](unsigned char c, unsigned char lo, unsigned char hi) {
    return c >= lo && c <= hi;
  };
  const unsigned char lead = b(0);
  const std::ptrdiff_t left = end_ - p_;
  if (in(lead, 0xC2, 0xDF)) {
    if (left < 2 || !in(b(1), 0x80, 0xBF)) return false;
    p_ += 2;
    return true;
  }
  if (in(lead, 0xE0, 0xEF)) {
    if (left < 3) return false;
    const unsigned char lo = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned char hi = lead == 0xED ? 0x9F : 0xBF;
    if (!in(b(1), lo, hi) || !in(b(2), 0x80, 0xBF)) return false;
    p_ += 3;
    return true;
  }
  if (in(lead, 0xF0, 0xF4)) {
    if (left < 4) return false;
    const unsigned char lo = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned char hi = lead == 0xF4 ? 0x8F : 0xBF;
    if (!in(b(1), lo, hi) || !in(b(2), 0x80, 0xBF) || !in(b(3), 0x80, 0xBF)) return false;
    p_ += 4;
    return true;
  }
  return false;
}

bool JsonScanner::ScanNumber(Number* n) {
  SkipWhitespace();
  const char* begin = p_;
  const bool negative = p_ != end_ && *p_ == '-';
  if (negative) ++p_;
  if (p_ == end_ || !IsDigit(*p_)) return false;
  // Integer part; accumulate while it fits 64 bits.
  std::uint64_t value = 0;
  bool overflow = false;
  if (*p_ == '0') {
    ++p_;
  } else {
    while (p_ != end_ && IsDigit(*p_)) {
      const auto digit = static_cast<std::uint64_t>(*p_ - '0');
      if (value > (UINT64_MAX - digit) / 10) overflow = true;
      value = value * 10 + digit;
      ++p_;
    }
  }
  bool is_float = false;
  if (p_ != end_ && *p_ == '.') {
    ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return false;
    while (p_ != end_ && IsDigit(*p_)) ++p_;
    is_float = true;
  }
  if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return false;
    while (p_ != end_ && IsDigit(*p_)) ++p_;
    is_float = true;
  }
  // nlohmann: an integer that does not fit its 64-bit type becomes a float.
  if (!is_float && !overflow && !negative) {
    n->kind = Number::kUnsigned;
    n->unsigned_value = value;
  } else if (!is_float && !overflow && value <= static_cast<std::uint64_t>(INT64_MAX) + 1) {
    n->kind = Number::kNegative;
    n->negative_value = value == static_cast<std::uint64_t>(INT64_MAX) + 1
                            ? INT64_MIN
                            : -static_cast<std::int64_t>(value);
  } else {
    // nlohmann rejects a float beyond a double's range; one that underflows
    // to zero it accepts. from_chars reports both as out of range, so give
    // up on either (the DOM path then decides).
    n->kind = Number::kFloat;
    const auto [end, error] = std::from_chars(begin, p_, n->float_value);
    if (error != std::errc() || end != p_ || !std::isfinite(n->float_value)) return false;
  }
  return true;
}

}  // namespace kvbill
