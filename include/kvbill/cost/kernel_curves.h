// Per-GPU operator curves: the time of one GPU kernel (a GEMM, one layer's
// attention, one fused-MoE layer, one all-reduce) as a function of its shape,
// fitted to measured kernel latencies (shared/data/kernels, NVIDIA
// aiconfigurator's database, Apache-2.0) by `kvbill calibrate kernels`.
// docs/validation.md#kernels gives the forms, the fits and their errors.
//
// The forms follow what the kernels do:
//   GEMM      t = t0 + (tm^q + tc^q)^(1/q) [+ 3 m k / (BW x eq)]
//             tm = bytes / (BW x em), tc = 2 m n k / (peak x ec); the last
//             term is the dynamic quantisation of the activations (fp8).
//   attention and fused MoE: t = coef . features, coefficients >= 0, with the
//             features listed beside each Features function below.
//   all-reduce, all-to-all, all-gather  interpolated in the measured table
//             (log-log in bytes): vLLM's all-reduce, NCCL's all-to-all and
//             all-gather (nccl-tests).
// Every feature is a time at the spec sheet's rate (bytes / BW, FLOPs /
// peak) or a count, so a coefficient reads as 1 / efficiency or as seconds
// per item. BW and peaks are those the curves were fitted with (`spec`).
//
// Pure: evaluation allocates nothing and does no I/O. Curves are read from
// JSON (ParseKernelCurves) once per process.
#ifndef KVBILL_COST_KERNEL_CURVES_H_
#define KVBILL_COST_KERNEL_CURVES_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill {

// The spec-sheet rates a GPU's curves were fitted against.
struct KernelSpec {
  double hbm_bytes_per_s = 0;
  double bf16_flops_per_s = 0;
  double fp8_flops_per_s = 0;
};

// How well a curve reproduces its table: |predicted / measured - 1|.
struct FitError {
  std::int64_t rows = 0;
  double median = 0;
  double p90 = 0;
  double within_25 = 0;  // fraction of rows within +-25%
};

struct GemmCurve {
  std::string kernel;           // the kernel the rows measured
  double t0_s = 0;              // fixed time per GEMM
  double mem_eff = 1;           // em
  double compute_eff = 1;       // ec
  double smoothness = 4;        // q
  double quant_eff = 0;         // eq; 0: no activation-quantisation term
  double weight_bytes = 2;      // bytes per weight element in the rows
  double activation_bytes = 2;  // bytes per activation element read
  bool fp8_rate = false;        // computes at the fp8 peak
  // Not fitted, not stored: a factor on the compute rate where a kernel
  // runs another precision than its table measured (fp4 at the fp8 curve's
  // efficiencies: fp4 peak / fp8 peak; weight-only kernels that dequantise
  // in their main loop: below 1). format_kernels.h sets it.
  double compute_rate = 1;
  // Not fitted, not stored: launch time a call takes beyond t0_s outside
  // CUDA graphs, where a table's rows were timed eagerly (format_kernels.h).
  double eager_extra_s = 0;
  // Not fitted, not stored: bytes per weight element of a pass before the
  // GEMM that dequantises its weights into a 16-bit copy (reading the
  // stored ones, writing the copy), at the curve's memory efficiency.
  double dequant_bytes = 0;
  FitError error;

  // Seconds of y = x W^T with x m x k and W n x k.
  double Seconds(const KernelSpec& spec, double m, double n, double k) const;
};

// A curve linear in its features: t = sum coef[i] x feature[i].
inline constexpr int kMaxFeatures = 6;
struct LinearCurve {
  std::string kernel;
  std::vector<double> coef;
  FitError error;

  template <std::size_t N>
  double Seconds(const std::array<double, N>& features) const {
    double t = 0;
    for (std::size_t i = 0; i < N && i < coef.size(); ++i) t += coef[i] * features[i];
    return t;
  }
};

// Decode attention of one layer over a batch of B sequences, each reading
// its cached K/V: [1, B, B x heads x head_dim, kv_bytes / BW].
std::array<double, 4> DecodeAttentionFeatures(const KernelSpec& spec, double batch, double heads,
                                              double head_dim, double kv_bytes);

// Prefill attention of one layer: `query_elements` = new tokens x heads x
// head_dim, `flops` = 4 x heads x head_dim x attended (query, key) pairs,
// `kv_written_bytes` the new tokens' K/V: [1, query_elements / 1e6,
// flops / bf16 peak, kv_written_bytes / BW].
std::array<double, 4> PrefillAttentionFeatures(const KernelSpec& spec, double query_elements,
                                               double flops, double kv_written_bytes);

// Fused MoE layer on one GPU (after tensor parallelism splits each expert).
struct MoeLoad {
  double touched_experts = 0;  // distinct local experts with at least one token
  double pairs = 0;            // (token, expert) pairs on this GPU
  // Pairs routed to experts on other GPUs whose rows the kernel still
  // passes over: vLLM's expert parallelism without all-to-all masks them
  // (zeros written, activation and top-k sum over every row), so they cost
  // activation traffic but no FLOPs or weights.
  double masked_pairs = 0;
  double padded_pairs = 0;           // pairs rounded up to 64-row tiles per touched expert
  double expert_bytes = 0;           // one local expert's weight bytes (stored width)
  double expert_flops_per_pair = 0;  // 6 x hidden x local intermediate
  double hidden = 0;
};
// [1, touched x expert_bytes / BW, pairs x flops / peak, padded x flops / peak,
//  row bytes / BW] with peak the bf16 peak, or the fp8 peak for fp8
// experts (fp8_rate); row bytes = pairs x 2 (3 hidden + 6 inter) + masked
// pairs x 2 (2 hidden + 5 inter), inter = expert_flops_per_pair / (6 hidden)
// the expert's width on this GPU.
std::array<double, 5> MoeFeatures(const KernelSpec& spec, const MoeLoad& load, bool fp8_rate);

