// Which measured kernel curve times a format as a GPU runs it (the format
// matrix, hardware/format_support.h), and the collectives of tensor and
// expert parallelism. Used by the calibrated operator model.
//
// Formats (weights streamed at their stored width, multiplied at the
// computed precision):
//   BF16, W8A8 (FP8)  the GEMM table of that dtype on the GPU (fp8_block for
//                     checkpoints published block-scaled);
//   W4A4 (FP4)        no FP4 table: the fp8 curve's efficiencies at the FP4
//                     peak;
//   WnA16             weight-only kernels (Marlin): the bf16 curve at the
//                     stored width, its compute rate times a factor fitted
//                     in the engine profile (no table measures them);
// and fused MoE: the table of the kernel that runs the experts (the
// matrix's experts_table: bf16 Triton, fp8 block Triton, int4 Marlin, MXFP4
// Triton) at the experts' stored width, from the GPU's curves (H100's for a
// GPU without any); where the GPU has no table of that kernel (A100 has
// only bf16 MoE), its bf16 table at the stored width.
//
// Collectives: the GPU's own tables (vLLM's all-reduce; NCCL all-to-all and
// all-gather) at that GPU count; else a ring over the GPU's link bandwidth
// at the latency and bus-bandwidth efficiency H100 NVLink reaches in its
// tables (uncalibrated).
//
// Pure: no I/O; results carry a FormatUse saying what times each part.
#ifndef KVBILL_COST_FORMAT_KERNELS_H_
#define KVBILL_COST_FORMAT_KERNELS_H_

#include <string>

#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/kernel_curves.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"

namespace kvbill {

// The compute rates of dense weight-only GEMMs (Marlin), which no GEMM
// table measures: fitted end to end in the engine profile
// (ProfileParameters::weight_only_8bit_rate and _4bit_rate; 2-bit weights
// use the 4-bit rate). `profile` names it for the notes.
struct WeightOnlyRates {
  double bits8 = 1;
  double bits4 = 1;
  std::string profile;
};

// The GEMM curve for weights in `format` as `run` says the GPU runs them.
// `base` holds the curves used (the GPU's, or H100's for a GPU without);
// fp4_over_fp8 is the GPU's FP4 peak over its FP8 peak; weight-only
// formats compute at `weight_only`'s rate of the bf16 curve.
struct TimedGemm {
  GemmCurve curve;
  FormatUse use;
};
TimedGemm GemmForFormat(const GpuKernelCurves& base, const FormatRun& run,
                        const ElementFormat& format, bool fp8_checkpoint, double fp4_over_fp8,
                        const WeightOnlyRates& weight_only, const std::string& part);

// The fused-MoE curve for routed experts stored in `format`. The curve's
// compute coefficients already carry any rate factor; fp8_rate says whether
// MoeFeatures should use the fp8 peak.
struct TimedMoe {
  LinearCurve curve;
  bool fp8_rate = false;
  FormatUse use;
  // The table whose measured expert shapes may time the experts as they are
  // (GpuKernelCurves::MoeTableFor): the GPU's own table of the kernel that
  // runs them at their stored width; empty when the curve is borrowed,
  // scaled or read at another width.
  std::string shape_table;
};
Result<TimedMoe> MoeForFormat(const GpuKernelCurves& base, const FormatRun& run,
                              const ElementFormat& format, double fp4_over_fp8);

// A collective of `kind` ("all_reduce", "all_to_all", "all_gather") over
// `gpus` GPUs: the measured table of `own` when it has that count, else a
// ring over gpu.link_bytes_per_s, or over gpu.network_bytes_per_s when the
// GPUs outnumber what the link joins (`*measured` false, `*how` why).
CollectiveCurve CollectiveFor(const std::string& kind, int gpus, const GpuSpec& gpu,
                              const GpuKernelCurves* own, bool* measured, std::string* how);

}  // namespace kvbill

#endif  // KVBILL_COST_FORMAT_KERNELS_H_
