// Building a ModelShape from a Hugging Face config.json as published.
//
// The rules for every shape kvbill understands (GQA, MQA, MLA, sliding
// window, chunked attention, hybrid linear-attention / SSM layers, MoE) and
// the default applied when a key is absent are in docs/models.md. A config
// that cannot be sized is an error naming the file and the field, e.g.
//   "my.json: num_hidden_layers: missing"
//   "my.json: text_config.num_key_value_heads: must be a positive integer, got -8"
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
// ModelShape::source; `name` becomes ModelShape::name.
Result<ModelShape> ParseHfConfig(std::string_view json_text, const std::string& source,
                                 const std::string& name,
                                 const std::vector<ConfigOverride>& overrides = {});

// Loads a model by bundled catalog name ("qwen3-32b") or by path to a
// config.json. Error lists the catalog names when neither matches.
Result<ModelShape> LoadModel(const std::string& name_or_path,
                             const std::vector<ConfigOverride>& overrides = {});

struct CatalogModel {
  std::string name;         // short name, the file stem in scenarios/models/
  std::string_view config;  // the config.json text, embedded at build time
};

// The bundled catalog (scenarios/models/*.json), sorted by name.
const std::vector<CatalogModel>& ModelCatalog();

}  // namespace kvbill

#endif  // KVBILL_MODEL_HF_CONFIG_H_
