#include "util/json_input.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace kvbill::json_input {
namespace {

// Finds the first key repeated within one object (nlohmann/json keeps the
// last silently) while the document is parsed, and its JSON pointer.
template <class BasicJson>
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, typename BasicJson::parse_event_t event, BasicJson& parsed) {
    using Event = typename BasicJson::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        stack_.push_back(Frame{event == Event::object_start, {}, "", 0});
        break;
      case Event::key: {
        Frame& top = stack_.back();
        top.key = EscapePointerKey(parsed.template get_ref<const std::string&>());
        if (!top.keys.insert(top.key).second && !duplicate_) duplicate_ = Pointer();
        break;
      }
      case Event::object_end:
      case Event::array_end:
        stack_.pop_back();
        ChildDone();
        break;
      case Event::value:
        ChildDone();
        break;
    }
    return true;
  }

  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool is_object;
    std::set<std::string> keys;
    std::string key;    // objects: the current member's escaped key
    std::size_t index;  // arrays: the current element's index
  };

  void ChildDone() {
    if (!stack_.empty() && !stack_.back().is_object) ++stack_.back().index;
  }

  std::string Pointer() const {
    std::string pointer;
    for (const Frame& f : stack_) pointer += "/" + (f.is_object ? f.key : std::to_string(f.index));
    return pointer;
  }

  std::vector<Frame> stack_;
  std::optional<std::string> duplicate_;
};

// nlohmann's "[json.exception.parse_error.101] parse error at line L, column
// C: REASON" -> REASON, with the token it quotes ("last read: '...'")
// bounded.
std::string SyntaxReason(const std::string& what) {
  const std::size_t column = what.find("column");
  const std::size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  constexpr std::string_view kLastRead = "last read: '";
  const std::size_t read = reason.find(kLastRead);
  if (read != std::string::npos) {
    const std::size_t begin = read + kLastRead.size();
    // The token ends at its closing quote: before "; expected ..." when
    // the parser adds what it expected, else the last quote.
    std::size_t end = reason.rfind("'; expected ");
    if (end == std::string::npos || end < begin) end = reason.rfind('\'');
    if (end != std::string::npos && end >= begin) {
      reason = reason.substr(0, begin) +
               Bounded(std::string_view(reason).substr(begin, end - begin)) + reason.substr(end);
    }
  }
  return Bounded(reason, kMaxReason);
}

template <class BasicJson>
void QuoteInto(const BasicJson& value, std::size_t max, std::string* out) {
  if (out->size() > max) return;
  if (value.is_string()) {
    // Only the prefix that can show: a cut never splits a UTF-8 sequence.
    const std::string& s = value.template get_ref<const std::string&>();
    std::string_view head = s;
    if (head.size() > max + 1) {
      std::size_t cut = max + 1;
      while (cut > 0 && (static_cast<unsigned char>(head[cut]) & 0xC0) == 0x80) --cut;
      head = head.substr(0, cut);
    }
    *out += BasicJson(std::string(head)).dump(-1, ' ', false, BasicJson::error_handler_t::replace);
    if (head.size() < s.size()) out->pop_back();  // the closing quote is not reached
    return;
  }
  if (value.is_array()) {
    *out += '[';
    bool first = true;
    for (const auto& element : value) {
      if (out->size() > max) return;
      if (!first) *out += ',';
      first = false;
      QuoteInto(element, max, out);
    }
    *out += ']';
    return;
  }
  if (value.is_object()) {
    *out += '{';
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (out->size() > max) return;
      if (!first) *out += ',';
      first = false;
      QuoteInto(BasicJson(it.key()), max, out);
      *out += ':';
      QuoteInto(it.value(), max, out);
    }
    *out += '}';
    return;
  }
  *out += value.dump(-1, ' ', false, BasicJson::error_handler_t::replace);
}

