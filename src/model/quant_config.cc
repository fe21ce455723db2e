#include "model/quant_config.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <regex>

namespace kvbill::model_config {
namespace {

// How a method's module lists match names.
enum class Match {
  kHfQuantizer,        // transformers' should_convert_module: key as a regex matching
                       // the name's start (or the name followed by "."), or a name suffix
  kCompressedTensors,  // "re:" regex matching the name's start, else the exact name
  kGlob,               // fnmatch over the whole name (modelopt)
  kSubstring,          // the entry anywhere in the name (vLLM's AWQ modules_to_not_convert)
  kComponents,         // the whole name, or whole dot-separated components of it
                       // (vLLM torchao.py should_skip: ".s." inside ".name.")
};

bool Glob(std::string_view pattern, std::string_view name) {
  // Iterative '*' / '?' matcher with backtracking to the last star.
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// `object[key]` when it is a string, else "" (json::value throws when the
// stored value is of another type).
std::string TextOf(const json& object, const char* key) {
  if (!object.is_object()) return std::string();
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Whether a regular expression is safe to run with std::regex, whose
// backtracking can take exponential time: no back-references, no repeated
// group that itself repeats ("(a+)*"), and at most 6 unbounded repetitions.
// Ignore lists use patterns like ".*self_attn.*" or
// ".*mlp\.(gate|up|down)_proj.*", far from these limits.
bool SafeRegex(std::string_view p) {
  std::vector<bool> group_repeats;  // per open group: it contains a repetition
  int unbounded = 0;
  auto mark = [&] {
    if (!group_repeats.empty()) group_repeats.back() = true;
  };
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      if (i + 1 < p.size() && p[i + 1] >= '1' && p[i + 1] <= '9') return false;
      ++i;
    } else if (c == '(') {
      group_repeats.push_back(false);
    } else if (c == ')') {
      if (group_repeats.empty()) return false;
      const bool inner = group_repeats.back();
      group_repeats.pop_back();
      const char next = i + 1 < p.size() ? p[i + 1] : '\0';
      if (next == '*' || next == '+' || next == '?' || next == '{') {
        if (inner) return false;
        mark();
      } else if (inner) {
        mark();  // the enclosing group contains this group's repetition
      }
    } else if (c == '*' || c == '+' || c == '{' || c == '?') {
      if (c != '?') ++unbounded;
      mark();
    }
  }
  return unbounded <= 6;
}

// A list of module patterns from the config, compiled once.
class Patterns {
 public:
  static Result<Patterns> Read(const Fields& f, const std::string& key, Match match) {
    Patterns out;
    out.match_ = match;
    if (!f.Has(key)) return out;
    const json& list = f.Get(key);
    if (!list.is_array()) return f.Bad(key, "must be a list of module names, got " + Show(list));
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string where = key + "[" + std::to_string(i) + "]";
      if (!list[i].is_string()) return f.Bad(where, "must be a string, got " + Show(list[i]));
      std::string p = list[i].get<std::string>();
      if (p.size() > 256) return f.Bad(where, "is longer than 256 characters");
      Entry e;
      e.text = p;
      const bool regex = match == Match::kHfQuantizer ||
                         (match == Match::kCompressedTensors && p.starts_with("re:"));
      if (regex) {
        if (p.starts_with("re:")) p = p.substr(3);
        if (!SafeRegex(p)) {
          if (match == Match::kCompressedTensors) {
            return f.Bad(where,
                         "a regular expression kvbill will not run (nested or more than 6 "
                         "repetitions, or a back-reference): " +
                             Show(list[i]));
          }
          out.entries_.push_back(std::move(e));  // compared as text
          continue;
        }
        try {
          e.regex = std::regex(p, std::regex::ECMAScript | std::regex::optimize);
          e.is_regex = true;
        } catch (const std::regex_error&) {
          if (match == Match::kCompressedTensors) {
            return f.Bad(where, "not a valid regular expression: " + Show(list[i]));
          }
          e.is_regex = false;  // a plain name that is not a regex: compared as text
        }
      }
      out.entries_.push_back(std::move(e));
    }
    return out;
  }

  bool empty() const { return entries_.empty(); }

  // One more entry compared as text (no regular expression).
  void AddText(std::string text) {
    Entry e;
    e.text = std::move(text);
    entries_.push_back(std::move(e));
  }

  // Whether any entry matches any spelling of the module.
  bool Matches(const std::vector<std::string>& names) const {
    for (const Entry& e : entries_) {
      for (const std::string& name : names) {
        if (MatchOne(e, name)) return true;
      }
    }
    return false;
  }

 private:
  struct Entry {
    std::string text;
    bool is_regex = false;
    std::regex regex;
  };

  bool MatchOne(const Entry& e, const std::string& name) const {
    switch (match_) {
      case Match::kHfQuantizer:
        if (name.ends_with(e.text) || name == e.text) return true;
        if (e.is_regex) {
          return std::regex_search(name, e.regex, std::regex_constants::match_continuous);
        }
        return name.starts_with(e.text);
      case Match::kCompressedTensors:
        if (e.is_regex) {
          return std::regex_search(name, e.regex, std::regex_constants::match_continuous);
        }
        return name == e.text || Glob(e.text, name);
      case Match::kGlob:
        return Glob(e.text, name);
      case Match::kSubstring:
        return name.find(e.text) != std::string::npos;
      case Match::kComponents:
        return name == e.text || ("." + name + ".").find("." + e.text + ".") != std::string::npos;
    }
    return false;
  }

