// The spec-sheet roofline as a CostModel (cost_model.h): an iteration takes
//
//   max(bytes / achieved bandwidth, FLOPs / achieved compute) + overhead
//
// with bytes and FLOPs from Roofline (roofline.h). A sequence's own time is
// moving its own KV bytes (reads and writes) at the achieved bandwidth. In a
// run of decode steps both terms are linear in the step index, so step time
// is linear on each side of the step where compute overtakes memory (or the
// reverse): at most two lines per stretch between KV breakpoints.
#ifndef KVBILL_COST_ROOFLINE_COST_MODEL_H_
#define KVBILL_COST_ROOFLINE_COST_MODEL_H_

#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/roofline.h"

namespace kvbill {

class RooflineCostModel final : public CostModel {
 public:
  explicit RooflineCostModel(Roofline roofline) : r_(std::move(roofline)) {}

  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override;
  void DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                      DecodeLines* out) const override;
  Seconds RecomputeSeconds(Tokens start, Tokens n) const override;
  std::string name() const override { return "roofline"; }
  CostModelInfo Describe() const override;

  const Roofline& roofline() const { return r_; }

 private:
  Roofline r_;
};

}  // namespace kvbill

#endif  // KVBILL_COST_ROOFLINE_COST_MODEL_H_