template <class BasicJson>
std::string QuoteValue(const BasicJson& value, std::size_t max) {
  std::string text;
  QuoteInto(value, max, &text);
  if (text.size() > max) {
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return text;
}

template <class BasicJson>
std::optional<BasicJson> ParseText(std::string_view text, Problem* problem,
                                   const Options& options) {
  if (const auto deep = FindTooDeep(text)) {
    *problem = Problem{Problem::Kind::kTooDeep, *deep,
                       "nested deeper than " + std::to_string(kMaxDepth) + " levels", ""};
    return std::nullopt;
  }
  // nlohmann's lexer reads a NUL byte as the end of the input (the end of
  // a C string), so a document followed by one would end there, silently
  // dropping the rest: JSON has no NUL byte outside a \u0000 escape.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    *problem = Problem{Problem::Kind::kSyntax, nul, "a NUL byte (JSON has none)", ""};
    return std::nullopt;
  }
  DuplicateKeyFinder<BasicJson> duplicates;
  BasicJson doc;
  try {
    if (options.allow_duplicate_keys) {
      doc = BasicJson::parse(text.begin(), text.end());
    } else {
      doc = BasicJson::parse(text.begin(), text.end(), std::ref(duplicates));
    }
  } catch (const typename BasicJson::parse_error& e) {
    const std::string what = e.what();
    const bool truncated =
        e.byte > text.size() || what.find("unexpected end of input") != std::string::npos;
    *problem = Problem{truncated ? Problem::Kind::kTruncated : Problem::Kind::kSyntax,
                       std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size()),
                       SyntaxReason(what), ""};
    return std::nullopt;
  } catch (const typename BasicJson::out_of_range& e) {
    // "[json.exception.out_of_range.406] number overflow parsing '1e999'".
    const std::string_view what = e.what();
    const std::size_t quote = what.find('\'');
    std::string_view number = quote == std::string_view::npos ? what : what.substr(quote + 1);
    if (!number.empty() && number.back() == '\'') number.remove_suffix(1);
    // Where it stands: its first occurrence as a value, after ':', '[' or
    // ',' and before ',', ']', '}' or the end, blanks aside (nlohmann gives
    // no position for this error); text.size() when not found.
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    const auto is_value = [&](std::size_t at) {
      std::size_t before = at;
      while (before > 0 && blank(text[before - 1])) --before;
      std::size_t after = at + number.size();
      while (after < text.size() && blank(text[after])) ++after;
      return before > 0 &&
             std::string_view(":[,").find(text[before - 1]) != std::string_view::npos &&
             (after == text.size() ||
              std::string_view(",]}").find(text[after]) != std::string_view::npos);
    };
    // Outside strings: a string holding "[1e999]" is text, not a value.
    std::size_t at = std::string_view::npos;
    bool in_string = false;
    for (std::size_t i = 0; !number.empty() && i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (text.compare(i, number.size(), number) == 0 && is_value(i)) {
        at = i;
        break;
      }
    }
    *problem = Problem{Problem::Kind::kNumberRange, at == std::string_view::npos ? text.size() : at,
                       "number out of range: " + Bounded(number), ""};
    return std::nullopt;
  }
  if (duplicates.duplicate()) {
    *problem = Problem{Problem::Kind::kDuplicateKey, 0, "repeated key", *duplicates.duplicate()};
    return std::nullopt;
  }
  return doc;
}

}  // namespace

std::optional<std::size_t> FindTooDeep(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return i;
        break;
      case ']':
      case '}':
        // Unbalanced closers are the parser's to report.
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

std::string Bounded(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

std::string Quote(const nlohmann::json& value, std::size_t max) { return QuoteValue(value, max); }
std::string Quote(const nlohmann::ordered_json& value, std::size_t max) {
  return QuoteValue(value, max);
}

std::string RangeText(double least, double most) {
  const auto g = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return std::string(buf);
  };
  const bool low = std::isfinite(least), high = std::isfinite(most);
  if (low && high) return "in [" + g(least) + ", " + g(most) + "]";
  return low ? "at least " + g(least) : "at most " + g(most);
}

std::string LineColumn(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

std::string EscapePointerKey(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<nlohmann::json> Parse(std::string_view text, Problem* problem,
                                    const Options& options) {
  return ParseText<nlohmann::json>(text, problem, options);
}

std::optional<nlohmann::ordered_json> ParseOrdered(std::string_view text, Problem* problem,
                                                   const Options& options) {
  return ParseText<nlohmann::ordered_json>(text, problem, options);
}

std::string Describe(const std::string& source, std::string_view text, const Problem& problem) {
  switch (problem.kind) {
    case Problem::Kind::kDuplicateKey:
      return source + "#" + problem.pointer + ": " + problem.reason;
    case Problem::Kind::kNumberRange:
      if (problem.byte >= text.size()) return source + ": not valid JSON: " + problem.reason;
      break;
    case Problem::Kind::kTruncated:
    case Problem::Kind::kSyntax:
    case Problem::Kind::kTooDeep:
      break;
  }
  return source + ":" + LineColumn(text, problem.byte) + ": not valid JSON: " + problem.reason;
}

}  // namespace kvbill::json_input