// The probability that one token picks expert i (0-based popularity rank)
// when it picks top_k distinct experts of E whose popularity follows a power
// law of exponent alpha: q_i = min(1, c i^-alpha), c chosen so that the q_i
// sum to top_k (every token picks exactly top_k experts). alpha = 0 gives
// k / E each. Preconditions: 1 <= top_k <= experts.
std::vector<double> RoutingProbabilities(int experts, int top_k, double alpha);

// Expected load of T tokens routed by RoutingProbabilities, the routing
// aiconfigurator's MoE tables measure. With expert parallelism a GPU holds
// `local_experts` of them, spread evenly over the popularity ranks.
MoeLoad ExpectedMoeLoad(double tokens, int experts, int top_k, double alpha, int local_experts);

// A collective's time over `gpus` GPUs of one node against the bytes
// each GPU contributes: an all-reduce's tensor, an all-to-all's whole send
// buffer, an all-gather's whole output.
// Expert parallelism over `ep` GPUs, each holding q.size() / ep experts
// placed without regard to popularity (vLLM places them by expert id): the
// expected routed pairs per token on the busiest GPU, the mean share plus
// the expected maximum of `ep` standard normal deviates (0.564, 1.029,
// 1.424, 1.766, 2.070, 2.343 for 2 ... 64, by log2 between) times the
// share's standard deviation, drawing q.size() / ep of the q_i without
// replacement; and at least the share of the GPU holding the largest q_i
// (it plus q.size() / ep - 1 average others), which that approximation
// misses with few experts a GPU. Precondition: ep >= 1.
double ExpectedBusiestShare(const std::vector<double>& q, int ep);

struct AllReducePoint {
  double bytes = 0;
  double seconds = 0;
};
struct AllReduceCurve {
  int gpus = 0;
  std::string kernel;
  std::vector<AllReducePoint> points;  // sorted by bytes
  // Log-log interpolation; beyond the last point, linear in bytes.
  double Seconds(double bytes) const;
};
using CollectiveCurve = AllReduceCurve;

// One expert shape's measured fused-MoE times, tensor parallel without
// expert parallelism, against the tokens of the call (every token routed to
// top_k experts with the power-law popularity `alpha`): a model whose
// experts have this shape is timed from it rather than from the pooled
// curve (docs/engine.md, "Fused MoE"). Log-log interpolation between
// points; below the first, its time; beyond the last, linear in tokens.
struct MoeShapeTable {
  std::string dtype;  // kvbill's name, as GpuKernelCurves::moe keys it
  std::string kernel;
  std::int64_t hidden = 0;
  std::int64_t inter = 0;  // one expert's intermediate width (whole)
  int top_k = 0;
  int experts = 0;
  int tensor_parallel = 1;
  double alpha = 0;
  std::vector<double> tokens;   // increasing
  std::vector<double> seconds;  // one per token count
  double Seconds(double t) const;
};

struct GpuKernelCurves {
  std::string gpu;     // catalog id, e.g. "h100-sxm"
  std::string device;  // as the measurements name it
  std::string engine;  // "vllm 0.24.0"
  KernelSpec spec;
  std::map<std::string, GemmCurve> gemm;                // "bf16", "fp8", "fp8_block"
  std::map<std::string, LinearCurve> decode_attention;  // by KV dtype: "bf16", "fp8"
  // Prefill attention by KV dtype, then by head dim.
  std::map<std::string, std::map<int, LinearCurve>> prefill_attention;
  LinearCurve mla_decode;  // DeepSeek-shaped MLA (empty coef: not measured)
  LinearCurve mla_prefill;
  std::map<std::string, LinearCurve> moe;   // by expert weight dtype: "bf16", "fp8", "mxfp4", ...
  std::vector<MoeShapeTable> moe_tables;    // the shapes the MoE table measures, by dtype
  std::vector<AllReduceCurve> all_reduce;   // vLLM's all-reduce, by GPU count
  std::vector<CollectiveCurve> all_to_all;  // NCCL all-to-all, by GPU count
  std::vector<CollectiveCurve> all_gather;  // NCCL all-gather, by GPU count

  const AllReduceCurve* AllReduceFor(int gpus) const;
  const CollectiveCurve* AllToAllFor(int gpus) const;
  const CollectiveCurve* AllGatherFor(int gpus) const;
  // The measured table of this expert shape, or null. `params_per_expert`
  // is one expert's parameters (3 x hidden x inter, plus any biases).
  const MoeShapeTable* MoeTableFor(const std::string& dtype, std::int64_t hidden,
                                   std::int64_t params_per_expert, std::int64_t top_k,
                                   std::int64_t experts, int tensor_parallel, double alpha) const;
  // The prefill curve for `kv_dtype` whose head dim is nearest (in log) to head_dim.
  const LinearCurve* PrefillFor(const std::string& kv_dtype, std::int64_t head_dim) const;
};

struct KernelCurveSet {
  std::string source;  // what the curves were fitted from
  std::vector<GpuKernelCurves> gpus;
  const GpuKernelCurves* For(const std::string& gpu_id) const;
};

// Reads the JSON `kvbill calibrate kernels` writes; errors name `source`
// and the JSON pointer.
Result<KernelCurveSet> ParseKernelCurves(const std::string& json_text, const std::string& source);
std::string KernelCurvesToJson(const KernelCurveSet& set);

// The curves compiled into the binary (scenarios/kernels/curves.json).
const KernelCurveSet& BundledKernelCurves();

}  // namespace kvbill

#endif  // KVBILL_COST_KERNEL_CURVES_H_
