#include "kvbill/scenario/levers.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "kvbill/cost/price_sheet.h"
#include "kvbill/cost/speculative.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/hardware/kv_blocks.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/scenario/workload.h"
#include "scenario/scenario_model.h"

namespace kvbill {

namespace {

// `limit`: the longest request the deployment serves (max_model_len), 0 when
// not known (API models).
void AddContextLevers(const Scenario& s, Tokens limit, std::vector<Lever>* levers) {
  // A lever sets the whole context policy: over a baseline with a policy of
  // its own it replaces that policy, and its name says so.
  const std::string instead =
      s.context_policy.kind == "keep_all" ? "" : " instead of " + s.context_policy.kind;
  // The baseline's own policy is weighed by taking it out, as prefix
  // caching is; the lever of its own kind is left out (it would weigh one
  // setting against another).
  if (s.context_policy.kind != "keep_all") {
    levers->push_back({s.context_policy.kind + " off (keep every context)",
                       {{"/context_policy", R"({"kind": "keep_all"})"}},
                       "",
                       s.context_policy.kind + " (the baseline's context policy)",
                       "the baseline's " + s.context_policy.kind +
                           " changes no prompt of the trace (policy_no_effect)"});
  }
  if (s.context_policy.kind != "drop_tool_results") {
    levers->push_back(
        {"drop tool results older than 3 turns (50-token stub)" + instead,
         {{"/context_policy",
           R"({"kind": "drop_tool_results", "older_than_turns": 3, "stub_tokens": 50})"}},
         "",
         "",
         "no tool results older than 3 turns to drop (the trace has no tool_result spans "
         "there)"});
  }
  if (s.context_policy.kind != "summarise") {
    // Past 64k tokens, keeping the last 16k; under a max_model_len below
    // 128k, past half of it (in whole k) keeping a quarter of that, so the
    // summarised prompt and the turns that grow it again stay under the
    // limit (a 64k threshold would never act on a 40,960-token model).
    constexpr Tokens kK = 1024;
    const Tokens threshold =
        limit > 0 ? std::clamp<Tokens>(limit / 2 / kK * kK, kK, 64 * kK) : 64 * kK;
    const Tokens keep = std::min<Tokens>(16 * kK, threshold / 4);
    const auto k = [](Tokens t) {
      return t % 1024 == 0 ? std::to_string(t / 1024) + "k" : std::to_string(t);
    };
    levers->push_back(
        {"summarise past " + k(threshold) + " tokens (2k summary, keep " + k(keep) + ")" + instead,
         {{"/context_policy",
           R"({"kind": "summarise", "threshold_tokens": )" + std::to_string(threshold) +
               R"(, "summary_tokens": 2048, "keep_recent_tokens": )" + std::to_string(keep) + "}"}},
         "",
         "",
         // RunLevers says why when the plans are the baseline's (NoEffectReason).
         "summarise shortens no prompt"});
  }
}

std::vector<Lever> ApiLevers(const Scenario& s) {
  const ScenarioPricing& p = *s.pricing;
  std::vector<Lever> levers;
  if (p.provider == "anthropic" && p.cache_enabled && p.ttl_s != 3600) {
    levers.push_back({"1-hour cache writes", {{"/pricing/cache/ttl_s", "3600"}}});
  }
  levers.push_back({p.cache_enabled ? "caching off" : "caching on",
                    {{"/pricing/cache/enabled", p.cache_enabled ? "false" : "true"}},
                    "",
                    p.cache_enabled ? "caching" : ""});
  AddContextLevers(s, 0, &levers);
  if (auto sheet = BundledPriceSheet()) {
    if (auto cheaper = CheaperTier(*sheet, p.model)) {
      levers.push_back(
          {"model " + *cheaper + " (list prices and cache rules)",
           {{"/pricing/model", "\"" + *cheaper + "\""}, {"/pricing/per_call_models", "false"}}});
    }
  }
  return levers;
}

// What SamePlans read of the trace's recorded prompts (PromptTokens), over
// the threshold of `b`'s context policy, for saying why a summarise lever
// changed nothing (NoEffectReason). Complete when SamePlans returns true.
struct PromptFacts {
  std::int64_t multi_turn_tasks = 0;  // tasks of more than one turn
  std::int64_t first_over = 0;        // prompts over the threshold on a task's first turn
  std::int64_t later_over = 0;        // ... on a later turn
};

// True when the two scenarios' context policies plan the same prompts for
// every task of `a`'s trace (request counts and prompt lengths); errors: the
// trace's or a policy's.
Result<bool> SamePlans(const Scenario& a, const Scenario& b, PromptFacts* facts) {
  auto pa = MakeContextPolicy(a.context_policy);
  if (!pa) return pa.error();
  auto pb = MakeContextPolicy(b.context_policy);
  if (!pb) return pb.error();
  auto tasks = TaskSource::Open(a);
  if (!tasks) return tasks.error();
  Task task;
  while (true) {
    auto more = (*tasks)->Next(&task);
    if (!more) return more.error();
    if (!*more) return true;
    const std::vector<Tokens> prompts = PromptTokens(task);
    facts->multi_turn_tasks += prompts.size() > 1 ? 1 : 0;
    for (std::size_t k = 0; k < prompts.size(); ++k) {
      if (prompts[k] <= b.context_policy.threshold_tokens) continue;
      (k == 0 ? facts->first_over : facts->later_over) += 1;
    }
    const std::vector<Request> x = (*pa)->Plan(task), y = (*pb)->Plan(task);
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i].PromptTokens() != y[i].PromptTokens()) return false;
    }
  }
}

