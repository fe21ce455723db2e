// The model a scenario names, with its model.set edits applied: one place
// for what the scenario's rules, warnings, levers, plan and run load.
// Internal to src/scenario/.
#ifndef KVBILL_SRC_SCENARIO_SCENARIO_MODEL_H_
#define KVBILL_SRC_SCENARIO_SCENARIO_MODEL_H_

#include <vector>

#include "kvbill/model/hf_config.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {

// model.set as config overrides, in the scenario's order.
std::vector<ConfigOverride> ScenarioOverrides(const Scenario& s);

// LoadModel(s.model.name, ScenarioOverrides(s), s.model.text_only).
Result<ModelShape> LoadScenarioModel(const Scenario& s);

}  // namespace kvbill

#endif  // KVBILL_SRC_SCENARIO_SCENARIO_MODEL_H_
