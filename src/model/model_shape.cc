#include "kvbill/model/model_shape.h"

#include <algorithm>

namespace kvbill {

const char* LayerKindName(LayerKind kind) {
  switch (kind) {
    case LayerKind::kFullAttention:
      return "full";
    case LayerKind::kLatentAttention:
      return "mla";
    case LayerKind::kSlidingWindow:
      return "sliding";
    case LayerKind::kChunkedAttention:
      return "chunked";
    case LayerKind::kLinearState:
      return "linear";
    case LayerKind::kSparseLatentAttention:
      return "mla_indexer";
    case LayerKind::kMambaState:
      return "mamba";
    case LayerKind::kConvState:
      return "conv";
    case LayerKind::kNoOp:
      return "none";
    case LayerKind::kCompressedLatent:
      return "compressed";
  }
  return "unknown";
}

const std::vector<LayerKind>& AllLayerKinds() {
  static const std::vector<LayerKind> kinds = {
      LayerKind::kFullAttention,   LayerKind::kLatentAttention,  LayerKind::kSparseLatentAttention,
      LayerKind::kSlidingWindow,   LayerKind::kChunkedAttention, LayerKind::kLinearState,
      LayerKind::kMambaState,      LayerKind::kConvState,        LayerKind::kNoOp,
      LayerKind::kCompressedLatent};
  return kinds;
}

int ModelShape::CountLayers(LayerKind kind) const {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(),
                                        [&](const LayerShape& l) { return l.kind == kind; }));
}

int ModelShape::DecoderLayers() const { return layers.empty() ? 0 : layers.back().index + 1; }

bool ModelShape::HasState() const {
  return std::any_of(layers.begin(), layers.end(),
                     [](const LayerShape& l) { return l.HoldsState(); });
}

bool ModelShape::HasCompressedLayers() const {
  return std::any_of(layers.begin(), layers.end(),
                     [](const LayerShape& l) { return l.IsCompressed(); });
}

std::int64_t ModelShape::MaxKvHeads() const {
  std::int64_t heads = 0;
  for (const LayerShape& l : layers) heads = std::max(heads, l.kv_heads);
  return heads;
}

std::int64_t ModelShape::ReappliedParams(bool attention_only) const {
  std::int64_t n = 0;
  for (const WeightGroup& g : weights) {
    if (g.uses <= 1 || g.role == ParamRole::kMtp) continue;
    if (attention_only && g.module_role != ParamRole::kAttention) continue;
    n += g.Params() * (g.uses - 1);
  }
  return n;
}

std::int64_t ModelShape::QueryHeads() const {
  for (const LayerShape& l : layers) {
    if (l.query_heads > 0) return l.query_heads;
  }
  return 0;
}

}  // namespace kvbill
