// Bytes of a model's weights in a given storage format.
//
// "auto" keeps the checkpoint's own formats (ModelShape::native_weights:
// e.g. DeepSeek-V3 ships fp8 linear layers, gpt-oss MXFP4 experts). A named
// format applies to every linear layer inside the blocks (attention, MLPs,
// experts, shared experts, SSM mixers); embeddings, lm_head, norms and
// routers stay in the checkpoint's 16-bit type, as serving engines keep them.
// Block-scale metadata of fp8 checkpoints (one fp32 per 128x128) is below
// 0.01% and not counted; formats with per-group scales (nvfp4, mxfp4, intN)
// include theirs.
#ifndef KVBILL_MODEL_WEIGHT_BYTES_H_
#define KVBILL_MODEL_WEIGHT_BYTES_H_

#include <string>

#include "kvbill/model/model_shape.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct WeightBytes {
  Bytes total = 0;           // every parameter
  Bytes active = 0;          // what one token reads: all but the unused routed experts
  Bytes routed_experts = 0;  // all routed experts (part of total)
  std::string description;   // e.g. "bf16" or "fp8-e4m3 linear, mxfp4 experts, bf16 other"
};

// `format` is "auto" or a name ParseElementFormat accepts.
Result<WeightBytes> ComputeWeightBytes(const ModelShape& model, const std::string& format);

}  // namespace kvbill

#endif  // KVBILL_MODEL_WEIGHT_BYTES_H_
