// Family rules. Each rule names the modeling code it follows; the
// parameter formulas of the blocks are in model_builder.cc.
#include "model/families.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "kvbill/util/names.h"

namespace kvbill::model_config {
namespace {

enum class Family {
  kGeneric,        // Llama-style decoder: attention + MLP or MoE per layer
  kFalcon,         // fused QKV, LayerNorms with bias, ungated MLP
  kBloom,          // ALiBi, LayerNorms with bias, ungated MLP, embedding LayerNorm
  kJamba,          // Mamba-1 + attention every attn_layer_period
  kNemotronH,      // hybrid_override_pattern: M Mamba-2, * attention, - MLP, E MoE
  kNemotronNas,    // DeciLM block_configs
  kGraniteHybrid,  // layer_types mamba / attention, Mamba-2
  kFalconH1,       // attention and Mamba-2 side by side in every layer
  kLfm2,           // short convolutions + attention
  kGatedDeltaNet,  // Qwen3-Next / Qwen3.5: gated DeltaNet + gated attention
  kLightning,      // MiniMax-Text-01 / M1: lightning + softmax attention
  kBailingLinear,  // Ring-linear 2.0: lightning attention but every layer_group_size-th layer
  kMimoV2,         // MiMo-V2-Flash: hybrid_layer_pattern, separate SWA heads
  kHunyuan,        // Hunyuan MoE: per-layer lists, mixed MLP + MoE
  kGemma4,         // Gemma 4: wider full-attention heads, keys as values, MLP beside MoE
  kGemma3n,        // Gemma 3n: AltUp streams, LAuReL, per-layer inputs, KV-shared layers
  kOuro,           // Ouro: the layers run total_ut_steps times, a KV cache per loop
  kZamba2,         // Zamba2: Mamba-2 layers, shared transformer blocks at hybrid layers
  kKimiLinear,     // Kimi Linear / Kimi-K3: Kimi Delta Attention + MLA
  kDeepseekV4,     // DeepSeek-V4: windows + compressed latents, hyper-connections
  kMamba,          // Mamba-1 / Mamba-2 in every layer, no attention
  kLongcat,        // LongCat-Flash: two MLA blocks and a shortcut MoE a layer
  kPlamo2,         // PLaMo 2: Mamba and sliding-window attention in turn
};

enum class QkNorm {
  kNone,
  kPerHead,        // a norm over head_dim for q and one for k (Qwen3, Gemma 3)
  kPerHeadIfFlag,  // kPerHead when use_qk_norm is true (GLM-4.5, Hunyuan)
  kFullWidth,      // over all heads: heads x head_dim and kv_heads x head_dim (MiniMax-M2)
};

struct Style {
  const char* model_type;
  Family family;
  const char* modeling;  // the modeling code the rule follows
  QkNorm qk_norm = QkNorm::kNone;
  int norms_per_layer = 2;
  bool qkv_bias_always = false;  // Qwen2: q, k, v biases whatever attention_bias says
  bool o_bias_with_qkv = true;   // attention_bias also puts a bias on the output projection
  bool gated_mlp = true;
  bool layer_norm_bias = false;
  bool mtp_has_embeddings = false;  // DeepSeek-style MTP modules carry embedding and head copies
  bool mlp_bias_always = false;     // the MLP's projections are biased whatever mlp_bias says
  bool o_bias_always = false;       // the output projection is biased whatever attention_bias says
};

// clang-format off
const Style kStyles[] = {
  {"afmoe", Family::kGeneric, "vLLM afmoe.py (Trinity: q/k norms, a sigmoid output gate, four norms a layer, MoE after num_dense_layers)", QkNorm::kPerHead, 4},
  {"apertus", Family::kGeneric, "vLLM apertus.py (an ungated xIELU MLP, q and k norms)", QkNorm::kPerHead, 2, false, true, false},
  {"arcee", Family::kGeneric, "vLLM arcee.py (an ungated ReLU-squared MLP)", QkNorm::kNone, 2, false, true, false},
  {"arctic", Family::kGeneric, "vLLM arctic.py (MoE every moe_layer_frequency-th layer; with use_residual a gated hidden x hidden residual MLP and its norm beside the experts)"},
  {"bailing_moe", Family::kGeneric, "vLLM bailing_moe.py (fused query_key_value, shared experts of num_shared_experts)", QkNorm::kPerHeadIfFlag},
  {"bailing_moe_linear", Family::kBailingLinear, "SGLang bailing_moe_linear.py (BailingMoeLinearV2ForCausalLM: lightning attention but every layer_group_size-th layer, GQA there; Ling's experts)", QkNorm::kPerHeadIfFlag},
  {"bailing_moe_v2", Family::kGeneric, "vLLM bailing_moe.py (BailingMoeV2ForCausalLM)", QkNorm::kPerHeadIfFlag},
  {"bamba", Family::kGraniteHybrid, "vLLM bamba.py (Mamba-2 layers, attention at attn_layer_indices, a gated MLP of intermediate_size in every layer)"},
  {"bloom", Family::kBloom, "transformers bloom/modeling_bloom.py", QkNorm::kNone, 2, true, true, false, true},
  {"chatglm", Family::kGeneric, "THUDM/chatglm3-6b modeling_chatglm.py (vLLM chatglm.py): multi_query_group_num KV heads of kv_channels, q/k/v biased by add_qkv_bias, dense and MLP by add_bias_linear"},
  {"cohere", Family::kGeneric, "transformers cohere/modeling_cohere.py (one LayerNorm a layer, attention and MLP in parallel)", QkNorm::kFullWidth, 1},
  {"cohere2", Family::kGeneric, "transformers cohere2/modeling_cohere2.py", QkNorm::kNone, 1},
  {"dbrx", Family::kGeneric, "transformers dbrx/modeling_dbrx.py (fused Wqkv, LayerNorms without bias, GLU experts)"},
  {"deepseek_v2", Family::kGeneric, "transformers deepseek_v2/modeling_deepseek_v2.py"},
  {"deepseek_v3", Family::kGeneric, "transformers deepseek_v3/modeling_deepseek_v3.py", QkNorm::kNone, 2, false, true, true, false, true},
  {"muse_glimmer_text", Family::kGeneric, "transformers muse_glimmer/modeling_muse_glimmer.py (a sigmoid output gate of heads x head_dim, four norms a layer); vLLM muse_glimmer.py", QkNorm::kNone, 4},
  {"deepseek_v4", Family::kDeepseekV4, "DeepSeek-V4 inference/model.py; vLLM deepseek_v4.py, deepseek_compressor.py"},
  {"deepseek_v32", Family::kGeneric, "DeepSeek-V3.2 inference/model.py; vLLM deepseek_v2.py (indexer)", QkNorm::kNone, 2, false, true, true, false, true},
  {"dots1", Family::kGeneric, "vLLM dots1.py, transformers dots1 (Qwen3 attention with per-head q and k norms; DeepSeek-V3 MoE with its score-correction bias)", QkNorm::kPerHead},
  {"ernie4_5", Family::kGeneric, "vLLM ernie45.py (Llama layers without an output-projection bias; use_bias not read)"},
  {"ernie4_5_moe", Family::kGeneric, "vLLM ernie45_moe.py, transformers ernie4_5_moe (use_bias on q/k/v and the dense MLPs, never the output projection)", QkNorm::kNone, 2, false, false},
  {"exaone4", Family::kGeneric, "transformers exaone4/modeling_exaone4.py", QkNorm::kPerHead},
  {"exaone_moe", Family::kGeneric, "vLLM exaone_moe.py (EXAONE 4's attention with per-head q and k norms; sparse layers by mlp_layer_types, a shared expert of num_shared_experts x moe_intermediate_size, a score-correction bias)", QkNorm::kPerHead},
  {"falcon", Family::kFalcon, "transformers falcon/modeling_falcon.py", QkNorm::kNone, 2, false, true, false, true},
  {"falcon_mamba", Family::kMamba, "vLLM mamba.py (FalconMambaForCausalLM: Mamba-1 layers; its B, C and dt norms have no weights)"},
  {"falcon_h1", Family::kFalconH1, "transformers falcon_h1/modeling_falcon_h1.py"},
  {"gemma", Family::kGeneric, "transformers gemma/modeling_gemma.py"},
  {"gemma2", Family::kGeneric, "transformers gemma2/modeling_gemma2.py", QkNorm::kNone, 4},
  {"gemma3", Family::kGeneric, "transformers gemma3/modeling_gemma3.py", QkNorm::kPerHead, 4},
  {"gemma3_text", Family::kGeneric, "transformers gemma3/modeling_gemma3.py", QkNorm::kPerHead, 4},
  {"gemma3n", Family::kGemma3n, "vLLM gemma3n.py (Gemma3nDecoderLayer: AltUp, LAuReL, per-layer inputs, KV-shared layers)", QkNorm::kPerHead, 5},
  {"gemma3n_text", Family::kGemma3n, "vLLM gemma3n.py (Gemma3nDecoderLayer: AltUp, LAuReL, per-layer inputs, KV-shared layers)", QkNorm::kPerHead, 5},
  {"gemma4", Family::kGemma4, "vLLM gemma4.py (Gemma4DecoderLayer)", QkNorm::kPerHead, 4},
  {"gemma4_text", Family::kGemma4, "vLLM gemma4.py (Gemma4DecoderLayer)", QkNorm::kPerHead, 4},
  {"git", Family::kGeneric, "vLLM grok1.py (Grok-2: its config says model_type git, architectures Grok1ForCausalLM; every layer full attention, four norms, head_dim hidden / heads, MoE in every layer, with residual_moe a gated MLP of intermediate_size beside the experts)", QkNorm::kNone, 4},
  {"glm4", Family::kGeneric, "transformers glm4/modeling_glm4.py (four norms a layer; attention_bias on q, k and v, never the output projection)", QkNorm::kNone, 4, false, false},
  {"glm4v_text", Family::kGeneric, "transformers glm4v/modeling_glm4v.py; vLLM glm4_1v.py (GLM-4.1V's text model is vLLM glm4.py)", QkNorm::kNone, 4, false, false},
  {"glm4v_moe_text", Family::kGeneric, "transformers glm4v_moe/modeling_glm4v_moe.py; vLLM glm4_1v.py (GLM-4.5 layers)", QkNorm::kPerHeadIfFlag, 2, false, false, true, false, true},
  {"glm4_moe", Family::kGeneric, "transformers glm4_moe/modeling_glm4_moe.py", QkNorm::kPerHeadIfFlag, 2, false, false, true, false, true},
  {"glm4_moe_lite", Family::kGeneric, "transformers glm4_moe_lite/modeling_glm4_moe_lite.py", QkNorm::kNone, 2, false, true, true, false, true},
  {"glm_moe_dsa", Family::kGeneric, "transformers glm_moe_dsa/modeling_glm_moe_dsa.py", QkNorm::kNone, 2, false, true, true, false, true},
  {"gpt_bigcode", Family::kGeneric, "transformers gpt_bigcode/modeling_gpt_bigcode.py (learned positions, ungated biased MLP)", QkNorm::kNone, 2, true, true, false, true, false, true, true},
  {"gpt2", Family::kGeneric, "transformers gpt2/modeling_gpt2.py; vLLM gpt2.py (learned positions, biased c_attn / c_proj, ungated biased MLP, tied)", QkNorm::kNone, 2, true, true, false, true, false, true, true},
  {"gpt_neox", Family::kGeneric, "transformers gpt_neox/modeling_gpt_neox.py (ungated biased MLP)", QkNorm::kNone, 2, false, true, false, true, false, true},
  {"gpt_oss", Family::kGeneric, "transformers gpt_oss/modeling_gpt_oss.py"},
  {"gptj", Family::kGeneric, "transformers gptj/modeling_gptj.py; vLLM gpt_j.py (one LayerNorm a layer, unbiased q/k/v/out, ungated biased MLP, biased untied lm_head)", QkNorm::kNone, 1, false, true, false, true, false, true, false},
  {"granite", Family::kGeneric, "transformers granite/modeling_granite.py"},
  {"granitemoe", Family::kGeneric, "transformers granitemoe/modeling_granitemoe.py"},
  {"granitemoehybrid", Family::kGraniteHybrid, "transformers granitemoehybrid/modeling_granitemoehybrid.py"},
  {"grok-1", Family::kGeneric, "vLLM grok1.py (Grok-1 under hpcai-tech's remote Grok1Config: every layer full attention, four norms, head_dim hidden / heads, num_experts experts in every layer)", QkNorm::kNone, 4},
  {"hunyuan", Family::kHunyuan, "Tencent-Hunyuan/Hunyuan-A13B modeling (vLLM hunyuan_v1.py)", QkNorm::kPerHeadIfFlag},
  {"hunyuan_v1_moe", Family::kHunyuan, "transformers hunyuan_v1_moe/modeling_hunyuan_v1_moe.py", QkNorm::kPerHeadIfFlag},
  {"hunyuan_v1_dense", Family::kHunyuan, "transformers hunyuan_v1_dense/modeling_hunyuan_v1_dense.py (vLLM hunyuan_v1.py)", QkNorm::kPerHeadIfFlag},
  {"jamba", Family::kJamba, "transformers jamba/modeling_jamba.py"},
  {"internlm", Family::kGeneric, "vLLM llama.py (InternLM: q, k, v and the output projection biased by \"bias\")"},
  {"jais2", Family::kGeneric, "vLLM jais2.py (an ungated ReLU-squared MLP, LayerNorms with bias)", QkNorm::kNone, 2, false, true, false, true},
  {"kimi_linear", Family::kKimiLinear, "vLLM kimi_linear.py (KimiDecoderLayer: KDA via layers/kda.py, MLA); vLLM kimi_k3/nvidia/model.py (latent MoE, attention residuals)"},
  {"laguna", Family::kGeneric, "vLLM laguna.py (LagunaDecoderLayer: query heads per layer, a per-head output gate); transformers laguna/configuration_laguna.py", QkNorm::kPerHead},
  {"kimi_k2", Family::kGeneric, "transformers deepseek_v3/modeling_deepseek_v3.py (Kimi K2 is DeepseekV3)", QkNorm::kNone, 2, false, true, true, false, true},
  {"longcat_flash", Family::kLongcat, "vLLM longcat_flash.py (two MLA attentions and two dense MLPs a layer, a shortcut MoE whose router also picks zero-computation experts)"},
  {"lfm2", Family::kLfm2, "transformers lfm2/modeling_lfm2.py", QkNorm::kPerHead},
  {"lfm2_moe", Family::kLfm2, "vLLM lfm2_moe.py (LFM2's layers, MoE from num_dense_layers)", QkNorm::kPerHead},
  {"llama", Family::kGeneric, "transformers llama/modeling_llama.py"},
  {"llama4", Family::kGeneric, "transformers llama4/modeling_llama4.py"},
  {"llama4_text", Family::kGeneric, "transformers llama4/modeling_llama4.py"},
  {"mamba", Family::kMamba, "transformers mamba/modeling_mamba.py; vLLM mamba.py (a Mamba-1 mixer and one norm a layer)"},
  {"mamba2", Family::kMamba, "transformers mamba2/modeling_mamba2.py; vLLM mamba2.py (a Mamba-2 mixer and one norm a layer; num_heads are SSM heads)"},
  {"mimo", Family::kGeneric, "XiaomiMiMo/MiMo-7B modeling_mimo.py (Qwen2 + MTP layers)", QkNorm::kNone, 2, true},
  {"mimo_v2_flash", Family::kMimoV2, "transformers mimo_v2_flash/modeling_mimo_v2_flash.py"},
  {"minicpm", Family::kGeneric, "vLLM minicpm.py (Llama-style layers; sparse_config is not read)"},
  {"minicpm3", Family::kGeneric, "vLLM minicpm3.py (MLA projections; full per-head K and V cached, V padded to qk_nope_head_dim + qk_rope_head_dim)"},
  {"minimax", Family::kLightning, "transformers minimax/modeling_minimax.py"},
  {"minimax_m1", Family::kLightning, "MiniMax-AI/MiniMax-M1 modeling_minimax_m1.py"},
  {"minimax_m2", Family::kGeneric, "transformers minimax_m2/modeling_minimax_m2.py", QkNorm::kFullWidth},
  {"minimax_m3", Family::kGeneric, "vLLM minimax_m3/nvidia/model.py (MiniMaxM3DecoderLayer; sparse layers add a block-sparse indexer, common/indexer.py)", QkNorm::kPerHead},
  {"ministral3", Family::kGeneric, "transformers ministral3/modeling_ministral3.py (Mistral 3's text model: Mistral layers, head_dim 128 by default)"},
  {"mistral", Family::kGeneric, "transformers mistral/modeling_mistral.py"},
  {"mixtral", Family::kGeneric, "transformers mixtral/modeling_mixtral.py"},
  {"mpt", Family::kGeneric, "MPT modeling_mpt.py (ALiBi, no biases with no_bias, ungated MLP, tied wte)", QkNorm::kNone, 2, false, true, false},
  {"nemotron-nas", Family::kNemotronNas, "nvidia DeciLM modeling_decilm.py (vLLM nemotron_nas.py)"},
  {"nemotron", Family::kGeneric, "vLLM nemotron.py (an ungated ReLU-squared MLP, LayerNorm1P with bias)", QkNorm::kNone, 2, false, true, false, true},
  {"nemotron_h", Family::kNemotronH, "transformers nemotron_h/modeling_nemotron_h.py", QkNorm::kNone, 1, false, true, false},
  {"olmo2", Family::kGeneric, "vLLM olmo2.py (q and k norms over all heads; norms after attention and after the MLP)", QkNorm::kFullWidth},
  {"olmo3", Family::kGeneric, "vLLM olmo2.py (Olmo3: OLMo 2's layers, sliding layers by layer_types)", QkNorm::kFullWidth},
  {"olmoe", Family::kGeneric, "vLLM olmoe.py (q and k norms over all heads, experts without shared ones)", QkNorm::kFullWidth},
  {"orion", Family::kGeneric, "vLLM orion.py (Llama-style layers with biased LayerNorms)", QkNorm::kNone, 2, false, true, true, true},
  {"opt", Family::kGeneric, "transformers opt/modeling_opt.py; vLLM opt.py (learned positions offset by 2, biased q/k/v/out, ungated biased MLP of ffn_dim, tied)", QkNorm::kNone, 2, true, true, false, true, false, true, true},
  {"ouro", Family::kOuro, "vLLM ouro.py (OuroDecoderLayer: the layers run total_ut_steps times, each loop with its own KV cache; four norms a layer, an early-exit gate)"},
  {"phi", Family::kGeneric, "transformers phi/modeling_phi.py (one LayerNorm, biased q/k/v/dense, ungated biased MLP, biased lm_head)", QkNorm::kNone, 1, true, true, false, true, false, true, true},
  {"phi-msft", Family::kGeneric, "microsoft/phi-2 modeling_phi.py (remote code of the phi-msft configs; the same blocks as transformers phi)", QkNorm::kNone, 1, true, true, false, true, false, true, true},
  {"phi3", Family::kGeneric, "transformers phi3/modeling_phi3.py"},
  {"phi3_v", Family::kGeneric, "vLLM phi3v.py (Phi-3's layers beside its CLIP image tower)"},
  {"phi4mm", Family::kGeneric, "vLLM phi4mm.py (Phi-4-mini's layers beside its image and audio towers; the vision and speech LoRA adapters load only with --enable-lora)"},
  {"phimoe", Family::kGeneric, "transformers phimoe/modeling_phimoe.py", QkNorm::kNone, 2, false, true, true, true},
  {"PanguEmbedded", Family::kGeneric, "openPangu-Embedded modeling_openpangu_dense.py (q, k, v, o biased by \"bias\")"},
  {"qwen", Family::kGeneric, "Qwen/Qwen-7B modeling_qwen.py (c_attn biased, w1 / w2 of intermediate_size / 2)", QkNorm::kNone, 2, true, false},
  {"qwen2", Family::kGeneric, "transformers qwen2/modeling_qwen2.py", QkNorm::kNone, 2, true},
  {"qwen2_moe", Family::kGeneric, "transformers qwen2_moe/modeling_qwen2_moe.py", QkNorm::kNone, 2, true},
  {"qwen2_vl", Family::kGeneric, "transformers qwen2_vl/modeling_qwen2_vl.py", QkNorm::kNone, 2, true},
  {"qwen2_5_vl", Family::kGeneric, "transformers qwen2_5_vl/modeling_qwen2_5_vl.py", QkNorm::kNone, 2, true},
  {"qwen3", Family::kGeneric, "transformers qwen3/modeling_qwen3.py", QkNorm::kPerHead},
  {"qwen3_5_moe_text", Family::kGatedDeltaNet, "transformers qwen3_5_moe/modeling_qwen3_5_moe.py", QkNorm::kPerHead},
  {"qwen3_5_text", Family::kGatedDeltaNet, "transformers qwen3_5/modeling_qwen3_5.py", QkNorm::kPerHead},
  {"qwen3_moe", Family::kGeneric, "transformers qwen3_moe/modeling_qwen3_moe.py", QkNorm::kPerHead},
  {"qwen3_next", Family::kGatedDeltaNet, "transformers qwen3_next/modeling_qwen3_next.py", QkNorm::kPerHead},
  {"qwen3_vl_moe_text", Family::kGeneric, "transformers qwen3_vl_moe/modeling_qwen3_vl_moe.py", QkNorm::kPerHead},
  {"qwen3_vl_text", Family::kGeneric, "transformers qwen3_vl/modeling_qwen3_vl.py", QkNorm::kPerHead},
  {"seed_oss", Family::kGeneric, "vLLM seed_oss.py (q, k and v always biased, the output projection never)", QkNorm::kNone, 2, true, false},
  {"smollm3", Family::kGeneric, "transformers smollm3/modeling_smollm3.py"},
  {"stablelm", Family::kGeneric, "vLLM stablelm.py (LayerNorms with bias; q, k and v biased by use_qkv_bias, the output projection never)", QkNorm::kNone, 2, false, false, true, true},
  {"starcoder2", Family::kGeneric, "transformers starcoder2/modeling_starcoder2.py (use_bias on every projection, ungated MLP)", QkNorm::kNone, 2, false, true, false, true},
  {"plamo2", Family::kPlamo2, "vLLM plamo2.py (Mamba mixers and sliding-window attention in turn: layer i attends when i % mamba_step == mamba_step / 2; four norms a layer; a gated MLP)", QkNorm::kFullWidth, 4},
  {"zamba2", Family::kZamba2, "vLLM zamba2.py (Mamba-2 in every layer; at hybrid layers a shared transformer block over the hidden state and the embeddings, num_mem_blocks of them in turn, with per-layer adapters and KV)"},
  {"step3p5", Family::kGeneric, "vLLM step3p5.py (Step3p5DecoderLayer: sliding layers by layer_types with attention_other_setting's heads, per-head q and k norms, a per-head sigmoid gate g_proj, moe_layers_enum, one shared expert of share_expert_dim, a router bias)", QkNorm::kPerHead},
  {"step3p7", Family::kGeneric, "vLLM step3p7.py (Step3p7ForConditionalGeneration builds its language model from text_config, Step 3.5's layers: the step3p5 rule)", QkNorm::kPerHead},
  {"step3_text", Family::kGeneric, "vLLM step3_text.py (Step3TextDecoderLayer: queries through a share_q_dim rank, one KV head, moe_layers_enum)"},
};
// clang-format on

// vLLM's grok1.py (GrokForCausalLM) serves Grok-1 (hpcai-tech's remote
// config, model_type grok-1) and Grok-2 (whose config says model_type git,
// transformers' GIT class, with architectures Grok1ForCausalLM).
bool IsGrok(const std::string& model_type) { return model_type == "git" || model_type == "grok-1"; }

// Step 3.7 Flash's text model is Step 3.5's (vLLM step3p7.py builds it from
// text_config with the step3p5 model).
bool IsStep3p5(const std::string& model_type) {
  return model_type == "step3p5" || model_type == "step3p7";
}

const Style* FindStyle(const std::string& model_type) {
  for (const Style& s : kStyles) {
    if (model_type == s.model_type) return &s;
  }
  return nullptr;
}

// Keys that tell of layers the generic reading does not understand; an
// unknown model_type carrying one is an error, not a guess. Keys the generic
// rules read are exempt.
constexpr std::array<const char*, 36> kStructureHints = {
    "mamba", "ssm_", "conv_", "linear_", "hybrid", "block_config", "layers_block_type", "global_",
    "kv_shared", "k_eq_v", "cla_", "swa_", "full_attn", "layer_pattern", "cross_layer", "compress",
    "sparse", "index_", "per_layer", "hash_layer",
    // Llama 3.2 Vision: layers that attend to the image
    "cross_attention",
    // RecurrentGemma: RG-LRU and local attention blocks
    "block_types",
    // DBRX, MPT: attention and FFN settings nested
    "attn_config", "ffn_config",
    // ERNIE 4.5 MoE: experts under keys of its own
    "moe_num_experts", "moe_layer_start_index",
    // Ouro: one KV cache per loop over the layers (vLLM ouro.py); zero-compute
    // experts beside other layouts than LongCat-Flash's (LongCat-Flash-Lite's
    // n-gram embeddings, longcat_flash_ngram)
    "total_ut_steps", "zero_expert_num",
    // Grok-2: a dense MLP beside the experts of every layer (vLLM grok1.py)
    "residual_moe",
    // Ring-linear / Ling 2.5 (bailing_moe_linear, bailing_hybrid): linear
    // attention in all but every layer_group_size-th layer (vLLM
    // bailing_moe_linear.py); PLaMo 3 and others: windows by a pattern or a
    // per-layer list, local rotary bases for the windowed layers
    "layer_group_size", "window_pattern", "interleaved_sliding", "window_size", "rope_local",
    // StepFun's heads and KV groups for one layer type (attention_other_setting,
    // read by the Step 3.5 rule) and an index list of sliding layers
    "attention_other_setting", "sliding_window_layers"};
constexpr std::array<const char*, 6> kGenericKeys = {"decoder_sparse_step", "index_topk",
                                                     "index_head_dim",      "index_n_heads",
                                                     "mlp_only_layers",     "use_sliding_window"};

Result<std::string> UnknownStructureKey(const Fields& f) {
  if (!f.object().is_object()) return std::string();
  const bool mla = f.Has("kv_lora_rank");
  for (const auto& [key, value] : f.object().items()) {
    if (value.is_null() || value == false) continue;
    const bool read =
        std::find(kGenericKeys.begin(), kGenericKeys.end(), key) != kGenericKeys.end();
    if (read && (mla || !key.starts_with("index_"))) continue;
    for (const char* hint : kStructureHints) {
      if (key.find(hint) != std::string::npos) return key;
    }
  }
  return std::string();
}

// The family of a config whose model_type has no rule, from the keys only
// one family writes (the conventions of their modeling code).
Family DetectFamily(const Fields& f) {
  // DeepSeek-V4 re-saved under another model_type (sgl-project's FP8
  // checkpoints say "deepseek_ref").
  if (f.Has("compress_ratios") && f.Has("o_groups") && f.Has("hc_mult")) {
    return Family::kDeepseekV4;
  }
  if (f.Has("hybrid_override_pattern")) return Family::kNemotronH;
  if (f.Has("block_configs")) return Family::kNemotronNas;
  if (f.Has("attn_type_list")) return Family::kLightning;
  if (f.Has("linear_num_value_heads")) return Family::kGatedDeltaNet;
  if (f.Has("hybrid_layer_pattern")) return Family::kMimoV2;
  if (f.Has("conv_L_cache")) return Family::kLfm2;
  if (f.Has("attn_layer_period") && f.Has("mamba_d_state")) return Family::kJamba;
  return Family::kGeneric;
}

// What a layer mixes tokens with.
enum class Mixer { kFull, kSliding, kChunked, kLatent, kLinear, kMamba, kConv, kNone };

struct Dims {
  Int layers = 0, hidden = 0, vocab = 0;
  std::vector<Int> heads, kv_heads;
  Int head_dim = 0, v_head_dim = 0;
  Int intermediate = 0;
  bool mla = false, sparse = false;
  Int kv_lora = 0, q_lora = 0, rope = 0, nope = 0, v_head = 0, index_heads = 0, index_dim = 0;
  // Sparse attention: the layers that run no indexer of their own and reuse
  // the previous indexer layer's top-k (GLM-5.2's indexer_types "shared").
  std::vector<bool> shared_indexer;
  // Block-sparse attention beside GQA (MiniMax-M3): the layers with an
  // indexer of index_heads queries and one key of index_dim.
  std::vector<bool> block_sparse;
  // Tokens a sparse-attention query attends: DSA's index_topk (0 when the
  // config does not say: every token), MiniMax-M3's selected blocks.
  Int index_topk = 0;
  // Laguna: a sigmoid gate per query head on the attention output.
  bool head_gate = false;
};

// MiniMax-M3's sparse_attention_config (vLLM minimax_m3/common/indexer.py):
// layers with sparse_attention_freq[i] != 0 keep, beside K and V, one
// indexer key of sparse_index_dim per token, in bf16 whatever the KV format
// (vLLM's indexer_kv_dtype default); the sparse_num_index_heads heads are
// queries only. An index value head (sparse_disable_index_value 0 on a
// sparse layer) is refused: vLLM builds none, and what SGLang caches for
// one is not known here.
Status ReadBlockSparse(const Fields& f, Dims* d) {
  const std::string key = "sparse_attention_config";
  const json& cfg = f.Get(key);
  if (!cfg.is_object()) return f.Bad(key, "must be an object, got " + Show(cfg));
  if (auto use = cfg.find("use_sparse_attention"); use != cfg.end()) {
    if (!use->is_boolean()) {
      return f.Bad(key + ".use_sparse_attention", "must be true or false, got " + Show(*use));
    }
    if (!use->get<bool>()) return OkStatus();
  }
  const auto positive = [&](const char* name) -> Result<Int> {
    auto it = cfg.find(name);
    if (it == cfg.end() || !it->is_number_integer() || it->get<Int>() <= 0 ||
        it->get<Int>() > kMaxConfigDimension) {
      return f.Bad(key + "." + name,
                   it == cfg.end() ? std::string("missing")
                                   : "must be a whole number in [1, 1048576], got " + Show(*it));
    }
    return it->get<Int>();
  };
  auto dim = positive("sparse_index_dim");
  if (!dim) return dim.error();
  auto heads = positive("sparse_num_index_heads");
  if (!heads) return heads.error();
  const auto per_layer = [&](const char* name, bool required) -> Result<std::vector<Int>> {
    auto it = cfg.find(name);
    if (it == cfg.end() && !required) return std::vector<Int>();
    if (it == cfg.end()) return f.Bad(key + "." + name, "missing");
    if (!it->is_array() || static_cast<Int>(it->size()) != d->layers) {
      return f.Bad(key + "." + name,
                   "must be a list of " + std::to_string(d->layers) + " whole numbers");
    }
    std::vector<Int> out;
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& v = (*it)[i];
      if (!v.is_number_integer() || v.get<Int>() < 0) {
        return f.Bad(key + "." + name + "[" + std::to_string(i) + "]",
                     "must be a whole number, 0 or more, got " + Show(v));
      }
      out.push_back(v.get<Int>());
    }
    return out;
  };
  auto freq = per_layer("sparse_attention_freq", true);
  if (!freq) return freq.error();
  auto no_value = per_layer("sparse_disable_index_value", false);
  if (!no_value) return no_value.error();
  d->block_sparse.assign(static_cast<std::size_t>(d->layers), false);
  for (std::size_t i = 0; i < freq->size(); ++i) {
    if ((*freq)[i] == 0) continue;
    if (no_value->empty() || (*no_value)[i] == 0) {
      return f.Bad(key + ".sparse_disable_index_value" +
                       (no_value->empty() ? std::string() : "[" + std::to_string(i) + "]"),
                   no_value->empty()
                       ? "missing: kvbill cannot tell whether the sparse layers keep an index "
                         "value beside the index key"
                       : "is 0 on a sparse layer: an index value head, which kvbill cannot size "
                         "(vLLM builds none)");
    }
    d->block_sparse[i] = true;
  }
  d->index_heads = *heads;
  d->index_dim = *dim;
  // A query attends its top sparse_topk_blocks blocks of sparse_block_size
  // tokens, the sparse_local_block most recent ones and the
  // sparse_init_block first ones (vLLM common/sparse_attention.py).
  auto block = positive("sparse_block_size");
  if (!block) return block.error();
  auto top = positive("sparse_topk_blocks");
  if (!top) return top.error();
  Int extra = 0;
  for (const char* name : {"sparse_local_block", "sparse_init_block"}) {
    auto it = cfg.find(name);
    if (it == cfg.end()) continue;
    if (!it->is_number_integer() || it->get<Int>() < 0 || it->get<Int>() > kMaxConfigDimension) {
      return f.Bad(key + "." + name, "must be a whole number in [0, 1048576], got " + Show(*it));
    }
    extra += it->get<Int>();
  }
  d->index_topk = (*top + extra) * *block;
  return OkStatus();
}

// Step 3.5 (vLLM step3p5.py Step3p5DecoderLayer): a layer whose
// layer_types entry is attention_other_setting.attention_type takes that
// setting's num_attention_heads and num_attention_groups (its KV heads);
// a head_dim other than the model's is refused (kvbill keeps one head dim).
// layer_types may be longer than the layers (the entries past them are the
// MTP layers', which vLLM's main model does not build).
Status Step3p5OtherSetting(const Fields& f, Dims* d) {
  const std::string key = "attention_other_setting";
  if (!f.Has(key) || f.Get(key).is_null() || !f.Has("layer_types")) return OkStatus();
  const json& other = f.Get(key);
  if (!other.is_object()) return f.Bad(key, "must be an object, got " + Show(other));
  const json& types = f.Get("layer_types");
  if (!types.is_array()) return f.Bad("layer_types", "must be a list of strings");
  auto type = other.find("attention_type");
  if (type == other.end() || !type->is_string()) {
    return f.Bad(key + ".attention_type",
                 "must be a layer type, got " + (type == other.end() ? "nothing" : Show(*type)));
  }
  const auto positive = [&](const char* name) -> Result<Int> {
    auto it = other.find(name);
    if (it == other.end() || !it->is_number_integer() || it->get<Int>() <= 0 ||
        it->get<Int>() > kMaxConfigDimension) {
      return f.Bad(key + "." + name,
                   it == other.end() ? std::string("missing")
                                     : "must be a whole number in [1, 1048576], got " + Show(*it));
    }
    return it->get<Int>();
  };
  auto heads = positive("num_attention_heads");
  if (!heads) return heads.error();
  auto groups = positive("num_attention_groups");
  if (!groups) return groups.error();
  if (*heads % *groups != 0) {
    return f.Bad(
        key + ".num_attention_groups",
        std::to_string(*groups) + " does not divide num_attention_heads " + std::to_string(*heads));
  }
  if (other.contains("head_dim")) {
    auto dim = positive("head_dim");
    if (!dim) return dim.error();
    if (*dim != d->head_dim) {
      return f.Bad(key + ".head_dim", "is " + std::to_string(*dim) + ", not head_dim " +
                                          std::to_string(d->head_dim) +
                                          ": kvbill sizes one head dim for every layer");
    }
  }
  for (std::size_t i = 0; i < d->heads.size() && i < types.size(); ++i) {
    if (types[i] != *type) continue;
    d->heads[i] = *heads;
    d->kv_heads[i] = *groups;
  }
  return OkStatus();
}

Result<Dims> ReadDims(const Fields& f, const std::string& model_type) {
  Dims d;
  auto layers = f.FirstInt({"num_hidden_layers", "n_layer", "num_layers"});
  if (!layers) return layers.error();
  if (!layers->has_value() && model_type == "nemotron_h") {
    // NemotronHConfig derives the layer count from the block list.
    if (f.Has("layers_block_type") && f.Get("layers_block_type").is_array()) {
      layers = std::optional<Int>(static_cast<Int>(f.Get("layers_block_type").size()));
    } else if (f.Has("hybrid_override_pattern") && f.Get("hybrid_override_pattern").is_string()) {
      layers = std::optional<Int>(
          static_cast<Int>(f.Get("hybrid_override_pattern").get<std::string>().size()));
    }
  }
  if (!layers->has_value() || **layers <= 0) return f.Bad("num_hidden_layers", "missing");
  d.layers = **layers;
  if (d.layers > 100000) return f.Bad("num_hidden_layers", "is above 100,000");
  auto hidden = f.RequiredInt({"hidden_size", "n_embd", "n_embed", "d_model"});
  if (!hidden) return hidden.error();
  d.hidden = *hidden;
  // Mamba models have no attention (mamba2's num_heads are SSM heads):
  // their layers are built by BuildMamba from their own keys.
  if (model_type == "mamba" || model_type == "falcon_mamba" || model_type == "mamba2") {
    d.heads.assign(static_cast<std::size_t>(d.layers), 1);
    d.kv_heads = d.heads;
    d.head_dim = d.v_head_dim = d.hidden;
    auto vocab = f.RequiredInt({"vocab_size"});
    if (!vocab) return vocab.error();
    d.vocab = *vocab;
    return d;
  }
  auto heads = f.FirstPerLayerInt({"num_attention_heads", "n_head", "num_heads"}, d.layers);
  if (!heads) return heads.error();
  if (!heads->has_value()) return f.Bad("num_attention_heads", "missing");
  d.heads = **heads;
  if (model_type == "laguna" && f.Has("num_attention_heads_per_layer")) {
    // Laguna: query heads per layer; the KV heads stay num_key_value_heads.
    auto per_layer = f.PerLayerInt("num_attention_heads_per_layer", d.layers, 1);
    if (!per_layer) return per_layer.error();
    d.heads = **per_layer;
  }

  // KV heads. Falcon: new_decoder_architecture reads num_kv_heads, else
  // multi_query means one KV head. GPT-BigCode: multi_query means one.
  // num_attention_groups: StepFun's Step 3 name for the KV heads (vLLM
  // step3_text.py).
  auto kv = f.FirstPerLayerInt(
      {"num_key_value_heads", "num_kv_heads", "n_head_kv", "num_attention_groups"}, d.layers);
  if (!kv) return kv.error();
  // ChatGLM: multi_query_group_num KV heads when multi_query_attention
  // (vLLM's get_total_num_kv_heads reads it "for ChatGLM").
  if (!kv->has_value() && model_type == "chatglm") {
    auto mqa = f.Bool("multi_query_attention", false);
    if (!mqa) return mqa.error();
    if (*mqa) {
      auto groups = f.RequiredInt({"multi_query_group_num"});
      if (!groups) return groups.error();
      kv = std::optional<std::vector<Int>>(std::vector<Int>(d.heads.size(), *groups));
    }
  }
  auto new_arch = f.Bool("new_decoder_architecture", false);
  if (!new_arch) return new_arch.error();
  auto multi_query = f.Bool("multi_query", false);
  if (!multi_query) return multi_query.error();
  if (model_type == "falcon" && !*new_arch) {
    d.kv_heads = *multi_query ? std::vector<Int>(d.heads.size(), 1) : d.heads;
  } else if (kv->has_value()) {
    d.kv_heads = **kv;
  } else if (*multi_query) {
    d.kv_heads.assign(d.heads.size(), 1);
  } else {
    d.kv_heads = d.heads;
  }
  // Step 3: vLLM's step3_text.py builds one KV head whatever the config says
  // (Step3TextAttention refuses any other count); a checkpoint whose
  // num_attention_groups says more would not load there.
  if (model_type == "step3_text") {
    for (const char* key : {"num_key_value_heads", "num_kv_heads", "num_attention_groups"}) {
      auto given = f.OptionalInt(key);
      if (!given) return given.error();
      if (given->has_value() && **given != 1) {
        return f.Bad(key, "is " + std::to_string(**given) +
                              ": Step 3 attention has one KV head (vLLM's step3_text.py builds "
                              "one whatever the config says), so kvbill cannot tell what this "
                              "checkpoint caches");
      }
    }
    d.kv_heads.assign(d.heads.size(), 1);
  }
  for (std::size_t i = 0; i < d.heads.size(); ++i) {
    if (d.kv_heads[i] > d.heads[i]) {
      return f.Bad("num_key_value_heads", "is " + std::to_string(d.kv_heads[i]) +
                                              ", more than num_attention_heads " +
                                              std::to_string(d.heads[i]));
    }
    if (d.heads[i] % d.kv_heads[i] != 0) {
      return f.Bad("num_key_value_heads", std::to_string(d.kv_heads[i]) +
                                              " does not divide num_attention_heads " +
                                              std::to_string(d.heads[i]));
    }
  }

  // These model types' attention is latent by their modeling code
  // (transformers' kv_a_proj_with_mqa is hidden -> kv_lora_rank +
  // qk_rope_head_dim; vLLM's DeepseekV2Attention builds the same): with MLA
  // dims and no kv_lora_rank neither can build it, and a plain reading would
  // size heads of hidden / heads. DeepSeek-VL2's plain attention has its MLA
  // keys dropped before (ReadDeepseekVl2Attention).
  if (!f.Has("kv_lora_rank") &&
      (model_type == "deepseek_v2" || model_type == "deepseek_v3" || model_type == "deepseek_v32" ||
       model_type == "kimi_k2" || model_type == "glm4_moe_lite" || model_type == "glm_moe_dsa") &&
      (f.object().contains("kv_lora_rank") || f.Has("qk_nope_head_dim") ||
       f.Has("qk_rope_head_dim"))) {
    const bool null = f.object().contains("kv_lora_rank");
    return f.Bad("kv_lora_rank", std::string(null ? "is null (None)" : "missing") +
                                     ": model_type \"" + model_type +
                                     "\" is multi-head latent attention, which caches a latent "
                                     "of kv_lora_rank elements a token (transformers and vLLM "
                                     "cannot build it without one)");
  }

  auto head_dim = f.FirstInt({"head_dim", "attention_head_dim", "kv_channels"});
  if (!head_dim) return head_dim.error();
  if (head_dim->has_value()) {
    d.head_dim = **head_dim;
  } else if (d.hidden % d.heads[0] == 0) {
    d.head_dim = d.hidden / d.heads[0];
  } else if (f.Has("kv_lora_rank")) {
    d.head_dim = 0;  // MLA: the heads' dims come from its own keys below
  } else {
    return f.Bad("head_dim", "missing, and hidden_size " + std::to_string(d.hidden) +
                                 " is not divisible by num_attention_heads " +
                                 std::to_string(d.heads[0]));
  }
  if (IsStep3p5(model_type)) {
    if (auto st = Step3p5OtherSetting(f, &d); !st) return st.error();
  }
  // Grok (vLLM grok1.py Grok1Attention): head_dim is hidden_size //
  // num_heads whatever the config's head_dim says.
  if (IsGrok(model_type)) {
    if (d.hidden % d.heads[0] != 0) {
      return f.Bad("num_attention_heads",
                   std::to_string(d.heads[0]) + " does not divide hidden_size " +
                       std::to_string(d.hidden) + " (vLLM's grok1.py takes head_dim from them)");
    }
    d.head_dim = d.hidden / d.heads[0];
  }
  auto vocab = f.RequiredInt({"vocab_size", "padded_vocab_size"});
  if (!vocab) return vocab.error();
  d.vocab = *vocab;
  auto v_dim = IsGrok(model_type) ? Result<Int>(d.head_dim) : f.IntOr("v_head_dim", d.head_dim);
  if (!v_dim) return v_dim.error();
  d.v_head_dim = *v_dim;

  if (model_type.starts_with("gemma3n") && f.Has("intermediate_size") &&
      f.Get("intermediate_size").is_array()) {
    // Gemma 3n: one size per layer (BuildGemma3n reads them all).
    auto sizes = f.PerLayerInt("intermediate_size", d.layers);
    if (!sizes) return sizes.error();
    d.intermediate = (**sizes)[0];
  } else {
    auto inter = f.FirstInt({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"});
    if (!inter) return inter.error();
    d.intermediate = inter->value_or(4 * d.hidden);
  }

  // Multi-head latent attention (DeepSeek-V2/V3 family).
  auto kv_lora = f.OptionalInt("kv_lora_rank");
  if (!kv_lora) return kv_lora.error();
  if (kv_lora->has_value()) {
    d.mla = true;
    d.kv_lora = **kv_lora;
    auto rope = f.RequiredInt({"qk_rope_head_dim"});
    if (!rope) return rope.error();
    auto nope = f.RequiredInt({"qk_nope_head_dim"});
    if (!nope) return nope.error();
    auto v = f.RequiredInt({"v_head_dim"});
    if (!v) return v.error();
    auto q_lora = f.OptionalInt("q_lora_rank");
    if (!q_lora) return q_lora.error();
    d.rope = *rope;
    d.nope = *nope;
    d.v_head = *v;
    if (d.head_dim == 0) d.head_dim = d.nope + d.rope;
    d.q_lora = q_lora->value_or(0);
    // DeepSeek Sparse Attention: a lightning indexer beside the latent.
    if (f.Has("index_topk") || f.Has("index_head_dim")) {
      auto index_dim = f.RequiredInt({"index_head_dim"});
      if (!index_dim) return index_dim.error();
      auto index_heads = f.RequiredInt({"index_n_heads"});
      if (!index_heads) return index_heads.error();
      d.sparse = true;
      d.index_dim = *index_dim;
      d.index_heads = *index_heads;
      auto topk = f.IntOr("index_topk", 0, 0);
      if (!topk) return topk.error();
      d.index_topk = *topk;
      d.shared_indexer.assign(static_cast<std::size_t>(d.layers), false);
      if (f.Has("indexer_types")) {
        const json& types = f.Get("indexer_types");
        if (!types.is_array() || static_cast<Int>(types.size()) != d.layers) {
          return f.Bad("indexer_types", "must be a list of " + std::to_string(d.layers) +
                                            " strings (\"full\" or \"shared\")");
        }
        for (Int i = 0; i < d.layers; ++i) {
          const json& t = types[static_cast<std::size_t>(i)];
          if (t != "full" && t != "shared") {
            return f.Bad("indexer_types[" + std::to_string(i) + "]",
                         "must be \"full\" or \"shared\", got " + Show(t));
          }
          d.shared_indexer[static_cast<std::size_t>(i)] = t == "shared";
        }
        if (d.shared_indexer.front()) {
          return f.Bad("indexer_types[0]", "is \"shared\", but no layer before it has an indexer");
        }
      } else if (f.Has("index_topk_freq")) {
        // A period without the list: which layers keep an indexer is not
        // spelled out, and a guess would misstate the indexer keys.
        auto freq = f.IntOr("index_topk_freq", 1);
        if (!freq) return freq.error();
        if (*freq > 1) {
          return f.Bad("index_topk_freq",
                       "is " + std::to_string(*freq) +
                           " without indexer_types: kvbill cannot tell which layers keep an "
                           "indexer key");
        }
      }
    }
  }
  if (model_type == "minimax_m3") {
    if (f.Has("sparse_attention_config")) {
      if (auto st = ReadBlockSparse(f, &d); !st) return st.error();
    }
    auto gate = f.Bool("attention_output_gate", false);
    if (!gate) return gate.error();
    if (*gate) {
      return f.Bad("attention_output_gate",
                   "is true: MiniMax-M3's modeling code has no output gate, so kvbill cannot tell "
                   "what it adds");
    }
  }
  if (IsStep3p5(model_type)) {
    // use_head_wise_attn_gate: g_proj hidden -> heads (vLLM step3p5.py).
    auto gate = f.Bool("use_head_wise_attn_gate", false);
    if (!gate) return gate.error();
    d.head_gate = *gate;
  }
  if (model_type == "laguna") {
    // gating: true or "per-head" is a gate per query head (vLLM laguna.py
    // g_proj: hidden -> heads); gating_types may only say the same.
    const json gating = f.Has("gating") ? f.Get("gating") : json(false);
    if (gating == true || gating == "per-head") {
      d.head_gate = true;
    } else if (gating != false) {
      return f.Bad("gating", "must be true, false or \"per-head\", got " + Show(gating));
    }
    if (f.Has("gating_types")) {
      const json& types = f.Get("gating_types");
      if (!types.is_array()) return f.Bad("gating_types", "must be a list of strings");
      for (std::size_t i = 0; i < types.size(); ++i) {
        if (types[i] != "per_head") {
          return f.Bad("gating_types[" + std::to_string(i) + "]",
                       "is " + Show(types[i]) + ": kvbill knows only \"per_head\" gates");
        }
      }
    }
  }
  return d;
}

// Per-layer mixers from the generic keys. Order of precedence in
// docs/models.md ("Which kind each layer is").
Result<std::vector<Mixer>> ResolveMixers(const Fields& f, const Dims& d,
                                         const std::string& model_type, Family family) {
  const Int n = d.layers;
  const Mixer full = d.mla ? Mixer::kLatent : Mixer::kFull;
  std::vector<Mixer> kinds(static_cast<std::size_t>(n), full);
  auto at = [&](Int i) -> Mixer& { return kinds[static_cast<std::size_t>(i)]; };
  // Grok (vLLM grok1.py): every layer is full attention; no window key is
  // read (BuildTextModel refuses the window keys' other values).
  if (IsGrok(model_type)) return kinds;

  if (f.Has("layer_types")) {
    const json& types = f.Get("layer_types");
    if (!types.is_array()) return f.Bad("layer_types", "must be a list of strings");
    // Step 3.5: the entries past the layers are the MTP layers' (vLLM's
    // step3p5.py indexes layer_types by layer and builds no more).
    const bool longer_ok = IsStep3p5(model_type) && static_cast<Int>(types.size()) > n;
    if (static_cast<Int>(types.size()) != n && !longer_ok) {
      return f.Bad("layer_types", "has " + std::to_string(types.size()) +
                                      " entries, num_hidden_layers is " + std::to_string(n));
    }
    for (Int i = 0; i < n; ++i) {
      const json& t = types[static_cast<std::size_t>(i)];
      const std::string where = "layer_types[" + std::to_string(i) + "]";
      if (!t.is_string()) return f.Bad(where, "must be a string, got " + Show(t));
      const std::string s = t.get<std::string>();
      // deepseek_sparse_attention: MLA with its indexer (NVIDIA's GLM-5.2
      // exports); full attention read with the model's MLA keys.
      if (s == "full_attention" || s == "attention" || s == "global_attention" ||
          (s == "deepseek_sparse_attention" && d.mla)) {
        at(i) = full;
      } else if (s == "sliding_attention" || s == "local_attention") {
        at(i) = Mixer::kSliding;
      } else if (s == "chunked_attention") {
        at(i) = Mixer::kChunked;
      } else if (s == "linear_attention") {
        at(i) = Mixer::kLinear;
      } else if (s == "mamba" || s == "mamba2") {
        at(i) = Mixer::kMamba;
      } else if (s == "conv" || s == "short_conv") {
        at(i) = Mixer::kConv;
      } else {
        return f.Bad(where, "unknown layer type \"" + s + "\" for model_type \"" + model_type +
                                "\" (known: full_attention, sliding_attention, "
                                "chunked_attention, linear_attention, mamba, conv)");
      }
    }
    // Step 3.5 without a window: its sliding layers are full attention
    // (vLLM step3p5.py passes no window), with their own heads.
    if (IsStep3p5(model_type) && (!f.Has("sliding_window") || f.Get("sliding_window").is_null())) {
      for (Mixer& k : kinds) {
        if (k == Mixer::kSliding) k = full;
      }
    }
    return kinds;
  }

  // Jamba: attention on layers i % attn_layer_period == attn_layer_offset, Mamba elsewhere.
  if (family == Family::kJamba || f.Has("attn_layer_period")) {
    auto period = f.IntOr("attn_layer_period", 8);
    if (!period) return period.error();
    auto offset = f.IntOr("attn_layer_offset", 4, 0);
    if (!offset) return offset.error();
    // No layer i has i % period == offset: transformers' JambaConfig raises.
    if (*offset >= *period) {
      return f.Bad("attn_layer_offset",
                   "must be smaller than attn_layer_period " + std::to_string(*period) + ", got " +
                       std::to_string(*offset) +
                       " (no layer would be attention; transformers' JambaConfig refuses it)");
    }
    for (Int i = 0; i < n; ++i) at(i) = (i % *period == *offset) ? full : Mixer::kMamba;
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
      at(i) = v == 1 ? full : Mixer::kLinear;
    }
    return kinds;
  }

  // Qwen3-Next: full attention every full_attention_interval-th layer.
  auto interval = f.OptionalInt("full_attention_interval");
  if (!interval) return interval.error();
  if (interval->has_value()) {
    for (Int i = 0; i < n; ++i) at(i) = ((i + 1) % **interval == 0) ? full : Mixer::kLinear;
    return kinds;
  }

  // Llama-4: chunked local attention on RoPE layers, global NoPE layers elsewhere.
  auto chunk = f.OptionalInt("attention_chunk_size");
  if (!chunk) return chunk.error();
  if (chunk->has_value() && (model_type == "llama4" || model_type == "llama4_text" ||
                             f.Has("no_rope_layers") || f.Has("no_rope_layer_interval"))) {
    auto no_rope = f.OptionalIntList("no_rope_layers");
    if (!no_rope) return no_rope.error();
    auto every = f.IntOr("no_rope_layer_interval", 4);
    if (!every) return every.error();
    const bool listed = no_rope->has_value() && !(*no_rope)->empty();
    if (listed && static_cast<Int>((*no_rope)->size()) != n) {
      return f.Bad("no_rope_layers", "has " + std::to_string((*no_rope)->size()) +
                                         " entries, num_hidden_layers is " + std::to_string(n));
    }
    for (Int i = 0; i < n; ++i) {
      const bool uses_rope =
          listed ? (**no_rope)[static_cast<std::size_t>(i)] != 0 : ((i + 1) % *every != 0);
      at(i) = uses_rope ? Mixer::kChunked : full;
    }
    return kinds;
  }

  auto window = f.OptionalInt("sliding_window");
  if (!window) return window.error();

  // Step 3.5 without layer_types (vLLM step3p5.py): even layers slide when
  // there is a window.
  if (IsStep3p5(model_type)) {
    for (Int i = 0; i < n; ++i) {
      at(i) = window->has_value() && i % 2 == 0 ? Mixer::kSliding : full;
    }
    return kinds;
  }

  // Qwen2 family: use_sliding_window gates it; layers from max_window_layers on slide.
  if (f.Has("use_sliding_window")) {
    auto use = f.Bool("use_sliding_window", false);
    if (!use) return use.error();
    if (!*use) return kinds;
    if (!window->has_value()) return f.Bad("sliding_window", "missing, use_sliding_window is true");
    auto first = f.IntOr("max_window_layers", n, 0);
    if (!first) return first.error();
    for (Int i = *first; i < n; ++i) at(i) = Mixer::kSliding;
    return kinds;
  }

  if (!window->has_value()) return kinds;

  // EXAONE 4 (transformers Exaone4Config): a string of L (sliding) and G
  // (full) repeated over the layers.
  if (f.Has("sliding_window_pattern") && f.Get("sliding_window_pattern").is_string()) {
    const std::string p = f.Get("sliding_window_pattern").get<std::string>();
    if (p.empty() || p.find_first_not_of("LG") != std::string::npos) {
      return f.Bad(
          "sliding_window_pattern",
          "must be a whole number or a string of L (sliding) and G (full), got \"" + p + "\"");
    }
    for (Int i = 0; i < n; ++i) {
      at(i) = p[static_cast<std::size_t>(i) % p.size()] == 'L' ? Mixer::kSliding : full;
    }
    return kinds;
  }
  // Gemma-2: even layers slide. Gemma-3: all but every sliding_window_pattern-th.
  // Trinity (afmoe) names it global_attn_every_n_layers.
  auto pattern = f.FirstInt(
      {"sliding_window_pattern", "_sliding_window_pattern", "global_attn_every_n_layers"});
  if (!pattern) return pattern.error();
  Int every = 0;
  if (pattern->has_value()) {
    every = **pattern;
  } else if (model_type == "gemma2") {
    every = 2;
  } else if (model_type == "cohere2") {
    every = 4;
  } else if (model_type == "gemma3" || model_type == "gemma3_text") {
    every = 6;
  }
  for (Int i = 0; i < n; ++i) {
    at(i) = (every == 0 || (i + 1) % every != 0) ? Mixer::kSliding : full;
  }
  return kinds;
}

// Which layers have routed experts, and the per-layer MoE quantities.
struct MoeLayers {
  std::vector<bool> moe;
  std::vector<Int> experts, top_k, inter, shared_inter;
};

// Step 3's moe_layers_enum: "4,5,...,59" (vLLM step3_text.py splits the
// string on commas) or a list of layer indices; nullopt when absent.
Result<std::optional<std::vector<Int>>> Step3MoeLayers(const Fields& f, Int layers) {
  const std::string key = "moe_layers_enum";
  if (!f.Has(key)) return std::optional<std::vector<Int>>();
  const json& v = f.Get(key);
  std::vector<Int> out;
  const auto add = [&](Int i, const std::string& shown) -> Status {
    if (i < 0 || i >= layers) {
      return f.Bad(key, "names layer " + shown + ", outside 0 to " + std::to_string(layers - 1) +
                            " (num_hidden_layers " + std::to_string(layers) + ")");
    }
    out.push_back(i);
    return OkStatus();
  };
  if (v.is_array()) {
    for (const json& x : v) {
      if (!x.is_number_integer()) return f.Bad(key, "must list whole numbers, got " + Show(x));
      if (Status s = add(x.get<Int>(), Show(x)); !s.ok()) return s.error();
    }
    return std::optional<std::vector<Int>>(out);
  }
  if (!v.is_string()) {
    return f.Bad(key,
                 "must be a comma-separated string of layer indices or a list, got " + Show(v));
  }
  const std::string text = v.get<std::string>();
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    item = first == std::string::npos ? std::string() : item.substr(first, last - first + 1);
    if (item.empty() || item.size() > 9 ||
        item.find_first_not_of("0123456789") != std::string::npos) {
      return f.Bad(key, "must be a comma-separated string of layer indices, got \"" + text +
                            "\" (item \"" + item + "\")");
    }
    if (Status s = add(std::stoll(item), item); !s.ok()) return s.error();
    start = comma + 1;
  }
  return std::optional<std::vector<Int>>(out);
}

Result<MoeLayers> ResolveMoe(const Fields& f, const Dims& d, const std::string& model_type) {
  MoeLayers m;
  const Int n = d.layers;
  m.moe.assign(static_cast<std::size_t>(n), false);
  // Absent or null: a dense model. Zero experts is no model (vLLM would build
  // a MoE layer of none): an error naming the key; 1 is a dense MLP (Jamba).
  // Step 3 names its experts moe_num_experts and moe_top_k (vLLM
  // step3_text.py), ERNIE 4.5 moe_num_experts and moe_k (vLLM
  // ernie45_moe.py); unknown model types with moe_num_experts are refused
  // (UnknownStructureKey), their layouts differing.
  const bool step3 = model_type == "step3_text" || IsStep3p5(model_type);
  const bool ernie = model_type == "ernie4_5_moe";
  const char* own_top_k = step3 ? "moe_top_k" : ernie ? "moe_k" : nullptr;
  // Step 3.5 and 3.7 configs re-saved in Hugging Face's keys
  // (num_experts, num_experts_per_tok) are read as StepFun's own.
  const bool step_hf_keys = IsStep3p5(model_type) && !f.Has("moe_num_experts") &&
                            (f.Has("num_experts") || f.Has("num_experts_per_tok"));
  if (step_hf_keys) own_top_k = nullptr;
  if (ernie && f.Has("moe_num_experts") && f.Get("moe_num_experts").is_array()) {
    return f.Bad("moe_num_experts",
                 "is a list (text and vision experts, ERNIE 4.5 VL's layout), which vLLM's "
                 "ernie45_moe does not take: kvbill sizes the text model's one expert count");
  }
  // Grok (vLLM grok1.py): num_experts, else num_local_experts, else 8;
  // num_experts_per_tok, else 2; every layer is MoE.
  const bool grok = IsGrok(model_type);
  auto experts =
      own_top_k      ? f.FirstPerLayerInt({"moe_num_experts"}, n)
      : step_hf_keys ? f.FirstPerLayerInt({"num_experts"}, n)
      : grok         ? f.FirstPerLayerInt({"num_experts", "num_local_experts"}, n)
             : f.FirstPerLayerInt({"num_local_experts", "num_experts", "n_routed_experts"}, n);
  if (!experts) return experts.error();
  if (grok && !experts->has_value()) {
    *experts = std::optional<std::vector<Int>>(std::vector<Int>(static_cast<std::size_t>(n), 8));
  }
  if (!experts->has_value()) return m;
  m.experts = **experts;
  if (*std::max_element(m.experts.begin(), m.experts.end()) <= 1) return m;
  const auto first_present = [&](std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      if (f.Has(key)) return key;
    }
    return *keys.begin();
  };
  const char* experts_key =
      own_top_k      ? "moe_num_experts"
      : step_hf_keys ? "num_experts"
      : grok         ? first_present({"num_experts", "num_local_experts"})
                     : first_present({"num_local_experts", "num_experts", "n_routed_experts"});
  const char* top_k_key = own_top_k ? own_top_k
                                    : first_present({"num_experts_per_tok", "experts_per_token",
                                                     "moe_topk", "num_experts_per_token"});
  auto top_k = own_top_k ? f.FirstPerLayerInt({own_top_k}, n)
                         : f.FirstPerLayerInt({"num_experts_per_tok", "experts_per_token",
                                               "moe_topk", "num_experts_per_token"},
                                              n);
  if (!top_k) return top_k.error();
  if (grok && !top_k->has_value()) {
    *top_k = std::optional<std::vector<Int>>(std::vector<Int>(static_cast<std::size_t>(n), 2));
  }
  if (!top_k->has_value()) return f.Bad(top_k_key, "missing for a MoE model");
  m.top_k = **top_k;
  auto inter = f.PerLayerInt("moe_intermediate_size", n);
  if (!inter) return inter.error();
  m.inter = inter->value_or(std::vector<Int>(static_cast<std::size_t>(n), d.intermediate));
  m.shared_inter.assign(static_cast<std::size_t>(n), 0);

