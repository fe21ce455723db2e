// --model, --set and --text-only, shared by the commands that load a model.
#ifndef KVBILL_CLI_MODEL_FLAGS_H_
#define KVBILL_CLI_MODEL_FLAGS_H_

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kvbill/model/hf_config.h"

namespace kvbill::cli {

struct ModelFlags {
  std::string model = "qwen3-32b";
  std::vector<std::string> sets;
  bool text_only = false;  // leave the vision and audio towers out of the weights
};

void AddModelFlags(boost::program_options::options_description& options, ModelFlags& flags);

// Loads the model, applying --set overrides; errors name the flag or field.
Result<ModelShape> LoadModelFromFlags(const ModelFlags& flags);

// The config keys read at their class defaults (ModelShape::defaulted_fields)
// as "hidden_size = 4096, vocab_size = 32000"; empty when there are none.
std::string DefaultedFieldsText(const ModelShape& model);

// The same as a JSON array of {"field", "value"} (the value as the default
// gives it): kv's and fit's `defaulted_fields`.
nlohmann::ordered_json DefaultedFieldsJson(const ModelShape& model);

// One-paragraph description: name, architecture, layers by kind, heads,
// parameters total/active.
std::string DescribeModel(const ModelShape& model);

// --kv-format "auto": what vLLM's kv_cache_dtype auto stores, the KV format
// the checkpoint declares, else the model's dtype; any other name as given.
std::string AutoKvFormat(const std::string& name, const ModelShape& model);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_MODEL_FLAGS_H_