// Why a context-policy lever whose variant `v` plans what the baseline
// plans changes nothing, from the trace's facts: summarise acts only at a
// turn after a task's first whose prompt passes its threshold (it summarises
// the turns before), and only when more than keep_recent_tokens +
// summary_tokens follow the leading system and tools spans; the reason says
// which the trace lacks. Other levers: their own no_effect.
std::string NoEffectReason(const Lever& lever, const Scenario& v, const PromptFacts& f) {
  if (v.context_policy.kind != "summarise") return lever.no_effect;
  const ContextPolicyParams& p = v.context_policy;
  const std::string threshold = FormatWithSeparators(p.threshold_tokens) + " tokens";
  const std::int64_t over = f.first_over + f.later_over;
  if (over == 0) return "no prompt passes " + threshold;
  // "47 prompts pass 65,536 tokens", "1 first-turn prompt passes ...".
  const auto passing = [&](std::int64_t n, const std::string& adjective) {
    return FormatWithSeparators(n) + (adjective.empty() ? "" : " " + adjective) +
           (n == 1 ? " prompt passes " : " prompts pass ") + threshold;
  };
  if (f.multi_turn_tasks == 0) {
    return "every task has a single turn, and summarise acts only before a later turn (" +
           passing(over, "") + ")";
  }
  if (f.later_over == 0) {
    return "no prompt after a task's first turn passes " + threshold +
           ", and summarise acts only before a later turn (" + passing(f.first_over, "first-turn") +
           ")";
  }
  return "no prompt past " + threshold + " has more than " +
         FormatWithSeparators(p.keep_recent_tokens + p.summary_tokens) +
         " tokens after its leading system and tools spans (the " +
         FormatWithSeparators(p.keep_recent_tokens) + " it keeps and the " +
         FormatWithSeparators(p.summary_tokens) + "-token summary): it shortens none";
}

// Requests a run served, and those it refused or never sent over the
// model's limit (an API replay refuses none: it warns, context_limit).
struct Served {
  std::int64_t served = 0;
  std::int64_t cut = 0;
  std::int64_t edited = 0;  // served prompts the context policy changed
};
Served ServedOf(const ScenarioOutcome& o) {
  if (o.api) return {o.summary.requests, 0, o.api->edited_requests};
  return {o.summary.requests, o.result.rejected_requests + o.result.unsent_requests,
          o.result.edited_requests};
}

