#include "scenario/scenario_model.h"

namespace kvbill {

std::vector<ConfigOverride> ScenarioOverrides(const Scenario& s) {
  std::vector<ConfigOverride> overrides;
  for (const auto& [key, text] : s.model.set) overrides.push_back(ConfigOverride{key, text});
  return overrides;
}

Result<ModelShape> LoadScenarioModel(const Scenario& s) {
  return LoadModel(s.model.name, ScenarioOverrides(s), s.model.text_only);
}

}  // namespace kvbill
