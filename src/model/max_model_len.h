// The longest sequence (prompt + output) a model serves, derived from its
// text config as vLLM derives max_model_len when none is given
// (_get_and_verify_max_len, vllm/config/model.py):
//   1. the smallest positive number among max_position_embeddings,
//      n_positions, max_seq_len, seq_length, max_target_positions,
//      max_sequence_length, max_seq_length and seq_len; model_max_length,
//      when present, wins (vLLM's rule for Command-R, Cohere 2 and Aya
//      Vision). vLLM reads them from the configuration object, so a key
//      the config.json omits takes its transformers class default
//      (config_defaults.cc: Gemma's 8,192, DeepSeek-V3's 4,096, ...);
//   2. a RoPE scaling (`rope_scaling`, else Transformers v5's
//      `rope_parameters`, flat or one entry per layer type; its `rope_type`,
//      else `type`) of a type other than su, longrope and llama3 (whose
//      max_position_embeddings already counts the scaling), on a model type
//      other than Gemma 3 (likewise), multiplies it by its `factor`; yarn
//      starts from its original_max_position_embeddings. Truncated to an
//      integer.
// 0 when no key of step 1 is present; the loader then takes vLLM's
// assumption, kAssumedMaxModelLen. Expects a RoPE scaling CheckRopeScaling
// accepted (a malformed one is skipped, not refused). Pure.
#ifndef KVBILL_SRC_MODEL_MAX_MODEL_LEN_H_
#define KVBILL_SRC_MODEL_MAX_MODEL_LEN_H_

#include <nlohmann/json.hpp>
#include <string>

#include "kvbill/util/units.h"
#include "model/config_json.h"

namespace kvbill::model_config {

// Checks the text config's RoPE scaling (`rope_scaling`, else
// `rope_parameters`; null or absent: none) against what transformers' rope
// validation and vLLM's get_rope require (docs/models.md, "RoPE scaling"):
// an object, flat or one object per layer type; its `rope_type` (else the
// legacy `type`; both: the same) a known type; `factor` a positive
// number, required by the types that scale by it (linear, dynamic without
// `alpha`, ntk, yarn, deepseek_yarn, deepseek_llama_scaling, llama3);
// `original_max_position_embeddings` (inside it, and at the top level of a
// longrope config) a positive integer; the other keys each type requires
// present with numbers or lists of numbers. The types: transformers' (default,
// linear, dynamic, yarn, longrope, llama3, proportional), those vLLM's
// get_rope adds (ntk, deepseek_yarn, deepseek_llama_scaling, mllama4,
// xdrope, openpangu) and the legacy names vLLM rewrites (su: longrope;
// mrope: default with an mrope_section). Errors name the field:
// "FILE: rope_scaling.factor: must be a positive number, got \"4\"".
// The scaled length must come to between one token and kMaxScaledModelLen
// (2^40): "rope_scaling.factor: scales max_model_len to 1.311e+305 tokens,
// past 2^40 ...".
Status CheckRopeScaling(const Fields& text_config, const std::string& model_type);

inline constexpr double kMaxScaledModelLen = 1099511627776.0;  // 2^40 tokens

Tokens DerivedMaxModelLen(const nlohmann::json& text_config, const std::string& model_type);

// vLLM's default max_model_len for a LongRoPE model (rope type longrope,
// or su, which vLLM rewrites to longrope) when none is given: the config's
// top-level original_max_position_embeddings, "to avoid performance
// degradation for shorter sequences" (_get_and_verify_max_len); the
// derived length stays the most --max-model-len may ask for. 0 for any
// other model, or one without the key. Pure.
Tokens LongRopeDefaultMaxModelLen(const nlohmann::json& text_config);

// What vLLM assumes for a config without a length key.
inline constexpr Tokens kAssumedMaxModelLen = 2048;

// Whether the text config's RoPE scaling (`rope_scaling`, else
// `rope_parameters`) has an `mrope_section`, as vLLM's uses_mrope reads it.
bool UsesMrope(const nlohmann::json& text_config);

}  // namespace kvbill::model_config

#endif  // KVBILL_SRC_MODEL_MAX_MODEL_LEN_H_
