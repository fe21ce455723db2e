#include "kvbill/cost/api_bill.h"

#include <cmath>
#include <limits>
#include <string>

namespace kvbill {
namespace {

Error AmountOverflow() { return Error("an amount exceeds the $9,223,372 range"); }

Result<Money> AtRates(const TokenRates& rates, const CallUsage& usage) {
  Money total;
  const std::pair<Tokens, PicoUsdPerToken> parts[] = {{usage.input, rates.input},
                                                      {usage.cache_write_5m, rates.cache_write_5m},
                                                      {usage.cache_write_1h, rates.cache_write_1h},
                                                      {usage.cache_read, rates.cache_read},
                                                      {usage.output, rates.output}};
  for (const auto& [tokens, price] : parts) {
    auto part = TokensTimesPrice(tokens, price);
    if (!part) return part.error();
    if (!AddMoney(*part, &total)) return AmountOverflow();
  }
  return total;
}

}  // namespace

CallUsage& CallUsage::operator+=(const CallUsage& other) {
  input += other.input;
  cache_write_5m += other.cache_write_5m;
  cache_write_1h += other.cache_write_1h;
  cache_read += other.cache_read;
  output += other.output;
  web_searches += other.web_searches;
  return *this;
}

namespace {

// The per-search fee of a call's web searches added to its token cost;
// false on overflow.
bool AddSearches(const ModelPrice& price, const CallUsage& usage, Money* cost) {
  if (usage.web_searches <= 0) return true;
  const Money per = WebSearchFee(price);
  if (per.pico_usd != 0 &&
      usage.web_searches > std::numeric_limits<std::int64_t>::max() / per.pico_usd) {
    return false;
  }
  return AddMoney(Money{usage.web_searches * per.pico_usd}, cost);
}

}  // namespace

Result<CallCost> PriceCall(const ModelPrice& price, const CallUsage& usage) {
  const bool long_context =
      price.long_context_threshold > 0 && usage.prompt() > price.long_context_threshold;
  auto cost = AtRates(long_context ? price.long_context : price.base, usage);
  if (!cost) return cost.error();
  if (!AddSearches(price, usage, &*cost)) return AmountOverflow();
  return CallCost{*cost, long_context};
}

Result<Money> PriceTotal(const ModelPrice& price, const CallUsage& usage) {
  auto cost = AtRates(price.base, usage);
  if (!cost) return cost.error();
  if (!AddSearches(price, usage, &*cost)) return AmountOverflow();
  return cost;
}

Result<CacheCreationCost> PriceCacheCreations(const ModelPrice& price,
                                              std::span<const CacheCreation> creations) {
  CacheCreationCost out;
  if (creations.empty()) return out;
  if (price.cache_storage_per_hour <= 0) {
    return Error("model \"" + price.id +
                 "\" has no cache storage price (cache_storage_per_hour); explicit caches are "
                 "charged storage per token-hour");
  }
  const Error overflow = AmountOverflow();
  for (const CacheCreation& c : creations) {
    ++out.creations;
    out.created_tokens += c.tokens;
    out.storage_token_hours += static_cast<double>(c.tokens) * c.lifetime_s / 3600.0;
    // The creation is one request of `tokens` input tokens.
    auto created = PriceCall(price, CallUsage{.input = c.tokens});
    if (!created) return created.error();
    // tokens x price is exact per hour; the fraction of an hour is rounded
    // once, to the nearest pico-dollar.
    auto per_hour = TokensTimesPrice(c.tokens, price.cache_storage_per_hour);
    if (!per_hour) return per_hour.error();
    const long double stored = std::round(static_cast<long double>(per_hour->pico_usd) *
                                          static_cast<long double>(c.lifetime_s) / 3600.0L);
    if (!(stored < 9.2e18L)) return overflow;
    const Money storage{static_cast<std::int64_t>(stored)};
    if (!AddMoney(created->cost, &out.creation) || !AddMoney(storage, &out.storage)) {
      return overflow;
    }
  }
  out.total = out.creation;
  if (!AddMoney(out.storage, &out.total)) return overflow;
  return out;
}

}  // namespace kvbill
