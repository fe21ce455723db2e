// PriceSheet: what API providers charge per token, per model, dated and
// sourced. The bundled sheet is scenarios/prices.json (compiled into the
// binary); a LiteLLM model_prices_and_context_window.json can replace it and
// "MODEL:field=value" overrides adjust it. Format, sources and the pricing
// rules per provider: docs/billing.md.
//
// Invariants: every price is >= 0 in pico-dollars per token (money.h); ids
// and aliases are unique across the sheet; a model with a long-context tier
// has threshold > 0 and all five tier rates.
#ifndef KVBILL_COST_PRICE_SHEET_H_
#define KVBILL_COST_PRICE_SHEET_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/cost/money.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

// Per-token prices of one tier, in pico-dollars per token.
struct TokenRates {
  PicoUsdPerToken input = 0;           // uncached input
  PicoUsdPerToken output = 0;          // output, reasoning included
  PicoUsdPerToken cache_read = 0;      // input read from the provider cache
  PicoUsdPerToken cache_write_5m = 0;  // input written to a 5-minute cache (or the only one)
  PicoUsdPerToken cache_write_1h = 0;  // input written to a 1-hour cache

  bool operator==(const TokenRates&) const = default;
};

struct ModelPrice {
  std::string id;        // the sheet's name: "claude-sonnet-4-5"
  std::string provider;  // "anthropic", "openai", "gemini", "deepseek", ... (informational)
  std::vector<std::string> aliases;  // other exact ids: "claude-sonnet-4-5-20250929"
  TokenRates base;
  // Prompts (input + cache writes + cache reads) above this many tokens are
  // priced whole at `long_context`; 0 means the model has no such tier.
  Tokens long_context_threshold = 0;
  TokenRates long_context;
  // Storage of an explicit cache (Gemini), pico-dollars per token-hour (the
  // same number as micro-dollars per million tokens per hour); 0 = none
  // listed.
  PicoUsdPerToken cache_storage_per_hour = 0;
  // Anthropic's fast mode (`usage.speed: "fast"`): every rate of the tier
  // the request falls in, times this (6 for Claude Opus 4.6); 0 = the model
  // has no fast-mode price listed. See FastModePrice.
  double fast_multiplier = 0;
  // Anthropic's US-only inference (`usage.inference_geo: "us"`): every rate
  // times this (1.1 for Claude Opus 4.6, Sonnet 4.6 and later models); 0 =
  // none listed, and such a call is billed at the standard rates, as
  // Anthropic bills the earlier models. See UsOnlyPrice.
  double us_multiplier = 0;
  // The longest prompt (input + cache writes + cache reads) the provider
  // takes; 0 = not listed. A listed window at or below a long-context tier's
  // threshold is the standard one, which the tier's (beta) window extends
  // (InputLimit).
  Tokens max_input_tokens = 0;
  // One server-side web search (CallUsage::web_searches), pico-dollars;
  // none listed: WebSearchFee takes the provider's (0 is a price: free).
  std::optional<std::int64_t> web_search_pico_usd;
  std::string source;  // where the figures come from, with its date
  std::string notes;   // provider rules applied, deviations from the source

  bool operator==(const ModelPrice&) const = default;
};

// What one server-side web search of `price`'s model costs: the sheet's
// web_search_pico_usd, else its provider's list price (Anthropic: $10 per
// 1,000 searches, whatever the model), else nothing known ($0).
Money WebSearchFee(const ModelPrice& price);
// $10 per 1,000 searches: Anthropic's web search tool, on every model
// (platform.claude.com pricing, "Web search tool").
inline constexpr std::int64_t kAnthropicWebSearchPicoUsd = 10'000'000'000;

// An entry of a price file that could not be used, and why: LiteLLM lists
// some models with only one of the two per-token prices they need.
struct SkippedPrice {
  std::string id;
  std::string missing;  // "output_cost_per_token", "input_cost_per_token and ..."
};

// Anthropic's long-context window: the models it prices above 200,000
// tokens take 1,000,000 with the context-1m beta (Claude API support article
// 8606395, "How large is the Claude API's context window": 1M tokens for
// Claude Opus 4.6, Sonnet 4.5 and Sonnet 4).
inline constexpr Tokens kAnthropicLongContextWindow = 1'000'000;

// The prompt limit a replay holds a request to: max_input_tokens, unless a
// long-context tier starts at or above it: then the tier's window, which
// for Anthropic is kAnthropicLongContextWindow and for another provider is
// not known (0, none applies). 0 when none is listed.
inline Tokens InputLimit(const ModelPrice& price) {
  if (price.long_context_threshold > 0 && price.max_input_tokens <= price.long_context_threshold) {
    return price.provider == "anthropic" ? kAnthropicLongContextWindow : 0;
  }
  return price.max_input_tokens;
}

class PriceSheet {
 public:
  PriceSheet() = default;
  PriceSheet(std::string as_of, std::string source)
      : as_of_(std::move(as_of)), source_(std::move(source)) {}

