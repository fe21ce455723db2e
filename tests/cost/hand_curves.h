// Kernel curves simple enough to price by hand, for cost-model tests:
// GEMMs and attention purely memory-bound at 1 TB/s (compute efficiency so
// high that FLOPs cost nothing, smoothness 1 so the two terms add),
// attention 10 us per layer plus its KV read, prefill attention 12 us per
// layer plus its FLOPs at 1 PFLOP/s.
#ifndef KVBILL_TESTS_COST_HAND_CURVES_H_
#define KVBILL_TESTS_COST_HAND_CURVES_H_

#include "kvbill/cost/kernel_curves.h"

namespace kvbill {

inline GpuKernelCurves HandCurves() {
  GpuKernelCurves c;
  c.gpu = "h100-sxm";
  c.spec = KernelSpec{1e12, 1e15, 2e15};
  GemmCurve g;
  g.kernel = "hand";
  g.mem_eff = 1;
  g.compute_eff = 1e9;
  g.smoothness = 1;
  c.gemm["bf16"] = g;
  c.decode_attention["bf16"] = LinearCurve{"hand", {1e-5, 0, 0, 1}, {}};
  c.prefill_attention["bf16"][128] = LinearCurve{"hand", {1.2e-5, 0, 1, 0}, {}};
  c.moe["bf16"] = LinearCurve{"hand", {0, 1, 0, 0, 0}, {}};
  return c;
}

}  // namespace kvbill

#endif  // KVBILL_TESTS_COST_HAND_CURVES_H_
