// Interprets a Hugging Face config.json. The rules, and the default applied
// for each absent key, are listed in docs/models.md; keep the two in step.
#include "kvbill/model/hf_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"

namespace kvbill {
namespace {

using nlohmann::json;
using Int = std::int64_t;

// Read access to one JSON object with errors that name file and field.
class Fields {
 public:
  Fields(const json& object, std::string source, std::string prefix)
      : object_(object), source_(std::move(source)), prefix_(std::move(prefix)) {}

  // Present and not null.
  bool Has(const std::string& key) const {
    auto it = object_.find(key);
    return it != object_.end() && !it->is_null();
  }
  const json& Get(const std::string& key) const { return object_.at(key); }

  Error Bad(const std::string& key, const std::string& message) const {
    return Error(source_ + ": " + prefix_ + key + ": " + message);
  }

  // An integer >= `min` (1 unless told); absent -> nullopt.
  Result<std::optional<Int>> OptionalInt(const std::string& key, Int min = 1) const {
    if (!Has(key)) return std::optional<Int>();
    const json& v = Get(key);
    // A float counts when it is whole and within Int's range: converting one
    // outside it (1e20) would be undefined behaviour.
    const auto whole = [](double d) { return d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d); };
    const bool integral = v.is_number_integer() || (v.is_number_float() && whole(v.get<double>()));
    if (!integral || v.is_boolean()) {
      return Bad(key, "must be " + Describe(min) + ", got " + v.dump());
    }
    const Int value = v.get<Int>();
    if (value < min) return Bad(key, "must be " + Describe(min) + ", got " + v.dump());
    return std::optional<Int>(value);
  }

  // The first present key of `keys` (aliases), which must be an integer >= min.
  Result<Int> RequiredInt(std::initializer_list<const char*> keys, Int min = 1) const {
    for (const char* key : keys) {
      auto v = OptionalInt(key, min);
      if (!v) return v.error();
      if (v->has_value()) return **v;
    }
    return Bad(*keys.begin(), "missing");
  }

  Result<std::optional<Int>> FirstInt(std::initializer_list<const char*> keys, Int min = 1) const {
    for (const char* key : keys) {
      auto v = OptionalInt(key, min);
      if (!v) return v.error();
      if (v->has_value()) return *v;
    }
    return std::optional<Int>();
  }

  Result<bool> Bool(const std::string& key, bool default_value) const {
    if (!Has(key)) return default_value;
    const json& v = Get(key);
    if (!v.is_boolean()) return Bad(key, "must be true or false, got " + v.dump());
    return v.get<bool>();
  }

  std::string StringOr(const std::string& key, const std::string& default_value) const {
    if (!Has(key) || !Get(key).is_string()) return default_value;
    return Get(key).get<std::string>();
  }

  // An array of integers, e.g. no_rope_layers or attn_type_list.
  Result<std::optional<std::vector<Int>>> OptionalIntList(const std::string& key) const {
    if (!Has(key)) return std::optional<std::vector<Int>>();
    const json& v = Get(key);
    if (!v.is_array()) return Bad(key, "must be a list of integers, got " + v.dump());
    std::vector<Int> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer()) {
        return Error(source_ + ": " + prefix_ + key + "[" + std::to_string(i) +
                     "]: must be an integer, got " + v[i].dump());
      }
      out.push_back(v[i].get<Int>());
    }
    return std::optional<std::vector<Int>>(std::move(out));
  }

  const std::string& source() const { return source_; }
  const std::string& prefix() const { return prefix_; }

 private:
  static std::string Describe(Int min) {
    if (min == 1) return "a positive integer";
    if (min == 0) return "a non-negative integer";
    return "an integer >= " + std::to_string(min);
  }

  const json& object_;
  std::string source_;
  std::string prefix_;
};

