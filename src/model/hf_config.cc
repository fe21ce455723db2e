// Interprets a Hugging Face config.json: picks the text config, applies
// --set edits and the model type's class defaults, runs the family rule and
// the towers, and gives every weight tensor its stored format. The rules are
// specified in docs/models.md; keep the two in step.
#include "kvbill/model/hf_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"
#include "kvbill/util/names.h"
#include "model/config_defaults.h"
#include "model/config_json.h"
#include "model/families.h"
#include "model/max_model_len.h"
#include "model/model_builder.h"
#include "model/quant_config.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

using model_config::Fields;
using model_config::Int;
using model_config::json;

// Keys real configs use: every key of the bundled catalog's configs (and
// their text configs) and of the class-default table. A key --set adds that
// is one of them is meant, however close it is to another
// (qk_rope_head_dim beside qk_nope_head_dim, v_head_dim beside head_dim).
const std::set<std::string, std::less<>>& KnownConfigKeys() {
  static const std::set<std::string, std::less<>> keys = [] {
    std::set<std::string, std::less<>> out;
    auto add = [&out](const json& object) {
      if (!object.is_object()) return;
      for (const auto& [k, v] : object.items()) out.insert(k);
    };
    for (const CatalogModel& m : ModelCatalog()) {
      json_input::Problem problem;
      auto root = json_input::Parse(m.config, &problem);
      if (!root) continue;
      add(*root);
      if (root->contains("text_config")) add((*root)["text_config"]);
    }
    for (const model_config::ModelTypeDefaults& d : model_config::ConfigDefaultsTable()) {
      for (const auto& [k, v] : d.values) out.insert(std::string(k));
    }
    return out;
  }();
  return keys;
}

Status ApplyOverrides(json& config, const std::vector<ConfigOverride>& overrides,
                      const std::string& source) {
  for (const ConfigOverride& o : overrides) {
    std::string key = o.key;
    if (key.starts_with("text_config.")) key = key.substr(std::string("text_config.").size());
    if (key.empty() || key.find('.') != std::string::npos) {
      return Error(source + ": --set " + o.key + ": expected a top-level key of the text config");
    }
    // A JSON value, or else the text as a string.
    json_input::Problem problem;
    auto parsed = json_input::Parse(o.value, &problem);
    json value = parsed ? std::move(*parsed) : json(o.value);
    // A key the config lacks, one or two letters from one it has, and no key
    // of a real config, is a typo that would otherwise change nothing
    // ("num_key_value_head", "rope_scalling"): refused with the key it
    // resembles.
    if (!value.is_null() && !config.contains(key) && !KnownConfigKeys().contains(key)) {
      // Close: at most 2 edits, and at most one per 4 letters typed.
      const int most = std::min<int>(2, static_cast<int>(key.size() / 4));
      std::string close;
      int best = most + 1;
      for (const auto& [k, v] : config.items()) {
        if (const int d = EditDistance(key, k); d < best) {
          best = d;
          close = k;
        }
      }
      if (!close.empty()) {
        return Error(source + ": --set " + o.key + ": the config has no key \"" + key +
                     "\"; did you mean \"" + close +
                     "\"? (a key the config lacks is added when it is a key of a bundled "
                     "config or none of this config's keys is within two letters of it)");
      }
    }
    if (value.is_null()) {
      config.erase(key);
    } else {
      config[key] = value;
    }
  }
  return OkStatus();
}

