#include "kvbill/scenario/warnings.h"

namespace kvbill {

std::vector<RunWarning> EngineRunWarnings(const Scenario& scenario,
                                          const SimulationTotals& result) {
  std::vector<RunWarning> out;
  const CostModelInfo& model = result.cost_model;
  if (!model.calibrated) {
    std::string why;
    if (model.profile == "roofline") {
      why =
          "iteration times come from the spec-sheet roofline (bandwidth_efficiency or "
          "compute_efficiency is set), which has no CPU or scheduling overheads and is "
          "optimistic under load";
    } else {
      why = "iteration times come from the \"" + model.profile +
            "\" profile without measurements behind it for this deployment";
      for (const std::string& note : model.notes) why += "; " + note;
    }
    out.push_back({"uncalibrated", why + " (" + scenario.source +
                                       "; docs/validation.md lists what is calibrated)"});
  }
  return out;
}

}  // namespace kvbill
