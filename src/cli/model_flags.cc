#include "cli/model_flags.h"

#include <sstream>

#include "kvbill/util/units.h"

namespace kvbill::cli {

void AddModelFlags(boost::program_options::options_description& options, ModelFlags& flags) {
  namespace po = boost::program_options;
  options.add_options()("model,m", po::value(&flags.model)->default_value(flags.model),
                        "catalog name (kvbill models) or path to a config.json")(
      "set", po::value(&flags.sets)->composing(),
      "override a config key before sizing, e.g. --set num_key_value_heads=64 (repeatable)");
}

Result<ModelShape> LoadModelFromFlags(const ModelFlags& flags) {
  std::vector<ConfigOverride> overrides;
  for (const std::string& s : flags.sets) {
    auto o = ParseConfigOverride(s);
    if (!o) return o.error();
    overrides.push_back(*o);
  }
  return LoadModel(flags.model, overrides);
}

std::string DescribeModel(const ModelShape& m) {
  std::ostringstream out;
  out << "model       " << m.name << " (" << m.architecture << ", " << m.source << ")\n";
  out << "layers      " << m.layers.size();
  std::string kinds;
  for (LayerKind k :
       {LayerKind::kFullAttention, LayerKind::kLatentAttention, LayerKind::kSlidingWindow,
        LayerKind::kChunkedAttention, LayerKind::kLinearState}) {
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
  out << ": " << kinds << "\n";
  for (const LayerShape& l : m.layers) {
    if (l.kind == LayerKind::kLatentAttention) {
      out << "attention   MLA, latent " << l.latent_dim << " per token, " << l.query_heads
          << " query heads\n";
      break;
    }
    if (l.kv_heads > 0) {
      out << "attention   " << l.query_heads << " query heads, " << l.kv_heads
          << " KV heads, head dim " << l.qk_head_dim << "\n";
      break;
    }
  }
  out << "parameters  " << FormatFixed(static_cast<double>(m.params.Total()) / 1e9, 2) << "B total";
  if (m.params.routed_experts > 0) {
    out << ", " << FormatFixed(static_cast<double>(m.params.Active()) / 1e9, 2) << "B active ("
        << m.moe.experts << " experts, top-" << m.moe.experts_per_token << ")";
  }
  out << "\n";
  return out.str();
}

}  // namespace kvbill::cli
