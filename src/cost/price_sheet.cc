// The price sheet: kvbill's own format, model-id resolution and --price
// overrides (docs/billing.md#price-sheet). LiteLLM's format is in
// litellm_prices.cc.
#include "kvbill/cost/price_sheet.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "cost/price_json.h"
#include "kvbill/util/embedded.h"
#include "trace/json_fields.h"

namespace kvbill {
namespace {

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// The id without a trailing "-YYYYMMDD" or "-YYYY-MM-DD", or nullopt.
std::optional<std::string> WithoutDate(std::string_view id) {
  if (id.size() > 9 && id[id.size() - 9] == '-' && IsDigits(id.substr(id.size() - 8))) {
    return std::string(id.substr(0, id.size() - 9));
  }
  if (id.size() > 11 && id[id.size() - 11] == '-' && IsDigits(id.substr(id.size() - 10, 4)) &&
      id[id.size() - 6] == '-' && IsDigits(id.substr(id.size() - 5, 2)) &&
      id[id.size() - 3] == '-' && IsDigits(id.substr(id.size() - 2))) {
    return std::string(id.substr(0, id.size() - 11));
  }
  return std::nullopt;
}

Result<TokenRates> ReadRates(const Json& object, const std::string& pointer) {
  TokenRates rates;
  const std::pair<const char*, PicoUsdPerToken*> fields[] = {
      {"input", &rates.input},
      {"output", &rates.output},
      {"cache_read", &rates.cache_read},
      {"cache_write_5m", &rates.cache_write_5m},
      {"cache_write_1h", &rates.cache_write_1h}};
  for (const auto& [key, field] : fields) {
    const auto it = object.find(key);
    if (it == object.end()) return Error(pointer + "/" + key + ": missing");
    if (!it->is_number())
      return Error(pointer + "/" + key + ": must be a number, got " + Quote(*it));
    auto price = PriceFromUsdPerMtok(it->get<double>());
    if (!price) return price.error().Within(pointer + "/" + key);
    *field = *price;
  }
  return rates;
}

Result<std::string> ReadText(const Json& object, const char* key, const std::string& pointer,
                             bool required) {
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) return Error(pointer + "/" + key + ": missing");
    return std::string();
  }
  if (!it->is_string()) return Error(pointer + "/" + key + ": must be a string, got " + Quote(*it));
  return it->get<std::string>();
}

// An error for the first key of `object` not in `known` (a typo such as
// "inputt" would otherwise leave the price it meant unread).
Status OnlyKnownKeys(const Json& object, std::initializer_list<std::string_view> known,
                     const std::string& pointer) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (std::string_view k : known) list += std::string(list.empty() ? "" : ", ") + std::string(k);
    return Error(pointer + "/" + key + ": unknown key (known: " + list + ")");
  }
  return OkStatus();
}

