#include "kvbill/scenario/run.h"

#include <cmath>

#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/operator_cost_model.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/cost/roofline_cost_model.h"
#include "kvbill/cost/speculative.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/metrics/billing.h"
#include "kvbill/metrics/run_aggregator.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/weight_bytes.h"
#include "kvbill/trace/generator.h"
#include "kvbill/trace/importers.h"
#include "scenario/scenario_model.h"

namespace kvbill {
namespace {

// deployment.speculative: the model's cost model wrapped to add the draft,
// and the draft's memory (cost/speculative.h). `profile` is null under the
// roofline.
Status ApplySpeculative(const Scenario& s, const EngineProfile* profile,
                        const OperatorModelOptions& options, std::shared_ptr<const CostModel> plain,
                        SimulationConfig* c) {
  const ScenarioSpeculative& spec = *s.deployment.speculative;
  const std::string at = s.source + "#/deployment/speculative";
  std::shared_ptr<const CostModel> target = c->cost_model;
  if (!target) {
    RooflineParams params = c->roofline;
    params.tensor_parallel = c->gpus_per_replica;
    auto roofline = Roofline::Make(c->model, c->kv_format, c->weight_format, c->gpu, params);
    if (!roofline) return roofline.error().Within(s.source + "#/deployment");
    target = std::make_shared<RooflineCostModel>(std::move(*roofline));
  }
  OperatorModelOptions o = options;
  o.tensor_parallel = c->gpus_per_replica;
  auto setup = MakeSpeculative(
      SpeculativeSpec{spec.method, spec.model, spec.num_speculative_tokens, spec.acceptance_rate,
                      spec.topk, spec.num_draft_tokens, spec.rank_decay},
      c->model, c->kv_format, c->gpu, target, profile, o, c->roofline, std::move(plain));
  if (!setup) return setup.error().Within(at);
  c->speculative.num_speculative_tokens = setup->num_speculative_tokens;
  c->speculative.expected_tokens = setup->expected_tokens;
  c->speculative.verify_tokens = setup->verify_tokens;
  c->speculative.draft_weight_bytes = setup->draft_weight_bytes;
  c->speculative.draft_kv_bytes_per_token = setup->draft_kv_bytes_per_token;
  c->cost_model = setup->cost;
  return OkStatus();
}

}  // namespace

Tokens ScenarioTokenBudget(const Scenario& s, const GpuSpec& gpu) {
  return s.engine.max_num_batched_tokens.value_or(
      DefaultEngineLimits(s.deployment.engine, gpu, s.deployment.gpus_per_replica)
          .max_num_batched_tokens);
}

double SglangScenarioMemoryFraction(const Scenario& s, const GpuSpec& gpu) {
  const EngineLimits limits = DefaultEngineLimits("sglang", gpu, s.deployment.gpus_per_replica);
  const std::string method = s.deployment.speculative ? s.deployment.speculative->method : "";
  return SglangMemoryFraction(gpu, s.deployment.gpus_per_replica, ScenarioTokenBudget(s, gpu),
                              limits.cuda_graph_max_batch, IsEagleHead(method), 0);
}

Result<SimulationConfig> BuildSimulationConfig(const Scenario& s) {
  const std::string at = s.source + "#";
  SimulationConfig c;
  auto model = LoadScenarioModel(s);
  if (!model) return model.error().Within(at + "/model");
  c.model = std::move(*model);
  auto kv = ParseElementFormat(s.kv_format);
  if (!kv) return kv.error().Within(at + "/kv_format");
  c.kv_format = *kv;
  c.weight_format = s.weight_format;
  auto gpu = LookupGpu(s.deployment.gpu);
  if (!gpu) return gpu.error().Within(at + "/deployment/gpu");
  c.gpu = *gpu;
  c.gpus_per_replica = s.deployment.gpus_per_replica;
  c.replicas = s.deployment.replicas;
  c.usd_per_gpu_hour = s.deployment.usd_per_gpu_hour.value_or(gpu->usd_per_gpu_hour);
  const EngineLimits limits =
      DefaultEngineLimits(s.deployment.engine, *gpu, s.deployment.gpus_per_replica);
  c.scheduler = s.deployment.engine == "sglang" ? SchedulerKind::kSglang : SchedulerKind::kVllm;
  // vLLM's gpu_memory_utilization defaults to 0.9; SGLang derives its
  // mem_fraction_static from the GPU, the degree, its chunk and its CUDA
  // graphs (EAGLE drafts reserve more), as a replay of its runs does.
  if (s.deployment.memory_fraction) {
    c.memory_fraction = *s.deployment.memory_fraction;
  } else if (c.scheduler == SchedulerKind::kSglang) {
    c.memory_fraction = SglangScenarioMemoryFraction(s, *gpu);
  } else {
    c.memory_fraction = 0.9;
  }
  // vLLM stores an int4 KV cache with one fp32 scale per token and KV head
  // (int4_per_token_head): int4-g<head_dim>, which "int4" means here
  // (another group size was refused when the scenario was read).
  if (c.scheduler == SchedulerKind::kVllm && s.kv_format == "int4") {
    if (const std::int64_t head = VllmInt4KvGroup(c.model); head > 0) {
      if (auto own = ParseElementFormat("int4-g" + std::to_string(head))) c.kv_format = *own;
    }
  }
  c.max_num_batched_tokens = ScenarioTokenBudget(s, *gpu);
  // SGLang caps max_running_requests at 48 when it speculates and none is set.
  c.max_num_seqs = s.engine.max_num_seqs.value_or(
      c.scheduler == SchedulerKind::kSglang && s.deployment.speculative ? 48 : limits.max_num_seqs);
  c.max_model_len = s.engine.max_model_len.value_or(c.model.max_model_len);
  const ScenarioDeployment& d = s.deployment;
  std::optional<EngineProfile> used_profile;
  OperatorModelOptions options;
  // Without speculation (speculation's counterfactual); plain_model null:
  // the same as the model's own.
  OperatorModelOptions plain_options;
  std::shared_ptr<const CostModel> plain_model;
  if (d.bandwidth_efficiency || d.compute_efficiency) {
    // The spec-sheet roofline at the efficiencies given (docs/engine.md).
    c.roofline.bandwidth_efficiency = d.bandwidth_efficiency.value_or(0.65);
    c.roofline.compute_efficiency = d.compute_efficiency.value_or(0.6);
    c.roofline.iteration_overhead_s = d.iteration_overhead_s.value_or(0);
    c.activation_reserve_gib = d.activation_reserve_gib.value_or(0);
  } else {
    auto profile = LoadEngineProfile(d.profile.empty() ? d.engine : d.profile);
    if (!profile)
      return profile.error().Within(
          at + (d.profile.empty() ? "/deployment/engine" : "/deployment/profile"));
    if (d.iteration_overhead_s) profile->params.cpu_iteration_s = *d.iteration_overhead_s;
    used_profile = *profile;
    options.tensor_parallel = c.gpus_per_replica;
    options.max_batch_tokens = c.max_num_batched_tokens;
    options.max_batch_seqs = c.max_num_seqs;
    const bool sglang = c.scheduler == SchedulerKind::kSglang;
    const bool gpu_draft = d.speculative && DraftsOnGpu(d.speculative->method);
    options.async_scheduling = d.async_scheduling.value_or(
        AsyncSchedulingByDefault(sglang, d.speculative ? d.speculative->method : ""));
    // vLLM speculating with a draft on the GPU waits for each step's sampled
    // tokens before it prepares the next (docs/engine.md, "Speculative
    // decoding"): its CPU overlaps the draft, not the model's GPU time.
    options.cpu_waits_for_sampling = options.async_scheduling && !sglang && gpu_draft;
    options.cuda_graph_max_tokens = limits.cuda_graph_max_batch;
    options.expert_parallel = d.expert_parallel;
    options.expert_all_to_all = d.expert_dispatch == "all_to_all";
    options.mxfp4_experts_marlin = d.mxfp4_moe_kernel == "marlin";
    plain_options = options;
    plain_options.async_scheduling =
        d.async_scheduling.value_or(AsyncSchedulingByDefault(sglang, ""));
    plain_options.cpu_waits_for_sampling = false;
    auto op_model = OperatorCostModel::Make(c.model, c.kv_format, c.weight_format, c.gpu, nullptr,
                                            *profile, options);
    if (!op_model) return op_model.error().Within(at + "/deployment");
    c.cost_model = *op_model;
    if (d.speculative && (options.async_scheduling != plain_options.async_scheduling ||
                          options.cpu_waits_for_sampling)) {
      // The same deployment without speculation schedules its CPU as then:
      // what summary.speculation compares with.
      auto plain = OperatorCostModel::Make(c.model, c.kv_format, c.weight_format, c.gpu, nullptr,
                                           *profile, plain_options);
      if (!plain) return plain.error().Within(at + "/deployment");
      plain_model = *plain;
    }
    c.activation_reserve_gib = d.activation_reserve_gib.value_or(
        ProfileReserveGib(*profile, c.max_num_batched_tokens, c.model.hidden_size));
    c.frontend_per_request_s = profile->params.frontend_per_request_s;
    c.frontend_per_token_s = profile->params.frontend_per_token_s;
    c.request_latency_s = profile->params.request_latency_s;
  }
  if (d.speculative) {
    if (Status st = ApplySpeculative(s, used_profile ? &*used_profile : nullptr, options,
                                     std::move(plain_model), &c);
        !st) {
      return st.error();
    }
  }
  auto router = ParseRouterKind(s.engine.router);
  if (!router) return router.error().Within(at + "/engine/router");
  c.router = *router;
  c.step_mode = s.engine.mode == "step";
  c.prefix_caching = s.prefix_cache.enabled;
  c.block_size = s.prefix_cache.block_size;
  if (s.prefix_cache.capacity_tokens) {
    c.capacity_tokens = *s.prefix_cache.capacity_tokens == ScenarioPrefixCache::kUnlimited
                            ? kUnlimitedTokens
                            : *s.prefix_cache.capacity_tokens;
  }
  c.pin_during_tool_s = s.prefix_cache.pin_during_tool_s;
  if (s.prefix_cache.offload_capacity_gib > 0) {
    // Host bytes per token: every per-token layer, all GPUs of a replica.
    auto roofline = Roofline::Make(c.model, c.kv_format, c.weight_format, c.gpu,
                                   RooflineParams{c.gpus_per_replica, 1, 1, 0});
    if (!roofline) return roofline.error().Within(at + "/kv_format");
    const double per_token = roofline->KvWriteBytesPerToken() * c.gpus_per_replica;
    c.offload_capacity_tokens =
        static_cast<Tokens>(s.prefix_cache.offload_capacity_gib * kBytesPerGiB / per_token);
    c.offload_link_bytes_per_s = s.prefix_cache.offload_link_gb_s * 1e9;
  }
  auto release = ParseReleaseRule(s.trace.release);
  if (!release) return release.error().Within(at + "/trace/release");
  c.release = *release;
  c.load = s.trace.load;
  return c;
}

Result<std::vector<Task>> LoadScenarioTasks(const Scenario& s) {
  std::vector<Task> tasks;
  if (!s.trace.file.empty()) {
    std::optional<TraceFormat> format;
    if (s.trace.format != "auto") {
      auto f = ParseTraceFormat(s.trace.format);
      if (!f) return f.error().Within(s.source + "#/trace/format");
      format = *f;
    }
    if (auto checked = CheckTraceFile(s); !checked) return checked.error();
    auto read = ReadTraceTasks(s.trace.file, format);
    if (read && read->empty()) {
      return Error(s.trace.file + ": no tasks (the trace holds none to simulate)");
    }
    return read;
  }
  auto preset = ScenarioGenerator(s);
  if (!preset) return preset.error();
  TraceGenerator generator(*preset, s.seed);
  for (std::int64_t i = 0; i < s.trace.tasks; ++i) tasks.push_back(generator.Next());
  return tasks;
}

Result<std::vector<std::vector<Request>>> PlanRequests(const Scenario& s,
                                                       const std::vector<Task>& tasks) {
  auto policy = MakeContextPolicy(s.context_policy);
  if (!policy) return policy.error().Within(s.source + "#/context_policy");
  std::vector<std::vector<Request>> out;
  out.reserve(tasks.size());
  for (const Task& t : tasks) out.push_back((*policy)->Plan(t));
  return out;
}

namespace {

Result<ScenarioOutcome> RunApiScenario(const Scenario& s) {
  auto sheet = BundledPriceSheet();
  if (!sheet) return sheet.error();
  auto tasks = LoadScenarioTasks(s);
  if (!tasks) return tasks.error();
  auto requests = PlanRequests(s, *tasks);
  if (!requests) return requests.error();
  auto run = RunApiPricing(*s.pricing, *sheet, *tasks, *requests);
  if (!run) return run.error().Within(s.source + "#/pricing");
  ScenarioOutcome out;
  out.tasks = ApiTaskMetrics(run->replay);
  out.summary = ApiRunSummary(out.tasks, run->replay);
  out.api = std::move(*run);
  return out;
}

}  // namespace

namespace {

// The scenario's billing rule (its key admits only the rule names).
BillingRule BillingOf(const Scenario& s) {
  auto rule = ParseBillingRule(s.deployment.billing);
  return rule ? *rule : BillingRule::kDedicated;
}

// Records folded into task metrics as they come, and handed on when asked.
class ObservedSink final : public RecordSink {
 public:
  ObservedSink(const RunObserver& observer, BillingRule billing)
      : observer_(observer), aggregator_(observer.on_task, billing) {}
  void OnRequest(RequestRecord&& record) override {
    if (observer_.on_request) observer_.on_request(record);
    aggregator_.OnRequest(std::move(record));
  }
  void OnTaskDone(int index) override { aggregator_.OnTaskDone(index); }
  void OnTaskCut(int index, int unserved) override { aggregator_.OnTaskCut(index, unserved); }
  RunSummary Finish(const SimulationTotals& totals) { return aggregator_.Finish(totals); }

