#include "kvbill/scenario/levers.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "kvbill/cost/price_sheet.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/scenario/sweep.h"

namespace kvbill {

namespace {

void AddContextLevers(const Scenario& s, std::vector<Lever>* levers) {
  if (s.context_policy.kind != "drop_tool_results") {
    levers->push_back(
        {"drop tool results older than 3 turns (50-token stub)",
         {{"/context_policy",
           R"({"kind": "drop_tool_results", "older_than_turns": 3, "stub_tokens": 50})"}}});
  }
  if (s.context_policy.kind != "summarise") {
    levers->push_back({"summarise past 64k tokens (2k summary, keep 16k)",
                       {{"/context_policy", R"({"kind": "summarise", "threshold_tokens": 65536,
                                  "summary_tokens": 2048, "keep_recent_tokens": 16384})"}}});
  }
}

std::vector<Lever> ApiLevers(const Scenario& s) {
  const ScenarioPricing& p = *s.pricing;
  std::vector<Lever> levers;
  if (p.provider == "anthropic" && p.cache_enabled && p.ttl_s != 3600) {
    levers.push_back({"1-hour cache writes", {{"/pricing/cache/ttl_s", "3600"}}});
  }
  levers.push_back({p.cache_enabled ? "caching off" : "caching on",
                    {{"/pricing/cache/enabled", p.cache_enabled ? "false" : "true"}}});
  AddContextLevers(s, &levers);
  if (auto sheet = BundledPriceSheet()) {
    if (auto cheaper = CheaperTier(*sheet, p.model)) {
      levers.push_back(
          {"model " + *cheaper + " (list prices and cache rules)",
           {{"/pricing/model", "\"" + *cheaper + "\""}, {"/pricing/per_call_models", "false"}}});
    }
  }
  return levers;
}

}  // namespace

std::vector<Lever> Levers(const Scenario& s) {
  if (s.pricing) return ApiLevers(s);
  std::vector<Lever> levers;
  auto kv = ParseElementFormat(s.kv_format);
  auto gpu = LookupGpu(s.deployment.gpu);
  // A KV format lever, or why it cannot apply on this GPU.
  auto kv_lever = [&](const std::string& format) {
    Lever lever{format + " KV cache", {{"/kv_format", "\"" + format + "\""}}, ""};
    auto f = ParseElementFormat(format);
    if (gpu && f) {
      if (auto runs = CheckGpuRuns(*gpu, FormatRole::kKvCache, *f); !runs) {
        lever.not_applicable = runs.error().message();
      }
    }
    levers.push_back(std::move(lever));
  };
  if (kv && kv->element_bits > 8) kv_lever("fp8");
  if (kv && kv->element_bits > 4) kv_lever("nvfp4");
  levers.push_back({s.prefix_cache.enabled ? "prefix caching off" : "prefix caching on",
                    {{"/prefix_cache/enabled", s.prefix_cache.enabled ? "false" : "true"}}});
  AddContextLevers(s, &levers);
  std::vector<ConfigOverride> overrides;
  for (const auto& [k, v] : s.model.set) overrides.push_back(ConfigOverride{k, v});
  auto model = LoadModel(s.model.name, overrides);
  if (model) {
    const std::int64_t heads = model->MaxKvHeads();
    if (heads >= 2) {
      levers.push_back({"architecture: " + std::to_string(heads / 2) + " KV heads instead of " +
                            std::to_string(heads),
                        {{"/model/set/num_key_value_heads", std::to_string(heads / 2)}}});
    }
    if (model->CountLayers(LayerKind::kLatentAttention) == 0 && heads > 0) {
      std::int64_t head_dim = 0;
      for (const LayerShape& l : model->layers) head_dim = std::max(head_dim, l.qk_head_dim);
      levers.push_back({"architecture: latent KV cache (MLA, 512 + 64 per layer)",
                        {{"/model/set/kv_lora_rank", "512"},
                         {"/model/set/qk_rope_head_dim", "64"},
                         {"/model/set/qk_nope_head_dim", std::to_string(head_dim)},
                         {"/model/set/v_head_dim", std::to_string(head_dim)}}});
    }
  }
  return levers;
}

Result<std::string> ApplyLever(const std::string& scenario_text, const Lever& lever) {
  std::string text = scenario_text;
  for (const auto& [pointer, value] : lever.settings) {
    auto edited = WithSetting(text, pointer, value);
    if (!edited) return edited.error();
    text = std::move(*edited);
  }
  return text;
}

std::vector<LeverOutcome> RunLevers(const std::string& scenario_text, const std::string& source,
                                    const std::vector<Lever>& levers, int jobs,
                                    WorkloadCache* workloads) {
  std::vector<LeverOutcome> outcomes;
  for (const Lever& l : levers) {
    outcomes.push_back(LeverOutcome{
        l, std::nullopt, l.not_applicable.empty() ? "" : "not applicable: " + l.not_applicable});
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < outcomes.size(); i = next++) {
      LeverOutcome& o = outcomes[i];
      if (!o.lever.not_applicable.empty()) continue;
      auto variant = ApplyLever(scenario_text, o.lever);
      if (!variant) {
        o.error = variant.error().message();
        continue;
      }
      auto scenario = ParseScenario(*variant, source);
      if (!scenario) {
        o.error = scenario.error().message();
        continue;
      }
      auto run = workloads != nullptr ? RunScenario(*scenario, *workloads) : RunScenario(*scenario);
      if (run) {
        o.run = std::move(*run);
      } else {
        o.error = run.error().message();
      }
    }
  };
  std::vector<std::thread> pool;
  const int threads = std::min(std::max(jobs, 1), static_cast<int>(outcomes.size()));
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return outcomes;
}

}  // namespace kvbill
