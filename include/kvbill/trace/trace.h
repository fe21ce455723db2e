// An agent trace: tasks (agent sessions), each an ordered list of turns.
//
// A turn is one request to the model. It first drops the end of the previous
// prompt when `keep` says so (context edits, compaction), then appends spans
// of tokens (system prompt, tool definitions, user text, tool results, the
// previous answer, a summary...), then the model generates `output` tokens,
// then the agent waits `tool_s` seconds before the next turn. The prompt of a
// turn is therefore
//
//     prompt(0) = Σ spans(0)
//     prompt(k) = (keep(k) or prompt(k-1)) + Σ spans(k)
//
// The previous turn's output is not appended implicitly: a trace that wants it
// in the context says so with an `assistant` span. Spans with the same content
// id at the same position hold the same tokens, which is what lets a system
// prompt be shared across tasks.
//
// Recorded facts travel with the turn when the source had them: the request's
// start time on the trace clock, the provider-reported usage (for comparing a
// simulated bill with the real one later), and explicit block hashes for
// request-level traces that publish them instead of content (Mooncake), and
// the model the call named.
//
// The on-disk form is docs/trace-format.md; readers are in reader.h.
#ifndef KVBILL_TRACE_TRACE_H_
#define KVBILL_TRACE_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

// kToolCall is model output that calls a tool (an assistant answer holding a
// tool_use block), fed back like kAssistant; kToolResult is what the tool
// returned.
enum class SpanKind {
  kSystem,
  kTools,
  kUser,
  kToolResult,
  kToolCall,
  kAssistant,
  kSummary,
  kOther
};

// "system", "tools", "user", "tool_result", "tool_call", "assistant",
// "summary", "other".
std::string_view SpanKindName(SpanKind kind);
// Every kind's name in the order above, joined by '|'
// ("system|tools|...|other"), for errors and help texts.
std::string SpanKindChoices();
// The inverse of SpanKindName; nullopt for any other string.
std::optional<SpanKind> ParseSpanKind(std::string_view name);

struct Span {
  SpanKind kind = SpanKind::kOther;
  Tokens tokens = 0;  // >= 0
  // Same id at the same position means the same tokens. Absent: unique content.
  std::optional<std::string> content_id;

  bool operator==(const Span&) const = default;
};

// Token counts a provider reported for one call (Anthropic's field names;
// OpenAI's cached prompt tokens map to cache_read).
struct RecordedUsage {
  Tokens input = 0;           // uncached input tokens
  Tokens cache_creation = 0;  // tokens written to the provider cache
  Tokens cache_read = 0;      // tokens read from the provider cache
  Tokens output = 0;
  // The part of cache_creation written with a 1-hour lifetime (Anthropic's
  // cache_creation.ephemeral_1h_input_tokens), priced at the 1-hour write
  // rate; the rest of cache_creation is not known to be 1-hour writes.
  // 0 <= cache_creation_1h <= cache_creation.
  Tokens cache_creation_1h = 0;
  // Anthropic's fast mode (usage.speed "fast"): every rate of the call is the
  // price sheet's fast_multiplier times the standard one.
  bool fast = false;
  // Anthropic's US-only inference (usage.inference_geo "us"): every rate is
  // the price sheet's us_multiplier times the standard one (UsOnlyPrice).
  bool us_only = false;
  // Web searches the provider's server ran for the call (Anthropic's
  // usage.server_tool_use.web_search_requests): billed per search, the same
  // in every what-if of the call.
  std::int64_t web_searches = 0;

  // The whole prompt: input + cache_creation + cache_read.
  Tokens prompt() const { return input + cache_creation + cache_read; }
  bool operator==(const RecordedUsage&) const = default;
};

// Content hashes of the prompt in fixed-size blocks, each standing for its
// block and everything before it (equal hashes mean an equal prefix).
// hashes.size() == ceil(prompt / block_size) in well-formed sources.
struct BlockHashes {
  Tokens block_size = 512;  // > 0
  std::vector<std::uint64_t> hashes;

