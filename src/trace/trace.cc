#include "kvbill/trace/trace.h"

#include <array>
#include <utility>

#include "trace/format_number.h"

namespace kvbill {
namespace {

constexpr std::array<std::pair<SpanKind, std::string_view>, 8> kSpanKindNames = {{
    {SpanKind::kSystem, "system"},
    {SpanKind::kTools, "tools"},
    {SpanKind::kUser, "user"},
    {SpanKind::kToolResult, "tool_result"},
    {SpanKind::kToolCall, "tool_call"},
    {SpanKind::kAssistant, "assistant"},
    {SpanKind::kSummary, "summary"},
    {SpanKind::kOther, "other"},
}};

}  // namespace

std::string_view SpanKindName(SpanKind kind) {
  for (const auto& [k, name] : kSpanKindNames) {
    if (k == kind) return name;
  }
  return "other";
}

std::string SpanKindChoices() {
  std::string choices;
  for (const auto& [kind, name] : kSpanKindNames) {
    if (!choices.empty()) choices += '|';
    choices += name;
  }
  return choices;
}

std::optional<SpanKind> ParseSpanKind(std::string_view name) {
  for (const auto& [k, n] : kSpanKindNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

Tokens AppendedTokens(const Turn& turn) {
  Tokens sum = 0;
  for (const Span& span : turn.spans) sum += span.tokens;
  return sum;
}

std::vector<Tokens> PromptTokens(const Task& task) {
  std::vector<Tokens> prompts;
  prompts.reserve(task.turns.size());
  Tokens previous = 0;
  for (const Turn& turn : task.turns) {
    previous = turn.keep.value_or(previous) + AppendedTokens(turn);
    prompts.push_back(previous);
  }
  return prompts;
}

std::string BlockCoverageProblem(const BlockHashes& blocks, Tokens prompt_tokens,
                                 std::string_view field) {
  if (blocks.block_size <= 0) return "";
  const Tokens full = prompt_tokens / blocks.block_size;
  const Tokens all = full + (prompt_tokens % blocks.block_size != 0 ? 1 : 0);
  const auto count = static_cast<Tokens>(blocks.hashes.size());
  const std::string holds =
      "\"" + std::string(field) + "\" holds " + std::to_string(count) + " block hashes, ";
  const std::string of = " of " + std::to_string(blocks.block_size) + " tokens of its " +
                         std::to_string(prompt_tokens) + "-token prompt (one hash a block, the ";
  if (count < full) {
    return holds + "fewer than the " + std::to_string(full) + " full blocks" + of +
           "prefix through it; the last, partial block may go without)";
  }
  if (count > all) {
    return holds + "more than the " + std::to_string(all) + " blocks" + of +
           "last, partial one included)";
  }
  return "";
}

Status ValidateTask(const Task& task) {
  if (task.turns.empty()) return Error("a task needs at least one turn");
  if (task.parent_id && *task.parent_id == task.id) {
    return Error("\"parent\" names the task itself (it is the task that started this one)");
  }
  Tokens previous_prompt = 0;
  std::optional<Seconds> previous_time;
  for (std::size_t i = 0; i < task.turns.size(); ++i) {
    const Turn& turn = task.turns[i];
    const std::string where = "turn " + std::to_string(i + 1);
    if (turn.keep && *turn.keep > previous_prompt) {
      return Error(where + ": \"keep\" " + std::to_string(*turn.keep) +
                   " exceeds the previous prompt (" + std::to_string(previous_prompt) + " tokens)");
    }
    if (turn.blocks && turn.blocks->block_size <= 0) {
      return Error(where + ": \"block_size\" must be positive, got " +
                   std::to_string(turn.blocks->block_size));
    }
    if (turn.time_s) {
      if (previous_time && *turn.time_s < *previous_time) {
        return Error(where + ": time runs backwards: " + FormatNumber(*turn.time_s) +
                     " s is before the previous turn's " + FormatNumber(*previous_time) + " s");
      }
      previous_time = turn.time_s;
    }
    // Every count and the prompt stay within kMaxTokenCount, checked span by
    // span so that the sum itself cannot overflow.
    Tokens prompt = turn.keep.value_or(previous_prompt);
    for (const Span& span : turn.spans) {
      if (span.tokens > kMaxTokenCount - prompt) {
        return Error(where + ": the prompt is above 2^40 tokens");
      }
      prompt += span.tokens;
    }
    if (turn.blocks) {
      if (std::string problem = BlockCoverageProblem(*turn.blocks, prompt, "hashes");
          !problem.empty()) {
        return Error(where + ": " + problem);
      }
    }
    if (turn.output > kMaxTokenCount) {
      return Error(where + ": \"out\" must be at most 2^40, got " + std::to_string(turn.output));
    }
    previous_prompt = prompt;
  }
  return OkStatus();
}

std::optional<TurnError> CheckServable(const Task& task) {
  const std::string beyond = ", beyond the 1e9 s (31.7 years) a simulation can time";
  const auto turn_name = [](std::size_t k) { return "turn " + std::to_string(k + 1); };
  const std::vector<Tokens> prompts = PromptTokens(task);
  std::optional<std::size_t> first_timed;
  for (std::size_t k = 0; k < task.turns.size(); ++k) {
    if (prompts[k] < 1) {
      return TurnError{
          k, Error(turn_name(k) + ": an empty prompt (0 tokens; a request sends at least one)")};
    }
    const std::optional<Seconds>& time = task.turns[k].time_s;
    if (!time) continue;
    if (!first_timed) first_timed = k;
    const Seconds since = *time - *task.turns[*first_timed].time_s;
    if (!(since <= kMaxSimulatedSeconds)) {
      return TurnError{k, Error(turn_name(k) + ": its time is " + FormatNumber(since) +
                                " s after " + turn_name(*first_timed) + "'s" + beyond)};
    }
  }
  Seconds waits = 0;
  for (std::size_t k = 0; k < task.turns.size(); ++k) {
    waits += task.turns[k].tool_s;
    if (!(waits <= kMaxSimulatedSeconds)) {
      return TurnError{
          k,
          Error(turn_name(k) + ": the tool waits add up to " + FormatNumber(waits) + " s" + beyond),
          /*tool_wait=*/true};
    }
  }
  return std::nullopt;
}

}  // namespace kvbill
