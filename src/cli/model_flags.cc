#include "cli/model_flags.h"

#include <algorithm>
#include <sstream>

#include "kvbill/hardware/catalog_names.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {

void AddModelFlags(boost::program_options::options_description& options, ModelFlags& flags) {
  namespace po = boost::program_options;
  options.add_options()("model,m", po::value(&flags.model)->default_value(flags.model),
                        "catalog name (kvbill models) or Hugging Face repo id of a bundled "
                        "model, in any case; or a config.json file, or its directory")(
      "set", po::value(&flags.sets)->composing(),
      "override a config key before sizing, e.g. --set num_key_value_heads=64 (repeatable)")(
      "text-only", po::bool_switch(&flags.text_only),
      "leave a multimodal model's vision and audio towers out of the weights");
}

Result<ModelShape> LoadModelFromFlags(const ModelFlags& flags) {
  std::vector<ConfigOverride> overrides;
  for (const std::string& s : flags.sets) {
    auto o = ParseConfigOverride(s);
    if (!o) return o.error();
    // A key set twice: which value was meant is a guess.
    for (const ConfigOverride& earlier : overrides) {
      if (earlier.key == o->key) return Error("--set: " + o->key + " is set twice");
    }
    overrides.push_back(*o);
  }
  auto name = ResolveModelName(flags.model);
  if (!name) return name.error();
  return LoadModel(*name, overrides, flags.text_only);
}

std::string DefaultedFieldsText(const ModelShape& m) {
  std::string text;
  for (const DefaultedField& d : m.defaulted_fields) {
    text += (text.empty() ? "" : ", ") + d.key + " = " + d.value;
  }
  return text;
}

nlohmann::ordered_json DefaultedFieldsJson(const ModelShape& m) {
  nlohmann::ordered_json fields = nlohmann::ordered_json::array();
  for (const DefaultedField& d : m.defaulted_fields) {
    fields.push_back({{"field", d.key}, {"value", nlohmann::ordered_json::parse(d.value)}});
  }
  return fields;
}

