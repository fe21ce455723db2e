// The calibrated cost model: an iteration's time as the sum of its
// operators' times on one GPU of the replica, each from the GPU's kernel
// curves (kernel_curves.h), plus what the engine adds around them (its
// profile, engine_profile.h). docs/engine.md#the-calibrated-cost-model.
//
//   GPU time = GEMMs(T) + fused MoE(T) + lm_head(S) + attention(batch)
//              + all-reduces(T) + elementwise(T) + small kernels
//   iteration = CPU(S) + max(GPU time, eager launches(T))     (synchronous)
//             = max(GPU time, CPU(S), eager launches(T))       (async scheduling)
//
// T: tokens computed in the iteration, S: sequences scheduled. GEMM shapes
// come from the model's layers (QKV and output projections, gated MLPs,
// shared experts, routers, linear-state mixers); the routed experts run as
// one fused-MoE call per MoE layer with the routing of the profile.
// Attention per layer: decode = c0 + c1 B + c2 B heads dim + c3 KV bytes / BW;
// prefill and extend chunks = c0 + c1 q elements + c2 causal FLOPs / peak +
// c3 KV written / BW, plus reading the cached prefix at the decode rate.
// A sequence's own time is its share of attention (and of linear-state
// updates); the engine splits the rest by tokens.
//
// Decode runs: with a fixed batch only the KV-read term changes from step to
// step, linearly within a stretch where no sliding window fills or chunk
// ends, so step time is one line (two where async scheduling switches
// between CPU- and GPU-bound): event skipping stays exact.
//
// Formats run as the format matrix says the GPU runs them
// (hardware/format_support.h, cost/format_kernels.h): weights streamed at
// their stored width and multiplied at the computed precision (W8A8 fp8,
// W4A4 fp4, or weight-only WnA16 with the dequantisation cost of Marlin's
// tables); a combination no engine runs is an error. A GPU without kernel
// curves uses the H100 curves' efficiencies on its own spec sheet, and
// collectives it has no table for run as a ring over its link; both say so.
//
// Parallelism: tensor parallelism splits heads, GEMMs and every expert and
// adds two all-reduces per layer; expert parallelism (options) keeps the
// experts whole, 1/ep of them per GPU, the busiest GPU setting the time,
// and either keeps the all-reduce (vLLM without data-parallel attention)
// or exchanges tokens by all-to-all.
#ifndef KVBILL_COST_OPERATOR_COST_MODEL_H_
#define KVBILL_COST_OPERATOR_COST_MODEL_H_

#include <atomic>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/kernel_curves.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/result.h"

namespace kvbill {

// Kernels of one forward pass too small to show in bytes or FLOPs at a
// decode batch: per layer two residual-add norms and the gated activation;
// per attention layer the rotary embedding and the KV-cache write (MLA two
// more norms); per linear-state layer the short convolution, the gates and
// the gated output norm; per MoE layer the router's top-k and the sort of
// tokens into expert blocks; per pass the embedding gather and the final
// norm. Each costs the kernel tables' fixed time per kernel (the bf16 GEMM
// curve's t0, a CUDA-graph launch of a kernel with next to nothing to do).
double SmallKernelCount(const ModelShape& model);

struct OperatorModelOptions {
  int tensor_parallel = 1;
  // Token counts up to this are precomputed (the engine's token budget).
  Tokens max_batch_tokens = 8192;
  // Sequence counts up to this have their lm_head time precomputed (the
  // engine's max_num_seqs).
  int max_batch_seqs = 256;
  bool async_scheduling = false;
  // With async scheduling and a draft on the GPU (vLLM v0.14+ with EAGLE,
  // MTP or a draft model): the worker waits for an iteration's sampled
  // tokens before it prepares the next (the accepted counts fix the next
  // step's inputs), so the CPU overlaps only the draft that follows the
  // sampling, not the model's own GPU time (IterationSecondsWithTail).
  bool cpu_waits_for_sampling = false;
  // The weights come from a checkpoint published in fp8 with 128x128 block
  // scales (DeepSeek's and the *-FP8 Qwen checkpoints) rather than quantised
  // per tensor when loaded or scaled per channel (GLM-4.5's FP8 releases):
  // those run CUTLASS scaled_mm. weight_format "auto" implies it.
  bool fp8_checkpoint = false;
  // Expert-parallel degree: 1, or tensor_parallel (MoE models only).
  int expert_parallel = 1;
  // With expert parallelism: tokens reach their experts by all-to-all
  // dispatch and combine (plus an all-gather of the layer's output) instead
  // of every GPU routing every token and the layer's all-reduce summing.
  bool expert_all_to_all = false;
  // MXFP4 routed experts on Hopper run vLLM's Marlin MoE (weight-only FP4,
  // W4A16) instead of the OpenAI Triton kernels: vLLM before v0.12.0, which
  // did not install triton_kernels, or VLLM_MXFP4_USE_MARLIN=1.
  bool mxfp4_experts_marlin = false;
  // The largest decode batch the engine captures in a CUDA graph; 0: the
  // profile's cuda_graph_max_tokens (SGLang sets it by GPU memory and
  // tensor-parallel degree: EngineLimits).
  Tokens cuda_graph_max_tokens = 0;
};

class OperatorCostModel final : public CostModel {
 public:
  // `curves` may be null: the GPU then runs on fallback curves (uncalibrated).
  static Result<std::shared_ptr<const OperatorCostModel>> Make(
      const ModelShape& model, const ElementFormat& kv_format, const std::string& weight_format,
      const GpuSpec& gpu, const GpuKernelCurves* curves, const EngineProfile& profile,
      const OperatorModelOptions& options);

  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override;
  Seconds IterationSecondsWithTail(std::span<const ScheduledWork> work,
                                   std::span<long double> own_s, long double tail) const override;
  void DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                      DecodeLines* out) const override;
  Seconds RecomputeSeconds(Tokens start, Tokens n) const override;
  std::string name() const override { return name_; }
  CostModelInfo Describe() const override;

