// API runs: a scenario with "pricing" billed through a provider's prompt
// cache and list prices (cost/api_replay.h) instead of served on the
// deployment, and its outcome in the engine's per-task metrics, so that
// simulate, compare, sweep, merge and check treat both modes alike.
//
// Mapping onto TaskMetrics and RunSummary (docs/billing.md#api-mode):
//   prompt_tokens   the whole prompt: uncached input + cache writes + cache reads
//   cached_tokens   cache reads
//   prefill_tokens  uncached input + cache writes (what the provider computed)
//   output_tokens   output
//   cost_usd        the task's calls at list price
//   hit_rate        cache reads / prompt
// Fields only the engine measures (KV bytes, GPU-seconds, times, TTFT,
// preemptions, evictions) stay 0; budgets on them are errors (budget.h).
#ifndef KVBILL_SCENARIO_API_RUN_H_
#define KVBILL_SCENARIO_API_RUN_H_

#include <optional>
#include <string>
#include <vector>

#include "kvbill/cost/api_replay.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/metrics/task_metrics.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {

struct ApiPricingRun {
  ModelPrice price;  // the sheet entry of pricing.model (calls naming no model)
  ApiReplayOutcome replay;
  // Planned requests, and those the context policy edited (Request::edited):
  // for the policy_no_effect warning.
  std::int64_t requests = 0;
  std::int64_t edited_requests = 0;
  // Planned requests whose recorded output is a streaming placeholder
  // (Request::output_is_placeholder): for the placeholder_outputs warning.
  std::int64_t placeholder_outputs = 0;
};

// Replays `requests` (requests[i] of tasks[i], as PlanRequests gives them)
// under `pricing`: `pricing.model` resolved in `sheet`, the provider's cache
// (or none when !pricing.cache_enabled: every prompt token uncached, no warm
// start), recorded cache writes priced at the 1-hour rate when the provider
// is anthropic and ttl_s is 3600. With pricing.per_call_models, a request
// that names a model (Request::model) is priced at that model and goes
// through that model's own cache (the scenario's provider rules when the
// sheet gives it the scenario model's provider, else its own provider's);
// requests naming none, and all requests without per_call_models, use
// `pricing.model`. Errors: `no price for model "x"` (for a request's model
// prefixed with `task "T": request N: `), the provider cache's parameter
// errors, an amount that overflows.
Result<ApiPricingRun> RunApiPricing(const ScenarioPricing& pricing, const PriceSheet& sheet,
                                    const std::vector<Task>& tasks,
                                    const std::vector<std::vector<Request>>& requests);

// Each task's even share of what the bill holds beyond the calls (gemini's
// explicit caches: creation and storage, CacheCreationCost), in task order,
// summing exactly to it (the first tasks take the remainder's pico-dollars).
// A task's cost is its calls plus its share, as `plan` prices an API
// candidate: so the tasks add up to the bill, and a mode that moves money
// from the calls to the caches does not look cheaper per task.
std::vector<Money> CacheCreationShares(const ApiReplayOutcome& replay);

// Per-task metrics of an API replay, in task order (mapping above); a
// task's cost_usd is its calls plus its CacheCreationShares share.
std::vector<TaskMetrics> ApiTaskMetrics(const ApiReplayOutcome& replay);

// The run summary of those metrics (mapping above); cost_usd is the
// replay's whole bill, which the tasks' costs add up to (idle_usd 0).
RunSummary ApiRunSummary(const std::vector<TaskMetrics>& tasks, const ApiReplayOutcome& replay);

// The same provider's cheaper tier of a sheet model id, or nullopt. Tried
// in order, the first candidate that is a model of `sheet` with the same
// provider and a lower input price wins: "opus" -> "sonnet" in the id,
// "sonnet" -> "haiku", "claude-sonnet-4-5" (for an opus), "claude-haiku-4-5"
// (for a sonnet), the id + "-mini", "-codex" -> "-mini", "-mini" -> "-nano",
// "-pro" -> "-flash", "-flash" -> "-flash-lite". So claude-opus-4-5 ->
// claude-sonnet-4-5 -> claude-haiku-4-5, gpt-5 -> gpt-5-mini -> gpt-5-nano,
// gpt-5-codex -> gpt-5-mini, gemini-2.5-pro -> gemini-2.5-flash.
std::optional<std::string> CheaperTier(const PriceSheet& sheet, const std::string& model_id);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_API_RUN_H_