// DBRX and MPT (MosaicML's layout, transformers dbrx/configuration_dbrx.py,
// MPT's configuration_mpt.py) name their sizes n_layers / n_heads / d_model
// and nest the KV heads in attn_config and the experts in ffn_config. Their
// values are copied to the keys the rules read, where those are absent;
// vLLM reads the same (get_total_num_kv_heads: attn_config.kv_n_heads for
// both). MPT's MLP is expansion_ratio x d_model (default 4).
// Copies DBRX / MPT settings to the keys the readers take (n_layers,
// attn_config.kv_n_heads, ...). Returns each copied key with the path the
// config spells it at, so that errors name what the file says.
std::vector<std::pair<std::string, std::string>> HoistMosaicKeys(json& config,
                                                                 const std::string& model_type) {
  std::vector<std::pair<std::string, std::string>> hoisted;
  if (model_type != "dbrx" && model_type != "mpt") return hoisted;
  auto copy = [&config, &hoisted](const json& from, const std::string& at, const char* key,
                                  const char* to) {
    if (!from.is_object() || !from.contains(key) || from[key].is_null()) return;
    if (!config.contains(to) || config[to].is_null()) {
      config[to] = from[key];
      hoisted.emplace_back(to, at + key);
    }
  };
  copy(config, "", "n_layers", "num_hidden_layers");
  copy(config, "", "n_heads", "num_attention_heads");
  copy(config, "", "d_model", "hidden_size");
  if (config.contains("attn_config")) {
    copy(config["attn_config"], "attn_config.", "kv_n_heads", "num_key_value_heads");
  }
  if (model_type == "dbrx" && config.contains("ffn_config")) {
    const json ffn = config["ffn_config"];
    copy(ffn, "ffn_config.", "ffn_hidden_size", "intermediate_size");
    copy(ffn, "ffn_config.", "moe_num_experts", "num_local_experts");
    copy(ffn, "ffn_config.", "moe_top_k", "num_experts_per_tok");
  }
  if (model_type == "mpt" && !config.contains("intermediate_size") &&
      config.contains("hidden_size") && config["hidden_size"].is_number_integer()) {
    const json ratio = config.value("expansion_ratio", json(4));
    if (ratio.is_number_integer()) {
      config["intermediate_size"] = ratio.get<Int>() * config["hidden_size"].get<Int>();
    }
  }
  return hoisted;
}

// An error about a hoisted key, reworded to name the key as the config
// spells it ("source: num_key_value_heads: ..." -> "source:
// attn_config.kv_n_heads: ...").
Error NameHoistedKey(const Error& error, const std::string& source,
                     const std::vector<std::pair<std::string, std::string>>& hoisted) {
  const std::string& message = error.message();
  for (const auto& [to, from] : hoisted) {
    const std::string said = source + ": " + to + ":";
    if (message.rfind(said, 0) == 0) {
      return Error(source + ": " + from + ":" + message.substr(said.size()));
    }
  }
  return error;
}

// An error about a key --set (or a scenario's model.set) gave its value says
// so: the value is not the file's ("FILE: num_key_value_heads (overridden):
// must be a positive integer, got -3").
Error NameOverriddenKey(const Error& error, const std::string& source,
                        const std::vector<ConfigOverride>& overrides) {
  const std::string& message = error.message();
  for (const ConfigOverride& o : overrides) {
    std::string key = o.key;
    if (key.starts_with("text_config.")) key = key.substr(std::string("text_config.").size());
    for (const std::string prefix : {"", "text_config."}) {
      const std::string said = source + ": " + prefix + key;
      if (message.rfind(said, 0) != 0 || message.size() == said.size()) continue;
      const char next = message[said.size()];
      if (next != ':' && next != '[' && next != '.') continue;
      // After the key and its index ("compress_ratios[5]"), before ": ".
      const std::size_t colon = message.find(": ", said.size());
      if (colon == std::string::npos) continue;
      return Error(message.substr(0, colon) + " (overridden)" + message.substr(colon));
    }
  }
  return error;
}

std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The name of the checkpoint whose config.json `file` is: the folder that
// holds it ("Qwen3-8B/config.json": Qwen3-8B), or in the Hugging Face cache
// (models--Qwen--Qwen3-8B/snapshots/<40 hex digits>/config.json) the
// repository id, Qwen/Qwen3-8B; `fallback` when there is no folder.
std::string CheckpointName(const std::filesystem::path& file, const std::string& fallback) {
  const std::filesystem::path folder = file.parent_path();
  const std::string name = folder.filename().string();
  if (name.empty() || name == "." || name == "..") return fallback;
  const bool commit = name.size() == 40 && std::all_of(name.begin(), name.end(), [](char c) {
                        return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                      });
  const std::filesystem::path snapshots = folder.parent_path();
  const std::string repo = snapshots.parent_path().filename().string();
  if (commit && snapshots.filename() == "snapshots" && repo.starts_with("models--")) {
    const std::string id = repo.substr(8);  // org--name
    const std::size_t cut = id.find("--");
    if (cut != std::string::npos && cut > 0 && cut + 2 < id.size()) {
      return id.substr(0, cut) + "/" + id.substr(cut + 2);
    }
  }
  return name;
}

// The config's first architecture ("MiniCPM3ForCausalLM"), or "".
std::string FirstArchitecture(const json& top) {
  auto it = top.find("architectures");
  if (it == top.end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) return "";
  return (*it)[0].get<std::string>();
}

