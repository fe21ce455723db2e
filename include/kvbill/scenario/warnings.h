// When an answer cannot be trusted, the output says so: each warning a code
// scripts can match on (and budgets can bound, warnings.<code>) and a
// sentence for people. The codes and the conditions that raise them are
// listed in docs/engine.md (#warnings).
#ifndef KVBILL_SCENARIO_WARNINGS_H_
#define KVBILL_SCENARIO_WARNINGS_H_

#include <algorithm>
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
// pool_beyond_memory, block_size_unserved, overloaded, slo_violated, idle_dominant,
// policy_no_effect, pricing_model_unused (API runs), placeholder_outputs, unsupported_format,
// timing_assumed, speculative_acceptance_assumed, linear_state_unmeasured, weakly_validated,
// uncalibrated.
const std::vector<std::string>& WarningCodes();

// The median queueing delay above which a run is `overloaded`, seconds; the
// mean above it is one too (a backlog a part of the requests carries: the
// preempted and recomputed, while the rest pass at once).
inline constexpr Seconds kOverloadedQueueP50Seconds = 1.0;
// The 90th percentile above which a run is `overloaded` too: a tenth of the
// requests wait past it while the median and the mean stay low (preempted
// requests recomputed behind the rest, the median admitted at once).
inline constexpr Seconds kOverloadedQueueP90Seconds = 2.0;
inline bool Overloaded(const Summary& queue_s) {
  return queue_s.count > 0 &&
         (queue_s.p50 > kOverloadedQueueP50Seconds || queue_s.mean > kOverloadedQueueP50Seconds ||
          queue_s.p90 > kOverloadedQueueP90Seconds);
}
// The figure Overloaded judged by, in units of the median's bound: the
// largest of the median, the mean and the 90th percentile scaled to it.
inline Seconds OverloadedDelay(const Summary& queue_s) {
  return std::max<Seconds>({queue_s.p50, queue_s.mean,
                            queue_s.p90 * kOverloadedQueueP50Seconds / kOverloadedQueueP90Seconds});
}
// The share of the bill idle GPUs may take before `idle_dominant`.
inline constexpr double kIdleDominantShare = 0.5;

// The limit a run refused requests over, in words: "the 16,255 tokens
// SGLang serves" when SGLang's pool capped it (pool_context_len > 0), else
// "max_model_len 40,960".
std::string RequestLimitText(Tokens pool_context_len, Tokens max_model_len);

// The warnings of one engine run of `scenario`, in WarningCodes order (each
// code at most once).
std::vector<RunWarning> EngineRunWarnings(const Scenario& scenario, const SimulationTotals& totals,
                                          const RunSummary& summary);

// The warnings of one API run (a scenario with "pricing"): context_limit,
// pricing_model_unused, policy_no_effect, placeholder_outputs.
std::vector<RunWarning> ApiRunWarnings(const Scenario& scenario, const ApiPricingRun& run);

// Of those, the ones an API replay raises whatever its scenario: prompts
// above the model's window (context_limit) and placeholder outputs; for
// replays without a scenario (kvbill whatif's columns).
std::vector<RunWarning> ApiReplayWarnings(const ApiPricingRun& run);

// Either of the above, as the outcome was run.
std::vector<RunWarning> RunWarnings(const Scenario& scenario, const ScenarioOutcome& outcome);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_WARNINGS_H_
