// Reading a model config.json: the JSON dialect Hugging Face configs are
// written in, and typed access to one config object with errors that name
// the file and the field. Internal to src/model/.
//
// Hugging Face configs are written by Python's json module, which writes the
// non-finite floats as NaN, Infinity and -Infinity (Nemotron-H:
// "time_step_limit": [0.0, Infinity]). ParseModelConfigJson accepts those
// three literals outside strings and nowhere else; every other reader of the
// project keeps rejecting them (docs/robustness.md).
#ifndef KVBILL_SRC_MODEL_CONFIG_JSON_H_
#define KVBILL_SRC_MODEL_CONFIG_JSON_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill::model_config {

using nlohmann::json;
using Int = std::int64_t;

// Upper bounds of config integers (docs/models.md#bounds): token counts
// (context lengths, windows, chunks), the vocabulary, and every other
// dimension or count.
inline constexpr Int kMaxConfigTokens = Int{1} << 40;
inline constexpr Int kMaxConfigVocab = Int{1} << 24;
inline constexpr Int kMaxConfigDimension = Int{1} << 20;
// KV elements per token (all layers) and state elements per sequence: ~28x
// and ~20x the largest published models (GPT-3-sized multi-head attention;
// Nemotron-H-56B's Mamba state).
inline constexpr Int kMaxKvElementsPerToken = Int{1} << 26;
inline constexpr Int kMaxStateElementsPerSequence = Int{1} << 30;

// Parses config.json text in Python's JSON dialect. NaN, Infinity and
// -Infinity become the double values. Errors: "SOURCE:LINE:COL: not valid
// JSON: REASON" (positions in the original text).
Result<json> ParseModelConfigJson(std::string_view text, const std::string& source);

// A JSON value as an error message shows it (non-finite numbers as Python
// writes them).
std::string Show(const json& value);

// Read access to one JSON object (the text config, a block config, a vision
// config) with errors that name the file and the field: "FILE: PREFIXkey: ...".
// A key whose value is null reads as absent: null means "the default".
class Fields {
 public:
  Fields(const json& object, std::string source, std::string prefix)
      : object_(&object), source_(std::move(source)), prefix_(std::move(prefix)) {}

  // Present and not null.
  bool Has(const std::string& key) const;
  const json& Get(const std::string& key) const { return object_->at(key); }
  const json& object() const { return *object_; }

  Error Bad(const std::string& key, const std::string& message) const;

  // An integer >= `min`; absent -> nullopt. Whole floats count (1e3).
  Result<std::optional<Int>> OptionalInt(const std::string& key, Int min = 1) const;
  // The first present key of `keys` (aliases), which must be an integer >= min.
  Result<Int> RequiredInt(std::initializer_list<const char*> keys, Int min = 1) const;
  Result<std::optional<Int>> FirstInt(std::initializer_list<const char*> keys, Int min = 1) const;
  Result<Int> IntOr(const std::string& key, Int default_value, Int min = 1) const;
  Result<bool> Bool(const std::string& key, bool default_value) const;
  Result<std::optional<double>> OptionalNumber(const std::string& key) const;
  std::string StringOr(const std::string& key, const std::string& default_value) const;
  // An array of integers (no_rope_layers, attn_type_list, mlp_only_layers).
  Result<std::optional<std::vector<Int>>> OptionalIntList(const std::string& key) const;

  // A per-layer quantity: an integer (every layer) or a list of `layers`
  // integers, one per layer, each >= min. Absent -> nullopt. Errors name
  // the entry: "key[3]: must be a positive integer, got -1" or
  // "key: has 3 entries, num_hidden_layers is 4".
  Result<std::optional<std::vector<Int>>> PerLayerInt(const std::string& key, Int layers,
                                                      Int min = 1) const;
  // The first present key of `keys` as a per-layer quantity.
  Result<std::optional<std::vector<Int>>> FirstPerLayerInt(std::initializer_list<const char*> keys,
                                                           Int layers, Int min = 1) const;

  const std::string& source() const { return source_; }
  const std::string& prefix() const { return prefix_; }

 private:
  Result<Int> AsInt(const json& v, const std::string& where, Int min) const;

  const json* object_;
  std::string source_;
  std::string prefix_;
};

}  // namespace kvbill::model_config

#endif  // KVBILL_SRC_MODEL_CONFIG_JSON_H_