// The model type of an architecture, for a config that names none: a
// remote-code model's hand-written config.json (openbmb's MiniCPM3-4B has
// architectures and auto_map, no model_type). vLLM loads the class the
// architecture names; its type is that name without the task suffix,
// lower-cased ("MiniCPM3ForCausalLM": "minicpm3") or with '_' between words
// ("Qwen3MoeForCausalLM": "qwen3_moe"), when kvbill has a family rule for
// it; "" otherwise (the generic rule reads it, and says so).
std::string ModelTypeOfArchitecture(const std::string& architecture) {
  std::string base = architecture;
  for (std::string_view suffix : {"ForCausalLM", "ForConditionalGeneration", "LMHeadModel"}) {
    if (base.size() > suffix.size() && base.ends_with(suffix)) {
      base.resize(base.size() - suffix.size());
      break;
    }
  }
  std::string snake;
  for (std::size_t i = 0; i < base.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(base[i]);
    const unsigned char before = i > 0 ? static_cast<unsigned char>(base[i - 1]) : 'A';
    if (std::isupper(c) != 0 && (std::islower(before) != 0 || std::isdigit(before) != 0)) {
      snake += '_';
    }
    snake += static_cast<char>(std::tolower(c));
  }
  const std::vector<std::string> known = model_config::KnownModelTypes();
  for (const std::string& candidate : {LowerAscii(base), snake}) {
    if (std::binary_search(known.begin(), known.end(), candidate)) return candidate;
  }
  return "";
}

