#include "kvbill/model/weight_bytes.h"

#include "kvbill/model/kv_format.h"

namespace kvbill {
namespace {

// Bits of `params` elements stored in `format`, groups of metadata included.
std::int64_t ParamBits(std::int64_t params, const ElementFormat& format) {
  return format.VectorBits(params);
}

}  // namespace

Result<WeightBytes> ComputeWeightBytes(const ModelShape& model, const std::string& format) {
  std::string dense_name = model.native_weights.dense;
  std::string expert_name = model.native_weights.experts;
  const std::string other_name = model.native_weights.other;
  if (format != "auto") dense_name = expert_name = format;
  auto dense = ParseElementFormat(dense_name);
  if (!dense) return Error("--weight-format: " + dense.error().message());
  auto experts = ParseElementFormat(expert_name);
  if (!experts) return experts.error();
  auto other = ParseElementFormat(other_name);
  if (!other) return other.error();

  const ParamCounts& p = model.params;
  const std::int64_t dense_params = p.attention + p.dense_mlp + p.shared_experts + p.linear_mixers;
  const std::int64_t other_params = p.embedding + p.lm_head + p.norms + p.routers;
  const std::int64_t common_bits =
      ParamBits(dense_params, *dense) + ParamBits(other_params, *other);
  WeightBytes w;
  w.total = (common_bits + ParamBits(p.routed_experts, *experts) + 7) / 8;
  w.routed_experts = (ParamBits(p.routed_experts, *experts) + 7) / 8;
  w.active = (common_bits + ParamBits(p.active_routed_experts, *experts) + 7) / 8;
  if (dense->name == experts->name && dense->name == other->name) {
    w.description = dense->name;
  } else if (p.routed_experts > 0 && dense->name != experts->name) {
    w.description = dense->name + " linear, " + experts->name + " experts, " + other->name +
                    " embeddings/norms";
  } else {
    w.description = dense->name + " linear, " + other->name + " embeddings/norms";
  }
  return w;
}

}  // namespace kvbill
