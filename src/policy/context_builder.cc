#include "policy/context_builder.h"

#include <algorithm>
#include <utility>

#include "kvbill/cache/block_hash.h"

namespace kvbill {

std::uint64_t SpanIdentity(const std::string& task_id, int turn, int span_index, const Span& span) {
  if (span.content_id) return HashString(*span.content_id);
  return HashCombine(HashString(task_id), HashCombine(static_cast<std::uint64_t>(turn),
                                                      static_cast<std::uint64_t>(span_index)));
}

Tokens ContextTokens(std::span<const ContextPiece> context) {
  Tokens sum = 0;
  for (const ContextPiece& p : context) sum += p.piece.content.tokens;
  return sum;
}

std::vector<PromptPiece> PromptOf(std::span<const ContextPiece> context) {
  std::vector<PromptPiece> prompt;
  prompt.reserve(context.size());
  for (const ContextPiece& p : context) prompt.push_back(p.piece);
  return prompt;
}

void ApplyKeep(Tokens keep, Context* context) {
  Context kept;
  kept.reserve(context->size());
  for (ContextPiece& p : *context) {
    if (p.recorded_begin >= keep) continue;
    if (p.recorded) {
      p.piece.content.tokens = std::min(p.piece.content.tokens, keep - p.recorded_begin);
    }
    kept.push_back(std::move(p));
  }
  *context = std::move(kept);
}

Context FirstTokens(std::span<const ContextPiece> context, Tokens tokens) {
  Context first;
  Tokens left = tokens;
  for (const ContextPiece& p : context) {
    if (left <= 0) break;
    ContextPiece cut = p;
    cut.piece.content.tokens = std::min(p.piece.content.tokens, left);
    left -= cut.piece.content.tokens;
    first.push_back(cut);
  }
  return first;
}

Context LastTokens(std::span<const ContextPiece> context, Tokens tokens) {
  Tokens skip = std::max<Tokens>(0, ContextTokens(context) - tokens);
  Context last;
  for (const ContextPiece& p : context) {
    const Tokens length = p.piece.content.tokens;
    if (skip >= length) {
      skip -= length;
      continue;
    }
    ContextPiece cut = p;
    cut.piece.content.offset += skip;
    cut.piece.content.tokens -= skip;
    cut.recorded_begin += skip;
    skip = 0;
    last.push_back(cut);
  }
  return last;
}

std::size_t LeadingSystemAndTools(std::span<const ContextPiece> context) {
  std::size_t n = 0;
  while (n < context.size() && (context[n].piece.kind == SpanKind::kSystem ||
                                context[n].piece.kind == SpanKind::kTools)) {
    ++n;
  }
  return n;
}

void RecordedContext::Advance(std::uint64_t previous_output_identity) {
  ++turn_;
  const Turn& turn = task_.turns[static_cast<std::size_t>(turn_)];
  Tokens length = ContextTokens(context_);
  const bool follows_whole_prompt = turn_ > 0 && (!turn.keep || *turn.keep == length);
  if (turn.keep) {
    ApplyKeep(*turn.keep, &context_);
    length = std::min(length, *turn.keep);
  }
  appended_from_ = context_.size();
  for (std::size_t i = 0; i < turn.spans.size(); ++i) {
    const Span& span = turn.spans[i];
    if (span.tokens <= 0) continue;
    const int span_index = static_cast<int>(i);
    ContextPiece p;
    p.piece.kind = span.kind;
    p.piece.content.tokens = span.tokens;
    p.piece.content.identity = SpanIdentity(task_.id, turn_, span_index, span);
    const bool answer = span.kind == SpanKind::kAssistant || span.kind == SpanKind::kToolCall;
    if (i == 0 && follows_whole_prompt && answer && !span.content_id &&
        span.tokens == task_.turns[static_cast<std::size_t>(turn_ - 1)].output) {
      p.piece.content.identity = previous_output_identity;
    }
    p.turn = turn_;
    p.recorded_begin = length;
    length += span.tokens;
    context_.push_back(std::move(p));
  }
}

Prompt PromptExtending(const Prompt* previous, std::span<const ContextPiece> context) {
  std::size_t shared = 0;
  if (previous != nullptr && previous->size() <= context.size()) {
    while (shared < previous->size() && (*previous)[shared] == context[shared].piece) ++shared;
  }
  if (shared == 0 || shared < previous->size()) return Prompt(PromptOf(context));
  Prompt prompt = *previous;
  for (const ContextPiece& p : context.subspan(shared)) prompt.push_back(p.piece);
  return prompt;
}

Request TurnRequest(const Task& task, int turn, int index, const Context& prompt,
                    const Context& recorded, const Request* previous) {
  const Turn& t = task.turns[static_cast<std::size_t>(turn)];
  Request request;
  request.task_id = task.id;
  request.index = index;
  request.turn = turn;
  request.prompt = PromptExtending(previous != nullptr ? &previous->prompt : nullptr, prompt);
  request.output = t.output;
  request.output_identity = OutputIdentity(task.id, index);
  request.tool_s = t.tool_s;
  request.tool_s_from_start = task.tool_s_from_start;
  request.recorded_time_s = t.time_s;
  request.usage = t.usage;
  request.model = t.model;
  request.edited = prompt != recorded;
  request.output_is_placeholder = t.output_is_placeholder;
  if (t.blocks && !request.edited) request.explicit_blocks = t.blocks;
  return request;
}

std::vector<Request> TurnByTurnPolicy::Plan(const Task& task) const {
  std::vector<Request> requests;
  requests.reserve(task.turns.size());
  RecordedContext recorded(task);
  for (int turn = 0; turn < static_cast<int>(task.turns.size()); ++turn) {
    recorded.Advance(turn > 0 ? requests.back().output_identity : 0);
    requests.push_back(TurnRequest(task, turn, turn, Edit(recorded.context(), turn),
                                   recorded.context(),
                                   requests.empty() ? nullptr : &requests.back()));
  }
  return requests;
}

}  // namespace kvbill
