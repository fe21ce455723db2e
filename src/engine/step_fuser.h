// Event skipping: decode steps of a fixed batch summed in closed form.
//
// Contract (docs/engine.md, "Event skipping"). When every running sequence
// of a replica is decoding and the front waiting request cannot be
// admitted, the batch cannot change until a sequence receives its last
// token, a decode step needs a block the pool cannot supply, the pages that
// windowed groups free let the waiting request in, or something arrives from
// outside (a release, a pin expiring, another replica finishing). MaxSteps
// gives the first three bounds; the coordinator gives the outside one to
// Sum, which adds up the steps line by line from the cost model's
// DecodeLinesFor (step time, each sequence's own time, its KV bytes: all
// linear in the step index within a line) and stops at the first step that
// ends at or after it. Apply then applies the steps to the pool in the
// step-by-step engine's order, so the same blocks are allocated, freed,
// cached and evicted. The fused block ends exactly where step mode would
// next see something new: both give the same requests, tokens and times
// (to 1e-9, the sums being closed forms).
#ifndef KVBILL_ENGINE_STEP_FUSER_H_
#define KVBILL_ENGINE_STEP_FUSER_H_

#include <vector>

#include "engine/replica.h"
#include "engine/scheduler.h"
#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/engine/simulator.h"

namespace kvbill::engine {

class StepFuser {
 public:
  StepFuser(const SimulationConfig& config, const CostModel& cost, const Roofline& roofline,
            const KvGroupLayout& layout, const Scheduler& scheduler);

  // The most decode steps rep's batch can run unchanged, outside events
  // aside; below 2 when it cannot be fused now (step mode, a prefill, a
  // sequence about to finish, an admission possible).
  Tokens MaxSteps(const Replica& rep) const;

  // Sums up to k_max steps of rep's running batch from `now`, stopping at
  // the first step that ends at or after `until` (kNever: no such stop);
  // fills *work (one entry per running sequence: bytes and time shares of
  // the steps) and *elapsed; returns the steps.
  Tokens Sum(const Replica& rep, Seconds now, Tokens k_max, Seconds until, std::vector<Work>* work,
             long double* elapsed);

  // Applies a fused block of `steps` steps, summed into *work, to rep: the
  // pool's allocations and frees, the sequences' peaks; *work becomes
  // rep.work (the buffers are swapped).
  void Apply(Replica& rep, Tokens steps, std::vector<Work>* work, long double elapsed);

 private:
  // The most steps (up to k_max) during which the pages windowed groups free
  // cannot let the waiting request in.
  Tokens StepsBeforeAdmission(const Replica& rep, Tokens k_max) const;
  // SGLang: the most steps (up to k_max) before the scheduler pass that
  // could admit the front waiting request as the reservation falls.
  Tokens StepsBeforeSglangAdmission(const Replica& rep, Tokens k_max) const;

  const SimulationConfig& config_;
  const CostModel& cost_;
  const Roofline& roofline_;
  const KvGroupLayout& layout_;
  const Scheduler& scheduler_;
  // Buffers kept from call to call, so that fusing allocates nothing.
  std::vector<long double> kv0_, kv_slope_, own_;
  std::vector<Tokens> contexts_;
  DecodeLines lines_;
  std::vector<DecodingSeq> decoding_;
};

}  // namespace kvbill::engine

#endif  // KVBILL_ENGINE_STEP_FUSER_H_