  for (Int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (m.top_k[u] > m.experts[u] && m.experts[u] > 1) {
      return f.Bad(top_k_key, "must be at most " + std::string(experts_key) + " " +
                                  std::to_string(m.experts[u]) + ", got " +
                                  std::to_string(m.top_k[u]));
    }
  }
  std::vector<bool>& moe = m.moe;
  auto set_all = [&](auto rule) {
    for (Int i = 0; i < n; ++i) moe[static_cast<std::size_t>(i)] = rule(i);
  };
  if (f.Has("mlp_layer_types")) {  // MiMo-V2 in transformers: "dense" / "sparse"
    const json& t = f.Get("mlp_layer_types");
    if (!t.is_array() || static_cast<Int>(t.size()) != n) {
      return f.Bad("mlp_layer_types", "must be a list of " + std::to_string(n) + " strings");
    }
    for (Int i = 0; i < n; ++i) {
      const json& v = t[static_cast<std::size_t>(i)];
      if (v != "dense" && v != "sparse") {
        return f.Bad("mlp_layer_types[" + std::to_string(i) + "]",
                     "must be \"dense\" or \"sparse\", got " + Show(v));
      }
      moe[static_cast<std::size_t>(i)] = v == "sparse";
    }
  } else if (f.Has("moe_layer_freq") && f.Get("moe_layer_freq").is_array()) {
    // A list: 1 marks a MoE layer (MiMo-V2-Flash).
    auto freq = f.PerLayerInt("moe_layer_freq", n, 0);
    if (!freq) return freq.error();
    set_all([&](Int i) { return (**freq)[static_cast<std::size_t>(i)] != 0; });
  } else if (f.Has("first_k_dense_replace") || f.Has("moe_layer_freq")) {  // DeepSeek
    auto first = f.IntOr("first_k_dense_replace", 0, 0);
    if (!first) return first.error();
    auto freq = f.IntOr("moe_layer_freq", 1);
    if (!freq) return freq.error();
    set_all([&](Int i) { return i >= *first && i % *freq == 0; });
  } else if (f.Has("expert_layer_period") || model_type == "jamba") {  // Jamba
    auto period = f.IntOr("expert_layer_period", 2);
    if (!period) return period.error();
    auto offset = f.IntOr("expert_layer_offset", 1, 0);
    if (!offset) return offset.error();
    if (*offset >= *period) {
      return f.Bad("expert_layer_offset",
                   "must be smaller than expert_layer_period " + std::to_string(*period) +
                       ", got " + std::to_string(*offset) +
                       " (no layer would hold the experts; transformers' JambaConfig refuses it)");
    }
    set_all([&](Int i) { return i % *period == *offset; });
  } else if (f.Has("interleave_moe_layer_step") || model_type == "llama4" ||
             model_type == "llama4_text") {  // Llama-4
    auto step = f.IntOr("interleave_moe_layer_step", 1);
    if (!step) return step.error();
    set_all([&](Int i) { return (i + 1) % *step == 0; });
  } else if (f.Has("decoder_sparse_step") || f.Has("mlp_only_layers")) {  // Qwen MoE
    auto step = f.IntOr("decoder_sparse_step", 1);
    if (!step) return step.error();
    auto dense = f.OptionalIntList("mlp_only_layers");
    if (!dense) return dense.error();
    set_all([&](Int i) {
      const bool listed =
          dense->has_value() && std::find((*dense)->begin(), (*dense)->end(), i) != (*dense)->end();
      return !listed && (i + 1) % *step == 0;
    });
  } else if (ernie) {
    // vLLM ernie45_moe.py: use_moe (default: any experts), and layer i is
    // MoE when (i + 1) % moe_layer_interval == 0 and moe_layer_start_index
    // <= i <= moe_layer_end_index; transformers reads an end of -1 (its
    // default) as the last layer before vLLM sees it.
    auto use = f.Bool("use_moe", true);
    if (!use) return use.error();
    auto start = f.IntOr("moe_layer_start_index", 1, 0);
    if (!start) return start.error();
    auto end = f.IntOr("moe_layer_end_index", -1, -1);
    if (!end) return end.error();
    auto interval = f.IntOr("moe_layer_interval", 1);
    if (!interval) return interval.error();
    const Int last = *end == -1 ? n - 1 : *end;
    set_all([&](Int i) { return *use && (i + 1) % *interval == 0 && i >= *start && i <= last; });
  } else if (step3) {
    // moe_layers_enum: the MoE layers' indices, a comma-separated string
    // in Step 3's configs (vLLM splits it) or a list; absent, every layer
    // but the first (vLLM's default).
    auto listed = Step3MoeLayers(f, n);
    if (!listed) return listed.error();
    set_all([&](Int i) {
      return listed->has_value()
                 ? std::find((*listed)->begin(), (*listed)->end(), i) != (*listed)->end()
                 : i >= 1;
    });
  } else if (f.Has("moe_layer_frequency")) {  // Arctic: every N-th layer
    auto freq = f.IntOr("moe_layer_frequency", 2);
    if (!freq) return freq.error();
    set_all([&](Int i) { return (i + 1) % *freq == 0; });
  } else if (f.Has("num_dense_layers")) {  // LFM2-MoE, AFMoE: the first layers dense
    auto dense = f.IntOr("num_dense_layers", 0, 0);
    if (!dense) return dense.error();
    set_all([&](Int i) { return i >= *dense; });
  } else if (f.Has("moe_layer_num_skipped")) {  // Hunyuan
    auto skipped = f.IntOr("moe_layer_num_skipped", 0, 0);
    if (!skipped) return skipped.error();
    set_all([&](Int i) { return i >= *skipped; });
  } else {
    set_all([](Int) { return true; });
  }
  for (Int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (m.experts[u] <= 1) moe[u] = false;
  }

