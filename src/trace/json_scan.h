// JsonScanner: a validating pull scanner over one JSON text in memory, for
// the fast paths of the hot line readers (native, Mooncake, Claude Code, the
// bill's usage logs). It builds no DOM and allocates nothing.
//
// Contract: a fast path built on it either produces exactly what the
// nlohmann/json path (json_fields.h) would produce from the same text, or
// gives up (every method returns false) and the caller decodes the line
// again with the DOM path, which then also writes the error message. So the
// scanner accepts only texts nlohmann accepts (RFC 8259 plus the same UTF-8
// checks; no leading byte order mark, which the fast path leaves to the DOM
// path), and gives up on anything it does not model: an escape in a string
// it returns or in any key, a key repeated within an object (an error on the
// DOM path), more than kMaxKeys keys in one object, a number that is not a plain integer where a
// count is expected, nesting deeper than kMaxDepth.
#ifndef KVBILL_SRC_TRACE_JSON_SCAN_H_
#define KVBILL_SRC_TRACE_JSON_SCAN_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "kvbill/util/units.h"

namespace kvbill {

class JsonScanner {
 public:
  static constexpr int kMaxDepth = 256;
  // Keys per object the scanner checks for repeats; beyond, it gives up.
  static constexpr std::size_t kMaxKeys = 64;

  explicit JsonScanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  // The next significant character, or '\0' at the end (whitespace skipped).
  char Peek() {
    SkipWhitespace();
    return p_ == end_ ? '\0' : *p_;
  }
  // True when only whitespace is left.
  bool AtEnd() { return Peek() == '\0' && p_ == end_; }

  // An object: calls on_member(key) for each member in order; on_member must
  // consume the value (with any method below) and return false to give up.
  // Keys are returned raw; a key holding an escape gives up.
  template <class OnMember>
  bool Object(OnMember&& on_member) {
    return ScanObject(on_member);
  }

  // An array: calls on_element() for each element; it must consume it.
  template <class OnElement>
  bool Array(OnElement&& on_element) {
    if (Peek() != '[') return false;
    ++p_;
    if (Peek() == ']') {
      ++p_;
      return true;
    }
    while (true) {
      if (!on_element()) return false;
      const char c = Peek();
      if (p_ == end_) return false;
      ++p_;
      if (c == ']') return true;
      if (c != ',') return false;
    }
  }

  // A string without escapes, returned as it stands in the text.
  bool String(std::string_view* out) {
    if (Peek() != '"') return false;
    const char* begin = ++p_;
    bool escaped = false;
    if (!ScanStringBody(&escaped) || escaped) return false;
    *out = std::string_view(begin, static_cast<std::size_t>(p_ - begin - 1));
    return true;
  }

  // Validates and skips any value; *text (when given) is its text.
  bool Skip(std::string_view* text = nullptr) {
    SkipWhitespace();
    const char* begin = p_;
    if (!SkipValue(0)) return false;
    if (text != nullptr) *text = std::string_view(begin, static_cast<std::size_t>(p_ - begin));
    return true;
  }

  // `null`.
  bool Null() { return Literal("null"); }
  bool Bool(bool* out) {
    const char c = Peek();
    *out = c == 't';
    return c == 't' ? Literal("true") : Literal("false");
  }

  // A token count as json_fields.h's GetTokens accepts it on its common path:
  // digits only (no sign, fraction or exponent), at most kMaxTokenCount.
  bool Count(Tokens* out) {
    std::uint64_t value = 0;
    if (!Unsigned(&value) || value > static_cast<std::uint64_t>(kMaxTokenCount)) return false;
    *out = static_cast<Tokens>(value);
    return true;
  }

  // Any integer nlohmann stores as unsigned: digits only, fitting 64 bits.
  bool Unsigned(std::uint64_t* out) {
    Number n;
    if (!ScanNumber(&n) || n.kind != Number::kUnsigned) return false;
    *out = n.unsigned_value;
    return true;
  }

