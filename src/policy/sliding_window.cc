// sliding_window: the leading system/tools pieces whole, then the last
// `window_tokens` tokens of the rest. Once the rest is longer than the window,
// the window's start moves every turn, so every turn misses the cache from
// the end of the system/tools prefix on.
#include "policy/context_builder.h"
#include "policy/policies.h"

namespace kvbill {
namespace {

constexpr const char* kSlidingWindow = "sliding_window";

class SlidingWindow : public TurnByTurnPolicy {
 public:
  explicit SlidingWindow(Tokens window_tokens) : window_tokens_(window_tokens) {}

 protected:
  Context Edit(const Context& recorded, int /*turn*/) const override {
    const std::span<const ContextPiece> all(recorded);
    const std::size_t lead = LeadingSystemAndTools(all);
    Context prompt(recorded.begin(), recorded.begin() + static_cast<std::ptrdiff_t>(lead));
    for (ContextPiece& p : LastTokens(all.subspan(lead), window_tokens_)) {
      prompt.push_back(std::move(p));
    }
    return prompt;
  }

 private:
  Tokens window_tokens_;
};

}  // namespace

Result<std::unique_ptr<ContextPolicy>> MakeSlidingWindow(const ContextPolicyParams& params) {
  if (Status s = CheckPositive(kSlidingWindow, "window_tokens", params.window_tokens); !s)
    return s.error();
  return std::unique_ptr<ContextPolicy>(std::make_unique<SlidingWindow>(params.window_tokens));
}

}  // namespace kvbill
