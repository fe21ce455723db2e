// keep_all: the client sends the context exactly as the trace records it.
#include "policy/context_builder.h"
#include "policy/policies.h"

namespace kvbill {
namespace {

class KeepAll : public TurnByTurnPolicy {
 protected:
  Context Edit(const Context& recorded, int /*turn*/) const override { return recorded; }
};

}  // namespace

Result<std::unique_ptr<ContextPolicy>> MakeKeepAll(const ContextPolicyParams& /*params*/) {
  return std::unique_ptr<ContextPolicy>(std::make_unique<KeepAll>());
}

}  // namespace kvbill
