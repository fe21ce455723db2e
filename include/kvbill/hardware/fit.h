// Does a model + context + batch fit a deployment? Pure arithmetic.
//
// Per GPU of a tensor-parallel replica of `tp` GPUs:
//   capacity = floor(usable memory x memory_fraction) - activation reserve
//   weights  = WeightBytes::PerGpu(tp): an even split but for the tensors every
//              GPU holds whole (norms, routers, MLA's down projections) and
//              K/V heads replicated over more GPUs than heads
//   kv       = the peak footprint of one sequence + (batch - 1) x a decoding
//              one's (block-rounded, on one GPU, linear state included; a
//              model of several KV cache groups or with linear state in the
//              pages of the grouped pool, padding included: kv_groups.h)
// The peak footprint counts, for each sliding-window or chunked layer, the
// prefill chunk it holds beside its window (PeakFootprint with the request's
// prefill_chunk_tokens, the engine's max_num_batched_tokens), as the
// engine's KV pool does: one sequence's longest context is the one
// KvPool::LongestSequence gives for the same memory. The chunk is the
// iteration's, shared: the other sequences of a batch decode, a token
// beside their windows.
// KV heads split across the GPUs, replicated when there are fewer heads than
// GPUs; an MLA latent is replicated on every GPU (kv_footprint.h). It fits
// when weights + kv <= capacity. Replica figures are the per-GPU figures
// times tp. Rules and defaults: docs/fit.md.
#ifndef KVBILL_HARDWARE_FIT_H_
#define KVBILL_HARDWARE_FIT_H_

#include <optional>
#include <string>
#include <vector>

#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct Deployment {
  GpuSpec gpu;
  int tensor_parallel = 1;  // GPUs per replica
  int replicas = 1;
  double memory_fraction = 0.9;        // share of usable memory for weights + KV (vLLM's default)
  Bytes activation_reserve_bytes = 0;  // per GPU, taken off the capacity
};

struct FitRequest {
  ModelShape model;
  ElementFormat kv_format;
  std::string weight_format = "auto";
  Tokens context = 0;
  std::int64_t batch = 1;
  Tokens block_size = 16;
  // Tokens the engine computes an iteration (max_num_batched_tokens): a
  // sliding or chunked layer holds that many beside its window while it
  // prefills. 0: no chunk beside a window (a window still takes the pool's
  // ceil(W / block) + 1 blocks, WindowedPeakBlocks).
  Tokens prefill_chunk_tokens = 0;
  Deployment deployment;
  // The serving engine ("vllm" or "sglang"): the KV formats an alternative
  // offers are ones it stores (SGLang: the dtype or fp8), and the layers its
  // pool holds (SGLang keeps every token of most models' sliding layers:
  // SglangPoolModel, kv_groups.h).
  std::string engine = "vllm";
};

// Longest context searched; a footprint still fitting there is "unbounded"
// (sliding-window-only or linear-state models).
inline constexpr Tokens kMaxSearchContext = Tokens{1} << 30;

struct FitReport {
  bool fits = false;
  int tensor_parallel = 1;
  // Per replica (all its GPUs), bytes.
  Bytes capacity_bytes = 0;
  Bytes weights_bytes = 0;
  // Block-rounded (pool pages') KV of the batch (one prefilling), state included.
  Bytes kv_bytes = 0;
  Bytes kv_exact_bytes = 0;  // exact KV of the batch, state included
  Bytes needed_bytes = 0;    // weights + kv
  Bytes headroom_bytes = 0;  // capacity - needed; negative when it does not fit
  // Per GPU, bytes.
  Bytes capacity_per_gpu_bytes = 0;
  Bytes weights_per_gpu_bytes = 0;
  Bytes kv_per_gpu_bytes = 0;
  // Longest context at `batch` (0: not even one token; kMaxSearchContext
  // with max_context_unbounded when the footprint stops growing).
  Tokens max_context = 0;
  bool max_context_unbounded = false;
  // Largest batch at `context` (0 when one sequence does not fit).
  std::int64_t max_batch = 0;
  // Smallest tensor-parallel degree that fits (divides the query heads and
  // divides or is a multiple of the KV heads), up to 64 GPUs.
  std::optional<int> min_gpus;
  std::string weight_description;
};

// Evaluates one request. Error only for an unknown weight format.
Result<FitReport> EvaluateFit(const FitRequest& request);

// Variants of a request that a user would try next, each with its verdict.
struct FitAlternative {
  std::string change;  // e.g. "fp8-e4m3 KV cache", "context 43,520 tokens", "2 GPUs (TP=2)"
  bool fits = false;
  Bytes needed_bytes = 0;    // per replica
  Bytes capacity_bytes = 0;  // per replica
  Tokens context = 0;        // the variant's context (a caller checks it against the model's limit)
};
std::vector<FitAlternative> SuggestAlternatives(const FitRequest& request, const FitReport& report);

// Whether `tp` GPUs can split this model (vLLM's rule: the query heads divide
// evenly; KV heads divide evenly or are replicated; a block- or
// group-quantized MLP leaves each GPU whole blocks of its intermediate
// dimension). `experts_split` false: expert parallelism keeps the routed
// experts whole, so only the dense and shared MLPs are split.
bool ValidTensorParallel(const ModelShape& model, int tp, bool experts_split = true);
// Why `tp` GPUs cannot split the model, in one sentence ("3 GPUs cannot
// split model "qwen3-8b"'s 32 query heads and 8 KV heads evenly (...)");
// empty when they can. Every command and the scenario rule say the same.
std::string TensorParallelProblem(const ModelShape& model, int tp, bool experts_split = true);

// Whether `ep` GPUs can split the model's routed experts, each GPU holding
// whole experts and at least one: ep is 1, or the model has routed experts
// and at most that many GPUs share them. vLLM's expert map
// (determine_expert_map, vllm/model_executor/layers/fused_moe/layer.py,
// later expert_map_manager.py) gives rank r experts / ep of them and the
// first experts mod ep ranks one more, so past the expert count a rank
// holds none and idles in every MoE layer; kvbill's model of expert
// parallelism (each GPU 1/ep of the experts, OperatorCostModel) does not
// describe such a deployment, and no one would rent it.
bool ValidExpertParallel(const ModelShape& model, int ep);
// Why not, in one sentence ("16 GPUs cannot each hold one of model
// "mixtral-8x7b"'s 8 routed experts ..."); empty when `ep` is valid.
std::string ExpertParallelProblem(const ModelShape& model, int ep);

}  // namespace kvbill

#endif  // KVBILL_HARDWARE_FIT_H_
