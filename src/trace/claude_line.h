// The fields of a Claude Code transcript line (docs/importers.md#claude-code)
// that the Claude Code importer and the bill's usage-log reader use, found
// by one validating scan (json_scan.h) instead of a DOM.
//
// Each field is the raw JSON text of its value, empty when the key is absent;
// the readers interpret them as their DOM paths would. ScanClaudeLine gives
// up (false) on a line that is not valid JSON, not an object, repeats a key
// the readers look at, or spells a key with an escape; the caller then reads
// the line with the DOM path, which says what is wrong or handles the rare
// shape.
#ifndef KVBILL_SRC_TRACE_CLAUDE_LINE_H_
#define KVBILL_SRC_TRACE_CLAUDE_LINE_H_

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbill/util/result.h"
#include "kvbill/util/units.h"
#include "trace/json_fields.h"

namespace kvbill {

// The raw text of one JSON value.
struct RawJson {
  std::string_view text;  // empty when absent

  bool absent() const { return text.empty(); }
  bool null() const { return text == "null"; }
  bool is_string() const { return !text.empty() && text.front() == '"'; }
  // True when the value is a string holding no escape; *out is its content.
  bool PlainString(std::string_view* out) const {
    if (!is_string() || text.find('\\') != std::string_view::npos) return false;
    *out = text.substr(1, text.size() - 2);
    return true;
  }
  // The value is exactly the string `word` (false for an escaped spelling
  // too; check HasEscape() before treating false as "different").
  bool Is(std::string_view word) const {
    return text.size() == word.size() + 2 && is_string() && text.substr(1, word.size()) == word;
  }
  bool HasEscape() const { return is_string() && text.find('\\') != std::string_view::npos; }
};

struct ClaudeLine {
  RawJson type;
  bool has_payload = false;  // a "payload" key (Codex rollouts)
  RawJson session_id;        // "sessionId"
  RawJson timestamp;
  RawJson is_sidechain;  // "isSidechain"
  RawJson agent_id;      // "agentId"
  RawJson request_id;    // "requestId"
  RawJson cwd;           // "cwd": the session's working directory (its project)
  RawJson cost_usd;      // "costUSD": the cost older Claude Code versions recorded
  bool message_is_object = false;
  // Members of "message" when it is an object.
  RawJson message_id;  // "message.id"
  RawJson model;       // "message.model"
  RawJson usage;       // "message.usage"
};

// Scans one line; false gives up (see above).
bool ScanClaudeLine(std::string_view line, ClaudeLine* out);

// The elements of a JSON array text (the transcript form a stop hook saves),
// each as its raw text, into *elements; false gives up when the text is not
// a valid JSON array as the scanner sees it (the caller then parses it with
// the DOM path for the error).
bool SplitJsonArray(std::string_view text, std::vector<std::string_view>* elements);

// The token fields of message.usage, each nullopt when absent or null.
struct ClaudeUsage {
  std::optional<Tokens> input;           // "input_tokens"
  std::optional<Tokens> cache_creation;  // "cache_creation_input_tokens"
  std::optional<Tokens> cache_read;      // "cache_read_input_tokens"
  std::optional<Tokens> output;          // "output_tokens"
  // "cache_creation.ephemeral_1h_input_tokens" when "cache_creation" is an
  // object, and the same key directly in usage.
  std::optional<Tokens> nested_1h;
  std::optional<Tokens> direct_1h;
  // "cache_creation.ephemeral_5m_input_tokens" when "cache_creation" is an object.
  std::optional<Tokens> nested_5m;
  // "server_tool_use.web_search_requests": searches the server ran for the
  // call, billed per search beside the tokens.
  std::optional<std::int64_t> web_searches;
  RawJson speed;  // "speed": "standard" or "fast" (Anthropic's fast mode)
  // "inference_geo": where the call ran; "us" is Anthropic's US-only
  // inference (UsOnlyOf).
  RawJson inference_geo;
};

// usage.inference_geo as Anthropic's API reports it: "us" (US-only inference,
// billed at the price sheet's us_multiplier) is true; "global",
// "not_available", null and absent are false. Another value is nullopt from
// the scan (the DOM path says why) and an error from the DOM:
// `"inference_geo" must be "global", "us" or "not_available", got "eu"`.
std::optional<bool> UsOnlyOf(const RawJson& geo);
Result<bool> ReadUsOnly(const Json& usage);

// Reads `usage` (a RawJson text); false gives up when it is not an object,
// a field is neither null nor a count as ScanCount takes it, or a key repeats.
bool ScanClaudeUsage(std::string_view usage, ClaudeUsage* out);

// The same counts from a parsed message.usage (the DOM path): input_tokens
// and output_tokens required, the rest optional; errors name the field.
Result<ClaudeUsage> ReadClaudeUsageCounts(const Json& usage);

// The cache writes of a usage, {all, 1-hour share}, as `kvbill bill` and the
// Claude Code importer both read them: the 1-hour share is
// "cache_creation.ephemeral_1h_input_tokens" (or the same key directly in
// usage); when "cache_creation" also gives the 5-minute share, the two must
// add up to "cache_creation_input_tokens" (or stand for it when it is
// absent); the 1-hour share is at most the whole.
Result<std::pair<Tokens, Tokens>> ClaudeCacheWrites(const ClaudeUsage& c);

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_CLAUDE_LINE_H_