  // Always-on experts.
  auto n_shared = f.PerLayerInt("n_shared_experts", n, 0);
  if (!n_shared) return n_shared.error();
  auto hunyuan_shared = f.PerLayerInt("num_shared_expert", n, 0);
  if (!hunyuan_shared) return hunyuan_shared.error();
  auto qwen_shared = f.OptionalInt("shared_expert_intermediate_size", 0);
  if (!qwen_shared) return qwen_shared.error();
  auto granite_shared = f.OptionalInt("shared_intermediate_size", 0);
  if (!granite_shared) return granite_shared.error();
  auto nemotron_shared = f.OptionalInt("moe_shared_expert_intermediate_size", 0);
  if (!nemotron_shared) return nemotron_shared.error();
  // StepFun's Step 3 family: one shared expert of share_expert_dim (vLLM
  // step3_text.py builds it from that key alone).
  auto step_shared = f.OptionalInt("share_expert_dim", 0);
  if (!step_shared) return step_shared.error();
  // ERNIE 4.5: one MLP of moe_intermediate_size x moe_num_shared_experts
  // (transformers' default 2).
  auto ernie_shared = ernie ? f.IntOr("moe_num_shared_experts", 2, 0) : Result<Int>(Int{0});
  if (!ernie_shared) return ernie_shared.error();
  // Ling (vLLM bailing_moe.py), Trinity (afmoe.py) and K-EXAONE
  // (exaone_moe.py): num_shared_experts x (moe_shared_expert_intermediate_size,
  // else moe_intermediate_size).
  const bool bailing =
      model_type.starts_with("bailing_moe") || model_type == "afmoe" || model_type == "exaone_moe";
  auto bailing_shared = bailing ? f.IntOr("num_shared_experts", 0, 0) : Result<Int>(Int{0});
  if (!bailing_shared) return bailing_shared.error();
  // Arctic (vLLM arctic.py): use_residual adds a gated MLP of hidden x
  // hidden beside the experts of every MoE layer.
  const bool arctic = model_type == "arctic";
  auto residual = arctic ? f.Bool("use_residual", false) : Result<bool>(false);
  if (!residual) return residual.error();
  // Grok-2 (vLLM grok1.py Grok1DecoderLayer): residual_moe adds a gated MLP
  // of intermediate_size beside the experts (moe_intermediate_size) of
  // every layer, always on.
  auto grok_residual = grok ? f.Bool("residual_moe", false) : Result<bool>(false);
  if (!grok_residual) return grok_residual.error();
  for (Int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    Int s = 0;
    if (grok) {
      s = *grok_residual ? d.intermediate : 0;
    } else if (arctic) {
      s = *residual ? d.hidden : 0;
    } else if (bailing) {
      s = *bailing_shared * nemotron_shared->value_or(m.inter[u]);
    } else if (nemotron_shared->has_value()) {
      s = **nemotron_shared * (n_shared->has_value() ? (**n_shared)[u] : 1);
    } else if (step_shared->has_value()) {
      s = **step_shared;
    } else if (ernie) {
      s = *ernie_shared * m.inter[u];
    } else if (n_shared->has_value() && model_type == "minimax_m3") {
      s = (**n_shared)[u] * d.intermediate;  // vLLM: intermediate_size x n_shared_experts
    } else if (n_shared->has_value()) {
      s = (**n_shared)[u] * m.inter[u];
    } else if (hunyuan_shared->has_value()) {
      s = (**hunyuan_shared)[u] * d.intermediate;
    } else if (qwen_shared->has_value()) {
      s = **qwen_shared;
    } else if (granite_shared->has_value()) {
      s = **granite_shared;
    } else if (model_type == "llama4" || model_type == "llama4_text") {
      s = d.intermediate;
    }
    m.shared_inter[u] = s;
  }
  return m;
}