// Line and column of byte offset `pos` in `text`, 1-based.
std::string LineColumn(std::string_view text, std::size_t pos) {
  pos = std::min(pos, text.size());
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

Status ApplyOverrides(json& config, const std::vector<ConfigOverride>& overrides,
                      const std::string& source) {
  for (const ConfigOverride& o : overrides) {
    std::string key = o.key;
    if (key.starts_with("text_config.")) key = key.substr(std::string("text_config.").size());
    if (key.empty() || key.find('.') != std::string::npos) {
      return Error(source + ": --set " + o.key + ": expected a top-level key of the text config");
    }
    json value = json::parse(o.value, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) value = o.value;
    if (value.is_null()) {
      config.erase(key);
    } else {
      config[key] = value;
    }
  }
  return OkStatus();
}

// Model families whose feed-forward is a plain two-matrix MLP (no gate).
bool HasUngatedMlp(const std::string& model_type) {
  static const char* const kTypes[] = {"falcon", "gpt_bigcode", "gpt2", "gpt_neox",
                                       "opt",    "bloom",       "gptj", "phi"};
  return std::any_of(std::begin(kTypes), std::end(kTypes),
                     [&](const char* t) { return model_type == t; });
}

// Model families whose config class defaults tie_word_embeddings to true
// (the base default); Llama, Mistral, Qwen, DeepSeek, Jamba, gpt-oss and
// most others default it to false.
bool TiesEmbeddingsByDefault(const std::string& model_type) {
  return model_type.starts_with("gemma") || model_type == "falcon" || model_type == "gpt2" ||
         model_type == "gpt_bigcode" || model_type == "gpt_neox" || model_type == "phi";
}

struct Dims {
  Int layers = 0;
  Int hidden = 0;
  Int heads = 0;
  Int kv_heads = 0;
  Int head_dim = 0;
  Int vocab = 0;
  Int intermediate = 0;
  std::string model_type;
  bool mla = false;
  Int kv_lora_rank = 0, q_lora_rank = 0, qk_rope = 0, qk_nope = 0, v_head = 0;
};

Result<Dims> ReadDims(const Fields& f, const std::string& model_type) {
  Dims d;
  d.model_type = model_type;
  auto layers = f.RequiredInt({"num_hidden_layers", "n_layer", "num_layers"});
  if (!layers) return layers.error();
  d.layers = *layers;
  auto hidden = f.RequiredInt({"hidden_size", "n_embd", "d_model"});
  if (!hidden) return hidden.error();
  d.hidden = *hidden;
  auto heads = f.RequiredInt({"num_attention_heads", "n_head", "num_heads"});
  if (!heads) return heads.error();
  d.heads = *heads;

  // KV heads. Falcon: new_decoder_architecture reads num_kv_heads, else
  // multi_query means one KV head. GPT-BigCode: multi_query means one.
  auto kv = f.FirstInt({"num_key_value_heads", "num_kv_heads", "n_head_kv"});
  if (!kv) return kv.error();
  auto new_arch = f.Bool("new_decoder_architecture", false);
  if (!new_arch) return new_arch.error();
  auto multi_query = f.Bool("multi_query", model_type == "falcon" && !*new_arch);
  if (!multi_query) return multi_query.error();
  if (model_type == "falcon" && !*new_arch && *multi_query) {
    d.kv_heads = 1;
  } else if (kv->has_value()) {
    d.kv_heads = **kv;
  } else if (*multi_query) {
    d.kv_heads = 1;
  } else {
    d.kv_heads = d.heads;
  }
  if (d.kv_heads > d.heads) {
    return f.Bad("num_key_value_heads", "is " + std::to_string(d.kv_heads) +
                                            ", more than num_attention_heads " +
                                            std::to_string(d.heads));
  }
  if (d.heads % d.kv_heads != 0) {
    return f.Bad("num_key_value_heads", std::to_string(d.kv_heads) +
                                            " does not divide num_attention_heads " +
                                            std::to_string(d.heads));
  }

  auto head_dim = f.OptionalInt("head_dim");
  if (!head_dim) return head_dim.error();
  if (head_dim->has_value()) {
    d.head_dim = **head_dim;
  } else if (d.hidden % d.heads == 0) {
    d.head_dim = d.hidden / d.heads;
  } else {
    return f.Bad("head_dim", "missing, and hidden_size " + std::to_string(d.hidden) +
                                 " is not divisible by num_attention_heads " +
                                 std::to_string(d.heads));
  }

  auto vocab = f.RequiredInt({"vocab_size"});
  if (!vocab) return vocab.error();
  d.vocab = *vocab;
  auto inter = f.FirstInt({"intermediate_size", "n_inner", "ffn_hidden_size"});
  if (!inter) return inter.error();
  d.intermediate = inter->value_or(4 * d.hidden);

  // Multi-head latent attention (DeepSeek-V2/V3 family).
  auto kv_lora = f.OptionalInt("kv_lora_rank");
  if (!kv_lora) return kv_lora.error();
  if (kv_lora->has_value()) {
    d.mla = true;
    d.kv_lora_rank = **kv_lora;
    auto rope = f.RequiredInt({"qk_rope_head_dim"});
    if (!rope) return rope.error();
    auto nope = f.RequiredInt({"qk_nope_head_dim"});
    if (!nope) return nope.error();
    auto v = f.RequiredInt({"v_head_dim"});
    if (!v) return v.error();
    auto q_lora = f.OptionalInt("q_lora_rank");
    if (!q_lora) return q_lora.error();
    d.qk_rope = *rope;
    d.qk_nope = *nope;
    d.v_head = *v;
    d.q_lora_rank = q_lora->value_or(0);
  }
  return d;
}

// Resolves each layer's kind. Order of precedence in docs/models.md.
Result<std::vector<LayerKind>> ResolveLayerKinds(const Fields& f, const Dims& d) {
  const Int n = d.layers;
  const LayerKind full = d.mla ? LayerKind::kLatentAttention : LayerKind::kFullAttention;
  std::vector<LayerKind> kinds(static_cast<std::size_t>(n), full);
  auto at = [&](Int i) -> LayerKind& { return kinds[static_cast<std::size_t>(i)]; };

  if (f.Has("layer_types")) {
    const json& types = f.Get("layer_types");
    if (!types.is_array()) return f.Bad("layer_types", "must be a list of strings");
    if (static_cast<Int>(types.size()) != n) {
      return f.Bad("layer_types", "has " + std::to_string(types.size()) +
                                      " entries, num_hidden_layers is " + std::to_string(n));
    }
    for (Int i = 0; i < n; ++i) {
      const json& t = types[static_cast<std::size_t>(i)];
      const std::string where = "layer_types[" + std::to_string(i) + "]";
      if (!t.is_string()) return f.Bad(where, "must be a string, got " + t.dump());
      const std::string s = t.get<std::string>();
      if (s == "full_attention" || s == "attention") {
        at(i) = full;
      } else if (s == "sliding_attention") {
        at(i) = LayerKind::kSlidingWindow;
      } else if (s == "chunked_attention") {
        at(i) = LayerKind::kChunkedAttention;
      } else if (s == "linear_attention" || s == "mamba" || s == "mamba2") {
        at(i) = LayerKind::kLinearState;
      } else {
        return f.Bad(where, "unknown layer type \"" + s +
                                "\" (known: full_attention, sliding_attention, "
                                "chunked_attention, linear_attention, mamba)");
      }
    }
    return kinds;
  }

  // Jamba: attention on layers i % attn_layer_period == attn_layer_offset, Mamba elsewhere.
  if (f.Has("attn_layer_period") || d.model_type == "jamba") {
    auto period = f.OptionalInt("attn_layer_period");
    if (!period) return period.error();
    auto offset = f.OptionalInt("attn_layer_offset", 0);
    if (!offset) return offset.error();
    const Int p = period->value_or(8), o = offset->value_or(4);
    for (Int i = 0; i < n; ++i) at(i) = (i % p == o) ? full : LayerKind::kLinearState;
    return kinds;
  }

  // MiniMax: attn_type_list, 1 = softmax attention, 0 = linear (lightning) attention.
  auto attn_types = f.OptionalIntList("attn_type_list");
  if (!attn_types) return attn_types.error();
  if (attn_types->has_value()) {
    const auto& list = **attn_types;
    if (static_cast<Int>(list.size()) != n) {
      return f.Bad("attn_type_list", "has " + std::to_string(list.size()) +
                                         " entries, num_hidden_layers is " + std::to_string(n));
    }
    for (Int i = 0; i < n; ++i) {
      const Int v = list[static_cast<std::size_t>(i)];
      if (v != 0 && v != 1) {
        return f.Bad("attn_type_list[" + std::to_string(i) + "]",
                     "must be 0 (linear) or 1 (softmax), got " + std::to_string(v));
      }
      at(i) = v == 1 ? full : LayerKind::kLinearState;
    }
    return kinds;
  }

  // Qwen3-Next: full attention every full_attention_interval-th layer.
  auto interval = f.OptionalInt("full_attention_interval");
  if (!interval) return interval.error();
  if (interval->has_value()) {
    for (Int i = 0; i < n; ++i) {
      at(i) = ((i + 1) % **interval == 0) ? full : LayerKind::kLinearState;
    }
    return kinds;
  }

  // Llama-4: chunked local attention on RoPE layers, global NoPE layers elsewhere.
  auto chunk = f.OptionalInt("attention_chunk_size");
  if (!chunk) return chunk.error();
  if (chunk->has_value()) {
    auto no_rope = f.OptionalIntList("no_rope_layers");
    if (!no_rope) return no_rope.error();
    auto rope_interval = f.OptionalInt("no_rope_layer_interval");
    if (!rope_interval) return rope_interval.error();
    const Int every = rope_interval->value_or(4);
    if (no_rope->has_value() && !(*no_rope)->empty() && static_cast<Int>((*no_rope)->size()) != n) {
      return f.Bad("no_rope_layers", "has " + std::to_string((*no_rope)->size()) +
                                         " entries, num_hidden_layers is " + std::to_string(n));
    }
    for (Int i = 0; i < n; ++i) {
      const bool listed = no_rope->has_value() && !(*no_rope)->empty();
      const bool uses_rope =
          listed ? (**no_rope)[static_cast<std::size_t>(i)] != 0 : ((i + 1) % every != 0);
      at(i) = uses_rope ? LayerKind::kChunkedAttention : full;
    }
    return kinds;
  }

  auto window = f.OptionalInt("sliding_window");
  if (!window) return window.error();

  // Qwen2 family: use_sliding_window gates it; layers from max_window_layers on slide.
  if (f.Has("use_sliding_window")) {
    auto use = f.Bool("use_sliding_window", false);
    if (!use) return use.error();
    if (!*use) return kinds;
    if (!window->has_value()) return f.Bad("sliding_window", "missing, use_sliding_window is true");
    auto max_window_layers = f.OptionalInt("max_window_layers", 0);
    if (!max_window_layers) return max_window_layers.error();
    const Int first = max_window_layers->value_or(n);
    for (Int i = first; i < n; ++i) at(i) = LayerKind::kSlidingWindow;
    return kinds;
  }

  if (!window->has_value()) return kinds;

  // Gemma-2: even layers slide. Gemma-3: all but every sliding_window_pattern-th.
  auto pattern = f.OptionalInt("sliding_window_pattern");
  if (!pattern) return pattern.error();
  Int every = 0;
  if (pattern->has_value()) {
    every = **pattern;
  } else if (d.model_type == "gemma2" || d.model_type == "cohere2") {
    every = d.model_type == "gemma2" ? 2 : 4;
  } else if (d.model_type == "gemma3" || d.model_type == "gemma3_text") {
    every = 6;
  }
  for (Int i = 0; i < n; ++i) {
    at(i) = (every == 0 || (i + 1) % every != 0) ? LayerKind::kSlidingWindow : full;
  }
  return kinds;
}

// Per-sequence state elements of one linear-state layer.
Result<Int> LinearStateElements(const Fields& f, const Dims& d) {
  if (f.Has("mamba_d_state") || d.model_type == "jamba") {
    // Mamba-1: conv state (d_conv - 1) x d_inner, SSM state d_inner x d_state.
    auto expand = f.OptionalInt("mamba_expand");
    if (!expand) return expand.error();
    auto d_state = f.OptionalInt("mamba_d_state");
    if (!d_state) return d_state.error();
    auto d_conv = f.OptionalInt("mamba_d_conv");
    if (!d_conv) return d_conv.error();
    const Int d_inner = expand->value_or(2) * d.hidden;
    return (d_conv->value_or(4) - 1) * d_inner + d_inner * d_state->value_or(16);
  }
  if (f.Has("linear_num_value_heads")) {
    // Gated DeltaNet (Qwen3-Next): conv state over q, k, v channels, and a
    // key_dim x value_dim matrix per value head.
    auto vh = f.RequiredInt({"linear_num_value_heads"});
    if (!vh) return vh.error();
    auto kh = f.RequiredInt({"linear_num_key_heads"});
    if (!kh) return kh.error();
    auto kd = f.RequiredInt({"linear_key_head_dim"});
    if (!kd) return kd.error();
    auto vd = f.RequiredInt({"linear_value_head_dim"});
    if (!vd) return vd.error();
    auto conv = f.OptionalInt("linear_conv_kernel_dim");
    if (!conv) return conv.error();
    const Int key_dim = *kh * *kd, value_dim = *vh * *vd;
    return (conv->value_or(4) - 1) * (2 * key_dim + value_dim) + *vh * *kd * *vd;
  }
  // Lightning / linear attention (MiniMax): a head_dim x head_dim state per head.
  return d.heads * d.head_dim * d.head_dim;
}

struct MoeRule {
  Int experts = 0;
  Int top_k = 0;
  Int expert_inter = 0;
  Int shared_inter = 0;  // total intermediate size of always-on experts
  bool shared_gate = false;
};

Result<MoeRule> ReadMoe(const Fields& f, const Dims& d) {
  MoeRule m;
  auto experts = f.FirstInt({"num_local_experts", "num_experts", "n_routed_experts"}, 0);
  if (!experts) return experts.error();
  m.experts = experts->value_or(0);
  if (m.experts <= 1) {
    m.experts = 0;
    return m;
  }
  auto top_k = f.FirstInt({"num_experts_per_tok", "experts_per_token", "moe_topk"});
  if (!top_k) return top_k.error();
  if (!top_k->has_value()) return f.Bad("num_experts_per_tok", "missing for a MoE model");
  m.top_k = **top_k;
  if (m.top_k > m.experts) {
    return f.Bad("num_experts_per_tok",
                 "is above the number of experts " + std::to_string(m.experts));
  }
  auto moe_inter = f.OptionalInt("moe_intermediate_size");
  if (!moe_inter) return moe_inter.error();
  m.expert_inter = moe_inter->value_or(d.intermediate);
  auto n_shared = f.OptionalInt("n_shared_experts", 0);
  if (!n_shared) return n_shared.error();
  auto shared_inter = f.OptionalInt("shared_expert_intermediate_size", 0);
  if (!shared_inter) return shared_inter.error();
  if (n_shared->has_value()) {
    m.shared_inter = **n_shared * m.expert_inter;
  } else if (shared_inter->has_value()) {
    m.shared_inter = **shared_inter;
    m.shared_gate = true;  // Qwen MoE: a sigmoid gate (hidden -> 1) on the shared expert
  } else if (d.model_type == "llama4" || d.model_type == "llama4_text") {
    m.shared_inter = d.intermediate;
  }
  return m;
}

// Whether layer i has routed experts.
Result<std::vector<bool>> ResolveMoeLayers(const Fields& f, const Dims& d, const MoeRule& m) {
  std::vector<bool> moe(static_cast<std::size_t>(d.layers), m.experts > 0);
  if (m.experts == 0) return moe;
  if (f.Has("first_k_dense_replace") || f.Has("moe_layer_freq")) {  // DeepSeek
    auto first = f.OptionalInt("first_k_dense_replace", 0);
    if (!first) return first.error();
    auto freq = f.OptionalInt("moe_layer_freq");
    if (!freq) return freq.error();
    for (Int i = 0; i < d.layers; ++i) {
      moe[static_cast<std::size_t>(i)] = i >= first->value_or(0) && i % freq->value_or(1) == 0;
    }
  } else if (f.Has("expert_layer_period") || d.model_type == "jamba") {  // Jamba
    auto period = f.OptionalInt("expert_layer_period");
    if (!period) return period.error();
    auto offset = f.OptionalInt("expert_layer_offset", 0);
    if (!offset) return offset.error();
    for (Int i = 0; i < d.layers; ++i) {
      moe[static_cast<std::size_t>(i)] = i % period->value_or(2) == offset->value_or(1);
    }
  } else if (f.Has("interleave_moe_layer_step") || d.model_type == "llama4" ||
             d.model_type == "llama4_text") {  // Llama-4
    auto step = f.OptionalInt("interleave_moe_layer_step");
    if (!step) return step.error();
    for (Int i = 0; i < d.layers; ++i) {
      moe[static_cast<std::size_t>(i)] = (i + 1) % step->value_or(1) == 0;
    }
  } else if (f.Has("decoder_sparse_step") || f.Has("mlp_only_layers")) {  // Qwen MoE
    auto step = f.OptionalInt("decoder_sparse_step");
    if (!step) return step.error();
    auto dense = f.OptionalIntList("mlp_only_layers");
    if (!dense) return dense.error();
    for (Int i = 0; i < d.layers; ++i) {
      const bool listed =
          dense->has_value() && std::find((*dense)->begin(), (*dense)->end(), i) != (*dense)->end();
      moe[static_cast<std::size_t>(i)] = !listed && (i + 1) % step->value_or(1) == 0;
    }
  }
  return moe;
}

// Native storage format of the checkpoint's weights.
NativeWeightFormat ReadNativeWeights(const json& root, const Fields& f) {
  NativeWeightFormat w;
  std::string dtype = f.StringOr("torch_dtype", f.StringOr("dtype", "bfloat16"));
  if (root.contains("torch_dtype") && root["torch_dtype"].is_string()) {
    dtype = root["torch_dtype"].get<std::string>();
  }
  const std::string base = dtype == "float32" ? "fp32" : (dtype == "float16" ? "fp16" : "bf16");
  w = NativeWeightFormat{base, base, base};
  if (root.contains("quantization_config") && root["quantization_config"].is_object()) {
    const json& q = root["quantization_config"];
    const json quant_method = q.value("quant_method", json());
    const std::string method = quant_method.is_string() ? quant_method.get<std::string>() : "";
    if (method == "fp8") {
      w.dense = "fp8-e4m3";
      w.experts = "fp8-e4m3";
    } else if (method == "mxfp4") {
      w.experts = "mxfp4";  // gpt-oss: MoE experts in MXFP4, the rest unconverted
    }
  }
  return w;
}

Result<ModelShape> BuildShape(const json& root, const std::string& source, const std::string& name,
                              const std::vector<ConfigOverride>& overrides) {
  if (!root.is_object()) return Error(source + ": expected a JSON object at the top level");
  json config = root;
  std::string prefix;
  if (root.contains("text_config") && root["text_config"].is_object()) {
    config = root["text_config"];
    prefix = "text_config.";
    // Keys a text config inherits from the top level when it lacks them.
    for (const char* key : {"tie_word_embeddings", "torch_dtype", "vocab_size"}) {
      if (!config.contains(key) && root.contains(key)) config[key] = root[key];
    }
  }
  if (auto s = ApplyOverrides(config, overrides, source); !s) return s.error();
  const Fields f(config, source, prefix);

  std::string model_type = f.StringOr("model_type", "");
  if (model_type.empty() && root.contains("model_type") && root["model_type"].is_string()) {
    model_type = root["model_type"].get<std::string>();
  }
  auto dims = ReadDims(f, model_type);
  if (!dims) return dims.error();
  const Dims& d = *dims;

  auto kinds = ResolveLayerKinds(f, d);
  if (!kinds) return kinds.error();
  auto window = f.OptionalInt("sliding_window");
  if (!window) return window.error();
  auto chunk = f.OptionalInt("attention_chunk_size");
  if (!chunk) return chunk.error();

  ModelShape shape;
  shape.name = name;
  shape.source = source;
  shape.architecture = model_type;
  if (root.contains("architectures") && root["architectures"].is_array() &&
      !root["architectures"].empty() && root["architectures"][0].is_string()) {
    shape.architecture = root["architectures"][0].get<std::string>();
  }
  shape.hidden_size = d.hidden;
  shape.vocab_size = d.vocab;
  auto max_pos = f.FirstInt({"max_position_embeddings", "n_positions", "seq_length"});
  if (!max_pos) return max_pos.error();
  shape.max_position_embeddings = max_pos->value_or(0);

  Int state_elements = 0;
  if (std::count(kinds->begin(), kinds->end(), LayerKind::kLinearState) > 0) {
    auto s = LinearStateElements(f, d);
    if (!s) return s.error();
    state_elements = *s;
  }
  for (LayerKind kind : *kinds) {
    LayerShape layer;
    layer.kind = kind;
    switch (kind) {
      case LayerKind::kLatentAttention:
        layer.query_heads = d.heads;
        layer.qk_head_dim = d.qk_nope + d.qk_rope;
        layer.v_head_dim = d.v_head;
        layer.latent_dim = d.kv_lora_rank + d.qk_rope;
        break;
      case LayerKind::kSlidingWindow:
      case LayerKind::kChunkedAttention:
      case LayerKind::kFullAttention:
        layer.query_heads = d.heads;
        layer.qk_head_dim = d.head_dim;
        layer.v_head_dim = d.head_dim;
        layer.kv_heads = d.kv_heads;
        if (kind == LayerKind::kSlidingWindow) {
          if (!window->has_value()) {
            return f.Bad("sliding_window", "missing, but some layers use sliding attention");
          }
          layer.window = **window;
        } else if (kind == LayerKind::kChunkedAttention) {
          if (!chunk->has_value()) {
            return f.Bad("attention_chunk_size", "missing, but some layers use chunked attention");
          }
          layer.window = **chunk;
        }
        break;
      case LayerKind::kLinearState:
        layer.state_elements = state_elements;
        break;
    }
    shape.layers.push_back(layer);
  }

  // Parameters, by role. Formulas in docs/models.md.
  ParamCounts& p = shape.params;
  auto tie = f.Bool("tie_word_embeddings", TiesEmbeddingsByDefault(model_type));
  if (!tie) return tie.error();
  auto attention_bias = f.Bool("attention_bias", false);
  if (!attention_bias) return attention_bias.error();
  p.embedding = d.vocab * d.hidden;
  p.lm_head = *tie ? 0 : d.vocab * d.hidden;
  const bool qkv_bias = *attention_bias || model_type == "qwen2" || model_type == "qwen2_moe";
  const bool qk_norm = model_type.starts_with("qwen3") || model_type.starts_with("gemma3");
  const bool gated = !HasUngatedMlp(model_type);
  const Int mlp_matrices = gated ? 3 : 2;
  const Int norms_per_layer = model_type.starts_with("gemma") ? 4 : 2;

  auto moe_rule = ReadMoe(f, d);
  if (!moe_rule) return moe_rule.error();
  auto moe_layers = ResolveMoeLayers(f, d, *moe_rule);
  if (!moe_layers) return moe_layers.error();
  const bool biased_experts = model_type == "gpt_oss";
  const Int expert_params = mlp_matrices * d.hidden * moe_rule->expert_inter +
                            (biased_experts ? 2 * moe_rule->expert_inter + d.hidden : 0);
  auto dense_inter_opt = f.OptionalInt("intermediate_size_mlp");
  if (!dense_inter_opt) return dense_inter_opt.error();
  const Int dense_inter = dense_inter_opt->value_or(d.intermediate);

  for (std::size_t i = 0; i < shape.layers.size(); ++i) {
    const LayerShape& L = shape.layers[i];
    p.norms += norms_per_layer * d.hidden;
    if (L.kind == LayerKind::kLatentAttention) {
      const Int q_dim = d.heads * (d.qk_nope + d.qk_rope);
      p.attention += d.q_lora_rank > 0
                         ? d.hidden * d.q_lora_rank + d.q_lora_rank + d.q_lora_rank * q_dim
                         : d.hidden * q_dim;
      p.attention += d.hidden * (d.kv_lora_rank + d.qk_rope) + d.kv_lora_rank;
      p.attention += d.kv_lora_rank * d.heads * (d.qk_nope + d.v_head);
      p.attention += d.heads * d.v_head * d.hidden;
    } else if (L.kind == LayerKind::kLinearState) {
      if (model_type == "jamba" || f.Has("mamba_d_state")) {
        auto expand = f.OptionalInt("mamba_expand");
        auto d_state = f.OptionalInt("mamba_d_state");
        auto d_conv = f.OptionalInt("mamba_d_conv");
        auto dt_rank = f.OptionalInt("mamba_dt_rank");
        if (!expand || !d_state || !d_conv || !dt_rank) {
          return Error(source + ": " + prefix + "mamba_*: must be positive integers");
        }
        const Int di = expand->value_or(2) * d.hidden, ds = d_state->value_or(16),
                  dc = d_conv->value_or(4);
        const Int dr = dt_rank->value_or((d.hidden + 15) / 16);
        p.linear_mixers += d.hidden * 2 * di     // in_proj
                           + di * dc + di        // conv1d + bias
                           + di * (dr + 2 * ds)  // x_proj
                           + dr * di + di        // dt_proj + bias
                           + di * ds + di        // A_log, D
                           + di * d.hidden       // out_proj
                           + dr + 2 * ds;        // dt / B / C norms
      } else if (f.Has("linear_num_value_heads")) {
        // Gated DeltaNet: q,k,v,z and b,a projections, conv, per-head A and dt, out.
        auto vh = f.RequiredInt({"linear_num_value_heads"});
        auto kh = f.RequiredInt({"linear_num_key_heads"});
        auto kd = f.RequiredInt({"linear_key_head_dim"});
        auto vd = f.RequiredInt({"linear_value_head_dim"});
        auto conv = f.OptionalInt("linear_conv_kernel_dim");
        if (!vh || !kh || !kd || !vd || !conv) {
          return Error(source + ": " + prefix + "linear_*: must be positive integers");
        }
        const Int key_dim = *kh * *kd, value_dim = *vh * *vd;
        p.linear_mixers += d.hidden * (2 * key_dim + 2 * value_dim) + d.hidden * 2 * *vh +
                           (2 * key_dim + value_dim) * conv->value_or(4) + 2 * *vh + *vd +
                           value_dim * d.hidden;
      } else {
        // Lightning attention: fused q,k,v, an output gate and the output projection.
        p.linear_mixers += 5 * d.hidden * d.heads * d.head_dim + d.heads * d.head_dim;
      }
    } else {
      const Int q = d.heads * L.qk_head_dim, kv = L.kv_heads * L.qk_head_dim;
      p.attention += d.hidden * q + 2 * d.hidden * kv + q * d.hidden;
      if (qkv_bias) p.attention += q + 2 * kv;
      if (*attention_bias) p.attention += d.hidden;
      if (qk_norm) p.attention += 2 * L.qk_head_dim;
      if (model_type == "gpt_oss") p.attention += d.heads;  // attention sinks
    }
    if ((*moe_layers)[i]) {
      p.routed_experts += moe_rule->experts * expert_params;
      p.active_routed_experts += moe_rule->top_k * expert_params;
      p.routers += d.hidden * moe_rule->experts + (biased_experts ? moe_rule->experts : 0);
      if (moe_rule->shared_inter > 0) {
        p.shared_experts += mlp_matrices * d.hidden * moe_rule->shared_inter;
        if (moe_rule->shared_gate) p.routers += d.hidden;
      }
    } else {
      p.dense_mlp += mlp_matrices * d.hidden * dense_inter;
    }
  }
  p.norms += d.hidden;  // final norm
  if (moe_rule->experts > 0) {
    shape.moe.layers = std::count(moe_layers->begin(), moe_layers->end(), true);
    shape.moe.experts = moe_rule->experts;
    shape.moe.experts_per_token = moe_rule->top_k;
    shape.moe.params_per_expert = expert_params;
  }
  shape.native_weights = ReadNativeWeights(root, f);
  shape.state_format = shape.native_weights.other;
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

Result<ModelShape> ParseHfConfig(std::string_view json_text, const std::string& source,
                                 const std::string& name,
                                 const std::vector<ConfigOverride>& overrides) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line L,
    // column C: REASON"; keep the reason.
    std::string reason = e.what();
    const std::size_t colon = reason.find(": ", reason.find("column"));
    reason = colon == std::string::npos ? "" : ": " + reason.substr(colon + 2);
    return Error(source + ":" + LineColumn(json_text, e.byte > 0 ? e.byte - 1 : 0) +
                 ": not valid JSON" + reason);
  } catch (const json::out_of_range& e) {
    // A number beyond a double (1e999): "[json.exception.out_of_range.406] number
    // overflow parsing '1e999'"; the parser gives no position.
    const std::string what = e.what();
    const std::size_t start = what.find("] ");
    return Error(source + ": not valid JSON: " +
                 (start == std::string::npos ? what : what.substr(start + 2)));
  }
  return BuildShape(root, source, name, overrides);
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
                             const std::vector<ConfigOverride>& overrides) {
  for (const CatalogModel& m : ModelCatalog()) {
    if (m.name == name_or_path) {
      return ParseHfConfig(m.config, "models/" + m.name + ".json", m.name, overrides);
    }
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) {
    auto text = ReadFile(name_or_path);
    if (!text) return text.error();
    return ParseHfConfig(*text, name_or_path, std::filesystem::path(name_or_path).stem().string(),
                         overrides);
  }
  std::string names;
  for (const CatalogModel& m : ModelCatalog()) names += (names.empty() ? "" : ", ") + m.name;
  return Error("--model \"" + name_or_path +
               "\": neither a catalog name nor a config.json file (catalog: " + names + ")");
}

}  // namespace kvbill