  // Adds a model. Error when its id or an alias is already taken:
  // "model \"x\": id already used by \"y\"".
  Status Add(ModelPrice price);

  // The entry for a model id as a log records it, or nullptr (unpriced).
  // Tried in order, each on the result of the step before, stopping at the
  // first id or alias that matches exactly:
  //   1. the id as given;
  //   2. lower case;
  //   3. without a routing prefix up to the last '/' ("anthropic/claude-x");
  //   4. with a Vertex-style '@' turned into '-' ("claude-x@20250929");
  //   5. without a trailing date "-YYYYMMDD" or "-YYYY-MM-DD".
  // Dated snapshots priced differently from their family are their own
  // entries, so step 1 finds them before step 5 could.
  const ModelPrice* Find(std::string_view model) const;
  ModelPrice* FindById(std::string_view id);

  // A skipped entry (LiteLLM) that `model` would have resolved to, tried as
  // Find() does, or nullptr: says why a logged model is unpriced.
  const SkippedPrice* FindSkipped(std::string_view model) const;
  void AddSkipped(SkippedPrice skipped) { skipped_.push_back(std::move(skipped)); }
  const std::vector<SkippedPrice>& skipped() const { return skipped_; }

  const std::vector<ModelPrice>& models() const { return models_; }
  const std::string& as_of() const { return as_of_; }
  const std::string& source() const { return source_; }

 private:
  const ModelPrice* FindExact(std::string_view id) const;

  std::string as_of_;
  std::string source_;
  std::vector<ModelPrice> models_;
  std::map<std::string, std::size_t, std::less<>> index_;  // id or alias -> models_
  std::vector<SkippedPrice> skipped_;
};

// `price` as its fast mode bills it: every rate of both tiers times
// `fast_multiplier`, rounded to the nearest pico-dollar per token (whole for
// the multipliers providers publish: Opus 4.6's $5 input x 6 = $30).
// Anthropic: fast mode is "priced at 6x standard Opus rates" and "stacks with
// other pricing modifiers" (prompt caching, long context). Error when the
// model has no multiplier: `model "x" has no fast-mode price (fast_multiplier)`.
Result<ModelPrice> FastModePrice(const ModelPrice& price);

// `price` as US-only inference bills it: every rate of both tiers times
// `us_multiplier`, rounded to the nearest pico-dollar per token; the price
// itself when the model has none. Anthropic's pricing page: "specifying
// US-only inference through the inference_geo parameter incurs a 1.1x
// multiplier on all token pricing categories, including input tokens,
// output tokens, cache writes, and cache reads", on top of fast mode and
// long-context pricing; earlier models "always use standard pricing".
// Error when a rate would pass $1,000 a token (a hostile sheet's
// multipliers stacked on fast mode's).
Result<ModelPrice> UsOnlyPrice(const ModelPrice& price);

// Parses a price sheet. A JSON object with "kvbill_prices": 1 is kvbill's own
// format (docs/billing.md#price-sheet); any other object is read as LiteLLM's
// model_prices_and_context_window.json. `name` prefixes errors, which carry
// a JSON pointer: "prices.json#/models/gpt-5/input: must be a non-negative
// number, got -1".
Result<PriceSheet> ParsePriceSheet(std::string_view text, const std::string& name);

// LiteLLM's JSON: every entry with input_cost_per_token and
// output_cost_per_token becomes a model (provider = litellm_provider, or
// "anthropic" for a Claude model id without one); absent cache fields follow
// the provider rules of docs/billing.md; provider_specific_entry.fast is the
// fast-mode multiplier. An entry with a per-token price but without one of
// those two is skipped and listed in skipped(); an entry without any
// per-token price (image, audio models) is left out silently.
Result<PriceSheet> ImportLiteLlmPrices(std::string_view text, const std::string& name);

// The bundled scenarios/prices.json.
Result<PriceSheet> BundledPriceSheet();

// Applies "MODEL:field=value[,field=value...]" overrides in order. Fields:
// input, output, cache_read, cache_write_5m, cache_write_1h (dollars per
// million tokens), cache_storage_per_hour (dollars per million tokens per
// hour), long_context_threshold (tokens; 0 removes the tier),
// long_input, long_output, long_cache_read, long_cache_write_5m,
// long_cache_write_1h, and fast_multiplier (a factor; 0 removes it). MODEL
// is resolved like Find(); an unknown MODEL adds a model (provider "custom",
// or "anthropic" for a Claude model id) that needs input and output; its
// cache prices default by the rules of docs/billing.md (Anthropic's for a
// Claude id; else reads and 5-minute writes at the input price, 1-hour
// writes at twice it). Errors: "--price \"spec\": ...".
Status ApplyPriceOverrides(const std::vector<std::string>& specs, PriceSheet* sheet);

}  // namespace kvbill

#endif  // KVBILL_COST_PRICE_SHEET_H_
