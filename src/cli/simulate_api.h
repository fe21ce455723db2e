// The API mode of `kvbill simulate` (a scenario with "pricing"): the trace
// replayed against a provider's cache rules and list prices
// (cost/api_replay.h) instead of the engine. docs/billing.md#api-mode.
#ifndef KVBILL_CLI_SIMULATE_API_H_
#define KVBILL_CLI_SIMULATE_API_H_

#include <string>

#include "kvbill/scenario/scenario.h"

namespace kvbill::cli {

// Runs and renders; returns the exit status. Precondition: scenario.pricing.
// format is table, json or csv; out_dir, when not empty, also receives
// simulate.json and tasks.csv.
int RunSimulateApi(const Scenario& scenario, const std::string& format, bool with_requests,
                   const std::string& out_dir);

// The last step of both modes of `kvbill simulate`: writes simulate.json and
// tasks.csv into out_dir (when not empty, creating it), then prints `text`.
// Returns the exit status.
int FinishSimulate(const std::string& out_dir, const std::string& json_text,
                   const std::string& tasks_csv, const std::string& text);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_SIMULATE_API_H_
