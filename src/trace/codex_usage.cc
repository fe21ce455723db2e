#include "trace/codex_usage.h"

#include <algorithm>
#include <string>

namespace kvbill {

Result<CodexUsage> ReadCodexUsage(const Json& object) {
  auto input = GetTokens(object, "input_tokens");
  if (!input) return input.error();
  const char* cached_key = "cached_input_tokens";
  auto cached = GetOptionalTokens(object, cached_key);
  if (!cached) return cached.error();
  if (!*cached) {  // the name some Codex versions use
    cached_key = "cache_read_input_tokens";
    cached = GetOptionalTokens(object, cached_key);
    if (!cached) return cached.error();
  }
  auto output = GetTokens(object, "output_tokens");
  if (!output) return output.error();
  auto reasoning = GetOptionalTokens(object, "reasoning_output_tokens");
  if (!reasoning) return reasoning.error();
  CodexUsage usage;
  usage.input = *input;
  usage.cached = cached->value_or(0);
  usage.output = *output;
  usage.reasoning_output = std::min(reasoning->value_or(0), usage.output);
  if (usage.cached > usage.input) {
    return Error(std::string("\"") + cached_key + "\" " + std::to_string(usage.cached) +
                 " exceeds \"input_tokens\" " + std::to_string(usage.input));
  }
  return usage;
}

Result<CodexTokenCount> ReadCodexTokenCount(const Json& info,
                                            const std::optional<CodexUsage>& previous_total) {
  const auto object = [&](const char* key) -> Result<std::optional<CodexUsage>> {
    const auto it = info.find(key);
    if (it == info.end() || it->is_null()) return std::optional<CodexUsage>();
    if (!it->is_object()) return Error(std::string("\"") + key + "\" must be an object");
    auto usage = ReadCodexUsage(*it);
    if (!usage) return usage.error().Within(key);
    return std::optional<CodexUsage>(*usage);
  };
  auto last = object("last_token_usage");
  if (!last) return last.error().Within("payload.info");
  auto total = object("total_token_usage");
  if (!total) return total.error().Within("payload.info");
  CodexTokenCount count;
  count.total = *total;
  if (*last) {
    count.call = **last;
    return count;
  }
  if (!*total) return Error("payload.info: neither \"last_token_usage\" nor \"total_token_usage\"");
  // Older rollouts give only the running totals: the call is the difference
  // from the previous event's.
  const CodexUsage before = previous_total.value_or(CodexUsage{});
  const CodexUsage& now = **total;
  if (now.input < before.input || now.cached < before.cached || now.output < before.output) {
    return Error("payload.info.total_token_usage: below the previous event's (input " +
                 std::to_string(before.input) + " -> " + std::to_string(now.input) + ", cached " +
                 std::to_string(before.cached) + " -> " + std::to_string(now.cached) + ", output " +
                 std::to_string(before.output) + " -> " + std::to_string(now.output) + ")");
  }
  count.call.input = now.input - before.input;
  count.call.cached = now.cached - before.cached;
  count.call.output = now.output - before.output;
  if (count.call.cached > count.call.input) {
    return Error("payload.info.total_token_usage: cached tokens grew by " +
                 std::to_string(count.call.cached) + ", more than input tokens (" +
                 std::to_string(count.call.input) + ")");
  }
  // Reasoning is a part of the output: a running total of it that went down
  // (or outgrew the output's growth) leaves this call's share unknown.
  if (now.reasoning_output < before.reasoning_output ||
      now.reasoning_output - before.reasoning_output > count.call.output) {
    return Error("payload.info.total_token_usage: \"reasoning_output_tokens\" went from " +
                 std::to_string(before.reasoning_output) + " to " +
                 std::to_string(now.reasoning_output) + " while \"output_tokens\" grew by " +
                 std::to_string(count.call.output));
  }
  count.call.reasoning_output = now.reasoning_output - before.reasoning_output;
  return count;
}

}  // namespace kvbill