std::string DescribeModel(const ModelShape& m) {
  std::ostringstream out;
  out << "model       " << m.name << " (" << m.architecture << ", " << m.source << ")\n";
  if (m.model_type_from_architecture) {
    out << "rule        the config names no model_type: read as \"" << m.model_type
        << "\", the type of its architecture " << m.architecture
        << " (the class vLLM loads; docs/models.md)\n";
  }
  if (m.generic_rule) {
    out << "rule        model_type \"" << m.model_type
        << "\" has no family rule in kvbill: its layers are read by the generic rule, as a "
           "Llama-like model (docs/models.md); check them against the model card\n";
  }
  if (!m.defaulted_fields.empty()) {
    out << "defaults    " << DefaultedFieldsText(m)
        << ": absent from the config, read at the class defaults of model_type \"" << m.model_type
        << "\" (" << m.defaults_source << ", as transformers reads it); check them against the "
        << "model card\n";
  }
  out << "layers      " << m.DecoderLayers();
  std::string kinds;
  for (LayerKind k : AllLayerKinds()) {
    const int n = m.CountLayers(k);
    if (n == 0) continue;
    kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + LayerKindName(k);
    for (const LayerShape& l : m.layers) {
      if (l.kind == k && l.window > 0) {
        kinds += " (" + FormatWithSeparators(l.window) + " tokens)";
        break;
      }
    }
  }
  out << ": " << kinds;
  const auto sharing = std::count_if(m.layers.begin(), m.layers.end(),
                                     [](const LayerShape& l) { return l.SharesKv(); });
  if (sharing > 0) {
    out << "; " << sharing << " of them read an earlier layer's KV cache and keep none";
  }
  out << "\n";
  if (m.HasCompressedLayers()) {
    // DeepSeek-V4: the layers by compress ratio, then the attention.
    int window_only = 0, indexed = 0, dense = 0;
    const LayerShape* first = nullptr;
    const LayerShape* csa = nullptr;
    int dense_ratio = 0;
    for (const LayerShape& l : m.layers) {
      if (!l.IsCompressed()) continue;
      if (first == nullptr) first = &l;
      if (l.compress_ratio == 0) {
        ++window_only;
      } else if (l.sparse_topk > 0) {
        ++indexed;
        csa = &l;
      } else {
        ++dense;
        dense_ratio = l.compress_ratio;
      }
    }
    // Every layer keeps its window; then what each kind adds.
    std::string parts;
    const auto add = [&parts](const std::string& part) {
      parts += (parts.empty() ? "" : "; ") + part;
    };
    if (window_only > 0) add(std::to_string(window_only) + " layers the window alone");
    if (csa != nullptr) {
      add(std::to_string(indexed) + " layers + 1 latent per " +
          std::to_string(csa->compress_ratio) + " tokens with an indexer key of " +
          std::to_string(csa->indexer_dim) + " (top " + std::to_string(csa->sparse_topk) +
          " attended)");
    }
    if (dense > 0) {
      add(std::to_string(dense) + " layers + 1 latent per " + std::to_string(dense_ratio) +
          " tokens");
    }
    out << "compressed  a window of " << first->window << " latents on every layer; " << parts
        << "\n";
    out << "attention   one latent of " << first->latent_dim << " per entry (key and value), "
        << first->query_heads << " query heads\n";
  }
  for (const LayerShape& l : m.layers) {
    if (l.IsLatent()) {
      out << "attention   MLA, latent " << l.latent_dim << " per token, " << l.query_heads
          << " query heads";
      if (l.indexer_dim > 0) out << ", indexer key " << l.indexer_dim << " per token";
      out << "\n";
      break;
    }
    if (l.kv_heads > 0) {
      // Layers may differ in query heads (Laguna): the range.
      std::int64_t lo = l.query_heads, hi = l.query_heads;
      for (const LayerShape& o : m.layers) {
        if (o.kv_heads <= 0) continue;
        lo = std::min(lo, o.query_heads);
        hi = std::max(hi, o.query_heads);
      }
      out << "attention   "
          << (lo == hi ? std::to_string(lo)
                       : std::to_string(lo) + "-" + std::to_string(hi) + " (per layer)")
          << " query heads, " << l.kv_heads << " KV heads, head dim " << l.qk_head_dim << "\n";
      break;
    }
  }
  int indexed = 0;
  const LayerShape* with_indexer = nullptr;
  for (const LayerShape& l : m.layers) {
    if (!l.IsLatent() && !l.IsCompressed() && l.indexer_dim > 0) {
      ++indexed;
      with_indexer = &l;
    }
  }
  if (with_indexer != nullptr) {
    out << "indexer     " << indexed << " layers add an indexer key of "
        << with_indexer->indexer_dim << " elements (" << with_indexer->indexer_bits
        << "-bit) per token\n";
  }
  out << "parameters  " << FormatFixed(static_cast<double>(m.params.Total()) / 1e9, 2) << "B total";
  if (m.params.routed_experts > 0) {
    out << ", " << FormatFixed(static_cast<double>(m.params.Active()) / 1e9, 2) << "B active ("
        << m.moe.experts << " experts";
    if (m.moe.zero_experts > 0) {
      // LongCat-Flash: the top-k also picks zero-computation experts.
      out << " and " << m.moe.zero_experts << " zero-computation ones, top-" << m.moe.routed_top_k
          << " of both: " << m.moe.experts_per_token << " routed expected)";
    } else {
      out << ", top-" << m.moe.experts_per_token << ")";
    }
  }
  if (m.params.vision + m.params.audio > 0) {
    out << ", of which "
        << FormatFixed(static_cast<double>(m.params.vision + m.params.audio) / 1e9, 2)
        << "B vision/audio towers";
  }
  if (m.params.mtp > 0) {
    out << "; the checkpoint adds " << FormatFixed(static_cast<double>(m.params.mtp) / 1e9, 2)
        << "B of MTP modules";
  }
  out << "\n";
  out << "weights     " << m.weight_description << "\n";
  if (!m.checkpoint_kv_format.empty()) {
    out << "KV declared " << m.checkpoint_kv_format
        << " by the checkpoint: vLLM's --kv-cache-dtype auto stores it so (--kv-format auto)\n";
  }
  return out.str();
}

std::string AutoKvFormat(const std::string& name, const ModelShape& model) {
  return name == "auto" ? VllmAutoKvFormat(model) : name;
}

}  // namespace kvbill::cli
