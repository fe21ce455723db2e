// Importers: readers that map foreign trace formats onto kvbill tasks, and
// the format detection that picks one. Every field an importer reads and
// every assumption it makes is listed in docs/importers.md.
//
// Memory: the native, Mooncake, Codex and Azure readers stream (one task at a time).
// The Claude Code, TraceLab, OpenAI and Dynamo readers group calls by session
// (and chain), so they hold the whole input's calls (numbers, ids and block
// hashes, not content) in memory.
#ifndef KVBILL_TRACE_IMPORTERS_H_
#define KVBILL_TRACE_IMPORTERS_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/trace/reader.h"
#include "kvbill/util/result.h"

namespace kvbill {

enum class TraceFormat {
  kNative,
  kMooncake,
  kDynamo,
  kClaudeCode,
  kCodex,
  kOpenAi,
  kTraceLab,
  kTraceLabCsv,
  kAzure
};

// "native", "mooncake", "dynamo", "claude-code", "codex", "openai", "tracelab",
// "tracelab-csv", "azure".
std::string_view TraceFormatName(TraceFormat format);
// "native|mooncake|dynamo|claude-code|codex|openai|tracelab|tracelab-csv|azure", for help
// texts and errors.
std::string TraceFormatChoices();
// The inverse of TraceFormatName. Error: "unknown trace format \"x\" (one of ...)".
Result<TraceFormat> ParseTraceFormat(std::string_view name);

// Detects the format from the first non-blank line of a file:
//   the native header line                          -> native
//   '[' (a JSON array of transcript lines)           -> claude-code
//   an object with "hash_ids" or "input_length" and one of "request_id",
//   "session_id", "wait_for", "prefix_reset", "tool_wait_ms", "delay" -> dynamo
//   an object with "input_tokens" whose keys are all Dynamo fields, one of
//   them other than "session_id", "input_tokens", "output_tokens" -> dynamo
//   an object with "hash_ids" or "input_length"      -> mooncake
//   an object with "round_index" and "input_tokens_total" -> tracelab
//   an object with "payload" and "type" of session_meta / event_msg /
//   response_item / turn_context                     -> codex
//   an object with "sessionId", or "type" of user / assistant / system /
//   summary                                          -> claude-code
//   an object with "object" of chat.completion / response, a "usage" object
//   with "prompt_tokens" or "input_tokens", or those at the top level -> openai
//   the CSV header TIMESTAMP,ContextTokens,GeneratedTokens -> azure
//   a CSV header starting "session_id," with a prefix_len column -> tracelab-csv
// `line_number` is that line's number, for the error
// "name:line: unrecognised trace format (use --from native|...)", or, for a
// line that opens an object but is not valid JSON, the JSON error
// ("name:line: truncated JSON", "name:line: repeated key at #/a").
Result<TraceFormat> DetectTraceFormat(std::string_view first_line, const std::string& name,
                                      std::int64_t line_number);

// One Mooncake request per line -> a one-turn task with explicit 512-token
// block hashes, id = the 0-based row number, arrival = timestamp / 1000.
std::unique_ptr<TraceReader> NewMooncakeReader(std::unique_ptr<std::istream> in, std::string name,
                                               ReaderOptions options = {});

// NVIDIA Dynamo agentic Mooncake rows (Mooncake rows with request_id,
// session_id, wait_for, delay, tool_wait_ms, prefix_reset): one task per
// session_id, one turn per row in file order, 512-token block hashes;
// tool_s = the next row's (delay + tool_wait_ms) / 1000. Rows with fields
// Dynamo does not document are errors.
std::unique_ptr<TraceReader> NewDynamoReader(std::unique_ptr<std::istream> in, std::string name,
                                             ReaderOptions options = {});

// Claude Code transcripts often record a streaming placeholder instead of a
// call's output count (the count of an early line of the response, 1 to 10
// tokens, where no later line gives the final one): an output of at most
// this many tokens is such a placeholder. The importer flags it
// (Turn::output_is_placeholder) and `kvbill bill` counts it; neither
// changes it.
inline constexpr Tokens kClaudeCodePlaceholderMaxOutput = 10;

// True when a Claude Code call's recorded output count is a placeholder.
inline bool IsClaudeCodePlaceholderOutput(Tokens output_tokens) {
  return output_tokens <= kClaudeCodePlaceholderMaxOutput;
}

// Claude Code transcript lines (JSONL, or the JSON array a stop hook saves):
// one task per session main chain and one per subagent chain (linked to the
// session with parent_id), one turn per distinct message.id.
std::unique_ptr<TraceReader> NewClaudeCodeReader(std::unique_ptr<std::istream> in, std::string name,
                                                 ReaderOptions options = {});

// A transcript and the name its errors give it.
struct NamedStream {
  std::unique_ptr<std::istream> in;
  std::string name;
};

// Several Claude Code transcripts read as one log, as `kvbill bill` joins
// them (docs/billing.md#logs-readusagelog): a message.id is one call
// whichever files hold it, its usage and model from the copy bill keeps
// (the most output tokens, then the earliest time, then the session and
// the "name:line" that sort first); a session's calls from several files
// are merged in time order (a file's own calls must not run backwards).
std::unique_ptr<TraceReader> NewClaudeCodeReader(std::vector<NamedStream> sources,
                                                 ReaderOptions options = {});

// Codex CLI rollout lines (~/.codex/sessions/**/rollout-*.jsonl): one task
// per session_meta, one turn per token_count event whose running totals
// moved, prompt = last_token_usage.input_tokens (cached included), or in
// rollouts with only running totals, their growth since the last event.
std::unique_ptr<TraceReader> NewCodexReader(std::unique_ptr<std::istream> in, std::string name,
                                            ReaderOptions options = {});

// OpenAI Chat Completions / Responses objects (or bare usage objects with a
// session_id), one per line: one task per session_id (or metadata.session_id),
// per previous_response_id chain, or per call; prompt = prompt_tokens /
// input_tokens (cached included), recorded usage {prompt - cached, 0, cached,
// output}.
std::unique_ptr<TraceReader> NewOpenAiReader(std::unique_ptr<std::istream> in, std::string name,
                                             ReaderOptions options = {});

// TraceLab round_trace.jsonl: rows grouped by session_id, ordered by
// round_index; one turn per row with its provider usage and the first timing
// event as its time.
std::unique_ptr<TraceReader> NewTraceLabReader(std::unique_ptr<std::istream> in, std::string name,
                                               ReaderOptions options = {});

// TraceLab simulator CSV (session_id, [arrival_time,] round_idx, prefix_len,
// input_len, output_len, tool_wait_after_ms; times in ms): one task per
// session, prompt = prefix_len + input_len.
std::unique_ptr<TraceReader> NewTraceLabCsvReader(std::unique_ptr<std::istream> in,
                                                  std::string name, ReaderOptions options = {});

// Azure LLM inference trace 2023 CSV: a row is a one-turn task, arrival in
// seconds after the first row.
std::unique_ptr<TraceReader> NewAzureReader(std::unique_ptr<std::istream> in, std::string name,
                                            ReaderOptions options = {});

// Opens `path` and returns the reader for `format`, or for the detected
// format when `format` is nullopt. Errors: "<path>: file not found",
// "<path>: cannot open: ...", an empty file ("<path>: empty trace") or an
// unrecognised format.
Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& path,
                                               std::optional<TraceFormat> format,
                                               ReaderOptions options = {});

// The format detection gives the text `in` holds (its first line that is
// not blank, a byte-order mark and CRLF ends allowed, as OpenTrace without
// a format reads it; `name` for errors): DetectTraceFormat's error for a
// line it does not recognise, "NAME: empty trace" when no line has text.
Result<TraceFormat> DetectStreamFormat(std::istream& in, const std::string& name);

// The same for the file at `path`; nullopt when the file cannot be read,
// is empty or is not recognised. For hints after a reader given another
// format found nothing (a wrong --from); "-" is not read.
std::optional<TraceFormat> DetectTraceFileFormat(const std::string& path);

// Every task of the trace at `path` (OpenTrace, then the reader to its end),
// for callers that need the whole trace at once; the first reader error ends
// it.
Result<std::vector<Task>> ReadTraceTasks(const std::string& path, std::optional<TraceFormat> format,
                                         ReaderOptions options = {});

}  // namespace kvbill

#endif  // KVBILL_TRACE_IMPORTERS_H_