  Match match_ = Match::kGlob;
  std::vector<Entry> entries_;
};

// The spellings a module has across checkpoint layouts: text models
// ("model.layers.3.mlp"), multimodal ones ("model.language_model.layers.3",
// "language_model.model.layers.3"), and the towers' many prefixes.
std::vector<std::string> Spellings(const WeightGroup& g) {
  if (g.role == ParamRole::kVision || g.role == ParamRole::kAudio) {
    if (g.role == ParamRole::kAudio)
      return {"audio_tower.layers.0.fc1", "model.audio_tower.layers.0.fc1"};
    return {"visual.blocks.0.mlp.fc1",
            "model.visual.blocks.0.mlp.fc1",
            "vision_tower.vision_model.encoder.layers.0.mlp.fc1",
            "model.vision_tower.vision_model.encoder.layers.0.mlp.fc1",
            "vision_tower.encoder.blocks.0.mlp.fc0",
            "vision_model.model.layers.0.mlp.fc1",
            "multi_modal_projector.linear_1",
            "mm_projector.proj.0"};
  }
  std::vector<std::string> out = {g.name};
  if (g.name.starts_with("layers.")) {
    // DeepSeek-V4's reference names as transformers and vLLM spell them
    // (quantization configs made from those): w1 / w3 / w2 are gate_proj /
    // up_proj / down_proj, and wq_a and wkv one fused_wqa_wkv.
    const auto renamed = [&](std::string_view from, std::string_view to) {
      if (!g.name.ends_with(from)) return;
      const std::string base = g.name.substr(0, g.name.size() - from.size()) + std::string(to);
      out.push_back(base);
      out.push_back("model." + base);
    };
    renamed(".w1", ".gate_proj");
    renamed(".w3", ".up_proj");
    renamed(".w2", ".down_proj");
    if (g.name.find(".compressor.") == std::string::npos) {
      renamed(".attn.wq_a", ".attn.fused_wqa_wkv");
      renamed(".attn.wkv", ".attn.fused_wqa_wkv");
    }
    out.push_back("model." + g.name);
  } else if (g.name.starts_with("model.")) {
    const std::string rest = g.name.substr(6);
    out.push_back("model.language_model." + rest);
    out.push_back("language_model.model." + rest);
  } else if (g.name == "lm_head") {
    out.push_back("language_model.lm_head");
  }
  return out;
}

// Whether the list `key` of `q` names a vision or audio tower's modules (a
// tower is one weight group here, its modules not told apart): exporters
// write every module they skipped (llm-compressor's visual.blocks.N.*,
// Qwen's FP8 modules_to_not_convert), so such a list keeps the whole
// tower at the dtype.
bool ListsTowerModules(const Fields& q, const std::string& key) {
  if (!q.Has(key) || !q.Get(key).is_array()) return false;
  for (const json& e : q.Get(key)) {
    if (!e.is_string()) continue;
    std::string name = e.get<std::string>();
    // "re:" first, then the multimodal wrappers ("re:model.visual.*"); a
    // glob's or regex's leading wildcard ("*visual.*", ".*visual.").
    for (const char* wrapper : {"re:", "*", ".*", "model.", "language_model."}) {
      if (name.starts_with(wrapper)) name = name.substr(std::string(wrapper).size());
    }
    for (const char* tower : {"visual.", "vision_tower.", "vision_model.", "audio_tower.",
                              "multi_modal_projector.", "mm_projector."}) {
      if (name.starts_with(tower)) return true;
    }
  }
  return false;
}

bool IsTower(const WeightGroup& g) {
  return g.role == ParamRole::kVision || g.role == ParamRole::kAudio;
}

// A linear layer a checkpoint's quantization may store, judged by its role
// inside its module (an MTP module's embedding copy is an embedding). The
// prediction layers' eh_proj is not: vLLM builds it as a plain nn.Linear
// without the quantization config (deepseek_mtp.py, glm4_moe_mtp.py), so
// checkpoints keep it in the dtype; nor is their head's copy of the lm_head.
bool Quantizable(const WeightGroup& g) {
  const bool plain = g.role == ParamRole::kMtp &&
                     (g.name.ends_with("eh_proj") || g.module_role == ParamRole::kLmHead);
  return g.linear && !plain && g.module_role != ParamRole::kRouter &&
         g.module_role != ParamRole::kEmbedding;
}

bool IsLmHead(const WeightGroup& g) { return g.module_role == ParamRole::kLmHead; }

// A group a text config's quantization may store: quantizable, and not a
// tower when the config is the text model's alone.
bool TextQuantizable(const WeightGroup& g, bool text_only) {
  return Quantizable(g) &&
         !(text_only && (g.role == ParamRole::kVision || g.role == ParamRole::kAudio));
}

Result<int> ScaleBits(const Fields& w, int default_bits) {
  const std::string dtype = w.StringOr("scale_dtype", "");
  if (dtype.empty()) return default_bits;
  // torch.uint8 holds E8M0 exponents (MXFP4's shared scales).
  if (dtype.find("float8") != std::string::npos || dtype.find("uint8") != std::string::npos) {
    return 8;
  }
  if (dtype.find("float32") != std::string::npos) return 32;
  if (dtype.find("float16") != std::string::npos || dtype.find("bfloat16") != std::string::npos) {
    return 16;
  }
  return w.Bad("scale_dtype", "unknown dtype " + Show(w.Get("scale_dtype")));
}

// One compressed-tensors "weights" scheme.
Result<WeightFormat> CompressedTensorsWeights(const Fields& w, const WeightFormat& dtype,
                                              const std::string& format) {
  auto bits = w.RequiredInt({"num_bits"});
  if (!bits) return bits.error();
  if (*bits > 32) return w.Bad("num_bits", "must be at most 32, got " + std::to_string(*bits));
  const std::string type = w.StringOr("type", "int");
  if (type != "int" && type != "float") {
    return w.Bad("type", "must be \"int\" or \"float\", got " + Show(w.Get("type")));
  }
  auto symmetric = w.Bool("symmetric", true);
  if (!symmetric) return symmetric.error();
  std::string strategy = w.StringOr("strategy", "tensor");
  const bool fp4 = type == "float" && *bits == 4;
  auto scale = ScaleBits(w, fp4 ? 8 : dtype.element_bits);
  if (!scale) return scale.error();
  const int zero = *symmetric ? 0 : static_cast<int>(*bits);
  WeightFormat f;
  f.element_bits = static_cast<int>(*bits);
  if (strategy == "group" || strategy == "tensor_group") {
    auto group = w.RequiredInt({"group_size"});
    if (!group) return group.error();
    f.group_size = static_cast<int>(std::min<Int>(*group, 1 << 30));
    f.group_bits = *scale + zero;
    if (strategy == "tensor_group") f.tensor_bits = 32 + 32;  // global weight and input scales
  } else if (strategy == "channel") {
    f.row_bits = *scale + zero;
  } else if (strategy == "block") {
    auto block = w.OptionalIntList("block_structure");
    if (!block) return block.error();
    if (!block->has_value() || (*block)->size() != 2 || (**block)[0] <= 0 || (**block)[1] <= 0) {
      return w.Bad("block_structure", "must be [rows, cols] for the block strategy");
    }
    f.block_rows = static_cast<int>(std::min<Int>((**block)[0], 1 << 30));
    f.block_cols = static_cast<int>(std::min<Int>((**block)[1], 1 << 30));
    f.block_bits = *scale + zero;
  } else if (strategy == "tensor") {
    f.tensor_bits = *scale + zero;
  } else {
    return w.Bad("strategy", "unknown strategy " + Show(w.Get("strategy")) +
                                 " (known: tensor, channel, group, block, tensor_group)");
  }
  if (format == "pack-quantized") f.tensor_bits += 64;  // the int32 weight_shape of each tensor
  // Group activation ordering stores an int32 weight_g_idx per input column
  // (vLLM compressed_tensors_wNa16.py, has_g_idx); "weight" ordering only
  // reorders. compressed-tensors' aliases: "dynamic" is "group", "static"
  // "weight"; the legacy true means "group".
  if (w.Has("actorder")) {
    const json& order = w.Get("actorder");
    if (order == "group" || order == "dynamic" || order == true) {
      f.col_bits += 32;
    } else if (!(order == "weight" || order == "static" || order == false)) {
      return w.Bad("actorder",
                   "must be \"group\" (\"dynamic\"), \"weight\" (\"static\"), true or "
                   "false, got " +
                       Show(order));
    }
  }
  // mxfp4-pack-quantized: FP4 E2M1 with an E8M0 scale per 32 elements, the
  // OCP MX format the engines' MXFP4 kernels run (Kimi-K3's experts).
  if (format == "mxfp4-pack-quantized") {
    if (!fp4 || strategy != "group" || f.group_size != 32 || f.group_bits != 8) {
      return w.Bad("group_size",
                   "mxfp4-pack-quantized must be 4-bit float groups of 32 with "
                   "8-bit scales");
    }
    auto mx = WeightFormatFromElement("mxfp4");
    if (!mx) return mx.error();
    mx->compute = dtype.compute;  // weight-only: dequantised in the kernel
    return *mx;
  }
  const std::string label =
      fp4 ? "nvfp4" : (type == "float" ? "fp" : "int") + std::to_string(*bits);
  f.name = label + (f.group_size > 0 ? "-g" + std::to_string(f.group_size) : "") +
           (strategy == "channel" ? "-channel" : "") + (strategy == "block" ? "-block" : "") +
           " (compressed-tensors)";
  // Activation quantization decides what the matmul runs in; weight-only
  // int schemes dequantize to the dtype.
  f.compute = dtype.compute;
  if (type == "float" && *bits == 8) f.compute = "fp8-e4m3";
  if (fp4) f.compute = "nvfp4";
  return f;
}

// compressed-tensors: config_groups with targets and weight schemes; ignore.
Status AssignCompressedTensors(const Fields& q, bool text_only, const WeightFormat& dtype,
                               std::vector<WeightGroup>* weights, std::string* compute) {
  auto ignore = Patterns::Read(q, "ignore", Match::kCompressedTensors);
  if (!ignore) return ignore.error();
  if (!q.Has("config_groups") || !q.Get("config_groups").is_object()) {
    return q.Bad("config_groups", "missing: compressed-tensors describes its schemes there");
  }
  const std::string format = q.StringOr("format", "");
  struct Scheme {
    Patterns targets;
    bool all_linear = false;
    WeightFormat format;
  };
  std::vector<Scheme> schemes;
  const json& groups = q.Get("config_groups");
  for (const auto& [name, group] : groups.items()) {
    const std::string at = "config_groups." + name;
    const Fields g(group, q.source(), q.prefix() + at + ".");
    if (!group.is_object()) return q.Bad(at, "must be an object");
    if (!g.Has("weights")) continue;  // activations only
    const Fields w(g.Get("weights"), q.source(), g.prefix() + "weights.");
    auto f = CompressedTensorsWeights(w, dtype, g.StringOr("format", format));
    if (!f) return f.error();
    // Int8 weights with int8 input activations are W8A8 INT8 (vLLM
    // CompressedTensorsW8A8Int8: CUTLASS int8 GEMMs), not weight-only.
    if (f->name.starts_with("int8") && g.Has("input_activations") &&
        g.Get("input_activations").is_object()) {
      const Fields a(g.Get("input_activations"), q.source(), g.prefix() + "input_activations.");
      auto act_bits = a.OptionalInt("num_bits");
      if (!act_bits) return act_bits.error();
      if (act_bits->value_or(0) == 8 && a.StringOr("type", "int") == "int") {
        f->name = "w8a8-" + f->name;
      }
    }
    Scheme s;
    auto targets = Patterns::Read(g, "targets", Match::kCompressedTensors);
    if (!targets) return targets.error();
    s.targets = std::move(*targets);
    if (g.Has("targets") && g.Get("targets").is_array()) {
      for (const json& t : g.Get("targets")) s.all_linear = s.all_linear || t == "Linear";
    }
    s.format = *f;
    schemes.push_back(std::move(s));
  }
  // An ignore list naming tower modules one by one keeps the whole tower.
  const bool tower_listed = ListsTowerModules(q, "ignore");
  for (WeightGroup& wg : *weights) {
    if (!TextQuantizable(wg, text_only)) continue;
    const auto names = Spellings(wg);
    if (ignore->Matches(names)) continue;
    if (tower_listed && IsTower(wg)) continue;
    for (const Scheme& s : schemes) {
      if (s.all_linear || s.targets.Matches(names)) {
        wg.format = s.format;
        if (wg.role != ParamRole::kRoutedExperts && wg.role != ParamRole::kMtp)
          *compute = s.format.compute;
        break;
      }
    }
  }
  return OkStatus();
}

// One ModelOpt quant_algo as stored: FP8 (fp32 weight and input scales per
// tensor), NVFP4 and W4A16_NVFP4 (an fp8 scale per group_size, fp32 global
// weight and input scales), MXFP8 (an E8M0 scale per 32), W4A16_AWQ (an
// fp16 scale per group_size). W4A16 formats compute at the dtype.
Result<WeightFormat> ModelOptFormat(const Fields& q, const std::string& where,
                                    const std::string& algo, Int group, const WeightFormat& dtype) {
  WeightFormat f;
  if (algo == "NVFP4" || algo == "W4A16_NVFP4") {
    // W4A16_NVFP4 runs weight-only on every GPU (the format matrix's
    // nvfp4-w4a16 row: vLLM pins Marlin for it, having no activation scale).
    f.name = algo == "NVFP4" ? "nvfp4" : "nvfp4-w4a16";
    f.element_bits = 4;
    f.group_size = static_cast<int>(std::min<Int>(group > 0 ? group : 16, 1 << 30));
    f.group_bits = 8;
    f.tensor_bits = 64;
    f.compute = algo == "NVFP4" ? "nvfp4" : dtype.compute;
  } else if (algo == "FP8") {
    f.name = "fp8-e4m3";
    f.element_bits = 8;
    f.tensor_bits = 64;
    f.compute = "fp8-e4m3";
  } else if (algo == "MXFP8") {
    f.name = "mxfp8";
    f.element_bits = 8;
    f.group_size = static_cast<int>(std::min<Int>(group > 0 ? group : 32, 1 << 30));
    f.group_bits = 8;
    f.compute = "fp8-e4m3";
  } else if (algo == "W4A16_AWQ") {
    f.name = "int4-g" + std::to_string(group > 0 ? group : 128) + " (modelopt awq)";
    f.element_bits = 4;
    f.group_size = static_cast<int>(std::min<Int>(group > 0 ? group : 128, 1 << 30));
    f.group_bits = 16;
    f.compute = dtype.compute;
  } else {
    return q.Bad(where, "unknown algorithm " + Show(json(algo)) +
                            " (known: FP8, NVFP4, W4A16_NVFP4, MXFP8, W4A16_AWQ)");
  }
  return f;
}

// ModelOpt's MIXED_PRECISION: quantized_layers maps module names to their
// quant_algo (and group_size). A weight group takes the entry of its name
// (any spelling), of a module containing it (a key for all of a layer's
// experts), or of its expert under another index; a module the map names
// under other sub-names (a fused projection kvbill keeps as one, like
// Qwen3.5's in_proj_qkv and in_proj_z) takes its siblings' algorithm when
// they agree. Anything else stays at the dtype, as vLLM loads it.
Status AssignModelOptMixed(const Fields& q, bool text_only, const WeightFormat& dtype,
                           std::vector<WeightGroup>* weights, std::string* compute) {
  if (!q.Has("quantized_layers") || !q.Get("quantized_layers").is_object() ||
      q.Get("quantized_layers").empty()) {
    return q.Bad("quantized_layers",
                 "missing or empty: MIXED_PRECISION names each module's "
                 "algorithm there");
  }
  const json& map = q.Get("quantized_layers");
  std::map<std::string, WeightFormat> by_module;
  for (const auto& [name, entry] : map.items()) {
    const std::string at = "quantized_layers." + name;
    if (!entry.is_object() || !entry.contains("quant_algo") || !entry["quant_algo"].is_string()) {
      return q.Bad(at, "must be an object with a quant_algo string");
    }
    Int group = 0;
    if (entry.contains("group_size")) {
      if (!entry["group_size"].is_number_integer() || entry["group_size"].get<Int>() <= 0) {
        return q.Bad(at + ".group_size", "must be a positive whole number");
      }
      group = entry["group_size"].get<Int>();
    }
    auto f =
        ModelOptFormat(q, at + ".quant_algo", entry["quant_algo"].get<std::string>(), group, dtype);
    if (!f) return f.error();
    by_module[name] = *f;
  }
  auto skip =
      Patterns::Read(q, q.Has("exclude_modules") ? "exclude_modules" : "ignore", Match::kGlob);
  if (!skip) return skip.error();
  const auto find = [&](const std::string& name) -> const WeightFormat* {
    if (auto it = by_module.find(name); it != by_module.end()) return &it->second;
    // A containing module: "...mlp.experts" covers "...mlp.experts.0.w1".
    for (std::size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0;
         dot = name.rfind('.', dot - 1)) {
      if (auto it = by_module.find(name.substr(0, dot)); it != by_module.end()) return &it->second;
    }
    // The same projection of another expert: "...experts.0.w1" as "...experts.77.w1".
    if (const auto e = name.find(".experts.0."); e != std::string::npos) {
      const std::string head = name.substr(0, e + 9), tail = name.substr(e + 10);
      for (auto it = by_module.lower_bound(head); it != by_module.end(); ++it) {
        if (!it->first.starts_with(head)) break;
        const std::string rest = it->first.substr(head.size());
        const auto dot = rest.find('.');
        if (dot != std::string::npos && rest.substr(dot) == tail) return &it->second;
      }
    }
    // Siblings under the same parent module, when they agree.
    const auto dot = name.rfind('.');
    if (dot == std::string::npos) return nullptr;
    const std::string parent = name.substr(0, dot + 1);
    const WeightFormat* agreed = nullptr;
    for (auto it = by_module.lower_bound(parent); it != by_module.end(); ++it) {
      if (!it->first.starts_with(parent)) break;
      if (it->first.find('.', parent.size()) != std::string::npos) continue;  // deeper
      if (agreed != nullptr && agreed->name != it->second.name) return nullptr;
      agreed = &it->second;
    }
    return agreed;
  };
  std::map<std::string, Int> dense_params;  // by compute format
  for (WeightGroup& g : *weights) {
    if (!TextQuantizable(g, text_only)) continue;
    const auto names = Spellings(g);
    if (skip->Matches(names)) continue;
    const WeightFormat* f = nullptr;
    for (const std::string& n : names) {
      if ((f = find(n)) != nullptr) break;
    }
    if (f == nullptr) continue;
    g.format = *f;
    if (g.role != ParamRole::kRoutedExperts && g.role != ParamRole::kMtp) {
      dense_params[f->compute] += g.Params();
    }
  }
  Int most = 0;
  for (const auto& [format, params] : dense_params) {
    if (params > most) {
      most = params;
      *compute = format;
    }
  }
  return OkStatus();
}

}  // namespace

