// Levers: the changes to a scenario that `kvbill compare` and `kvbill report`
// weigh against its baseline — KV quantization, prefix caching toggled,
// dropping old tool results, summarisation, architecture — and a runner that
// simulates a list of such variants in parallel.
//
// A variant is a list of settings (JSON pointer -> JSON text of the value)
// applied to the scenario's text with WithSetting (sweep.h), so it is exactly
// what a user would get by editing the scenario file.
#ifndef KVBILL_SCENARIO_LEVERS_H_
#define KVBILL_SCENARIO_LEVERS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvbill/scenario/run.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/scenario/warnings.h"

namespace kvbill {

struct Lever {
  std::string name;                                           // e.g. "fp8 KV cache"
  std::vector<std::pair<std::string, std::string>> settings;  // pointer -> JSON value
  // Why the lever cannot apply to this deployment (a format no engine runs
  // on its GPU, hardware/format_support.h); empty when it can.
  std::string not_applicable = {};
  // The lever the variant weighs, when the variant takes out something the
  // baseline has ("prefix caching off" weighs "prefix caching"): its value
  // is then the variant's cost minus the baseline's. Empty: the variant
  // adds the lever, whose value is the baseline's cost minus the variant's.
  std::string removes = {};
  // A context-policy lever: why it cannot apply when the variant's planned
  // prompts are the baseline's, request for request (RunLevers checks).
  // For summarise RunLevers says instead which of what it needs the trace
  // lacks: a prompt past its threshold ("no prompt passes 65,536 tokens"),
  // a later turn to act before ("every task has a single turn, ..."), or
  // enough context past the system and tools spans to shorten.
  std::string no_effect = {};
};

// The settings that turn speculation on (`method_json`, a
// deployment.speculative value) in `s`, as the engine would run it: SGLang
// turns its overlap scheduler off to speculate, so a scenario that sets
// deployment.async_scheduling true on SGLang gets it back to the engine's
// default (null) beside the draft, instead of a combination it refuses.
std::vector<std::pair<std::string, std::string>> SpeculationOnSettings(
    const Scenario& s, const std::string& method_json);

// A lever's value: dollars per task saved against the same scenario without
// it (LeverOutcome, levers.h), and that saving as a fraction of the cost
// without it. Precondition: both runs exist.
struct LeverValue {
  std::string lever;  // what is weighed: Lever::removes, else its name
  double without_usd_per_task = 0;
  double with_usd_per_task = 0;
  double saves_usd_per_task = 0;  // without - with; negative: it costs
  double saves_fraction = 0;      // saves / without; 0 when without is 0
};
LeverValue ValueOf(const Lever& lever, double baseline_usd_per_task, double variant_usd_per_task);

// The levers that apply to `scenario`, in a fixed order: fp8 and nvfp4 KV
// (when the KV format is wider; marked not_applicable, with the reason,
// where no engine runs that KV format on the scenario's GPU), prefix
// caching toggled, dropping tool
// results older than 3 turns, summarising past 64k tokens (each unless the
// scenario's policy already is that; over another policy than keep_all the
// lever replaces it, named "... instead of <kind>", and the baseline's own
// policy is weighed by turning it off), half the KV heads and a latent KV
// cache (when the model has attention KV heads to shrink).
// For a scenario with "pricing" (API mode) instead: 1-hour cache writes
// (anthropic, unless already), caching toggled, the same two context
// policies, and the model's cheaper tier (CheaperTier, api_run.h) when the
// bundled sheet has one.
std::vector<Lever> Levers(const Scenario& scenario);

// The scenario text with every setting of `lever` applied in order.
Result<std::string> ApplyLever(const std::string& scenario_text, const Lever& lever);

struct LeverOutcome {
  Lever lever;
  std::optional<ScenarioOutcome> run;  // set when the variant ran
  // Why it did not, otherwise empty; "not applicable: <reason>" for a
  // lever that cannot apply (it is not run).
  std::string error;
  // The run's warnings (RunWarnings, warnings.h): a variant that overloads
  // the deployment or is refused over the model's limit says so.
  std::vector<RunWarning> warnings = {};
  // Why a variant that ran is not weighed against the baseline (not
  // ranked, no saving): its tasks, or the baseline's, were cut short at the
  // model's limit and the two served different numbers of requests, so
  // their costs per task are of different amounts of work. Empty: weighed.
  std::string not_comparable = {};
};

// Indexes of `outcomes` (outcomes[0] is the baseline; ranked from 1) by the
// lever's value (ValueOf against outcomes[0]), largest saving first, ties in
// their order; levers that did not run (not applicable or failed) or are
// not comparable last, in their order. Precondition: outcomes[0] ran.
std::vector<std::size_t> RankByValue(const std::vector<LeverOutcome>& outcomes);

// Applies each lever to `scenario_text` (read from `source`), parses and runs
// (a lever with `no_effect` whose variant plans the same prompts as the
// baseline, or edits none of the prompts it serves, is marked not
// applicable with that reason; a baseline that served no request leaves
// every lever not applicable, nothing being measured; a variant cut short
// at the model's limit serving another number of requests than the
// baseline is not_comparable)
// the variants on up to `jobs` threads (>= 1). Outcomes come back in the
// order of `levers`; a variant that fails carries its error instead of a run,
// and a lever marked not_applicable is not run.
// Deterministic: the result does not depend on `jobs`. With `workloads`,
// variants that read the same workload share it (RunScenario(s, workloads):
// no request records kept); without, each run reads its own and keeps its
// records.
std::vector<LeverOutcome> RunLevers(const std::string& scenario_text, const std::string& source,
                                    const std::vector<Lever>& levers, int jobs,
                                    WorkloadCache* workloads = nullptr);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_LEVERS_H_
