#include "kvbill/model/weight_bytes.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "kvbill/model/kv_format.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

bool Tower(const WeightGroup& g) {
  return g.role == ParamRole::kVision || g.role == ParamRole::kAudio;
}

// Linear layers inside the blocks: what a named --weight-format re-stores.
// (By the role inside the module: an MTP module's embedding and head copies
// stay in the dtype as the model's own do.)
bool InBlocks(const WeightGroup& g) {
  return g.linear && !Tower(g) && g.module_role != ParamRole::kLmHead &&
         g.module_role != ParamRole::kRouter && g.module_role != ParamRole::kEmbedding;
}

}  // namespace

// (weight_bytes.h.) MLA's down projections are ReplicatedLinear, or the
// fused q_a / kv_a projection with tensor parallelism disabled.
bool HeldWholeOnEveryGpu(const WeightGroup& g) {
  if (g.role == ParamRole::kRouter || g.role == ParamRole::kNorm) return true;
  auto ends_with = [&g](std::string_view tail) {
    return g.name.size() >= tail.size() &&
           std::string_view(g.name).substr(g.name.size() - tail.size()) == tail;
  };
  if (ends_with(".q_a_proj") || ends_with(".kv_a_proj_with_mqa") || ends_with(".q_a_layernorm") ||
      ends_with(".kv_a_layernorm")) {
    return true;
  }
  // A prediction module's eh_proj: a plain nn.Linear in vLLM's MTP layers.
  if (ends_with(".eh_proj")) return true;
  // Gemma 3n's and Gemma 4's per-layer input gate and projection and
  // Gemma 3n's AltUp: ReplicatedLinear (vLLM gemma3n.py, gemma4.py).
  if (ends_with(".per_layer_input_gate") || ends_with(".per_layer_projection") ||
      g.name.find(".altup.") != std::string::npos) {
    return true;
  }
  // Step 3's fused projection into the query rank, K and V
  // (ReplicatedLinear in vLLM step3_text.py).
  if (g.role == ParamRole::kAttention && (ends_with(".qkv_proj") || ends_with(".inter_norm"))) {
    return true;
  }
  // DeepSeek-V4 (vLLM deepseek_v4.py): the fused wq_a + wkv projection and
  // every compressor's fused wkv / wgate run with tensor parallelism
  // disabled; the compressors' position biases and norms, the q and kv
  // norms and the indexer's weights_proj are whole on every GPU too.
  return g.name.find(".compressor.") != std::string::npos || ends_with(".attn.wq_a") ||
         ends_with(".attn.wkv") || ends_with(".attn.q_norm") || ends_with(".attn.kv_norm") ||
         ends_with(".indexer.weights_proj");
}

namespace {

// A shape built by hand (no weight groups): one group per role of params,
// in the dtype.
std::vector<WeightGroup> GroupsFromParams(const ModelShape& m, const WeightFormat& dtype) {
  const ParamCounts& p = m.params;
  std::vector<WeightGroup> out;
  auto add = [&](ParamRole role, std::int64_t n, std::int64_t active, bool linear) {
    if (n <= 0) return;
    WeightGroup g;
    g.role = role;
    g.module_role = role;
    g.rows = 1;
    g.cols = n;
    g.linear = linear;
    g.format = dtype;
    out.push_back(g);
    if (role == ParamRole::kRoutedExperts) {
      // All experts count in the total, the active ones in what a token reads.
      out.back().active_copies = 0;
      WeightGroup a = out.back();
      a.cols = active;
      a.copies = 0;
      a.active_copies = 1;
      out.push_back(a);
    }
  };
  add(ParamRole::kEmbedding, p.embedding, 0, false);
  add(ParamRole::kLmHead, p.lm_head, 0, true);
  add(ParamRole::kAttention, p.attention, 0, true);
  add(ParamRole::kDenseMlp, p.dense_mlp, 0, true);
  add(ParamRole::kRoutedExperts, p.routed_experts, p.active_routed_experts, true);
  add(ParamRole::kSharedExperts, p.shared_experts, 0, true);
  add(ParamRole::kRouter, p.routers, 0, true);
  add(ParamRole::kLinearMixer, p.linear_mixers, 0, true);
  add(ParamRole::kNorm, p.norms, 0, false);
  add(ParamRole::kVision, p.vision, 0, true);
  add(ParamRole::kAudio, p.audio, 0, true);
  return out;
}

// An ElementFormat storing weights as `w` does, but for block and per-tensor
// scales.
ElementFormat AsElement(const WeightFormat& w) {
  if (auto e = ParseElementFormat(w.name); e && e->element_bits == w.element_bits) return *e;
  ElementFormat e;
  e.name = w.name;
  e.element_bits = w.element_bits;
  if (w.group_size > 0 && w.group_bits > 0) {
    e.group_size = w.group_size;
    e.metadata_bits_per_group = w.group_bits;
  } else if (w.row_bits > 0) {
    e.group_size = ElementFormat::kGroupIsVector;
    e.metadata_bits_per_group = w.row_bits;
  }
  e.description = "as the checkpoint stores it";
  return e;
}

}  // namespace

ParamCounts ParamsByRole(const std::vector<WeightGroup>& weights) {
  ParamCounts p;
  for (const WeightGroup& g : weights) {
    const std::int64_t n = g.Params();
    switch (g.role) {
      case ParamRole::kEmbedding:
        p.embedding += n;
        break;
      case ParamRole::kLmHead:
        p.lm_head += n;
        break;
      case ParamRole::kAttention:
        p.attention += n;
        break;
      case ParamRole::kDenseMlp:
        p.dense_mlp += n;
        break;
      case ParamRole::kRoutedExperts:
        p.routed_experts += n;
        p.active_routed_experts += g.rows * g.cols * g.active_copies;
        break;
      case ParamRole::kSharedExperts:
        p.shared_experts += n;
        break;
      case ParamRole::kRouter:
        p.routers += n;
        break;
      case ParamRole::kLinearMixer:
        p.linear_mixers += n;
        break;
      case ParamRole::kNorm:
        p.norms += n;
        break;
      case ParamRole::kVision:
        p.vision += n;
        break;
      case ParamRole::kAudio:
        p.audio += n;
        break;
      case ParamRole::kMtp:
        p.mtp += n;
        break;
    }
  }
  return p;
}

