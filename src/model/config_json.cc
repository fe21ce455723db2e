#include "model/config_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "util/json_input.h"

namespace kvbill::model_config {
namespace {

// Strings that stand for the non-finite literals between the rewrite and the
// parse. The unit separator (U+001F) cannot appear unescaped in JSON text.
constexpr std::string_view kNanMarker = "\x1fkvbill:NaN";
constexpr std::string_view kInfMarker = "\x1fkvbill:Infinity";
constexpr std::string_view kNegInfMarker = "\x1fkvbill:-Infinity";

struct Rewrite {
  std::size_t new_pos = 0;  // where the marker starts in the rewritten text
  std::size_t old_pos = 0;  // where the literal starts in the original
  std::size_t new_len = 0;
  std::size_t old_len = 0;
};

// Replaces NaN, Infinity and -Infinity outside strings by marker strings.
std::string RewriteNonFinite(std::string_view text, std::vector<Rewrite>* rewrites) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[i + 1]);
        i += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      ++i;
      continue;
    }
    std::string_view literal, marker;
    const std::string_view rest = text.substr(i);
    if (rest.starts_with("NaN")) {
      literal = "NaN";
      marker = kNanMarker;
    } else if (rest.starts_with("Infinity")) {
      literal = "Infinity";
      marker = kInfMarker;
    } else if (rest.starts_with("-Infinity")) {
      literal = "-Infinity";
      marker = kNegInfMarker;
    }
    if (!literal.empty()) {
      // The marker's first character (U+001F) must be escaped inside JSON text.
      const std::string quoted = "\"\\u001f" + std::string(marker.substr(1)) + "\"";
      rewrites->push_back(Rewrite{out.size(), i, quoted.size(), literal.size()});
      out += quoted;
      i += literal.size();
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

// The offset in the original text of offset `pos` of the rewritten text.
std::size_t OriginalOffset(std::size_t pos, const std::vector<Rewrite>& rewrites) {
  std::ptrdiff_t delta = 0;
  for (const Rewrite& r : rewrites) {
    if (pos < r.new_pos) break;
    if (pos < r.new_pos + r.new_len) return r.old_pos + std::min(pos - r.new_pos, r.old_len);
    delta += static_cast<std::ptrdiff_t>(r.new_len) - static_cast<std::ptrdiff_t>(r.old_len);
  }
  return static_cast<std::size_t>(static_cast<std::ptrdiff_t>(pos) - delta);
}

void RestoreNonFinite(json& value) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s == kNanMarker) {
      value = std::numeric_limits<double>::quiet_NaN();
    } else if (s == kInfMarker) {
      value = std::numeric_limits<double>::infinity();
    } else if (s == kNegInfMarker) {
      value = -std::numeric_limits<double>::infinity();
    }
  } else if (value.is_array() || value.is_object()) {
    for (json& child : value) RestoreNonFinite(child);
  }
}

std::string DescribeMin(Int min) {
  if (min == 1) return "a positive integer";
  if (min == 0) return "a non-negative integer";
  return "an integer >= " + std::to_string(min);
}

// The most a config integer may be (docs/models.md#bounds). No published
// config comes within a factor of ten of these; the bounds keep every product
// the shape is built from (heads x head_dim x hidden, experts x
// intermediate x hidden) inside 64 bits.
Int MaxFor(std::string_view where) {
  const std::string_view key = where.substr(0, where.find('['));
  for (std::string_view tokens :
       {"max_position_embeddings", "original_max_position_embeddings", "n_positions", "seq_length",
        "sliding_window", "sliding_window_size", "window_length", "attention_chunk_size"}) {
    if (key == tokens) return kMaxConfigTokens;
  }
  return key == "vocab_size" ? kMaxConfigVocab : kMaxConfigDimension;
}

}  // namespace

Result<json> ParseModelConfigJson(std::string_view text, const std::string& source) {
  std::vector<Rewrite> rewrites;
  const std::string rewritten = RewriteNonFinite(text, &rewrites);
  // Through the front door, with Python's rule for repeated keys (the last
  // wins); positions map back to the original text.
  json_input::Problem problem;
  auto parsed = json_input::Parse(rewritten, &problem, {.allow_duplicate_keys = true});
  if (!parsed) {
    problem.byte = OriginalOffset(problem.byte, rewrites);
    return Error(json_input::Describe(source, text, problem));
  }
  json root = std::move(*parsed);
  if (!rewrites.empty()) RestoreNonFinite(root);
  return root;
}

std::string Show(const json& value) {
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  }
  // At most 80 characters: a longer value shows its first 77 and "...".
  std::string text = json_input::Quote(value, 81);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

bool Fields::Has(const std::string& key) const {
  if (!object_->is_object()) return false;
  auto it = object_->find(key);
  return it != object_->end() && !it->is_null();
}

Error Fields::Bad(const std::string& key, const std::string& message) const {
  // A key written as null is there, as None: what reads it finds no value.
  if (message == "missing" && object_->contains(key) && (*object_)[key].is_null()) {
    return Error(source_ + ": " + prefix_ + key + ": is null (None), where a value is needed");
  }
  return Error(source_ + ": " + prefix_ + key + ": " + message);
}

