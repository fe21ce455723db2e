// Bytes of a model's weights in a given storage format.
//
// "auto" keeps the checkpoint's own formats (ModelShape::weights: each
// tensor's format from torch_dtype and quantization_config, scales and
// zero points included: DeepSeek-V3's fp8 with an fp32 scale per 128 x 128
// block, gpt-oss's MXFP4 experts, Kimi K2.5's int4 experts with a bf16
// scale per 32). A named format applies to every linear layer inside the
// blocks (attention, MLPs, experts, shared experts, SSM mixers);
// embeddings, lm_head, norms, routers and the vision / audio towers stay in
// the checkpoint's dtype, as serving engines keep them. MTP modules are not
// loaded without speculative decoding and are left out.
#ifndef KVBILL_MODEL_WEIGHT_BYTES_H_
#define KVBILL_MODEL_WEIGHT_BYTES_H_

#include <map>
#include <string>

#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct WeightBytes {
  Bytes total = 0;           // every tensor a server loads
  Bytes active = 0;          // what one decode step reads per token: no unused experts, no towers
  Bytes routed_experts = 0;  // all routed experts (part of total)
  Bytes towers = 0;          // vision and audio towers (part of total, not of active)
  // The input embedding table when the lm_head does not share it (part of
  // total, not of active): a step gathers only its tokens' rows. Tied, the
  // table is the lm_head's, read whole for the logits, and counts in active.
  Bytes gathered_embedding = 0;
  std::string description;  // e.g. "bf16" or "int4-g32 (compressed-tensors) 96.1%, bf16 3.9%"
  // Of total, what every GPU of a tensor-parallel group holds whole: vLLM
  // builds MoE routers and MLA's q_a_proj / kv_a_proj_with_mqa as
  // ReplicatedLinear, and replicates norms (DeepSeek-V3: about 1.03B
  // parameters).
  Bytes replicated = 0;
  std::int64_t replicated_params = 0;  // the parameters of `replicated`
  // Bytes a forward pass streams again for weights it applies more than
  // once (WeightGroup::uses): not held twice, but read again each use.
  Bytes reapplied = 0;
  // Of total, the K and V projections by their head count
  // (WeightGroup::kv_heads): over more GPUs than heads, each GPU holds one.
  std::map<std::int64_t, Bytes> kv_projections;
  // Of total, Mamba-2's B and C groups in in_proj and conv1d by their group
  // count (WeightGroup::state_groups): over more GPUs than groups, each GPU
  // holds whole groups, as for K and V heads.
  std::map<std::int64_t, Bytes> state_group_parts;

  // Bytes one GPU of `tensor_parallel` holds: the replicated tensors whole,
  // the rest split evenly (rounded up), and the K and V projections of
  // fewer heads than GPUs one head each (tp / heads copies of every head)
  // instead of a fraction of one; Mamba-2 groups alike.
  Bytes PerGpu(int tensor_parallel) const {
    const Bytes tp = tensor_parallel < 1 ? 1 : tensor_parallel;
    Bytes gpu = (total - replicated + tp - 1) / tp + replicated;
    for (const auto* parts : {&kv_projections, &state_group_parts}) {
      for (const auto& [heads, bytes] : *parts) {
        if (heads > 0 && heads < tp) gpu += bytes / heads - bytes / tp;
      }
    }
    return gpu;
  }
};

// Parameter counts of `weights` by role (routed experts: all of them, and
// the active_copies a token uses).
ParamCounts ParamsByRole(const std::vector<WeightGroup>& weights);

// A tensor every GPU of a tensor-parallel group holds, reads and applies
// whole in vLLM (WeightBytes::replicated): norms, MoE routers, MLA's down
// projections, DeepSeek-V4's fused q / kv down projection and compressors,
// Step 3's query-rank projection, MTP modules' eh_proj, Gemma 3n's and
// Gemma 4's per-layer input projections and AltUp.
bool HeldWholeOnEveryGpu(const WeightGroup& group);

// `format` is "auto" or a name ParseElementFormat accepts.
Result<WeightBytes> ComputeWeightBytes(const ModelShape& model, const std::string& format);

// The checkpoint's storage format of each part of the model, for cost models
// that take one format per part: the format holding most of the part's
// parameters, as an ElementFormat (element bits and per-group or per-row
// scales; block and per-tensor scales, under 0.01 bits per weight, are left
// out). `dense`: attention, dense MLP, shared-expert and mixer weights;
// `experts`: routed experts; `other`: embeddings, lm_head and routers. A part
// the model lacks gets the dtype. Towers and MTP modules are not counted.
struct PartFormats {
  ElementFormat dense;
  ElementFormat experts;
  ElementFormat other;
};
Result<PartFormats> NativePartFormats(const ModelShape& model);

}  // namespace kvbill

#endif  // KVBILL_MODEL_WEIGHT_BYTES_H_
