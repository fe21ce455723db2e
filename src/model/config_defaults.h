// The defaults transformers' configuration classes apply, per model_type.
//
// A published config.json omits a key when the class has a default for it
// (Gemma 3's text_config has no vocab_size: Gemma3TextConfig says 262208),
// and writes null for "the default" (DeciLM: num_key_value_heads: null).
// Before a config is read, every absent or null key of its model_type's
// entry is set to the class default. Each entry names the file its values
// come from; docs/models.md lists the families. Values are JSON text, or
// "@key" for "the value of key" (num_key_value_heads defaults to the number
// of attention heads in Llama's class). Internal to src/model/.
#ifndef KVBILL_SRC_MODEL_CONFIG_DEFAULTS_H_
#define KVBILL_SRC_MODEL_CONFIG_DEFAULTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvbill::model_config {

struct ModelTypeDefaults {
  std::string_view model_type;
  std::string source;  // the configuration class file the values come from
  std::vector<std::pair<std::string_view, std::string_view>> values;
};

// Every entry, sorted by model_type.
const std::vector<ModelTypeDefaults>& ConfigDefaultsTable();

// The entry of `model_type`, or nullptr.
const ModelTypeDefaults* FindDefaults(std::string_view model_type);

// A key ApplyDefaults filled with a class default (not a reference to
// another key: num_key_value_heads "@num_attention_heads" is the class's
// reading of absence, multi-head attention, not a guessed value).
struct FilledDefault {
  std::string key;
  nlohmann::json value;
};

// Whether `key` sizes the model (its layers, heads, dims, vocabulary,
// experts, window): the keys whose class default ModelShape lists as
// defaulted_fields. Aliases included (n_layer, d_model, ...).
bool IsSizingKey(std::string_view key);

// Sets each absent or null key of `config` (an object) to its default.
// Returns the keys it set to a constant, in the entry's order.
std::vector<FilledDefault> ApplyDefaults(const ModelTypeDefaults& defaults, nlohmann::json& config);

}  // namespace kvbill::model_config

#endif  // KVBILL_SRC_MODEL_CONFIG_DEFAULTS_H_
