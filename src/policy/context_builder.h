// The client's context rebuilt turn by turn from a trace Task, and the edits
// the context policies make to it. Private to src/policy/.
//
// The recorded context of turn k is the recorded context of turn k-1 cut to
// the turn's `keep` (from the end), then one piece per non-empty span of the
// turn, with the identities of kvbill/policy/context_policy.h. Every piece
// remembers the trace turn that brought it and where its first token sits in
// the recorded context, so a policy that keeps its own context (summarise)
// can apply the trace's later `keep` edits to it.
#ifndef KVBILL_POLICY_CONTEXT_BUILDER_H_
#define KVBILL_POLICY_CONTEXT_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kvbill/policy/context_policy.h"
#include "kvbill/trace/trace.h"

namespace kvbill {

struct ContextPiece {
  PromptPiece piece;
  int turn = 0;               // the trace turn whose span brought it (from 0)
  Tokens recorded_begin = 0;  // position of its first token in the recorded context
  // False for a piece a policy made (a summary): it stands for the recorded
  // tokens from recorded_begin on, and a trace `keep` keeps it while it keeps
  // any of them.
  bool recorded = true;

  bool operator==(const ContextPiece&) const = default;
};

using Context = std::vector<ContextPiece>;

// The identity of span `span_index` of turn `turn` (both from 0) of the task
// `task_id`: HashString(content id), or for a span without one
// HashCombine(HashString(task_id), HashCombine(turn, span_index)).
std::uint64_t SpanIdentity(const std::string& task_id, int turn, int span_index, const Span& span);

Tokens ContextTokens(std::span<const ContextPiece> context);
std::vector<PromptPiece> PromptOf(std::span<const ContextPiece> context);

// Applies a trace `keep` (tokens of the recorded context kept): drops every
// recorded token at position >= keep, cutting a piece at its end; a policy-made
// piece goes when keep <= its recorded_begin.
void ApplyKeep(Tokens keep, Context* context);

// The first `tokens` tokens of `context` (all of it when shorter); a piece cut
// at its end keeps its identity and offset.
Context FirstTokens(std::span<const ContextPiece> context, Tokens tokens);

// The last `tokens` tokens of `context` (all of it when shorter); a piece cut
// at its front keeps its identity, and its offset and recorded_begin grow by
// the tokens cut.
Context LastTokens(std::span<const ContextPiece> context, Tokens tokens);

// How many pieces at the start of `context` are of kind system or tools.
std::size_t LeadingSystemAndTools(std::span<const ContextPiece> context);

// The recorded context of each turn of a task, in order.
class RecordedContext {
 public:
  // `task` must outlive this object. Precondition: ValidateTask(task) succeeded.
  explicit RecordedContext(const Task& task) : task_(task) {}

  // Moves to the next turn: applies its keep and appends its spans.
  // `previous_output_identity` is the output identity of the request that
  // served the previous turn: an `assistant` span without a content id that
  // is the turn's first span, follows the whole previous prompt and has
  // exactly the previous turn's output tokens takes it. Unused on turn 0.
  void Advance(std::uint64_t previous_output_identity);

  int turn() const { return turn_; }  // the turn of the last Advance
  const Context& context() const { return context_; }
  // The pieces the last Advance appended (the turn's spans).
  std::span<const ContextPiece> appended() const {
    return std::span<const ContextPiece>(context_).subspan(appended_from_);
  }

 private:
  const Task& task_;
  int turn_ = -1;
  Context context_;
  std::size_t appended_from_ = 0;
};

// The pieces of `context` as a Prompt that shares storage with `previous`
// when `previous` (may be null) is a prefix of them (prompt.h).
Prompt PromptExtending(const Prompt* previous, std::span<const ContextPiece> context);

// The request serving trace turn `turn` of `task` as request `index`, with
// `prompt`: output, tool wait, recorded time and usage from the turn, and the
// turn's explicit block hashes when `prompt` is the recorded prompt. Its
// prompt shares storage with `previous`'s (the task's request before it, or
// null) when it extends it.
Request TurnRequest(const Task& task, int turn, int index, const Context& prompt,
                    const Context& recorded, const Request* previous);

// A policy that edits each turn's recorded context on its own, without state
// carried between turns: one request per turn, request index = turn.
class TurnByTurnPolicy : public ContextPolicy {
 public:
  std::vector<Request> Plan(const Task& task) const final;

 protected:
  // The prompt sent for turn `turn` whose recorded context is `recorded`.
  virtual Context Edit(const Context& recorded, int turn) const = 0;
};

}  // namespace kvbill

#endif  // KVBILL_POLICY_CONTEXT_BUILDER_H_
