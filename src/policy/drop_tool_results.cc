// drop_tool_results: a tool result more than `older_than_turns` turns old is
// replaced by a stub of `stub_tokens` tokens (none: dropped). Each turn that
// stubs a result changes the context from that result on, so the cache misses
// from there; results no longer than the stub are left alone.
#include "kvbill/cache/block_hash.h"
#include "policy/context_builder.h"
#include "policy/policies.h"

namespace kvbill {
namespace {

constexpr const char* kDropToolResults = "drop_tool_results";

class DropToolResults : public TurnByTurnPolicy {
 public:
  DropToolResults(int older_than_turns, Tokens stub_tokens)
      : older_than_turns_(older_than_turns), stub_tokens_(stub_tokens) {}

 protected:
  Context Edit(const Context& recorded, int turn) const override {
    Context prompt;
    prompt.reserve(recorded.size());
    for (const ContextPiece& p : recorded) {
      const bool stale = p.piece.kind == SpanKind::kToolResult && turn - p.turn > older_than_turns_;
      if (!stale || p.piece.content.tokens <= stub_tokens_) {
        prompt.push_back(p);
        continue;
      }
      if (stub_tokens_ == 0) continue;
      ContextPiece stub = p;
      stub.piece.content.identity = HashCombine(p.piece.content.identity, HashString("stub"));
      stub.piece.content.offset = 0;
      stub.piece.content.tokens = stub_tokens_;
      prompt.push_back(stub);
    }
    return prompt;
  }

 private:
  int older_than_turns_;
  Tokens stub_tokens_;
};

}  // namespace

Result<std::unique_ptr<ContextPolicy>> MakeDropToolResults(const ContextPolicyParams& params) {
  if (Status s = CheckNonNegative(kDropToolResults, "older_than_turns", params.older_than_turns);
      !s) {
    return s.error();
  }
  if (Status s = CheckNonNegative(kDropToolResults, "stub_tokens", params.stub_tokens); !s)
    return s.error();
  return std::unique_ptr<ContextPolicy>(
      std::make_unique<DropToolResults>(params.older_than_turns, params.stub_tokens));
}

}  // namespace kvbill
