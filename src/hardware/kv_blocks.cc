#include "kvbill/hardware/kv_blocks.h"

#include <algorithm>

namespace kvbill {
namespace {

// vLLM's and SGLang's MLA backends above are CUDA kernels; on AMD both run
// their defaults.
bool Nvidia(const GpuSpec& gpu) {
  return gpu.architecture != "cdna3" && gpu.architecture != "cdna4";
}

}  // namespace

bool VllmKvBlocks::Keeps(Tokens block_size) const {
  if (block_size <= 0) return false;
  if (exact) return block_size == size;
  return block_size % multiple == 0 || (also > 0 && block_size == also);
}

VllmKvBlocks VllmKvBlockRule(const ModelShape& model, const GpuSpec& gpu) {
  const auto& layers = model.layers;
  auto any = [&](auto pred) { return std::any_of(layers.begin(), layers.end(), pred); };
  if (model.HasCompressedLayers()) {
    return {256, 256, 0, true, "DeepSeek-V4's sparse sliding-window attention"};
  }
  if (Nvidia(gpu) &&
      any([](const LayerShape& l) { return l.kind == LayerKind::kSparseLatentAttention; })) {
    return {64, 64, 0, true, "FlashMLA sparse"};
  }
  auto mla = std::find_if(layers.begin(), layers.end(), [](const LayerShape& l) {
    return l.kind == LayerKind::kLatentAttention;
  });
  if (mla == layers.end()) return {};
  if (gpu.architecture == "hopper") return {64, 64, 0, false, "FlashMLA (Hopper)"};
  if (gpu.architecture == "blackwell") {
    // FlashInfer's MLA kernel takes qk_nope_head_dim 128 only.
    if (mla->qk_head_dim - mla->rope_dim == 128) {
      return {64, 64, 32, false, "FlashInfer MLA (Blackwell)"};
    }
    return {128, 128, 0, false, "CUTLASS MLA (Blackwell)"};
  }
  return {};
}

Tokens SglangForcedPage(const ModelShape& model, const GpuSpec& gpu) {
  if (!Nvidia(gpu)) return 0;
  bool mla = false, sparse = false;
  for (const LayerShape& l : model.layers) {
    mla = mla || l.kind == LayerKind::kLatentAttention;
    sparse = sparse || l.kind == LayerKind::kSparseLatentAttention;
  }
  if (sparse) return 64;
  if (mla && gpu.architecture == "blackwell" && model.architecture == "DeepseekV3ForCausalLM") {
    return 64;
  }
  return 0;
}

Tokens DefaultKvBlockSize(const std::string& engine, const ModelShape& model, const GpuSpec& gpu) {
  if (engine == "vllm") return VllmKvBlockRule(model, gpu).size;
  if (const Tokens page = SglangForcedPage(model, gpu); page > 0) return page;
  return model.HasCompressedLayers() ? 256 : 16;
}

}  // namespace kvbill
