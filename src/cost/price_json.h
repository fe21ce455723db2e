// Internal: the LiteLLM importer on an already parsed document, shared by
// ParsePriceSheet and ImportLiteLlmPrices, and the cache-price rules the
// importer and --price share. nlohmann/json stays in src/.
#ifndef KVBILL_SRC_COST_PRICE_JSON_H_
#define KVBILL_SRC_COST_PRICE_JSON_H_

#include <optional>
#include <string>
#include <string_view>

#include "kvbill/cost/price_sheet.h"
#include "trace/json_fields.h"

namespace kvbill {

Result<PriceSheet> ImportLiteLlmJson(const Json& json, const std::string& name);

// True when a model id names a Claude model (its part after the last '/'
// holds "claude", any case): an entry without a provider is then priced by
// Anthropic's rules.
bool NamesClaudeModel(std::string_view id);

// Fills the cache prices an entry lacks (nullopt) from rates->input by the
// rules of docs/billing.md#price-sheet: Anthropic reads 0.1x, 5-minute
// writes 1.25x and 1-hour writes 2x input; providers without a write fee
// write at the input price and, without a cached price, read at it; an entry
// without a provider (`no_provider`) writes for 1 hour at 2x input, the
// 1-hour rate (only Anthropic's logs record 1-hour writes).
void FillCachePricesByRule(bool anthropic, bool no_provider,
                           const std::optional<PicoUsdPerToken>& read,
                           const std::optional<PicoUsdPerToken>& write_5m,
                           const std::optional<PicoUsdPerToken>& write_1h, TokenRates* rates);

// A fast-mode multiplier read from JSON: a finite number in (0, 1000].
// Errors: "must be a number in (0, 1000], got -1".
Result<double> ReadFastMultiplier(const Json& value);

// One web search's price read from JSON, dollars to pico-dollars: a number
// from 0 to 1,000. Errors: "must be between 0 and 1,000 dollars per search,
// got -1".
Result<std::int64_t> ReadWebSearchUsd(const Json& value);

}  // namespace kvbill

#endif  // KVBILL_SRC_COST_PRICE_JSON_H_