// DeepSeek-VL2's and DeepSeek-OCR's language_config, as vLLM builds it
// (deepseek_v2.py, DeepseekV2DecoderLayer): with qk_nope_head_dim and
// qk_rope_head_dim both 0 the layers are DeepseekAttention, plain multi-head
// attention of num_key_value_heads KV heads of hidden_size /
// num_attention_heads (whatever head_dim, v_head_dim or kv_lora_rank say),
// so the MLA keys are dropped. Otherwise the MLA keys are read as
// DeepSeek-V2's; a use_mla false beside them is refused, as vLLM's two
// wrappers build it differently (deepseek_vl2.py: DeepseekForCausalLM;
// deepseek_ocr.py: the text config's own architecture).
Status ReadDeepseekVl2Attention(json& config, const std::string& source,
                                const std::string& prefix) {
  const Fields f(config, source, prefix);
  auto nope = f.IntOr("qk_nope_head_dim", 0, 0);
  if (!nope) return nope.error();
  auto rope = f.IntOr("qk_rope_head_dim", 0, 0);
  if (!rope) return rope.error();
  if (*nope == 0 && *rope == 0) {
    auto heads = f.RequiredInt({"num_attention_heads"});
    if (!heads) return heads.error();
    auto hidden = f.RequiredInt({"hidden_size"});
    if (!hidden) return hidden.error();
    if (*hidden % *heads != 0) {
      return f.Bad("num_attention_heads",
                   std::to_string(*heads) + " does not divide hidden_size " +
                       std::to_string(*hidden) +
                       " (vLLM's DeepseekAttention takes head_dim from them)");
    }
    for (const char* key : {"kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                            "v_head_dim", "head_dim"}) {
      config.erase(key);
    }
    return OkStatus();
  }
  if (f.Has("use_mla") && f.Get("use_mla") == false) {
    return f.Bad("use_mla",
                 "is false beside qk_nope_head_dim " + std::to_string(*nope) +
                     " and qk_rope_head_dim " + std::to_string(*rope) +
                     ": kvbill reads DeepSeek-VL2's multi-head attention only when both are 0 "
                     "(vLLM's deepseek_vl2.py and deepseek_ocr.py build this case differently)");
  }
  return OkStatus();
}

// A wrapper's nested config (text_config, llm_config, language_config,
// thinker_config) is an object when given: a string, list or number would
// leave the text model to the class defaults. null reads as absent, as
// transformers builds the class's default sub-config for None.
Status CheckWrapperKeys(const json& root, const std::string& source, const std::string& prefix,
                        const std::vector<const char*>& keys) {
  for (const char* key : keys) {
    auto it = root.find(key);
    if (it == root.end() || it->is_null() || it->is_object()) continue;
    return Error(source + ": " + prefix + key + ": must be an object, got " +
                 model_config::Show(*it));
  }
  return OkStatus();
}

// Checks the invariants of model_shape.h, naming the first layer that breaks one.
Status CheckShape(const ModelShape& m, const Fields& f) {
  if (m.layers.empty()) return f.Bad("num_hidden_layers", "the model has no layers");
  // KV elements per token and state elements per sequence, in doubles: a
  // config past the bounds of docs/models.md#bounds is refused before any
  // footprint is computed in 64-bit bits.
  double kv_elements = 0, state_elements = 0;
  for (const LayerShape& l : m.layers) {
    if (l.IsLatent()) kv_elements += static_cast<double>(l.latent_dim);
    kv_elements += static_cast<double>(l.indexer_dim);
    if (l.kind == LayerKind::kFullAttention || l.kind == LayerKind::kSlidingWindow ||
        l.kind == LayerKind::kChunkedAttention) {
      kv_elements +=
          static_cast<double>(l.kv_heads) * static_cast<double>(l.qk_head_dim + l.v_head_dim);
    }
    if (l.HoldsState()) state_elements += static_cast<double>(l.StateElements());
  }
  if (kv_elements > static_cast<double>(model_config::kMaxKvElementsPerToken)) {
    return Error(f.source() + ": " + std::to_string(static_cast<std::int64_t>(kv_elements)) +
                 " KV elements per token, above " +
                 std::to_string(model_config::kMaxKvElementsPerToken) +
                 ": check num_hidden_layers, num_key_value_heads and head_dim "
                 "(docs/models.md#bounds)");
  }
  if (state_elements > static_cast<double>(model_config::kMaxStateElementsPerSequence)) {
    return Error(f.source() + ": " + std::to_string(static_cast<std::int64_t>(state_elements)) +
                 " state elements per sequence, above " +
                 std::to_string(model_config::kMaxStateElementsPerSequence) +
                 " (docs/models.md#bounds)");
  }
  for (const LayerShape& l : m.layers) {
    const std::string where = "layer " + std::to_string(l.index);
    auto bad = [&](const std::string& what) {
      return Error(f.source() + ": " + where + ": " + what);
    };
    if (l.kind == LayerKind::kFullAttention || l.kind == LayerKind::kSlidingWindow ||
        l.kind == LayerKind::kChunkedAttention) {
      if (l.kv_heads <= 0 || l.qk_head_dim <= 0)
        return bad("attention without KV heads or head dim");
    }
    if (l.IsLatent() && l.latent_dim <= 0) return bad("latent attention without a latent");
    if (l.IsWindowed() && l.window <= 0) {
      return bad("windowed attention without a window");
    }
    if (l.HoldsState() && l.StateElements() <= 0) return bad("a state layer without state");
  }
  return OkStatus();
}

// The sizing keys the class defaults supplied (ModelShape::defaulted_fields),
// still in the config the rule read (DeepSeek-VL2's multi-head attention
// drops the MLA keys) and not null (a null default is "none": DeepSeek-V2's
// n_routed_experts, a dense model). Whether the rule reads them is
// DropUnreadDefaults' question.
void ListDefaultedFields(const std::vector<model_config::FilledDefault>& filled, const json& config,
                         const std::string& prefix, const model_config::ModelTypeDefaults* defaults,
                         ModelShape* shape) {
  for (const model_config::FilledDefault& d : filled) {
    if (!model_config::IsSizingKey(d.key) || !config.contains(d.key) || d.value.is_null()) {
      continue;
    }
    shape->defaulted_fields.push_back(DefaultedField{prefix + d.key, d.value.dump()});
  }
  if (!shape->defaulted_fields.empty()) shape->defaults_source = defaults->source;
}

// Whether `message` names `key` as a word of its own.
bool NamesKey(const std::string& message, const std::string& key) {
  auto word = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (std::size_t at = message.find(key); at != std::string::npos;
       at = message.find(key, at + 1)) {
    const std::size_t end = at + key.size();
    if ((at == 0 || !word(message[at - 1])) && (end == message.size() || !word(message[end]))) {
      return true;
    }
  }
  return false;
}

// A rule's refusal naming a key the config omits says the value is the
// class default, not the file's (Falcon-H1 without mamba_d_ssm: "not the
// Mamba width mamba_d_ssm 1024" is FalconH1Config's 1024).
Error NameDefaultedKeys(const Error& error, const std::vector<model_config::FilledDefault>& filled,
                        const std::string& prefix,
                        const model_config::ModelTypeDefaults* defaults) {
  std::string keys;
  for (const model_config::FilledDefault& d : filled) {
    if (d.value.is_null() || !NamesKey(error.message(), d.key)) continue;
    keys += (keys.empty() ? "" : ", ") + prefix + d.key + " " + d.value.dump();
  }
  if (keys.empty() || defaults == nullptr) return error;
  return Error(error.message() + " (absent from the config, read at the class default of " +
                   defaults->source + ": " + keys + ")",
               error.exit_status());
}

Result<ModelShape> BuildShape(const json& top, const std::string& source, const std::string& name,
                              const std::vector<ConfigOverride>& overrides, bool text_only) {
  if (!top.is_object()) return Error(source + ": expected a JSON object at the top level");
  // Mistral's native params.json (mistral-inference's format: dim, n_layers,
  // n_heads, n_kv_heads, hidden_dim) names no model type; read as a config
  // it would fail on a missing num_hidden_layers.
  if (!top.contains("model_type") && !top.contains("architectures") && top.contains("dim") &&
      top.contains("n_layers") && top.contains("n_heads")) {
    return Error(source +
                 ": n_layers: is a key of Mistral's native params.json (with dim and n_heads), "
                 "not of a Hugging Face config.json: give the config.json of the model's Hugging "
                 "Face repository instead");
  }
  if (auto s = CheckWrapperKeys(top, source, "", {"thinker_config"}); !s) return s.error();
  // Qwen3-Omni keeps what vLLM serves (the thinker: text model and towers)
  // under thinker_config (vLLM qwen3_omni_moe_thinker.py).
  const bool thinker = !top.contains("text_config") && top.contains("thinker_config") &&
                       top["thinker_config"].is_object();
  const json& root = thinker ? top["thinker_config"] : top;
  json config = root;
  std::string prefix = thinker ? "thinker_config." : "";
  // The text model under a wrapper: text_config, InternVL's remote-code
  // llm_config (vLLM internvl.py reads it there), or DeepSeek-VL2's and
  // DeepSeek-OCR's language_config (vLLM's DeepseekVLV2Config makes it the
  // text config).
  const bool deepseek_vl2 = StringAt(root, "model_type") == "deepseek_vl_v2";
  if (auto s = CheckWrapperKeys(
          root, source, prefix,
          deepseek_vl2 ? std::vector<const char*>{"text_config", "llm_config", "language_config"}
                       : std::vector<const char*>{"text_config", "llm_config"});
      !s) {
    return s.error();
  }
  const char* text_key =
      root.contains("text_config") && root["text_config"].is_object() ? "text_config"
      : root.contains("llm_config") && root["llm_config"].is_object() ? "llm_config"
      : deepseek_vl2 && root.contains("language_config") && root["language_config"].is_object()
          ? "language_config"
          : nullptr;
  if (text_key != nullptr) {
    config = root[text_key];
    prefix += std::string(text_key) + ".";
    // Keys a text config inherits from the top level when it lacks them.
    for (const char* key : {"tie_word_embeddings", "torch_dtype", "dtype", "vocab_size"}) {
      if ((!config.contains(key) || config[key].is_null()) && root.contains(key)) {
        config[key] = root[key];
      }
    }
  }
  if (auto s = ApplyOverrides(config, overrides, source); !s) return s.error();
  // Without a text_config the overrides edit the top level, towers' keys
  // included (img_processor, vision_config): the towers read them edited.
  const bool nested = text_key != nullptr;
  const json edited_root = nested ? json() : config;
  const json& tower_root = nested ? root : edited_root;

  std::string model_type = StringAt(config, "model_type");
  if (model_type.empty()) model_type = StringAt(root, "model_type");
  const std::string architecture = FirstArchitecture(top);
  bool type_from_architecture = false;
  if (model_type.empty() && !architecture.empty()) {
    model_type = ModelTypeOfArchitecture(architecture);
    type_from_architecture = !model_type.empty();
  }
  // A wrapper whose text_config names no type of its own: the text model
  // its modeling code builds (vLLM minimax_m3 MiniMaxM3VL: MiniMax-M3).
  if (model_type == "minimax_m3_vl" && !prefix.empty()) model_type = "minimax_m3";
  // vLLM's DeepseekVLV2Config: text_config = DeepseekV2Config(**language_config)
  // (DeepSeek-OCR's language_config names no model_type).
  if (deepseek_vl2 && !prefix.empty() && model_type == "deepseek_vl_v2") {
    model_type = "deepseek_v2";
  }
  const auto* defaults = model_config::FindDefaults(model_type);
  std::vector<model_config::FilledDefault> filled;
  if (defaults != nullptr) filled = model_config::ApplyDefaults(*defaults, config);
  const auto hoisted = HoistMosaicKeys(config, model_type);
  if (deepseek_vl2 && text_key != nullptr) {
    if (auto s = ReadDeepseekVl2Attention(config, source, prefix); !s) return s.error();
  }
  const Fields f(config, source, prefix);
  if (auto s = model_config::CheckDecoderOnly(Fields(top, source, ""), f, model_type); !s) {
    return s.error();
  }

  model_config::ModelBuilder builder(0, {});
  auto text = model_config::BuildTextModel(f, model_type, &builder);
  if (!text) {
    return NameDefaultedKeys(NameHoistedKey(text.error(), source, hoisted), filled, prefix,
                             defaults);
  }
  if (!text_only) {
    const std::string root_type = StringAt(root, "model_type");
    if (auto s = model_config::BuildTowers(tower_root, source, root_type, text->hidden, &builder);
        !s) {
      return s.error();
    }
  }

  ModelShape shape;
  shape.name = name;
  shape.source = source;
  shape.model_type = model_type;
  shape.model_type_from_architecture = type_from_architecture;
  shape.architecture = architecture.empty() ? model_type : architecture;
  shape.hidden_size = text->hidden;
  shape.blocks_per_layer = text->blocks_per_layer;
  shape.vocab_size = text->vocab;
  auto max_pos = f.FirstInt({"max_position_embeddings", "n_positions", "seq_length"});
  if (!max_pos) return max_pos.error();
  if (auto s = model_config::CheckRopeScaling(f, model_type); !s) return s.error();
  shape.max_position_embeddings = max_pos->value_or(0);
  shape.max_model_len = model_config::DerivedMaxModelLen(config, model_type);
  if (const Tokens longrope = model_config::LongRopeDefaultMaxModelLen(config);
      longrope > 0 && longrope < shape.max_model_len) {
    shape.max_model_len_ceiling = shape.max_model_len;
    shape.max_model_len = longrope;
  }
  if (shape.max_model_len == 0) {
    // vLLM's _get_and_verify_max_len: "Assuming the model's maximum length
    // is 2048" when no length key is present (BLOOM; Falcon's class
    // default is the same 2,048).
    shape.max_model_len = model_config::kAssumedMaxModelLen;
    shape.max_model_len_assumed = true;
  }
  shape.uses_mrope = model_config::UsesMrope(config);
  shape.generic_rule = text->generic;
  if (!builder.too_large_at().empty()) {
    return Error(source + ": more than 10^15 parameters (at " + builder.too_large_at() +
                 "): check hidden_size, vocab_size, intermediate_size, head_dim and the number "
                 "of experts (docs/models.md#bounds)");
  }
  builder.Finish(text->decoder_layers, &shape);
  if (auto s = CheckShape(shape, f); !s) {
    return NameDefaultedKeys(NameHoistedKey(s.error(), source, hoisted), filled, prefix, defaults);
  }
  ListDefaultedFields(filled, config, prefix, defaults, &shape);

  // The dtype: the text config's, else the top level's; bfloat16 when unsaid.
  std::string dtype_key = f.Has("torch_dtype") ? "torch_dtype" : "dtype";
  std::string dtype = f.StringOr(dtype_key, "");
  if (dtype.empty()) {
    dtype_key = "torch_dtype";
    dtype = "bfloat16";
  }
  auto dtype_format = model_config::DtypeFormat(dtype, f, dtype_key);
  if (!dtype_format) return dtype_format.error();
  // A float32 checkpoint is served in 16 bits: vLLM's --dtype auto takes
  // float16 for it (bfloat16 since v0.10.1 where the GPU has it), as does
  // SGLang's; 2 bytes a weight either way.
  if (dtype_format->name == "fp32") {
    dtype_format = model_config::DtypeFormat("bfloat16", f, dtype_key);
    if (!dtype_format) return dtype_format.error();
  }
  shape.dtype = dtype_format->name;
  shape.state_format = dtype_format->name;

  // quantization_config: the text config's applies to the text model only.
  const json* quant = nullptr;
  bool quant_text_only = false;
  Fields quant_fields(top, source, "");
  if (f.Has("quantization_config")) {
    quant = &config["quantization_config"];
    quant_text_only = !prefix.empty();
    quant_fields = f;
  } else if (top.contains("quantization_config") && !top["quantization_config"].is_null()) {
    quant = &top["quantization_config"];
  }
  // MLX's own quantization (mlx-community checkpoints: "quantization":
  // {"bits", "group_size"}, no quant_method) is not a format vLLM or SGLang
  // loads: refused rather than read as the dtype.
  const bool mlx = top.contains("quantization") && top["quantization"].is_object() &&
                   top["quantization"].contains("bits");
  const bool named = quant != nullptr && quant->is_object() && quant->contains("quant_method");
  if (mlx && !named) {
    const Fields where(top, source, "");
    return where.Bad("quantization",
                     "an MLX quantization (" + model_config::Show(top["quantization"]) +
                         "): vLLM and SGLang do not load MLX checkpoints, so kvbill does not "
                         "size them; give the original checkpoint's config.json");
  }
  auto compute = model_config::AssignWeightFormats(quant, quant_fields, quant_text_only,
                                                   *dtype_format, &shape.weights);
  if (!compute) return compute.error();
  if (auto s = model_config::ApplyExpertDtype(f, quant, *dtype_format, &shape.weights); !s) {
    return s.error();
  }
  shape.compute_format = *compute;
  shape.weight_description = model_config::DescribeWeightFormats(shape.weights);
  auto kv_format = model_config::CheckpointKvFormat(quant, quant_fields);
  if (!kv_format) return kv_format.error();
  shape.checkpoint_kv_format = *kv_format;
  return shape;
}

}  // namespace

