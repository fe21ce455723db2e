// OpenAI's automatic prompt cache (docs/billing.md#openai): from 1,024
// tokens, hits in 128-token steps, no write fee, retention a parameter. The
// step cache here serves DeepSeek's rules too.
#include <sstream>
#include <string>

#include "cost/provider_caches.h"

namespace kvbill {
namespace {

class StepPrefixCache : public ProviderCache {
 public:
  StepPrefixCache(Tokens min_tokens, Tokens step_tokens, Seconds ttl_s)
      : min_tokens_(min_tokens), step_tokens_(step_tokens), entries_(ttl_s) {}

  CallUsage Serve(Seconds now_s, std::span<const ContentPiece> pieces) override {
    const PrefixHashes prefix(pieces);
    entries_.Expire(now_s);
    CallUsage usage;
    usage.cache_read = entries_.Longest(prefix, prefix.tokens());
    usage.input = prefix.tokens() - usage.cache_read;
    PutSteps(now_s, prefix, prefix.tokens());
    return usage;
  }

  void Seed(Seconds now_s, std::span<const ContentPiece> pieces, Tokens prefix_tokens) override {
    PutSteps(now_s, PrefixHashes(pieces), prefix_tokens);
  }

 private:
  // Entries at every step in [min_tokens_, tokens].
  void PutSteps(Seconds now_s, const PrefixHashes& prefix, Tokens tokens) {
    const Tokens first = (min_tokens_ + step_tokens_ - 1) / step_tokens_ * step_tokens_;
    for (Tokens p = first; p <= tokens; p += step_tokens_) entries_.Put(p, prefix.At(p), now_s);
  }

  Tokens min_tokens_;
  Tokens step_tokens_;
  PrefixEntries entries_;
};

}  // namespace

std::unique_ptr<ProviderCache> NewStepPrefixCache(Tokens min_tokens, Tokens step_tokens,
                                                  Seconds ttl_s) {
  return std::make_unique<StepPrefixCache>(min_tokens, step_tokens, ttl_s);
}

Result<std::unique_ptr<ProviderCache>> MakeOpenAiCache(std::string_view /*model*/,
                                                       const ProviderCacheOptions& options) {
  if (options.ttl_s < 0) {
    std::ostringstream out;
    out << "openai: ttl_s must be positive, got " << options.ttl_s;
    return Error(out.str());
  }
  const Tokens min_tokens = options.min_cacheable_tokens > 0 ? options.min_cacheable_tokens : 1024;
  return NewStepPrefixCache(min_tokens, 128, options.ttl_s == 0 ? 300 : options.ttl_s);
}

}  // namespace kvbill