Status ApplyExpertDtype(const Fields& f, const json* quant, const WeightFormat& dtype,
                        std::vector<WeightGroup>* weights) {
  if (!f.Has("expert_dtype")) return OkStatus();
  const json& v = f.Get("expert_dtype");
  const std::string expert = v.is_string() ? v.get<std::string>() : "";
  if (expert != "fp4" && expert != "fp8") {
    return f.Bad("expert_dtype", "must be \"fp4\" or \"fp8\", got " + v.dump());
  }
  // Only DeepSeek's own fp8 checkpoint stores experts by expert_dtype; a
  // re-quantized one (ModelOpt, compressed-tensors) says how in its
  // quantization_config.
  const bool own_fp8 =
      quant != nullptr && quant->is_object() && TextOf(*quant, "quant_method") == "fp8";
  if (expert != "fp4" || !own_fp8) return OkStatus();
  // nvidia's NVFP4 releases keep quant_method fp8 and add ModelOpt's
  // MIXED_PRECISION map for the experts: applied after the MXFP4 default.
  const bool mixed = TextOf(*quant, "quant_algo") == "MIXED_PRECISION";
  auto mx = WeightFormatFromElement("mxfp4");
  if (!mx) return mx.error();
  for (WeightGroup& g : *weights) {
    // vLLM (deepseek_v4.py): FP4 checkpoints store the fp8 layers' block
    // scales as one E8M0 byte (the fp8-expert Flash-Base keeps fp32).
    if (g.format.block_rows > 0 && g.format.element_bits == 8) g.format.block_bits = 8;
    if (g.role == ParamRole::kRoutedExperts && g.linear) {
      mx->compute = g.format.compute;
      g.format = *mx;
    } else if (g.role == ParamRole::kMtp && g.linear && g.copies > 1) {
      mx->compute = g.format.compute;
      g.format = *mx;  // the prediction layer's routed experts
    }
  }
  if (mixed) {
    const Fields q(*quant, f.source(), f.prefix() + "quantization_config.");
    std::string compute;
    if (auto st = AssignModelOptMixed(q, false, dtype, weights, &compute); !st) return st.error();
  }
  return OkStatus();
}