  bool operator==(const BlockHashes&) const = default;
};

struct Turn {
  // Tokens of the previous turn's prompt kept before appending; nullopt keeps
  // all of it. Must be nullopt or 0 on the first turn.
  std::optional<Tokens> keep;
  std::vector<Span> spans;
  Tokens output = 0;  // generated tokens, >= 0
  // True when `output` is known to be unreliable (a streaming placeholder).
  bool output_is_placeholder = false;
  Seconds tool_s = 0;  // wait after the output before the next turn, >= 0
  // Recorded start of the request on the trace clock; non-decreasing in a task.
  std::optional<Seconds> time_s;
  std::optional<RecordedUsage> usage;
  std::optional<BlockHashes> blocks;
  // The model the call named, as logged (e.g. "claude-sonnet-4-5-20250929");
  // empty when unknown. An API replay prices the turn at this model.
  std::string model;

  bool operator==(const Turn&) const = default;
};

struct Task {
  std::string id;  // non-empty, unique in a trace
  // The task that started this one (e.g. a subagent's main session).
  std::optional<std::string> parent_id;
  Seconds arrival_s = 0;  // on the trace clock, whose origin is arbitrary
  std::vector<Turn> turns;
  // Each turn's tool_s is the recorded gap from its request's start to the
  // next's (an importer that only knows when calls were made: it includes
  // the generation time), not the wait after its output. A replay then
  // releases the next request that long after this one was sent, or when it
  // finishes if later, rather than that long after it finishes.
  bool tool_s_from_start = false;

  bool operator==(const Task&) const = default;
};

// Σ tokens of the turn's spans.
Tokens AppendedTokens(const Turn& turn);

// The prompt of every turn, by the formula at the top of this file.
// Precondition: ValidateTask(task) succeeded.
std::vector<Tokens> PromptTokens(const Task& task);

// Why `blocks` cannot stand for a prompt of `prompt_tokens` tokens (empty:
// it can): block hashes fewer than the prompt's full blocks, or more than
// its blocks, ceil(prompt_tokens / block_size), the last, partial one
// included (a hash past them stands for no token of the prompt). A hash
// list may leave out the last, partial block (a tool that hashes full
// blocks only), whose tokens are then the prompt's own. `field` names the
// hash list.
std::string BlockCoverageProblem(const BlockHashes& blocks, Tokens prompt_tokens,
                                 std::string_view field);

// Checks the invariants above that one field alone cannot: at least one turn,
// keep within the previous prompt, time never running backwards, positive
// block size, block hashes for every full block of the prompt
// (BlockCoverageProblem), output and every prompt at most kMaxTokenCount
// (2^40) tokens ("turn 2: the prompt is above 2^40 tokens"). Error text
// starts with the turn: "turn 3: ..." (turns count from 1), without the
// task id.
Status ValidateTask(const Task& task);

// What a simulation needs of a task that ValidateTask does not check: every
// turn's prompt at least 1 token; every turn's recorded time at most
// kMaxSimulatedSeconds (units.h, 10^9 s) after the first recorded one; the
// tool waits, summed turn by turn, at most that too. Every trace reader
// checks each task it returns (reader.h), so that the error names the row.
// nullopt when the task passes; else the turn at fault (0-based) and the
// error, which starts with the turn as ValidateTask's do: "turn 2: an empty
// prompt (0 tokens; a request sends at least one)", "turn 3: its time is
// 2e+09 s after turn 1's, beyond the 1e9 s (31.7 years) a simulation can
// time", "turn 1: the tool waits add up to 2e+09 s, beyond the 1e9 s (31.7
// years) a simulation can time". Times are checked before tool waits, so
// that in a trace whose waits are the gaps between recorded times the row
// named is the late one.
struct TurnError {
  std::size_t turn = 0;
  Error error;
  bool tool_wait = false;  // the fault is the tool waits summed to `turn`
};
std::optional<TurnError> CheckServable(const Task& task);

}  // namespace kvbill

#endif  // KVBILL_TRACE_TRACE_H_
