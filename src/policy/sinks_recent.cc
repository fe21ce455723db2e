// sinks_recent: the first `sink_tokens` tokens of the context (attention
// sinks, StreamingLLM) and the last `recent_tokens`. The sinks stay a cached
// prefix; once the context is longer than both, the recent window moves
// every turn and the cache misses from the end of the sinks on.
#include "policy/context_builder.h"
#include "policy/policies.h"

namespace kvbill {
namespace {

constexpr const char* kSinksRecent = "sinks_recent";

class SinksRecent : public TurnByTurnPolicy {
 public:
  SinksRecent(Tokens sink_tokens, Tokens recent_tokens)
      : sink_tokens_(sink_tokens), recent_tokens_(recent_tokens) {}

 protected:
  Context Edit(const Context& recorded, int /*turn*/) const override {
    if (ContextTokens(recorded) <= sink_tokens_ + recent_tokens_) return recorded;
    Context prompt = FirstTokens(recorded, sink_tokens_);
    for (ContextPiece& p : LastTokens(recorded, recent_tokens_)) prompt.push_back(std::move(p));
    return prompt;
  }

 private:
  Tokens sink_tokens_;
  Tokens recent_tokens_;
};

}  // namespace

Result<std::unique_ptr<ContextPolicy>> MakeSinksRecent(const ContextPolicyParams& params) {
  if (Status s = CheckNonNegative(kSinksRecent, "sink_tokens", params.sink_tokens); !s)
    return s.error();
  if (Status s = CheckPositive(kSinksRecent, "recent_tokens", params.recent_tokens); !s)
    return s.error();
  return std::unique_ptr<ContextPolicy>(
      std::make_unique<SinksRecent>(params.sink_tokens, params.recent_tokens));
}

}  // namespace kvbill
