// Plan: the cheapest deployment that serves a scenario's workload within its
// latency targets (`kvbill plan`, docs/plan.md).
//
// A candidate is a GPU type x tensor-parallel degree (one that splits the
// model's heads as vLLM requires, ValidTensorParallel) x expert-parallel
// degree (MoE models: 1, or the tensor-parallel degree when each GPU holds a
// whole expert, ValidExpertParallel) x weight format x KV
// format x speculative decoding. Candidates are numbered 0..N-1 in that
// order (GPU slowest); shard i of n decides the candidates with k mod n == i.
//
// Each candidate is decided from its own numbers only, so shards are
// independent:
//   1. format   the GPU runs its weight and KV formats (format_support.h)
//   2. fit      its weights and one KV block fit one replica (fit.h)
//   3. calibration   its cost model is calibrated, unless allowed
//   4. throughput bound   r replicas decode at most r x P tokens/s, P the
//      replica's peak decode rate (max over batch sizes of batch / step time
//      at context 1); the workload needs O output tokens within D seconds, D
//      the time it takes at infinite speed (its last task's arrival at the
//      load plus that task's tool waits, the longest such). Fewer than
//      ceil(O / (P x D)) replicas cannot carry it; when even the most the GPU
//      budget allows cannot, the candidate is pruned without simulating.
//   5. prefill bound   the same for prompts: the most replicas prefill at
//      most their number x Q tokens/s, Q the replica's peak prefill rate
//      (max over prefill batches of tokens / step time at context 0); when
//      that cannot carry the workload's fresh prompt tokens (U, a lower
//      bound on what any deployment prefills) within D, the candidate is
//      pruned without simulating.
//   6. replicas   every count in [the throughput bound, max_gpus / tp] is
//      simulated, fewest first; the first that meets every latency target
//      is the answer (no monotonicity in replicas is assumed: docs/plan.md).
// A feasible candidate's dollars: $/task = the simulated window's whole bill
// (idle included) / its tasks; $/day = $/task x tasks per day.
#ifndef KVBILL_SCENARIO_PLAN_H_
#define KVBILL_SCENARIO_PLAN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbill/engine/simulator.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/scenario/warnings.h"
#include "kvbill/scenario/workload.h"
#include "kvbill/util/result.h"