Result<ModelPrice> ReadModel(const std::string& id, const Json& object,
                             const std::string& pointer) {
  if (!object.is_object()) return Error(pointer + ": must be an object");
  if (auto s = OnlyKnownKeys(
          object,
          {"provider", "aliases", "input", "output", "cache_read", "cache_write_5m",
           "cache_write_1h", "cache_storage_per_hour", "fast_multiplier", "us_multiplier",
           "long_context", "max_input_tokens", "web_search_usd", "source", "notes"},
          pointer);
      !s) {
    return s.error();
  }
  ModelPrice price;
  price.id = id;
  auto provider = ReadText(object, "provider", pointer, true);
  if (!provider) return provider.error();
  price.provider = *provider;
  auto source = ReadText(object, "source", pointer, true);
  if (!source) return source.error();
  price.source = *source;
  auto notes = ReadText(object, "notes", pointer, false);
  if (!notes) return notes.error();
  price.notes = *notes;
  if (const auto it = object.find("aliases"); it != object.end()) {
    if (!it->is_array()) return Error(pointer + "/aliases: must be an array of strings");
    for (const Json& alias : *it) {
      if (!alias.is_string()) return Error(pointer + "/aliases: must be an array of strings");
      price.aliases.push_back(alias.get<std::string>());
    }
  }
  auto base = ReadRates(object, pointer);
  if (!base) return base.error();
  price.base = *base;
  if (const auto it = object.find("cache_storage_per_hour"); it != object.end()) {
    const std::string field = pointer + "/cache_storage_per_hour";
    if (!it->is_number()) return Error(field + ": must be a number, got " + Quote(*it));
    auto storage = PriceFromUsdPerMtok(it->get<double>());
    if (!storage) return storage.error().Within(field);
    price.cache_storage_per_hour = *storage;
  }
  if (const auto it = object.find("fast_multiplier"); it != object.end()) {
    auto multiplier = ReadFastMultiplier(*it);
    if (!multiplier) return multiplier.error().Within(pointer + "/fast_multiplier");
    price.fast_multiplier = *multiplier;
  }
  if (const auto it = object.find("us_multiplier"); it != object.end()) {
    auto multiplier = ReadFastMultiplier(*it);
    if (!multiplier) return multiplier.error().Within(pointer + "/us_multiplier");
    price.us_multiplier = *multiplier;
  }
  if (const auto it = object.find("web_search_usd"); it != object.end()) {
    auto fee = ReadWebSearchUsd(*it);
    if (!fee) return fee.error().Within(pointer + "/web_search_usd");
    price.web_search_pico_usd = *fee;
  }
  if (const auto it = object.find("max_input_tokens"); it != object.end()) {
    auto limit = GetTokens(object, "max_input_tokens");
    if (!limit) return limit.error().Within(pointer);
    if (*limit <= 0) return Error(pointer + "/max_input_tokens: must be positive");
    price.max_input_tokens = *limit;
  }
  if (const auto it = object.find("long_context"); it != object.end()) {
    const std::string tier = pointer + "/long_context";
    if (!it->is_object()) return Error(tier + ": must be an object");
    if (auto s = OnlyKnownKeys(*it,
                               {"threshold_tokens", "input", "output", "cache_read",
                                "cache_write_5m", "cache_write_1h"},
                               tier);
        !s) {
      return s.error();
    }
    auto threshold = GetTokens(*it, "threshold_tokens");
    if (!threshold) return threshold.error().Within(tier);
    if (*threshold <= 0) return Error(tier + "/threshold_tokens: must be positive");
    price.long_context_threshold = *threshold;
    auto rates = ReadRates(*it, tier);
    if (!rates) return rates.error();
    price.long_context = *rates;
  }
  return price;
}

Result<PriceSheet> ParseKvbillSheet(const Json& doc, const std::string& name) {
  const std::string root = name + "#";
  if (doc.value("kvbill_prices", Json()) != 1) {
    return Error(root + "/kvbill_prices: unsupported version " + Quote(doc["kvbill_prices"]));
  }
  if (auto s = OnlyKnownKeys(
          doc, {"kvbill_prices", "as_of", "currency", "unit", "source", "models"}, root);
      !s) {
    return s.error();
  }
  // Prices are read as US dollars per million tokens: a sheet that says
  // otherwise would be priced wrong by its factor.
  auto currency = ReadText(doc, "currency", root, false);
  if (!currency) return currency.error();
  if (!currency->empty() && *currency != "USD") {
    return Error(root + "/currency: kvbill prices in USD, got " + Quote(doc["currency"]));
  }
  auto unit = ReadText(doc, "unit", root, false);
  if (!unit) return unit.error();
  if (!unit->empty() && *unit != "USD per million tokens") {
    return Error(root + "/unit: kvbill reads prices as \"USD per million tokens\", got " +
                 Quote(doc["unit"]));
  }
  auto as_of = ReadText(doc, "as_of", root, true);
  if (!as_of) return as_of.error();
  auto source = ReadText(doc, "source", root, true);
  if (!source) return source.error();
  PriceSheet sheet(*as_of, *source);
  const auto models = doc.find("models");
  if (models == doc.end() || !models->is_object()) return Error(root + "/models: missing object");
  for (const auto& [id, entry] : models->items()) {
    auto price = ReadModel(id, entry, root + "/models/" + id);
    if (!price) return price.error();
    if (auto s = sheet.Add(std::move(*price)); !s) return s.error().Within(name);
  }
  return sheet;
}