  // A number as nlohmann's get<double>() returns it.
  bool Double(double* out) {
    Number n;
    if (!ScanNumber(&n)) return false;
    switch (n.kind) {
      case Number::kUnsigned:
        *out = static_cast<double>(n.unsigned_value);
        return true;
      case Number::kNegative:
        *out = static_cast<double>(n.negative_value);
        return true;
      case Number::kFloat:
        *out = n.float_value;
        return true;
    }
    return false;
  }

 private:
  struct Number {
    enum Kind { kUnsigned, kNegative, kFloat } kind = kUnsigned;
    std::uint64_t unsigned_value = 0;
    std::int64_t negative_value = 0;
    double float_value = 0;
  };

  // Keys without escapes, each once.
  template <class OnMember>
  bool ScanObject(OnMember&& on_member) {
    if (Peek() != '{') return false;
    ++p_;
    if (Peek() == '}') {
      ++p_;
      return true;
    }
    // Repeated keys are an error on the DOM path: give up on them here. The
    // keys seen are compared raw, so an escaped key (which could spell a
    // seen one differently) or more than kMaxKeys keys give up too.
    std::array<std::string_view, kMaxKeys> seen;
    std::size_t seen_count = 0;
    while (true) {
      if (Peek() != '"') return false;
      const char* begin = ++p_;
      bool escaped = false;
      if (!ScanStringBody(&escaped) || escaped) return false;
      const std::string_view key(begin, static_cast<std::size_t>(p_ - begin - 1));
      if (seen_count == kMaxKeys) return false;
      for (std::size_t i = 0; i < seen_count; ++i) {
        if (seen[i] == key) return false;
      }
      seen[seen_count++] = key;
      if (Peek() != ':') return false;
      ++p_;
      if (!on_member(key)) return false;
      const char c = Peek();
      if (p_ == end_) return false;
      ++p_;
      if (c == '}') return true;
      if (c != ',') return false;
    }
  }

  void SkipWhitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool Literal(std::string_view word) {
    SkipWhitespace();
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::string_view(p_, word.size()) != word) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  bool SkipValue(int depth) {
    if (p_ == end_) return false;
    switch (*p_) {
      case '{':
        if (depth >= kMaxDepth) return false;
        return ScanObject([&](std::string_view) {
          SkipWhitespace();
          return SkipValue(depth + 1);
        });
      case '[':
        if (depth >= kMaxDepth) return false;
        return Array([&] {
          SkipWhitespace();
          return SkipValue(depth + 1);
        });
      case '"': {
        ++p_;
        bool escaped = false;
        return ScanStringBody(&escaped);
      }
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default: {
        Number n;
        return ScanNumber(&n);
      }
    }
  }

  // From just after the opening quote to just after the closing one.
  bool ScanStringBody(bool* escaped);
  bool ScanEscape();
  bool ScanUtf8();
  // RFC 8259 number grammar; classifies as nlohmann's lexer does and gives
  // up on a float out of a double's range.
  bool ScanNumber(Number* n);

  const char* p_;
  const char* end_;
};

// Strings are the bulk of a Claude Code line; this loop stays inline.
inline bool JsonScanner::ScanStringBody(bool* escaped) {
  while (true) {
    // Plain ASCII runs dominate; test them eight bytes at a time.
    while (end_ - p_ >= 8) {
      std::uint64_t word;
      __builtin_memcpy(&word, p_, 8);
      constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
      constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
      const std::uint64_t quote = word ^ (kOnes * '"');
      const std::uint64_t backslash = word ^ (kOnes * '\\');
      // A byte is special when it is '"', '\\', below 0x20 or 0x80 and up.
      const std::uint64_t special = ((quote - kOnes) & ~quote) |
                                    ((backslash - kOnes) & ~backslash) | (word - kOnes * 0x20) |
                                    word;
      if ((special & kHigh) != 0) break;
      p_ += 8;
    }
    if (p_ == end_) return false;
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      ++p_;
      return true;
    }
    if (c == '\\') {
      *escaped = true;
      if (!ScanEscape()) return false;
    } else if (c < 0x20) {
      return false;
    } else if (c >= 0x80) {
      if (!ScanUtf8()) return false;
    } else {
      ++p_;
    }
  }
}

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_JSON_SCAN_H_