namespace kvbill {

// --max-gpus at most: plan replays the workload at every replica count from
// its bounds up, one count after another (a bound on the run's length).
inline constexpr int kMaxPlanGpus = 1024;

// The search space (the flags of `kvbill plan`).
struct PlanSpace {
  std::vector<std::string> gpus;            // catalog ids; empty: the whole catalog
  int max_gpus = 8;                         // GPUs of all replicas together
  std::vector<std::string> kv_formats;      // empty: the scenario's
  std::vector<std::string> weight_formats;  // empty: the scenario's
  std::vector<std::string> speculative = {"off"};
  std::vector<SloTarget> slo;  // empty: the scenario's "slo"
  bool allow_uncalibrated = false;
  std::map<std::string, double> gpu_prices;  // $/GPU-hour by GPU id, overriding the catalog
  double tasks_per_day = 0;                  // 0: the trace's rate (WorkloadRate)
  // --api: API models, as the bundled price sheet names them (id or alias).
  std::vector<std::string> api_models;
  // --api-latency: a provider's latencies by model (as in api_models):
  // metric -> seconds, the metric a latency ("ttft_s", taken as every
  // statistic of it) or an SLO metric ("ttft_s.p90"). ParseApiLatency.
  std::map<std::string, std::map<std::string, double>> api_latency;
};

struct PlanCandidate {
  std::int64_t index = 0;
  std::string gpu;
  int tensor_parallel = 1;
  int expert_parallel = 1;
  std::string weight_format;
  std::string kv_format;
  std::string speculative = "off";
  // With speculative "on", the method it runs: the scenario's own
  // deployment.speculative method, else the model's default
  // (DefaultSpeculativeMethod: "mtp" for a model with MTP layers, else
  // "eagle3"); empty when off.
  std::string speculative_method;
  // An API candidate (api() true): the price sheet's id of the model and
  // its provider's caching rules; the fields above are empty or 0.
  std::string api_model;
  std::string provider;
  bool api() const { return !api_model.empty(); }
};

// The settings (JSON pointer -> JSON text) that make the base scenario run
// `candidate` on `replicas` replicas: the one place a candidate meets a
// scenario. `price` (when set) is the JSON deployment.usd_per_gpu_hour is set
// to: a number, or "null" for the GPU catalog's price. Speculative
// decoding "off" sets deployment.speculative to null; "on" sets
// `speculative_on` (SpeculativeOnSetting), or keeps the scenario's own when
// that is nullopt.
std::vector<std::pair<std::string, std::string>> CandidateSettings(
    const PlanCandidate& candidate, int replicas,
    const std::optional<std::string>& price = std::nullopt,
    const std::optional<std::string>& speculative_on = std::nullopt);

// What --speculative on sets for `scenario`: nullopt when the scenario has
// its own deployment.speculative (that one is planned), else the method
// compare's lever turns on (DefaultSpeculativeMethod) with its defaults,
// as JSON text ({"method": "eagle3"}).
std::optional<std::string> SpeculativeOnSetting(const Scenario& scenario);

// What the workload asks of any deployment: its output tokens, the seconds
// it takes at infinite speed (see above), its tasks and their rate.
struct WorkloadRate {
  std::int64_t tasks = 0;
  std::int64_t output_tokens = 0;
  // Prompt tokens no prefix cache can spare the deployment: every distinct
  // prompt token (content identity and offset) that no request generates,
  // and for prompts published as trace block hashes every distinct block's
  // full engine blocks. Each is prefilled at least once (only a prefill
  // computes a prompt token that is not an output), so this is a lower
  // bound on the tokens any candidate prefills (the prefill bound).
  std::int64_t fresh_prompt_tokens = 0;
  Seconds ideal_s = 0;    // the longest (arrival at load + tool waits) of a task
  Seconds arrival_s = 0;  // last arrival - first arrival, at the load
  Seconds mean_task_s =
      0;  // a task's tool waits, the mean over tasks (its length at infinite speed)
  // The longest request, prompt and output (what max_model_len bounds), and
  // the tasks holding one longer than `limit` when MeasureWorkload is given
  // one.
  Tokens longest_request = 0;
  std::int64_t tasks_over_limit = 0;
  // Tasks of the simulated trace, by position, that only warm it up (the
  // busiest hour's warm-up, PlanWindow::warmup): simulated, but left out of
  // the latencies and of $/task. Empty: every task counts.
  std::vector<bool> warmup;
  // (tasks - 1) x 86400 / arrival span: n arrivals span n - 1 gaps; 0 when
  // all tasks arrive at once.
  double tasks_per_day() const {
    return arrival_s > 0 && tasks > 1 ? static_cast<double>(tasks - 1) * 86400.0 / arrival_s : 0;
  }
};
Result<WorkloadRate> MeasureWorkload(const Scenario& scenario, Tokens limit = 0);

// One replica's peak decode rate, tokens a second, the throughput bounds'
// ceiling: the most, over batch sizes 1, 2, 4, ... up to max_num_seqs (and
// the token budget), of the tokens a step advances over its time, every
// sequence at context 1. Speculating, a step verifies k + 1 query tokens a
// sequence (a tree's num_draft_tokens), the cost model adding the draft, and
// advances E (SpeculativeDecoding). 0 without a cost model.
double PeakDecodeTokensPerS(const SimulationConfig& config);

// The window a plan simulates. "busiest-hour": the hour [start_s, start_s +
// 3600) of the run's clock (a task's arrival minus the first's, divided by
// trace.load) holding the most task arrivals (the earliest such hour), plus
// the tasks arriving in the warm-up before it (kPlanWarmupS), which fill the
// caches and queues: simulated with it but not counted in its latencies or
// its $/task (WorkloadRate::warmup). "all": every task.
inline constexpr Seconds kPlanWindowS = 3600;
inline constexpr Seconds kPlanWarmupS = 600;
struct PlanWindow {
  std::string kind = "all";
  Seconds start_s = 0;
  Seconds end_s = 0;
  std::int64_t tasks = 0;         // in the window, warm-up included
  std::int64_t warmup_tasks = 0;  // of which in the warm-up
  std::int64_t all_tasks = 0;     // in the trace
  double load = 1;                // the trace.load simulated
  // Per task of the window's trace, in its order: true for the warm-up's.
  std::vector<bool> warmup;
};

// The scenario text that simulates `window_kind` of the scenario's trace
// (scenario parsed from `text`): for "all", `text` (with trace.load set to
// `load`); for "busiest-hour", the window's tasks written to `trace_path`
// (the native format, block hashes kept) and the scenario's trace pointed
// at it. `load` replaces trace.load (the target daily rate). Fills `window`.
Result<std::string> WindowScenarioText(const std::string& text, const Scenario& scenario,
                                       const std::string& window_kind, double load,
                                       const std::string& trace_path, PlanWindow* window);

// How one candidate was decided.
struct CandidateOutcome {
  PlanCandidate candidate;
  // "feasible", "slo_not_met", "pruned", "no_fit", "format", "uncalibrated",
  // "not_applicable" or "error"; an API candidate: "feasible",
  // "slo_not_met", "slo_not_evaluated" (a target without a given latency)
  // or "error".
  std::string status;
  std::string reason;  // one sentence: why feasible or not, with the numbers
  // Why a candidate is "slo_not_met", for scripts: "context_limit" (requests
  // refused over the model's or the pool's length: no replica count serves
  // the tasks whole), "overloaded" (the replica count that came closest is
  // behind the arrivals and misses no target, or none was given) or "slo"
  // (it misses a latency target); empty for any other status.
  std::string cause;
  bool uncalibrated = false;
  // The regime of the profile's validation the candidate falls in
  // (CostModelInfo::regime) and the median error of its published runs,
  // leaving their model out where the profile has that (else in sample);
  // none when no run of the regime was replayed (self-hosted candidates that
  // got as far as the calibration check).
  std::string validation_regime;
  std::optional<double> validation_median_error;
  bool weakly_validated = false;  // the run would warn `weakly_validated`
  double usd_per_gpu_hour = 0;
  // Where that price comes from: "--gpu-price", "the scenario's
  // deployment.usd_per_gpu_hour", or the GPU catalog's source and date.
  std::string price_source;
  int min_replicas = 0;                  // the throughput bound (0 when not computed)
  int max_replicas = 0;                  // max_gpus / tensor_parallel
  double peak_decode_tokens_per_s = 0;   // per replica
  double peak_prefill_tokens_per_s = 0;  // per replica (the prefill bound)
  int simulations = 0;
  // At the chosen replica count (feasible), or the largest (slo_not_met):
  int replicas = 0;
  double usd_per_task = 0;
  double usd_per_day = 0;
  double ttft_p90_s = 0;
  std::vector<SloCheck> slo;
  // The warnings of that run, as simulate lists them (of the measured
  // tasks: the busiest hour's warm-up left out).
  std::vector<RunWarning> warnings;
  bool priced = false;      // an API candidate's bill was computed
  bool ttft_given = false;  // an API candidate's ttft_p90_s came from --api-latency
  bool simulated() const { return simulations > 0; }
  bool feasible() const { return status == "feasible"; }
  int gpus() const { return replicas * candidate.tensor_parallel; }
};

// Every candidate of the space for `scenario`, in index order: the
// self-hosted ones, then one per --api model in the order given. Errors: an
// unknown GPU id or format (naming the flag and the value); an --api model
// not in the bundled price sheet (with "did you mean"), or given twice; an
// --api-latency model that is not an --api model.
Result<std::vector<PlanCandidate>> EnumerateCandidates(const Scenario& scenario,
                                                       const PlanSpace& space);

// Decides one candidate (above; an API candidate by DecideApiCandidate).
// `text` is the scenario's JSON text (read from scenario.source); runs share
// `workloads`.
CandidateOutcome DecideCandidate(const std::string& text, const Scenario& scenario,
                                 const PlanSpace& space, const WorkloadRate& rate,
                                 const PlanCandidate& candidate, WorkloadCache& workloads);

// An API candidate: the window's tasks, after the context policy, billed
// through the provider's caching rules at the bundled list prices (API mode,
// docs/billing.md#api-mode; every call at the candidate's model). $/task =
// the window's bill / its tasks (with a warm-up, rate.warmup: the measured
// tasks' calls / their number, plus the bill beyond the calls / all tasks),
// $/day = $/task x tasks per day, as for a self-hosted candidate billed
// busy-only. There is no latency model: each
// latency target is compared with the figure --api-latency gives for it
// (its own name, else its latency's bare name); the candidate is
// "slo_not_evaluated" when a target has none, else feasible when every
// figure meets its target, "slo_not_met" when one does not.
CandidateOutcome DecideApiCandidate(const std::string& text, const Scenario& scenario,
                                    const PlanSpace& space, const WorkloadRate& rate,
                                    const PlanCandidate& candidate, WorkloadCache& workloads);

// The API candidates of `space` (one per --api model), numbered from
// `first_index`; the errors EnumerateCandidates names for them.
Result<std::vector<PlanCandidate>> ApiCandidates(const PlanSpace& space, std::int64_t first_index);

// "ttft_s.p90 1.234 s <= 5.000 s, tpot_s.p90 ..." (a verdict's words).
std::string SloText(const std::vector<SloCheck>& checks);

// "MODEL:METRIC=SECONDS[,METRIC=SECONDS...]" specs (--api-latency, each
// repeatable and each a comma list; an item whose name has a ':' starts the
// next model) -> latencies by model. METRIC: ttft_s or tpot_s, alone or with
// a statistic (ttft_s.p90). Errors name --api-latency and the item.
Result<std::map<std::string, std::map<std::string, double>>> ParseApiLatency(
    const std::vector<std::string>& specs);

// Decides the candidates with index mod shards == shard on `jobs` threads;
// outcomes in index order, independent of jobs. `progress` (if set) is
// called, serialised, with the number decided so far.
std::vector<CandidateOutcome> DecideCandidates(
    const std::string& text, const Scenario& scenario, const PlanSpace& space,
    const WorkloadRate& rate, const std::vector<PlanCandidate>& candidates, int jobs, int shard = 0,
    int shards = 1, const std::function<void(std::int64_t)>& progress = {});

// What the ranking reads of a decided candidate: built from an outcome
// (RankRowOf) or, by `kvbill merge`, from a row of the plan's JSON
// (cli/plan_doc.cc), so that one ranking orders both.
struct PlanRankRow {
  std::int64_t index = 0;
  std::string status;  // CandidateOutcome::status
  double usd_per_task = 0;
  int gpus = 0;  // 0 for an API candidate
  // Unknown for an API candidate without a given ttft (--api-latency).
  std::optional<double> ttft_p90_s;
};
PlanRankRow RankRowOf(const CandidateOutcome& outcome);

// Indexes into `rows`: those with `status` by $/task (ties: fewer GPUs, then
// index); and the Pareto front of $/task against TTFT p90 among the feasible
// ones with a known TTFT (no other is at least as cheap and as fast and
// better in one), cheapest first.
std::vector<std::size_t> RankByCost(const std::vector<PlanRankRow>& rows,
                                    std::string_view status = "feasible");
std::vector<std::size_t> ParetoFront(const std::vector<PlanRankRow>& rows);

// The same on outcomes (through RankRowOf).
std::vector<std::size_t> RankFeasible(const std::vector<CandidateOutcome>& outcomes);
std::vector<std::size_t> ParetoFront(const std::vector<CandidateOutcome>& outcomes);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_PLAN_H_
