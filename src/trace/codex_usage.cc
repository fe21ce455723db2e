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

}  // namespace kvbill