struct Ctx {
  const Fields& f;
  const std::string& model_type;
  const Style* style;
  ModelBuilder* b;
  Dims d;
};

Result<int> SsmBits(const Fields& f) {
  const std::string dtype = f.StringOr("mamba_ssm_cache_dtype", f.StringOr("mamba_ssm_dtype", ""));
  if (dtype.empty()) return 0;
  if (dtype == "float32") return 32;
  if (dtype == "float16" || dtype == "bfloat16") return 16;
  return f.Bad(f.Has("mamba_ssm_cache_dtype") ? "mamba_ssm_cache_dtype" : "mamba_ssm_dtype",
               "unknown dtype \"" + dtype + "\" (known: float32, float16, bfloat16)");
}

// The attention of layer i under the generic keys.
Result<AttnPlan> GenericAttention(const Ctx& c, Int i, Mixer kind) {
  const Fields& f = c.f;
  const Dims& d = c.d;
  const auto u = static_cast<std::size_t>(i);
  AttnPlan a;
  a.q_heads = d.heads[u];
  a.kv_heads = d.kv_heads[u];
  a.qk_dim = d.head_dim;
  a.v_dim = d.v_head_dim;
  if (kind == Mixer::kLatent) {
    const bool indexer = d.sparse && !(u < d.shared_indexer.size() && d.shared_indexer[u]);
    a.kind = indexer ? AttnKind::kSparseLatent : AttnKind::kLatent;
    a.q_lora = d.q_lora;
    a.kv_lora = d.kv_lora;
    a.rope = d.rope;
    a.nope = d.nope;
    a.v_dim = d.v_head;
    a.index_heads = d.index_heads;
    a.index_dim = d.index_dim;
    // Layers reusing another's top-k attend the same number of tokens.
    if (d.sparse) a.sparse_topk = d.index_topk;
    // MiniCPM3 (vLLM minicpm3.py) up-projects K and V and caches them per
    // head, V padded to the key's width: an Attention of heads x (nope +
    // rope), not the latent.
    a.cache_full = c.model_type == "minicpm3";
    return a;
  }
  if (kind == Mixer::kSliding) {
    auto window = f.OptionalInt("sliding_window");
    if (!window) return window.error();
    if (!window->has_value()) {
      return f.Bad("sliding_window", "missing, but some layers use sliding attention");
    }
    a.kind = AttnKind::kSliding;
    a.window = **window;
  } else if (kind == Mixer::kChunked) {
    auto chunk = f.OptionalInt("attention_chunk_size");
    if (!chunk) return chunk.error();
    if (!chunk->has_value()) {
      return f.Bad("attention_chunk_size", "missing, but some layers use chunked attention");
    }
    a.kind = AttnKind::kChunked;
    a.window = **chunk;
  }
  // openPangu-Embedded and InternLM spell attention_bias "bias", StableLM
  // use_qkv_bias (q, k and v only); Qwen (v1) biases its
  // output projection unless no_bias.
  // Starcoder2 spells it use_bias (every projection); ChatGLM biases q/k/v
  // by add_qkv_bias and its dense projection by add_bias_linear.
  const char* bias_key = c.model_type == "PanguEmbedded" || c.model_type == "internlm" ? "bias"
                         : c.model_type == "stablelm" ? "use_qkv_bias"
                         : c.model_type == "starcoder2" || c.model_type == "ernie4_5_moe"
                             ? "use_bias"
                         : c.model_type == "chatglm" ? "add_qkv_bias"
                                                     : "attention_bias";
  auto bias = f.Bool(bias_key, c.model_type == "gpt_oss");
  if (!bias) return bias.error();
  auto no_bias = f.Bool("no_bias", true);
  if (!no_bias) return no_bias.error();
  auto linear_bias = f.Bool("add_bias_linear", false);
  if (!linear_bias) return linear_bias.error();
  // Grok (vLLM grok1.py): q, k, v and o never biased.
  const bool qkv_bias = (*bias || (c.style && c.style->qkv_bias_always)) && !IsGrok(c.model_type);
  a.qkv_bias = qkv_bias;
  a.o_bias = c.model_type == "chatglm"
                 ? *linear_bias
                 : (*bias && (!c.style || c.style->o_bias_with_qkv)) ||
                       (c.model_type == "qwen" && !*no_bias) || (c.style && c.style->o_bias_always);
  if (IsGrok(c.model_type)) a.o_bias = false;
  // Ling (vLLM bailing_moe.py): query_key_value biased by use_bias or
  // use_qkv_bias, the output projection (dense) by use_bias.
  if (c.model_type.starts_with("bailing_moe")) {
    auto use_bias = f.Bool("use_bias", false);
    if (!use_bias) return use_bias.error();
    auto use_qkv_bias = f.Bool("use_qkv_bias", false);
    if (!use_qkv_bias) return use_qkv_bias.error();
    a.qkv_bias = *use_bias || *use_qkv_bias;
    a.o_bias = *use_bias;
  }
  const QkNorm qk = c.style ? c.style->qk_norm : QkNorm::kNone;
  auto use_qk_norm = f.Bool("use_qk_norm", qk != QkNorm::kPerHeadIfFlag);
  if (!use_qk_norm) return use_qk_norm.error();
  if (qk == QkNorm::kPerHead || (qk == QkNorm::kPerHeadIfFlag && *use_qk_norm)) {
    a.q_norm = a.k_norm = a.qk_dim;
  } else if (qk == QkNorm::kFullWidth && *use_qk_norm) {
    a.q_norm = a.q_heads * a.qk_dim;
    a.k_norm = a.kv_heads * a.qk_dim;
  }
  a.sinks = c.model_type == "gpt_oss";
  // Muse-Glimmer: attn_output x sigmoid(gate_proj(x)), gate_proj hidden ->
  // heads x head_dim (the parameters of a q projection producing the gate).
  if (c.model_type == "muse_glimmer_text" || c.model_type == "afmoe") a.output_gate = true;
  if (u < d.block_sparse.size() && d.block_sparse[u]) {
    a.index_heads = d.index_heads;
    a.index_dim = d.index_dim;
    a.index_bits = 16;
    a.sparse_topk = d.index_topk;
  }
  a.head_gate = d.head_gate;
  // Step 3: queries through a rank of share_q_dim (vLLM step3_text.py; its
  // q_size is head_dim when the key is absent or 0).
  if (c.model_type == "step3_text") {
    auto rank = f.IntOr("share_q_dim", 0, 0);
    if (!rank) return rank.error();
    a.q_lora = *rank > 0 ? *rank : a.qk_dim;
  }
  return a;
}

Result<MoePlan> GenericMoe(const Ctx& c, const MoeLayers& m, Int i) {
  const auto u = static_cast<std::size_t>(i);
  // A layer a family rule builds as MoE (Nemotron-H's "E" blocks) in a
  // config whose experts ResolveMoe found none of (one routed expert).
  if (u >= m.experts.size() || u >= m.top_k.size() || u >= m.inter.size() ||
      u >= m.shared_inter.size()) {
    std::string key = "num_experts";
    for (const char* k :
         {"n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts"}) {
      if (c.f.Has(k)) {
        key = k;
        break;
      }
    }
    return c.f.Bad(key, "layer " + std::to_string(i) +
                            " is a mixture of experts, but the config gives it no more than one "
                            "routed expert");
  }
  MoePlan p;
  p.experts = m.experts[u];
  p.top_k = m.top_k[u];
  p.inter = m.inter[u];
  p.shared_inter = m.shared_inter[u];
  p.shared_gate = c.f.Has("shared_expert_intermediate_size") && c.model_type != "laguna";
  p.expert_bias = c.model_type == "gpt_oss";
  p.router_bias = c.model_type == "gpt_oss";
  auto routing_bias = c.f.Bool("use_routing_bias", false);
  if (!routing_bias) return routing_bias.error();
  p.score_bias = c.f.StringOr("topk_method", "") == "noaux_tc" || *routing_bias ||
                 c.model_type == "laguna" || c.model_type.starts_with("glm4_moe") ||
                 c.model_type == "glm4v_moe_text" || c.model_type == "glm_moe_dsa" ||
                 c.model_type == "ernie4_5_moe" || c.model_type == "afmoe" ||
                 c.model_type == "dots1" || c.model_type == "exaone_moe" ||
                 IsStep3p5(c.model_type);  // router_bias, one per expert (vLLM step3p5.py)
  // Ling's expert bias (moe_router_enable_expert_bias), LFM2-MoE's
  // (use_expert_bias, transformers' default true).
  if (c.model_type.starts_with("bailing_moe") || c.model_type == "lfm2_moe") {
    const bool ling = c.model_type != "lfm2_moe";
    auto expert_bias =
        ling ? c.f.Bool("moe_router_enable_expert_bias", false) : c.f.Bool("use_expert_bias", true);
    if (!expert_bias) return expert_bias.error();
    p.score_bias = *expert_bias;
  }
  return p;
}

Result<Int> DenseIntermediate(const Ctx& c) {
  auto mlp = c.f.OptionalInt("intermediate_size_mlp");  // Llama-4's dense layers
  if (!mlp) return mlp.error();
  // Qwen (v1): w1 and w2 of intermediate_size / 2 each.
  if (c.model_type == "qwen") return c.d.intermediate / 2;
  // MiniMax-M3: dense layers of dense_intermediate_size (vLLM
  // MiniMaxM3MLP), intermediate_size being the experts'.
  if (c.model_type == "minimax_m3") {
    auto dense = c.f.OptionalInt("dense_intermediate_size");
    if (!dense) return dense.error();
    return dense->value_or(c.d.intermediate);
  }
  return mlp->value_or(c.d.intermediate);
}

// The generic decoder layer: attention (or another mixer) + MLP or MoE + norms.
Status GenericLayers(Ctx& c, const std::vector<Mixer>& mixers, const MoeLayers& moe) {
  ModelBuilder& b = *c.b;
  const Style* s = c.style;
  // Without a family rule, ReLU-squared and xIELU MLPs are ungated (up and
  // down only) in every vLLM model that uses them (nemotron, arcee, jais2,
  // apertus, Nemotron-H).
  const std::string act = c.f.StringOr("hidden_act", "");
  const bool gated = s ? s->gated_mlp : act != "relu2" && act != "xielu";
  // The MLP's biases: mlp_bias, Starcoder2's use_bias, ChatGLM's
  // add_bias_linear, or always (GPT-NeoX, Phi, GPT-BigCode).
  const char* mlp_bias_key = c.model_type == "starcoder2" || c.model_type == "ernie4_5_moe" ||
                                     c.model_type.starts_with("bailing_moe")
                                 ? "use_bias"
                             : c.model_type == "chatglm" ? "add_bias_linear"
                                                         : "mlp_bias";
  auto mlp_bias_flag = c.f.Bool(mlp_bias_key, false);
  if (!mlp_bias_flag) return mlp_bias_flag.error();
  const bool mlp_bias = *mlp_bias_flag || (s && s->mlp_bias_always);
  auto dense = DenseIntermediate(c);
  if (!dense) return dense.error();
  auto dense_list = c.f.PerLayerInt("intermediate_size", c.d.layers);
  if (!dense_list) return dense_list.error();
  for (Int i = 0; i < c.d.layers; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const int layer = static_cast<int>(i);
    const Mixer kind = mixers[u];
    if (kind == Mixer::kFull || kind == Mixer::kSliding || kind == Mixer::kChunked ||
        kind == Mixer::kLatent) {
      auto a = GenericAttention(c, i, kind);
      if (!a) return a.error();
      b.Attention(layer, *a);
    } else if (kind != Mixer::kNone) {
      return Error(c.f.source() + ": layer " + std::to_string(i) + ": a " +
                   (kind == Mixer::kLinear  ? "linear-attention"
                    : kind == Mixer::kMamba ? "Mamba"
                                            : "convolution") +
                   " layer, which model_type \"" + c.model_type +
                   "\" does not define: kvbill cannot tell what it keeps");
    }
    if (moe.moe[u]) {
      auto m = GenericMoe(c, moe, i);
      if (!m) return m.error();
      m->gated = gated;
      b.Moe(layer, *m);
    } else {
      const Int inter = (dense_list->has_value() && !c.f.Has("intermediate_size_mlp") &&
                         c.model_type != "qwen" && c.model_type != "minimax_m3")
                            ? (**dense_list)[u]
                            : *dense;
      b.DenseMlp(layer, inter, gated, mlp_bias);
    }
    // Arctic's residual MLP has a norm of its own (residual_layernorm).
    const int extra = c.model_type == "arctic" && moe.moe[u] && moe.shared_inter[u] > 0 ? 1 : 0;
    b.Norms(layer, (s ? s->norms_per_layer : 2) + extra, c.d.hidden, s && s->layer_norm_bias);
  }
  return OkStatus();
}

// Multi-token-prediction modules the checkpoint carries (unused by plain decoding).
Status MtpModules(Ctx& c, Int count, bool moe_layer, const MoeLayers& moe) {
  if (count <= 0) return OkStatus();
  ModelBuilder& b = *c.b;
  const Int h = c.d.hidden;
  b.BeginMtp();
  for (Int k = 0; k < count; ++k) {
    const int layer = static_cast<int>(c.d.layers + k);
    const std::string p = b.LayerName(layer);
    b.Norms(layer, 2, h);                                // embedding and hidden norms
    b.Matrix(ParamRole::kMtp, p + "eh_proj", h, 2 * h);  // [embedding; hidden] -> hidden
    if (c.style && c.style->mtp_has_embeddings) {
      b.Matrix(ParamRole::kEmbedding, p + "embed_tokens", c.d.vocab, h);
      b.Matrix(ParamRole::kLmHead, p + "shared_head.head", c.d.vocab, h);
    }
    b.Norms(layer, 1, h);  // the shared head's norm
    AttnPlan a;
    auto generic = GenericAttention(c, c.d.layers - 1, c.d.mla ? Mixer::kLatent : Mixer::kFull);
    if (!generic) return generic.error();
    a = *generic;
    b.Attention(layer, a);
    const Int last = c.d.layers - 1;
    if (moe_layer && !moe.experts.empty()) {
      auto m = GenericMoe(c, moe, last);
      if (!m) return m.error();
      m->gated = !c.style || c.style->gated_mlp;
      b.Moe(layer, *m);
    } else {
      auto dense = DenseIntermediate(c);
      if (!dense) return dense.error();
      b.DenseMlp(layer, *dense, true, false);
    }
    b.Norms(layer, c.style ? c.style->norms_per_layer : 2, h);
  }
  b.EndOverride();
  return OkStatus();
}

// The MTP modules a config declares; `undeclared` when it names none (the
// count vLLM's model class defaults to).
Result<Int> MtpCount(const Fields& f, Int undeclared = 0) {
  auto n = f.FirstInt({"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 0);
  if (!n) return n.error();
  return n->value_or(undeclared);
}

bool AnyMoe(const MoeLayers& m) {
  return std::find(m.moe.begin(), m.moe.end(), true) != m.moe.end();
}

// ---- Families with their own layer layout --------------------------------

Status BuildGeneric(Ctx& c) {
  auto mixers = ResolveMixers(c.f, c.d, c.model_type, Family::kGeneric);
  if (!mixers) return mixers.error();
  auto moe = ResolveMoe(c.f, c.d, c.model_type);
  if (!moe) return moe.error();
  if (auto s = GenericLayers(c, *mixers, *moe); !s) return s;
  // MiniMax-M3's drafter builds num_mtp_modules layers (vLLM
  // minimax_m3/nvidia/mtp.py), whatever num_nextn_predict_layers says.
  auto mtp = c.model_type == "minimax_m3" && c.f.Has("num_mtp_modules")
                 ? c.f.FirstInt({"num_mtp_modules"}, 0)
                 : c.f.FirstInt({"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 0);
  if (!mtp) return mtp.error();
  // ERNIE 4.5's prediction layer is a Llama layer with a dense MLP (vLLM
  // ernie_mtp.py).
  return MtpModules(c, mtp->value_or(0), AnyMoe(*moe) && c.model_type != "ernie4_5_moe", *moe);
}

// Falcon (falcon/modeling_falcon.py): fused query_key_value, LayerNorms
// with bias, an ungated 4x MLP. The new decoder architecture has two
// LayerNorms per layer (num_ln_in_parallel_attn), the old parallel one one.
Status BuildFalcon(Ctx& c) {
  ModelBuilder& b = *c.b;
  auto bias = c.f.Bool("bias", false);
  if (!bias) return bias.error();
  auto new_arch = c.f.Bool("new_decoder_architecture", false);
  if (!new_arch) return new_arch.error();
  auto parallel = c.f.Bool("parallel_attn", true);
  if (!parallel) return parallel.error();
  auto lns = c.f.IntOr("num_ln_in_parallel_attn", *new_arch ? 2 : 1);
  if (!lns) return lns.error();
  const Int norms = *new_arch ? *lns : (*parallel ? 1 : 2);
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    AttnPlan a;
    a.q_heads = c.d.heads[0];
    a.kv_heads = c.d.kv_heads[0];
    a.qk_dim = a.v_dim = c.d.head_dim;
    a.qkv_bias = a.o_bias = *bias;
    b.Attention(layer, a);
    b.DenseMlp(layer, c.d.intermediate, false, *bias);
    b.Norms(layer, norms, c.d.hidden, true);
  }
  return OkStatus();
}

// BLOOM (bloom/modeling_bloom.py): ALiBi, biases everywhere, LayerNorms.
Status BuildBloom(Ctx& c) {
  ModelBuilder& b = *c.b;
  b.Norms(-1, 1, c.d.hidden, true);  // word_embeddings_layernorm
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    AttnPlan a;
    a.q_heads = a.kv_heads = c.d.heads[0];
    a.qk_dim = a.v_dim = c.d.head_dim;
    a.qkv_bias = a.o_bias = true;
    b.Attention(layer, a);
    b.DenseMlp(layer, 4 * c.d.hidden, false, true);
    b.Norms(layer, 2, c.d.hidden, true);
  }
  return OkStatus();
}

// Jamba (jamba/modeling_jamba.py): Mamba-1 mixers; attention every
// attn_layer_period layers; MoE every expert_layer_period layers.
Status BuildJamba(Ctx& c) {
  auto mixers = ResolveMixers(c.f, c.d, c.model_type, Family::kJamba);
  if (!mixers) return mixers.error();
  auto moe = ResolveMoe(c.f, c.d, c.model_type);
  if (!moe) return moe.error();
  Mamba1Plan m;
  auto expand = c.f.IntOr("mamba_expand", 2);
  if (!expand) return expand.error();
  auto d_state = c.f.IntOr("mamba_d_state", 16);
  if (!d_state) return d_state.error();
  auto d_conv = c.f.IntOr("mamba_d_conv", 4);
  if (!d_conv) return d_conv.error();
  Int dt_rank = (c.d.hidden + 15) / 16;  // "auto": ceil(hidden / 16)
  if (c.f.Has("mamba_dt_rank") && c.f.Get("mamba_dt_rank") != "auto") {
    auto r = c.f.OptionalInt("mamba_dt_rank");
    if (!r) return r.error();
    dt_rank = **r;
  }
  auto conv_bias = c.f.Bool("mamba_conv_bias", true);
  if (!conv_bias) return conv_bias.error();
  auto proj_bias = c.f.Bool("mamba_proj_bias", false);
  if (!proj_bias) return proj_bias.error();
  m.d_inner = *expand * c.d.hidden;
  m.d_state = *d_state;
  m.d_conv = *d_conv;
  m.dt_rank = dt_rank;
  m.conv_bias = *conv_bias;
  m.proj_bias = *proj_bias;
  m.dt_norms = true;
  std::vector<Mixer> attention_only = *mixers;
  for (Mixer& k : attention_only) {
    if (k == Mixer::kMamba) k = Mixer::kNone;
  }
  if (auto s = GenericLayers(c, attention_only, *moe); !s) return s;
  for (Int i = 0; i < c.d.layers; ++i) {
    if ((*mixers)[static_cast<std::size_t>(i)] == Mixer::kMamba)
      c.b->Mamba1(static_cast<int>(i), m);
  }
  return OkStatus();
}

Result<Mamba2Plan> ReadMamba2(const Fields& f, Int hidden, const char* heads_key,
                              const char* head_dim_key, const char* groups_key,
                              const char* state_key, const char* conv_key, const char* expand_key,
                              const char* conv_bias_key, const char* proj_bias_key,
                              Int d_inner_override, std::string_view d_inner_name = "");

// Mamba, Falcon-Mamba (Mamba-1) and Mamba-2 / Codestral Mamba: a mixer and
// one RMSNorm a layer, no attention, no MLP (vLLM mamba.py, mamba2.py). The
// Mamba-1 width is intermediate_size (transformers stores expand x hidden
// there; Falcon-Mamba's expand is stale), dt_rank time_step_rank ("auto":
// ceil(hidden / 16)).
Status BuildMamba(Ctx& c) {
  const Fields& f = c.f;
  if (c.model_type == "mamba2") {
    auto m = ReadMamba2(f, c.d.hidden, "num_heads", "head_dim", "n_groups", "state_size",
                        "conv_kernel", "expand", "use_conv_bias", "use_bias", 0);
    if (!m) return m.error();
    for (Int i = 0; i < c.d.layers; ++i) {
      c.b->Mamba2(static_cast<int>(i), *m);
      c.b->Norms(static_cast<int>(i), 1, c.d.hidden);
    }
    return OkStatus();
  }
  Mamba1Plan m;
  auto expand = f.IntOr("expand", 2);
  if (!expand) return expand.error();
  auto inner = f.IntOr("intermediate_size", *expand * c.d.hidden);
  if (!inner) return inner.error();
  auto state = f.IntOr("state_size", 16);
  if (!state) return state.error();
  auto conv = f.IntOr("conv_kernel", 4);
  if (!conv) return conv.error();
  Int dt_rank = (c.d.hidden + 15) / 16;
  if (f.Has("time_step_rank") && f.Get("time_step_rank") != "auto") {
    auto r = f.OptionalInt("time_step_rank");
    if (!r) return r.error();
    dt_rank = **r;
  }
  auto conv_bias = f.Bool("use_conv_bias", true);
  if (!conv_bias) return conv_bias.error();
  auto proj_bias = f.Bool("use_bias", false);
  if (!proj_bias) return proj_bias.error();
  m.d_inner = *inner;
  m.d_state = *state;
  m.d_conv = *conv;
  m.dt_rank = dt_rank;
  m.conv_bias = *conv_bias;
  m.proj_bias = *proj_bias;
  for (Int i = 0; i < c.d.layers; ++i) {
    c.b->Mamba1(static_cast<int>(i), m);
    c.b->Norms(static_cast<int>(i), 1, c.d.hidden);
  }
  return OkStatus();
}

Result<Mamba2Plan> ReadMamba2(const Fields& f, Int hidden, const char* heads_key,
                              const char* head_dim_key, const char* groups_key,
                              const char* state_key, const char* conv_key, const char* expand_key,
                              const char* conv_bias_key, const char* proj_bias_key,
                              Int d_inner_override, std::string_view d_inner_name) {
  Mamba2Plan m;
  auto heads = f.RequiredInt({heads_key});
  if (!heads) return heads.error();
  auto expand = f.IntOr(expand_key, 2);
  if (!expand) return expand.error();
  m.heads = *heads;
  m.d_inner = d_inner_override > 0 ? d_inner_override : *expand * hidden;
  if (f.Has(head_dim_key) && f.Get(head_dim_key) != "auto") {
    auto hd = f.OptionalInt(head_dim_key);
    if (!hd) return hd.error();
    m.head_dim = **hd;
    if (d_inner_override <= 0) {
      m.d_inner = m.heads * m.head_dim;
    } else if (m.heads * m.head_dim != m.d_inner) {
      // FalconH1Config.validate_architecture refuses it: the heads must
      // tile the Mamba width (mamba_d_ssm).
      return f.Bad(head_dim_key, std::to_string(m.head_dim) + " x " + heads_key + " " +
                                     std::to_string(m.heads) + " is not the Mamba width " +
                                     std::string(d_inner_name) + " " + std::to_string(m.d_inner));
    }
  } else {
    if (m.d_inner % m.heads != 0) {
      return f.Bad(heads_key, std::to_string(m.heads) + " does not divide the Mamba width " +
                                  std::to_string(m.d_inner));
    }
    m.head_dim = m.d_inner / m.heads;
  }
  auto groups = f.IntOr(groups_key, 1);
  if (!groups) return groups.error();
  auto state = f.IntOr(state_key, 128);
  if (!state) return state.error();
  auto conv = f.IntOr(conv_key, 4);
  if (!conv) return conv.error();
  auto conv_bias = f.Bool(conv_bias_key, true);
  if (!conv_bias) return conv_bias.error();
  auto proj_bias = f.Bool(proj_bias_key, false);
  if (!proj_bias) return proj_bias.error();
  auto bits = SsmBits(f);
  if (!bits) return bits.error();
  m.groups = *groups;
  m.d_state = *state;
  m.d_conv = *conv;
  m.conv_bias = *conv_bias;
  m.proj_bias = *proj_bias;
  m.ssm_bits = *bits;
  return m;
}

// Nemotron-H's MTP module (vLLM nemotron_h_mtp.py, NemotronHMultiTokenPredictor):
// num_nextn_predict_layers (one at most there) steps of the blocks of
// mtp_hybrid_override_pattern (or mtp_layers_block_type), each '*'
// attention or 'E' MoE as in the main model with its norm; the first block
// adds the embedding and hidden norms and eh_proj (2 x hidden -> hidden, no
// bias), the last a final norm. It shares the embeddings and lm_head. The
// checkpoint carries it (counted as MTP, not in the served model's totals).
template <typename AddBlock>
Status NemotronHMtp(Ctx& c, const AddBlock& add_block) {
  const Fields& f = c.f;
  auto count = MtpCount(f);
  if (!count) return count.error();
  if (*count == 0) return OkStatus();
  if (*count != 1) {
    return f.Bad(
        "num_nextn_predict_layers",
        "is " + std::to_string(*count) + ": vLLM's nemotron_h_mtp.py builds one MTP module only");
  }
  std::vector<char> blocks;
  std::string where = "mtp_hybrid_override_pattern";
  if (f.Has(where) && f.Get(where).is_string()) {
    for (char ch : f.Get(where).get<std::string>()) blocks.push_back(ch);
  } else if (f.Has("mtp_layers_block_type") && f.Get("mtp_layers_block_type").is_array()) {
    where = "mtp_layers_block_type";
    const json& list = f.Get(where);
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i] == "attention") {
        blocks.push_back('*');
      } else if (list[i] == "moe") {
        blocks.push_back('E');
      } else {
        return f.Bad(where + "[" + std::to_string(i) + "]",
                     "is " + Show(list[i]) +
                         ": vLLM's nemotron_h_mtp.py builds only attention and moe blocks");
      }
    }
  } else {
    return f.Bad(where,
                 "missing (nor mtp_layers_block_type), where num_nextn_predict_layers "
                 "is 1: kvbill cannot tell the MTP module's blocks");
  }
  if (blocks.empty()) return f.Bad(where, "has no blocks, where num_nextn_predict_layers is 1");
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i] != '*' && blocks[i] != 'E') {
      return f.Bad(where, std::string("character ") + std::to_string(i) + " is '" + blocks[i] +
                              "': vLLM's nemotron_h_mtp.py builds only * attention and E MoE");
    }
  }
  ModelBuilder& b = *c.b;
  const Int h = c.d.hidden;
  b.BeginMtp();
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const int layer = static_cast<int>(c.d.layers + static_cast<Int>(k));
    if (k == 0) {
      b.Norms(layer, 2, h);  // enorm, hnorm
      b.Matrix(ParamRole::kMtp, b.LayerName(layer) + "eh_proj", h, 2 * h);
    }
    if (auto s = add_block(layer, blocks[k], c.d.layers - 1); !s) return s;
    if (k + 1 == blocks.size()) b.Norms(layer, 1, h);  // final_layernorm
  }
  b.EndOverride();
  return OkStatus();
}

