#include "kvbill/cost/roofline.h"

#include <algorithm>
#include <cmath>

#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"

namespace kvbill {

Result<Roofline> Roofline::Make(const ModelShape& model, const ElementFormat& kv_format,
                                const std::string& weight_format, const GpuSpec& gpu,
                                const RooflineParams& params) {
  if (params.tensor_parallel < 1) return Error("tensor_parallel must be at least 1");
  if (!(params.bandwidth_efficiency > 0 && params.bandwidth_efficiency <= 1)) {
    return Error("bandwidth_efficiency must be in (0, 1]");
  }
  if (!(params.compute_efficiency > 0 && params.compute_efficiency <= 1)) {
    return Error("compute_efficiency must be in (0, 1]");
  }
  auto weights = ComputeWeightBytes(model, weight_format);
  if (!weights) return weights.error();
  auto dense_format =
      ParseElementFormat(weight_format == "auto" ? model.compute_format : weight_format);
  if (!dense_format) return dense_format.error();

  Roofline r;
  r.tp_ = params.tensor_parallel;
  const double tp = r.tp_;
  // Per decode step: everything but the routed experts (drawn per token
  // below), the vision / audio towers (not run while decoding) and an input
  // embedding table the lm_head does not share (only the batch's rows are
  // gathered from it).
  // Weights a pass applies more than once are read again each use. Split
  // over the GPUs, except what every GPU holds whole and reads and applies
  // whole (WeightBytes::replicated: routers, norms, MLA's down projections;
  // and K and V heads replicated over more GPUs than heads): DeepSeek-V3's
  // 1.03B such parameters on 8 GPUs are 1.1 GB a GPU, not an eighth. Their
  // FLOPs: the replicated tensors' whole, the extra K/V heads' split.
  const Bytes held = weights->PerGpu(r.tp_);
  const Bytes even = (weights->total - weights->replicated + r.tp_ - 1) / r.tp_;
  const double whole = static_cast<double>(held - even);  // replicated, and extra K/V heads
  r.dense_weight_bytes_ =
      static_cast<double>(weights->total - weights->replicated - weights->routed_experts -
                          weights->towers - weights->gathered_embedding + weights->reapplied) /
          tp +
      whole;
  r.moe_layers_ = model.moe.layers;
  r.experts_ = model.moe.experts;
  r.experts_per_token_ = model.moe.experts_per_token;
  if (r.moe_layers_ > 0 && r.experts_ > 0) {
    r.expert_bytes_ = static_cast<double>(weights->routed_experts) /
                      static_cast<double>(r.moe_layers_ * r.experts_) / tp;
  }
  const ParamCounts& p = model.params;
  const double replicated_params = static_cast<double>(weights->replicated_params);
  r.matmul_flops_per_token_ =
      2.0 * ((static_cast<double>(p.Active() - p.embedding + model.ReappliedParams()) -
              replicated_params) /
                 tp +
             replicated_params);
  r.bytes_per_s_ = gpu.hbm_bandwidth_bytes_per_s * params.bandwidth_efficiency;
  r.peak_bytes_per_s_ = gpu.hbm_bandwidth_bytes_per_s;
  r.peak_flops_per_s_ = gpu.DenseFlopsPerS(*dense_format);
  r.flops_per_s_ = gpu.DenseFlopsPerS(*dense_format) * params.compute_efficiency;
  r.overhead_s_ = params.iteration_overhead_s;

  const auto add = [&r](LayerKind k, Tokens w, double bytes, double fl) {
    auto it = std::find_if(r.groups_.begin(), r.groups_.end(),
                           [&](const Group& g) { return g.kind == k && g.window == w; });
    if (it == r.groups_.end()) {
      r.groups_.push_back(Group{k, w, 0, 0});
      it = r.groups_.end() - 1;
    }
    it->kv_bytes_per_token += bytes;
    it->attn_flops_per_token += fl;
  };
  for (const LayerShape& l : model.layers) {
    if (!l.KeepsPerTokenKv()) continue;
    if (l.IsCompressed()) {
      // DeepSeek-V4: every query reads and attends the window's latents; a
      // ratio-r layer adds one latent per r tokens, all of them (ratio 128)
      // or the indexer's top sparse_topk (ratio 4), whose indexer scores
      // every compressed key. Counted per token at rate 1/r, so the reads
      // stay linear in the context between the window's and the top-k's
      // ends (the kernel reads whole entries: within 1 entry of this).
      const double entry = static_cast<double>(LatentEntryBits(l, kv_format)) / 8.0;
      const double flops = 2.0 * static_cast<double>(l.query_heads) *
                           static_cast<double>(l.qk_head_dim + l.v_head_dim) / tp;
      add(LayerKind::kSlidingWindow, l.window, entry, flops);
      r.kv_write_per_token_ += entry;
      if (l.compress_ratio > 0) {
        const double ratio = l.compress_ratio;
        const double indexer = static_cast<double>(IndexerBitsPerToken(l)) / 8.0;
        const double scoring =
            2.0 * static_cast<double>(l.indexer_heads) * static_cast<double>(l.indexer_dim);
        r.kv_write_per_token_ += (entry + indexer) / ratio;
        if (l.sparse_topk > 0) {
          add(LayerKind::kSlidingWindow, l.sparse_topk * l.compress_ratio, entry / ratio,
              flops / ratio);
          if (indexer > 0) add(LayerKind::kFullAttention, 0, indexer / ratio, scoring / ratio);
        } else {
          add(LayerKind::kFullAttention, 0, (entry + indexer) / ratio, (flops + scoring) / ratio);
        }
      }
      continue;
    }
    const double kv = static_cast<double>(LayerBitsPerToken(l, kv_format, r.tp_)) / 8.0;
    double qk = static_cast<double>(l.qk_head_dim), v = static_cast<double>(l.v_head_dim);
    if (l.IsLatent()) {
      qk = static_cast<double>(l.latent_dim);
      v = static_cast<double>(l.latent_dim) - static_cast<double>(l.qk_head_dim - l.v_head_dim);
    }
    const double flops = 2.0 * static_cast<double>(l.query_heads) * (qk + v) / tp;
    // A KV-sharing layer reads its source's cache and writes none.
    if (!l.SharesKv()) r.kv_write_per_token_ += kv;
    const Tokens window = l.IsWindowed() ? l.window : 0;
    const LayerKind kind = l.IsLatent() ? LayerKind::kFullAttention : l.kind;
    // Sparse attention: the indexer reads every cached token's key and
    // scores it (2 x its heads x dim FLOPs, on every GPU: the key is whole
    // on each); attention reads and attends only the top sparse_topk, which
    // grow with the context like a window of that size.
    const double indexer = static_cast<double>(IndexerBitsPerToken(l)) / 8.0;
    const double scoring =
        2.0 * static_cast<double>(l.indexer_heads) * static_cast<double>(l.indexer_dim);
    if (l.sparse_topk > 0 && window == 0) {
      add(LayerKind::kSlidingWindow, l.sparse_topk, kv - indexer, flops);
      if (indexer > 0) add(LayerKind::kFullAttention, 0, indexer, scoring);
    } else {
      add(kind, window, kv, flops + scoring);
    }
  }
  return r;
}

double Roofline::WeightBytes(std::int64_t tokens) const {
  if (moe_layers_ == 0 || experts_ == 0 || tokens <= 0) return dense_weight_bytes_;
  const double e = static_cast<double>(experts_);
  const double untouched =
      std::pow(1.0 - static_cast<double>(experts_per_token_) / e, static_cast<double>(tokens));
  return dense_weight_bytes_ +
         static_cast<double>(moe_layers_) * e * (1.0 - untouched) * expert_bytes_;
}

Tokens Roofline::Resident(const Group& g, Tokens ctx) {
  if (ctx <= 0) return 0;
  switch (g.kind) {
    case LayerKind::kSlidingWindow:
      return std::min(ctx, g.window);
    case LayerKind::kChunkedAttention:
      return ctx - g.window * ((ctx - 1) / g.window);
    default:
      return ctx;
  }
}

double Roofline::SumResident(const Group& g, Tokens from, Tokens to) {
  if (to < from) return 0;
  auto series = [](double a, double b) { return (a + b) * (b - a + 1) / 2.0; };  // a + ... + b
  switch (g.kind) {
    case LayerKind::kSlidingWindow: {
      const Tokens w = g.window;
      double sum = 0;
      if (from <= w)
        sum += series(static_cast<double>(std::max<Tokens>(from, 1)),
                      static_cast<double>(std::min(to, w)));
      if (to > w)
        sum += static_cast<double>(w) * static_cast<double>(to - std::max(from, w + 1) + 1);
      return sum;
    }
    case LayerKind::kChunkedAttention: {
      double sum = 0;
      Tokens c = std::max<Tokens>(from, 1);
      while (c <= to) {
        const Tokens chunk_end = ((c - 1) / g.window + 1) * g.window;  // last ctx of this chunk
        const Tokens hi = std::min(to, chunk_end);
        sum += series(static_cast<double>(Resident(g, c)), static_cast<double>(Resident(g, hi)));
        c = hi + 1;
      }
      return sum;
    }
    default:
      return series(static_cast<double>(std::max<Tokens>(from, 1)), static_cast<double>(to));
  }
}

double Roofline::KvReadBytes(Tokens ctx) const {
  double bytes = 0;
  for (const Group& g : groups_)
    bytes += g.kv_bytes_per_token * static_cast<double>(Resident(g, ctx));
  return bytes;
}

double Roofline::DecodeAttentionFlops(Tokens ctx) const {
  double flops = 0;
  for (const Group& g : groups_) {
    flops += g.attn_flops_per_token * static_cast<double>(Resident(g, ctx));
  }
  return flops;
}

double Roofline::PrefillAttentionFlops(Tokens start, Tokens n) const {
  // Token j of the chunk (0-based) attends resident(start + j + 1) tokens.
  double flops = 0;
  for (const Group& g : groups_)
    flops += g.attn_flops_per_token * SumResident(g, start + 1, start + n);
  return flops;
}

double Roofline::PrefillAttendedKvBytes(Tokens start, Tokens n) const {
  double bytes = 0;
  for (const Group& g : groups_)
    bytes += g.kv_bytes_per_token * SumResident(g, start + 1, start + n);
  return bytes;
}

LinearPiece Roofline::Piece(Tokens ctx, bool flops) const {
  LinearPiece piece{0, kNoBreak};
  for (const Group& g : groups_) {
    const double rate = flops ? g.attn_flops_per_token : g.kv_bytes_per_token;
    switch (g.kind) {
      case LayerKind::kSlidingWindow:
        if (ctx < g.window) {
          piece.slope += rate;
          piece.max_k = std::min(piece.max_k, g.window - ctx);
        }
        break;
      case LayerKind::kChunkedAttention: {
        // resident grows by one per token up to the end of the current chunk.
        const Tokens chunk_end = ctx <= 0 ? g.window : ((ctx - 1) / g.window + 1) * g.window;
        piece.slope += rate;
        piece.max_k = std::min(piece.max_k, chunk_end - ctx);
        break;
      }
      default:
        piece.slope += rate;
        break;
    }
  }
  return piece;
}

LinearPiece Roofline::KvPiece(Tokens ctx) const { return Piece(ctx, false); }
LinearPiece Roofline::FlopPiece(Tokens ctx) const { return Piece(ctx, true); }

Seconds Roofline::IterationSeconds(double bytes, double flops) const {
  return std::max(MemorySeconds(bytes), ComputeSeconds(flops)) + overhead_s_;
}

}  // namespace kvbill
