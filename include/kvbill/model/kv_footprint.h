// KV cache arithmetic: bytes per token and the footprint of one sequence.
//
//   full / sliding / chunked layer: kv_heads * (K vector + V vector) per token
//   MLA layer: one latent vector of latent_dim elements per token
//   MLA + sparse indexer: the latent, plus an indexer key of indexer_dim
//     elements in fp8 with an fp32 scale per 128 (whatever the KV format)
//   footprint(ctx) = sum over layers of bytes_per_token(layer) * resident(layer, ctx)
//   resident: full, MLA: ctx; sliding: min(ctx, window);
//             chunked: tokens of the current chunk, ctx - window * floor((ctx - 1) / window)
//   compressed (DeepSeek-V4): min(ctx, window) latents + floor(ctx / r)
//     compressed latents (with an indexer key each on ratio-4 layers); the
//     latent in fp8 is the 584-byte fp8_ds_mla entry, otherwise a vector
// State layers (linear attention, Mamba, short convolution) and the fp32
// compressor state of compressed layers add a constant per sequence,
// reported separately.
//
// Block rounding follows paged allocators (vLLM): a layer holds whole blocks
// of `block_size` token positions aligned to position 0, so the resident
// token range [lo, ctx) takes floor((ctx - 1) / bs) - floor(lo / bs) + 1 blocks.
//
// All results are exact: bits are summed as integers and converted to bytes
// once, rounding up (every published shape gives whole bytes).
#ifndef KVBILL_MODEL_KV_FOOTPRINT_H_
#define KVBILL_MODEL_KV_FOOTPRINT_H_

#include <cstdint>

#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/units.h"

namespace kvbill {

// Bits one token adds to `layer`'s cache on one GPU when the layer's KV heads
// are split over `tensor_parallel` GPUs (replicated when fewer heads than
// GPUs; an MLA latent and its indexer key are replicated). 0 for state and
// no-op layers.
// The bits of one token's indexer key in `layer` (0 without an indexer):
// part of LayerBitsPerToken, whatever the KV format.
std::int64_t IndexerBitsPerToken(const LayerShape& layer);

std::int64_t LayerBitsPerToken(const LayerShape& layer, const ElementFormat& format,
                               int tensor_parallel = 1);

// Bytes per token `layer` adds on one GPU, exact: LayerBitsPerToken / 8,
// but for a compressed layer (entry + indexer key) / compress_ratio, which
// need not be whole bits (584 B / 128 = 36.5 bits). Its window is not
// counted: it stops growing at `window` tokens.
double LayerBytesPerToken(const LayerShape& layer, const ElementFormat& format,
                          int tensor_parallel = 1);

// Bits a block of `block_size` token positions of `layer` takes in a paged
// pool: LayerBitsPerToken x block_size; for a compressed layer, the block's
// entries (with their indexer keys), at least one, ceil(block_size / r)
// (its window is held per sequence, not in blocks).
std::int64_t LayerBitsPerBlock(const LayerShape& layer, const ElementFormat& format,
                               Tokens block_size, int tensor_parallel = 1);

// Bits of one latent of a compressed layer in `format` (a window entry or a
// compressed one, indexer key excluded); 0 for other layers.
std::int64_t LatentEntryBits(const LayerShape& layer, const ElementFormat& format);

// Bytes per token summed over every layer that keeps a per-token entry
// (sliding and chunked layers at their per-token rate), on one GPU.
double BytesPerToken(const ModelShape& model, const ElementFormat& format, int tensor_parallel = 1);

// Tokens `layer` holds for a sequence at context `ctx`, and the token
// positions of its first resident token (for block rounding).
Tokens ResidentTokens(const LayerShape& layer, Tokens ctx);
Tokens ResidentBlocks(const LayerShape& layer, Tokens ctx, Tokens block_size);

struct SequenceFootprint {
  Bytes kv_bytes = 0;             // exact, linear-state layers excluded
  Bytes block_rounded_bytes = 0;  // whole blocks per layer
  Bytes state_bytes = 0;          // constant state of linear-state layers
  // The sum went past 2^63 bits (1 EiB): the byte counts hold that bound, a
  // size no GPU holds, and a command that prints sizes refuses the context.
  bool saturated = false;
};

// One sequence's KV at context `ctx` on one GPU of a `tensor_parallel` group.
// Preconditions: ctx >= 0, block_size >= 1.
SequenceFootprint Footprint(const ModelShape& model, const ElementFormat& format, Tokens ctx,
                            Tokens block_size, int tensor_parallel = 1);

// Blocks a sliding-window or chunked-attention layer of window (or chunk)
// `window` holds at most for a sequence reaching `ctx` tokens when the engine
// computes up to `prefill_chunk` tokens an iteration: the blocks of its
// window and of the chunk being computed, and one more for a window that
// does not start on a block boundary, never more than the sequence's:
//   min(ceil(ctx / bs), ceil(window / bs) + ceil(prefill_chunk / bs) + 1).
// The engine's KV pool (KvPool::PeakPages) and `fit` both count this. It is
// at least vLLM's own counts, ceil((W - 1 + chunk) / bs) + 1 blocks for a
// sliding window W (SlidingWindowSpec.max_memory_usage_bytes) and
// ceil((C + chunk) / bs) for an attention chunk C (ChunkedLocalAttentionSpec),
// and at most one block above them.
// Preconditions: window >= 1, block_size >= 1, ctx >= 0, prefill_chunk >= 0.
std::int64_t WindowedPeakBlocks(Tokens window, Tokens ctx, Tokens prefill_chunk, Tokens block_size);

// The most one sequence holds on its way to context `ctx`. With
// `prefill_chunk` 0, the largest footprint over contexts 1..ctx (it differs
// from Footprint only for chunked layers, whose resident count falls back at
// each chunk boundary). With `prefill_chunk` > 0, tokens computed an
// iteration (the engine's max_num_batched_tokens), each sliding or chunked
// layer also holds the chunk being prefilled beside its window: in blocks
// WindowedPeakBlocks, exactly min(ctx, window - 1 + prefill_chunk) tokens.
// This is what an allocator must be able to hold to reach ctx.
SequenceFootprint PeakFootprint(const ModelShape& model, const ElementFormat& format, Tokens ctx,
                                Tokens block_size, int tensor_parallel = 1,
                                Tokens prefill_chunk = 0);

// Constant per-sequence state bytes of state layers on one GPU.
Bytes StateBytesPerSequence(const ModelShape& model, int tensor_parallel = 1);

// Bits of one state layer's per-sequence state on one GPU, with the
// convolution state in `state_bits` per element (the model's state format)
// and the recurrent state in the layer's own bits when it has them. 0 for
// layers without state.
std::int64_t LayerStateBits(const LayerShape& layer, int state_bits, int tensor_parallel = 1);

}  // namespace kvbill

#endif  // KVBILL_MODEL_KV_FOOTPRINT_H_
