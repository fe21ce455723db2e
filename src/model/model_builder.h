// ModelBuilder: turns what each decoder layer holds (an attention, a mixer,
// an MLP or MoE, its norms) into the layer inventory (LayerShape entries)
// and the weight tensors (WeightGroup) of a ModelShape. The parameter
// formulas of each block live here, once; the family rules that decide
// which blocks a layer has live in families.cc. Internal to src/model/.
#ifndef KVBILL_SRC_MODEL_MODEL_BUILDER_H_
#define KVBILL_SRC_MODEL_MODEL_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/model/model_shape.h"

namespace kvbill::model_config {

using Int = std::int64_t;

// Module names as the family's checkpoints spell them, for matching the
// `ignore` / `modules_to_not_convert` patterns of quantization configs.
struct ModuleNames {
  std::string layers = "model.layers.";
  std::string attn = "self_attn";
  std::string mlp = "mlp";  // dense MLP
  std::string moe = "mlp";  // the MoE block ("": experts and router in the layer itself)
  std::string experts = "experts";
  std::string shared = "shared_experts";
  std::string router = "gate";
  std::string mixer = "mixer";
  std::string gate = "gate_proj", up = "up_proj", down = "down_proj";
};

enum class AttnKind { kFull, kSliding, kChunked, kLatent, kSparseLatent };

struct AttnPlan {
  AttnKind kind = AttnKind::kFull;
  Int q_heads = 0;
  Int kv_heads = 0;
  Int qk_dim = 0;
  Int v_dim = 0;  // 0: no V projection, K is also V (K cached once)
  Tokens window = 0;
  // MLA
  Int q_lora = 0;  // 0: queries projected directly (MLA, and Step 3's share_q_dim)
  Int kv_lora = 0;
  Int rope = 0;
  Int nope = 0;
  // Sparse-attention indexer (DeepSeek-V3.2 / GLM-5)
  Int index_heads = 0;
  Int index_dim = 0;
  // Beside full attention (MiniMax-M3): the key's bits per element in the
  // cache; its queries have index_heads heads and a norm each.
  int index_bits = 0;
  Tokens sparse_topk = 0;  // tokens a query attends (0: all); see LayerShape
  // Extras
  bool qkv_bias = false;
  bool o_bias = false;
  bool output_gate = false;  // q projection also produces a sigmoid gate (Qwen3-Next)
  bool head_gate = false;    // a gate per query head on the output (Laguna's g_proj)
  bool sinks = false;        // one learned sink logit per query head (gpt-oss)
  Int q_norm = 0;            // parameters of the q / k norms
  Int k_norm = 0;
  // MLA projections whose up-projected K and V are what the engine caches:
  // q_heads KV heads of nope + rope each, V padded to that width (vLLM
  // minicpm3.py).
  bool cache_full = false;
  // The layer whose KV cache this attention reads (see LayerShape::kv_source);
  // -1: its own. Its projections are built all the same (vLLM computes and
  // drops the K and V of a sharing layer).
  int kv_source = -1;
  // q, k and v read this width instead of hidden (LayerShape::input_dim);
  // only AttentionEntry takes it (the weights are built by the caller).
  Int input_dim = 0;
};

struct MoePlan {
  Int experts = 0;
  Int top_k = 0;
  Int inter = 0;             // per routed expert
  bool gated = true;         // gate, up and down (else up and down)
  bool expert_bias = false;  // gpt-oss: biases on the expert projections
  Int shared_inter = 0;      // total intermediate size of always-on experts
  bool shared_gated = true;
  bool shared_gate = false;  // Qwen: a sigmoid gate (hidden -> 1) on the shared expert
  bool router_bias = false;  // a bias per expert on the router logits
  bool score_bias = false;   // e_score_correction_bias (DeepSeek noaux_tc)
  Int in_dim = 0;            // experts' input width when not hidden (Nemotron latent MoE)
  // The projections into and out of in_dim: Nemotron's fc1/fc2_latent_proj
  // (quantized with the linear layers), or Kimi-K3's routed_expert_down/up_proj,
  // which vLLM builds unquantized.
  bool kimi_latent = false;
  // Zero-computation experts beside the routed ones (LongCat-Flash): the
  // router scores experts + zero_experts; top_k is the routed experts a
  // token is expected to reach, routed_top_k the config's top-k.
  Int zero_experts = 0;
  Int routed_top_k = 0;
};

struct Mamba1Plan {
  Int d_inner = 0, d_state = 16, d_conv = 4, dt_rank = 0;
  bool conv_bias = true, proj_bias = false;
  bool dt_norms = false;  // Jamba's dt / B / C layer norms
};

struct Mamba2Plan {
  Int d_inner = 0, heads = 0, head_dim = 0, groups = 1, d_state = 128, d_conv = 4;
  bool conv_bias = true, proj_bias = false, gated_norm = true;
  int ssm_bits = 0;  // recurrent state bits; 0: the model's state format
};

// PLaMo 2's Mamba mixer (vLLM plamo2.py, Plamo2MambaMixer): heads x
// head_dim channels, one B and C of d_state shared by every head (no
// groups), a low-rank time step of dt_rank with its own norm, no biases.
struct PlamoMambaPlan {
  Int heads = 0, head_dim = 0, d_state = 64, d_conv = 4, dt_rank = 64;
};

// Kimi Delta Attention (vLLM kimi_linear.py / layers/kda.py): heads x
// head_dim for q, k and v, short convolutions of `conv`, a low-rank forget
// gate, and an output gate full-rank or low-rank.
struct KdaPlan {
  Int heads = 0, head_dim = 0, conv = 4;
  bool full_rank_gate = false;
};

// DeepSeek-V4's attention (inference/model.py; vLLM deepseek_v4): queries
// through a q latent, one 512-wide latent per token that is both key and
// value, a grouped low-rank output projection, a sink logit per head; a
// compressor per ratio-4 or ratio-128 layer, and on ratio-4 layers a
// lightning indexer with a compressor of its own.
struct CompressedPlan {
  Int q_heads = 0, head_dim = 0, rope = 0, q_lora = 0, o_groups = 1, o_lora = 0;
  Tokens window = 0;
  int ratio = 0;  // 0, 4 or 128
  Int index_heads = 0, index_dim = 0;
  Tokens index_topk = 0;
};

// Lightning (linear) attention (MiniMax-Text-01 / M1; Ring-linear 2.0):
// keys and values for every query head, an output gate, a norm over
// heads x head_dim, and a heads x head_dim x head_dim state. Module names
// as the checkpoint spells them (MiniMax's by default).
struct LightningPlan {
  Int heads = 0, head_dim = 0;
  bool qk_norm = false;  // a q and a k norm of head_dim (Ring: use_qk_norm)
  bool qkv_bias = false, out_bias = false;
  const char* qkv = "qkv_proj";
  const char* gate = "output_gate";
  const char* out = "out_proj";
  const char* norm = "norm";
};

struct GdnPlan {
  Int key_heads = 0, value_heads = 0, key_dim = 0, value_dim = 0, conv = 4;
  int ssm_bits = 0;
};

class ModelBuilder {
 public:
  ModelBuilder(Int hidden, ModuleNames names) : hidden_(hidden), names_(std::move(names)) {}