// One parsed --price field.
struct Override {
  std::string field;
  double value = 0;
};

Status SetField(ModelPrice* price, const Override& o) {
  if (o.field == "long_context_threshold") {
    if (o.value < 0 || o.value != static_cast<double>(static_cast<Tokens>(o.value))) {
      return Error("long_context_threshold must be a whole number of tokens");
    }
    price->long_context_threshold = static_cast<Tokens>(o.value);
    return OkStatus();
  }
  if (o.field == "max_input_tokens") {
    if (o.value < 0 || o.value != static_cast<double>(static_cast<Tokens>(o.value))) {
      return Error("max_input_tokens must be a whole number of tokens");
    }
    price->max_input_tokens = static_cast<Tokens>(o.value);
    return OkStatus();
  }
  if (o.field == "web_search") {
    auto fee = ReadWebSearchUsd(Json(o.value));
    if (!fee) return fee.error().Within("web_search");
    price->web_search_pico_usd = *fee;
    return OkStatus();
  }
  if (o.field == "fast_multiplier" || o.field == "us_multiplier") {
    double* field = o.field == "fast_multiplier" ? &price->fast_multiplier : &price->us_multiplier;
    if (o.value == 0) {
      *field = 0;
      return OkStatus();
    }
    auto multiplier = ReadFastMultiplier(Json(o.value));
    if (!multiplier) return multiplier.error().Within(o.field);
    *field = *multiplier;
    return OkStatus();
  }
  auto pico = PriceFromUsdPerMtok(o.value);
  if (!pico) return pico.error().Within(o.field);
  if (o.field == "cache_storage_per_hour") {
    price->cache_storage_per_hour = *pico;
    return OkStatus();
  }
  const bool is_long = o.field.rfind("long_", 0) == 0;
  TokenRates& rates = is_long ? price->long_context : price->base;
  const std::string name = is_long ? o.field.substr(5) : o.field;
  if (name == "input") {
    rates.input = *pico;
  } else if (name == "output") {
    rates.output = *pico;
  } else if (name == "cache_read") {
    rates.cache_read = *pico;
  } else if (name == "cache_write_5m") {
    rates.cache_write_5m = *pico;
  } else if (name == "cache_write_1h") {
    rates.cache_write_1h = *pico;
  } else {
    return Error(
        "unknown field \"" + o.field +
        "\" (input, output, cache_read, cache_write_5m, cache_write_1h, "
        "cache_storage_per_hour, long_context_threshold, long_input, long_output, long_cache_read, "
        "long_cache_write_5m, long_cache_write_1h, fast_multiplier, us_multiplier, "
        "max_input_tokens, web_search)");
  }
  return OkStatus();
}

Result<std::pair<std::string, std::vector<Override>>> ParseOverride(const std::string& spec) {
  const std::size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0) return Error("expected MODEL:field=value");
  std::pair<std::string, std::vector<Override>> parsed{spec.substr(0, colon), {}};
  std::string_view rest = std::string_view(spec).substr(colon + 1);
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string item(rest.substr(0, comma));
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return Error("expected field=value, got \"" + item + "\"");
    const std::string value = item.substr(eq + 1);
    const std::string field = item.substr(0, eq);
    const std::optional<double> number = ParseDecimal(value);
    if (!number) return Error(field + ": \"" + value + "\" is not a decimal number");
    for (const Override& earlier : parsed.second) {
      if (earlier.field == field) return Error(field + ": given twice");
    }
    parsed.second.push_back(Override{field, *number});
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return parsed;
}

}  // namespace

