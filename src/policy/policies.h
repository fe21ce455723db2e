// The context policies' factories, one per file of src/policy/, and the
// parameter checks they share. Private to src/policy/; the table that names
// them is in context_policy.cc.
#ifndef KVBILL_POLICY_POLICIES_H_
#define KVBILL_POLICY_POLICIES_H_

#include <memory>
#include <string_view>

#include "kvbill/policy/context_policy.h"
#include "kvbill/util/result.h"

namespace kvbill {

// Each reads the parameters of its policy, ignores the others, and fails with
// an error naming the policy and the parameter.
Result<std::unique_ptr<ContextPolicy>> MakeKeepAll(const ContextPolicyParams& params);
Result<std::unique_ptr<ContextPolicy>> MakeSlidingWindow(const ContextPolicyParams& params);
Result<std::unique_ptr<ContextPolicy>> MakeDropToolResults(const ContextPolicyParams& params);
Result<std::unique_ptr<ContextPolicy>> MakeSummarise(const ContextPolicyParams& params);
Result<std::unique_ptr<ContextPolicy>> MakeSinksRecent(const ContextPolicyParams& params);

// "context_policy: <policy>: <message>".
Error PolicyError(std::string_view policy, std::string_view message);

// Fails with "context_policy: <policy>: <parameter> must be positive, got <value>".
Status CheckPositive(std::string_view policy, std::string_view parameter, Tokens value);
// Fails with "context_policy: <policy>: <parameter> must be non-negative, got <value>".
Status CheckNonNegative(std::string_view policy, std::string_view parameter, Tokens value);

}  // namespace kvbill

#endif  // KVBILL_POLICY_POLICIES_H_