  // Attention with its KV inventory entry.
  void Attention(int layer, const AttnPlan& a);
  // A layer that keeps nothing (added only when the layer has no entry).
  void NoOp(int layer);
  // DeciLM's linear replacement of attention or of the MLP (hidden x hidden).
  void LinearReplacement(int layer, ParamRole role, const std::string& what);
  void DenseMlp(int layer, Int inter, bool gated, bool bias);
  void Moe(int layer, const MoePlan& m);
  void Mamba1(int layer, const Mamba1Plan& m);
  void Mamba2(int layer, const Mamba2Plan& m);
  void PlamoMamba(int layer, const PlamoMambaPlan& m);
  void GatedDeltaNet(int layer, const GdnPlan& g);
  void Kda(int layer, const KdaPlan& k);
  void CompressedAttention(int layer, const CompressedPlan& a);
  // Lightning attention: a heads x head_dim x head_dim state.
  void Lightning(int layer, const LightningPlan& l);
  // LFM2 short convolution over `width` channels with a kernel of `kernel`.
  void ShortConv(int layer, Int width, Int kernel, bool bias);
  // `count` norms of `width` parameters (twice that with a bias).
  void Norms(int layer, Int count, Int width, bool bias = false);

  // Model-level tensors.
  void Embedding(Int vocab, Int width);
  void LmHead(Int vocab, Int width);
  void FinalNorm(Int width, bool bias = false);
  // Any other tensor: a matrix (linear) or a vector of `elements`.
  void Matrix(ParamRole role, const std::string& name, Int rows, Int cols, Int copies = 1);
  // The group just added projects `heads` K or V heads (WeightGroup::kv_heads).
  void MarkKvHeads(Int heads);
  // The last tensor holds `elements` of `groups` Mamba-2 B/C groups.
  void MarkStateGroups(Int groups, Int elements);
  void Vector(ParamRole role, const std::string& name, Int elements);
  // A vector the checkpoint keeps in fp32 whatever its dtype and
  // quantization (DeepSeek-V4's hyper-connection mixers, sinks, biases).
  void Fp32Vector(ParamRole role, const std::string& name, Int elements);
  // An embedding-like table of rows x cols only the batch's rows are read
  // from (WeightGroup::gathered), counted under `role`.
  void GatheredTable(ParamRole role, const std::string& name, Int rows, Int cols);

