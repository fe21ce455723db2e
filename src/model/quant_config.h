// The storage format of each weight tensor, from the model dtype and the
// checkpoint's quantization_config (docs/models.md, "Weights in bytes"):
// fp8 (per tensor or block-scaled), mxfp4 (gpt-oss experts),
// compressed-tensors (int / float, group, channel, tensor, block and
// tensor-group strategies), modelopt (NVFP4, FP8), AWQ and GPTQ. Modules an
// ignore list names, routers, norms and embeddings stay at the dtype.
// Internal to src/model/.
#ifndef KVBILL_SRC_MODEL_QUANT_CONFIG_H_
#define KVBILL_SRC_MODEL_QUANT_CONFIG_H_

#include <string>
#include <vector>

#include "kvbill/model/model_shape.h"
#include "model/config_json.h"

namespace kvbill::model_config {

// The 16/32-bit format of torch_dtype / dtype ("bfloat16" -> bf16).
Result<WeightFormat> DtypeFormat(const std::string& dtype, const Fields& where,
                                 const std::string& key);

// Sets the format of every group of `weights`. `quant` is the
// quantization_config object (or null), read with `fields` for errors;
// when `text_only`, it came from the text config and leaves the towers at
// the dtype. Returns the ElementFormat dense linear layers compute in.
Result<std::string> AssignWeightFormats(const json* quant, const Fields& fields, bool text_only,
                                        const WeightFormat& dtype,
                                        std::vector<WeightGroup>* weights);

// DeepSeek-V4's expert_dtype: "fp4" stores the routed experts (those of
// the prediction layers too) in MXFP4 (an E8M0 scale per 32) in DeepSeek's
// own fp8 checkpoint; "fp8" leaves them to quantization_config. nvidia's
// NVFP4 releases keep that fp8 quantization_config and add ModelOpt's
// MIXED_PRECISION quantized_layers for the experts, applied on top. A bad
// value names the key.
Status ApplyExpertDtype(const Fields& f, const json* quant, const WeightFormat& dtype,
                        std::vector<WeightGroup>* weights);

// The KV cache format a quantization_config declares (an 8-bit float
// kv_cache_scheme, ModelOpt's kv_cache_scheme or kv_cache_quant_algo FP8 or
// NVFP4): "fp8-e4m3", "nvfp4", or "" for none. `quant` and `fields` as
// AssignWeightFormats takes them. A kv_cache_scheme kvbill cannot size is an
// error naming it: an object other than num_bits 8, type "float"; under
// compressed-tensors anything but an object; another string.
Result<std::string> CheckpointKvFormat(const json* quant, const Fields& fields);

// "int4-g32 (compressed-tensors) 96.1%, bf16 3.9%": the formats by share of
// the parameters a server loads (MTP modules left out).
std::string DescribeWeightFormats(const std::vector<WeightGroup>& weights);

}  // namespace kvbill::model_config

#endif  // KVBILL_SRC_MODEL_QUANT_CONFIG_H_