// The rules that keep a lever from being weighed on runs that measured
// nothing or different work (RunLevers). outcomes[0] is the baseline.
void WeighAgainstBaseline(std::vector<LeverOutcome>* outcomes) {
  if (outcomes->empty() || !(*outcomes)[0].run) return;
  const Served base = ServedOf(*(*outcomes)[0].run);
  for (std::size_t i = 1; i < outcomes->size(); ++i) {
    LeverOutcome& o = (*outcomes)[i];
    if (!o.run) continue;
    const Served variant = ServedOf(*o.run);
    auto not_applicable = [&](const std::string& why) {
      o.lever.not_applicable = why;
      o.error = "not applicable: " + why;
      o.run.reset();
      o.warnings.clear();
    };
    if (base.served == 0) {
      not_applicable(
          "the baseline served no request (every task's first request is over the model's "
          "limit, context_limit): nothing was measured to weigh a lever against");
    } else if (variant.served == 0) {
      not_applicable("the variant served no request (context_limit)");
    } else if (!o.lever.no_effect.empty() && o.lever.removes.empty() && variant.edited == 0) {
      // The policy changes only prompts of requests never sent (after one
      // refused over the model's limit): the run is keep_all's.
      not_applicable(o.lever.no_effect + " among the requests served");
    } else if ((base.cut > 0 || variant.cut > 0) && base.served != variant.served) {
      o.not_comparable =
          "tasks cut short at the model's limit (context_limit): the baseline served " +
          FormatWithSeparators(base.served) + " requests, this variant " +
          FormatWithSeparators(variant.served) +
          ", so their costs per task are of different amounts of work";
    }
  }
}

}  // namespace