Result<ConfigOverride> ParseConfigOverride(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Error("--set \"" + std::string(text) + "\": expected key=value");
  }
  return ConfigOverride{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

namespace {

// Whether two shapes size alike: parameters, widths and every layer's cache.
bool SizedAlike(const ModelShape& a, const ModelShape& b) {
  if (a.params.Total() != b.params.Total() || a.params.Active() != b.params.Active() ||
      a.hidden_size != b.hidden_size || a.vocab_size != b.vocab_size ||
      a.layers.size() != b.layers.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const LayerShape& x = a.layers[i];
    const LayerShape& y = b.layers[i];
    if (x.kind != y.kind || x.query_heads != y.query_heads || x.kv_heads != y.kv_heads ||
        x.qk_head_dim != y.qk_head_dim || x.v_head_dim != y.v_head_dim ||
        x.latent_dim != y.latent_dim || x.window != y.window ||
        x.StateElements() != y.StateElements()) {
      return false;
    }
  }
  return true;
}

// Drops from shape->defaulted_fields the keys the family rule does not
// read: the shape built with the key's default moved by one is sized alike
// (Qwen2's sliding_window while use_sliding_window is false, Qwen3.5-MoE's
// intermediate_size with every layer's MLP routed, a dense Nemotron-H's
// n_routed_experts, num_key_value_heads beside MLA). A key whose moved
// value the rule refuses is read.
void DropUnreadDefaults(const json& root, const std::string& source, const std::string& name,
                        const std::vector<ConfigOverride>& overrides, bool text_only,
                        ModelShape* shape) {
  std::vector<DefaultedField> read;
  for (const DefaultedField& d : shape->defaulted_fields) {
    const json value = json::parse(d.value, nullptr, false);
    std::string moved;
    if (value.is_number_integer()) {
      moved = std::to_string(value.get<std::int64_t>() + 1);
    } else if (value.is_number()) {
      moved = json(value.get<double>() * 2).dump();
    }
    // The key as the text config spells it: overrides address that config.
    const std::string key = d.key.substr(d.key.rfind('.') + 1);
    std::vector<ConfigOverride> with_moved = overrides;
    with_moved.push_back(ConfigOverride{key, moved});
    const auto other = moved.empty() ? Result<ModelShape>(Error("not a number"))
                                     : BuildShape(root, source, name, with_moved, text_only);
    if (!other || !SizedAlike(*shape, *other)) read.push_back(d);
  }
  shape->defaulted_fields = std::move(read);
  if (shape->defaulted_fields.empty()) shape->defaults_source.clear();
}

// BuildShape, with an error about a value the overrides gave said so, and
// the class defaults it lists those the rule reads.
Result<ModelShape> ShapeOf(const json& root, const std::string& source, const std::string& name,
                           const std::vector<ConfigOverride>& overrides, bool text_only) {
  auto shape = BuildShape(root, source, name, overrides, text_only);
  if (!shape) return NameOverriddenKey(shape.error(), source, overrides);
  DropUnreadDefaults(root, source, name, overrides, text_only, &*shape);
  return shape;
}

}  // namespace

Result<ModelShape> ParseHfConfig(std::string_view json_text, const std::string& source,
                                 const std::string& name,
                                 const std::vector<ConfigOverride>& overrides, bool text_only) {
  auto root = model_config::ParseModelConfigJson(json_text, source);
  if (!root) return root.error();
  return ShapeOf(*root, source, name, overrides, text_only);
}

const std::vector<CatalogModel>& ModelCatalog() {
  static const std::vector<CatalogModel> catalog = [] {
    std::vector<CatalogModel> out;
    for (const EmbeddedFileEntry& e : EmbeddedFileTable()) {
      if (!e.path.starts_with("models/") || !e.path.ends_with(".json")) continue;
      std::string_view stem = e.path.substr(7, e.path.size() - 7 - 5);
      out.push_back(CatalogModel{std::string(stem), e.contents});
    }
    std::sort(out.begin(), out.end(),
              [](const CatalogModel& a, const CatalogModel& b) { return a.name < b.name; });
    return out;
  }();
  return catalog;
}

Result<ModelShape> LoadModel(const std::string& name_or_path,
                             const std::vector<ConfigOverride>& overrides, bool text_only) {
  for (const CatalogModel& m : ModelCatalog()) {
    if (m.name == name_or_path) {
      return ParseHfConfig(m.config, "models/" + m.name + ".json", m.name, overrides, text_only);
    }
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) {
    auto text = ReadFile(name_or_path);
    if (!text) return text.error();
    // The model's name: the file's stem, or for a checkpoint's config.json
    // the directory that holds it; in the Hugging Face cache
    // (models--org--name/snapshots/<commit>/config.json) the repository id.
    const std::filesystem::path file(name_or_path);
    std::string stem = file.stem().string();
    if (stem == "config") stem = CheckpointName(file, stem);
    // ModelOpt checkpoints (nvidia's FP8 / NVFP4 releases) may keep their
    // quantization in hf_quant_config.json beside config.json, where vLLM
    // reads it (ModelOptFp8Config / ModelOptNvFp4Config config filenames):
    // read so when config.json declares none.
    const std::filesystem::path sibling =
        std::filesystem::path(name_or_path).parent_path() / "hf_quant_config.json";
    if (std::filesystem::is_regular_file(sibling, ec)) {
      auto root = model_config::ParseModelConfigJson(*text, name_or_path);
      if (!root) return root.error();
      if (root->is_object() && !root->contains("quantization_config")) {
        auto quant_text = ReadFile(sibling.string());
        if (!quant_text) return quant_text.error();
        auto quant = model_config::ParseModelConfigJson(*quant_text, sibling.string());
        if (!quant) return quant.error();
        (*root)["quantization_config"] = std::move(*quant);
        // An error in what was read from the sibling names that file.
        auto shape = ShapeOf(*root, name_or_path, stem, overrides, text_only);
        if (shape) return shape;
        const std::string& message = shape.error().message();
        for (const std::string& key :
             {name_or_path + ": quantization_config.", name_or_path + ": quantization_config: "}) {
          if (message.starts_with(key)) {
            return Error(sibling.string() + ": " + message.substr(key.size()),
                         shape.error().exit_status());
          }
        }
        return shape;
      }
      return ShapeOf(*root, name_or_path, stem, overrides, text_only);
    }
    return ParseHfConfig(*text, name_or_path, stem, overrides, text_only);
  }
  std::string names;
  for (const CatalogModel& m : ModelCatalog()) names += (names.empty() ? "" : ", ") + m.name;
  return Error("--model \"" + name_or_path +
               "\": neither a catalog name nor a config.json file (catalog: " + names + ")");
}

std::string VllmAutoKvFormat(const ModelShape& model) {
  // DeepSeek-V4: vLLM stores only its fp8_ds_mla cache ("auto" included).
  if (model.HasCompressedLayers()) return "fp8-e4m3";
  return model.checkpoint_kv_format.empty() ? model.state_format : model.checkpoint_kv_format;
}

}  // namespace kvbill
