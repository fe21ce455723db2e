// DeepSeek's context caching on disk (docs/billing.md#deepseek): automatic,
// 64-token storage units (a prompt under 64 tokens is not cached), no write
// fee, hits priced at the cache-read rate; unused entries are cleared after
// "a few hours to a few days", here ttl_s (default 3 hours).
#include <sstream>
#include <string>

#include "cost/provider_caches.h"

namespace kvbill {

Result<std::unique_ptr<ProviderCache>> MakeDeepSeekCache(std::string_view /*model*/,
                                                         const ProviderCacheOptions& options) {
  if (options.ttl_s < 0) {
    std::ostringstream out;
    out << "deepseek: ttl_s must be positive, got " << options.ttl_s;
    return Error(out.str());
  }
  const Tokens min_tokens = options.min_cacheable_tokens > 0 ? options.min_cacheable_tokens : 64;
  return NewStepPrefixCache(min_tokens, 64, options.ttl_s == 0 ? 10'800 : options.ttl_s);
}

}  // namespace kvbill
