#include "kvbill/model/kv_footprint.h"

#include <algorithm>
#include <limits>

#include "kvbill/util/units.h"

namespace kvbill {
namespace {

// KV heads one GPU holds when `heads` are split over `tp` GPUs: an even
// share, or one (replicated) when there are fewer heads than GPUs.
std::int64_t HeadsPerGpu(std::int64_t heads, int tp) {
  if (tp <= 1) return heads;
  return std::max<std::int64_t>(1, (heads + tp - 1) / tp);
}

// The sparse-attention indexer key: fp8 E4M3 with one fp32 scale per 128
// elements (DeepSeek-V3.2's reference inference code, vLLM's indexer cache).
constexpr std::int64_t kIndexerElementBits = 8;
constexpr std::int64_t kIndexerGroup = 128;
constexpr std::int64_t kIndexerScaleBits = 32;

std::int64_t IndexerBitsOf(const LayerShape& layer) {
  const std::int64_t dim = layer.indexer_dim;
  if (dim <= 0) return 0;
  if (layer.indexer_bits > 0) return dim * layer.indexer_bits;
  return dim * kIndexerElementBits + (dim + kIndexerGroup - 1) / kIndexerGroup * kIndexerScaleBits;
}

// DeepSeek Sparse Attention's latent in an fp8 cache: FlashMLA's sparse
// kernels read the "fp8_ds_mla" layout vLLM switches any fp8 cache to for
// these models (DeepseekV32ForCausalLMConfig): the compressed part in fp8
// with an fp32 scale per 128 elements, the rotary key in bf16 (512 + 16 +
// 128 = 656 bytes for kv_lora_rank 512 and rope 64).
bool DsMlaLayout(const LayerShape& layer, const ElementFormat& format) {
  return layer.IsLatent() && (layer.sparse_topk > 0 || layer.indexer_dim > 0) &&
         layer.rope_dim > 0 && format.element_bits == 8 && format.name.rfind("fp8", 0) == 0;
}

std::int64_t DsMlaBits(const LayerShape& layer) {
  const std::int64_t compressed = layer.latent_dim - layer.rope_dim;
  return compressed * 8 + (compressed + 127) / 128 * 32 + layer.rope_dim * 16;
}

// DeepSeek-V4's latent in an fp8 cache (vLLM's fp8_ds_mla for V4, SGLang's
// fp8_e4m3 pool): the non-rotary part in fp8 with one UE8M0 scale byte per
// 64 elements and one pad byte, the rotary key in bf16 (448 + 7 + 1 + 128 =
// 584 bytes for a 512-wide latent with a 64-wide rope). Other formats store
// the latent as a plain vector.
std::int64_t CompressedEntryBits(const LayerShape& layer, const ElementFormat& format) {
  if (layer.rope_dim > 0 && format.element_bits == 8 && format.name.rfind("fp8", 0) == 0) {
    const std::int64_t compressed = layer.latent_dim - layer.rope_dim;
    return compressed * 8 + (compressed + 63) / 64 * 8 + 8 + layer.rope_dim * 16;
  }
  return format.VectorBits(layer.latent_dim);
}

// Bits of one compressed entry and its indexer key (ratio-4 layers).
std::int64_t CompressedGroupBits(const LayerShape& layer, const ElementFormat& format) {
  return layer.compress_ratio > 0 ? CompressedEntryBits(layer, format) + IndexerBitsOf(layer) : 0;
}

std::int64_t SplitCeil(std::int64_t elements, int tp) {
  return tp <= 1 ? elements : (elements + tp - 1) / tp;
}

// First resident position of `layer` at context ctx (resident range [lo, ctx)).
Tokens FirstResident(const LayerShape& layer, Tokens ctx) {
  return ctx - ResidentTokens(layer, ctx);
}

}  // namespace

std::int64_t IndexerBitsPerToken(const LayerShape& layer) { return IndexerBitsOf(layer); }

std::int64_t LayerBitsPerBlock(const LayerShape& layer, const ElementFormat& format,
                               Tokens block_size, int tensor_parallel) {
  if (!layer.IsCompressed()) return LayerBitsPerToken(layer, format, tensor_parallel) * block_size;
  if (layer.compress_ratio <= 0) return 0;
  return CeilDiv(block_size, layer.compress_ratio) * CompressedGroupBits(layer, format);
}

std::int64_t LatentEntryBits(const LayerShape& layer, const ElementFormat& format) {
  return layer.IsCompressed() ? CompressedEntryBits(layer, format) : 0;
}

double LayerBytesPerToken(const LayerShape& layer, const ElementFormat& format,
                          int tensor_parallel) {
  if (layer.IsCompressed()) {
    if (layer.compress_ratio <= 0) return 0;
    return static_cast<double>(CompressedGroupBits(layer, format)) /
           static_cast<double>(layer.compress_ratio) / 8.0;
  }
  return static_cast<double>(LayerBitsPerToken(layer, format, tensor_parallel)) / 8.0;
}

std::int64_t LayerBitsPerToken(const LayerShape& layer, const ElementFormat& format,
                               int tensor_parallel) {
  switch (layer.kind) {
    case LayerKind::kLatentAttention:
    case LayerKind::kSparseLatentAttention:
      return (DsMlaLayout(layer, format) ? DsMlaBits(layer) : format.VectorBits(layer.latent_dim)) +
             IndexerBitsOf(layer);
    case LayerKind::kFullAttention:
    case LayerKind::kSlidingWindow:
    case LayerKind::kChunkedAttention:
      // The indexer key is one for all heads: every GPU keeps it whole.
      return HeadsPerGpu(layer.kv_heads, tensor_parallel) *
                 (format.VectorBits(layer.qk_head_dim) + format.VectorBits(layer.v_head_dim)) +
             IndexerBitsOf(layer);
    case LayerKind::kCompressedLatent:
      // Whole on every GPU, like an MLA latent; rounded up to whole bits
      // (LayerBytesPerToken is exact).
      return layer.compress_ratio > 0
                 ? CeilDiv(CompressedGroupBits(layer, format), layer.compress_ratio)
                 : 0;
    case LayerKind::kLinearState:
    case LayerKind::kMambaState:
    case LayerKind::kConvState:
    case LayerKind::kNoOp:
      return 0;
  }
  return 0;
}

double BytesPerToken(const ModelShape& model, const ElementFormat& format, int tensor_parallel) {
  std::int64_t bits = 0;
  double compressed = 0;
  for (const LayerShape& l : model.layers) {
    if (l.SharesKv()) continue;  // its source layer holds the bytes
    if (l.IsCompressed()) {
      compressed += LayerBytesPerToken(l, format, tensor_parallel);
    } else {
      bits += LayerBitsPerToken(l, format, tensor_parallel);
    }
  }
  return static_cast<double>(bits) / 8.0 + compressed;
}

Tokens ResidentTokens(const LayerShape& layer, Tokens ctx) {
  if (ctx <= 0) return 0;
  switch (layer.kind) {
    case LayerKind::kSlidingWindow:
    case LayerKind::kCompressedLatent:  // its window of raw latents
      return std::min(ctx, layer.window);
    case LayerKind::kChunkedAttention:
      return ctx - layer.window * ((ctx - 1) / layer.window);
    case LayerKind::kFullAttention:
    case LayerKind::kLatentAttention:
    case LayerKind::kSparseLatentAttention:
      return ctx;
    default:
      return 0;
  }
}

std::int64_t WindowedPeakBlocks(Tokens window, Tokens ctx, Tokens prefill_chunk,
                                Tokens block_size) {
  // Window and chunk past ctx give the same minimum; clamped, no sum overflows.
  const Tokens w = std::min(window, ctx), chunk = std::min(prefill_chunk, ctx);
  return std::min(CeilDiv(ctx, block_size),
                  CeilDiv(w, block_size) + CeilDiv(chunk, block_size) + 1);
}

Tokens ResidentBlocks(const LayerShape& layer, Tokens ctx, Tokens block_size) {
  const Tokens resident = ResidentTokens(layer, ctx);
  if (resident <= 0) return 0;
  const Tokens lo = FirstResident(layer, ctx);
  return (ctx - 1) / block_size - lo / block_size + 1;
}

namespace {

// The most bits a footprint counts: above it (1 EiB) a sum saturates and the
// footprint says so, instead of wrapping past 64 bits.
constexpr std::int64_t kMaxFootprintBits = std::numeric_limits<std::int64_t>::max() - 7;

// *bits += a * b * c, saturating at kMaxFootprintBits.
void AddBits(std::int64_t* bits, std::int64_t a, std::int64_t b, std::int64_t c, bool* saturated) {
  std::int64_t p = 0;
  if (*saturated || __builtin_mul_overflow(a, b, &p) || __builtin_mul_overflow(p, c, &p) ||
      __builtin_add_overflow(*bits, p, bits) || *bits > kMaxFootprintBits) {
    *bits = kMaxFootprintBits;
    *saturated = true;
  }
}

// `peak`: the most over contexts 1..ctx; `prefill_chunk` > 0 (with peak):
// windowed layers also hold a prefill chunk (PeakFootprint).
SequenceFootprint Sum(const ModelShape& model, const ElementFormat& format, Tokens ctx,
                      Tokens block_size, int tensor_parallel, bool peak, Tokens prefill_chunk) {
  std::int64_t bits = 0, rounded_bits = 0;
  bool saturated = false;
  for (const LayerShape& l : model.layers) {
    if (l.SharesKv()) continue;
    if (l.IsCompressed()) {
      // The window of raw latents, which the engine's pool holds per
      // sequence (not in blocks: the same in both sums), and one entry
      // (with its indexer key) per compress_ratio tokens, rounded as the
      // pool pages them: ceil(block / r) entries a block (kv_groups.h).
      const std::int64_t entry = CompressedEntryBits(l, format);
      AddBits(&bits, entry, ResidentTokens(l, ctx), 1, &saturated);
      AddBits(&rounded_bits, entry, ResidentTokens(l, ctx), 1, &saturated);
      if (l.compress_ratio > 0) {
        AddBits(&bits, CompressedGroupBits(l, format), ctx / l.compress_ratio, 1, &saturated);
        AddBits(&rounded_bits, LayerBitsPerBlock(l, format, block_size), CeilDiv(ctx, block_size),
                1, &saturated);
      }
      continue;
    }
    const std::int64_t per_token = LayerBitsPerToken(l, format, tensor_parallel);
    if (peak && prefill_chunk > 0 && l.IsWindowed() && ctx > 0) {
      // The window's last tokens and the chunk being computed (kv_groups.h).
      AddBits(&bits, per_token,
              std::min(ctx, std::min(l.window, ctx) - 1 + std::min(prefill_chunk, ctx)), 1,
              &saturated);
      AddBits(&rounded_bits, per_token,
              WindowedPeakBlocks(l.window, ctx, prefill_chunk, block_size), block_size, &saturated);
      continue;
    }
    Tokens at = ctx;
    // Chunked layers peak at the last token of a full chunk: min(ctx, chunk)
    // tokens, chunk-aligned. Other layers are monotone in ctx.
    if (peak && l.kind == LayerKind::kChunkedAttention && ctx > l.window) at = l.window;
    AddBits(&bits, per_token, ResidentTokens(l, at), 1, &saturated);
    AddBits(&rounded_bits, per_token, ResidentBlocks(l, at, block_size), block_size, &saturated);
  }
  SequenceFootprint f{BitsToBytes(bits), BitsToBytes(rounded_bits),
                      StateBytesPerSequence(model, tensor_parallel)};
  f.saturated = saturated;
  return f;
}

}  // namespace

SequenceFootprint Footprint(const ModelShape& model, const ElementFormat& format, Tokens ctx,
                            Tokens block_size, int tensor_parallel) {
  return Sum(model, format, ctx, block_size, tensor_parallel, false, 0);
}

SequenceFootprint PeakFootprint(const ModelShape& model, const ElementFormat& format, Tokens ctx,
                                Tokens block_size, int tensor_parallel, Tokens prefill_chunk) {
  return Sum(model, format, ctx, block_size, tensor_parallel, true, prefill_chunk);
}

std::int64_t LayerStateBits(const LayerShape& l, int state_bits, int tensor_parallel) {
  // A compressed layer's compressor state: whole on every GPU, in its own bits.
  if (l.IsCompressed()) return l.recurrent_state_elements * l.recurrent_state_bits;
  if (!l.HoldsState()) return 0;
  const std::int64_t recurrent_bits =
      l.recurrent_state_bits > 0 ? l.recurrent_state_bits : state_bits;
  std::int64_t conv = l.conv_state_elements;
  if (l.state_groups > 0 && tensor_parallel > 1 && l.state_groups % tensor_parallel != 0) {
    // vLLM's mamba2_state_shape: groups + (tp - groups), then conv_dim / tp.
    conv += (tensor_parallel - l.state_groups) * l.group_conv_state_elements;
  }
  return SplitCeil(conv, tensor_parallel) * state_bits +
         SplitCeil(l.recurrent_state_elements, tensor_parallel) * recurrent_bits;
}

Bytes StateBytesPerSequence(const ModelShape& model, int tensor_parallel) {
  auto format = ParseElementFormat(model.state_format);
  const int bits = format ? format->element_bits : 16;
  std::int64_t total_bits = 0;
  for (const LayerShape& l : model.layers) total_bits += LayerStateBits(l, bits, tensor_parallel);
  return BitsToBytes(total_bits);
}

}  // namespace kvbill
