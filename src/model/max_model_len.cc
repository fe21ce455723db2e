#include "model/max_model_len.h"

#include <cmath>
#include <optional>

namespace kvbill::model_config {
namespace {

std::optional<double> Number(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

Tokens DerivedMaxModelLen(const nlohmann::json& c, const std::string& model_type) {
  if (!c.is_object()) return 0;
  std::optional<double> derived;
  for (const char* key : {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
                          "model_max_length", "max_sequence_length", "max_seq_length", "seq_len"}) {
    auto v = Number(c, key);
    if (v && *v >= 1 && (!derived || *v < *derived)) derived = *v;
  }
  if (!derived) return 0;
  auto rope = c.find("rope_scaling");
  if (rope != c.end() && rope->is_object() && model_type.find("gemma3") == std::string::npos) {
    std::string type = "default";
    for (const char* key : {"rope_type", "type"}) {
      auto t = rope->find(key);
      if (t != rope->end() && t->is_string()) {
        type = t->get<std::string>();
        break;
      }
    }
    if (type != "su" && type != "longrope" && type != "llama3") {
      if (type == "yarn") {
        if (auto original = Number(*rope, "original_max_position_embeddings")) {
          derived = *original;
        }
      }
      *derived *= Number(*rope, "factor").value_or(1.0);
    }
  }
  return static_cast<Tokens>(*derived);
}

}  // namespace kvbill::model_config
