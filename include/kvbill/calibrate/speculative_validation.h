// The speculative-decoding records of the calibration data in
// docs/validation.md: which are replayed (with the method's default
// acceptance rate, never fitted) and which are not and why, the replayed
// ones against what was measured, and their gain over the same run without
// speculation where the data has that run.
#ifndef KVBILL_CALIBRATE_SPECULATIVE_VALIDATION_H_
#define KVBILL_CALIBRATE_SPECULATIVE_VALIDATION_H_

#include <string>
#include <vector>

#include "kvbill/calibrate/measurements.h"
#include "kvbill/calibrate/profile_fit.h"
#include "kvbill/calibrate/replay.h"
#include "kvbill/cost/engine_profile.h"

namespace kvbill {

// Whether the record's engine flags turn speculative decoding on
// (--speculative-config, --speculative-algorithm).
bool IsSpeculativeRecord(const Measurement& m);

// Whether two records ran the same requests as far as their replays can
// tell: the same dataset, numbers of prompts and requests and token totals
// (neither with per-request lengths of its own). The section's gains then
// replay the run without speculation on the requests drawn for the run
// with it.
bool SameRequests(const Measurement& a, const Measurement& b);

// The same run without speculation as `spec`: the same page, engine,
// workload, model, GPU and engine flags but speculation's; failing that,
// one whose flags differ from those only in flags a vLLM replay runs alike
// (`--performance-mode interactivity`, `--language-model-only`), which
// *differs then names ("--language-model-only --performance-mode=
// interactivity"; empty for an exact match). nullptr when there is none.
const Measurement* SpeculationBaseline(const Measurement& spec,
                                       const std::vector<Measurement>& records,
                                       std::string* differs);

// The section's markdown. `records`: every record read; `plans`: the
// replayable records of the fitted engine (speculative and not);
// `skipped`: why the others were not replayed; `profile`: the fitted one.
std::string SpeculativeValidationMarkdown(const std::vector<Measurement>& records,
                                          const std::vector<ReplayPlan>& plans,
                                          const std::vector<SkippedRecord>& skipped,
                                          const EngineProfile& profile, bool fitted = false);

}  // namespace kvbill

#endif  // KVBILL_CALIBRATE_SPECULATIVE_VALIDATION_H_
