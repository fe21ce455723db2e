#include "kvbill/model/hf_model_id.h"

#include <cctype>

namespace kvbill {

HfModelChoice CatalogModelFromHfId(const std::string& id, const std::string& weights) {
  const std::size_t slash = id.find('/');
  std::string name = id.substr(slash == std::string::npos ? 0 : slash + 1);
  std::string w = weights;
  for (std::string* s : {&name, &w}) {
    for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  HfModelChoice c;
  auto strip = [&](const std::string& suffix) {
    const std::size_t at = name.find(suffix);
    if (at == std::string::npos) return false;
    name.erase(at, suffix.size());
    return true;
  };
  if (strip("-fp8")) {
    c.weight_format = "fp8";
    c.fp8_checkpoint = true;
  }
  if (strip("-awq")) c.weight_format = "int4-g128";
  strip("-instruct-2507");
  strip("-instruct");
  strip("-0528");
  if (name.rfind("deepseek-r1", 0) == 0) name = "deepseek-v3";
  if (w == "fp8" && c.weight_format == "auto" && name != "deepseek-v3") {
    c.weight_format = "fp8";
    c.fp8_checkpoint = true;
  }
  if (w.rfind("awq", 0) == 0) c.weight_format = "int4-g128";
  // Z.ai's GLM-4.5 FP8 releases are compressed-tensors checkpoints with one
  // scale per output channel and activations quantised per token when run
  // (no 128x128 blocks): engines run their dense layers through CUTLASS
  // scaled_mm, not the block-scaled DeepGEMM kernel (docs/engine.md,
  // "Formats").
  if (name.rfind("glm-4.5", 0) == 0) c.fp8_checkpoint = false;
  c.catalog = name;
  return c;
}

}  // namespace kvbill
