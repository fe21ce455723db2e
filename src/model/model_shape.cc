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
  }
  return "unknown";
}

int ModelShape::CountLayers(LayerKind kind) const {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(),
                                        [&](const LayerShape& l) { return l.kind == kind; }));
}

std::int64_t ModelShape::MaxKvHeads() const {
  std::int64_t heads = 0;
  for (const LayerShape& l : layers) heads = std::max(heads, l.kv_heads);
  return heads;
}

std::int64_t ModelShape::QueryHeads() const {
  for (const LayerShape& l : layers) {
    if (l.query_heads > 0) return l.query_heads;
  }
  return 0;
}

}  // namespace kvbill
