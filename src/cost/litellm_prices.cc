// LiteLLM's model_prices_and_context_window.json as a price sheet
// (docs/billing.md#litellm). Fields are dollars per token.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <regex>

#include "cost/price_json.h"

namespace kvbill {
namespace {

// A price field in dollars per token as pico-dollars per token, or nullopt
// when absent or null. Any other non-number is an error naming the pointer:
// a price that silently went missing would drop the model from the sheet.
// A negative price is shown as written, in dollars per token ("got -3e-06",
// not the -3 $/Mtok it converts to).
Result<std::optional<PicoUsdPerToken>> Field(const Json& entry, const std::string& key,
                                             const std::string& pointer) {
  const auto it = entry.find(key);
  if (it == entry.end() || it->is_null()) return std::optional<PicoUsdPerToken>();
  if (!it->is_number()) {
    return Error(pointer + "/" + key + ": must be a number of dollars per token, got " +
                 Quote(*it));
  }
  if (it->get<double>() < 0) {
    return Error(pointer + "/" + key + ": must be a non-negative number, got " + Quote(*it));
  }
  auto price = PriceFromUsdPerMtok(it->get<double>() * 1e6);
  if (!price) return price.error().Within(pointer + "/" + key);
  return std::optional<PicoUsdPerToken>(*price);
}

// True when the key is one of LiteLLM's per-token prices
// ("input_cost_per_token", "cache_read_input_token_cost", ...).
bool IsTokenPriceKey(std::string_view key) {
  return key.find("cost_per_token") != std::string_view::npos ||
         key.find("_token_cost") != std::string_view::npos;
}

// One entry: a model, nothing (no per-token prices), or nothing with
// *skipped_out set (a per-token price but not both input and output).
Result<std::optional<ModelPrice>> ReadEntry(const std::string& id, const Json& entry,
                                            const std::string& pointer, const std::string& as_of,
                                            std::optional<SkippedPrice>* skipped_out) {
  if (!entry.is_object()) return std::optional<ModelPrice>();
  ModelPrice price;
  price.id = id;
  price.provider = "unknown";
  bool no_provider = true;
  if (const auto it = entry.find("litellm_provider"); it != entry.end()) {
    if (!it->is_string()) {
      return Error(pointer + "/litellm_provider: expected a string, got " + it->type_name());
    }
    price.provider = it->get<std::string>();
    no_provider = false;
  }
  // A Claude model without a provider (test sheets, hand-written files) is
  // Anthropic's: its absent cache prices follow Anthropic's rules.
  if (no_provider && NamesClaudeModel(id)) {
    price.provider = "anthropic";
    no_provider = false;
  }
  price.source = "litellm:" + as_of + " \"" + id + "\"";
  const bool anthropic = price.provider == "anthropic";
  const auto get = [&](const std::string& key) { return Field(entry, key, pointer); };
  auto input = get("input_cost_per_token");
  if (!input) return input.error();
  auto output = get("output_cost_per_token");
  if (!output) return output.error();
  if (!*input || !*output) {
    // Not priced per token (an image or audio model), or priced but without
    // one of the two prices a call needs: say which, never a guessed zero.
    bool priced = false;
    for (const auto& [key, value] : entry.items()) priced = priced || IsTokenPriceKey(key);
    if (!priced) return std::optional<ModelPrice>();
    SkippedPrice skipped{id, ""};
    if (!*input) skipped.missing = "input_cost_per_token";
    if (!*output) {
      skipped.missing +=
          (skipped.missing.empty() ? "" : " and ") + std::string("output_cost_per_token");
    }
    *skipped_out = std::move(skipped);
    return std::optional<ModelPrice>();
  }
  price.base.input = **input;
  price.base.output = **output;
  auto read = get("cache_read_input_token_cost");
  if (!read) return read.error();
  if (!*read) {
    read = get("input_cost_per_token_cache_hit");  // DeepSeek's name
    if (!read) return read.error();
  }
  auto write = get("cache_creation_input_token_cost");
  if (!write) return write.error();
  auto write_1h = get("cache_creation_input_token_cost_above_1hr");
  if (!write_1h) return write_1h.error();
  // A write price of 0 means "no write fee": the tokens still cost input.
  if (*write && **write == 0) write->reset();
  FillCachePricesByRule(anthropic, no_provider, *read, *write, *write_1h, &price.base);
  // Provider-specific multipliers: "fast" is Anthropic's fast mode.
  if (const auto it = entry.find("provider_specific_entry"); it != entry.end() && it->is_object()) {
    if (const auto fast = it->find("fast"); fast != it->end() && !fast->is_null()) {
      auto multiplier = ReadFastMultiplier(*fast);
      if (!multiplier) return multiplier.error().Within(pointer + "/provider_specific_entry/fast");
      price.fast_multiplier = *multiplier;
    }
    // "us": Anthropic's US-only inference (usage.inference_geo "us").
    if (const auto us = it->find("us"); us != it->end() && !us->is_null()) {
      auto multiplier = ReadFastMultiplier(*us);
      if (!multiplier) return multiplier.error().Within(pointer + "/provider_specific_entry/us");
      price.us_multiplier = *multiplier;
    }
  }

  // One web search: LiteLLM's search_context_cost_per_query, by context
  // size; Anthropic's is one price for all three, and a search of the
  // medium size is what a provider bills without one asked for.
  if (const auto it = entry.find("search_context_cost_per_query");
      it != entry.end() && it->is_object()) {
    if (const auto medium = it->find("search_context_size_medium"); medium != it->end()) {
      // A value out of range is no price listed (the provider's applies).
      if (auto fee = ReadWebSearchUsd(*medium)) price.web_search_pico_usd = *fee;
    }
  }

  // The context window: the longest prompt the provider takes.
  if (const auto it = entry.find("max_input_tokens");
      it != entry.end() && it->is_number_integer() && it->get<std::int64_t>() > 0 &&
      it->get<std::int64_t>() <= kMaxTokenCount) {
    price.max_input_tokens = it->get<Tokens>();
  }

  // The long-context tier: "<field>_above_<N>k_tokens".
  static const std::regex kTier("^input_cost_per_token_above_([0-9]+)k_tokens$");
  for (const auto& [key, value] : entry.items()) {
    std::smatch match;
    if (!value.is_number() || !std::regex_match(key, match, kTier)) continue;
    const std::string suffix = "_above_" + match[1].str() + "k_tokens";
    const std::string thousands_text = match[1].str();
    Tokens thousands = 0;
    const auto [end, ec] = std::from_chars(
        thousands_text.data(), thousands_text.data() + thousands_text.size(), thousands);
    if (ec != std::errc() || end != thousands_text.data() + thousands_text.size() ||
        thousands > kMaxTokenCount / 1000) {
      return Error(pointer + "/" + key + ": the tier's threshold is above 2^40 tokens");
    }
    price.long_context_threshold = thousands * 1000;
    auto long_input = get(key);
    auto long_output = get("output_cost_per_token" + suffix);
    auto long_read = get("cache_read_input_token_cost" + suffix);
    auto long_write = get("cache_creation_input_token_cost" + suffix);
    auto long_write_1h = get("cache_creation_input_token_cost_above_1hr" + suffix);
    for (const auto* r : {&long_input, &long_output, &long_read, &long_write, &long_write_1h}) {
      if (!*r) return r->error();
    }
    price.long_context.input = **long_input;
    price.long_context.output = long_output->value_or(price.base.output);
    if (!*long_write || **long_write == 0 || !*write) long_write->reset();
    FillCachePricesByRule(anthropic, no_provider,
                          long_read->has_value() ? *long_read : (anthropic ? std::nullopt : *read),
                          *long_write, *long_write_1h, &price.long_context);
    break;
  }
  return std::optional<ModelPrice>(std::move(price));
}

}  // namespace

bool NamesClaudeModel(std::string_view id) {
  std::string name(id.substr(id.rfind('/') == std::string_view::npos ? 0 : id.rfind('/') + 1));
  std::transform(name.begin(), name.end(), name.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return name.find("claude") != std::string::npos;
}

void FillCachePricesByRule(bool anthropic, bool no_provider,
                           const std::optional<PicoUsdPerToken>& read,
                           const std::optional<PicoUsdPerToken>& write_5m,
                           const std::optional<PicoUsdPerToken>& write_1h, TokenRates* rates) {
  const PicoUsdPerToken in = rates->input;
  rates->cache_read = read.value_or(anthropic ? in / 10 : in);
  rates->cache_write_5m = write_5m.value_or(anthropic ? in + in / 4 : in);
  rates->cache_write_1h =
      write_1h.value_or(anthropic || no_provider ? 2 * in : rates->cache_write_5m);
}

Result<double> ReadFastMultiplier(const Json& value) {
  if (!value.is_number() || !(value.get<double>() > 0) || !(value.get<double>() <= 1000)) {
    return Error("must be a number in (0, 1000], got " + Quote(value));
  }
  return value.get<double>();
}

Result<PriceSheet> ImportLiteLlmJson(const Json& doc, const std::string& name) {
  const std::string as_of = "imported";
  PriceSheet sheet(as_of, "LiteLLM model_prices_and_context_window.json from " + name);
  for (const auto& [id, entry] : doc.items()) {
    if (id == "sample_spec") continue;
    std::optional<SkippedPrice> skipped;
    auto price = ReadEntry(id, entry, name + "#/" + id, as_of, &skipped);
    if (!price) return price.error();
    if (skipped) sheet.AddSkipped(std::move(*skipped));
    if (!*price) continue;
    if (auto s = sheet.Add(std::move(**price)); !s) return s.error().Within(name);
  }
  if (sheet.models().empty() && sheet.skipped().empty()) {
    return Error(name +
                 ": no model with input_cost_per_token and output_cost_per_token "
                 "(neither a kvbill price sheet nor LiteLLM's JSON)");
  }
  return sheet;
}

Result<PriceSheet> ImportLiteLlmPrices(std::string_view text, const std::string& name) {
  auto json = ParseJson(text);
  if (!json) return json.error().Within(name);
  if (!json->is_object()) return Error(name + ": LiteLLM's price file must be a JSON object");
  return ImportLiteLlmJson(*json, name);
}

}  // namespace kvbill
