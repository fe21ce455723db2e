// Anthropic's prompt cache (docs/billing.md#anthropic): one breakpoint at the
// end of each request's prompt; reads at the longest alive earlier
// breakpoint, writes from there to the request's own.
#include <string>

#include "cost/provider_caches.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

class AnthropicCache : public ProviderCache {
 public:
  AnthropicCache(Seconds ttl_s, Tokens min_tokens)
      : one_hour_(ttl_s > 300), min_tokens_(min_tokens), entries_(ttl_s) {}

  CallUsage Serve(Seconds now_s, std::span<const ContentPiece> pieces) override {
    const PrefixHashes prefix(pieces);
    const Tokens prompt = prefix.tokens();
    CallUsage usage;
    entries_.Expire(now_s);
    if (prompt < min_tokens_) {
      usage.input = prompt;
      return usage;
    }
    // Entries exist only at positions >= min_tokens_.
    const Tokens read = entries_.Longest(prefix, prompt);
    if (read > 0) entries_.Put(read, prefix.At(read), now_s);
    if (read < prompt) entries_.Put(prompt, prefix.At(prompt), now_s);
    usage.cache_read = read;
    (one_hour_ ? usage.cache_write_1h : usage.cache_write_5m) = prompt - read;
    return usage;
  }

  void Seed(Seconds now_s, std::span<const ContentPiece> pieces, Tokens prefix_tokens) override {
    if (prefix_tokens < min_tokens_) return;
    entries_.Put(prefix_tokens, PrefixHashes(pieces).At(prefix_tokens), now_s);
  }

  bool ClientBreakpoints() const override { return true; }

 private:
  bool one_hour_;
  Tokens min_tokens_;
  PrefixEntries entries_;
};

}  // namespace

Result<std::unique_ptr<ProviderCache>> MakeAnthropicCache(std::string_view model,
                                                          const ProviderCacheOptions& options) {
  const Seconds ttl_s = options.ttl_s == 0 ? 300 : options.ttl_s;
  if (ttl_s != 300 && ttl_s != 3600) {
    return Error("anthropic: ttl_s must be 300 or 3600, got " + ShortestDecimal(ttl_s));
  }
  if (options.min_cacheable_tokens < 0) {
    return Error("anthropic: min_cacheable_tokens must be non-negative, got " +
                 std::to_string(options.min_cacheable_tokens));
  }
  const Tokens min_tokens = options.min_cacheable_tokens > 0
                                ? options.min_cacheable_tokens
                                : AnthropicMinimumCacheableTokens(model);
  return std::unique_ptr<ProviderCache>(std::make_unique<AnthropicCache>(ttl_s, min_tokens));
}

}  // namespace kvbill
