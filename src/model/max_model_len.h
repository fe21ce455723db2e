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
// assumption, kAssumedMaxModelLen. Pure.
#ifndef KVBILL_SRC_MODEL_MAX_MODEL_LEN_H_
#define KVBILL_SRC_MODEL_MAX_MODEL_LEN_H_

#include <nlohmann/json.hpp>
#include <string>

#include "kvbill/util/units.h"

namespace kvbill::model_config {

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
