// Building a ModelShape from a Hugging Face config.json as published.
//
// The config is read the way transformers' configuration classes read it:
// the text config of multimodal configs, the class defaults of the
// model_type for absent or null keys, per-layer lists, and Python's JSON
// dialect (NaN, Infinity). Each family's rule gives every layer its kind
// (full, sliding, chunked, MLA, MLA + sparse indexer, linear attention,
// Mamba, short convolution, no-op) with its own heads and head dims; the
// towers and quantization_config size the weights. docs/models.md is the
// specification. A config that cannot be sized is an error naming the file
// and the field, e.g.
//   "my.json: num_hidden_layers: missing"
//   "my.json: text_config.num_key_value_heads: must be a positive integer, got -8"
// and one whose layer kinds kvbill cannot tell names the key and the model type.
#ifndef KVBILL_MODEL_HF_CONFIG_H_
#define KVBILL_MODEL_HF_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "kvbill/model/model_shape.h"
#include "kvbill/util/result.h"

namespace kvbill {

// A what-if edit of a config key before it is interpreted: `--set key=value`.
// The value is JSON when it parses as JSON (64, true, null, [1,2]) and a
// string otherwise; null removes the key. Keys address the text config (the
// nested `text_config` when there is one); a leading "text_config." is allowed.
struct ConfigOverride {
  std::string key;
  std::string value;
};

// Parses "key=value". Error when there is no '=' or the key is empty.
Result<ConfigOverride> ParseConfigOverride(std::string_view text);

// Interprets config.json text. `source` names the file in errors and becomes
// ModelShape::source; `name` becomes ModelShape::name. `text_only` leaves
// the vision and audio towers out of the weights.
Result<ModelShape> ParseHfConfig(std::string_view json_text, const std::string& source,
                                 const std::string& name,
                                 const std::vector<ConfigOverride>& overrides = {},
                                 bool text_only = false);

// Loads a model by bundled catalog name ("qwen3-32b") or by path to a
// config.json. Error lists the catalog names when neither matches.
Result<ModelShape> LoadModel(const std::string& name_or_path,
                             const std::vector<ConfigOverride>& overrides = {},
                             bool text_only = false);

// What vLLM's kv_cache_dtype "auto" stores for `model`: the KV format its
// checkpoint declares (ModelShape::checkpoint_kv_format), else its dtype;
// fp8 for DeepSeek-V4 (compressed layers), whose fp8_ds_mla cache is the
// only one vLLM runs.
std::string VllmAutoKvFormat(const ModelShape& model);

struct CatalogModel {
  std::string name;         // short name, the file stem in scenarios/models/
  std::string_view config;  // the config.json text, embedded at build time
};

// The bundled catalog (scenarios/models/*.json), sorted by name.
const std::vector<CatalogModel>& ModelCatalog();

}  // namespace kvbill

#endif  // KVBILL_MODEL_HF_CONFIG_H_