Result<std::string> CheckpointKvFormat(const json* quant, const Fields& fields) {
  if (quant == nullptr || !quant->is_object()) return std::string();
  const Fields q(*quant, fields.source(), fields.prefix() + "quantization_config.");
  // ModelOpt names the algorithm: kv_cache_quant_algo (also nested under
  // "quantization", hf_quant_config.json's layout) or a kv_cache_scheme string.
  const auto named = [](const json& v) -> std::string {
    if (v == "FP8") return "fp8-e4m3";
    if (v == "NVFP4") return "nvfp4";
    return "";
  };
  // compressed-tensors (and ModelOpt's config.json form): a kv_cache_scheme
  // object, of which kvbill reads the 8-bit float one; ModelOpt also writes
  // the algorithm's name. Any other scheme is refused, not read as the dtype.
  if (q.Has("kv_cache_scheme")) {
    const json& v = q.Get("kv_cache_scheme");
    if (v.is_object()) {
      if (v.value("num_bits", json()) == 8 && v.value("type", json()) == "float") {
        return std::string("fp8-e4m3");
      }
      return q.Bad("kv_cache_scheme",
                   "must be num_bits 8, type \"float\" (the only KV cache scheme kvbill reads), "
                   "got " +
                       Show(v));
    }
    if (!v.is_string() || q.StringOr("quant_method", "") == "compressed-tensors") {
      return q.Bad("kv_cache_scheme", "must be an object, got " + Show(v));
    }
    if (std::string f = named(v); !f.empty()) return f;
    return q.Bad("kv_cache_scheme",
                 "unknown KV cache scheme " + Show(v) + " (known: FP8, NVFP4, or an object)");
  }
  if (auto it = quant->find("kv_cache_quant_algo"); it != quant->end()) {
    if (std::string f = named(*it); !f.empty()) return f;
  }
  if (auto it = quant->find("quantization"); it != quant->end() && it->is_object()) {
    if (auto algo = it->find("kv_cache_quant_algo"); algo != it->end()) return named(*algo);
  }
  return std::string();
}

Result<WeightFormat> DtypeFormat(const std::string& dtype, const Fields& where,
                                 const std::string& key) {
  std::string name;
  if (dtype == "bfloat16" || dtype == "bf16") {
    name = "bf16";
  } else if (dtype == "float16" || dtype == "fp16" || dtype == "half") {
    name = "fp16";
  } else if (dtype == "float32" || dtype == "fp32" || dtype == "float") {
    name = "fp32";
  } else {
    return where.Bad(key, "unknown dtype \"" + dtype + "\" (known: bfloat16, float16, float32)");
  }
  return WeightFormatFromElement(name);
}

// ModelOpt's single-algorithm formats, or MIXED_PRECISION's map, from the
// fields of `q` (quantization_config, or its "quantization" object).
Result<std::string> AssignModelOpt(const Fields& q, bool text_only, const WeightFormat& dtype,
                                   std::vector<WeightGroup>* weights, std::string compute) {
  auto towers_ok = [&](const WeightGroup& g) {
    return !(text_only && (g.role == ParamRole::kVision || g.role == ParamRole::kAudio));
  };
  const std::string algo = q.StringOr("quant_algo", "");
  if (algo == "MIXED_PRECISION") {
    if (auto st = AssignModelOptMixed(q, text_only, dtype, weights, &compute); !st) {
      return st.error();
    }
    return compute;
  }
  const std::string skip_key = q.Has("exclude_modules") ? "exclude_modules" : "ignore";
  auto skip = Patterns::Read(q, skip_key, Match::kGlob);
  if (!skip) return skip.error();
  // A list naming tower modules one by one keeps the whole tower.
  const bool tower_listed = ListsTowerModules(q, skip_key);
  if (algo != "NVFP4" && algo != "FP8") {
    return q.Bad("quant_algo",
                 "unknown algorithm " +
                     (q.Has("quant_algo") ? Show(q.Get("quant_algo")) : std::string("(missing)")) +
                     " (known: NVFP4, FP8, MIXED_PRECISION)");
  }
  auto group = q.IntOr("group_size", 16);
  if (!group) return group.error();
  auto f = ModelOptFormat(q, "quant_algo", algo, *group, dtype);
  if (!f) return f.error();
  // lm_head stays without an exclude list naming it: vLLM quantizes linear
  // layers (LinearBase) only, and its lm_head is an embedding
  // (ParallelLMHead).
  for (WeightGroup& g : *weights) {
    if (!Quantizable(g) || !towers_ok(g) || IsLmHead(g) || skip->Matches(Spellings(g))) continue;
    if (tower_listed && IsTower(g)) continue;
    g.format = *f;
    if (g.role != ParamRole::kRoutedExperts && g.role != ParamRole::kMtp) compute = f->compute;
  }
  return compute;
}

