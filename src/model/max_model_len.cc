#include "model/max_model_len.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace kvbill::model_config {
namespace {

using nlohmann::json;

std::optional<double> Positive(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

std::string Text(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Tokens DerivedMaxModelLen(const json& c, const std::string& model_type) {
  if (!c.is_object()) return 0;
  std::optional<double> len;
  for (const char* key :
       {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
        "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len"}) {
    if (auto v = Positive(c, key)) len = len ? std::min(*len, *v) : *v;
  }
  if (auto v = Positive(c, "model_max_length")) len = *v;
  if (!len) return 0;
  const char* rope_key = c.contains("rope_scaling") && c["rope_scaling"].is_object()
                             ? "rope_scaling"
                             : "rope_parameters";
  const json rope = c.contains(rope_key) ? c[rope_key] : json();
  if (rope.is_object() && model_type.find("gemma3") == std::string::npos) {
    std::vector<json> entries;
    if (rope.contains("rope_type") || rope.contains("type") || rope.contains("factor")) {
      entries.push_back(rope);
    } else {
      for (auto it = rope.begin(); it != rope.end(); ++it) {
        if (it->is_object()) entries.push_back(*it);
      }
    }
    double factor = 1;
    for (const json& e : entries) {
      std::string type = Text(e, "rope_type");
      if (type.empty()) type = Text(e, "type");
      if (type == "su" || type == "longrope" || type == "llama3") continue;
      if (auto f = Positive(e, "factor")) factor = *f;
      if (type == "yarn") {
        if (auto o = Positive(e, "original_max_position_embeddings")) len = *o;
      }
    }
    *len *= factor;
  }
  return static_cast<Tokens>(*len);
}

Tokens LongRopeDefaultMaxModelLen(const json& c) {
  if (!c.is_object()) return 0;
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    auto it = c.find(key);
    if (it == c.end() || !it->is_object()) continue;
    std::string type = Text(*it, "rope_type");
    if (type.empty()) type = Text(*it, "type");
    if (type != "longrope" && type != "su") return 0;
    auto original = Positive(c, "original_max_position_embeddings");
    return original ? static_cast<Tokens>(*original) : 0;
  }
  return 0;
}

bool UsesMrope(const json& c) {
  if (!c.is_object()) return false;
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    auto it = c.find(key);
    if (it != c.end() && it->is_object() && it->contains("mrope_section")) return true;
  }
  return false;
}

}  // namespace kvbill::model_config
