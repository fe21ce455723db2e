// The longest sequence (prompt + output) a model serves, derived from its
// text config as vLLM derives max_model_len when none is given
// (vllm/config.py, _get_and_verify_max_len):
//   1. the smallest positive integer among max_position_embeddings,
//      n_positions, max_seq_len, seq_length, model_max_length,
//      max_sequence_length, max_seq_length and seq_len;
//   2. with a `rope_scaling` object (its `rope_type`, else `type`, default
//      "default") of a type other than su, longrope and llama3 (whose
//      max_position_embeddings already counts the scaling), on a model type
//      other than Gemma 3 (likewise): yarn starts from the scaling's
//      original_max_position_embeddings instead; the length is then
//      multiplied by its `factor` (default 1) and truncated to an integer.
// 0 when no key of step 1 is present. Pure.
#ifndef KVBILL_SRC_MODEL_MAX_MODEL_LEN_H_
#define KVBILL_SRC_MODEL_MAX_MODEL_LEN_H_

#include <nlohmann/json.hpp>
#include <string>

#include "kvbill/util/units.h"

namespace kvbill::model_config {

Tokens DerivedMaxModelLen(const nlohmann::json& text_config, const std::string& model_type);

}  // namespace kvbill::model_config

#endif  // KVBILL_SRC_MODEL_MAX_MODEL_LEN_H_