// One AMD Quark quantization spec ({"weight": ..., "input_tensors": ...,
// "output_tensors": ..., "bias": ...}) as the format its weights are
// stored in (vLLM quark.py _get_scheme_from_config): fp8_e4m3 per tensor or
// per channel with an fp32 scale (and one for a static input) -> W8A8 FP8;
// fp4 per_group of 32 with e8m0 scales -> OCP MXFP4. Other schemes are
// refused, naming the field.
Result<WeightFormat> QuarkSpec(const Fields& spec, const std::string& dtype_compute) {
  for (const char* unread : {"output_tensors", "bias"}) {
    if (spec.Has(unread)) {
      return spec.Bad(unread, "is set: vLLM's Quark schemes take none (NotImplementedError)");
    }
  }
  if (!spec.Has("weight") || !spec.Get("weight").is_object()) {
    return spec.Bad("weight", spec.Has("weight") && spec.Get("weight").is_array()
                                  ? "is a list (NVFP4, W4A8): kvbill reads Quark's fp8_e4m3 and "
                                    "MXFP4 (fp4) weights only"
                                  : "missing or not an object");
  }
  const Fields w(spec.Get("weight"), spec.source(), spec.prefix() + "weight.");
  const std::string dtype = w.StringOr("dtype", "");
  const std::string scheme = w.StringOr("qscheme", "");
  std::optional<Fields> input;
  if (spec.Has("input_tensors")) {
    if (!spec.Get("input_tensors").is_object()) {
      return spec.Bad("input_tensors",
                      "must be an object or null, got " + Show(spec.Get("input_tensors")));
    }
    input.emplace(spec.Get("input_tensors"), spec.source(), spec.prefix() + "input_tensors.");
  }
  // vLLM reads a missing is_dynamic as static (quark.py: not input.get("is_dynamic")).
  auto input_dynamic = input ? input->Bool("is_dynamic", false) : Result<bool>(true);
  if (!input_dynamic) return input_dynamic.error();
  const bool static_input = !*input_dynamic;
  WeightFormat f;
  if (dtype == "fp8_e4m3") {
    f.element_bits = 8;
    f.compute = "fp8-e4m3";
    if (scheme == "per_tensor") {
      f.tensor_bits = static_input ? 64 : 32;  // weight_scale (and input_scale), fp32
    } else if (scheme == "per_channel") {
      f.row_bits = 32;
      f.tensor_bits = static_input ? 32 : 0;
    } else {
      return w.Bad("qscheme", "is " + Show(scheme) +
                                  " for fp8_e4m3 (known: per_tensor, "
                                  "per_channel)");
    }
    // Named so that the format matrix finds its row (fp8-e4m3).
    f.name = std::string(scheme == "per_channel" ? "fp8-e4m3-channel" : "fp8-e4m3") + " (quark)";
    return f;
  }
  if (dtype == "int8") {
    // W8A8 INT8 (vLLM QuarkW8A8Int8, _is_static_tensor_w8a8): symmetric
    // static int8 weights per tensor or per channel with an fp32 scale,
    // static int8 inputs per tensor (an fp32 scale, and an int32 zero point
    // when asymmetric); vLLM has no other int8 Quark scheme.
    auto input_symmetric = input ? input->Bool("symmetric", true) : Result<bool>(true);
    if (!input_symmetric) return input_symmetric.error();
    const bool input_ok = input && input->StringOr("dtype", "") == "int8" &&
                          input->StringOr("qscheme", "") == "per_tensor" && static_input;
    if (!input_ok) {
      return spec.Bad("input_tensors",
                      "must be static int8 per_tensor with int8 weights: vLLM's Quark runs int8 "
                      "only as static W8A8 (QuarkW8A8Int8)");
    }
    auto symmetric = w.Bool("symmetric", false);
    if (!symmetric) return symmetric.error();
    auto dynamic = w.Bool("is_dynamic", false);
    if (!dynamic) return dynamic.error();
    if (!*symmetric || *dynamic) {
      return w.Bad(*dynamic ? "is_dynamic" : "symmetric",
                   "int8 weights must be static and symmetric for vLLM's QuarkW8A8Int8");
    }
    f.element_bits = 8;
    f.compute = dtype_compute;  // the format matrix's w8a8-int8 row computes in int8
    const int input_bits = *input_symmetric ? 32 : 64;
    if (scheme == "per_tensor") {
      f.tensor_bits = 32 + input_bits;
    } else if (scheme == "per_channel") {
      f.row_bits = 32;
      f.tensor_bits = input_bits;
    } else {
      return w.Bad("qscheme", "is " + Show(scheme) + " for int8 (known: per_tensor, per_channel)");
    }
    f.name = std::string(scheme == "per_channel" ? "w8a8-int8-channel" : "w8a8-int8") + " (quark)";
    return f;
  }
  if (dtype == "fp4") {
    auto group = w.IntOr("group_size", 32);
    if (!group) return group.error();
    if (scheme != "per_group" || *group != 32 || w.StringOr("scale_format", "e8m0") != "e8m0") {
      return w.Bad("qscheme",
                   "fp4 weights are read as OCP MXFP4 only: per_group of 32 with "
                   "e8m0 scales");
    }
    auto mx = WeightFormatFromElement("mxfp4");
    if (!mx) return mx.error();
    mx->compute = dtype_compute;  // timed as 4-bit weights (the format matrix's mxfp4 row)
    mx->name = "mxfp4 (quark)";
    return *mx;
  }
  return w.Bad("dtype", "is " + Show(dtype) +
                            ": kvbill reads Quark's fp8_e4m3, int8 (W8A8) and fp4 (MXFP4) weights "
                            "only");
}

// AMD Quark (vLLM quantization/quark/quark.py, QuarkConfig): `export` is
// required; a linear layer named by `exclude` (the exact name, or a "re:"
// regex matching its start) stays at the dtype; otherwise its spec is the
// first `layer_quant_config` entry whose key names it (fnmatch when the key
// has a '*', else the exact name), else `global_quant_config`. lm_head is
// never quantized (vLLM applies Quark to linear layers only). The
// kv_cache_group's fp8 output scales do not make the cache fp8 under
// --kv-cache-dtype auto (vLLM resolves auto from ModelOpt configs and
// compressed-tensors' kv_cache_scheme only), so the KV format is left as
// the scenario says.
Result<std::string> AssignQuark(const Fields& q,
                                const std::function<bool(const WeightGroup&)>& towers_ok,
                                const std::string& compute, std::vector<WeightGroup>* weights) {
  if (!q.Has("export") || !q.Get("export").is_object()) {
    return q.Bad("export", "missing: vLLM's Quark config requires it");
  }
  auto exclude = Patterns::Read(q, "exclude", Match::kCompressedTensors);
  if (!exclude) return exclude.error();
  std::optional<WeightFormat> global;
  if (q.Has("global_quant_config")) {
    if (!q.Get("global_quant_config").is_object()) {
      return q.Bad("global_quant_config", "must be an object");
    }
    auto g = QuarkSpec(
        Fields(q.Get("global_quant_config"), q.source(), q.prefix() + "global_quant_config."),
        compute);
    if (!g) return g.error();
    global = *g;
  }
  std::vector<std::pair<std::string, WeightFormat>> layers;
  if (q.Has("layer_quant_config")) {
    const json& l = q.Get("layer_quant_config");
    if (!l.is_object()) return q.Bad("layer_quant_config", "must be an object");
    for (const auto& [key, value] : l.items()) {
      if (!value.is_object()) return q.Bad("layer_quant_config." + key, "must be an object");
      auto s = QuarkSpec(Fields(value, q.source(), q.prefix() + "layer_quant_config." + key + "."),
                         compute);
      if (!s) return s.error();
      layers.emplace_back(key, *s);
    }
  }
  bool dense_fp8 = false;
  for (WeightGroup& wg : *weights) {
    if (!Quantizable(wg) || !towers_ok(wg) || IsLmHead(wg)) continue;
    const std::vector<std::string> names = Spellings(wg);
    if (exclude->Matches(names)) continue;
    const WeightFormat* spec = global ? &*global : nullptr;
    for (const auto& layer : layers) {
      const std::string& key = layer.first;
      const bool hit = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
        return key.find('*') != std::string::npos ? Glob(key, n) : n == key;
      });
      if (hit) {
        spec = &layer.second;
        break;
      }
    }
    if (spec == nullptr) continue;
    wg.format = *spec;
    dense_fp8 = dense_fp8 || (spec->compute == "fp8-e4m3" && wg.role != ParamRole::kRoutedExperts &&
                              wg.role != ParamRole::kMtp);
  }
  return dense_fp8 ? std::string("fp8-e4m3") : compute;
}

// An integer weight format packed as GPTQ (an int32 g_idx per input) or
// AWQ: `bits`-bit weights, an fp16 scale and a `bits`-bit zero point per
// group of `group` inputs (per column when group <= 0).
WeightFormat PackedInt(Int bits, Int group, const std::string& method, const std::string& compute) {
  WeightFormat f;
  f.element_bits = static_cast<int>(std::min<Int>(bits, 32));
  f.group_size = group <= 0 ? (1 << 30) : static_cast<int>(std::min<Int>(group, 1 << 30));
  f.group_bits = 16 + f.element_bits;
  if (method == "gptq") f.col_bits = 32;
  f.name =
      "int" + std::to_string(f.element_bits) + "-g" + std::to_string(group) + " (" + method + ")";
  f.compute = compute;
  return f;
}