// Nemotron-H (nemotron_h/modeling_nemotron_h.py): one block per layer, its
// kind from hybrid_override_pattern (M Mamba-2, * attention, - MLP, E MoE)
// or layers_block_type; one norm per block.
Status BuildNemotronH(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  std::vector<char> blocks;
  std::string where;
  if (f.Has("layers_block_type") && f.Get("layers_block_type").is_array()) {
    where = "layers_block_type";
    const json& list = f.Get("layers_block_type");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string s = list[i].is_string() ? list[i].get<std::string>() : "";
      if (s == "mamba" || s == "linear_attention") {
        blocks.push_back('M');
      } else if (s == "attention" || s == "full_attention") {
        blocks.push_back('*');
      } else if (s == "mlp") {
        blocks.push_back('-');
      } else if (s == "moe") {
        blocks.push_back('E');
      } else {
        return f.Bad(where + "[" + std::to_string(i) + "]",
                     "unknown block " + Show(list[i]) + " for model_type \"" + c.model_type +
                         "\" (known: mamba, attention, mlp, moe)");
      }
    }
  } else {
    where = "hybrid_override_pattern";
    if (!f.Has(where) || !f.Get(where).is_string()) return f.Bad(where, "must be a string");
    const std::string pattern = f.Get(where).get<std::string>();
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      const char ch = pattern[i];
      if (ch != 'M' && ch != '*' && ch != '-' && ch != 'E') {
        return f.Bad(where, std::string("character ") + std::to_string(i) + " is '" + ch +
                                "', which model_type \"" + c.model_type +
                                "\" does not define (known: M Mamba-2, * attention, - MLP, E MoE)");
      }
      blocks.push_back(ch);
    }
  }
  if (blocks.empty()) return f.Bad(where, "has no layers");
  if (static_cast<Int>(blocks.size()) != c.d.layers) {
    return f.Bad(where, "has " + std::to_string(blocks.size()) + " layers, num_hidden_layers is " +
                            std::to_string(c.d.layers));
  }
  auto m2 =
      ReadMamba2(f, c.d.hidden, "mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size",
                 "conv_kernel", "expand", "use_conv_bias", "mamba_proj_bias", 0);
  if (!m2) return m2.error();
  auto mlp_bias = f.Bool("mlp_bias", false);
  if (!mlp_bias) return mlp_bias.error();
  auto moe = ResolveMoe(f, c.d, c.model_type);
  if (!moe) return moe.error();
  auto latent = f.OptionalInt("moe_latent_size");
  if (!latent) return latent.error();
  // One block and its norm; `i` is the main-model layer whose settings an
  // attention or MoE block takes.
  const auto add_block = [&](int layer, char kind, Int i) -> Status {
    switch (kind) {
      case 'M':
        b.Mamba2(layer, *m2);
        break;
      case '*': {
        auto a = GenericAttention(c, i, Mixer::kFull);
        if (!a) return a.error();
        b.Attention(layer, *a);
        break;
      }
      case '-':
        b.DenseMlp(layer, c.d.intermediate, false, *mlp_bias);
        break;
      case 'E': {
        if (moe->experts.empty()) return f.Bad("n_routed_experts", "missing for an E block");
        auto m = GenericMoe(c, *moe, i);
        if (!m) return m.error();
        m->gated = false;
        m->shared_gated = false;
        m->score_bias = true;
        m->in_dim = latent->value_or(0);
        b.Moe(layer, *m);
        break;
      }
    }
    b.Norms(layer, 1, c.d.hidden);
    return OkStatus();
  };
  for (Int i = 0; i < c.d.layers; ++i) {
    if (auto s = add_block(static_cast<int>(i), blocks[static_cast<std::size_t>(i)], i); !s) {
      return s;
    }
  }
  return NemotronHMtp(c, add_block);
}

// DeciLM / Nemotron NAS (modeling_decilm.py): block_configs give each
// layer's attention (KV heads = heads / n_heads_in_group, or no_op, or a
// linear replacement) and FFN (ffn_mult, no_op or linear).
Status BuildNemotronNas(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  if (!f.Has("block_configs") || !f.Get("block_configs").is_array()) {
    return f.Bad("block_configs",
                 "missing: model_type \"" + c.model_type + "\" describes its layers there");
  }
  const json& blocks = f.Get("block_configs");
  if (static_cast<Int>(blocks.size()) != c.d.layers) {
    return f.Bad("block_configs", "has " + std::to_string(blocks.size()) +
                                      " entries, num_hidden_layers is " +
                                      std::to_string(c.d.layers));
  }
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    const std::string at = "block_configs[" + std::to_string(i) + "]";
    const json& block = blocks[static_cast<std::size_t>(i)];
    if (!block.is_object()) return f.Bad(at, "must be an object");
    const json empty = json::object();
    const json& attn = block.contains("attention") ? block["attention"] : empty;
    const json& ffn = block.contains("ffn") ? block["ffn"] : empty;
    const Fields fa(attn, f.source(), f.prefix() + at + ".attention.");
    const Fields ff(ffn, f.source(), f.prefix() + at + ".ffn.");
    auto attn_noop = fa.Bool("no_op", false);
    if (!attn_noop) return attn_noop.error();
    auto attn_linear = fa.Bool("replace_with_linear", false);
    if (!attn_linear) return attn_linear.error();
    if (fa.Has("num_sink_tokens") || fa.Has("sparsify")) {
      return fa.Bad(fa.Has("num_sink_tokens") ? "num_sink_tokens" : "sparsify",
                    "is set, and kvbill cannot tell what such an attention of model_type \"" +
                        c.model_type + "\" keeps");
    }
    if (*attn_linear) {
      b.LinearReplacement(layer, ParamRole::kAttention, "self_attn");
    } else if (!*attn_noop) {
      auto group = fa.RequiredInt({"n_heads_in_group"});
      if (!group) return group.error();
      const Int heads = c.d.heads[static_cast<std::size_t>(i)];
      if (heads % *group != 0) {
        return fa.Bad("n_heads_in_group", std::to_string(*group) +
                                              " does not divide num_attention_heads " +
                                              std::to_string(heads));
      }
      AttnPlan a;
      a.q_heads = heads;
      a.kv_heads = heads / *group;
      a.qk_dim = a.v_dim = c.d.head_dim;
      auto window = fa.OptionalInt("window_length");
      if (!window) return window.error();
      if (window->has_value()) {
        a.kind = AttnKind::kSliding;
        a.window = **window;
      }
      b.Attention(layer, a);
    }
    auto ffn_noop = ff.Bool("no_op", false);
    if (!ffn_noop) return ffn_noop.error();
    auto ffn_linear = ff.Bool("replace_with_linear", false);
    if (!ffn_linear) return ffn_linear.error();
    if (*ffn_linear) {
      b.LinearReplacement(layer, ParamRole::kDenseMlp, "mlp");
    } else if (!*ffn_noop) {
      auto mult = ff.OptionalNumber("ffn_mult");
      if (!mult) return mult.error();
      if (!mult->has_value()) return ff.Bad("ffn_mult", "missing");
      // _ffn_mult_to_intermediate_size: int(2 * mult * hidden / 3) rounded up to 256.
      const Int raw = static_cast<Int>(2.0 * **mult * static_cast<double>(c.d.hidden) / 3.0);
      b.DenseMlp(layer, (raw + 255) / 256 * 256, true, false);
    }
    // input_layernorm with the attention, post_attention_layernorm with the FFN.
    b.Norms(layer, (*attn_noop ? 0 : 1) + (*ffn_noop ? 0 : 1), c.d.hidden);
  }
  return OkStatus();
}

// Granite 4 hybrid (granitemoehybrid/modeling_granitemoehybrid.py):
// layer_types mamba / attention (all Mamba-2 when absent), MoE experts
// (input_linear gate+up, output_linear) plus a shared MLP, or the shared
// MLP alone when num_local_experts is 0 (as transformers reads it, and as
// IBM publishes its dense hybrids).
Status BuildGraniteHybrid(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  std::vector<Mixer> mixers(static_cast<std::size_t>(c.d.layers), Mixer::kMamba);
  if (f.Has("layer_types") || f.Has("layers_block_type")) {
    const std::string key = f.Has("layer_types") ? "layer_types" : "layers_block_type";
    const json& t = f.Get(key);
    if (!t.is_array() || static_cast<Int>(t.size()) != c.d.layers) {
      return f.Bad(key, "must be a list of " + std::to_string(c.d.layers) + " strings");
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] == "attention") {
        mixers[i] = Mixer::kFull;
      } else if (t[i] != "mamba") {
        return f.Bad(key + "[" + std::to_string(i) + "]", "unknown layer type " + Show(t[i]) +
                                                              " for model_type \"" + c.model_type +
                                                              "\" (known: mamba, attention)");
      }
    }
  }
  // Bamba (vLLM bamba.py): attention at attn_layer_indices, a dense MLP of
  // intermediate_size in every layer.
  const bool bamba = c.model_type == "bamba";
  if (bamba) {
    auto listed = f.OptionalIntList("attn_layer_indices");
    if (!listed) return listed.error();
    if (!listed->has_value()) return f.Bad("attn_layer_indices", "missing");
    for (const Int i : **listed) {
      if (i < 0 || i >= c.d.layers) {
        return f.Bad("attn_layer_indices", "names layer " + std::to_string(i) + ", outside 0 to " +
                                               std::to_string(c.d.layers - 1));
      }
      mixers[static_cast<std::size_t>(i)] = Mixer::kFull;
    }
  }
  auto m2 =
      ReadMamba2(f, c.d.hidden, "mamba_n_heads", "mamba_d_head", "mamba_n_groups", "mamba_d_state",
                 "mamba_d_conv", "mamba_expand", "mamba_conv_bias", "mamba_proj_bias", 0);
  if (!m2) return m2.error();
  auto experts = f.IntOr("num_local_experts", 0, 0);
  if (!experts) return experts.error();
  auto top_k = f.IntOr("num_experts_per_tok", 0, 0);
  if (!top_k) return top_k.error();
  if (*experts > 0 && (*top_k < 1 || *top_k > *experts)) {
    return f.Bad("num_experts_per_tok", "must be in [1, num_local_experts " +
                                            std::to_string(*experts) + "], got " +
                                            std::to_string(*top_k));
  }
  auto shared = bamba ? Result<Int>(c.d.intermediate) : f.IntOr("shared_intermediate_size", 0, 0);
  if (!shared) return shared.error();
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    if (mixers[static_cast<std::size_t>(i)] == Mixer::kMamba) {
      b.Mamba2(layer, *m2);
    } else {
      auto a = GenericAttention(c, i, Mixer::kFull);
      if (!a) return a.error();
      b.Attention(layer, *a);
    }
    if (*experts > 0) {
      MoePlan m;
      m.experts = *experts;
      m.top_k = *top_k;
      m.inter = c.d.intermediate;
      m.shared_inter = *shared;
      b.Moe(layer, m);
    } else if (*shared > 0) {
      b.DenseMlp(layer, *shared, true, false);
    }
    b.Norms(layer, 2, c.d.hidden);
  }
  return OkStatus();
}

// PLaMo 2 (vLLM plamo2.py; pfnet's remote configuration, whose defaults
// the defaults table holds): layer i is a Mamba mixer unless i % mamba_step
// == mamba_step / 2 (with no more layers than mamba_step / 2, every layer
// but the last); vLLM does not read mamba_enabled. Attention layers run the
// model-wide sliding window (sliding_window, which the configuration sets
// from attention_window_size: vLLM reads no full_attention_idx), with
// q and k norms of heads x hidden_size_per_head. Every layer has four
// norms (before and after the mixer and the MLP) and a gated MLP.
Status BuildPlamo2(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  auto step = f.IntOr("mamba_step", 2, 2);
  if (!step) return step.error();
  auto heads = f.RequiredInt({"mamba_num_heads"});
  if (!heads) return heads.error();
  auto head_dim = f.RequiredInt({"hidden_size_per_head"});
  if (!head_dim) return head_dim.error();
  auto d_state = f.RequiredInt({"mamba_d_state"});
  if (!d_state) return d_state.error();
  auto d_conv = f.RequiredInt({"mamba_d_conv"});
  if (!d_conv) return d_conv.error();
  PlamoMambaPlan m;
  m.heads = *heads;
  m.head_dim = *head_dim;
  m.d_state = *d_state;
  m.d_conv = *d_conv;
  m.dt_rank = std::max<Int>(64, c.d.hidden / 16);
  const Int n = c.d.layers;
  for (Int i = 0; i < n; ++i) {
    const int layer = static_cast<int>(i);
    const bool mamba = n <= *step / 2 ? i != n - 1 : i % *step != *step / 2;
    if (mamba) {
      b.PlamoMamba(layer, m);
    } else {
      auto a = GenericAttention(c, i, Mixer::kSliding);
      if (!a) return a.error();
      b.Attention(layer, *a);
    }
    b.DenseMlp(layer, c.d.intermediate, true, false);
    b.Norms(layer, 4, c.d.hidden);
  }
  return OkStatus();
}

// Falcon-H1 (falcon_h1/modeling_falcon_h1.py): every layer runs attention
// and a Mamba-2 mixer side by side, then a gated MLP: two inventory entries
// per layer.
Status BuildFalconH1(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  auto d_ssm = f.OptionalInt("mamba_d_ssm");
  if (!d_ssm) return d_ssm.error();
  auto m2 = ReadMamba2(f, c.d.hidden, "mamba_n_heads", "mamba_d_head", "mamba_n_groups",
                       "mamba_d_state", "mamba_d_conv", "mamba_expand", "mamba_conv_bias",
                       "mamba_proj_bias", d_ssm->value_or(0), "mamba_d_ssm");
  if (!m2) return m2.error();
  auto rms = f.Bool("mamba_rms_norm", false);
  if (!rms) return rms.error();
  m2->gated_norm = *rms;
  auto mlp_bias = f.Bool("mlp_bias", false);
  if (!mlp_bias) return mlp_bias.error();
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    auto a = GenericAttention(c, i, Mixer::kFull);
    if (!a) return a.error();
    b.Attention(layer, *a);
    b.Mamba2(layer, *m2);
    b.DenseMlp(layer, c.d.intermediate, true, *mlp_bias);
    b.Norms(layer, 2, c.d.hidden);
  }
  return OkStatus();
}

// LFM2 (lfm2/modeling_lfm2.py): short-convolution layers and attention
// layers (layer_types, or full_attn_idxs), a SwiGLU whose width is adjusted
// as block_auto_adjust_ff_dim says.
Status BuildLfm2(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  std::vector<Mixer> mixers(static_cast<std::size_t>(c.d.layers), Mixer::kFull);
  if (f.Has("layer_types")) {
    auto m = ResolveMixers(f, c.d, c.model_type, Family::kLfm2);
    if (!m) return m.error();
    mixers = *m;
  } else if (f.Has("full_attn_idxs")) {
    auto idx = f.OptionalIntList("full_attn_idxs");
    if (!idx) return idx.error();
    for (Int i = 0; i < c.d.layers; ++i) {
      const bool attn = std::find((*idx)->begin(), (*idx)->end(), i) != (*idx)->end();
      mixers[static_cast<std::size_t>(i)] = attn ? Mixer::kFull : Mixer::kConv;
    }
  }
  auto kernel = f.IntOr("conv_L_cache", 3);
  if (!kernel) return kernel.error();
  auto conv_bias = f.Bool("conv_bias", false);
  if (!conv_bias) return conv_bias.error();
  auto ff = f.FirstInt({"block_ff_dim", "intermediate_size"});
  if (!ff) return ff.error();
  Int inter = ff->value_or(c.d.intermediate);
  // LFM2-MoE's dense layers take intermediate_size as it is (vLLM lfm2_moe.py).
  const bool moe_model = c.model_type == "lfm2_moe";
  auto adjust = f.Bool("block_auto_adjust_ff_dim", !moe_model);
  if (!adjust) return adjust.error();
  if (*adjust) {
    auto multiplier = f.OptionalNumber("block_ffn_dim_multiplier");
    if (!multiplier) return multiplier.error();
    auto multiple = f.IntOr("block_multiple_of", 256);
    if (!multiple) return multiple.error();
    inter = static_cast<Int>(2 * inter / 3);
    if (multiplier->has_value()) {
      inter = static_cast<Int>(**multiplier * static_cast<double>(inter));
    }
    inter = *multiple * ((inter + *multiple - 1) / *multiple);
  }
  // A model type read by this rule through its conv_L_cache key (no rule
  // of its own) whose experts the rule would not build: refused.
  if (!moe_model) {
    for (const char* key : {"num_experts", "num_local_experts", "moe_intermediate_size"}) {
      if (f.Has(key)) {
        return f.Bad(key, "kvbill reads model_type \"" + c.model_type +
                              "\" by the LFM2 rule, which has no experts (lfm2_moe has)");
      }
    }
  }
  auto moe = moe_model ? ResolveMoe(f, c.d, c.model_type) : Result<MoeLayers>(MoeLayers{});
  if (!moe) return moe.error();
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    const Mixer kind = mixers[static_cast<std::size_t>(i)];
    if (kind == Mixer::kConv) {
      b.ShortConv(layer, c.d.hidden, *kernel, *conv_bias);
    } else if (kind == Mixer::kFull) {
      auto a = GenericAttention(c, i, Mixer::kFull);
      if (!a) return a.error();
      b.Attention(layer, *a);
    } else {
      return f.Bad("layer_types[" + std::to_string(i) + "]",
                   "is not a layer model_type \"" + c.model_type +
                       "\" defines (known: conv, full_attention)");
    }
    if (moe_model && moe->moe[static_cast<std::size_t>(i)]) {
      auto m = GenericMoe(c, *moe, i);
      if (!m) return m.error();
      b.Moe(layer, *m);
    } else {
      b.DenseMlp(layer, inter, true, false);
    }
    b.Norms(layer, 2, c.d.hidden);
  }
  return OkStatus();
}

