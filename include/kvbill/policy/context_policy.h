// Context policies: what the agent (the client) sends each turn.
//
// A policy turns a trace Task into the ordered list of Requests the engine
// serves: one per turn, plus extra requests a policy adds (a summarisation
// call). A request's prompt is a list of ContentPieces (cache/block_hash.h),
// so editing the context changes the pieces from the edit on, and the prefix
// cache misses from there: that trade-off is what the policies are for.
//
// Content identity (shared by every policy):
//   - a span with a content id:        identity = HashString(content_id)
//   - a span without one:              identity = HashCombine(HashString(task id),
//                                          HashCombine(turn index, span index))
//   - the output of request r:         identity = OutputIdentity(task id, r's index)
//   - an `assistant` span that directly follows the previous turn's prompt
//     and has exactly the previous turn's output tokens is that output: it
//     takes the previous request's output identity (so blocks written by
//     decode can be hit by the next turn).
// A piece always starts at offset 0 of its content unless a policy cut its
// front off (then the offset says how much was cut).
//
// The trace's own edits come first: turn k's context is `keep` tokens of
// turn k-1's context (all when absent) plus its spans. Policies then edit
// that context. Policies are pure: the same task gives the same requests.
//
// Policies (one implementation per file in src/policy/, chosen by name from
// the table in context_policy.cc):
//   keep_all            send the context as recorded
//   sliding_window      keep the leading system/tools spans and the last
//                       `window_tokens` tokens of the rest
//   drop_tool_results   tool_result spans of turns older than
//                       `older_than_turns` are replaced by a stub of
//                       `stub_tokens` tokens (identity HashCombine(original, "stub"))
//   summarise           when a turn's prompt would pass `threshold_tokens`,
//                       first send a summarisation request (prompt = the
//                       context so far, output = `summary_tokens`), then
//                       continue from: leading system/tools spans + the
//                       summary (the summary request's output identity) +
//                       the last `keep_recent_tokens` tokens of the rest
//   sinks_recent        the first `sink_tokens` tokens and the last
//                       `recent_tokens` tokens of the context
//
// Details (docs/policies.md gives the reasons and the cache trade-offs):
//   - Turn and span indexes in identities count from 0; a span of 0 tokens
//     adds no piece but keeps its index. The answer mapping applies to the
//     turn's first span, without a content id, when the turn keeps all of
//     the previous prompt; "the previous request" is the one serving the
//     previous turn (never a summary).
//   - A cut keeps the identity: cutting a piece's end keeps its offset,
//     cutting its front adds the tokens cut to the offset.
//   - sliding_window: the leading pieces are the run of system/tools pieces
//     at the start; the window moves by whole tokens every turn.
//   - drop_tool_results: turn k stubs a tool_result span of turn t when
//     k - t > older_than_turns; a span no longer than the stub stays as it
//     is; stub_tokens 0 drops the span.
//   - summarise: fires before turn k > 0 when its prompt would be more than
//     threshold_tokens and the rest (after system/tools) is longer than
//     keep_recent_tokens + summary_tokens. The summary request's prompt is
//     the previous request's prompt plus its output (an assistant piece of
//     its output identity); the summary piece is of kind summary. The
//     trace's later `keep` applies to the compacted context by recorded
//     position; a summary stays while any token it replaced is kept.
//   - sinks_recent: unchanged while the context fits in sink + recent
//     tokens; a sink boundary inside a piece cuts that piece's end.
//   - explicit_blocks is passed whenever the prompt equals the recorded one.
//   - MakeContextPolicy checks only the chosen policy's parameters:
//     window_tokens, threshold_tokens, summary_tokens, recent_tokens > 0;
//     older_than_turns, stub_tokens, keep_recent_tokens, sink_tokens >= 0;
//     keep_recent_tokens + summary_tokens < threshold_tokens.
#ifndef KVBILL_POLICY_CONTEXT_POLICY_H_
#define KVBILL_POLICY_CONTEXT_POLICY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/cache/block_hash.h"
#include "kvbill/policy/prompt.h"
#include "kvbill/trace/trace.h"
#include "kvbill/util/result.h"

namespace kvbill {

struct Request {
  std::string task_id;
  int index = 0;  // position in the task's request list, from 0
  int turn = 0;   // the trace turn it serves (a summary: the turn it precedes)
  bool is_summary = false;
  Prompt prompt;  // shares storage with the prompts it extends
  Tokens output = 0;
  std::uint64_t output_identity = 0;  // identity of the generated tokens
  // Wait after this request's output before the next request is released.
  // A summary request is followed immediately by its turn (0).
  Seconds tool_s = 0;
  // tool_s counts from this request's start, not its end (the trace task's
  // Task::tool_s_from_start; a summary request's 0 still counts from its end).
  bool tool_s_from_start = false;
  std::optional<Seconds> recorded_time_s;  // the trace turn's recorded start
  std::optional<RecordedUsage> usage;      // the trace turn's recorded usage
  // The trace turn's explicit block hashes (Mooncake), passed through when
  // the policy did not edit the prompt; the engine prefers them to pieces.
  std::optional<BlockHashes> explicit_blocks;
  // explicit_blocks as the engine's block runs at one block size, made once
  // for a workload that many runs share (scenario/workload.h, PlanBlockRuns):
  // what NamePrompt would make from them, so each run skips that work.
  // planned_block_size 0: not planned (the engine makes them).
  Tokens planned_block_size = 0;
  std::vector<BlockRun> planned_runs;
  std::vector<std::int64_t> planned_ends;
  // The trace turn's model (Turn::model); empty when unknown (an API replay
  // prices those at the scenario's model). A summary request names the
  // model of the turn it precedes.
  std::string model;
  // The policy's prompt differs from the recorded context of its turn (a
  // summary request counts as an edit too): for the policy_no_effect warning.
  bool edited = false;
  // The trace turn's output is a streaming placeholder (Turn::output_is_placeholder).
  bool output_is_placeholder = false;

  Tokens PromptTokens() const;
  // What names the prompt's tokens past its last explicit block hash (a
  // partial last block the trace did not hash): its last piece, which no
  // other request's prompt ends in the same way.
  std::uint64_t ExplicitTailKey() const;
};

// HashCombine(HashString(task_id), HashCombine(index, 0x6f7574)) ("out").
std::uint64_t OutputIdentity(const std::string& task_id, int request_index);

struct ContextPolicyParams {
  std::string kind = "keep_all";
  Tokens window_tokens = 0;       // sliding_window
  int older_than_turns = 0;       // drop_tool_results
  Tokens stub_tokens = 0;         // drop_tool_results
  Tokens threshold_tokens = 0;    // summarise
  Tokens summary_tokens = 0;      // summarise
  Tokens keep_recent_tokens = 0;  // summarise
  Tokens sink_tokens = 0;         // sinks_recent
  Tokens recent_tokens = 0;       // sinks_recent
};

class ContextPolicy {
 public:
  virtual ~ContextPolicy() = default;
  // The requests for `task`. Precondition: ValidateTask(task) succeeded.
  virtual std::vector<Request> Plan(const Task& task) const = 0;
};

// The policy named by params.kind. Errors name the parameter:
// `context_policy: sliding_window: window_tokens must be positive, got 0`.
Result<std::unique_ptr<ContextPolicy>> MakeContextPolicy(const ContextPolicyParams& params);

// The names MakeContextPolicy accepts.
std::vector<std::string> ContextPolicyNames();

}  // namespace kvbill

#endif  // KVBILL_POLICY_CONTEXT_POLICY_H_
