// When an answer cannot be trusted, the output says so: each warning a code
// scripts can match on (and budgets can bound) and a sentence for people.
// The codes and the conditions that raise them are listed in docs/engine.md
// (#warnings).
#ifndef KVBILL_SCENARIO_WARNINGS_H_
#define KVBILL_SCENARIO_WARNINGS_H_

#include <string>
#include <vector>

#include "kvbill/engine/simulator.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {

struct RunWarning {
  std::string code;     // "uncalibrated", ...
  std::string message;  // one sentence: what is wrong and what to do
};

// The warnings of one engine run of `scenario`, in a fixed order.
std::vector<RunWarning> EngineRunWarnings(const Scenario& scenario, const SimulationTotals& result);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_WARNINGS_H_