// Qwen3-Next / Qwen3.5 (qwen3_next/modeling_qwen3_next.py): gated DeltaNet
// layers and gated attention layers (the q projection also yields an output
// gate), MoE with a gated shared expert or a dense MLP, MTP layers.
Status BuildGatedDeltaNet(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  auto mixers = ResolveMixers(f, c.d, c.model_type, Family::kGatedDeltaNet);
  if (!mixers) return mixers.error();
  auto moe = ResolveMoe(f, c.d, c.model_type);
  if (!moe) return moe.error();
  GdnPlan g;
  auto vh = f.RequiredInt({"linear_num_value_heads"});
  if (!vh) return vh.error();
  auto kh = f.RequiredInt({"linear_num_key_heads"});
  if (!kh) return kh.error();
  auto kd = f.RequiredInt({"linear_key_head_dim"});
  if (!kd) return kd.error();
  auto vd = f.RequiredInt({"linear_value_head_dim"});
  if (!vd) return vd.error();
  auto conv = f.IntOr("linear_conv_kernel_dim", 4);
  if (!conv) return conv.error();
  auto bits = SsmBits(f);
  if (!bits) return bits.error();
  g = GdnPlan{*kh, *vh, *kd, *vd, *conv, *bits};
  auto gate = f.Bool("attn_output_gate", true);
  if (!gate) return gate.error();
  std::vector<Mixer> attention_only = *mixers;
  for (Mixer& k : attention_only) {
    if (k == Mixer::kLinear) k = Mixer::kNone;
  }
  // Attention layers first through the generic path, with the output gate.
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    const Mixer kind = (*mixers)[static_cast<std::size_t>(i)];
    if (kind == Mixer::kLinear) {
      b.GatedDeltaNet(layer, g);
    } else if (kind == Mixer::kFull || kind == Mixer::kSliding) {
      auto a = GenericAttention(c, i, kind);
      if (!a) return a.error();
      a->output_gate = *gate;
      b.Attention(layer, *a);
    } else {
      return f.Bad("layer_types[" + std::to_string(i) + "]",
                   "is not a layer model_type \"" + c.model_type +
                       "\" defines (known: linear_attention, full_attention)");
    }
    if (moe->moe[static_cast<std::size_t>(i)]) {
      auto m = GenericMoe(c, *moe, i);
      if (!m) return m.error();
      b.Moe(layer, *m);
    } else {
      b.DenseMlp(layer, c.d.intermediate, true, false);
    }
    b.Norms(layer, 2, c.d.hidden);
  }
  // MTP (mtp_num_hidden_layers): fc over [embedding; hidden], two pre-norms,
  // decoder layers with gated attention, a final norm. Qwen3-Next's configs
  // declare none, yet its checkpoints ship one module, which vLLM builds
  // (qwen3_next_mtp.py: getattr(config, "num_nextn_predict_layers", 1)).
  auto mtp = MtpCount(f, c.model_type == "qwen3_next" ? 1 : 0);
  if (!mtp) return mtp.error();
  if (*mtp > 0) {
    b.BeginMtp();
    const Int h = c.d.hidden;
    b.Matrix(ParamRole::kMtp, "mtp.fc", h, 2 * h);
    b.Norms(static_cast<int>(c.d.layers), 3, h);
    for (Int k = 0; k < *mtp; ++k) {
      const int layer = static_cast<int>(c.d.layers + k);
      auto a = GenericAttention(c, c.d.layers - 1, Mixer::kFull);
      if (!a) return a.error();
      a->output_gate = *gate;
      b.Attention(layer, *a);
      if (AnyMoe(*moe)) {
        auto m = GenericMoe(c, *moe, c.d.layers - 1);
        if (!m) return m.error();
        b.Moe(layer, *m);
      } else {
        b.DenseMlp(layer, c.d.intermediate, true, false);
      }
      b.Norms(layer, 2, h);
    }
    b.EndOverride();
  }
  return OkStatus();
}

// MiniMax-Text-01 / M1 (minimax/modeling_minimax.py): lightning attention
// layers (a heads x head_dim x head_dim state) and softmax attention layers,
// MoE in every layer.
Status BuildLightning(Ctx& c) {
  ModelBuilder& b = *c.b;
  auto mixers = ResolveMixers(c.f, c.d, c.model_type, Family::kLightning);
  if (!mixers) return mixers.error();
  auto moe = ResolveMoe(c.f, c.d, c.model_type);
  if (!moe) return moe.error();
  std::vector<Mixer> attention_only = *mixers;
  for (Mixer& k : attention_only) {
    if (k == Mixer::kLinear) k = Mixer::kNone;
  }
  if (auto s = GenericLayers(c, attention_only, *moe); !s) return s;
  for (Int i = 0; i < c.d.layers; ++i) {
    if ((*mixers)[static_cast<std::size_t>(i)] == Mixer::kLinear) {
      LightningPlan l;
      l.heads = c.d.heads[static_cast<std::size_t>(i)];
      l.head_dim = c.d.head_dim;
      b.Lightning(static_cast<int>(i), l);
    }
  }
  return OkStatus();
}

// Ring-linear 2.0 (SGLang bailing_moe_linear.py, BailingMoeLinearV2ForCausalLM;
// Ring-mini-linear-2.0, Ring-flash-linear-2.0): layer i is softmax attention
// when (i + 1) % layer_group_size == 0 (Ling's GQA: fused query_key_value of
// num_key_value_heads, per-head q and k norms with use_qk_norm) and lightning
// attention otherwise: multi-head (keys and values for every query head,
// whatever num_key_value_heads says), the same q and k norms, an output gate
// g_proj, a group RMSNorm g_norm over heads x head_dim and a heads x head_dim
// x head_dim state in the model's dtype. MoE from first_k_dense_replace on,
// with Ling's shared experts. vLLM's bailing_moe_linear.py is Ling 2.5's
// layout (MLA softmax layers from kv_lora_rank): such a config is refused.
Status BuildBailingLinear(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  if (c.d.mla) {
    return f.Bad("kv_lora_rank",
                 "is set: latent (MLA) softmax layers are Ling 2.5's layout (vLLM's "
                 "bailing_moe_linear.py), which kvbill does not size; model_type "
                 "\"bailing_moe_linear\" is read as Ring-linear 2.0 (GQA softmax layers)");
  }
  auto group = f.RequiredInt({"layer_group_size"});
  if (!group) return group.error();
  if (*group < 1 || c.d.layers % *group != 0) {
    return f.Bad("layer_group_size", "must divide num_hidden_layers " + std::to_string(c.d.layers) +
                                         " (SGLang asserts it), got " + std::to_string(*group));
  }
  auto moe = ResolveMoe(f, c.d, c.model_type);
  if (!moe) return moe.error();
  auto qk_norm = f.Bool("use_qk_norm", false);
  if (!qk_norm) return qk_norm.error();
  auto use_bias = f.Bool("use_bias", false);
  if (!use_bias) return use_bias.error();
  auto qkv_bias = f.Bool("use_qkv_bias", false);
  if (!qkv_bias) return qkv_bias.error();
  const auto linear = [&](Int i) { return (i + 1) % *group != 0; };
  std::vector<Mixer> attention_only(static_cast<std::size_t>(c.d.layers), Mixer::kFull);
  for (Int i = 0; i < c.d.layers; ++i) {
    if (linear(i)) attention_only[static_cast<std::size_t>(i)] = Mixer::kNone;
  }
  if (auto s = GenericLayers(c, attention_only, *moe); !s) return s;
  for (Int i = 0; i < c.d.layers; ++i) {
    if (!linear(i)) continue;
    LightningPlan l;
    l.heads = c.d.heads[static_cast<std::size_t>(i)];
    l.head_dim = c.d.head_dim;
    l.qk_norm = *qk_norm;
    l.qkv_bias = *use_bias || *qkv_bias;
    l.out_bias = *use_bias;
    l.qkv = "query_key_value";
    l.gate = "g_proj";
    l.out = "dense";
    l.norm = "g_norm";
    b.Lightning(static_cast<int>(i), l);
  }
  return OkStatus();
}

// MiMo-V2-Flash (mimo_v2_flash/modeling_mimo_v2_flash.py and the model's
// own config keys): hybrid_layer_pattern 0 = full attention, 1 = sliding;
// sliding layers have their own heads, KV heads and head dims (swa_*), and
// V head dim differs from K's.
Status BuildMimoV2(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  std::vector<Mixer> mixers;
  if (f.Has("hybrid_layer_pattern")) {
    auto pattern = f.PerLayerInt("hybrid_layer_pattern", c.d.layers, 0);
    if (!pattern) return pattern.error();
    for (Int i = 0; i < c.d.layers; ++i) {
      const Int v = (**pattern)[static_cast<std::size_t>(i)];
      if (v != 0 && v != 1) {
        return f.Bad("hybrid_layer_pattern[" + std::to_string(i) + "]",
                     "must be 0 (full attention) or 1 (sliding window) for model_type \"" +
                         c.model_type + "\", got " + std::to_string(v));
      }
      mixers.push_back(v == 1 ? Mixer::kSliding : Mixer::kFull);
    }
  } else if (f.Has("layer_types")) {
    auto m = ResolveMixers(f, c.d, c.model_type, Family::kMimoV2);
    if (!m) return m.error();
    mixers = *m;
  } else {
    // The class default: full attention on layer 0 and every 6th layer.
    for (Int i = 0; i < c.d.layers; ++i) {
      mixers.push_back((i == 0 || (i + 1) % 6 == 0) ? Mixer::kFull : Mixer::kSliding);
    }
  }
  auto moe = ResolveMoe(f, c.d, c.model_type);
  if (!moe) return moe.error();
  auto window = f.FirstInt({"sliding_window", "sliding_window_size"});
  if (!window) return window.error();
  auto swa_heads = f.IntOr("swa_num_attention_heads", c.d.heads[0]);
  if (!swa_heads) return swa_heads.error();
  auto swa_kv = f.IntOr("swa_num_key_value_heads", c.d.kv_heads[0]);
  if (!swa_kv) return swa_kv.error();
  auto swa_dim = f.IntOr("swa_head_dim", c.d.head_dim);
  if (!swa_dim) return swa_dim.error();
  auto swa_v = f.IntOr("swa_v_head_dim", c.d.v_head_dim);
  if (!swa_v) return swa_v.error();
  auto swa_sinks = f.Bool("add_swa_attention_sink_bias", false);
  if (!swa_sinks) return swa_sinks.error();
  auto full_sinks = f.Bool("add_full_attention_sink_bias", false);
  if (!full_sinks) return full_sinks.error();
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    AttnPlan a;
    if (mixers[static_cast<std::size_t>(i)] == Mixer::kSliding) {
      if (!window->has_value()) {
        return f.Bad("sliding_window", "missing, but some layers use sliding attention");
      }
      a.kind = AttnKind::kSliding;
      a.window = **window;
      a.q_heads = *swa_heads;
      a.kv_heads = *swa_kv;
      a.qk_dim = *swa_dim;
      a.v_dim = *swa_v;
      a.sinks = *swa_sinks;
    } else {
      a.q_heads = c.d.heads[static_cast<std::size_t>(i)];
      a.kv_heads = c.d.kv_heads[static_cast<std::size_t>(i)];
      a.qk_dim = c.d.head_dim;
      a.v_dim = c.d.v_head_dim;
      a.sinks = *full_sinks;
    }
    b.Attention(layer, a);
    if (moe->moe[static_cast<std::size_t>(i)]) {
      auto m = GenericMoe(c, *moe, i);
      if (!m) return m.error();
      b.Moe(layer, *m);
    } else {
      b.DenseMlp(layer, c.d.intermediate, true, false);
    }
    b.Norms(layer, 2, c.d.hidden);
  }
  return OkStatus();
}

// Hunyuan MoE (vLLM hunyuan_v1.py; per-layer lists of moe_topk,
// moe_intermediate_size and num_shared_expert): routed experts plus a
// shared MLP of intermediate_size x num_shared_expert when
// use_mixed_mlp_moe. Cross-layer attention (use_cla) shares KV between
// cla_share_factor layers.
Status BuildHunyuan(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  auto cla = f.Bool("use_cla", false);
  if (!cla) return cla.error();
  auto factor = f.IntOr("cla_share_factor", 1);
  if (!factor) return factor.error();
  auto moe = ResolveMoe(f, c.d, c.model_type);
  if (!moe) return moe.error();
  auto mixed = f.Bool("use_mixed_mlp_moe", false);
  if (!mixed) return mixed.error();
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    auto a = GenericAttention(c, i, Mixer::kFull);
    if (!a) return a.error();
    if (*cla && *factor > 1 && i % *factor != 0) {
      // This layer reads the KV of the layer before it: its own K/V
      // projections and cache are absent.
      b.Matrix(ParamRole::kAttention, b.LayerName(layer) + "self_attn.q_proj",
               a->q_heads * a->qk_dim, c.d.hidden);
      b.Matrix(ParamRole::kAttention, b.LayerName(layer) + "self_attn.o_proj", c.d.hidden,
               a->q_heads * a->qk_dim);
      if (a->q_norm > 0) {
        b.Vector(ParamRole::kAttention, b.LayerName(layer) + "self_attn.norms",
                 a->q_norm + a->k_norm);
      }
    } else {
      b.Attention(layer, *a);
    }
    if (moe->moe[static_cast<std::size_t>(i)]) {
      auto m = GenericMoe(c, *moe, i);
      if (!m) return m.error();
      if (!*mixed) m->shared_inter = 0;
      b.Moe(layer, *m);
    } else {
      b.DenseMlp(layer, c.d.intermediate, true, false);
    }
    b.Norms(layer, 2, c.d.hidden);
  }
  return OkStatus();
}

// Ouro (vLLM ouro.py): Qwen2-like layers without biases, head_dim hidden /
// heads whatever the config says, run total_ut_steps times a forward pass,
// each loop attending its own KV cache (vLLM builds an Attention per loop
// and layer); four norms a layer and an early-exit gate (hidden -> 1,
// biased). The weights are held once and applied once a loop
// (WeightGroup::uses).
Status BuildOuro(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  auto steps = f.IntOr("total_ut_steps", 4);
  if (!steps) return steps.error();
  if (*steps > 64) return f.Bad("total_ut_steps", "is " + std::to_string(*steps) + ", above 64");
  const Int h = c.d.hidden;
  if (h % c.d.heads[0] != 0) {
    return f.Bad("num_attention_heads", std::to_string(c.d.heads[0]) +
                                            " does not divide hidden_size " + std::to_string(h));
  }
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    auto a = GenericAttention(c, i, Mixer::kFull);
    if (!a) return a.error();
    a->qk_dim = a->v_dim = h / c.d.heads[static_cast<std::size_t>(i)];
    a->qkv_bias = a->o_bias = false;
    b.SetUses(*steps);
    b.Attention(layer, *a);
    for (Int s = 1; s < *steps; ++s) b.AttentionEntry(layer, *a);
    b.DenseMlp(layer, c.d.intermediate, true, false);
    b.SetUses(1);
    b.Norms(layer, 4, h);
  }
  b.Vector(ParamRole::kRouter, "model.early_exit_gate", h + 1);
  return OkStatus();
}

// Zamba2 (vLLM zamba2.py, transformers zamba2/configuration_zamba2.py):
// every layer a Mamba-2 mixer (mamba_expand x hidden wide, n_mamba_heads,
// mamba_ngroups, mamba_d_state, mamba_d_conv) and its norm; at each
// "hybrid" layer of layers_block_type, first a shared transformer block
// (num_mem_blocks of them, taken in turn) over the hidden state concatenated
// with the input embeddings (2 x hidden wide): attention of
// num_attention_heads heads of 2 x hidden / heads, as many KV heads (vLLM
// builds no fewer whatever num_key_value_heads says) with a KV cache of
// its own at every hybrid layer, a gated MLP of intermediate_size, two
// norms; then, per hybrid layer, LoRA-style adapters of adapter_rank on the
// block's gate_up projection (and with use_shared_attention_adapter on q,
// k and v) and a hidden x hidden projection. A block's weights are held
// once and applied at each hybrid layer it serves (WeightGroup::uses).
Status BuildZamba2(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  const Int h = c.d.hidden, n = c.d.layers, heads = c.d.heads[0];
  std::vector<bool> hybrid(static_cast<std::size_t>(n), false);
  if (f.Has("layers_block_type")) {
    const json& t = f.Get("layers_block_type");
    if (!t.is_array() || static_cast<Int>(t.size()) != n) {
      return f.Bad("layers_block_type", "must be a list of " + std::to_string(n) + " strings");
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] != "mamba" && t[i] != "hybrid") {
        return f.Bad("layers_block_type[" + std::to_string(i) + "]",
                     "must be \"mamba\" or \"hybrid\", got " + Show(t[i]));
      }
      hybrid[i] = t[i] == "hybrid";
    }
  } else {
    return f.Bad("layers_block_type", "missing: kvbill cannot tell which layers are hybrid");
  }
  auto blocks = f.IntOr("num_mem_blocks", 1);
  if (!blocks) return blocks.error();
  auto rank = f.IntOr("adapter_rank", 128);
  if (!rank) return rank.error();
  auto attn_adapter = f.Bool("use_shared_attention_adapter", false);
  if (!attn_adapter) return attn_adapter.error();
  auto bias = f.Bool("add_bias_linear", false);
  if (!bias) return bias.error();
  const Int width = 2 * h;  // the attention's input: hidden state and embeddings
  if (width % heads != 0) {
    return f.Bad(
        "num_attention_heads",
        std::to_string(heads) + " does not divide 2 x hidden_size " + std::to_string(width));
  }
  // vLLM: mamba_expand x hidden wide in n_mamba_heads heads; a
  // mamba_headdim that does not tile that width is refused.
  auto expand = f.IntOr("mamba_expand", 2);
  if (!expand) return expand.error();
  auto m2 = ReadMamba2(f, h, "n_mamba_heads", "mamba_headdim", "mamba_ngroups", "mamba_d_state",
                       "mamba_d_conv", "mamba_expand", "use_conv_bias", "add_bias_linear",
                       *expand * h, "(mamba_expand x hidden_size)");
  if (!m2) return m2.error();
  std::vector<Int> visits;
  for (Int i = 0; i < n; ++i) {
    if (hybrid[static_cast<std::size_t>(i)]) visits.push_back(i);
  }
  const Int used = static_cast<Int>(visits.size());
  if (*blocks > std::max<Int>(used, 1)) {
    return f.Bad("num_mem_blocks", "is " + std::to_string(*blocks) + ", more than the " +
                                       std::to_string(used) + " hybrid layers that run them");
  }
  const Int inter = c.d.intermediate;
  AttnPlan a;
  a.q_heads = a.kv_heads = heads;
  a.qk_dim = a.v_dim = width / heads;
  a.input_dim = width;
  for (Int i = 0; i < n; ++i) {
    const int layer = static_cast<int>(i);
    const auto visit = std::find(visits.begin(), visits.end(), i);
    if (visit != visits.end()) {
      const Int k = visit - visits.begin();
      const std::string p = b.LayerName(layer) + "shared_transformer.";
      if (k < *blocks) {
        // Block k's weights, first built at the hybrid layer that first runs
        // it, applied at every num_mem_blocks-th hybrid layer from there.
        b.SetUses((used - k + *blocks - 1) / *blocks);
        b.Matrix(ParamRole::kAttention, p + "self_attn.q_proj", width, width);
        b.Matrix(ParamRole::kAttention, p + "self_attn.k_proj", width, width);
        b.Matrix(ParamRole::kAttention, p + "self_attn.v_proj", width, width);
        b.Matrix(ParamRole::kAttention, p + "self_attn.o_proj", h, width);
        b.Matrix(ParamRole::kDenseMlp, p + "feed_forward.gate_up_proj", 2 * inter, h);
        b.Matrix(ParamRole::kDenseMlp, p + "feed_forward.down_proj", h, inter);
        if (*bias) b.Vector(ParamRole::kDenseMlp, p + "feed_forward.bias", 2 * inter + h);
        b.SetUses(1);
        b.Vector(ParamRole::kNorm, p + "norms", width + h);  // input_layernorm, pre_ff_layernorm
      }
      b.AttentionEntry(layer, a);
      // This layer's adapters into its block and its projection back.
      const std::string q = p + "feed_forward.gate_up_proj_adapter.";
      b.Matrix(ParamRole::kDenseMlp, q + "A", *rank, h);
      b.Matrix(ParamRole::kDenseMlp, q + "B", 2 * inter, *rank);
      if (*attn_adapter) {
        for (const char* which : {"q", "k", "v"}) {
          const std::string r = p + "self_attn.linear_" + which + "_adapter.";
          b.Matrix(ParamRole::kAttention, r + "A", *rank, width);
          b.Matrix(ParamRole::kAttention, r + "B", width, *rank);
        }
      }
      b.Matrix(ParamRole::kDenseMlp, b.LayerName(layer) + "linear", h, h);
    }
    b.Mamba2(layer, *m2);
    b.Norms(layer, 1, h);
  }
  return OkStatus();
}

// Gemma's layer pattern: layer_types, or by default every `full_every`-th
// layer full and the others sliding.
Result<std::vector<Mixer>> GemmaMixers(const Ctx& c, Family family, Int full_every) {
  if (c.f.Has("layer_types")) return ResolveMixers(c.f, c.d, c.model_type, family);
  std::vector<Mixer> mixers;
  for (Int i = 0; i < c.d.layers; ++i) {
    mixers.push_back((i + 1) % full_every == 0 ? Mixer::kFull : Mixer::kSliding);
  }
  return mixers;
}