  // True when the GPU has kernel curves and the profile was fitted.
  bool calibrated() const { return calibrated_; }
  // How the model runs its formats and which parts rest on assumptions
  // rather than measured kernels, one sentence each.
  const std::vector<std::string>& notes() const { return notes_; }

  // Parts of an iteration's GPU time, for tests and reports.
  Seconds DenseSeconds(Tokens tokens) const;     // GEMMs, MoE, all-reduce, elementwise
  Seconds HeadSeconds(std::int64_t seqs) const;  // lm_head over the sampled sequences
  // DenseSeconds(tokens) by part: "gemm", "moe", "all_reduce", "elementwise",
  // "all_to_all" (expert-parallel dispatch, combine and gather).
  std::vector<std::pair<std::string, Seconds>> DenseParts(Tokens tokens) const;
  // A decode-only iteration of `batch` sequences at context `context` by
  // part: DenseParts(batch), then "lm_head", "attention" (the kernels'
  // fixed cost a layer and each sequence's KV read), "cpu" (the
  // scheduler's time, overlapped with the GPU only under async
  // scheduling), "eager_launch" (batches outside CUDA graphs) and "output"
  // (the API server streaming, overlapped). IterationSeconds combines them.
  std::vector<std::pair<std::string, Seconds>> DecodeParts(std::int64_t batch,
                                                           Tokens context) const;
  // Any iteration by part, as DecodeParts: the work's DenseParts, then
  // "lm_head", "attention" (prompt chunks' and decodes' own time with the
  // kernels' fixed cost), "cpu", "eager_launch" and "output".
  std::vector<std::pair<std::string, Seconds>> IterationParts(
      std::span<const ScheduledWork> work) const;

 private:
  explicit OperatorCostModel(Roofline r) : r_(std::move(r)) {}
  // Whether an iteration of `seqs` sequences and `tokens` tokens (`chunks`:
  // with prompt chunks) runs in a CUDA graph, without eager launches.
  bool Graphed(std::int64_t seqs, Tokens tokens, bool chunks) const;
  Seconds ComputeDense(Tokens tokens) const;
  Seconds ComputeHead(std::int64_t seqs) const;
  // Attention of one decode sequence at context c (all layers), its own time.
  long double DecodeOwn(Tokens c) const;
  // Attention of one prefill chunk (all layers), its own time. A
  // verification (`verify`) keeps a recurrent state per query token, for
  // the engine to roll back to the last accepted one: it reads one state
  // and writes n, where a chunk reads and writes one.
  long double PrefillOwn(Tokens start, Tokens n, bool verify = false) const;
  // `chunks`: the iteration computes prompt chunks (SGLang runs those
  // outside CUDA graphs whatever their size, and captures decode and
  // verification batches up to cuda_graph_max_tokens sequences).
  // `tail`: GPU work after the sampling (IterationSecondsWithTail).
  Seconds Combine(long double gpu, std::int64_t seqs, Tokens tokens, bool chunks,
                  long double tail = 0) const;
  // The GPU time of an iteration before its tokens are sampled; fills own_s.
  long double GpuSeconds(std::span<const ScheduledWork> work, std::span<long double> own_s,
                         Tokens* tokens, bool* chunks) const;