// AutoRound (Intel's auto-round; vLLM auto_round.py, AutoRoundConfig):
// integer weights of `bits` (2, 3, 4 or 8) in groups of group_size, packed
// as GPTQ (packing_format auto_round:auto_gptq, the default) or AWQ
// (auto_round:auto_awq). Only modules whose names start with an entry of
// block_name_to_quantize (or to_quant_block_names; a comma-separated string
// or a list) are quantized when it is given; lm_head stays unless
// extra_config names it. extra_config gives a module its own bits,
// group_size and sym (bits 16 or more: unquantized); a module whose
// sub-layers it names (a fused MoE's experts) takes theirs, which must agree.
Result<std::string> AssignAutoRound(const Fields& q,
                                    const std::function<bool(const WeightGroup&)>& towers_ok,
                                    const std::string& compute, std::vector<WeightGroup>* weights) {
  const std::string data_type = q.StringOr("data_type", "int");
  if (data_type != "int") {
    return q.Bad("data_type", "is " + Show(q.Get("data_type")) +
                                  ": vLLM's AutoRound reads integer weights only (int)");
  }
  const std::string packing = q.StringOr("packing_format", "auto_round:auto_gptq");
  if (packing != "auto_round:auto_gptq" && packing != "auto_round:auto_awq") {
    return q.Bad("packing_format", "is " + Show(q.Get("packing_format")) +
                                       " (known: auto_round:auto_gptq, auto_round:auto_awq)");
  }
  const std::string packed = packing == "auto_round:auto_awq" ? "awq" : "gptq";
  const auto check_bits = [](Int b) { return b == 2 || b == 3 || b == 4 || b == 8; };
  auto bits = q.RequiredInt({"bits"});
  if (!bits) return bits.error();
  if (!check_bits(*bits)) {
    return q.Bad("bits", "is " + std::to_string(*bits) + " (vLLM's AutoRound reads 2, 3, 4 or 8)");
  }
  auto group = q.RequiredInt({"group_size"}, -1);
  if (!group) return group.error();
  std::vector<std::string> blocks;
  for (const char* key : {"block_name_to_quantize", "to_quant_block_names"}) {
    if (!q.Has(key)) continue;
    const json& v = q.Get(key);
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      for (std::size_t at = 0; at <= s.size();) {
        const std::size_t comma = std::min(s.find(',', at), s.size());
        if (comma > at) blocks.push_back(s.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string()) {
          return q.Bad(std::string(key) + "[" + std::to_string(i) + "]",
                       "must be a module name, got " + Show(v[i]));
        }
        blocks.push_back(v[i].get<std::string>());
      }
    } else {
      return q.Bad(key, "must be a module name or a list of them, got " + Show(v));
    }
    break;
  }
  const json* extra = nullptr;
  if (q.Has("extra_config")) {
    extra = &q.Get("extra_config");
    if (!extra->is_object()) return q.Bad("extra_config", "must be an object");
  }
  // One module's (bits, group_size) from its extra_config entry.
  const auto entry = [&](const std::string& name, bool quantized) -> Result<std::pair<Int, Int>> {
    const json& e = (*extra)[name];
    if (!e.is_object()) return q.Bad("extra_config." + name, "must be an object");
    const Fields ef(e, q.source(), q.prefix() + "extra_config." + name + ".");
    auto b = ef.IntOr("bits", quantized ? *bits : 16);
    if (!b) return b.error();
    if (*b < 16 && !check_bits(*b)) {
      return ef.Bad("bits",
                    "is " + std::to_string(*b) +
                        " (vLLM's AutoRound reads 2, 3, 4 or 8, or 16 and more: unquantized)");
    }
    auto g = ef.IntOr("group_size", quantized ? *group : -1, -1);
    if (!g) return g.error();
    return std::make_pair(*b, *g);
  };
  for (WeightGroup& wg : *weights) {
    if (!Quantizable(wg) || !towers_ok(wg)) continue;
    // A layer's routed experts are one fused module in vLLM, named
    // "...experts" ("...experts.0.w1" here stands for every expert's w1).
    std::vector<std::string> names = Spellings(wg);
    if (wg.module_role == ParamRole::kRoutedExperts) {
      for (std::string& n : names) {
        if (const auto at = n.find(".experts.0."); at != std::string::npos) {
          n = n.substr(0, at + std::string(".experts").size());
        }
      }
    }
    bool quantized = !IsLmHead(wg);
    if (!blocks.empty()) {
      quantized = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
        return std::any_of(blocks.begin(), blocks.end(),
                           [&](const std::string& b) { return n.starts_with(b); });
      });
    }
    std::optional<std::pair<Int, Int>> chosen;
    if (extra != nullptr) {
      for (const std::string& n : names) {
        if (!extra->contains(n)) continue;
        auto e = entry(n, true);
        if (!e) return e.error();
        chosen = *e;
        break;
      }
      if (!chosen) {
        // A fused module (the experts of a layer) named by its sub-layers.
        std::string first;
        for (const auto& item : extra->items()) {
          const std::string& key = item.key();
          const bool inside = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
            return key.size() > n.size() && key.starts_with(n) && key[n.size()] == '.';
          });
          if (!inside) continue;
          auto e = entry(key, quantized);
          if (!e) return e.error();
          if (chosen && *chosen != *e) {
            return q.Bad("extra_config." + key,
                         "differs from extra_config." + first + ": the sub-layers of " + wg.name +
                             " run as one fused module and need one format (as vLLM requires)");
          }
          if (!chosen) first = key;
          chosen = *e;
        }
      }
    }
    const Int b = chosen ? chosen->first : (quantized ? *bits : 16);
    const Int g = chosen ? chosen->second : *group;
    if (b >= 16) continue;
    wg.format = PackedInt(b, g, packed, compute);
  }
  return compute;
}

// One torchao config as transformers serializes it ({"_type": class,
// "_data": its fields}): the formats kvbill reads, as torchao's tensor
// subclasses store them. Int4WeightOnlyConfig: 4-bit integers two a byte
// with a bf16 scale and a bf16 zero point per group_size inputs (default
// 128; torchao's Int4Tensor and tile-packed layouts alike); weight-only.
// Float8DynamicActivationFloat8WeightConfig: fp8 E4M3 weights with an fp32
// scale per row (granularity PerRow) or per tensor (PerTensor, the default),
// activations quantized as they run (W8A8 at the FP8 rate). Others (the
// int8 and weight-only fp8 configs, the edge schemes) are refused: the
// format matrix has no row for how vLLM runs them.
Result<WeightFormat> TorchAoFormat(const Fields& c, const std::string& dtype_compute) {
  const std::string type = c.StringOr("_type", "");
  if (c.Has("_data") && !c.Get("_data").is_object()) return c.Bad("_data", "must be an object");
  const json data = c.Has("_data") ? c.Get("_data") : json::object();
  const Fields d(data, c.source(), c.prefix() + "_data.");
  WeightFormat f;
  if (type == "Int4WeightOnlyConfig") {
    auto group = d.IntOr("group_size", 128, 1);
    if (!group) return group.error();
    f.element_bits = 4;
    f.group_size = static_cast<int>(std::min<Int>(*group, 1 << 30));
    f.group_bits = 16 + 16;
    f.name = "int4-g" + std::to_string(*group) + " (torchao)";
    f.compute = dtype_compute;
    return f;
  }
  if (type == "Float8DynamicActivationFloat8WeightConfig") {
    f.element_bits = 8;
    bool per_row = false;
    if (d.Has("granularity") && !d.Get("granularity").is_null()) {
      // One granularity, or [activation, weight].
      const json& g = d.Get("granularity");
      const json& weight = g.is_array() && !g.empty() ? g.back() : g;
      const auto type_it = weight.is_object() ? weight.find("_type") : weight.end();
      const std::string kind = weight.is_object() && type_it != weight.end() && type_it->is_string()
                                   ? type_it->get<std::string>()
                                   : std::string();
      if (kind != "PerRow" && kind != "PerTensor") {
        return d.Bad(
            "granularity",
            "must be PerRow or PerTensor (as [activation, weight] or one), got " + Show(g));
      }
      per_row = kind == "PerRow";
    }
    if (per_row) {
      f.row_bits = 32;
    } else {
      f.tensor_bits = 32;
    }
    f.name = std::string("fp8-e4m3") + (per_row ? "-channel" : "") + " (torchao)";
    f.compute = "fp8-e4m3";
    return f;
  }
  return c.Bad("_type", (c.Has("_type") ? "is " + Show(c.Get("_type")) : std::string("missing")) +
                            ": kvbill reads torchao's Int4WeightOnlyConfig and "
                            "Float8DynamicActivationFloat8WeightConfig");
}

