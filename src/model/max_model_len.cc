#include "model/max_model_len.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <utility>
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

// The key of the RoPE scaling the config declares: rope_scaling when it is
// given (not null, not {}), else rope_parameters (transformers v5:
// `rope_scaling or rope_parameters`); nullptr for none.
const char* RopeKey(const json& c) {
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    auto it = c.find(key);
    if (it != c.end() && !it->is_null() && !(it->is_object() && it->empty())) return key;
  }
  return nullptr;
}

// The settings of a RoPE scaling object, each with its name ("" for a flat
// one): the object itself, or, when it names no type or factor and holds an
// object, its objects, one per layer type (Transformers v5's
// rope_parameters; Laguna's also holds a shared
// original_max_position_embeddings beside them).
std::vector<std::pair<std::string, const json*>> RopeEntries(const json& rope) {
  std::vector<std::pair<std::string, const json*>> entries;
  const bool nested =
      !rope.contains("rope_type") && !rope.contains("type") && !rope.contains("factor") &&
      std::any_of(rope.begin(), rope.end(), [](const json& v) { return v.is_object(); });
  if (!nested) {
    entries.emplace_back("", &rope);
    return entries;
  }
  for (auto it = rope.begin(); it != rope.end(); ++it) {
    if (it->is_object()) entries.emplace_back(it.key(), &*it);
  }
  return entries;
}

// A setting's type: rope_type, else the legacy type, else default.
std::string RopeType(const json& entry) {
  std::string type = Text(entry, "rope_type");
  if (type.empty()) type = Text(entry, "type");
  return type.empty() ? "default" : type;
}

// The RoPE types kvbill reads (max_model_len.h).
// clang-format off
constexpr const char* kRopeTypes[] = {
    "default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional",
    "ntk", "deepseek_yarn", "deepseek_llama_scaling", "mllama4", "xdrope", "openpangu",
    "su", "mrope"};
// clang-format on

// A key a rope type requires is absent or null.
Error Needed(const Fields& r, const std::string& key, const std::string& type) {
  const bool null = r.object().contains(key);
  return r.Bad(key, std::string(null ? "is null (None)" : "missing") + ": rope type \"" + type +
                        "\" requires it");
}

Status PositiveNumber(const Fields& r, const std::string& key) {
  const json& v = r.Get(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
    return r.Bad(key, "must be a positive number, got " + Show(v));
  }
  return OkStatus();
}

Status NumberList(const Fields& r, const std::string& key) {
  const json& v = r.Get(key);
  bool ok = v.is_array() && !v.empty();
  for (std::size_t i = 0; ok && i < v.size(); ++i) {
    ok = v[i].is_number() && std::isfinite(v[i].get<double>());
  }
  if (!ok) return r.Bad(key, "must be a list of numbers, got " + Show(v));
  return OkStatus();
}

// One RoPE setting: `top` is the text config (a longrope type reads its
// original_max_position_embeddings).
Status CheckRopeEntry(const Fields& r, const Fields& top) {
  for (const char* key : {"rope_type", "type"}) {
    if (r.Has(key) && !r.Get(key).is_string()) {
      return r.Bad(key, "must be a string, got " + Show(r.Get(key)));
    }
  }
  const std::string type = RopeType(r.object());
  if (r.Has("rope_type") && r.Has("type") && r.Get("type") != r.Get("rope_type")) {
    return r.Bad("type", "is " + Show(r.Get("type")) + ", but rope_type is " +
                             Show(r.Get("rope_type")) + " (vLLM refuses the conflict)");
  }
  if (std::find_if(std::begin(kRopeTypes), std::end(kRopeTypes),
                   [&](const char* t) { return type == t; }) == std::end(kRopeTypes)) {
    std::string known;
    for (const char* t : kRopeTypes) known += (known.empty() ? "" : ", ") + std::string(t);
    return r.Bad(r.Has("rope_type") ? "rope_type" : "type",
                 "unknown rope type \"" + type + "\" (known: " + known + ")");
  }
  // Keys the type requires (transformers' _validate_*_rope_parameters, vLLM's
  // get_rope), then every number present.
  std::vector<const char*> numbers, lists, int_lists;
  if (type == "linear" || type == "ntk" || type == "yarn" || type == "llama3" ||
      (type == "dynamic" && !r.Has("alpha"))) {
    numbers.push_back("factor");
  }
  if (type == "deepseek_yarn" || type == "deepseek_llama_scaling") {
    numbers.push_back("factor");
    numbers.push_back("original_max_position_embeddings");
  }
  if (type == "llama3") {
    numbers.push_back("low_freq_factor");
    numbers.push_back("high_freq_factor");
  }
  if (type == "xdrope") {
    numbers.push_back("alpha");
    int_lists.push_back("xdrope_section");
  }
  if (type == "longrope" || type == "su") {
    lists.push_back("short_factor");
    lists.push_back("long_factor");
  }
  if (type == "mrope" || type == "openpangu") int_lists.push_back("mrope_section");
  for (const std::vector<const char*>* keys : {&numbers, &lists, &int_lists}) {
    for (const char* key : *keys) {
      if (!r.Has(key)) return Needed(r, key, type);
    }
  }
  for (const char* key : {"factor", "alpha", "low_freq_factor", "high_freq_factor"}) {
    if (r.Has(key)) {
      if (auto s = PositiveNumber(r, key); !s) return s;
    }
  }
  for (const char* key : lists) {
    if (auto s = NumberList(r, key); !s) return s;
  }
  for (const char* key : int_lists) {
    if (auto v = r.OptionalIntList(key); !v) return v.error();
  }
  if (auto v = r.OptionalInt("original_max_position_embeddings"); !v) return v.error();
  if (type == "longrope" || type == "su") {
    if (auto v = top.OptionalInt("original_max_position_embeddings"); !v) return v.error();
  }
  return OkStatus();
}

}  // namespace

