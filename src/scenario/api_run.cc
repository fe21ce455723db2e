#include "kvbill/scenario/api_run.h"

#include <functional>
#include <map>
#include <memory>

namespace kvbill {
namespace {

// Caching off: every prompt token is uncached input.
class NoCache : public ProviderCache {
 public:
  CallUsage Serve(Seconds /*now_s*/, std::span<const ContentPiece> pieces) override {
    CallUsage usage;
    for (const ContentPiece& p : pieces) usage.input += p.tokens;
    return usage;
  }
  void Seed(Seconds /*now_s*/, std::span<const ContentPiece> /*pieces*/,
            Tokens /*prefix_tokens*/) override {}
};

std::string Replaced(const std::string& id, const std::string& from, const std::string& to) {
  const std::size_t at = id.find(from);
  if (at == std::string::npos) return "";
  return id.substr(0, at) + to + id.substr(at + from.size());
}

// The provider cache of `provider` for `model` under `pricing`'s options.
Result<std::unique_ptr<ProviderCache>> MakeCache(const ScenarioPricing& pricing,
                                                 const std::string& provider,
                                                 const std::string& model) {
  if (!pricing.cache_enabled) return std::unique_ptr<ProviderCache>(std::make_unique<NoCache>());
  ProviderCacheOptions cache_options;
  cache_options.ttl_s = pricing.ttl_s;
  cache_options.min_cacheable_tokens = pricing.min_cacheable_tokens;
  cache_options.write_fee = pricing.write_fee;
  cache_options.explicit_cache = pricing.explicit_cache;
  cache_options.prefix_tokens = pricing.prefix_tokens;
  return MakeProviderCache(provider, model, cache_options);
}

}  // namespace

Result<ApiPricingRun> RunApiPricing(const ScenarioPricing& pricing, const PriceSheet& sheet,
                                    const std::vector<Task>& tasks,
                                    const std::vector<std::vector<Request>>& requests) {
  const ModelPrice* price = sheet.Find(pricing.model);
  if (price == nullptr) return Error("no price for model \"" + pricing.model + "\"");
  // One cache per sheet model, made on its first call; the scenario's model
  // first. Another model's calls use the scenario's provider rules when the
  // sheet gives that model the same provider as the scenario's model, else
  // its own provider's.
  std::map<std::string, std::unique_ptr<ProviderCache>, std::less<>> caches;
  auto made = MakeCache(pricing, pricing.provider, price->id);
  if (!made) return made.error();
  caches[price->id] = std::move(*made);
  const ApiModelLookup lookup = [&](const std::string& model) -> Result<ApiModel> {
    const ModelPrice* p = model.empty() || !pricing.per_call_models ? price : sheet.Find(model);
    if (p == nullptr) {
      return Error("no price for model \"" + model + "\" (the model the trace's call names)");
    }
    auto it = caches.find(p->id);
    if (it == caches.end()) {
      const std::string& provider = p->provider == price->provider ? pricing.provider : p->provider;
      auto cache = MakeCache(pricing, provider, p->id);
      if (!cache) return cache.error().Within("model \"" + p->id + "\"");
      it = caches.emplace(p->id, std::move(*cache)).first;
    }
    return ApiModel{p, it->second.get()};
  };
  ApiReplayOptions options;
  options.warm_start_from_recorded = pricing.cache_enabled && pricing.warm_start_from_recorded;
  options.one_hour_writes = pricing.provider == "anthropic" && pricing.ttl_s == 3600;
  // A call at its own model ran at its recorded speed; repriced at one
  // model for all, it is that model's standard call.
  options.fast_mode_from_usage = pricing.per_call_models;
  auto replay = ReplayApi(tasks, requests, lookup, options);
  if (!replay) return replay.error();
  ApiPricingRun run{*price, std::move(*replay)};
  for (const std::vector<Request>& task : requests) {
    run.requests += static_cast<std::int64_t>(task.size());
    for (const Request& r : task) {
      run.edited_requests += r.edited ? 1 : 0;
      run.placeholder_outputs += r.output_is_placeholder ? 1 : 0;
    }
  }
  return run;
}

std::vector<Money> CacheCreationShares(const ApiReplayOutcome& replay) {
  const auto n = static_cast<std::int64_t>(replay.tasks.size());
  std::vector<Money> shares(replay.tasks.size());
  if (n == 0) return shares;
  const std::int64_t total = replay.cache_creations.total.pico_usd;
  for (std::int64_t i = 0; i < n; ++i) {
    shares[static_cast<std::size_t>(i)].pico_usd = total / n + (i < total % n ? 1 : 0);
  }
  return shares;
}

std::vector<TaskMetrics> ApiTaskMetrics(const ApiReplayOutcome& replay) {
  std::vector<TaskMetrics> out;
  out.reserve(replay.tasks.size());
  const std::vector<Money> shares = CacheCreationShares(replay);
  for (std::size_t i = 0; i < replay.tasks.size(); ++i) {
    const ApiTaskOutcome& t = replay.tasks[i];
    TaskMetrics m;
    m.id = t.id;
    m.requests = t.requests;
    m.prompt_tokens = t.predicted.prompt();
    m.cached_tokens = t.predicted.cache_read;
    m.prefill_tokens = t.predicted.input + t.predicted.cache_write();
    m.output_tokens = t.predicted.output;
    m.cost_usd = Money{t.cost.pico_usd + shares[i].pico_usd}.usd();
    out.push_back(std::move(m));
  }
  return out;
}

RunSummary ApiRunSummary(const std::vector<TaskMetrics>& tasks, const ApiReplayOutcome& replay) {
  RunSummary s = SumTasks(tasks);
  s.cost_usd = replay.cost.usd();
  // The tasks' costs hold every charge (the calls and their shares of the
  // caches'): no idle, whatever the doubles' last bits say.
  s.idle_usd = 0;
  return s;
}

std::optional<std::string> CheaperTier(const PriceSheet& sheet, const std::string& model_id) {
  const ModelPrice* self = sheet.Find(model_id);
  if (self == nullptr) return std::nullopt;
  const std::string& id = self->id;
  const bool opus = id.find("opus") != std::string::npos;
  const bool sonnet = id.find("sonnet") != std::string::npos;
  const std::string candidates[] = {Replaced(id, "opus", "sonnet"),
                                    Replaced(id, "sonnet", "haiku"),
                                    opus ? "claude-sonnet-4-5" : "",
                                    sonnet ? "claude-haiku-4-5" : "",
                                    id + "-mini",
                                    Replaced(id, "-codex", "-mini"),
                                    Replaced(id, "-mini", "-nano"),
                                    Replaced(id, "-pro", "-flash"),
                                    Replaced(id, "-flash", "-flash-lite")};
  for (const std::string& c : candidates) {
    if (c.empty()) continue;
    const ModelPrice* p = sheet.Find(c);
    if (p != nullptr && p->id != id && p->provider == self->provider &&
        p->base.input < self->base.input) {
      return p->id;
    }
  }
  return std::nullopt;
}

}  // namespace kvbill