// torchao (transformers TorchAoConfig; vLLM torchao.py, TorchAOConfig):
// quant_type holds exactly one entry, "default", the config of every linear
// layer; a ModuleFqnToConfig there maps module names to configs ("_default"
// for the rest, null to skip one: vLLM adds those to the skipped modules),
// which kvbill reads when every module it names takes one config or none. modules_to_not_convert
// (vLLM's should_skip: a name, or whole dot-separated components of one) stay at the dtype, and so
// do lm_head and the embeddings (vLLM applies torchao to linear layers only).
Result<std::string> AssignTorchAo(const Fields& q,
                                  const std::function<bool(const WeightGroup&)>& towers_ok,
                                  const std::string& compute, std::vector<WeightGroup>* weights) {
  if (!q.Has("quant_type") || !q.Get("quant_type").is_object()) {
    return q.Bad("quant_type", "missing: torchao names its config there ({\"default\": ...})");
  }
  const json& types = q.Get("quant_type");
  if (types.size() != 1 || !types.contains("default") || !types["default"].is_object()) {
    return q.Bad("quant_type", "must hold one object, \"default\" (as vLLM requires)");
  }
  if (q.Has("include_input_output_embeddings") &&
      q.Get("include_input_output_embeddings") == true) {
    return q.Bad("include_input_output_embeddings",
                 "is true: quantized embeddings are not read by kvbill (vLLM applies torchao to "
                 "linear layers only)");
  }
  const Fields def(types["default"], q.source(), q.prefix() + "quant_type.default.");
  auto skip = Patterns::Read(q, "modules_to_not_convert", Match::kComponents);
  if (!skip) return skip.error();
  std::optional<WeightFormat> format;
  const std::string type = def.StringOr("_type", "");
  if (type == "ModuleFqnToConfig" || type == "FqnToConfig") {
    const json data = def.Has("_data") ? def.Get("_data") : json::object();
    const Fields d(data, def.source(), def.prefix() + "_data.");
    const char* key = d.Has("module_fqn_to_config") ? "module_fqn_to_config" : "fqn_to_config";
    if (!d.Has(key) || !d.Get(key).is_object()) {
      return d.Bad(key, "missing: the map of module names to torchao configs");
    }
    std::optional<json> first;
    for (const auto& [name, cfg] : d.Get(key).items()) {
      if (cfg.is_null()) {  // skipped, as vLLM adds it to modules_to_not_convert
        skip->AddText(name);
        continue;
      }
      if (first && cfg != *first) {
        return d.Bad(std::string(key) + "." + name,
                     "differs from another module's config: per-module torchao configs are not "
                     "read by kvbill (one config for every quantized module is)");
      }
      first = cfg;
    }
    if (first) {
      const Fields one(*first, d.source(), d.prefix() + key + ".");
      auto f = TorchAoFormat(one, compute);
      if (!f) return f.error();
      format = *f;
    }
  } else {
    // vLLM's fused MoE layers take a torchao config from a
    // ModuleFqnToConfig only (TorchAOConfig.get_quant_method asserts it).
    for (const WeightGroup& g : *weights) {
      if (g.role == ParamRole::kRoutedExperts && Quantizable(g)) {
        return def.Bad(
            "_type", (def.Has("_type") ? "is " + Show(def.Get("_type")) : std::string("missing")) +
                         ": vLLM quantizes a MoE model's experts with torchao only "
                         "from a ModuleFqnToConfig");
      }
    }
    auto f = TorchAoFormat(def, compute);
    if (!f) return f.error();
    format = *f;
  }
  if (!format) return compute;
  std::string out = compute;
  for (WeightGroup& g : *weights) {
    if (!Quantizable(g) || !towers_ok(g) || IsLmHead(g)) continue;
    const auto names = Spellings(g);
    if (skip->Matches(names)) continue;
    g.format = *format;
    if (g.role != ParamRole::kRoutedExperts && g.role != ParamRole::kMtp) out = format->compute;
  }
  return out;
}