namespace {

// DerivedMaxModelLen before truncation; 0 without a length key.
// The length before any RoPE scaling (step 1 of DerivedMaxModelLen) and
// the key it came from; 0 and "" without one.
std::pair<double, std::string> BaseLength(const json& c) {
  std::optional<double> len;
  std::string from;
  for (const char* key :
       {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
        "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len"}) {
    if (auto v = Positive(c, key); v && (!len || *v < *len)) {
      len = *v;
      from = key;
    }
  }
  if (auto v = Positive(c, "model_max_length")) {
    len = *v;
    from = "model_max_length";
  }
  return {len.value_or(0), from};
}

// Whether a RoPE entry's factor scales the length (DerivedMaxModelLen).
bool FactorScalesLength(const json& entry, const std::string& model_type) {
  const std::string type = RopeType(entry);
  return type != "su" && type != "longrope" && type != "llama3" &&
         model_type.find("gemma3") == std::string::npos;
}

double DerivedLength(const json& c, const std::string& model_type) {
  if (!c.is_object()) return 0;
  std::optional<double> len;
  if (const double base = BaseLength(c).first; base > 0) len = base;
  if (!len) return 0;
  const char* rope_key = RopeKey(c);
  if (rope_key != nullptr && c[rope_key].is_object() &&
      model_type.find("gemma3") == std::string::npos) {
    double factor = 1;
    for (const auto& [name, e] : RopeEntries(c[rope_key])) {
      const std::string type = RopeType(*e);
      if (!FactorScalesLength(*e, model_type)) continue;
      if (auto f = Positive(*e, "factor")) factor = *f;
      if (type == "yarn") {
        if (auto o = Positive(*e, "original_max_position_embeddings")) len = *o;
      }
    }
    *len *= factor;
  }
  return *len;
}

}  // namespace

Tokens DerivedMaxModelLen(const json& c, const std::string& model_type) {
  // CheckRopeScaling bounds the scaled length; the clamp keeps the
  // conversion defined for a config it was not given.
  return static_cast<Tokens>(std::min(DerivedLength(c, model_type), kMaxScaledModelLen));
}

Status CheckRopeScaling(const Fields& f, const std::string& model_type) {
  if (!f.object().is_object()) return OkStatus();
  // The length itself, before any scaling, within the bound too.
  if (const auto [base, from] = BaseLength(f.object()); base > kMaxScaledModelLen) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", base);
    return f.Bad(from, std::string(buf) +
                           " tokens, past 2^40 (1,099,511,627,776), a length no engine serves");
  }
  const char* key = RopeKey(f.object());
  if (key == nullptr) return OkStatus();
  const json& rope = f.Get(key);
  if (!rope.is_object()) return f.Bad(key, "must be an object, got " + Show(rope));
  // The last entry whose factor scales the length: the one it takes.
  std::string factor_at;
  for (const auto& [name, entry] : RopeEntries(rope)) {
    const Fields r(*entry, f.source(), f.prefix() + key + "." + (name.empty() ? "" : name + "."));
    if (auto s = CheckRopeEntry(r, f); !s) return s;
    if (entry->is_object() && entry->contains("factor") && FactorScalesLength(*entry, model_type)) {
      factor_at = std::string(key) + "." + (name.empty() ? "" : name + ".") + "factor";
    }
  }
  // The scaled length must be one an engine can hold: at least one token,
  // at most kMaxScaledModelLen (a factor of 1e300 would overflow it).
  const double len = DerivedLength(f.object(), model_type);
  if (!factor_at.empty() && len > 0 && (len < 1 || len > kMaxScaledModelLen)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", len);
    return f.Bad(factor_at, std::string("scales max_model_len to ") + buf + " tokens, " +
                                (len < 1 ? "less than one"
                                         : "past 2^40 (1,099,511,627,776), a length no engine "
                                           "serves"));
  }
  return OkStatus();
}

Tokens LongRopeDefaultMaxModelLen(const json& c) {
  if (!c.is_object()) return 0;
  const char* key = RopeKey(c);
  if (key == nullptr || !c[key].is_object()) return 0;
  const std::string type = RopeType(c[key]);
  if (type != "longrope" && type != "su") return 0;
  auto original = Positive(c, "original_max_position_embeddings");
  return original ? static_cast<Tokens>(*original) : 0;
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
