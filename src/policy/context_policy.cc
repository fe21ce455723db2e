#include "kvbill/policy/context_policy.h"

#include <string>

#include "kvbill/cache/block_hash.h"
#include "policy/policies.h"

namespace kvbill {
namespace {

struct PolicyEntry {
  const char* name;
  Result<std::unique_ptr<ContextPolicy>> (*make)(const ContextPolicyParams& params);
};

// Every policy, by name. Adding one: a file in src/policy/, a factory in
// policies.h, a row here, a section in docs/policies.md.
constexpr PolicyEntry kPolicies[] = {
    {"keep_all", MakeKeepAll},
    {"sliding_window", MakeSlidingWindow},
    {"drop_tool_results", MakeDropToolResults},
    {"summarise", MakeSummarise},
    {"sinks_recent", MakeSinksRecent},
};

}  // namespace

Tokens Request::PromptTokens() const {
  Tokens sum = 0;
  for (const PromptPiece& p : prompt) sum += p.content.tokens;
  return sum;
}

std::uint64_t Request::ExplicitTailKey() const {
  if (prompt.size() == 0) return 0;
  const ContentPiece& last = prompt.back().content;
  return HashCombine(HashCombine(last.identity, static_cast<std::uint64_t>(last.offset)),
                     static_cast<std::uint64_t>(last.tokens));
}

std::uint64_t OutputIdentity(const std::string& task_id, int request_index) {
  return HashCombine(HashString(task_id),
                     HashCombine(static_cast<std::uint64_t>(request_index), 0x6f7574));
}

Error PolicyError(std::string_view policy, std::string_view message) {
  return Error("context_policy: " + std::string(policy) + ": " + std::string(message));
}

Status CheckPositive(std::string_view policy, std::string_view parameter, Tokens value) {
  if (value > 0) return OkStatus();
  return PolicyError(policy,
                     std::string(parameter) + " must be positive, got " + std::to_string(value));
}

Status CheckNonNegative(std::string_view policy, std::string_view parameter, Tokens value) {
  if (value >= 0) return OkStatus();
  return PolicyError(
      policy, std::string(parameter) + " must be non-negative, got " + std::to_string(value));
}

Result<std::unique_ptr<ContextPolicy>> MakeContextPolicy(const ContextPolicyParams& params) {
  for (const PolicyEntry& entry : kPolicies) {
    if (params.kind == entry.name) return entry.make(params);
  }
  std::string known;
  for (const PolicyEntry& entry : kPolicies) {
    if (!known.empty()) known += ", ";
    known += entry.name;
  }
  return Error("context_policy: unknown policy \"" + params.kind + "\" (known: " + known + ")");
}

std::vector<std::string> ContextPolicyNames() {
  std::vector<std::string> names;
  for (const PolicyEntry& entry : kPolicies) names.emplace_back(entry.name);
  return names;
}

}  // namespace kvbill