  struct Gemm {
    double n = 0, k = 0, count = 0;
    GemmCurve curve;
  };
  Roofline r_;  // KV bytes, window-aware attention FLOPs
  KernelSpec spec_;
  EngineProfile profile_;
  std::string name_;
  std::string gpu_id_;  // the validation regime's GPU
  int tensor_parallel_ = 1;
  std::string unreplayed_path_;  // CostModelInfo::unreplayed_path
  bool calibrated_ = false;
  std::vector<std::string> notes_;
  std::vector<FormatUse> formats_;
  std::vector<std::string> assumed_collectives_;  // CostModelInfo::assumed_collectives
  std::vector<Gemm> gemms_;                       // per iteration, over all layers, m = tokens
  Gemm head_;                                     // lm_head, m = sequences
  // Fused MoE.
  int moe_layers_ = 0;
  LinearCurve moe_curve_;
  // The measured times of the model's own expert shape, when the GPU's
  // table has it at this tensor-parallel degree: used instead of the curve.
  std::optional<MoeShapeTable> moe_table_;
  // Expert parallelism: the table of the model's whole experts (tensor
  // parallel 1), whose ratio to the curve corrects the curve.
  std::optional<MoeShapeTable> moe_whole_table_;
  bool moe_fp8_rate_ = false;
  double expert_bytes_ = 0, expert_flops_per_pair_ = 0;
  std::vector<double> moe_log_miss_;  // per expert of the busiest GPU: log(1 - q_i)
  std::vector<double> moe_q_;
  int expert_parallel_ = 1;
  double moe_skew_ = 1;  // the busiest GPU's pairs over its experts' expected ones
  // Expert parallelism without all-to-all: every GPU's kernel passes over
  // all T x top-k rows, masking those of other GPUs' experts.
  double masked_rows_per_token_ = 0;
  double experts_per_token_ = 0;
  CollectiveCurve all_to_all_;  // empty unless expert parallelism uses all-to-all
  CollectiveCurve all_gather_;
  // All-reduce: per iteration 2 per layer of T x hidden x 2 bytes.
  const AllReduceCurve* all_reduce_ = nullptr;
  AllReduceCurve all_reduce_fallback_;
  double all_reduces_ = 0;
  double hidden_ = 0;
  double layers_ = 0;
  // Fixed time of the small kernels of one forward pass (norms, rotary
  // embedding, KV writes, activations, routing): SmallKernelCount x the
  // kernel tables' fixed time per kernel.
  double small_kernels_s_ = 0;
  double eager_gemm_s_ = 0;  // GEMM launches outside CUDA graphs beyond their t0, s
  // Launch time of an iteration outside CUDA graphs.
  long double EagerLaunchSeconds() const {
    return profile_.params.eager_launch_per_layer_s * layers_ + eager_gemm_s_;
  }
  // Attention, summed over attention layers of one GPU.
  double attn_layers_ = 0;
  double heads_dims_ = 0;  // sum of (query heads per GPU x head dim)
  double mla_heads_ = 0;   // MLA: sum of query heads per GPU
  double mla_qk_ = 0, mla_v_ = 0;
  Tokens mla_topk_ = 0;                 // sparse MLA: tokens a query attends (0: all)
  double indexer_flops_per_token_ = 0;  // sparse MLA: the indexers' scoring, per cached token
  bool mla_ = false;
  LinearCurve decode_, prefill_;
  double kv_write_per_token_ = 0;
  // vLLM's Triton attention (layers with sinks on GPUs without
  // FlashAttention 3): each program takes `triton_block_q_` query tokens of
  // one KV head and streams that head's attended K/V tiles itself, so a
  // prompt chunk reads its attended KV bytes / triton_block_q_. 0: another
  // backend.
  double triton_block_q_ = 0;
  // Linear-state layers: state bytes per sequence (one GPU), elements.
  double state_bytes_ = 0, state_elements_ = 0, linear_layers_ = 0;
  // A pure function of a small count, each value computed when first asked
  // for: a run asks for a few hundred of the thousands of token counts, and
  // a sweep builds a model per point. Entries are atomic, so threads sharing
  // a model at most compute an entry twice, storing the same value.
  class LazyTable {
   public:
    void Reset(std::size_t n) {
      values_ = std::make_unique<std::atomic<double>[]>(n);
      size_ = n;
      for (std::size_t i = 0; i < n; ++i)
        values_[i].store(std::numeric_limits<double>::quiet_NaN(), std::memory_order_relaxed);
    }
    std::size_t size() const { return size_; }
    template <class Compute>
    double Get(std::size_t i, const Compute& compute) const {
      double v = values_[i].load(std::memory_order_relaxed);
      if (std::isnan(v)) {
        v = compute();
        values_[i].store(v, std::memory_order_relaxed);
      }
      return v;
    }

   private:
    std::unique_ptr<std::atomic<double>[]> values_;
    std::size_t size_ = 0;
  };
  LazyTable dense_by_tokens_;  // ComputeDense for 0..max_batch_tokens
  LazyTable head_by_seqs_;     // ComputeHead for 0..max_batch_seqs
  bool async_ = false;
  bool cpu_waits_for_sampling_ = false;
  bool graph_prompt_chunks_ = true;  // vLLM's piecewise graphs hold them; SGLang's do not
};

}  // namespace kvbill

#endif  // KVBILL_COST_OPERATOR_COST_MODEL_H_
