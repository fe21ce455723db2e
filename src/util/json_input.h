// The one front door through which every reader of JSON text parses it
// (traces, logs, scenarios, model configs, GPU files, price sheets, sweep
// shards, calibration files): the same depth limit, the same duplicate-key
// rule and messages that quote a bounded prefix of what they show
// (docs/robustness.md#json-input). Each reader turns a Problem into its own
// message form (FILE:LINE:COLUMN, FILE#/pointer, ...).
#ifndef KVBILL_SRC_UTIL_JSON_INPUT_H_
#define KVBILL_SRC_UTIL_JSON_INPUT_H_

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kvbill::json_input {

// Arrays and objects nest at most this deep (the JSON text itself: `[[1]]`
// is 2 levels). Deeper text is refused before it is parsed: printing or
// walking a value is recursive, and 100,000 levels overflowed the stack.
// Equal to JsonScanner::kMaxDepth, the fast line readers' limit.
inline constexpr int kMaxDepth = 256;

// A message quotes at most this many characters of a value or a token,
// then "...".
inline constexpr std::size_t kMaxQuote = 40;
// A parser's reason is at most this long (its fixed words, the bounded token
// and what it expected), then "...".
inline constexpr std::size_t kMaxReason = 256;

// Why a text was refused.
struct Problem {
  enum class Kind {
    kSyntax,        // not JSON; byte is where the parser stopped
    kTruncated,     // the text ended inside a value (reason: the parser's)
    kNumberRange,   // a number beyond a double (1e999); no position
    kTooDeep,       // nested deeper than kMaxDepth; byte is the bracket
    kDuplicateKey,  // a key repeated within one object; pointer names it
  };
  Kind kind = Kind::kSyntax;
  std::size_t byte = 0;  // 0-based offset into the text
  // kSyntax: the parser's reason ("syntax error while parsing value -
  // invalid literal; last read: 'tru'"), its quoted token bounded;
  // kNumberRange: "number out of range: 1e999"; kTooDeep: "nested deeper
  // than 256 levels"; kDuplicateKey: "repeated key".
  std::string reason;
  std::string pointer;  // kDuplicateKey: the JSON pointer of the second one
};

struct Options {
  // Model configs are read as Python's json module reads them: the last of
  // repeated keys wins. Every other reader refuses repeated keys.
  bool allow_duplicate_keys = false;
};

// The offset of the first '[' or '{' (outside strings) that opens a level
// deeper than max_depth, or nullopt. Linear, no allocation.
std::optional<std::size_t> FindTooDeep(std::string_view text, int max_depth = kMaxDepth);

// s itself when at most `max` characters, else its first `max` and "...".
// Never cuts a UTF-8 sequence in two.
std::string Bounded(std::string_view s, std::size_t max = kMaxQuote);

// The value as compact JSON, at most `max` characters and "...": arrays and
// objects are printed element by element and stop at the bound, so a
// 100 MB value costs no 100 MB string.
std::string Quote(const nlohmann::json& value, std::size_t max = kMaxQuote);
std::string Quote(const nlohmann::ordered_json& value, std::size_t max = kMaxQuote);

// The words of a documented range in an error, bounds as %g writes them:
// "in [0.001, 1e+06]"; "at least 0.01" when `most` is infinite, "at most
// 60" when `least` is -infinity. Every reader of ranged numbers says it so
// (scenario keys, the GPU catalog, engine profiles).
std::string RangeText(double least, double most);

// Line and column ("L:C", both from 1) of a byte offset.
std::string LineColumn(std::string_view text, std::size_t byte);

// The JSON pointer escape of one key: "~" -> "~0", "/" -> "~1".
std::string EscapePointerKey(std::string_view key);

// Parses `text`: refuses nesting beyond kMaxDepth before parsing, and
// repeated keys unless allowed. On failure returns nullopt and fills
// *problem.
std::optional<nlohmann::json> Parse(std::string_view text, Problem* problem,
                                    const Options& options = {});
std::optional<nlohmann::ordered_json> ParseOrdered(std::string_view text, Problem* problem,
                                                   const Options& options = {});

// The message of the documents' readers (scenarios, configs, GPU files,
// shards): "SOURCE:L:C: not valid JSON: REASON", "SOURCE#/pointer: repeated
// key", "SOURCE: not valid JSON: number out of range: 1e999".
std::string Describe(const std::string& source, std::string_view text, const Problem& problem);

}  // namespace kvbill::json_input

#endif  // KVBILL_SRC_UTIL_JSON_INPUT_H_
