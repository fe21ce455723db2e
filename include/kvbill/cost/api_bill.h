// Pricing of API usage as a provider reports it: one call, or a total of
// many calls. Pure functions of a ModelPrice and token counts.
//
// One call (docs/billing.md#rules):
//   cost = input x in + cache_write_5m x w5 + cache_write_1h x w1
//        + cache_read x cr + output x out
// at the model's base rates, or at its long-context rates when the model has
// a tier and the prompt (input + cache writes + cache reads) exceeds its
// threshold: the whole request is repriced, cached tokens included.
// OpenAI, Gemini and DeepSeek usage maps onto the same fields: their cached
// prompt tokens are cache_read, the rest of the prompt is input, and they
// report no cache writes (OpenAI's GPT-5.6 cache_write_tokens excepted:
// cache_write_5m).
//
// Gemini explicit caches are charged outside the calls (PriceCacheCreations):
//   creation = tokens x in   (the long-context rate above the threshold)
//   storage  = tokens x storage per token-hour x lifetime_s / 3600
#ifndef KVBILL_COST_API_BILL_H_
#define KVBILL_COST_API_BILL_H_

#include <cstdint>
#include <span>

#include "kvbill/cost/money.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

// Token counts of one call, or summed over calls. All >= 0.
struct CallUsage {
  Tokens input = 0;           // uncached input
  Tokens cache_write_5m = 0;  // written to a 5-minute cache (or a provider's only cache)
  Tokens cache_write_1h = 0;  // written to a 1-hour cache
  Tokens cache_read = 0;      // read from the cache
  Tokens output = 0;          // generated, reasoning included
  // Web searches the provider's server ran for the call (Anthropic's
  // usage.server_tool_use.web_search_requests), billed per search beside
  // the tokens (ModelPrice::web_search).
  std::int64_t web_searches = 0;

  Tokens cache_write() const { return cache_write_5m + cache_write_1h; }
  // The whole prompt: input + cache writes + cache reads.
  Tokens prompt() const { return input + cache_write() + cache_read; }
  CallUsage& operator+=(const CallUsage& other);
  bool operator==(const CallUsage&) const = default;
};

struct CallCost {
  Money cost;
  bool long_context = false;  // priced at the long-context tier
};

// The price of one call, as above. Error only on overflow of an amount.
Result<CallCost> PriceCall(const ModelPrice& price, const CallUsage& usage);

// The price of usage summed over several calls (a run's per-model total) at
// the base rates: a total cannot tell which calls crossed a long-context
// threshold. Error only on overflow.
Result<Money> PriceTotal(const ModelPrice& price, const CallUsage& usage);

// One explicit cache created during a replay (gemini): `tokens` billed as
// input at creation, stored for `lifetime_s`.
struct CacheCreation {
  Seconds time_s = 0;
  Tokens tokens = 0;
  Seconds lifetime_s = 0;

  bool operator==(const CacheCreation&) const = default;
};

// The charges of explicit caches created during a replay, as above.
struct CacheCreationCost {
  std::int64_t creations = 0;
  Tokens created_tokens = 0;       // Σ tokens over creations
  double storage_token_hours = 0;  // Σ tokens x lifetime_s / 3600
  Money creation;                  // Σ tokens at the input price
  Money storage;                   // Σ storage, each rounded to the nearest pico-dollar
  Money total;                     // creation + storage
};

// Prices `creations` with `price`. Errors: `model "x" has no cache storage
// price (cache_storage_per_hour); explicit caches are charged storage per
// token-hour` when there is a creation and the price is 0; an overflow.
Result<CacheCreationCost> PriceCacheCreations(const ModelPrice& price,
                                              std::span<const CacheCreation> creations);

}  // namespace kvbill

#endif  // KVBILL_COST_API_BILL_H_