Result<PartFormats> NativePartFormats(const ModelShape& model) {
  auto dtype = ParseElementFormat(model.dtype);
  if (!dtype) return dtype.error();
  // Parameters per format name, for each part; the first format seen of a
  // name stands for it.
  struct Part {
    std::map<std::string, std::int64_t> params;
    std::map<std::string, WeightFormat> formats;
  };
  Part dense, experts, other;
  for (const WeightGroup& g : model.weights) {
    Part* part = nullptr;
    switch (g.role) {
      case ParamRole::kAttention:
      case ParamRole::kDenseMlp:
      case ParamRole::kSharedExperts:
      case ParamRole::kLinearMixer:
        if (g.linear) part = &dense;
        break;
      case ParamRole::kRoutedExperts:
        part = &experts;
        break;
      case ParamRole::kEmbedding:
      case ParamRole::kLmHead:
      case ParamRole::kRouter:
        part = &other;
        break;
      case ParamRole::kNorm:
      case ParamRole::kVision:
      case ParamRole::kAudio:
      case ParamRole::kMtp:
        break;
    }
    if (part == nullptr) continue;
    part->params[g.format.name] += g.Params();
    part->formats.emplace(g.format.name, g.format);
  }
  auto pick = [&](const Part& part) {
    const std::string* best = nullptr;
    std::int64_t most = -1;
    for (const auto& [name, n] : part.params) {
      if (n > most) {
        most = n;
        best = &name;
      }
    }
    return best == nullptr ? *dtype : AsElement(part.formats.at(*best));
  };
  return PartFormats{pick(dense), pick(experts), pick(other)};
}

Result<WeightBytes> ComputeWeightBytes(const ModelShape& model, const std::string& format) {
  WeightFormat named;
  const bool is_auto = format == "auto";
  if (!is_auto) {
    auto f = WeightFormatFromElement(format);
    if (!f) return Error("--weight-format: " + f.error().message());
    named = *f;
  }
  auto dtype = WeightFormatFromElement(model.dtype);
  if (!dtype) return dtype.error();
  std::int64_t total = 0, active = 0, experts = 0, towers = 0, replicated = 0, gathered = 0,
               reapplied = 0, replicated_params = 0;
  std::map<std::int64_t, std::int64_t> kv_bits;     // K and V projections by head count
  std::map<std::int64_t, std::int64_t> group_bits;  // Mamba-2 B/C groups by group count
  const std::vector<WeightGroup> by_role =
      model.weights.empty() ? GroupsFromParams(model, *dtype) : std::vector<WeightGroup>();
  const std::vector<WeightGroup>& groups = model.weights.empty() ? by_role : model.weights;
  const bool own_lm_head = std::any_of(groups.begin(), groups.end(), [](const WeightGroup& g) {
    return g.role == ParamRole::kLmHead && g.copies > 0 && g.Params() > 0;
  });
  for (const WeightGroup& g : groups) {
    if (g.role == ParamRole::kMtp) continue;
    const WeightFormat& f = is_auto ? g.format : (InBlocks(g) ? named : *dtype);
    const std::int64_t one = f.Bits(g.rows, g.cols);
    total += one * g.copies;
    if (g.uses > 1) reapplied += one * g.copies * (g.uses - 1);
    if (HeldWholeOnEveryGpu(g)) {
      replicated += one * g.copies;
      replicated_params += g.Params();
    }
    if (g.kv_heads > 0 && !HeldWholeOnEveryGpu(g)) kv_bits[g.kv_heads] += one * g.copies;
    if (g.state_groups > 0 && g.group_elements > 0 && g.Params() > 0 && !HeldWholeOnEveryGpu(g)) {
      // The groups' share of the tensor's bits (exact for an unscaled format).
      group_bits[g.state_groups] += one * g.copies / g.Params() * g.group_elements +
                                    one * g.copies % g.Params() * g.group_elements / g.Params();
    }
    if (g.gathered || (g.role == ParamRole::kEmbedding && own_lm_head)) {
      gathered += one * g.copies;
    } else if (g.role == ParamRole::kRoutedExperts) {
      experts += one * g.copies;
      active += one * g.active_copies;
    } else if (Tower(g)) {
      towers += one * g.copies;
    } else {
      active += one * g.copies;
    }
  }
  WeightBytes w;
  w.total = BitsToBytes(total);
  w.active = BitsToBytes(active);
  w.routed_experts = BitsToBytes(experts);
  w.towers = BitsToBytes(towers);
  w.gathered_embedding = BitsToBytes(gathered);
  w.replicated = BitsToBytes(replicated);
  w.replicated_params = replicated_params;
  w.reapplied = BitsToBytes(reapplied);
  for (const auto& [heads, bits] : kv_bits) w.kv_projections[heads] = BitsToBytes(bits);
  for (const auto& [count, bits] : group_bits) w.state_group_parts[count] = BitsToBytes(bits);
  w.description = is_auto
                      ? (model.weight_description.empty() ? dtype->name : model.weight_description)
                      : named.name + " linear, " + dtype->name + " embeddings/norms/towers";
  return w;
}

}  // namespace kvbill
