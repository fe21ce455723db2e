// Money: exact US-dollar amounts for API bills.
//
// An amount is a whole number of pico-dollars (1e-12 USD) in a signed 64-bit
// integer. Prices are whole pico-dollars per token, which is the same number
// as micro-dollars per million tokens: $3 per Mtok = 3,000,000 pico-dollars
// per token, DeepSeek's $0.003625 per Mtok = 3,625. Every price on the
// providers' sheets is a whole number in that unit, so tokens x price is
// exact, and sums of calls are exact and independent of their order. The
// range is +-$9,223,372 (2^63 pico-dollars); the checked operations below
// report an overflow instead of wrapping. Conversion to double happens only
// when printing JSON. See docs/billing.md#money.
#ifndef KVBILL_COST_MONEY_H_
#define KVBILL_COST_MONEY_H_

#include <compare>
#include <cstdint>
#include <string>

#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

inline constexpr std::int64_t kPicoUsdPerUsd = 1'000'000'000'000;

// A price per token in pico-dollars (= micro-dollars per million tokens).
using PicoUsdPerToken = std::int64_t;

struct Money {
  std::int64_t pico_usd = 0;

  // The amount in dollars, rounded to the nearest double.
  double usd() const { return static_cast<double>(pico_usd) / static_cast<double>(kPicoUsdPerUsd); }
  auto operator<=>(const Money&) const = default;
};

// *sum += amount; false (and *sum unchanged) when the result would overflow.
[[nodiscard]] bool AddMoney(Money amount, Money* sum);

// tokens x price; an error naming the amount's range on overflow.
// Preconditions: tokens >= 0, price >= 0.
Result<Money> TokensTimesPrice(Tokens tokens, PicoUsdPerToken price);

// A price given in dollars per million tokens (3.75) as pico-dollars per
// token (3,750,000), rounded to the nearest whole unit. Errors: "must be a
// non-negative number, got -1" (also NaN), "is above $100,000,000 per Mtok
// ($100 per token)" (also +infinity).
Result<PicoUsdPerToken> PriceFromUsdPerMtok(double usd_per_mtok);

// The price back in dollars per million tokens, exact decimal: "3.75".
std::string FormatUsdPerMtok(PicoUsdPerToken price);

// The exact decimal amount in dollars without a sign for the currency and
// without trailing zeros: "0.33979925", "12", "-0.5".
std::string FormatUsdExact(Money amount);

// "$1,234.5679": dollars rounded half away from zero to `decimals` places
// (0 <= decimals <= 12), with thousands separators.
std::string FormatUsd(Money amount, int decimals);

}  // namespace kvbill

#endif  // KVBILL_COST_MONEY_H_
