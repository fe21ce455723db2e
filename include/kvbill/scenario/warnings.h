// When an answer cannot be trusted, the output says so: each warning a code
// scripts can match on (and budgets can bound, warnings.<code>) and a
// sentence for people. The codes and the conditions that raise them are
// listed in docs/engine.md (#warnings).
#ifndef KVBILL_SCENARIO_WARNINGS_H_
#define KVBILL_SCENARIO_WARNINGS_H_

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/engine/simulator.h"
#include "kvbill/metrics/task_metrics.h"
#include "kvbill/scenario/api_run.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {

struct RunWarning {
  std::string code;     // "uncalibrated", ...
  std::string message;  // one sentence: what is wrong and what to do
};

// Every code, in the order a run lists its warnings: context_limit,
// pool_beyond_memory, block_size_unserved, kv_format_default, config_defaulted, overloaded,
// slo_violated, idle_dominant, policy_no_effect, pricing_model_unused (API runs),
// placeholder_outputs, unsupported_format, timing_assumed, speculative_acceptance_assumed,
// speculation_slower, linear_state_unmeasured, speculative_host_waits, weakly_validated,
// uncalibrated.
const std::vector<std::string>& WarningCodes();

// The `overloaded` rule (docs/engine.md#warnings), stated here once: a run
// is overloaded when its median or mean queueing delay is above
// kOverloadedQueueP50Seconds or its 90th percentile above
// kOverloadedQueueP90Seconds. The mean catches a backlog a part of the
// requests carries (the preempted and recomputed, while the rest pass at
// once); the 90th percentile a smaller such part.
inline constexpr Seconds kOverloadedQueueP50Seconds = 1.0;
inline constexpr Seconds kOverloadedQueueP90Seconds = 2.0;

// The bound of that rule a run's queueing delay crossed.
struct OverloadedBound {
  enum class Statistic { kMedian, kMean, kP90 };
  Statistic statistic = Statistic::kMedian;
  Seconds delay = 0;  // that statistic of queue_s
  Seconds bound = 0;  // the bound it is above
};
// The first bound `queue_s` (a run's queueing delays) is above, in the
// order median, mean, 90th percentile; nullopt when it is above none or
// counts no request.
inline std::optional<OverloadedBound> OverloadedBy(const Summary& queue_s) {
  using S = OverloadedBound::Statistic;
  if (queue_s.count <= 0) return std::nullopt;
  if (queue_s.p50 > kOverloadedQueueP50Seconds) {
    return OverloadedBound{S::kMedian, queue_s.p50, kOverloadedQueueP50Seconds};
  }
  if (queue_s.mean > kOverloadedQueueP50Seconds) {
    return OverloadedBound{S::kMean, queue_s.mean, kOverloadedQueueP50Seconds};
  }
  if (queue_s.p90 > kOverloadedQueueP90Seconds) {
    return OverloadedBound{S::kP90, queue_s.p90, kOverloadedQueueP90Seconds};
  }
  return std::nullopt;
}
inline bool Overloaded(const Summary& queue_s) { return OverloadedBy(queue_s).has_value(); }
// In a few words, the bound an overloaded run crossed and the figures
// beside it, to one or two decimals: "p90 queueing delay 2.2 s, above 2 s;
// median 0.01 s, mean 0.90 s" (plan's verdicts). "" when not overloaded.
std::string OverloadedFigures(const Summary& queue_s);
// The figure Overloaded judged by, in units of the median's bound: the
// largest of the median, the mean and the 90th percentile scaled to it.
inline Seconds OverloadedDelay(const Summary& queue_s) {
  return std::max<Seconds>({queue_s.p50, queue_s.mean,
                            queue_s.p90 * kOverloadedQueueP50Seconds / kOverloadedQueueP90Seconds});
}
// The share of the bill idle GPUs may take before `idle_dominant`.
inline constexpr double kIdleDominantShare = 0.5;

// The limit a run refused requests over, in words (SimulationTotals'
// request_len_limit, pool_context_len and max_model_len): "the 16,254
// tokens SGLang serves" when SGLang's pool capped it, "the 8,190 tokens
// SGLang serves at max_model_len 8,192" when its context length did, else
// "max_model_len 40,960".
std::string RequestLimitText(Tokens request_len_limit, Tokens pool_context_len,
                             Tokens max_model_len);

// The warnings of one engine run of `scenario`, in WarningCodes order (each
// code at most once).
std::vector<RunWarning> EngineRunWarnings(const Scenario& scenario, const SimulationTotals& totals,
                                          const RunSummary& summary);

// The warnings of one API run (a scenario with "pricing"), in
// ApiWarningCodes order.
std::vector<RunWarning> ApiRunWarnings(const Scenario& scenario, const ApiPricingRun& run);

// The codes ApiRunWarnings can raise: context_limit, pricing_model_unused,
// policy_no_effect, placeholder_outputs (the warnings.<code> budgets an API
// run measures, budget.h).
const std::vector<std::string>& ApiWarningCodes();

// Of those, the ones an API replay raises whatever its scenario: prompts
// above the model's window (context_limit) and placeholder outputs; for
// replays without a scenario (kvbill whatif's columns).
std::vector<RunWarning> ApiReplayWarnings(const ApiPricingRun& run);

// placeholder_outputs for `count` turns whose recorded output is a
// streaming stub, as an API bill prices them (none when count is 0); for
// priced logs without a replay (kvbill whatif's recorded column).
std::vector<RunWarning> PlaceholderOutputsWarning(std::int64_t count);

// Why vLLM would not start the run's deployment: its KV pool cannot hold
// one max_model_len request (check_enough_kv_cache_memory; SGLang starts
// and refuses the longer requests instead, pool_context_len); "" when it
// would. Part of context_limit; kvbill check fails such a run.
std::string VllmRefusesToStart(const SimulationTotals& totals);

// Either of the above, as the outcome was run.
std::vector<RunWarning> RunWarnings(const Scenario& scenario, const ScenarioOutcome& outcome);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_WARNINGS_H_
