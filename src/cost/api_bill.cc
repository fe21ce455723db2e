#include "kvbill/cost/api_bill.h"

namespace kvbill {
namespace {

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
    if (!AddMoney(*part, &total)) return Error("an amount exceeds the $9,223,372 range");
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
  return *this;
}

Result<CallCost> PriceCall(const ModelPrice& price, const CallUsage& usage) {
  const bool long_context =
      price.long_context_threshold > 0 && usage.prompt() > price.long_context_threshold;
  auto cost = AtRates(long_context ? price.long_context : price.base, usage);
  if (!cost) return cost.error();
  return CallCost{*cost, long_context};
}

Result<Money> PriceTotal(const ModelPrice& price, const CallUsage& usage) {
  return AtRates(price.base, usage);
}

}  // namespace kvbill