 private:
  const RunObserver& observer_;
  RunAggregator aggregator_;
};

// An error of a run, named where the scenario is at fault. The engine's
// set-up refuses weights that leave no room for KV (engine/setup.cc); that
// is an error of the field that sizes them (docs/scenario-format.md: every
// error names a JSON pointer): a draft model that alone leaves no room, its
// `model`; an activation reserve that takes all of the memory fraction,
// `activation_reserve_gib` (or `memory_fraction` when the reserve is the
// engine's); else the model's weights on gpus_per_replica GPUs. A request
// beyond a pool that was sized (the engine names its task and turn) is an
// error of the field that bounds the pool: prefix_cache.capacity_tokens when
// it replaced the pool, else gpus_per_replica. Other errors (a trace's)
// name the file.
Error RunError(const Scenario& s, const SimulationConfig& config, const Error& e) {
  if (!e.cannot_serve()) return e.Within(s.source);
  const long double usable = static_cast<long double>(config.gpu.usable_memory_bytes);
  const long double share = std::floor(usable * config.memory_fraction);
  const long double reserve = config.activation_reserve_gib * kBytesPerGiB;
  // The model's weights alone on a GPU (and the draft's).
  auto weights = ComputeWeightBytes(config.model, config.weight_format);
  const long double weights_per_gpu =
      weights ? static_cast<long double>(weights->PerGpu(config.gpus_per_replica)) +
                    config.speculative.draft_weight_bytes
              : 0;
  if (SizeReplicaPool(config)) {
    // A reserve the scenario set that takes most of what the weights
    // leave is what shrank the pool.
    if (config.capacity_tokens == 0 && s.deployment.activation_reserve_gib && weights &&
        reserve > (share - weights_per_gpu) / 2) {
      return Error::CannotServe(e.message() +
                                "; the scenario's deployment.activation_reserve_gib takes " +
                                FormatBinaryBytes(static_cast<double>(reserve)) + " of the " +
                                FormatBinaryBytes(static_cast<double>(share - weights_per_gpu)) +
                                " per GPU the weights leave")
          .Within(s.source + "#/deployment/activation_reserve_gib");
    }
    return e.Within(s.source + "#" +
                    (config.capacity_tokens > 0 ? "/prefix_cache/capacity_tokens"
                                                : "/deployment/gpus_per_replica"));
  }
  std::string pointer = "/deployment/gpus_per_replica";
  SimulationConfig no_draft = config;
  no_draft.speculative.draft_weight_bytes = 0;
  no_draft.speculative.draft_kv_bytes_per_token = 0;
  const long double capacity = share - reserve;
  if (config.speculative.draft_weight_bytes > 0 && SizeReplicaPool(no_draft)) {
    pointer = "/deployment/speculative/model";
  } else if (capacity <= 0) {
    pointer = s.deployment.activation_reserve_gib ? "/deployment/activation_reserve_gib"
                                                  : "/deployment/memory_fraction";
  } else if (s.deployment.memory_fraction && weights &&
             weights_per_gpu + reserve < usable * 0.95L) {
    // A memory fraction the scenario set below what the weights and the
    // reserve take, where a fraction up to 0.95 holds them.
    pointer = "/deployment/memory_fraction";
  } else if (s.deployment.activation_reserve_gib && weights && weights_per_gpu < share) {
    // A reserve the scenario set that takes the room the weights leave.
    pointer = "/deployment/activation_reserve_gib";
  }
  return e.Within(s.source + "#" + pointer);
}

// The scenario run whole (RunScenario), its results handed to `observer`.
Result<StreamedRun> RunWhole(const Scenario& s, const RunObserver& observer) {
  auto whole = RunScenario(s);
  if (!whole) return whole.error();
  if (observer.on_request) {
    for (const RequestRecord& r : whole->result.requests) observer.on_request(r);
  }
  if (observer.on_task) {
    for (const TaskMetrics& t : whole->tasks) observer.on_task(t);
  }
  return StreamedRun{whole->result, whole->summary, false};
}

// The engine over the scenario's trace streamed; nullopt when the trace is
// out of arrival order (after on_restart).
Result<std::optional<StreamedRun>> RunStreamed(const Scenario& s, const SimulationConfig& config,
                                               const RunObserver& observer) {
  auto feed = TraceFeed::Open(s);
  if (!feed) return feed.error();
  ObservedSink sink(observer, BillingOf(s));
  auto totals = RunSimulation(config, **feed, sink);
  if (!totals && (*feed)->out_of_order()) {
    if (observer.on_restart) observer.on_restart();
    return std::optional<StreamedRun>();
  }
  if (!totals && (*feed)->failed()) return totals.error();  // the trace's own error
  if (!totals) return RunError(s, config, totals.error());
  return std::optional<StreamedRun>(StreamedRun{*totals, sink.Finish(*totals), true});
}

}  // namespace

Result<StreamedRun> StreamScenario(const Scenario& s, const RunObserver& observer) {
  auto config = BuildSimulationConfig(s);
  if (!config) return config.error();
  auto run = RunStreamed(s, *config, observer);
  if (!run) return run.error();
  if (*run) return std::move(**run);
  return RunWhole(s, observer);
}

Result<StreamedRun> RunScenario(const Scenario& s, WorkloadCache& workloads,
                                const RunObserver& observer) {
  auto config = BuildSimulationConfig(s);
  if (!config) return config.error();
  auto workload = workloads.Get(s);
  if (!workload) return workload.error();
  if (*workload) {
    const PreparedWorkload& w = **workload;
    if (!w.checks.prompts) return w.checks.prompts.error();  // named at the trace
    if (auto c = CheckRun(*config, w.checks); !c) return RunError(s, *config, c.error());
    PreparedFeed feed(w);
    ObservedSink sink(observer, BillingOf(s));
    auto totals = RunSimulation(*config, feed, sink);
    if (!totals) return RunError(s, *config, totals.error());
    return StreamedRun{*totals, sink.Finish(*totals), true};
  }
  auto streamed = RunStreamed(s, *config, observer);
  if (!streamed) return streamed.error();
  if (*streamed) return std::move(**streamed);
  return RunWhole(s, observer);  // out of arrival order: read the whole trace, as before
}

Result<ScenarioOutcome> RunScenario(const Scenario& s, WorkloadCache& workloads) {
  if (s.pricing) return RunApiScenario(s);
  ScenarioOutcome out;
  RunObserver observer;
  observer.on_task = [&out](const TaskMetrics& t) { out.tasks.push_back(t); };
  observer.on_restart = [&out] { out.tasks.clear(); };
  auto run = RunScenario(s, workloads, observer);
  if (!run) return run.error();
  static_cast<SimulationTotals&>(out.result) = run->totals;
  out.summary = run->summary;
  return out;
}

Result<ScenarioOutcome> RunScenario(const Scenario& s) {
  if (s.pricing) return RunApiScenario(s);
  auto config = BuildSimulationConfig(s);
  if (!config) return config.error();
  auto tasks = LoadScenarioTasks(s);
  if (!tasks) return tasks.error();
  auto requests = PlanRequests(s, *tasks);
  if (!requests) return requests.error();
  auto result = Simulate(*config, *tasks, *requests);
  if (!result) return RunError(s, *config, result.error());
  ScenarioOutcome out;
  out.result = std::move(*result);
  out.tasks = AggregateTasks(*tasks, out.result);
  out.summary = Summarise(out.tasks, out.result);
  ApplyBilling(BillingOf(s), &out.tasks, &out.summary);
  return out;
}

}  // namespace kvbill