// KV-shared layers (Gemma 3n, Gemma 4 E2B / E4B; transformers'
// Gemma3nTextConfig.kv_sharing_roles, vLLM gemma3n.py / gemma4.py
// kv_sharing_target_layer_name): the last `shared` layers keep no KV cache
// and attend the one of the last earlier layer of their own type (sliding
// or full). Per layer: that layer's index, or -1 for a layer with its own.
Result<std::vector<int>> KvSources(const Fields& f, const std::vector<Mixer>& mixers, Int shared) {
  const Int n = static_cast<Int>(mixers.size());
  std::vector<int> source(mixers.size(), -1);
  if (shared == 0) return source;
  if (shared >= n) {
    return f.Bad("num_kv_shared_layers", "is " + std::to_string(shared) + ", but the model has " +
                                             std::to_string(n) +
                                             " layers: no layer would keep a cache to share");
  }
  const Int first = n - shared;
  for (Int i = first; i < n; ++i) {
    const Mixer kind = mixers[static_cast<std::size_t>(i)];
    for (Int j = first - 1; j >= 0; --j) {
      if (mixers[static_cast<std::size_t>(j)] == kind) {
        source[static_cast<std::size_t>(i)] = static_cast<int>(j);
        break;
      }
    }
    if (source[static_cast<std::size_t>(i)] < 0) {
      const std::string type = kind == Mixer::kSliding ? "sliding" : "full";
      return f.Bad("num_kv_shared_layers",
                   "is " + std::to_string(shared) + ": layer " + std::to_string(i) + " is " + type +
                       " attention and reads the cache of the last " + type +
                       " layer before layer " + std::to_string(first) +
                       ", but there is none (vLLM cannot build this model)");
    }
  }
  return source;
}

// Per-layer input embeddings (Gemma 3n and Gemma 4 E2B / E4B; vLLM
// gemma3n.py, gemma4.py): a table of vocab_size_per_layer_input rows of
// num_hidden_layers x hidden_size_per_layer_input, from which each step
// gathers only its tokens' rows; a projection of the token embedding into
// the same width and its norm; per layer a gate (hidden into the per-layer
// width), a projection back and a norm. Gemma 3n builds the projections
// without the quantization config (`quantized` false: they stay in the
// dtype), Gemma 4 with it.
Status PerLayerInputs(Ctx& c, bool quantized) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  auto width = f.IntOr("hidden_size_per_layer_input", 256, 0);
  if (!width) return width.error();
  if (*width == 0) return OkStatus();
  auto rows = f.IntOr("vocab_size_per_layer_input", c.d.vocab);
  if (!rows) return rows.error();
  const Int h = c.d.hidden, all = c.d.layers * *width;
  const auto linear = [&](const std::string& name, Int out, Int in) {
    if (quantized) {
      b.Matrix(ParamRole::kDenseMlp, name, out, in);
    } else {
      b.Vector(ParamRole::kDenseMlp, name, out * in);
    }
  };
  b.GatheredTable(ParamRole::kEmbedding, "model.embed_tokens_per_layer", *rows, all);
  linear("model.per_layer_model_projection", all, h);
  b.Vector(ParamRole::kNorm, "model.per_layer_projection_norm", *width);
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    linear(b.LayerName(layer) + "per_layer_input_gate", *width, h);
    linear(b.LayerName(layer) + "per_layer_projection", h, *width);
    b.Norms(layer, 1, h);  // post_per_layer_input_norm
  }
  return OkStatus();
}

// Gemma 3n (vLLM gemma3n.py, transformers gemma3n/configuration_gemma3n.py):
// layer_types (default: every 5th layer full, the others sliding over
// sliding_window), q/k norms of head_dim (the v norm has no weight), an MLP
// of intermediate_size[i] (one size or one per layer), and the model's own
// blocks: AltUp (altup_num_inputs streams; per layer a modality router of
// hidden x n, prediction and correction coefficients of n^2 x n and n x n,
// a router norm and an output scale; per model n - 1 projections into the
// streams and n - 1 out), LAuReL (hidden -> laurel_rank -> hidden and a
// norm), per-layer input embeddings, and KV-shared layers (the last
// num_kv_shared_layers read an earlier layer's cache). vLLM builds AltUp,
// LAuReL and the per-layer projections without the quantization config.
Status BuildGemma3n(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  const Int h = c.d.hidden;
  auto pattern = GemmaMixers(c, Family::kGemma3n, 5);
  if (!pattern) return pattern.error();
  const std::vector<Mixer>& mixers = *pattern;
  auto shared = f.IntOr("num_kv_shared_layers", 15, 0);
  if (!shared) return shared.error();
  auto sources = KvSources(f, mixers, *shared);
  if (!sources) return sources.error();
  auto inter = f.PerLayerInt("intermediate_size", c.d.layers);
  if (!inter) return inter.error();
  auto streams = f.IntOr("altup_num_inputs", 4);
  if (!streams) return streams.error();
  auto rank = f.IntOr("laurel_rank", 64);
  if (!rank) return rank.error();
  const Int n = *streams;
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    const Mixer kind = mixers[static_cast<std::size_t>(i)];
    if (kind != Mixer::kFull && kind != Mixer::kSliding) {
      return f.Bad("layer_types[" + std::to_string(i) + "]",
                   "must be \"full_attention\" or \"sliding_attention\" for model_type \"" +
                       c.model_type + "\"");
    }
    auto a = GenericAttention(c, i, kind);
    if (!a) return a.error();
    a->kv_source = (*sources)[static_cast<std::size_t>(i)];
    b.Attention(layer, *a);
    const Int mlp = inter->has_value() ? (**inter)[static_cast<std::size_t>(i)] : c.d.intermediate;
    b.DenseMlp(layer, mlp, true, false);
    const std::string p = b.LayerName(layer);
    b.Vector(ParamRole::kRouter, p + "altup.modality_router", h * n);
    b.Vector(ParamRole::kRouter, p + "altup.prediction_coefs", n * n * n);
    b.Vector(ParamRole::kRouter, p + "altup.correction_coefs", n * n);
    b.Vector(ParamRole::kNorm, p + "altup.router_norm", h);
    b.Vector(ParamRole::kNorm, p + "altup.correct_output_scale", h);
    b.Vector(ParamRole::kDenseMlp, p + "laurel.linear_left", *rank * h);
    b.Vector(ParamRole::kDenseMlp, p + "laurel.linear_right", h * *rank);
    b.Vector(ParamRole::kNorm, p + "laurel.post_laurel_norm", h);
    b.Norms(layer, 4, h);  // input, post-attention, pre- and post-feedforward
  }
  b.Vector(ParamRole::kDenseMlp, "model.altup_projections", (n - 1) * h * h);
  b.Vector(ParamRole::kDenseMlp, "model.altup_unembed_projections", (n - 1) * h * h);
  return PerLayerInputs(c, /*quantized=*/false);
}

// Gemma 4 (vLLM gemma4.py, transformers gemma4/configuration_gemma4.py):
// layer_types (default: every 6th layer full, the last always full) pick
// sliding layers (num_key_value_heads x head_dim, window sliding_window) and
// full ones (global_head_dim; with attention_k_eq_v, num_global_key_value_heads
// heads whose keys are also the values). vLLM caches K and V of every layer
// alike (it loads the key projection into the value slot), so a full layer
// keeps 2 x heads x global_head_dim per token and allocates a V projection
// the checkpoint does not carry. With enable_moe_block every layer runs its
// dense MLP and, beside it, routed experts (num_experts, top_k_experts of
// moe_intermediate_size) behind a router with a per-dimension input scale
// and a per-expert output scale: the MLP counts as an always-on expert.
// The E2B / E4B variants add per-layer input embeddings (PerLayerInputs)
// and KV-shared layers (KvSources); with use_double_wide_mlp a shared
// layer's MLP is twice intermediate_size.
Status BuildGemma4(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  auto shared = f.IntOr("num_kv_shared_layers", 0, 0);
  if (!shared) return shared.error();
  auto double_wide = f.Bool("use_double_wide_mlp", false);
  if (!double_wide) return double_wide.error();
  auto pattern = GemmaMixers(c, Family::kGemma4, 6);
  if (!pattern) return pattern.error();
  std::vector<Mixer> mixers = *pattern;
  mixers.back() = Mixer::kFull;  // Gemma4TextConfig forces the last layer full
  auto sources = KvSources(f, mixers, *shared);
  if (!sources) return sources.error();
  auto window = f.IntOr("sliding_window", 512);
  if (!window) return window.error();
  auto global_dim = f.IntOr("global_head_dim", 512);
  if (!global_dim) return global_dim.error();
  auto k_eq_v = f.Bool("attention_k_eq_v", false);
  if (!k_eq_v) return k_eq_v.error();
  auto global_kv = f.IntOr("num_global_key_value_heads", c.d.kv_heads[0]);
  if (!global_kv) return global_kv.error();
  if (*k_eq_v && c.d.heads[0] % *global_kv != 0) {
    return f.Bad("num_global_key_value_heads", std::to_string(*global_kv) +
                                                   " does not divide num_attention_heads " +
                                                   std::to_string(c.d.heads[0]));
  }
  auto moe_block = f.Bool("enable_moe_block", false);
  if (!moe_block) return moe_block.error();
  MoePlan moe;
  if (*moe_block) {
    auto experts = f.RequiredInt({"num_experts"});
    if (!experts) return experts.error();
    auto top_k = f.RequiredInt({"top_k_experts"});
    if (!top_k) return top_k.error();
    if (*top_k > *experts) {
      return f.Bad("top_k_experts", "must be at most num_experts " + std::to_string(*experts) +
                                        ", got " + std::to_string(*top_k));
    }
    auto inter = f.RequiredInt({"moe_intermediate_size"});
    if (!inter) return inter.error();
    moe.experts = *experts;
    moe.top_k = *top_k;
    moe.inter = *inter;
    moe.shared_inter = c.d.intermediate;  // the dense MLP beside the experts
  }
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    const bool full = mixers[static_cast<std::size_t>(i)] == Mixer::kFull;
    if (!full && mixers[static_cast<std::size_t>(i)] != Mixer::kSliding) {
      return f.Bad("layer_types[" + std::to_string(i) + "]",
                   "must be \"full_attention\" or \"sliding_attention\" for model_type \"" +
                       c.model_type + "\"");
    }
    auto a = GenericAttention(c, i, Mixer::kFull);
    if (!a) return a.error();
    if (full) {
      a->qk_dim = a->v_dim = *global_dim;
      if (*k_eq_v) a->kv_heads = *global_kv;
      a->q_norm = a->k_norm = *global_dim;
    } else {
      a->kind = AttnKind::kSliding;
      a->window = *window;
    }
    a->kv_source = (*sources)[static_cast<std::size_t>(i)];
    b.Attention(layer, *a);
    const Int inter = c.d.intermediate * (*double_wide && a->kv_source >= 0 ? 2 : 1);
    if (*moe_block) {
      MoePlan m = moe;
      m.shared_inter = inter;  // the MLP beside the experts, double-wide when shared
      // The checkpoint's names (quantization ignore lists name them):
      // layers.N.experts.*, layers.N.router.proj, the dense MLP at
      // layers.N.mlp.* (NVIDIA's Gemma-4-26B-A4B-NVFP4 skips mlp*,
      // router* and self_attn* and quantizes the experts).
      const ModuleNames names = b.names();
      ModuleNames in_layer = names;
      in_layer.moe = "";
      in_layer.router = "router.proj";
      in_layer.shared = "mlp";
      b.SetNames(in_layer);
      b.Moe(layer, m);
      b.SetNames(names);
      // The router's input scale (hidden) and the per-expert output scale.
      b.Vector(ParamRole::kRouter, b.LayerName(layer) + "router.scale", c.d.hidden);
      b.Vector(ParamRole::kRouter, b.LayerName(layer) + "router.per_expert_scale", moe.experts);
      // post_feedforward_layernorm_1 and _2, pre_feedforward_layernorm_2.
      b.Norms(layer, 3, c.d.hidden);
    } else {
      b.DenseMlp(layer, inter, true, false);
    }
    b.Norms(layer, 4, c.d.hidden);
    b.Vector(ParamRole::kNorm, b.LayerName(layer) + "layer_scalar", 1);
  }
  return PerLayerInputs(c, /*quantized=*/true);
}

// Module names of the family's checkpoints (for quantization ignore lists).
// Kimi Linear and Kimi-K3's text model (vLLM kimi_linear.py,
// kimi_k3/nvidia/model.py): layer i runs Kimi Delta Attention when i + 1 is
// in linear_attn_config.kda_layers (1-based; vLLM never reads
// full_attn_layers), else MLA; MoE from first_k_dense_replace on with
// num_shared_experts x moe_intermediate_size always-on; K3 adds a latent
// MoE (experts at routed_expert_hidden_size between a down and an up
// projection and a norm), gated MLA and attention residuals (a norm and a
// 1 x hidden projection before the mixer and the MLP, two at the end).
Status BuildKimiLinear(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  const Int n = c.d.layers, h = c.d.hidden;
  if (!c.d.mla) return f.Bad("kv_lora_rank", "missing: Kimi Linear's full layers are MLA");
  if (!f.Has("linear_attn_config") || !f.Get("linear_attn_config").is_object()) {
    return f.Bad("linear_attn_config", "missing or not an object");
  }
  const json& lin = f.Get("linear_attn_config");
  const std::string lk = "linear_attn_config.";
  const auto positive = [&](const char* name, Int fallback) -> Result<Int> {
    auto it = lin.find(name);
    if (it == lin.end() || it->is_null()) {
      if (fallback > 0) return fallback;
      return f.Bad(lk + name, "missing");
    }
    if (!it->is_number_integer() || it->get<Int>() <= 0 || it->get<Int>() > kMaxConfigDimension) {
      return f.Bad(lk + name, "must be a whole number in [1, 1048576], got " + Show(*it));
    }
    return it->get<Int>();
  };
  auto heads = positive("num_heads", 0);
  if (!heads) return heads.error();
  auto head_dim = positive("head_dim", 0);
  if (!head_dim) return head_dim.error();
  auto conv = positive("short_conv_kernel_size", 4);
  if (!conv) return conv.error();
  KdaPlan kda{*heads, *head_dim, *conv, false};
  if (auto it = lin.find("use_full_rank_gate"); it != lin.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return f.Bad(lk + "use_full_rank_gate", "must be true or false, got " + Show(*it));
    }
    kda.full_rank_gate = it->get<bool>();
  }
  std::vector<bool> is_kda(static_cast<std::size_t>(n), false);
  auto listed = lin.find("kda_layers");
  if (listed == lin.end() || !listed->is_array()) {
    return f.Bad(lk + "kda_layers", "missing or not a list of layer numbers");
  }
  for (std::size_t i = 0; i < listed->size(); ++i) {
    const json& v = (*listed)[i];
    if (!v.is_number_integer() || v.get<Int>() < 1 || v.get<Int>() > n) {
      return f.Bad(
          lk + "kda_layers[" + std::to_string(i) + "]",
          "must be a layer number in [1, " + std::to_string(n) + "] (1-based), got " + Show(v));
    }
    is_kda[static_cast<std::size_t>(v.get<Int>() - 1)] = true;
  }
  auto moe = ResolveMoe(f, c.d, c.model_type);
  if (!moe) return moe.error();
  auto shared = f.IntOr("num_shared_experts", 0, 0);
  if (!shared) return shared.error();
  auto latent = f.OptionalInt("routed_expert_hidden_size");
  if (!latent) return latent.error();
  auto latent_norm = f.Bool("latent_moe_use_norm", false);
  if (!latent_norm) return latent_norm.error();
  auto gate = f.Bool("mla_use_output_gate", false);
  if (!gate) return gate.error();
  auto res_block = f.OptionalInt("attn_res_block_size", 0);
  if (!res_block) return res_block.error();
  const bool attn_res = res_block->has_value() && **res_block > 0;
  auto mtp = MtpCount(f);
  if (!mtp) return mtp.error();
  if (*mtp > 0) {
    return f.Bad("num_nextn_predict_layers",
                 "is " + std::to_string(*mtp) +
                     ": kvbill does not know the layout of Kimi Linear's prediction layers");
  }
  for (Int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const int layer = static_cast<int>(i);
    if (is_kda[u]) {
      b.Kda(layer, kda);
    } else {
      auto a = GenericAttention(c, i, Mixer::kLatent);
      if (!a) return a.error();
      a->output_gate = *gate;
      b.Attention(layer, *a);
    }
    if (moe->moe[u]) {
      auto m = GenericMoe(c, *moe, i);
      if (!m) return m.error();
      m->shared_inter = *shared * moe->inter[u];
      if (latent->has_value() && **latent != h) {
        m->in_dim = **latent;
        m->kimi_latent = true;
        if (*latent_norm) {
          b.Vector(ParamRole::kNorm, b.LayerName(layer) + "block_sparse_moe.routed_expert_norm",
                   **latent);
        }
      }
      b.Moe(layer, *m);
    } else {
      b.DenseMlp(layer, c.d.intermediate, true, false);
    }
    b.Norms(layer, 2, h);
    if (attn_res) {
      // self_attention_res_norm / _proj and mlp_res_norm / _proj.
      b.Vector(ParamRole::kNorm, b.LayerName(layer) + "attention_residuals", 4 * h);
    }
  }
  if (attn_res) b.Vector(ParamRole::kNorm, "model.output_attn_res", 2 * h);
  return OkStatus();
}

// The compress ratio of each of `count` layers (decoder layers, then MTP
// layers): compress_ratios, or transformers' layer_types (sliding_attention,
// compressed_sparse_attention, heavily_compressed_attention, with the ratios
// of compress_rates). Entries past the list are 0: transformers re-saves the
// list without the MTP layer's, which is 0 in every release.
Result<std::vector<int>> CompressRatios(const Fields& f, Int layers, Int count) {
  std::vector<int> ratios(static_cast<std::size_t>(count), 0);
  if (f.Has("compress_ratios")) {
    const json& list = f.Get("compress_ratios");
    if (!list.is_array() || static_cast<Int>(list.size()) < layers ||
        static_cast<Int>(list.size()) > count) {
      return f.Bad("compress_ratios",
                   "must list one ratio per decoder layer (" + std::to_string(layers) +
                       "), optionally followed by the prediction layers' (" +
                       std::to_string(count - layers) + "), got " +
                       (list.is_array() ? std::to_string(list.size()) + " entries" : Show(list)));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& v = list[i];
      if (!v.is_number_integer() ||
          (v.get<Int>() != 0 && v.get<Int>() != 4 && v.get<Int>() != 128)) {
        return f.Bad("compress_ratios[" + std::to_string(i) + "]",
                     "must be 0 (window only), 4 (compressed with an indexer) or 128 "
                     "(compressed without one), the ratios DeepSeek-V4 defines; got " +
                         Show(v));
      }
      ratios[i] = static_cast<int>(v.get<Int>());
    }
    return ratios;
  }
  if (!f.Has("layer_types") || !f.Get("layer_types").is_array()) {
    return f.Bad("compress_ratios",
                 "missing (and no layer_types): DeepSeek-V4 needs one per layer");
  }
  int csa = 4, hca = 128;
  if (f.Has("compress_rates") && f.Get("compress_rates").is_object()) {
    const json& rates = f.Get("compress_rates");
    for (auto [name, into] : {std::pair<const char*, int*>{"compressed_sparse_attention", &csa},
                              {"heavily_compressed_attention", &hca}}) {
      auto it = rates.find(name);
      if (it == rates.end()) continue;
      if (!it->is_number_integer() || (it->get<Int>() != 4 && it->get<Int>() != 128)) {
        return f.Bad(std::string("compress_rates.") + name, "must be 4 or 128, got " + Show(*it));
      }
      *into = static_cast<int>(it->get<Int>());
    }
  }
  const json& types = f.Get("layer_types");
  if (static_cast<Int>(types.size()) < layers || static_cast<Int>(types.size()) > count) {
    return f.Bad("layer_types", "must list one type per decoder layer (" + std::to_string(layers) +
                                    "), got " + std::to_string(types.size()));
  }
  for (std::size_t i = 0; i < types.size(); ++i) {
    const std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
    if (t == "sliding_attention") {
      ratios[i] = 0;
    } else if (t == "compressed_sparse_attention") {
      ratios[i] = csa;
    } else if (t == "heavily_compressed_attention") {
      ratios[i] = hca;
    } else {
      return f.Bad("layer_types[" + std::to_string(i) + "]",
                   "must be sliding_attention, compressed_sparse_attention or "
                   "heavily_compressed_attention, got " +
                       Show(types[i]));
    }
  }
  return ratios;
}

// DeepSeek-V4 (DeepSeek's inference/model.py, vLLM's deepseek_v4.py; the
// spec with its sources in docs/research-notes.md): every layer attends a
// window of raw latents and, by its compress ratio, compressed latents;
// every layer is MoE (the first num_hash_layers route by a token-id table,
// which is a lookup, not a parameter, and has no gate bias); four
// hyper-connection streams mix around attention and the MoE (fp32 mixers);
// each prediction layer is a whole block with e_proj and h_proj.
Status BuildDeepseekV4(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  const Int n = c.d.layers, h = c.d.hidden;
  auto mtp = MtpCount(f);
  if (!mtp) return mtp.error();
  if (*mtp > 16) {
    return f.Bad("num_nextn_predict_layers",
                 "is " + std::to_string(*mtp) + ": more than 16 prediction layers");
  }
  auto ratios = CompressRatios(f, n, n + *mtp);
  if (!ratios) return ratios.error();
  const bool any_indexer = std::find(ratios->begin(), ratios->end(), 4) != ratios->end();
  CompressedPlan a;
  a.q_heads = c.d.heads[0];
  a.head_dim = c.d.head_dim;
  for (std::size_t i = 1; i < c.d.heads.size(); ++i) {
    if (c.d.heads[i] != a.q_heads) {
      return f.Bad("num_attention_heads", "must be one number for DeepSeek-V4");
    }
  }
  if (c.d.kv_heads[0] != 1) {
    return f.Bad("num_key_value_heads",
                 "is " + std::to_string(c.d.kv_heads[0]) +
                     ": DeepSeek-V4 caches one latent a token (one KV head)");
  }
  auto rope = f.RequiredInt({"qk_rope_head_dim"});
  if (!rope) return rope.error();
  if (*rope >= a.head_dim) return f.Bad("qk_rope_head_dim", "must be below head_dim");
  a.rope = *rope;
  auto q_lora = f.RequiredInt({"q_lora_rank"});
  if (!q_lora) return q_lora.error();
  a.q_lora = *q_lora;
  auto groups = f.RequiredInt({"o_groups"});
  if (!groups) return groups.error();
  if ((a.q_heads * a.head_dim) % *groups != 0) {
    return f.Bad("o_groups", std::to_string(*groups) +
                                 " does not divide the heads' output (num_attention_heads x "
                                 "head_dim = " +
                                 std::to_string(a.q_heads * a.head_dim) + ")");
  }
  a.o_groups = *groups;
  auto o_lora = f.RequiredInt({"o_lora_rank"});
  if (!o_lora) return o_lora.error();
  a.o_lora = *o_lora;
  auto window = f.RequiredInt({"sliding_window"});
  if (!window) return window.error();
  a.window = *window;
  if (any_indexer) {
    auto index_heads = f.RequiredInt({"index_n_heads"});
    if (!index_heads) return index_heads.error();
    auto index_dim = f.RequiredInt({"index_head_dim"});
    if (!index_dim) return index_dim.error();
    auto topk = f.RequiredInt({"index_topk"});
    if (!topk) return topk.error();
    a.index_heads = *index_heads;
    a.index_dim = *index_dim;
    a.index_topk = *topk;
  }
  auto hc = f.RequiredInt({"hc_mult"});
  if (!hc) return hc.error();
  if (*hc > 64) return f.Bad("hc_mult", "is above 64");
  const Int mix = (2 + *hc) * *hc;
  auto experts = f.RequiredInt({"n_routed_experts"});
  if (!experts) return experts.error();
  auto top_k = f.RequiredInt({"num_experts_per_tok"});
  if (!top_k) return top_k.error();
  auto inter = f.RequiredInt({"moe_intermediate_size"});
  if (!inter) return inter.error();
  auto shared = f.IntOr("n_shared_experts", 0, 0);
  if (!shared) return shared.error();
  auto hash_layers = f.IntOr("num_hash_layers", 0, 0);
  if (!hash_layers) return hash_layers.error();
  if (*hash_layers > n) {
    return f.Bad("num_hash_layers", "is " + std::to_string(*hash_layers) + ", more than the " +
                                        std::to_string(n) + " layers");
  }

  const auto block = [&](int layer, int ratio, bool hashed) {
    CompressedPlan plan = a;
    plan.ratio = ratio;
    b.CompressedAttention(layer, plan);
    MoePlan m;
    m.experts = *experts;
    m.top_k = *top_k;
    m.inter = *inter;
    m.shared_inter = *shared * *inter;
    b.Moe(layer, m);
    const std::string p = b.LayerName(layer);
    if (!hashed) b.Fp32Vector(ParamRole::kRouter, p + "ffn.gate.bias", *experts);
    b.Norms(layer, 2, h);
    // hc_attn / hc_ffn: fn (mix x hc*hidden), base (mix), scale (3).
    b.Fp32Vector(ParamRole::kNorm, p + "hc", 2 * (mix * *hc * h + mix + 3));
  };
  for (Int i = 0; i < n; ++i) {
    block(static_cast<int>(i), (*ratios)[static_cast<std::size_t>(i)], i < *hash_layers);
  }
  // The output's hyper-connection head: fn (hc x hc*hidden), base, scale.
  b.Fp32Vector(ParamRole::kNorm, "hc_head", *hc * *hc * h + *hc + 1);
  b.BeginMtp();
  for (Int k = 0; k < *mtp; ++k) {
    const int layer = static_cast<int>(n + k);
    block(layer, (*ratios)[static_cast<std::size_t>(n + k)], false);
    const std::string p = b.LayerName(layer);
    b.Matrix(ParamRole::kMtp, p + "e_proj", h, h);
    b.Matrix(ParamRole::kMtp, p + "h_proj", h, h);
    b.Norms(layer, 3, h);  // enorm, hnorm and the head's norm
    b.Fp32Vector(ParamRole::kMtp, p + "hc_head", *hc * *hc * h + *hc + 1);
  }
  b.EndOverride();
  return OkStatus();
}

