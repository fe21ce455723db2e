#include "model/model_builder.h"

#include <algorithm>

#include "kvbill/model/weight_bytes.h"

namespace kvbill::model_config {

void ModelBuilder::Add(ParamRole role, const std::string& name, Int rows, Int cols, Int copies,
                       bool linear, Int active_copies, bool fp32) {
  if (!weights_on_ || rows <= 0 || cols <= 0 || copies <= 0 || !too_large_at_.empty()) return;
  Int n = 0;
  if (__builtin_mul_overflow(rows, cols, &n) || __builtin_mul_overflow(n, copies, &n) ||
      __builtin_add_overflow(total_params_, n, &total_params_) || total_params_ > kMaxModelParams) {
    too_large_at_ = name;
    return;
  }
  WeightGroup g;
  g.name = name;
  g.role = override_ ? *override_ : role;
  g.module_role = role;
  g.rows = rows;
  g.cols = cols;
  g.copies = copies;
  g.active_copies = active_copies < 0 ? copies : active_copies;
  g.linear = linear;
  g.fp32 = fp32;
  g.uses = uses_;
  weights_.push_back(std::move(g));
}

void ModelBuilder::MarkKvHeads(Int heads) {
  if (!weights_.empty() && weights_on_ && too_large_at_.empty()) weights_.back().kv_heads = heads;
}

void ModelBuilder::MarkStateGroups(Int groups, Int elements) {
  if (!weights_.empty() && weights_on_ && too_large_at_.empty()) {
    weights_.back().state_groups = groups;
    weights_.back().group_elements = elements;
  }
}

void ModelBuilder::Entry(const LayerShape& entry) {
  if (inventory_) layers_.push_back(entry);
}

void ModelBuilder::Matrix(ParamRole role, const std::string& name, Int rows, Int cols, Int copies) {
  Add(role, name, rows, cols, copies, true);
}

void ModelBuilder::Vector(ParamRole role, const std::string& name, Int elements) {
  Add(role, name, 1, elements, 1, false);
}

void ModelBuilder::Fp32Vector(ParamRole role, const std::string& name, Int elements) {
  Add(role, name, 1, elements, 1, false, -1, true);
}

void ModelBuilder::CompressedAttention(int layer, const CompressedPlan& a) {
  const std::string p = LayerName(layer) + names_.attn + ".";
  const Int h = hidden_, hd = a.head_dim, heads = a.q_heads;
  Matrix(ParamRole::kAttention, p + "wq_a", a.q_lora, h);
  Vector(ParamRole::kAttention, p + "q_norm", a.q_lora);
  Matrix(ParamRole::kAttention, p + "wq_b", heads * hd, a.q_lora);
  Matrix(ParamRole::kAttention, p + "wkv", hd, h);
  Vector(ParamRole::kAttention, p + "kv_norm", hd);
  // Grouped low-rank output: each of o_groups maps its heads' outputs
  // (heads x hd / o_groups) to o_lora; wo_b maps the groups to hidden.
  Matrix(ParamRole::kAttention, p + "wo_a", a.o_groups * a.o_lora, heads * hd / a.o_groups);
  Matrix(ParamRole::kAttention, p + "wo_b", h, a.o_groups * a.o_lora);
  Fp32Vector(ParamRole::kAttention, p + "attn_sink", heads);
  // A compressor over `width`: learned position biases (fp32), its kv and
  // gate projections (kept in bf16 by the checkpoint) and a norm. Ratio 4
  // overlaps two windows, so its projections are twice as wide.
  const auto compressor = [&](const std::string& at, Int ratio, Int width) {
    const Int coff = ratio == 4 ? 2 : 1;
    Fp32Vector(ParamRole::kAttention, at + "ape", ratio * coff * width);
    Add(ParamRole::kAttention, at + "wkv", coff * width, h, 1, false);
    Add(ParamRole::kAttention, at + "wgate", coff * width, h, 1, false);
    Vector(ParamRole::kAttention, at + "norm", width);
    // Per sequence: kv and score states of coff x ratio rows of coff x width.
    return 2 * (coff * ratio) * (coff * width);
  };
  LayerShape e;
  e.kind = LayerKind::kCompressedLatent;
  e.index = layer;
  e.query_heads = heads;
  e.qk_head_dim = hd;
  e.v_head_dim = hd;
  e.latent_dim = hd;
  e.rope_dim = a.rope;
  e.window = a.window;
  e.compress_ratio = a.ratio;
  e.output_groups = a.o_groups;
  e.attention_sinks = true;
  if (a.ratio > 0) {
    e.recurrent_state_elements = compressor(p + "compressor.", a.ratio, hd);
    e.recurrent_state_bits = 32;
  }
  if (a.ratio == 4) {
    const std::string ip = p + "indexer.";
    Matrix(ParamRole::kAttention, ip + "wq_b", a.index_heads * a.index_dim, a.q_lora);
    Add(ParamRole::kAttention, ip + "weights_proj", a.index_heads, h, 1, false);
    e.recurrent_state_elements += compressor(ip + "compressor.", 4, a.index_dim);
    e.indexer_dim = a.index_dim;
    e.indexer_heads = a.index_heads;
    e.sparse_topk = a.index_topk;
  }
  Entry(e);
}

void ModelBuilder::Attention(int layer, const AttnPlan& a) {
  const std::string p = LayerName(layer) + names_.attn + ".";
  const Int h = hidden_;
  LayerShape e;
  e.index = layer;
  e.query_heads = a.q_heads;
  if (a.kind == AttnKind::kLatent || a.kind == AttnKind::kSparseLatent) {
    const Int q_dim = a.q_heads * (a.nope + a.rope);
    if (a.q_lora > 0) {
      Matrix(ParamRole::kAttention, p + "q_a_proj", a.q_lora, h);
      Vector(ParamRole::kAttention, p + "q_a_layernorm", a.q_lora);
      Matrix(ParamRole::kAttention, p + "q_b_proj", q_dim, a.q_lora);
    } else {
      Matrix(ParamRole::kAttention, p + "q_proj", q_dim, h);
    }
    Matrix(ParamRole::kAttention, p + "kv_a_proj_with_mqa", a.kv_lora + a.rope, h);
    Vector(ParamRole::kAttention, p + "kv_a_layernorm", a.kv_lora);
    Matrix(ParamRole::kAttention, p + "kv_b_proj", a.q_heads * (a.nope + a.v_dim), a.kv_lora);
    Matrix(ParamRole::kAttention, p + "o_proj", h, a.q_heads * a.v_dim);
    // A sigmoid gate on the heads' output (Kimi-K3's mla_use_output_gate).
    if (a.output_gate) Matrix(ParamRole::kAttention, p + "g_proj", a.q_heads * a.v_dim, h);
    if (a.cache_full) {
      e.kind = LayerKind::kFullAttention;
      e.kv_heads = a.q_heads;
      e.qk_head_dim = a.nope + a.rope;
      e.v_head_dim = a.nope + a.rope;
      Entry(e);
      return;
    }
    e.kind = LayerKind::kLatentAttention;
    e.qk_head_dim = a.nope + a.rope;
    e.v_head_dim = a.v_dim;
    e.latent_dim = a.kv_lora + a.rope;
    e.rope_dim = a.rope;
    if (a.kind == AttnKind::kSparseLatent) {
      // The lightning indexer: its own queries (from the q latent), one key
      // per token, a key norm (LayerNorm) and per-head weights.
      const std::string ip = p + "indexer.";
      Matrix(ParamRole::kAttention, ip + "wq_b", a.index_heads * a.index_dim,
             a.q_lora > 0 ? a.q_lora : h);
      Matrix(ParamRole::kAttention, ip + "wk", a.index_dim, h);
      Vector(ParamRole::kAttention, ip + "k_norm", 2 * a.index_dim);
      Matrix(ParamRole::kAttention, ip + "weights_proj", a.index_heads, h);
      e.kind = LayerKind::kSparseLatentAttention;
      e.indexer_dim = a.index_dim;
      e.indexer_heads = a.index_heads;
    }
    e.sparse_topk = a.sparse_topk;
    Entry(e);
    return;
  }
  const Int q_out = a.q_heads * a.qk_dim * (a.output_gate ? 2 : 1);
  const Int k_out = a.kv_heads * a.qk_dim;
  const Int v_out = a.kv_heads * a.v_dim;
  const Int o_in = a.q_heads * (a.v_dim > 0 ? a.v_dim : a.qk_dim);
  if (a.q_lora > 0) {
    // Step 3 (vLLM step3_text.py): one projection of hidden into the query
    // rank, K and V (a ReplicatedLinear), a norm over the rank, then the
    // rank into the heads.
    Matrix(ParamRole::kAttention, p + "qkv_proj", a.q_lora + k_out + v_out, h);
    Vector(ParamRole::kAttention, p + "inter_norm", a.q_lora);
    Matrix(ParamRole::kAttention, p + "wq", q_out, a.q_lora);
    e.query_rank = a.q_lora;
  } else {
    Matrix(ParamRole::kAttention, p + "q_proj", q_out, h);
    Matrix(ParamRole::kAttention, p + "k_proj", k_out, h);
    MarkKvHeads(a.kv_heads);
    Matrix(ParamRole::kAttention, p + "v_proj", v_out, h);
    MarkKvHeads(a.kv_heads);
  }
  Matrix(ParamRole::kAttention, p + "o_proj", h, o_in);
  if (a.qkv_bias) Vector(ParamRole::kAttention, p + "qkv_bias", q_out + k_out + v_out);
  if (a.o_bias) Vector(ParamRole::kAttention, p + "o_proj.bias", h);
  if (a.q_norm > 0) Vector(ParamRole::kAttention, p + "q_norm", a.q_norm);
  if (a.k_norm > 0) Vector(ParamRole::kAttention, p + "k_norm", a.k_norm);
  if (a.sinks) Vector(ParamRole::kAttention, p + "sinks", a.q_heads);
  if (a.head_gate) Matrix(ParamRole::kAttention, p + "g_proj", a.q_heads, h);
  if (a.index_dim > 0) {
    // A block-sparse indexer beside the attention: index_heads query heads
    // and one key head, each with a per-head norm (MiniMax-M3).
    Matrix(ParamRole::kAttention, p + "index_q_proj", a.index_heads * a.index_dim, h);
    Matrix(ParamRole::kAttention, p + "index_k_proj", a.index_dim, h);
    Vector(ParamRole::kAttention, p + "index_q_norm", a.index_dim);
    Vector(ParamRole::kAttention, p + "index_k_norm", a.index_dim);
    e.indexer_dim = a.index_dim;
    e.indexer_bits = a.index_bits;
    e.indexer_heads = a.index_heads;
    e.sparse_topk = a.sparse_topk;
  }
  switch (a.kind) {
    case AttnKind::kSliding:
      e.kind = LayerKind::kSlidingWindow;
      break;
    case AttnKind::kChunked:
      e.kind = LayerKind::kChunkedAttention;
      break;
    default:
      e.kind = LayerKind::kFullAttention;
      break;
  }
  e.qk_head_dim = a.qk_dim;
  e.v_head_dim = a.v_dim;
  e.kv_heads = a.kv_heads;
  e.window = a.window;
  e.attention_sinks = a.sinks;
  e.kv_source = a.kv_source;
  e.input_dim = a.input_dim;
  Entry(e);
}

void ModelBuilder::AttentionEntry(int layer, const AttnPlan& a) {
  weights_on_ = false;
  Attention(layer, a);
  weights_on_ = true;
}

void ModelBuilder::NoOp(int layer) {
  LayerShape e;
  e.kind = LayerKind::kNoOp;
  e.index = layer;
  Entry(e);
}

void ModelBuilder::LinearReplacement(int layer, ParamRole role, const std::string& what) {
  Matrix(role, LayerName(layer) + what + ".linear", hidden_, hidden_);
}

void ModelBuilder::DenseMlp(int layer, Int inter, bool gated, bool bias) {
  const std::string p = LayerName(layer) + names_.mlp + ".";
  if (gated) Matrix(ParamRole::kDenseMlp, p + names_.gate, inter, hidden_);
  Matrix(ParamRole::kDenseMlp, p + names_.up, inter, hidden_);
  Matrix(ParamRole::kDenseMlp, p + names_.down, hidden_, inter);
  if (bias) Vector(ParamRole::kDenseMlp, p + "bias", (gated ? 2 : 1) * inter + hidden_);
  if (inventory_) ++dense_mlps_;
}

void ModelBuilder::Moe(int layer, const MoePlan& m) {
  // An empty MoE block name puts the experts and router in the layer itself.
  const std::string p = LayerName(layer) + (names_.moe.empty() ? "" : names_.moe + ".");
  const std::string e = p + names_.experts + ".0.";
  const Int in = m.in_dim > 0 ? m.in_dim : hidden_;
  const Int active = std::min(m.top_k, m.experts);
  if (m.gated)
    Add(ParamRole::kRoutedExperts, e + names_.gate, m.inter, in, m.experts, true, active);
  Add(ParamRole::kRoutedExperts, e + names_.up, m.inter, in, m.experts, true, active);
  Add(ParamRole::kRoutedExperts, e + names_.down, in, m.inter, m.experts, true, active);
  if (m.expert_bias) {
    Add(ParamRole::kRoutedExperts, e + "bias", 1, (m.gated ? 2 : 1) * m.inter + in, m.experts,
        false, active);
  }
  if (m.in_dim > 0 && m.in_dim != hidden_) {
    // Projections into and out of the experts' latent width.
    if (m.kimi_latent) {
      Add(ParamRole::kSharedExperts, p + "routed_expert_down_proj", m.in_dim, hidden_, 1, false);
      Add(ParamRole::kSharedExperts, p + "routed_expert_up_proj", hidden_, m.in_dim, 1, false);
    } else {
      Matrix(ParamRole::kSharedExperts, p + "fc1_latent_proj", m.in_dim, hidden_);
      Matrix(ParamRole::kSharedExperts, p + "fc2_latent_proj", hidden_, m.in_dim);
    }
  }
  // The router scores the zero-computation experts too.
  const Int scored = m.experts + m.zero_experts;
  Matrix(ParamRole::kRouter, p + names_.router, scored, hidden_);
  if (m.router_bias) Vector(ParamRole::kRouter, p + names_.router + ".bias", scored);
  if (m.score_bias)
    Vector(ParamRole::kRouter, p + names_.router + ".e_score_correction_bias", scored);
  if (m.shared_inter > 0) {
    const std::string s = p + names_.shared + ".";
    if (m.shared_gated) Matrix(ParamRole::kSharedExperts, s + names_.gate, m.shared_inter, hidden_);
    Matrix(ParamRole::kSharedExperts, s + names_.up, m.shared_inter, hidden_);
    Matrix(ParamRole::kSharedExperts, s + names_.down, hidden_, m.shared_inter);
    if (m.shared_gate) Matrix(ParamRole::kRouter, p + "shared_expert_gate", 1, hidden_);
  }
  if (inventory_) {
    moe_.layers += 1;
    moe_.experts = std::max(moe_.experts, m.experts);
    moe_.experts_per_token = std::max(moe_.experts_per_token, m.top_k);
    moe_.zero_experts = std::max(moe_.zero_experts, m.zero_experts);
    moe_.routed_top_k = std::max(moe_.routed_top_k, m.routed_top_k > 0 ? m.routed_top_k : m.top_k);
    if (moe_.params_per_expert == 0) {
      moe_.params_per_expert =
          (m.gated ? 3 : 2) * in * m.inter + (m.expert_bias ? (m.gated ? 2 : 1) * m.inter + in : 0);
    }
  }
}

void ModelBuilder::Mamba1(int layer, const Mamba1Plan& m) {
  const std::string p = LayerName(layer) + names_.mixer + ".";
  const Int di = m.d_inner, ds = m.d_state, dc = m.d_conv, dr = m.dt_rank;
  Matrix(ParamRole::kLinearMixer, p + "in_proj", 2 * di, hidden_);
  Vector(ParamRole::kLinearMixer, p + "conv1d", di * dc + (m.conv_bias ? di : 0));
  Matrix(ParamRole::kLinearMixer, p + "x_proj", dr + 2 * ds, di);
  Matrix(ParamRole::kLinearMixer, p + "dt_proj", di, dr);
  Vector(ParamRole::kLinearMixer, p + "dt_proj.bias", di);
  Vector(ParamRole::kLinearMixer, p + "A_log_D", di * ds + di);
  Matrix(ParamRole::kLinearMixer, p + "out_proj", hidden_, di);
  if (m.proj_bias) Vector(ParamRole::kLinearMixer, p + "proj_bias", 2 * di + hidden_);
  if (m.dt_norms) Vector(ParamRole::kLinearMixer, p + "dt_b_c_norms", dr + 2 * ds);
  LayerShape e;
  e.kind = LayerKind::kMambaState;
  e.index = layer;
  // vLLM's Mamba-1 state: the last d_conv - 1 inputs of the convolution and
  // a d_inner x d_state SSM state.
  e.conv_state_elements = (dc - 1) * di;
  e.recurrent_state_elements = di * ds;
  Entry(e);
}

void ModelBuilder::Mamba2(int layer, const Mamba2Plan& m) {
  const std::string p = LayerName(layer) + names_.mixer + ".";
  const Int di = m.d_inner, conv_dim = di + 2 * m.groups * m.d_state;
  const Int in_out = 2 * di + 2 * m.groups * m.d_state + m.heads;
  const Int group_channels = 2 * m.groups * m.d_state;  // B and C
  Matrix(ParamRole::kLinearMixer, p + "in_proj", in_out, hidden_);
  MarkStateGroups(m.groups, group_channels * hidden_);
  Vector(ParamRole::kLinearMixer, p + "conv1d", conv_dim * m.d_conv + (m.conv_bias ? conv_dim : 0));
  MarkStateGroups(m.groups, group_channels * (m.d_conv + (m.conv_bias ? 1 : 0)));
  Vector(ParamRole::kLinearMixer, p + "dt_bias_A_log_D", 3 * m.heads);
  if (m.gated_norm) Vector(ParamRole::kLinearMixer, p + "norm", di);
  Matrix(ParamRole::kLinearMixer, p + "out_proj", hidden_, di);
  if (m.proj_bias) Vector(ParamRole::kLinearMixer, p + "proj_bias", in_out + hidden_);
  LayerShape e;
  e.kind = LayerKind::kMambaState;
  e.index = layer;
  // vLLM's Mamba-2 state: (d_conv - 1) x conv_dim of convolution inputs and
  // heads x head_dim x d_state of SSM state.
  e.conv_state_elements = (m.d_conv - 1) * conv_dim;
  e.recurrent_state_elements = m.heads * m.head_dim * m.d_state;
  e.recurrent_state_bits = m.ssm_bits;
  e.state_groups = m.groups;
  e.group_conv_state_elements = (m.d_conv - 1) * 2 * m.d_state;
  Entry(e);
}

void ModelBuilder::PlamoMamba(int layer, const PlamoMambaPlan& m) {
  const std::string p = LayerName(layer) + names_.mixer + ".";
  const Int di = m.heads * m.head_dim;
  Matrix(ParamRole::kLinearMixer, p + "in_proj", 2 * di, hidden_);
  Vector(ParamRole::kLinearMixer, p + "conv1d", di * m.d_conv);
  Matrix(ParamRole::kLinearMixer, p + "bcdt_proj", m.dt_rank + 2 * m.d_state, di);
  Matrix(ParamRole::kLinearMixer, p + "dt_proj", m.heads, m.dt_rank);
  Fp32Vector(ParamRole::kLinearMixer, p + "A", m.heads);  // float32 in vLLM
  Vector(ParamRole::kLinearMixer, p + "D_dt_bias", 2 * m.heads);
  Vector(ParamRole::kLinearMixer, p + "dt_B_C_norms", m.dt_rank + 2 * m.d_state);
  Matrix(ParamRole::kLinearMixer, p + "out_proj", hidden_, di);
  LayerShape e;
  e.kind = LayerKind::kMambaState;
  e.index = layer;
  // vLLM's Mamba-2 state with no groups: (d_conv - 1) x channels of
  // convolution inputs and heads x head_dim x d_state of SSM state.
  e.conv_state_elements = (m.d_conv - 1) * di;
  e.recurrent_state_elements = m.heads * m.head_dim * m.d_state;
  Entry(e);
}

void ModelBuilder::GatedDeltaNet(int layer, const GdnPlan& g) {
  const std::string p = LayerName(layer) + "linear_attn.";
  const Int key = g.key_heads * g.key_dim, value = g.value_heads * g.value_dim;
  Matrix(ParamRole::kLinearMixer, p + "in_proj_qkvz", 2 * key + 2 * value, hidden_);
  Matrix(ParamRole::kLinearMixer, p + "in_proj_ba", 2 * g.value_heads, hidden_);
  Vector(ParamRole::kLinearMixer, p + "conv1d", (2 * key + value) * g.conv);
  Vector(ParamRole::kLinearMixer, p + "dt_bias_A_log", 2 * g.value_heads);
  Vector(ParamRole::kLinearMixer, p + "norm", g.value_dim);
  Matrix(ParamRole::kLinearMixer, p + "out_proj", hidden_, value);
  LayerShape e;
  e.kind = LayerKind::kLinearState;
  e.index = layer;
  // vLLM's gated DeltaNet state: conv inputs over the q, k, v channels and a
  // key_dim x value_dim matrix per value head.
  e.conv_state_elements = (g.conv - 1) * (2 * key + value);
  e.recurrent_state_elements = g.value_heads * g.key_dim * g.value_dim;
  e.recurrent_state_bits = g.ssm_bits;
  Entry(e);
}

void ModelBuilder::Kda(int layer, const KdaPlan& k) {
  const std::string p = LayerName(layer) + names_.attn + ".";
  const Int h = hidden_, d = k.head_dim, proj = k.heads * k.head_dim;
  Matrix(ParamRole::kLinearMixer, p + "q_proj", proj, h);
  Matrix(ParamRole::kLinearMixer, p + "k_proj", proj, h);
  Matrix(ParamRole::kLinearMixer, p + "v_proj", proj, h);
  Vector(ParamRole::kLinearMixer, p + "qkv_conv1d", 3 * proj * k.conv);  // depthwise, no bias
  Vector(ParamRole::kLinearMixer, p + "A_log", k.heads);
  Vector(ParamRole::kLinearMixer, p + "dt_bias", proj);
  Matrix(ParamRole::kLinearMixer, p + "f_a_proj", d, h);  // the forget gate, low-rank
  Matrix(ParamRole::kLinearMixer, p + "f_b_proj", proj, d);
  Matrix(ParamRole::kLinearMixer, p + "b_proj", k.heads, h);  // beta
  if (k.full_rank_gate) {
    Matrix(ParamRole::kLinearMixer, p + "g_proj", proj, h);
  } else {
    Matrix(ParamRole::kLinearMixer, p + "g_a_proj", d, h);
    Matrix(ParamRole::kLinearMixer, p + "g_b_proj", proj, d);
  }
  Vector(ParamRole::kLinearMixer, p + "o_norm", d);
  Matrix(ParamRole::kLinearMixer, p + "o_proj", h, proj);
  LayerShape e;
  e.kind = LayerKind::kLinearState;
  e.index = layer;
  // vLLM's kda_state_shape: the q, k and v convolution windows (kernel - 1
  // inputs each) in the model's state format, and a head_dim x head_dim
  // matrix per head always in fp32 (kda_state_dtype ignores the SSM cache
  // dtype).
  e.conv_state_elements = 3 * proj * (k.conv - 1);
  e.recurrent_state_elements = k.heads * d * d;
  e.recurrent_state_bits = 32;
  Entry(e);
}

void ModelBuilder::Lightning(int layer, const LightningPlan& l) {
  const std::string p = LayerName(layer) + names_.attn + ".";
  const Int inner = l.heads * l.head_dim;
  Matrix(ParamRole::kLinearMixer, p + l.qkv, 3 * inner, hidden_);
  if (l.qkv_bias) Vector(ParamRole::kLinearMixer, p + l.qkv + ".bias", 3 * inner);
  if (l.qk_norm) Vector(ParamRole::kLinearMixer, p + "qk_norms", 2 * l.head_dim);
  Matrix(ParamRole::kLinearMixer, p + l.gate, inner, hidden_);
  Matrix(ParamRole::kLinearMixer, p + l.out, hidden_, inner);
  if (l.out_bias) Vector(ParamRole::kLinearMixer, p + l.out + ".bias", hidden_);
  Vector(ParamRole::kLinearMixer, p + l.norm, inner);
  LayerShape e;
  e.kind = LayerKind::kLinearState;
  e.index = layer;
  e.recurrent_state_elements = l.heads * l.head_dim * l.head_dim;
  Entry(e);
}

void ModelBuilder::ShortConv(int layer, Int width, Int kernel, bool bias) {
  const std::string p = LayerName(layer) + "conv.";
  Matrix(ParamRole::kLinearMixer, p + "in_proj", 3 * width, hidden_);
  Vector(ParamRole::kLinearMixer, p + "conv", width * kernel + (bias ? width : 0));
  Matrix(ParamRole::kLinearMixer, p + "out_proj", hidden_, width);
  if (bias) Vector(ParamRole::kLinearMixer, p + "proj_bias", 3 * width + hidden_);
  LayerShape e;
  e.kind = LayerKind::kConvState;
  e.index = layer;
  // vLLM's short-conv state: the last kernel - 1 inputs of each channel.
  e.conv_state_elements = (kernel - 1) * width;
  Entry(e);
}

void ModelBuilder::Norms(int layer, Int count, Int width, bool bias) {
  if (count <= 0) return;
  Add(ParamRole::kNorm, LayerName(layer) + "norm", 1, count * width * (bias ? 2 : 1), 1, false);
}

void ModelBuilder::GatheredTable(ParamRole role, const std::string& name, Int rows, Int cols) {
  const std::size_t before = weights_.size();
  Add(role, name, rows, cols, 1, false);
  if (weights_.size() > before) weights_.back().gathered = true;
}

void ModelBuilder::Embedding(Int vocab, Int width) {
  Add(ParamRole::kEmbedding, "model.embed_tokens", vocab, width, 1, false);
}

void ModelBuilder::LmHead(Int vocab, Int width) {
  Add(ParamRole::kLmHead, "lm_head", vocab, width, 1, true);
}

void ModelBuilder::FinalNorm(Int width, bool bias) {
  Add(ParamRole::kNorm, "model.norm", 1, width * (bias ? 2 : 1), 1, false);
}

void ModelBuilder::Finish(int decoder_layers, ModelShape* shape) {
  // Every decoder layer appears in the inventory: one that keeps nothing is
  // a no-op entry.
  std::vector<bool> seen(static_cast<std::size_t>(decoder_layers), false);
  for (const LayerShape& l : layers_) {
    if (l.index >= 0 && l.index < decoder_layers) seen[static_cast<std::size_t>(l.index)] = true;
  }
  for (int i = 0; i < decoder_layers; ++i) {
    if (!seen[static_cast<std::size_t>(i)]) {
      LayerShape e;
      e.kind = LayerKind::kNoOp;
      e.index = i;
      layers_.push_back(e);
    }
  }
  std::stable_sort(layers_.begin(), layers_.end(),
                   [](const LayerShape& a, const LayerShape& b) { return a.index < b.index; });
  shape->layers = std::move(layers_);
  shape->weights = std::move(weights_);
  shape->params = ParamsByRole(shape->weights);
  shape->moe = moe_;
  shape->dense_mlps = dense_mlps_;
}

}  // namespace kvbill::model_config
