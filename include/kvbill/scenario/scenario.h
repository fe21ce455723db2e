// Scenario: one simulation set-up, read from a JSON file.
//
// A scenario names the model, the KV and weight formats, the deployment, the
// engine limits, the prefix cache, the context policy, the trace (a file or a
// generator preset) and the seed. The format is docs/scenario-format.md,
// whose key tables are generated from the one table of keys that the reader
// interprets (src/scenario/keys.h); unknown keys are errors, and every error names the file and the
// JSON pointer of the field ("s.json#/deployment/gpus_per_replica: must be a positive integer, got
// 0"). Paths inside a scenario are relative to the scenario file's directory. "budgets" (limits for
// `kvbill check`) and "sweep" (axes for `kvbill sweep`) are read here, and so is "pricing" (the API
// mode of `kvbill simulate`).
#ifndef KVBILL_SCENARIO_SCENARIO_H_
#define KVBILL_SCENARIO_SCENARIO_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kvbill/cost/provider_cache.h"
#include "kvbill/policy/context_policy.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct ScenarioModel {
  std::string name = "qwen3-8b";           // catalog name or config.json path (resolved)
  std::map<std::string, std::string> set;  // config overrides, key -> JSON text of the value
  bool text_only = false;                  // leave vision / audio towers out of the weights
};

// "deployment.speculative": speculative decoding (docs/engine.md,
// "Speculative decoding"). Present = on.
struct ScenarioSpeculative {
  // "draft_model", "eagle", "eagle3", "mtp" or "ngram" (SpeculativeMethodNames()).
  std::string method;
  std::string model;  // draft_model only: catalog name or config.json path (resolved)
  // Draft length k (vLLM's num_speculative_tokens); nullopt: the method's default.
  std::optional<int> num_speculative_tokens;
  // Acceptance rate per position, each in [0, 1): one entry (every
  // position), or k entries; empty: the method's default.
  std::vector<double> acceptance_rate;
  // A tree draft (docs/engine.md): candidates per expanded node (nullopt:
  // 1, a chain), query tokens per verification step (nullopt: k + 1;
  // required above topk 1) and β (nullopt: the method's).
  std::optional<int> topk;
  std::optional<int> num_draft_tokens;
  std::optional<double> rank_decay;
};

struct ScenarioDeployment {
  std::string gpu = "h100-sxm";  // catalog id or GPU JSON path (resolved)
  int gpus_per_replica = 1;      // tensor parallel
  // Expert parallelism of MoE layers: 1, or gpus_per_replica (whole experts,
  // 1/N per GPU); how tokens reach them: "all_reduce" or "all_to_all".
  int expert_parallel = 1;
  std::string expert_dispatch = "all_reduce";
  // The kernel of MXFP4 routed experts on Hopper under vLLM: "auto" (the
  // OpenAI Triton kernels, vLLM's own choice from v0.12.0), "triton" or
  // "marlin" (vLLM before v0.12.0, or VLLM_MXFP4_USE_MARLIN=1).
  std::string mxfp4_moe_kernel = "auto";
  int replicas = 1;
  // Unset: 0.9 (vLLM's gpu_memory_utilization), or SGLang's own
  // mem_fraction_static for the GPU (SglangMemoryFraction).
  std::optional<double> memory_fraction;
  // The serving engine: its scheduler and its fitted profile
  // (cost/engine_profile.h); `profile` names another profile (a bundled
  // name or a file, resolved).
  std::string engine = "vllm";
  std::string profile;  // empty: the engine's bundled profile
  // nullopt: the engine's default (run.cc): vLLM schedules asynchronously
  // (from v0.14) unless it drafts by n-gram; SGLang overlaps unless it
  // speculates.
  std::optional<bool> async_scheduling;
  // Explicit overrides of the engine profile (nullopt: from the profile).
  std::optional<double> activation_reserve_gib;  // per GPU
  std::optional<double> usd_per_gpu_hour;        // default: the GPU catalog's
  // Who pays for idle GPU time: "dedicated" (a line of its own), "busy" (no
  // one) or "amortized" (the tasks, by their busy GPU time): BillingRule.
  std::string billing = "dedicated";
  // Setting either efficiency prices iterations with the spec-sheet
  // roofline at those efficiencies (0.65 and 0.6 when only one is set)
  // instead of the calibrated operator model.
  std::optional<double> bandwidth_efficiency;
  std::optional<double> compute_efficiency;
  std::optional<Seconds> iteration_overhead_s;     // CPU time of every engine iteration
  std::optional<ScenarioSpeculative> speculative;  // nullopt: off
};

struct ScenarioEngine {
  // Token budget per iteration and running sequences per replica; nullopt:
  // the engine's defaults for the GPU (replay.h, VllmDefaultLimits).
  std::optional<Tokens> max_num_batched_tokens;
  std::optional<int> max_num_seqs;
  // The longest sequence (prompt + output) a request may reach; nullopt =
  // the model's limit (ModelShape::max_model_len). The engine refuses longer
  // requests (SimulationConfig::max_model_len).
  std::optional<Tokens> max_model_len;
  std::string router = "round_robin";  // prefix_affinity, least_loaded, session_affinity
  std::string mode = "event";          // or "step" (the reference)
};

