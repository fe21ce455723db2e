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
// report no cache writes.
#ifndef KVBILL_COST_API_BILL_H_
#define KVBILL_COST_API_BILL_H_

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

}  // namespace kvbill

#endif  // KVBILL_COST_API_BILL_H_