std::vector<Lever> Levers(const Scenario& s) {
  if (s.pricing) return ApiLevers(s);
  std::vector<Lever> levers;
  auto kv = ParseElementFormat(s.kv_format);
  auto gpu = LookupGpu(s.deployment.gpu);
  auto model = LoadScenarioModel(s);
  // A KV format lever, or why it cannot apply on this GPU, under this
  // engine, for this model.
  auto kv_lever = [&](const std::string& format) {
    Lever lever{format + " KV cache", {{"/kv_format", "\"" + format + "\""}}, ""};
    auto f = ParseElementFormat(format);
    if (gpu && f) {
      if (auto runs = CheckGpuRuns(*gpu, FormatRole::kKvCache, *f); !runs) {
        lever.not_applicable = runs.error().message();
      }
    }
    if (f && model && lever.not_applicable.empty()) {
      lever.not_applicable = EngineKvProblem(s.deployment.engine, *f, *model);
    }
    levers.push_back(std::move(lever));
  };
  if (kv && kv->element_bits > 8) kv_lever("fp8");
  if (kv && kv->element_bits > 4) kv_lever("nvfp4");
  // A baseline quantized already: its format is weighed by turning it off
  // (bf16, which every engine stores on every GPU), as prefix caching is.
  if (kv && kv->element_bits <= 8) {
    levers.push_back(Lever{"bf16 KV cache (the baseline's " + s.kv_format + " off)",
                           {{"/kv_format", "\"bf16\""}},
                           "",
                           s.kv_format + " KV cache"});
  }
  // Constant-state layers (SSM, linear attention, short convolutions) keep
  // a state a block prefix cache cannot reuse: a scenario may not turn the
  // cache on for them (docs/scenario-format.md).
  const bool holds_state = model && std::any_of(model->layers.begin(), model->layers.end(),
                                                [](const LayerShape& l) { return l.HoldsState(); });
  // Caching off takes the host tier with it (it holds what the cache evicts),
  // and the pins (they keep cached blocks for a task's next request).
  Lever caching{s.prefix_cache.enabled ? "prefix caching off" : "prefix caching on",
                {{"/prefix_cache/enabled", s.prefix_cache.enabled ? "false" : "true"}},
                "",
                s.prefix_cache.enabled ? "prefix caching" : ""};
  if (!s.prefix_cache.enabled && holds_state) {
    caching.not_applicable =
        "the model's constant-state layers (SSM, linear attention, short convolution) keep a "
        "state a block prefix cache cannot reuse";
  }
  std::string taken;  // what goes with the cache
  if (s.prefix_cache.enabled && s.prefix_cache.offload_capacity_gib > 0) {
    taken = "its host offload tier";
    caching.settings.push_back({"/prefix_cache/offload/capacity_gib", "0"});
  }
  if (s.prefix_cache.enabled && s.prefix_cache.pin_during_tool_s > 0) {
    taken += (taken.empty() ? "" : " and ") + std::string("its pins");
    caching.settings.push_back({"/prefix_cache/pin_during_tool_s", "0"});
  }
  if (!taken.empty()) caching.name += " (and " + taken + ")";
  levers.push_back(std::move(caching));
  const Tokens limit = s.engine.max_model_len.value_or(model ? model->max_model_len : 0);
  AddContextLevers(s, limit, &levers);
  if (model) {
    const std::int64_t heads = model->MaxKvHeads();
    // Halving the KV heads changes nothing a GPU holds once the heads are
    // fewer than the GPUs (each keeps one, replicated).
    const std::int64_t tp = std::max(1, s.deployment.gpus_per_replica);
    const auto per_gpu = [tp](std::int64_t h) {
      return std::max<std::int64_t>(1, (h + tp - 1) / tp);
    };
    if (heads >= 2) {
      Lever half{"architecture: " + std::to_string(heads / 2) + " KV heads instead of " +
                     std::to_string(heads),
                 {{"/model/set/num_key_value_heads", std::to_string(heads / 2)}}};
      if (per_gpu(heads / 2) >= per_gpu(heads)) {
        half.not_applicable = "with " + std::to_string(tp) + " GPUs a replica and " +
                              std::to_string(heads) +
                              " KV heads each GPU keeps one KV head, and with half of them it "
                              "still keeps one (a head replicated on two GPUs): nothing a GPU "
                              "holds or reads changes";
      }
      levers.push_back(std::move(half));
    }
    // Sparse attention's indexer and top-k reads would not survive the
    // rewrite into MLA: no lever rather than one that compares another model.
    const bool sparse = std::any_of(model->layers.begin(), model->layers.end(),
                                    [](const LayerShape& l) { return l.indexer_dim > 0; });
    if (model->CountLayers(LayerKind::kLatentAttention) == 0 && heads > 0 && !sparse) {
      std::int64_t head_dim = 0;
      for (const LayerShape& l : model->layers) head_dim = std::max(head_dim, l.qk_head_dim);
      Lever mla{"architecture: latent KV cache (MLA, 512 + 64 per layer)",
                {{"/model/set/kv_lora_rank", "512"},
                 {"/model/set/qk_rope_head_dim", "64"},
                 {"/model/set/qk_nope_head_dim", std::to_string(head_dim)},
                 {"/model/set/v_head_dim", std::to_string(head_dim)}}};
      // vLLM runs a latent cache in its MLA backend's blocks (FlashMLA's 64
      // on Hopper): a block size it serves the model in but not the latent
      // one moves with the rewrite, else the variant runs blocks vLLM would
      // not (and warns block_size_unserved).
      Scenario latent = s;
      for (const auto& [pointer, value] : mla.settings) {
        latent.model.set[pointer.substr(std::string_view("/model/set/").size())] = value;
      }
      auto latent_model = LoadScenarioModel(latent);
      if (latent_model && gpu && s.deployment.engine == "vllm" &&
          VllmKvBlockRule(*model, *gpu).Keeps(s.prefix_cache.block_size)) {
        const VllmKvBlocks rule = VllmKvBlockRule(*latent_model, *gpu);
        if (!rule.Keeps(s.prefix_cache.block_size)) {
          mla.settings.emplace_back("/prefix_cache/block_size", std::to_string(rule.size));
        }
      }
      // The rewrite reads every layer as attention: a hybrid's state layers
      // have no latent form.
      if (holds_state) {
        mla.not_applicable =
            "the model's constant-state layers have no latent form (the rewrite is defined for "
            "models whose every mixing layer is attention)";
      } else if (latent_model && kv && s.deployment.engine == "vllm") {
        // vLLM's MLA backends store no int4 or per-token-head cache.
        mla.not_applicable = VllmKvProblem(*kv, *latent_model);
      }
      levers.push_back(std::move(mla));
    }
  }
  // Speculative decoding: on with a method's defaults (the model's own MTP
  // layer when its checkpoint has one, else an EAGLE-3 head), or off.
  if (s.deployment.speculative) {
    levers.push_back({"speculative decoding off",
                      {{"/deployment/speculative", "null"}},
                      "",
                      "speculative decoding (" + s.deployment.speculative->method + ")"});
  } else {
    const std::string method = model ? DefaultSpeculativeMethod(*model) : "eagle3";
    const SpeculativeMethod* m = FindSpeculativeMethod(method);
    char name[96];
    std::snprintf(name, sizeof name, "speculative decoding (%s, k %d, acceptance %.2f)",
                  method.c_str(), m->num_speculative_tokens, m->acceptance_rate);
    levers.push_back({name, SpeculationOnSettings(s, "{\"method\": \"" + method + "\"}")});
  }
  return levers;
}

