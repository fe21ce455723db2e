#include "kvbill/cost/money.h"

#include <cmath>
#include <sstream>

namespace kvbill {
namespace {

// The largest accepted price: $100,000,000 per Mtok, $100 per token (test
// price sheets, ccusage's among them, use $1 and $10 per token; list prices
// are below $0.001 per token). Amounts stay checked for overflow.
constexpr double kMaxUsdPerMtok = 1e8;

// Digits of a non-negative integer with thousands separators.
std::string WithSeparators(std::uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::uint64_t Magnitude(std::int64_t value) {
  return value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
}

}  // namespace

bool AddMoney(Money amount, Money* sum) {
  std::int64_t result = 0;
  if (__builtin_add_overflow(sum->pico_usd, amount.pico_usd, &result)) return false;
  sum->pico_usd = result;
  return true;
}

Result<Money> TokensTimesPrice(Tokens tokens, PicoUsdPerToken price) {
  std::int64_t result = 0;
  if (__builtin_mul_overflow(tokens, price, &result)) {
    return Error(std::to_string(tokens) + " tokens at " + FormatUsdPerMtok(price) +
                 " $/Mtok exceed the $9,223,372 range of an amount");
  }
  return Money{result};
}

Result<PicoUsdPerToken> PriceFromUsdPerMtok(double usd_per_mtok) {
  // +infinity is above the bound (a price per token of 1e303 is one per
  // Mtok beyond a double); NaN and negatives are no price.
  if (std::isnan(usd_per_mtok) || usd_per_mtok < 0) {
    std::ostringstream text;
    text << usd_per_mtok;
    return Error("must be a non-negative number, got " + text.str());
  }
  if (usd_per_mtok > kMaxUsdPerMtok)
    return Error("is above $100,000,000 per Mtok ($100 per token)");
  return static_cast<PicoUsdPerToken>(std::llround(usd_per_mtok * 1e6));
}

std::string FormatUsdPerMtok(PicoUsdPerToken price) {
  // pico-dollars per token = micro-dollars per Mtok.
  return FormatUsdExact(Money{price * 1'000'000});
}

std::string FormatUsdExact(Money amount) {
  const std::uint64_t magnitude = Magnitude(amount.pico_usd);
  const std::uint64_t per_usd = static_cast<std::uint64_t>(kPicoUsdPerUsd);
  std::string text = (amount.pico_usd < 0 ? "-" : "") + std::to_string(magnitude / per_usd);
  std::string fraction = std::to_string(magnitude % per_usd);
  fraction.insert(0, 12 - fraction.size(), '0');
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  if (!fraction.empty()) text += "." + fraction;
  return text;
}

std::string FormatUsd(Money amount, int decimals) {
  std::uint64_t unit = 1;
  for (int i = decimals; i < 12; ++i) unit *= 10;
  const std::uint64_t magnitude = Magnitude(amount.pico_usd);
  const std::uint64_t rounded = (magnitude + unit / 2) / unit;  // in units of 10^-decimals $
  std::uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  std::string text =
      (amount.pico_usd < 0 && rounded != 0 ? "-$" : "$") + WithSeparators(rounded / scale);
  if (decimals > 0) {
    std::string fraction = std::to_string(rounded % scale);
    fraction.insert(0, static_cast<std::size_t>(decimals) - fraction.size(), '0');
    text += "." + fraction;
  }
  return text;
}

}  // namespace kvbill