Status PriceSheet::Add(ModelPrice price) {
  std::vector<std::string> names = price.aliases;
  names.insert(names.begin(), price.id);
  for (const std::string& n : names) {
    if (const auto it = index_.find(n); it != index_.end()) {
      return Error("model \"" + price.id + "\": id \"" + n + "\" already used by \"" +
                   models_[it->second].id + "\"");
    }
  }
  for (const std::string& n : names) index_.emplace(n, models_.size());
  models_.push_back(std::move(price));
  return OkStatus();
}

const ModelPrice* PriceSheet::FindExact(std::string_view id) const {
  const auto it = index_.find(id);
  return it == index_.end() ? nullptr : &models_[it->second];
}

ModelPrice* PriceSheet::FindById(std::string_view id) {
  return const_cast<ModelPrice*>(std::as_const(*this).FindExact(id));
}

namespace {

// Resolves `model` as PriceSheet::Find documents, with `exact` looking one
// id up; returns the first hit or nullptr.
template <class Exact>
auto Resolve(std::string_view model, const Exact& exact) -> decltype(exact(model)) {
  std::string id(model);
  if (const auto p = exact(id)) return p;
  std::transform(id.begin(), id.end(), id.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  if (const auto p = exact(id)) return p;
  if (const std::size_t slash = id.rfind('/'); slash != std::string::npos) {
    id = id.substr(slash + 1);
    if (const auto p = exact(id)) return p;
  }
  if (const std::size_t at = id.rfind('@'); at != std::string::npos) {
    id[at] = '-';
    if (const auto p = exact(id)) return p;
  }
  if (auto undated = WithoutDate(id)) return exact(*undated);
  return nullptr;
}

}  // namespace

const ModelPrice* PriceSheet::Find(std::string_view model) const {
  return Resolve(model, [this](std::string_view id) { return FindExact(id); });
}

const SkippedPrice* PriceSheet::FindSkipped(std::string_view model) const {
  if (skipped_.empty()) return nullptr;
  return Resolve(model, [this](std::string_view id) -> const SkippedPrice* {
    for (const SkippedPrice& s : skipped_) {
      if (s.id == id) return &s;
    }
    return nullptr;
  });
}

namespace {

// Every rate of both tiers times `multiplier`, to the nearest pico-dollar.
// Rates are at most 10^14 pico-dollars per token and a multiplier at most
// 1000, but fast mode and US-only stack: a product past 10^15 (a thousand
// dollars a token) is an error, not an overflow.
Result<ModelPrice> Scaled(const ModelPrice& price, double multiplier, const char* what) {
  constexpr double kMaxRate = 1e15;
  ModelPrice scaled = price;
  for (TokenRates* rates : {&scaled.base, &scaled.long_context}) {
    for (PicoUsdPerToken* rate : {&rates->input, &rates->output, &rates->cache_read,
                                  &rates->cache_write_5m, &rates->cache_write_1h}) {
      const double product = static_cast<double>(*rate) * multiplier;
      if (!(product <= kMaxRate)) {
        return Error("model \"" + price.id + "\": its " + what +
                     " rate is above $1,000 a token (a multiplier too large)");
      }
      *rate = std::llround(product);
    }
  }
  return scaled;
}

}  // namespace

Result<ModelPrice> FastModePrice(const ModelPrice& price) {
  if (!(price.fast_multiplier > 0)) {
    return Error("model \"" + price.id + "\" has no fast-mode price (fast_multiplier)");
  }
  return Scaled(price, price.fast_multiplier, "fast-mode");
}

Result<ModelPrice> UsOnlyPrice(const ModelPrice& price) {
  if (!(price.us_multiplier > 0)) return price;
  return Scaled(price, price.us_multiplier, "US-only");
}

Result<PriceSheet> ParsePriceSheet(std::string_view text, const std::string& name) {
  auto json = ParseJson(text);
  if (!json) return json.error().Within(name);
  if (!json->is_object()) return Error(name + ": a price sheet must be a JSON object");
  if (json->contains("kvbill_prices")) return ParseKvbillSheet(*json, name);
  return ImportLiteLlmJson(*json, name);
}

Result<PriceSheet> BundledPriceSheet() {
  const auto text = EmbeddedFile("prices.json");
  if (!text) return Error("prices.json is not embedded in this build");
  return ParsePriceSheet(*text, "prices.json");
}

Status ApplyPriceOverrides(const std::vector<std::string>& specs, PriceSheet* sheet) {
  // Overrides of models the sheet lacks are collected first: such a model
  // needs input and output before it can be added.
  std::vector<std::pair<std::string, std::vector<Override>>> added;
  for (const std::string& spec : specs) {
    const auto fail = [&](const Error& e) { return e.Within("--price \"" + spec + "\""); };
    auto parsed = ParseOverride(spec);
    if (!parsed) return fail(parsed.error());
    // Named references, not a structured binding: clang 14 cannot capture one.
    const std::string& model = parsed->first;
    const std::vector<Override>& overrides = parsed->second;
    ModelPrice* price = nullptr;
    if (const ModelPrice* found = sheet->Find(model)) price = sheet->FindById(found->id);
    if (price == nullptr) {
      auto it =
          std::find_if(added.begin(), added.end(), [&](const auto& a) { return a.first == model; });
      if (it == added.end()) it = added.insert(added.end(), {model, {}});
      for (const Override& o : overrides) {
        ModelPrice probe;
        if (auto s = SetField(&probe, o); !s) return fail(s.error());
        it->second.push_back(o);
      }
      continue;
    }
    for (const Override& o : overrides) {
      if (auto s = SetField(price, o); !s) return fail(s.error());
    }
    price->source += "; overridden by --price";
  }
  for (const auto& entry : added) {
    const std::string& model = entry.first;
    const std::vector<Override>& overrides = entry.second;
    const auto has = [&](const char* field) {
      return std::any_of(overrides.begin(), overrides.end(),
                         [&](const Override& o) { return o.field == field; });
    };
    if (!has("input") || !has("output")) {
      return Error("--price: model \"" + model +
                   "\" is not in the price sheet; give at least its input and output prices");
    }
    ModelPrice price;
    price.id = model;
    const bool claude = NamesClaudeModel(model);
    price.provider = claude ? "anthropic" : "custom";
    price.source = "--price";
    for (const Override& o : overrides) {
      if (o.field == "input") (void)SetField(&price, o);
    }
    FillCachePricesByRule(claude, !claude, std::nullopt, std::nullopt, std::nullopt, &price.base);
    for (const Override& o : overrides) (void)SetField(&price, o);
    if (auto s = sheet->Add(std::move(price)); !s) return s.error().Within("--price");
  }
  for (const ModelPrice& price : sheet->models()) {
    const bool overridden = price.source.find("--price") != std::string::npos;
    if (overridden && price.long_context_threshold > 0 && price.long_context == TokenRates{}) {
      return Error("--price: model \"" + price.id +
                   "\" has a long_context_threshold but no long-context prices (long_input, ...)");
    }
  }
  return OkStatus();
}

Result<std::int64_t> ReadWebSearchUsd(const Json& value) {
  if (!value.is_number()) {
    return Error("must be a number of dollars per search, got " + Quote(value));
  }
  const double usd = value.get<double>();
  if (!(usd >= 0 && usd <= 1000)) {
    return Error("must be between 0 and 1,000 dollars per search, got " + Quote(value));
  }
  return static_cast<std::int64_t>(std::llround(usd * static_cast<double>(kPicoUsdPerUsd)));
}

Money WebSearchFee(const ModelPrice& price) {
  if (price.web_search_pico_usd) return Money{*price.web_search_pico_usd};
  if (price.provider == "anthropic") return Money{kAnthropicWebSearchPicoUsd};
  return Money{};
}

}  // namespace kvbill