std::vector<std::pair<std::string, std::string>> SpeculationOnSettings(
    const Scenario& s, const std::string& method_json) {
  std::vector<std::pair<std::string, std::string>> settings = {
      {"/deployment/speculative", method_json}};
  if (s.deployment.engine == "sglang" && s.deployment.async_scheduling.value_or(false)) {
    settings.emplace_back("/deployment/async_scheduling", "null");
  }
  return settings;
}

LeverValue ValueOf(const Lever& lever, double baseline, double variant) {
  LeverValue v;
  v.lever = lever.removes.empty() ? lever.name : lever.removes;
  v.without_usd_per_task = lever.removes.empty() ? baseline : variant;
  v.with_usd_per_task = lever.removes.empty() ? variant : baseline;
  v.saves_usd_per_task = v.without_usd_per_task - v.with_usd_per_task;
  v.saves_fraction = v.without_usd_per_task > 0 ? v.saves_usd_per_task / v.without_usd_per_task : 0;
  return v;
}

std::vector<std::size_t> RankByValue(const std::vector<LeverOutcome>& outcomes) {
  std::vector<std::size_t> ranked;
  for (std::size_t i = 1; i < outcomes.size(); ++i) ranked.push_back(i);
  const double base = outcomes[0].run->summary.cost_per_task_usd.mean;
  auto saves = [&](std::size_t i) {
    const LeverOutcome& o = outcomes[i];
    return ValueOf(o.lever, base, o.run->summary.cost_per_task_usd.mean).saves_usd_per_task;
  };
  auto weighed = [&](std::size_t i) {
    return outcomes[i].run.has_value() && outcomes[i].not_comparable.empty();
  };
  std::stable_sort(ranked.begin(), ranked.end(), [&](std::size_t x, std::size_t y) {
    const bool rx = weighed(x), ry = weighed(y);
    if (!rx || !ry) return rx && !ry;
    return saves(x) > saves(y);
  });
  return ranked;
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
  const auto base = ParseScenario(scenario_text, source);
  // The baseline without its context policy: a policy lever whose own policy
  // plans what keep_all plans would only take the baseline's policy away.
  std::optional<Scenario> keep_all;
  if (base && base->context_policy.kind != "keep_all") {
    if (auto text = WithSetting(scenario_text, "/context_policy", R"({"kind": "keep_all"})")) {
      if (auto s = ParseScenario(*text, source)) keep_all = std::move(*s);
    }
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
      if (!o.lever.no_effect.empty() && base) {
        PromptFacts facts;
        auto same = SamePlans(*base, *scenario, &facts);
        if (same && *same) {
          o.lever.not_applicable = NoEffectReason(o.lever, *scenario, facts);
          o.error = "not applicable: " + o.lever.not_applicable;
          continue;
        }
        if (keep_all && o.lever.removes.empty()) {
          PromptFacts none_facts;
          auto none = SamePlans(*keep_all, *scenario, &none_facts);
          if (none && *none) {
            o.lever.not_applicable = NoEffectReason(o.lever, *scenario, none_facts) +
                                     " (it would only take out " + base->context_policy.kind + ")";
            o.error = "not applicable: " + o.lever.not_applicable;
            continue;
          }
        }
      }
      auto run = workloads != nullptr ? RunScenario(*scenario, *workloads) : RunScenario(*scenario);
      if (run) {
        o.warnings = RunWarnings(*scenario, *run);
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
  WeighAgainstBaseline(&outcomes);
  return outcomes;
}

}  // namespace kvbill
