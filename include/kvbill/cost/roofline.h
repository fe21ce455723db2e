// The roofline cost of engine iterations on one GPU of a tensor-parallel
// replica. Pure: no I/O, no state beyond what Make precomputes.
//
//   time = max(bytes / (HBM bandwidth x bandwidth_efficiency),
//              FLOPs / (peak FLOP/s x compute_efficiency)) + overhead
//
// Bytes an iteration moves on one GPU: the weights it reads (dense part, plus
// for MoE the expected number of distinct experts T tokens touch per MoE
// layer, E x (1 - (1 - k/E)^T)), each sequence's KV read (its window-aware
// footprint at its current context) and the KV it writes (one token's worth
// per computed token). FLOPs: 2 x the active matmul parameters per token
// (the input embedding is a lookup and is not counted) plus attention,
// 2 x heads x (qk dim + v dim) per attended token per layer; an MLA layer
// attends its latent (absorbed form: qk = latent, v = latent - rope).
// A decode token at context c attends the c cached tokens of each layer
// (resident(c), kv_footprint.h); a prefill chunk attends the prefix and the
// chunk causally. Everything is divided evenly over the tensor-parallel GPUs
// except what the KV split replicates (kv_footprint.h).
//
// KV read and attention FLOPs are piecewise linear in the context: slopes
// change where a sliding window fills or a chunk ends. Piece() gives the
// slope at a context and how many further tokens keep it, which is what the
// engine's event skipping needs to sum many decode steps in closed form.
#ifndef KVBILL_COST_ROOFLINE_H_
#define KVBILL_COST_ROOFLINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct RooflineParams {
  int tensor_parallel = 1;
  double bandwidth_efficiency = 0.65;  // (0, 1]
  double compute_efficiency = 0.6;     // (0, 1]
  Seconds iteration_overhead_s = 0;
};

// A linear piece of a per-sequence quantity q(c + k) = q(c) + slope x k,
// valid for k = 0 .. max_k.
struct LinearPiece {
  double slope = 0;
  Tokens max_k = 0;  // kNoBreak when the slope never changes again
};
inline constexpr Tokens kNoBreak = Tokens{1} << 50;

class Roofline {
 public:
  static Result<Roofline> Make(const ModelShape& model, const ElementFormat& kv_format,
                               const std::string& weight_format, const GpuSpec& gpu,
                               const RooflineParams& params);

  // Weight bytes one GPU reads in an iteration computing `tokens` tokens.
  double WeightBytes(std::int64_t tokens) const;
  // KV bytes one GPU reads for a sequence whose cache holds `ctx` tokens.
  double KvReadBytes(Tokens ctx) const;
  // KV bytes one GPU writes per computed token.
  double KvWriteBytesPerToken() const { return kv_write_per_token_; }
  // Attention FLOPs (one GPU) of one decode token at context ctx.
  double DecodeAttentionFlops(Tokens ctx) const;
  // Matmul FLOPs (one GPU) per token.
  double MatmulFlopsPerToken() const { return matmul_flops_per_token_; }
  // Attention FLOPs (one GPU) of a prefill chunk of n tokens after `start` cached ones.
  double PrefillAttentionFlops(Tokens start, Tokens n) const;
  // KV bytes (one GPU) the chunk's tokens attend, summed over its tokens:
  // token j of the chunk counts the bytes of the resident(start + j + 1)
  // tokens it attends. A kernel that streamed K/V once per query token
  // would read this much.
  double PrefillAttendedKvBytes(Tokens start, Tokens n) const;
  // The linear piece of KvReadBytes and DecodeAttentionFlops at ctx (they
  // share breakpoints). Precondition: ctx >= 0.
  LinearPiece KvPiece(Tokens ctx) const;
  LinearPiece FlopPiece(Tokens ctx) const;

  // Memory and compute time of one iteration, and its total with overhead.
  Seconds MemorySeconds(double bytes) const { return bytes / bytes_per_s_; }
  Seconds ComputeSeconds(double flops) const { return flops / flops_per_s_; }
  Seconds IterationSeconds(double bytes, double flops) const;

  double bytes_per_s() const { return bytes_per_s_; }  // achieved, one GPU
  double peak_bytes_per_s() const { return peak_bytes_per_s_; }
  double peak_flops_per_s() const { return peak_flops_per_s_; }
  double flops_per_s() const { return flops_per_s_; }  // achieved, one GPU
  Seconds overhead_s() const { return overhead_s_; }
  int tensor_parallel() const { return tp_; }

 private:
  Roofline() = default;

  // Layers grouped by how their resident count grows.
  struct Group {
    LayerKind kind = LayerKind::kFullAttention;
    Tokens window = 0;
    double kv_bytes_per_token = 0;    // all layers of the group, one GPU
    double attn_flops_per_token = 0;  // all layers of the group, one GPU
  };
  static Tokens Resident(const Group& g, Tokens ctx);
  static double SumResident(const Group& g, Tokens from, Tokens to);  // sum over c in [from, to]
  LinearPiece Piece(Tokens ctx, bool flops) const;

  std::vector<Group> groups_;
  double dense_weight_bytes_ = 0;  // one GPU, without routed experts
  double expert_bytes_ = 0;        // one routed expert of one layer, one GPU
  std::int64_t moe_layers_ = 0;
  std::int64_t experts_ = 0;
  std::int64_t experts_per_token_ = 0;
  double kv_write_per_token_ = 0;
  double matmul_flops_per_token_ = 0;
  double bytes_per_s_ = 1;
  double peak_bytes_per_s_ = 1;
  double peak_flops_per_s_ = 1;
  double flops_per_s_ = 1;
  Seconds overhead_s_ = 0;
  int tp_ = 1;
};

}  // namespace kvbill

#endif  // KVBILL_COST_ROOFLINE_H_
