// Internal to the provider caches: the factories of the table in
// provider_cache.cc and the prefix entries they share.
#ifndef KVBILL_SRC_COST_PROVIDER_CACHES_H_
#define KVBILL_SRC_COST_PROVIDER_CACHES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <queue>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbill/cost/provider_cache.h"

namespace kvbill {

// Cached prefixes keyed by (position, prefix hash), each with the time of its
// last use. An entry is alive while now - last_use < ttl_s.
class PrefixEntries {
 public:
  explicit PrefixEntries(Seconds ttl_s) : ttl_s_(ttl_s) {}

  // Drops the entries not alive at `now_s`. Times never run backwards.
  void Expire(Seconds now_s);
  // Adds the entry, or refreshes it, with last use `now_s`.
  void Put(Tokens position, std::uint64_t hash, Seconds now_s);
  // The longest position <= limit holding an entry for `prefix`, or 0.
  // Call Expire first.
  Tokens Longest(const PrefixHashes& prefix, Tokens limit) const;

 private:
  using Key = std::pair<Tokens, std::uint64_t>;  // position, hash

  Seconds ttl_s_;
  std::map<Key, Seconds> last_use_s_;
  // (expiry, key), soonest first; stale when the entry was used again since.
  std::priority_queue<std::pair<Seconds, Key>, std::vector<std::pair<Seconds, Key>>, std::greater<>>
      expiries_;
};

// Provider caches, one per file.
Result<std::unique_ptr<ProviderCache>> MakeAnthropicCache(std::string_view model,
                                                          const ProviderCacheOptions& options);
Result<std::unique_ptr<ProviderCache>> MakeOpenAiCache(std::string_view model,
                                                       const ProviderCacheOptions& options);
Result<std::unique_ptr<ProviderCache>> MakeDeepSeekCache(std::string_view model,
                                                         const ProviderCacheOptions& options);
Result<std::unique_ptr<ProviderCache>> MakeGeminiCache(std::string_view model,
                                                       const ProviderCacheOptions& options);

// OpenAI models that bill cache writes: the GPT-5.6 family.
bool OpenAiChargesCacheWrites(std::string_view model);

// An automatic prefix cache in fixed steps (OpenAI, DeepSeek, Gemini
// implicit): a prompt of at least `min_tokens` leaves an entry at every
// multiple of `step_tokens` from min_tokens up to its length; a request reads
// the longest alive entry. Without `write_fee` the rest of the prompt is
// input; with it, the steps past the read are cache_write_5m and only the
// tail after the last step is input.
std::unique_ptr<ProviderCache> NewStepPrefixCache(Tokens min_tokens, Tokens step_tokens,
                                                  Seconds ttl_s, bool write_fee = false);

}  // namespace kvbill

#endif  // KVBILL_SRC_COST_PROVIDER_CACHES_H_