  // Everything added after BeginMtp() is counted as MTP and adds no
  // inventory entry; after BeginTower(role) as vision or audio.
  void BeginMtp() {
    override_ = ParamRole::kMtp;
    inventory_ = false;
  }
  void BeginTower(ParamRole role) {
    override_ = role;
    inventory_ = false;
  }
  void EndOverride() {
    override_.reset();
    inventory_ = true;
  }

  // Attention whose weights another call built (a shared block run again):
  // its inventory entry alone.
  void AttentionEntry(int layer, const AttnPlan& a);
  // Weights added from now on are applied `uses` times a forward pass
  // (WeightGroup::uses); 1 again to end.
  void SetUses(Int uses) { uses_ = uses; }

  void SetNames(ModuleNames names) { names_ = std::move(names); }
  void SetHidden(Int hidden) { hidden_ = hidden; }
  Int hidden() const { return hidden_; }
  const ModuleNames& names() const { return names_; }
  std::string LayerName(int layer) const { return names_.layers + std::to_string(layer) + "."; }

  // Fills layers (adding no-op entries for layers without one), weights,
  // params and moe of `shape`.
  void Finish(int decoder_layers, ModelShape* shape);

  // The first weight at which the parameter count went above
  // kMaxModelParams, or empty: a config whose sizes multiply past any real
  // model (and past 64 bits) is refused rather than counted wrongly.
  const std::string& too_large_at() const { return too_large_at_; }

 private:
  void Add(ParamRole role, const std::string& name, Int rows, Int cols, Int copies, bool linear,
           Int active_copies = -1, bool fp32 = false);
  void Entry(const LayerShape& entry);

  Int uses_ = 1;
  bool weights_on_ = true;
  Int hidden_;
  ModuleNames names_;
  std::optional<ParamRole> override_;
  bool inventory_ = true;
  std::vector<LayerShape> layers_;
  std::vector<WeightGroup> weights_;
  MoeShape moe_;
  Int dense_mlps_ = 0;
  Int total_params_ = 0;
  std::string too_large_at_;
};

// More parameters than this (10^15, ~500x the largest published model) is
// not a model: docs/models.md#bounds.
inline constexpr Int kMaxModelParams = 1'000'000'000'000'000;

}  // namespace kvbill::model_config

#endif  // KVBILL_SRC_MODEL_MODEL_BUILDER_H_