struct ScenarioPrefixCache {
  bool enabled = true;
  Tokens block_size = 16;
  // Cache capacity in tokens: nullopt = what the KV pool holds; kUnlimited = never evict.
  static constexpr Tokens kUnlimited = -1;
  std::optional<Tokens> capacity_tokens;
  Seconds pin_during_tool_s = 0;    // keep a task's blocks during its tool wait, up to this long
  double offload_capacity_gib = 0;  // host-memory tier; 0 = none
  double offload_link_gb_s = 50;    // host <-> GPU bandwidth, GB/s (10^9 bytes)
};

struct ScenarioTrace {
  std::string file;                      // resolved path; empty when generated
  std::string format = "auto";           // --from names of the trace readers
  std::string release = "after_finish";  // or "recorded"
  std::string generator;                 // preset name when no file
  std::int64_t tasks = 0;                // generator: number of tasks
  double load = 1;                       // gaps between task starts are divided by it (> 0)
};

// A limit on one metric of a run ("budgets"): `kvbill check` fails when the
// metric is above max or below min. Metric names: scenario/budget.h.
struct Budget {
  std::string metric;
  std::optional<double> max;
  std::optional<double> min;
};

// A latency target ("slo"): the metric (a budgets name, budget.h
// SloMetricNames) must stay at or below `max` seconds.
struct SloTarget {
  std::string metric;
  double max = 0;
};

// One axis of a sweep ("sweep"): a JSON pointer into the scenario and the
// values it takes, each kept as JSON text.
struct SweepAxis {
  std::string path;
  std::vector<std::string> values;
};
// The most points a scenario's sweep may have (the product of its axes'
// values): past it a sweep is refused rather than run for days (or, past
// 2^63, counted wrong).
inline constexpr std::int64_t kMaxSweepPoints = 1'000'000;
// The points of a sweep, the product of its axes' values; past
// kMaxSweepPoints, kMaxSweepPoints + 1 (the product is not formed, so it
// cannot overflow).
inline std::int64_t SweepPointCount(const std::vector<SweepAxis>& axes) {
  std::int64_t points = 1;
  for (const SweepAxis& a : axes) {
    const auto n = static_cast<std::int64_t>(a.values.size());
    if (n > 0 && points > kMaxSweepPoints / n) return kMaxSweepPoints + 1;
    points *= n;
  }
  return points;
}

// "pricing": bill the trace at an API provider's cache rules and list prices
// instead of serving it on the deployment (cost/api_replay.h).
struct ScenarioPricing {
  std::string provider;                  // required; a ProviderCacheNames() entry
  std::string model;                     // required; resolved by the bundled price sheet
  Seconds ttl_s = 0;                     // cache.ttl_s; 0 = the provider's default
  Tokens min_cacheable_tokens = 0;       // cache.min_cacheable_tokens; 0 = the model's
  bool warm_start_from_recorded = true;  // cache.warm_start: "recorded" (true) or "none"
  bool cache_enabled = true;             // cache.enabled; false: every prompt token uncached
  // cache.mode "implicit" (false) or "explicit" (true): gemini only.
  bool explicit_cache = false;
  // cache.prefix_tokens, explicit caches: N, or "first_request" (0).
  Tokens prefix_tokens = 0;
  WriteFee write_fee = WriteFee::kByModel;  // cache.write_fee (openai): true, false, or by model
  // per_call_models: true prices a call that names its model (Turn::model)
  // at that model, `model` being the default; false prices every call at
  // `model` (what-ifs of another model: compare's model lever, sweeps).
  bool per_call_models = true;
};

struct Scenario {
  std::string name;    // "name" key, else the file stem
  std::string source;  // the file it was read from
  ScenarioModel model;
  std::string kv_format = "bf16";
  // The KV format the checkpoint declares (vLLM's kv_cache_dtype "auto"
  // stores it) when the scenario leaves kv_format at its default and it
  // differs from it: the kv_format_default warning; empty otherwise.
  std::string declared_kv_format;
  std::string weight_format = "auto";
  ScenarioDeployment deployment;
  ScenarioEngine engine;
  ScenarioPrefixCache prefix_cache;
  ContextPolicyParams context_policy;
  ScenarioTrace trace;
  std::uint64_t seed = 1;
  std::vector<Budget> budgets;   // in key order
  std::vector<SloTarget> slo;    // in key order
  std::vector<SweepAxis> sweep;  // in key order
  std::optional<ScenarioPricing> pricing;
  // Read by ParseSweepPointScenario only: why no engine runs this deployment
  // (a format no engine runs on the GPU, a degree that cannot split the
  // heads), the rule's error; empty when it runs. ParseScenario refuses it.
  std::string not_runnable;
  // The key pointers the file gave ("/deployment/memory_fraction"; a vLLM
  // synonym under its key's pointer, "/kv_format" for kv_cache_dtype), to
  // tell what it says from kvbill's defaults.
  std::set<std::string> given;
};

// Parses scenario JSON text. `source` names it in errors and anchors
// relative paths (its directory).
Result<Scenario> ParseScenario(const std::string& json_text, const std::string& source);
// The same for a point of a sweep, where a combination of valid values may
// be one no engine runs (nvfp4 KV with an H100 among the GPUs): that rule's
// error goes to `not_runnable` instead of failing; every other error fails.
Result<Scenario> ParseSweepPointScenario(const std::string& json_text, const std::string& source);

// Reads and parses a scenario file.
Result<Scenario> LoadScenario(const std::string& path);
// An error for a scenario path no scenario is read from ("-", standard
// input: a scenario's relative paths are its file's).
Status CheckScenarioPath(const std::string& path);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_SCENARIO_H_
