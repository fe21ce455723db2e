// The KV block size an engine pages a model in on a GPU. vLLM's attention
// backends for MLA each need their own block size and vLLM forces it over
// --block-size (vllm/platforms/cuda.py, CudaPlatformBase.
// check_and_update_config, v0.10 to v0.17):
//
//   DeepSeek-V4 (compressed layers)         256 only (its sparse sliding-
//                                           window backend; the compressed
//                                           caches of every layer in one block)
//   MLA + sparse indexer (DeepSeek-V3.2,    64 only (FlashMLA sparse)
//   GLM-5), NVIDIA GPUs
//   MLA on Hopper                           multiples of 64 (FlashMLA dense,
//                                           Hopper only), else 64
//   MLA on Blackwell (sm_100 family),       32 or multiples of 64 (FlashInfer
//   qk_nope_head_dim 128 (DeepSeek-V3/R1,   MLA), else 64
//   Kimi K2)
//   other MLA on Blackwell                  multiples of 128 (CUTLASS MLA),
//                                           else 128
//   everything else (MLA on Ampere, Ada,    multiples of 16, default 16 (vLLM's
//   sm_120 and AMD: Triton MLA)             --block-size default)
//
// kvbill takes the forced size when a scenario does not set
// prefix_cache.block_size, and warns (block_size_unserved) when it sets one
// the backend does not keep: hits, eviction and the pool would describe a
// granularity vLLM does not run.
//
// SGLang pages token by token (page_size 1) unless a backend it picks by
// default needs pages (python/sglang/srt/server_args.py): DeepSeek Sparse
// Attention (the nsa backend: "Setting page size to 64 for DeepSeek NSA")
// and DeepseekV3ForCausalLM on Blackwell (trtllm_mla, which takes 32 or 64
// and is given 64).
#ifndef KVBILL_HARDWARE_KV_BLOCKS_H_
#define KVBILL_HARDWARE_KV_BLOCKS_H_

#include <string>

#include "kvbill/hardware/gpu.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct VllmKvBlocks {
  Tokens size = 16;      // the block size vLLM runs without --block-size
  Tokens multiple = 16;  // a --block-size it keeps is a multiple of this,
  Tokens also = 0;       // or this (FlashInfer MLA's 32; 0: none)
  bool exact = false;    // or, when exact, `size` alone
  // The attention backend whose constraint this is ("FlashMLA (Hopper)");
  // empty for vLLM's general rule.
  std::string backend;

  // Whether vLLM keeps `block_size` as given.
  bool Keeps(Tokens block_size) const;
};

// vLLM's block rule for `model` on `gpu` (the table above).
VllmKvBlocks VllmKvBlockRule(const ModelShape& model, const GpuSpec& gpu);

// The page SGLang forces for `model` on `gpu` by default (64 for the cases
// above), or 0 where it pages token by token.
Tokens SglangForcedPage(const ModelShape& model, const GpuSpec& gpu);

// The block size a scenario or `fit` takes when none is given: on vLLM its
// rule's size; on SGLang the forced page, else 256 for DeepSeek-V4's
// compressed caches, else 16 (kvbill's hashing unit for pages of one token).
Tokens DefaultKvBlockSize(const std::string& engine, const ModelShape& model, const GpuSpec& gpu);

}  // namespace kvbill

#endif  // KVBILL_HARDWARE_KV_BLOCKS_H_
