// Gemini's context caching (docs/billing.md#gemini): implicit caching,
// automatic and without a write fee, in the shared step cache; and explicit
// caches, created for a prefix, alive for a fixed lifetime from creation and
// charged outside the requests (creation as input, storage per token-hour).
#include <string>

#include "cost/provider_caches.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

// Granularity of implicit hits. Google publishes none; OpenAI's 128 tokens.
constexpr Tokens kImplicitStepTokens = 128;

class GeminiExplicitCache : public ProviderCache {
 public:
  GeminiExplicitCache(Tokens prefix_tokens, Tokens min_tokens, Seconds ttl_s)
      : prefix_tokens_(prefix_tokens), min_tokens_(min_tokens), ttl_s_(ttl_s), entries_(ttl_s) {}

  CallUsage Serve(Seconds now_s, std::span<const ContentPiece> pieces) override {
    const PrefixHashes prefix(pieces);
    const Tokens prompt = prefix.tokens();
    entries_.Expire(now_s);
    CallUsage usage;
    // A fixed prefix: the cache of this request's first prefix_tokens, if
    // any; otherwise the longest live cache within the prompt.
    const Tokens limit = prefix_tokens_ > 0 ? prefix_tokens_ : prompt;
    Tokens read = prompt >= limit ? entries_.Longest(prefix, limit) : 0;
    if (prefix_tokens_ > 0 && read != prefix_tokens_) read = 0;
    if (read == 0 && prompt >= limit && limit >= min_tokens_) {
      // The application creates the cache, then sends the request against it.
      entries_.Put(limit, prefix.At(limit), now_s);
      creations_.push_back(CacheCreation{now_s, limit, ttl_s_});
      read = limit;
    }
    usage.cache_read = read;
    usage.input = prompt - read;
    return usage;
  }

  void Seed(Seconds now_s, std::span<const ContentPiece> pieces, Tokens prefix_tokens) override {
    const Tokens at = prefix_tokens_ > 0 ? prefix_tokens_ : prefix_tokens;
    if (prefix_tokens < at || at < min_tokens_) return;
    entries_.Put(at, PrefixHashes(pieces).At(at), now_s);
  }

  std::vector<CacheCreation> Creations() const override { return creations_; }

 private:
  Tokens prefix_tokens_;  // 0: the whole prompt of a request without a live cache
  Tokens min_tokens_;
  Seconds ttl_s_;
  // Put only at creation: an entry lives ttl_s from creation, reads do not
  // refresh it.
  PrefixEntries entries_;
  std::vector<CacheCreation> creations_;
};

}  // namespace

Tokens GeminiMinimumCacheableTokens(std::string_view model) {
  if (model.starts_with("gemini/")) model.remove_prefix(7);
  return model.starts_with("gemini-2.5") ? 2'048 : 4'096;
}

Result<std::unique_ptr<ProviderCache>> MakeGeminiCache(std::string_view model,
                                                       const ProviderCacheOptions& options) {
  if (options.ttl_s < 0)
    return Error("gemini: ttl_s must be positive, got " + ShortestDecimal(options.ttl_s));
  if (options.min_cacheable_tokens < 0 || options.prefix_tokens < 0) {
    return Error("gemini: token counts must be non-negative");
  }
  const Tokens min_tokens = options.min_cacheable_tokens > 0 ? options.min_cacheable_tokens
                                                             : GeminiMinimumCacheableTokens(model);
  if (!options.explicit_cache) {
    if (options.prefix_tokens > 0) {
      return Error("gemini: prefix_tokens applies to explicit caches (\"mode\": \"explicit\")");
    }
    return NewStepPrefixCache(min_tokens, kImplicitStepTokens,
                              options.ttl_s == 0 ? 300 : options.ttl_s);
  }
  if (options.prefix_tokens > 0 && options.prefix_tokens < min_tokens) {
    return Error("gemini: prefix_tokens " + std::to_string(options.prefix_tokens) +
                 " is below the model's minimum of " + std::to_string(min_tokens));
  }
  return std::unique_ptr<ProviderCache>(std::make_unique<GeminiExplicitCache>(
      options.prefix_tokens, min_tokens, options.ttl_s == 0 ? 3'600 : options.ttl_s));
}

}  // namespace kvbill