Result<Int> Fields::AsInt(const json& v, const std::string& where, Int min) const {
  // A float counts when it is whole and within Int's range: converting one
  // outside it (1e20) would be undefined behaviour.
  const auto whole = [](double d) {
    return std::isfinite(d) && d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d);
  };
  const bool integral = v.is_number_integer() || (v.is_number_float() && whole(v.get<double>()));
  if (!integral || v.is_boolean()) {
    return Bad(where, "must be " + DescribeMin(min) + ", got " + Show(v));
  }
  const Int value = v.is_number_float() ? static_cast<Int>(v.get<double>()) : v.get<Int>();
  if (value < min) return Bad(where, "must be " + DescribeMin(min) + ", got " + Show(v));
  if (const Int max = MaxFor(where); value > max) {
    return Bad(where, "must be at most " + std::to_string(max) +
                          " (no real model comes near; docs/models.md#bounds), got " + Show(v));
  }
  return value;
}

Result<std::optional<Int>> Fields::OptionalInt(const std::string& key, Int min) const {
  if (!Has(key)) return std::optional<Int>();
  auto v = AsInt(Get(key), key, min);
  if (!v) return v.error();
  return std::optional<Int>(*v);
}

Result<Int> Fields::RequiredInt(std::initializer_list<const char*> keys, Int min) const {
  auto v = FirstInt(keys, min);
  if (!v) return v.error();
  if (!v->has_value()) {
    for (const char* key : keys) {
      if (object_->contains(key)) return Bad(key, "missing");  // written as null
    }
    return Bad(*keys.begin(), "missing");
  }
  return **v;
}

Result<std::optional<Int>> Fields::FirstInt(std::initializer_list<const char*> keys,
                                            Int min) const {
  for (const char* key : keys) {
    auto v = OptionalInt(key, min);
    if (!v) return v.error();
    if (v->has_value()) return *v;
  }
  return std::optional<Int>();
}

Result<Int> Fields::IntOr(const std::string& key, Int default_value, Int min) const {
  auto v = OptionalInt(key, min);
  if (!v) return v.error();
  return v->value_or(default_value);
}

Result<bool> Fields::Bool(const std::string& key, bool default_value) const {
  if (!Has(key)) return default_value;
  const json& v = Get(key);
  if (!v.is_boolean()) return Bad(key, "must be true or false, got " + Show(v));
  return v.get<bool>();
}

Result<std::optional<double>> Fields::OptionalNumber(const std::string& key) const {
  if (!Has(key)) return std::optional<double>();
  const json& v = Get(key);
  if (!v.is_number() || v.is_boolean() || !std::isfinite(v.get<double>())) {
    return Bad(key, "must be a finite number, got " + Show(v));
  }
  return std::optional<double>(v.get<double>());
}

std::string Fields::StringOr(const std::string& key, const std::string& default_value) const {
  if (!Has(key) || !Get(key).is_string()) return default_value;
  return Get(key).get<std::string>();
}

Result<std::optional<std::vector<Int>>> Fields::OptionalIntList(const std::string& key) const {
  if (!Has(key)) return std::optional<std::vector<Int>>();
  const json& v = Get(key);
  if (!v.is_array()) return Bad(key, "must be a list of integers, got " + Show(v));
  std::vector<Int> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto item = AsInt(v[i], key + "[" + std::to_string(i) + "]", std::numeric_limits<Int>::min());
    if (!item)
      return Bad(key + "[" + std::to_string(i) + "]", "must be an integer, got " + Show(v[i]));
    out.push_back(*item);
  }
  return std::optional<std::vector<Int>>(std::move(out));
}

Result<std::optional<std::vector<Int>>> Fields::PerLayerInt(const std::string& key, Int layers,
                                                            Int min) const {
  if (!Has(key)) return std::optional<std::vector<Int>>();
  const json& v = Get(key);
  std::vector<Int> out;
  if (v.is_array()) {
    if (static_cast<Int>(v.size()) != layers) {
      return Bad(key, "has " + std::to_string(v.size()) + " entries, num_hidden_layers is " +
                          std::to_string(layers));
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto item = AsInt(v[i], key + "[" + std::to_string(i) + "]", min);
      if (!item) return item.error();
      out.push_back(*item);
    }
  } else {
    auto item = AsInt(v, key, min);
    if (!item) return item.error();
    out.assign(static_cast<std::size_t>(layers), *item);
  }
  return std::optional<std::vector<Int>>(std::move(out));
}

Result<std::optional<std::vector<Int>>> Fields::FirstPerLayerInt(
    std::initializer_list<const char*> keys, Int layers, Int min) const {
  for (const char* key : keys) {
    auto v = PerLayerInt(key, layers, min);
    if (!v) return v.error();
    if (v->has_value()) return *v;
  }
  return std::optional<std::vector<Int>>();
}

}  // namespace kvbill::model_config