Result<std::string> AssignWeightFormats(const json* quant, const Fields& fields, bool text_only,
                                        const WeightFormat& dtype,
                                        std::vector<WeightGroup>* weights) {
  auto fp32 = WeightFormatFromElement("fp32");
  if (!fp32) return fp32.error();
  for (WeightGroup& g : *weights) g.format = g.fp32 ? *fp32 : dtype;
  std::string compute = dtype.compute;
  if (quant == nullptr || quant->is_null()) return compute;
  if (!quant->is_object()) return fields.Bad("quantization_config", "must be an object");
  const Fields q(*quant, fields.source(), fields.prefix() + "quantization_config.");
  std::string method = q.StringOr("quant_method", "");
  // ModelOpt's own layout may leave quant_method out: its producer names it
  // (vLLM sets quant_method "modelopt" from the producer too).
  if (method.empty() && quant->contains("producer") && (*quant)["producer"].is_object() &&
      TextOf((*quant)["producer"], "name") == "modelopt") {
    method = "modelopt";
  }
  auto towers_ok = [&](const WeightGroup& g) {
    return !(text_only && (g.role == ParamRole::kVision || g.role == ParamRole::kAudio));
  };
  // `f` for every quantizable linear layer but lm_head and the `skip`
  // modules; true when a dense (not routed-expert, not MTP) layer took it.
  auto assign_linear = [&](const WeightFormat& f, const Patterns& skip,
                           const std::string& skip_key) {
    // A list naming tower modules one by one keeps the whole tower.
    const bool tower_listed = ListsTowerModules(q, skip_key);
    bool dense = false;
    for (WeightGroup& g : *weights) {
      if (!Quantizable(g) || !towers_ok(g) || IsLmHead(g)) continue;
      if (skip.Matches(Spellings(g)) || (tower_listed && IsTower(g))) continue;
      g.format = f;
      dense = dense || (g.role != ParamRole::kRoutedExperts && g.role != ParamRole::kMtp);
    }
    return dense;
  };

  if (method == "fp8") {
    // transformers' FineGrainedFP8 / FP8 checkpoints: every linear layer in
    // fp8 E4M3 with an fp32 scale per weight_block_size block (per tensor
    // without one), but lm_head and the modules listed: vLLM's Fp8Config
    // reads ignored_layers, and modules_to_not_convert when that is absent,
    // null or empty (sglang and verl FP8 exports write ignored_layers).
    const bool ignored = q.Has("ignored_layers") && !q.Get("ignored_layers").is_null() &&
                         !(q.Get("ignored_layers").is_array() && q.Get("ignored_layers").empty());
    const std::string skip_key = ignored ? "ignored_layers" : "modules_to_not_convert";
    auto skip = Patterns::Read(q, skip_key, Match::kHfQuantizer);
    if (!skip) return skip.error();
    WeightFormat f;
    f.element_bits = 8;
    f.compute = "fp8-e4m3";
    auto block = q.OptionalIntList("weight_block_size");
    if (!block) return block.error();
    if (block->has_value()) {
      if ((*block)->size() != 2 || (**block)[0] <= 0 || (**block)[1] <= 0) {
        return q.Bad("weight_block_size", "must be [rows, cols]");
      }
      f.block_rows = static_cast<int>(std::min<Int>((**block)[0], 1 << 30));
      f.block_cols = static_cast<int>(std::min<Int>((**block)[1], 1 << 30));
      f.block_bits = 32;
      f.name = "fp8-e4m3 (" + std::to_string(f.block_rows) + "x" + std::to_string(f.block_cols) +
               " blocks)";
    } else {
      f.tensor_bits = 32;
      f.name = "fp8-e4m3";
    }
    assign_linear(f, *skip, skip_key);
    return std::string("fp8-e4m3");
  }
  if (method == "mxfp4") {
    // gpt-oss: the routed experts in MXFP4 (an E8M0 scale per 32), the rest unconverted.
    auto skip = Patterns::Read(q, "modules_to_not_convert", Match::kHfQuantizer);
    if (!skip) return skip.error();
    auto f = WeightFormatFromElement("mxfp4");
    if (!f) return f.error();
    f->compute = compute;  // the dense layers stay at the dtype
    for (WeightGroup& g : *weights) {
      if (g.role != ParamRole::kRoutedExperts || !g.linear || skip->Matches(Spellings(g))) continue;
      g.format = *f;
    }
    return compute;
  }
  if (method == "compressed-tensors") {
    if (auto s = AssignCompressedTensors(q, text_only, dtype, weights, &compute); !s) {
      return s.error();
    }
    return compute;
  }
  if (method == "modelopt") {
    // NVIDIA Model Optimizer: quant_algo NVFP4 (fp8 scale per group_size
    // elements, fp32 global weight and input scales) or FP8 (fp32 weight and
    // input scales per tensor); ignore / exclude_modules are globs. The
    // hf_quant_config.json layout nests them under "quantization".
    if (!q.Has("quant_algo") && q.Has("quantization") && q.Get("quantization").is_object()) {
      const Fields nested(q.Get("quantization"), q.source(), q.prefix() + "quantization.");
      return AssignModelOpt(nested, text_only, dtype, weights, compute);
    }
    return AssignModelOpt(q, text_only, dtype, weights, compute);
  }
  if (method == "awq" || method == "gptq") {
    // AutoAWQ / GPTQ: packed `bits`-bit weights, an fp16 scale and a packed
    // zero point per group of group_size inputs (per column when -1); GPTQ
    // adds an int32 g_idx per input. lm_head and modules_to_not_convert stay.
    auto bits = q.FirstInt({"bits", "w_bit"});
    if (!bits) return bits.error();
    if (!bits->has_value()) return q.Bad("bits", "missing");
    // vLLM's AWQConfig: "only 4-bit weight quantization is supported for
    // AWQ"; its GPTQConfig reads 2, 3, 4 or 8.
    const char* bits_key = q.Has("bits") ? "bits" : "w_bit";
    if (method == "awq" && **bits != 4) {
      return q.Bad(bits_key, "must be 4 (vLLM runs AWQ with 4-bit weights only), got " +
                                 std::to_string(**bits));
    }
    if (method == "gptq" && **bits != 2 && **bits != 3 && **bits != 4 && **bits != 8) {
      return q.Bad(bits_key, "must be 2, 3, 4 or 8 (the GPTQ widths vLLM runs), got " +
                                 std::to_string(**bits));
    }
    // -1: one group a column (per-channel scales); 0 is no group size.
    auto group = q.FirstInt({"group_size", "q_group_size"}, -1);
    if (!group) return group.error();
    if (group->has_value() && **group == 0) {
      return q.Bad(q.Has("group_size") ? "group_size" : "q_group_size",
                   "must be a positive integer, or -1 for one group a column, got 0");
    }
    // vLLM's AWQ skips a module any entry is a substring of
    // (is_layer_skipped_awq); its GPTQ reads no such list (kept as before).
    auto skip = Patterns::Read(q, "modules_to_not_convert",
                               method == "awq" ? Match::kSubstring : Match::kHfQuantizer);
    if (!skip) return skip.error();
    // GPTQModel's per-module overrides (`dynamic`: regexes over vLLM's fused
    // module names that skip a module or give it other bits) are not read:
    // refused rather than ignored. `lm_head` true quantizes the lm_head too
    // (vLLM's GPTQConfig lm_head_quantized).
    if (method == "gptq" && q.Has("dynamic") &&
        !(q.Get("dynamic").is_object() && q.Get("dynamic").empty())) {
      return q.Bad("dynamic",
                   "per-module overrides are not read by kvbill (give the checkpoint "
                   "as one format, or a compressed-tensors config)");
    }
    auto lm_head = method == "gptq" ? q.Bool("lm_head", false) : Result<bool>(false);
    if (!lm_head) return lm_head.error();
    const WeightFormat f = PackedInt(**bits, group->value_or(128), method, compute);
    for (WeightGroup& wg : *weights) {
      if (!Quantizable(wg) || !towers_ok(wg) || (IsLmHead(wg) && !*lm_head)) continue;
      if (wg.role == ParamRole::kVision || wg.role == ParamRole::kAudio) continue;
      if (skip->Matches(Spellings(wg))) continue;
      wg.format = f;
    }
    return compute;
  }
  if (method == "quark") return AssignQuark(q, towers_ok, compute, weights);
  if (method == "torchao") return AssignTorchAo(q, towers_ok, compute, weights);
  if (method == "auto-round" || method == "auto_round" || method == "intel/auto-round") {
    return AssignAutoRound(q, towers_ok, compute, weights);
  }
  if (method == "fbgemm_fp8") {
    // FBGEMM FP8 (Meta's Llama-3.1-405B-Instruct-FP8; vLLM fbgemm_fp8.py):
    // fp8 E4M3 weights with an fp32 scale per output channel, activations
    // quantized per token as they run; lm_head and modules_to_not_convert
    // stay at the dtype.
    auto skip = Patterns::Read(q, "modules_to_not_convert", Match::kHfQuantizer);
    if (!skip) return skip.error();
    WeightFormat f;
    f.element_bits = 8;
    f.row_bits = 32;
    f.name = "fp8-channel (fbgemm_fp8)";
    f.compute = "fp8-e4m3";
    if (assign_linear(f, *skip, "modules_to_not_convert")) compute = f.compute;
    return compute;
  }
  if (method == "bitsandbytes") {
    // bitsandbytes (transformers BitsAndBytesConfig; vLLM bitsandbytes.py):
    // every linear layer but lm_head and llm_int8_skip_modules. 4-bit
    // (load_in_4bit, nf4 or fp4): two weights a byte and an absmax per 64
    // elements of the flattened tensor, fp32, or with
    // bnb_4bit_use_double_quant an 8-bit code whose fp32 scales come one
    // per 256 blocks; per tensor the 16-entry quant map (and the nested
    // 256-entry one), fp32. The JSON quant state each tensor also carries
    // (a few hundred bytes) is not counted. 8-bit (load_in_8bit,
    // LLM.int8()): int8 weights and an fp32 scale per output row (SCB).
    auto four = q.Bool("load_in_4bit", false);
    if (!four) return four.error();
    auto eight = q.Bool("load_in_8bit", false);
    if (!eight) return eight.error();
    if (*four == *eight) {
      return q.Bad("load_in_4bit", *four ? "and load_in_8bit are both true: give one"
                                         : "and load_in_8bit are both false or missing: "
                                           "bitsandbytes stores 4 or 8 bits");
    }
    auto skip = Patterns::Read(q, "llm_int8_skip_modules", Match::kHfQuantizer);
    if (!skip) return skip.error();
    WeightFormat f;
    f.compute = compute;
    if (*four) {
      const std::string type = q.StringOr("bnb_4bit_quant_type", "fp4");
      if (type != "nf4" && type != "fp4") {
        return q.Bad("bnb_4bit_quant_type",
                     "must be \"nf4\" or \"fp4\", got " + Show(q.Get("bnb_4bit_quant_type")));
      }
      auto nested = q.Bool("bnb_4bit_use_double_quant", false);
      if (!nested) return nested.error();
      f.element_bits = 4;
      f.group_size = 64;
      f.group_bits = *nested ? 8 : 32;
      if (*nested) {
        f.flat_group_size = 64 * 256;
        f.flat_group_bits = 32;
      }
      f.tensor_bits = (*nested ? 16 + 256 : 16) * 32;
      f.name = "bnb4 (bitsandbytes " + type + (*nested ? ", double quant)" : ")");
    } else {
      f.element_bits = 8;
      f.row_bits = 32;
      f.name = "bnb8 (bitsandbytes LLM.int8)";
    }
    assign_linear(f, *skip, "llm_int8_skip_modules");
    return compute;
  }
  return q.Bad("quant_method",
               (q.Has("quant_method") ? "unknown method " + Show(q.Get("quant_method"))
                                      : std::string("missing")) +
                   " (known: fp8, mxfp4, compressed-tensors, modelopt, awq, gptq, auto-round, "
                   "quark, torchao, bitsandbytes, fbgemm_fp8)");
}

std::string DescribeWeightFormats(const std::vector<WeightGroup>& weights) {
  std::map<std::string, double> params;
  double total = 0;
  for (const WeightGroup& g : weights) {
    if (g.role == ParamRole::kMtp) continue;
    params[g.format.name] += static_cast<double>(g.Params());
    total += static_cast<double>(g.Params());
  }
  if (params.size() == 1) return params.begin()->first;
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [name, n] : params) order.emplace_back(-n, name);
  std::sort(order.begin(), order.end());
  std::string out;
  for (const auto& [n, name] : order) {
    const double pct = total > 0 ? -n / total * 100.0 : 0;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", pct);
    out += (out.empty() ? "" : ", ") + name + " " + buf;
  }
  return out;
}

}  // namespace kvbill::model_config