ModuleNames NamesFor(const std::string& model_type) {
  ModuleNames n;
  if (model_type == "nemotron_h") {
    n.layers = "backbone.layers.";
    n.attn = n.mlp = n.moe = n.mixer = "mixer";
  } else if (model_type == "jamba") {
    n.mixer = "mamba";
    n.mlp = n.moe = "feed_forward";
    n.router = "router";
  } else if (model_type == "granitemoehybrid" || model_type == "granitemoe") {
    n.mixer = "mamba";
    n.moe = "block_sparse_moe";
    n.mlp = "shared_mlp";
    n.shared = "shared_mlp";
    n.router = "router";
  } else if (model_type == "mixtral" || model_type == "minimax" || model_type == "minimax_m1" ||
             model_type == "minimax_m2" || model_type == "minimax_m3" || model_type == "phimoe") {
    // transformers' MiniMax-M2 and PhiMoE checkpoints name them as Mixtral's
    // (block_sparse_moe.experts.N.w1 / w3 / w2, block_sparse_moe.gate).
    n.moe = "block_sparse_moe";
    n.gate = "w1";
    n.up = "w3";
    n.down = "w2";
  } else if (model_type == "llama4" || model_type == "llama4_text") {
    n.mlp = n.moe = "feed_forward";
    n.shared = "shared_expert";
    n.router = "router";
  } else if (model_type.starts_with("qwen")) {
    n.shared = "shared_expert";
  } else if (model_type == "gpt_oss") {
    n.router = "router";
  } else if (model_type == "falcon" || model_type == "bloom") {
    n.layers = "transformer.h.";
    n.attn = "self_attention";
  } else if (model_type == "lfm2") {
    n.mlp = "feed_forward";
  } else if (model_type.starts_with("hunyuan")) {
    n.shared = "shared_mlp";
  } else if (model_type == "falcon_h1") {
    n.mixer = "mamba";
    n.mlp = "feed_forward";
  } else if (model_type == "deepseek_v4" || model_type == "deepseek_ref") {
    // DeepSeek's own checkpoint names (inference/model.py).
    n.layers = "layers.";
    n.attn = "attn";
    n.mlp = n.moe = "ffn";
    n.gate = "w1";
    n.up = "w3";
    n.down = "w2";
  }
  return n;
}

}  // namespace

// LongCat-Flash (vLLM longcat_flash.py, FlashDecoderLayer): every layer
// holds two MLA attentions (q through q_lora_rank; each caches its own
// latent) and two gated MLPs of ffn_hidden_size, four RMSNorms, and a
// shortcut MoE fed from the first attention: n_routed_experts experts of
// expert_ffn_hidden_size behind a router that scores them and
// zero_expert_num zero-computation (identity) experts, with a
// score-correction bias over both (router_bias adds a bias). Its top-k
// (moe_topk) picks from both kinds, so a token reaches moe_topk x routed /
// (routed + zero) routed experts when the router balances its load (the
// model is trained towards it): 12 x 512 / 768 = 8 for LongCat-Flash, whose
// card gives 18.6B-31.3B activated, about 27B on average. The checkpoint's
// MTP module (".mtp.", loaded by vLLM's drafter only) is not counted.
Status BuildLongcat(Ctx& c) {
  ModelBuilder& b = *c.b;
  const Fields& f = c.f;
  if (!c.d.mla) return f.Bad("kv_lora_rank", "missing: LongCat-Flash's attention is MLA");
  auto routed = f.RequiredInt({"n_routed_experts"});
  if (!routed) return routed.error();
  if (*routed < 1) return f.Bad("n_routed_experts", "must be at least 1");
  auto zero = f.IntOr("zero_expert_num", 0, 0);
  if (!zero) return zero.error();
  auto top_k = f.RequiredInt({"moe_topk", "num_experts_per_tok"});
  if (!top_k) return top_k.error();
  const char* top_k_key = f.Has("moe_topk") ? "moe_topk" : "num_experts_per_tok";
  if (*top_k < 1 || *top_k > *routed + *zero) {
    return f.Bad(top_k_key, "must be between 1 and n_routed_experts + zero_expert_num (" +
                                std::to_string(*routed + *zero) + "), got " +
                                std::to_string(*top_k));
  }
  auto expert_inter = f.FirstInt({"moe_intermediate_size", "expert_ffn_hidden_size"});
  if (!expert_inter) return expert_inter.error();
  auto router_bias = f.Bool("router_bias", false);
  if (!router_bias) return router_bias.error();
  MoePlan m;
  m.experts = *routed;
  m.zero_experts = *zero;
  m.routed_top_k = *top_k;
  // Nearest integer of top_k x routed / (routed + zero), at least one.
  const Int slots = *routed + *zero;
  m.top_k = std::max<Int>(1, (2 * *top_k * *routed + slots) / (2 * slots));
  m.inter = expert_inter->value_or(c.d.intermediate);
  m.router_bias = *router_bias;
  m.score_bias = true;
  const ModuleNames names = b.names();
  for (Int i = 0; i < c.d.layers; ++i) {
    const int layer = static_cast<int>(i);
    for (int j = 0; j < 2; ++j) {
      ModuleNames block = names;
      block.attn = "self_attn." + std::to_string(j);
      block.mlp = "mlps." + std::to_string(j);
      b.SetNames(block);
      auto a = GenericAttention(c, i, Mixer::kLatent);
      if (!a) return a.error();
      b.Attention(layer, *a);
      b.DenseMlp(layer, c.d.intermediate, true, false);
    }
    ModuleNames moe = names;
    moe.router = "router.classifier";
    b.SetNames(moe);
    b.Moe(layer, m);
    b.Norms(layer, 4, c.d.hidden);
  }
  b.SetNames(names);
  return OkStatus();
}

// Model types refused by name rather than read by the generic rule, which
// would miss what makes them different: ones no vLLM release builds (or
// builds no more), and ones whose config leaves out what vLLM builds.
struct Unserved {
  const char* model_type;  // compared without regard to case (Motif's is "Motif")
  const char* why;
};
constexpr char kMllamaDropped[] =
    "vLLM dropped Llama 3.2 Vision (MllamaForConditionalGeneration: cross-attention layers "
    "keeping the image's KV) after v0.10.2, with the other V0 encoder-decoder models";
constexpr Unserved kUnserved[] = {
    {"jetmoe",
     "vLLM has no JetMoE model (its attention is itself a mixture of experts, which the generic "
     "rule would read as plain attention)"},
    {"bitnet",
     "vLLM has no BitNet model (ternary weights, a gated ReLU-squared MLP and sub-norms the "
     "generic rule would misread)"},
    {"molmo",
     "kvbill has no rule for Molmo (vLLM's molmo.py builds its vision backbone from fixed "
     "settings, not the config, and gate and up of intermediate_size / 2: the generic rule would "
     "read the MLP twice as wide and leave the tower out)"},
    {"phi4flash",
     "vLLM dropped Phi-4-mini-flash (SambaY: a cross-decoder reusing one layer's KV over Mamba "
     "and gated-memory layers) after v0.10.1"},
    // vLLM's registry lists these as previously supported
    // (_PREVIOUSLY_SUPPORTED_MODELS, vllm/model_executor/models/registry.py:
    // the last version that served them).
    {"mllama", kMllamaDropped},
    {"mllama_text_model", kMllamaDropped},
    {"phi3small",
     "vLLM dropped Phi-3-small (block-sparse attention on every other layer) after v0.9.2"},
    {"Motif", "vLLM dropped Motif (differential attention: two softmax maps a head) after v0.10.2"},
    {"phi4_multimodal",
     "vLLM dropped the Transformers-format Phi-4-multimodal (Phi4MultimodalForCausalLM) after "
     "v0.12.0; it serves the original checkpoint format (model_type phi4mm)"},
};

// Models without a decoder KV cache to price. Encoder-only models (BERT and
// its kin) read the whole input at once and generate nothing token by token:
// vLLM serves them only as pooling models (embeddings, classification), with
// no KV cache. Encoder-decoder models (T5, BART, Whisper: is_encoder_decoder
// true) keep a self-attention cache and a cross-attention cache of the
// encoder's output, which the decoder-only reading would not size. RWKV's
// layers keep a recurrent state, not attention's keys and values.
constexpr std::array<const char*, 17> kEncoderOnlyTypes = {
    "albert",     "bert",    "camembert",     "deberta",     "deberta-v2",    "distilbert",
    "electra",    "esm",     "megatron-bert", "mobilebert",  "modernbert",    "mpnet",
    "nomic_bert", "roberta", "roformer",      "xlm-roberta", "xlm-roberta-xl"};
// The class names of those models' architectures, lower-cased, without the
// task suffix ("BertForMaskedLM", "XLMRobertaModel").
constexpr std::array<const char*, 17> kEncoderOnlyClasses = {
    "albert",    "bert",    "camembert",    "deberta",    "debertav2",   "distilbert",
    "electra",   "esm",     "megatronbert", "mobilebert", "modernbert",  "mpnet",
    "nomicbert", "roberta", "roformer",     "xlmroberta", "xlmrobertaxl"};
constexpr std::array<const char*, 4> kRwkvTypes = {"rwkv", "rwkv5", "rwkv6", "rwkv7"};
constexpr const char* kDecoderOnly =
    "kvbill prices decoder-only generation (the KV cache of a decoder-only model)";

// An encoder-only architecture of `top`'s architectures list, or "".
std::string EncoderOnlyArchitecture(const json& top) {
  auto it = top.find("architectures");
  if (it == top.end() || !it->is_array()) return "";
  for (const json& a : *it) {
    if (!a.is_string()) continue;
    const std::string name = a.get<std::string>();
    if (name.ends_with("ForMaskedLM")) return name;  // a masked LM is an encoder
    std::string base = name;
    for (std::string_view suffix :
         {"ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering",
          "ForMultipleChoice", "ForPreTraining", "ForNextSentencePrediction", "Model"}) {
      if (base.size() > suffix.size() && base.ends_with(suffix)) {
        base.resize(base.size() - suffix.size());
        break;
      }
    }
    const std::string lower = LowerAscii(base);
    for (const char* c : kEncoderOnlyClasses) {
      if (lower == c) return name;
    }
  }
  return "";
}

// Grok-2's config says model_type git, transformers' GIT (Microsoft's
// captioning model, which vLLM does not serve): it is read as Grok only
// with a Grok architecture. vLLM's grok1.py builds every layer as full
// attention and reads no window: Grok-2's sliding_window_size -1 and
// global_attn_every_n 1 say the same; any other value is refused (a
// window the checkpoint was trained with would not be what vLLM builds).
Status GrokGuards(const Fields& f, const std::string& model_type) {
  if (model_type == "git") {
    bool grok = false;
    if (f.Has("architectures") && f.Get("architectures").is_array()) {
      for (const json& a : f.Get("architectures")) {
        grok = grok || a == "Grok1ForCausalLM" || a == "Grok1ModelForCausalLM";
      }
    }
    if (!grok) {
      return f.Bad("model_type",
                   "is \"git\" without a Grok architecture (Grok1ForCausalLM): Microsoft's GIT, "
                   "which vLLM does not serve; kvbill reads model_type git only as Grok-2");
    }
  }
  for (const auto& [key, value] :
       {std::pair<const char*, Int>{"sliding_window_size", -1}, {"global_attn_every_n", 1}}) {
    if (!f.Has(key) || f.Get(key).is_null()) continue;
    const json& v = f.Get(key);
    if (!v.is_number_integer() || v.get<Int>() != value) {
      return f.Bad(key, "is " + Show(v) +
                            ": vLLM's grok1.py builds every layer as full "
                            "attention and reads no window, so kvbill reads only " +
                            std::to_string(value) + " (every layer global)");
    }
  }
  return OkStatus();
}

Result<TextModel> BuildTextModel(const Fields& f, const std::string& model_type, ModelBuilder* b) {
  const std::string lower = LowerAscii(model_type);
  for (const Unserved& u : kUnserved) {
    if (lower == LowerAscii(u.model_type)) {
      return f.Bad("model_type", "is \"" + model_type + "\": " + u.why +
                                     "; kvbill sizes a model as vLLM builds it");
    }
  }
  // Phi-4-multimodal: every layer full when full_attn_mod is 1 (the
  // release's value; its sliding_window is past max_model_len); another
  // period is not read.
  if (model_type == "phi4mm") {
    auto every = f.IntOr("full_attn_mod", 1);
    if (!every) return every.error();
    if (*every != 1) {
      return f.Bad("full_attn_mod", "is " + std::to_string(*every) +
                                        ": only 1 (every layer full attention) is read");
    }
  }
  // K-EXAONE's pre-release configs mark MoE layers with is_moe_layer, which
  // vLLM's exaone_moe.py does not read (it reads mlp_layer_types).
  if (model_type == "exaone_moe" && f.Has("is_moe_layer") && !f.Has("mlp_layer_types")) {
    return f.Bad("is_moe_layer",
                 "is a pre-release key vLLM's exaone_moe.py does not read: give "
                 "mlp_layer_types (\"dense\" / \"sparse\" per layer)");
  }
  if (IsGrok(model_type)) {
    if (auto s = GrokGuards(f, model_type); !s) return s.error();
  }
  // Step 3.5: vLLM's step3p5.py builds GQA only (another att_impl_type is
  // a ValueError there).
  if (IsStep3p5(model_type) && f.Has("att_impl_type") && f.Get("att_impl_type") != "GQA") {
    return f.Bad("att_impl_type",
                 "is " + Show(f.Get("att_impl_type")) + ": vLLM's step3p5.py builds only \"GQA\"");
  }
  if (model_type == "minicpm3" && !f.Has("kv_lora_rank")) {
    return f.Bad("kv_lora_rank", "missing: MiniCPM3's keys and values come from a latent");
  }
  const Style* style = FindStyle(model_type);
  const Family detected = style ? style->family : DetectFamily(f);
  if (!style && detected == Family::kGeneric) {
    auto hint = UnknownStructureKey(f);
    if (!hint) return hint.error();
    if (!hint->empty()) {
      return f.Bad(*hint, "kvbill cannot tell which layers keep KV for model_type \"" + model_type +
                              "\": it has no family rule, and the generic rule does not read "
                              "this key (the model types with a rule: "
                              "docs/models.md#families-which-kind-each-layer-is)");
    }
  }
  auto dims = ReadDims(f, model_type);
  if (!dims) return dims.error();
  b->SetNames(NamesFor(model_type));
  b->SetHidden(dims->hidden);
  Ctx c{f, model_type, style, b, *dims};
  const Family family = detected;
  Status built = OkStatus();
  switch (family) {
    case Family::kGeneric:
      built = BuildGeneric(c);
      break;
    case Family::kFalcon:
      built = BuildFalcon(c);
      break;
    case Family::kBloom:
      built = BuildBloom(c);
      break;
    case Family::kJamba:
      built = BuildJamba(c);
      break;
    case Family::kNemotronH:
      built = BuildNemotronH(c);
      break;
    case Family::kNemotronNas:
      built = BuildNemotronNas(c);
      break;
    case Family::kGraniteHybrid:
      built = BuildGraniteHybrid(c);
      break;
    case Family::kFalconH1:
      built = BuildFalconH1(c);
      break;
    case Family::kLfm2:
      built = BuildLfm2(c);
      break;
    case Family::kMamba:
      built = BuildMamba(c);
      break;
    case Family::kGatedDeltaNet:
      built = BuildGatedDeltaNet(c);
      break;
    case Family::kLightning:
      built = BuildLightning(c);
      break;
    case Family::kBailingLinear:
      built = BuildBailingLinear(c);
      break;
    case Family::kMimoV2:
      built = BuildMimoV2(c);
      break;
    case Family::kHunyuan:
      built = BuildHunyuan(c);
      break;
    case Family::kGemma4:
      built = BuildGemma4(c);
      break;
    case Family::kGemma3n:
      built = BuildGemma3n(c);
      break;
    case Family::kOuro:
      built = BuildOuro(c);
      break;
    case Family::kZamba2:
      built = BuildZamba2(c);
      break;
    case Family::kKimiLinear:
      built = BuildKimiLinear(c);
      break;
    case Family::kDeepseekV4:
      built = BuildDeepseekV4(c);
      break;
    case Family::kLongcat:
      built = BuildLongcat(c);
      break;
    case Family::kPlamo2:
      built = BuildPlamo2(c);
      break;
  }
  if (!built) return built.error();

  TextModel t;
  t.generic = !style && detected == Family::kGeneric;
  t.blocks_per_layer = family == Family::kLongcat ? 2 : 1;
  if (family == Family::kOuro) {
    // Every loop runs every layer's per-block work again.
    auto steps = f.IntOr("total_ut_steps", 4);
    if (!steps) return steps.error();
    t.blocks_per_layer = static_cast<int>(*steps);
  }
  t.decoder_layers = static_cast<int>(c.d.layers);
  t.hidden = c.d.hidden;
  t.vocab = c.d.vocab;
  t.heads = c.d.heads[0];
  // Tied output projection: the class default (the defaults table) unless
  // the config says; LFM2 spells it tie_embedding.
  auto tie = f.Bool("tie_word_embeddings", false);
  if (!tie) return tie.error();
  bool tied = *tie || model_type == "zamba2";  // vLLM's zamba2.py always ties
  if ((model_type == "lfm2" || model_type == "lfm2_moe") && f.Has("tie_embedding")) {
    auto t2 = f.Bool("tie_embedding", true);
    if (!t2) return t2.error();
    tied = *t2;
  }
  t.tied = tied;
  b->Embedding(c.d.vocab, c.d.hidden);
  if (!tied) b->LmHead(c.d.vocab, c.d.hidden);
  auto head_bias = f.Bool("lm_head_bias", false);  // PhiMoE
  if (!head_bias) return head_bias.error();
  // Phi's lm_head is a biased Linear (transformers phi/modeling_phi.py).
  const bool phi = model_type == "phi" || model_type == "phi-msft";
  // GPT-J's lm_head is biased too (transformers gptj/modeling_gptj.py).
  if (*head_bias || phi || model_type == "gptj") {
    b->Vector(ParamRole::kLmHead, "lm_head.bias", c.d.vocab);
  }
  // Learned absolute positions: GPT-2's and GPT-BigCode's wpe; OPT's table
  // keeps 2 rows more (OPTLearnedPositionalEmbedding's offset).
  if (model_type == "gpt_bigcode" || model_type == "gpt2" || model_type == "opt") {
    auto positions = f.RequiredInt({"n_positions", "max_position_embeddings"});
    if (!positions) return positions.error();
    const Int rows = *positions + (model_type == "opt" ? 2 : 0);
    b->Vector(ParamRole::kEmbedding, "wpe", rows * c.d.hidden);
  }
  // OPT-350m's word_embed_proj_dim (embeddings narrower than hidden, with
  // project_in / project_out) is not counted: refused, not guessed.
  if (model_type == "opt" && f.Has("word_embed_proj_dim")) {
    auto proj = f.RequiredInt({"word_embed_proj_dim"});
    if (!proj) return proj.error();
    if (*proj != c.d.hidden) {
      return f.Bad("word_embed_proj_dim",
                   "is " + std::to_string(*proj) + ", not hidden_size " +
                       std::to_string(c.d.hidden) +
                       ": kvbill does not count OPT's narrower embeddings and their projections");
    }
  }
  b->FinalNorm(c.d.hidden, style && style->layer_norm_bias);
  return t;
}

Status CheckDecoderOnly(const Fields& top, const Fields& text, const std::string& model_type) {
  for (const Fields* f : {&top, &text}) {
    if (f->Has("is_encoder_decoder") && f->Get("is_encoder_decoder") == true) {
      return f->Bad("is_encoder_decoder",
                    "is true: model_type \"" + model_type +
                        "\" is an encoder-decoder model (its decoder also attends to the "
                        "encoder's output), which kvbill does not read; " +
                        kDecoderOnly);
    }
  }
  const std::string lower = LowerAscii(model_type);
  for (const char* t : kEncoderOnlyTypes) {
    if (lower == t) {
      return top.Bad("model_type", "is \"" + model_type +
                                       "\", an encoder-only model: it keeps no KV cache, "
                                       "generating no tokens (vLLM serves it only as a pooling "
                                       "model); " +
                                       kDecoderOnly);
    }
  }
  if (const std::string a = EncoderOnlyArchitecture(top.object()); !a.empty()) {
    return top.Bad("architectures", "names " + a +
                                        ", an encoder-only model: it keeps no KV cache, "
                                        "generating no tokens (vLLM serves it only as a pooling "
                                        "model); " +
                                        kDecoderOnly);
  }
  for (const char* t : kRwkvTypes) {
    if (lower == t) {
      return top.Bad("model_type", "is \"" + model_type +
                                       "\": RWKV is a recurrent model (its layers keep a "
                                       "per-sequence state, not attention's keys and values), "
                                       "which kvbill has no rule for");
    }
  }
  return OkStatus();
}

std::vector<std::string> KnownModelTypes() {
  std::vector<std::string> out;
  for (const Style& s : kStyles) out.emplace_back(s.model_type);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kvbill::model_config
