// ModelShape: what kvbill needs to know about a model to size its KV cache,
// its weights and its FLOPs, layer by layer. Built from a Hugging Face
// config.json by hf_config.h; spec of the rules in docs/models.md.
//
// The layer inventory (`layers`) has one entry per cache a decoder layer
// keeps: a KV cache (full, sliding, chunked, MLA, MLA + sparse indexer), a
// constant per-sequence state (linear attention, Mamba, short convolution),
// or nothing (no-op). A decoder layer that runs attention and a Mamba mixer
// side by side (Falcon-H1) has two entries with the same `index`.
//
// Invariants: layers is non-empty; entries are ordered by index; every
// per-token entry has kv_heads > 0 and head dims > 0 (latent entries
// latent_dim > 0 instead); sliding and chunked entries have window > 0;
// state entries have a positive state size.
#ifndef KVBILL_MODEL_MODEL_SHAPE_H_
#define KVBILL_MODEL_MODEL_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kvbill/model/kv_format.h"
#include "kvbill/util/units.h"

namespace kvbill {

enum class LayerKind {
  kFullAttention,          // keeps K and V of every token
  kLatentAttention,        // MLA: one compressed latent + decoupled rope key per token
  kSlidingWindow,          // keeps K and V of the last `window` tokens
  kChunkedAttention,       // keeps K and V of the tokens of the current `window`-token chunk
  kLinearState,            // linear attention (lightning, gated DeltaNet): a constant state
  kSparseLatentAttention,  // MLA + sparse-attention indexer: the latent and an indexer key per
                           // token
  kMambaState,             // Mamba-1/2 mixer: convolution + SSM state per sequence
  kConvState,              // short convolution (LFM2): the last kernel-1 inputs per sequence
  kNoOp,                   // keeps nothing (NAS no-op attention, MLP-only layers)
  kCompressedLatent,       // DeepSeek-V4: a window of latents, plus one compressed latent
                           // (and on ratio-4 layers an indexer key) per compress_ratio tokens
};

// "full", "mla", "sliding", "chunked", "linear", "mla_indexer", "mamba",
// "conv", "none", "compressed".
const char* LayerKindName(LayerKind kind);

// Every kind, in the order reports list them.
const std::vector<LayerKind>& AllLayerKinds();

struct LayerShape {
  LayerKind kind = LayerKind::kFullAttention;
  int index = 0;  // the decoder layer this entry belongs to
  // Query heads and their dims, for attention FLOPs (0 for state entries).
  std::int64_t query_heads = 0;
  std::int64_t qk_head_dim = 0;
  std::int64_t v_head_dim = 0;
  // Cached K/V heads (full, sliding, chunked). K vectors have qk_head_dim
  // elements, V vectors v_head_dim; 0 for V means the layer caches K only
  // (K and V are the same tensor).
  std::int64_t kv_heads = 0;
  // Low-rank queries (Step 3's share_q_dim): hidden -> query_rank, projected
  // with K and V by one tensor every GPU holds whole, then query_rank ->
  // query_heads x qk_head_dim split by tensor parallelism; 0: queries are
  // projected from the hidden state directly.
  std::int64_t query_rank = 0;
  // MLA: elements of the cached latent per token (kv_lora_rank + qk_rope_head_dim),
  // the last rope_dim of them the rotary key.
  std::int64_t latent_dim = 0;
  std::int64_t rope_dim = 0;
  // Sparse-attention indexer: elements of the indexer key per token, one
  // key for all heads (not split by tensor parallelism). MLA + indexer
  // (DeepSeek-V3.2, GLM-5) store it in fp8 with one fp32 scale per 128
  // elements whatever the KV format, as DeepSeek's reference code and vLLM
  // keep it (indexer_bits 0); a full-attention layer with an indexer
  // (MiniMax-M3's sparse layers) stores it in indexer_bits bits per
  // element, without scales, also whatever the KV format.
  std::int64_t indexer_dim = 0;
  int indexer_bits = 0;
  std::int64_t indexer_heads = 0;  // the indexer's query heads (its scoring FLOPs)
  // Sparse attention: a decode query attends this many of the cached tokens
  // (DeepSeek Sparse Attention's index_topk; MiniMax-M3's top blocks, local
  // and initial blocks), chosen by the indexer, which scores every cached
  // token; 0: attention over every cached token. The cache keeps them all.
  Tokens sparse_topk = 0;
  // Sliding window or chunk size, in tokens (sliding and chunked layers; the
  // window of raw latents of compressed layers).
  Tokens window = 0;
  // Compressed layers (DeepSeek-V4): one compressed latent per
  // compress_ratio tokens beside the window (0: the window alone). With an
  // indexer (ratio 4), each compressed latent has an indexer key, and a
  // query attends sparse_topk compressed latents (sparse_topk counts
  // entries, not tokens) plus the window; without one (ratio 128) every
  // compressed latent. The compressor's not-yet-compressed tokens are
  // recurrent_state_elements in recurrent_state_bits (fp32) per sequence:
  // a constant that, unlike a state layer's, lives in sliding-window pages
  // a prefix cache keeps (vLLM).
  int compress_ratio = 0;
  // DeepSeek-V4's grouped output projection: o_groups, which tensor
  // parallelism must divide (vLLM keeps o_groups / tp groups a GPU).
  std::int64_t output_groups = 0;
  // State entries: elements kept per sequence. The convolution state is in
  // the model's state format; the recurrent (SSM / linear-attention) state in
  // `recurrent_state_bits` bits per element (0: the state format too).
  std::int64_t conv_state_elements = 0;
  std::int64_t recurrent_state_elements = 0;
  int recurrent_state_bits = 0;
  // Mamba-2: the B/C groups, and the convolution state elements one group
  // adds ((d_conv - 1) x 2 x d_state). Under tensor parallelism vLLM gives
  // every GPU the groups its heads read: a group count the degree does not
  // divide is raised to the degree (extra_groups_for_head_shards), so the
  // convolution state a GPU keeps grows (LayerStateBits).
  std::int64_t state_groups = 0;
  std::int64_t group_conv_state_elements = 0;
  // One learned sink logit per query head joins the softmax (gpt-oss):
  // attention kernels without sink support cannot run the layer.
  bool attention_sinks = false;
  // The decoder layer whose KV cache this attention reads, storing none of
  // its own (Gemma 3n's and Gemma 4 E2B / E4B's KV-shared layers: vLLM's
  // kv_sharing_target_layer_name); -1: the layer keeps its own. A sharing
  // entry adds no bytes to a footprint or a cache group, but its attention
  // still reads the source's K/V every step.
  int kv_source = -1;
  // The width the attention's q, k and v projections read when it is not
  // the model's hidden size (Zamba2: the hidden state concatenated with the
  // input embeddings, 2 x hidden); 0: hidden.
  std::int64_t input_dim = 0;

  bool SharesKv() const { return kv_source >= 0; }
  bool KeepsPerTokenKv() const {
    return kind == LayerKind::kFullAttention || kind == LayerKind::kLatentAttention ||
           kind == LayerKind::kSlidingWindow || kind == LayerKind::kChunkedAttention ||
           kind == LayerKind::kSparseLatentAttention || kind == LayerKind::kCompressedLatent;
  }
  bool HoldsState() const {
    return kind == LayerKind::kLinearState || kind == LayerKind::kMambaState ||
           kind == LayerKind::kConvState;
  }
  bool IsLatent() const {
    return kind == LayerKind::kLatentAttention || kind == LayerKind::kSparseLatentAttention;
  }
  bool IsCompressed() const { return kind == LayerKind::kCompressedLatent; }
  // Keeps only a window (or an attention chunk) of the context.
  bool IsWindowed() const {
    return kind == LayerKind::kSlidingWindow || kind == LayerKind::kChunkedAttention;
  }
  std::int64_t StateElements() const { return conv_state_elements + recurrent_state_elements; }
};

// Parameter counts by role. Routed experts are counted once in
// routed_experts; active_routed_experts is what one token uses (top-k).
struct ParamCounts {
  std::int64_t embedding = 0;              // input token embedding
  std::int64_t lm_head = 0;                // output projection; 0 when tied to the embedding
  std::int64_t attention = 0;              // attention projections, biases, q/k norms, indexers
  std::int64_t dense_mlp = 0;              // dense feed-forward layers
  std::int64_t routed_experts = 0;         // all routed experts of all MoE layers
  std::int64_t active_routed_experts = 0;  // experts_per_token of them per MoE layer
  std::int64_t shared_experts = 0;         // always-on experts of MoE layers
  std::int64_t routers = 0;                // router / gate projections and biases
  std::int64_t linear_mixers = 0;          // SSM, linear-attention and convolution mixers
  std::int64_t norms = 0;                  // layer norms
  std::int64_t vision = 0;                 // vision tower and its projector into the text model
  std::int64_t audio = 0;                  // audio tower and its projector
  std::int64_t mtp =
      0;  // multi-token-prediction modules: in the checkpoint, unused by plain decoding

  // What a server loads to decode: every parameter but the MTP modules.
  std::int64_t Total() const {
    return embedding + lm_head + attention + dense_mlp + routed_experts + shared_experts + routers +
           linear_mixers + norms + vision + audio;
  }
  // Every tensor of the published checkpoint.
  std::int64_t Checkpoint() const { return Total() + mtp; }
  // What one generated token touches: the towers and the routed experts a
  // token does not use are left out.
  std::int64_t Active() const {
    return Total() - routed_experts + active_routed_experts - vision - audio;
  }
};

struct MoeShape {
  std::int64_t layers = 0;             // layers with routed experts
  std::int64_t experts = 0;            // routed experts per MoE layer (the largest)
  std::int64_t experts_per_token = 0;  // top-k (the largest)
  std::int64_t params_per_expert = 0;  // of the first MoE layer
  // Zero-computation experts the router picks beside the routed ones
  // (LongCat-Flash's identity experts): experts_per_token is then the
  // routed experts a token is expected to reach, routed_top_k x experts /
  // (experts + zero_experts) rounded, and routed_top_k the config's top-k.
  std::int64_t zero_experts = 0;
  std::int64_t routed_top_k = 0;
};

// The role of a weight tensor, for counting and for which format stores it.
enum class ParamRole {
  kEmbedding,
  kLmHead,
  kAttention,
  kDenseMlp,
  kRoutedExperts,
  kSharedExperts,
  kRouter,
  kLinearMixer,
  kNorm,
  kVision,
  kAudio,
  kMtp,
};

// One weight tensor of the checkpoint (or `copies` tensors of one shape,
// for the experts of one layer). rows x cols elements each; quantization
// groups run along cols (the input features).
struct WeightGroup {
  std::string
      name;  // module name as the checkpoint spells it, e.g. "model.layers.3.self_attn.q_proj"
  ParamRole role = ParamRole::kAttention;
  // The role the tensor plays inside its module: role itself, except for the
  // tensors of MTP modules and towers, counted as kMtp / kVision / kAudio but
  // still attention, experts, an embedding copy... (which formats and draft
  // costs need).
  ParamRole module_role = ParamRole::kAttention;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t copies = 1;         // experts of the layer
  std::int64_t active_copies = 1;  // of them one token uses (routed experts: top-k)
  bool linear = false;             // a matmul weight (quantizable), not a norm, bias or embedding
  bool fp32 = false;               // kept in fp32 whatever the dtype (DeepSeek-V4's mixers)
  // A table only the batch's rows are read from each step, whatever ties
  // the lm_head to the token embedding (Gemma 3n's and Gemma 4's per-layer
  // input embeddings).
  bool gathered = false;
  // Times one forward pass applies the tensor to a token: more than once for
  // weights a model reuses (Zamba2's shared transformer blocks, run at
  // several hybrid layers; Ouro's layers, run once per loop).
  std::int64_t uses = 1;
  // A K or V projection's heads (0: not one): tensor parallelism over more
  // GPUs than heads gives each GPU one whole head (vLLM's QKVParallelLinear
  // replicates them), not a fraction.
  std::int64_t kv_heads = 0;
  // A Mamba-2 mixer's in_proj or conv1d: its B and C groups (0: none) and
  // the elements of the tensor that are theirs. Tensor parallelism over more
  // GPUs than groups gives each GPU whole groups (vLLM's
  // extra_groups_for_head_shards replicates them), not a fraction.
  std::int64_t state_groups = 0;
  std::int64_t group_elements = 0;
  WeightFormat format;  // storage format in the checkpoint

  std::int64_t Params() const { return rows * cols * copies; }
};

// A sizing key the config.json omits, read at its transformers class default
// (docs/models.md, class defaults): "hidden_size" = "4096". The key as the
// text config spells it, with its prefix ("text_config.vocab_size"); the
// value as JSON text.
struct DefaultedField {
  std::string key;
  std::string value;
};

struct ModelShape {
  std::string name;          // catalog name or file stem
  std::string source;        // file the shape was read from
  std::string architecture;  // architectures[0] or model_type
  std::string model_type;    // of the text config (e.g. "gemma3_text")
  std::int64_t hidden_size = 0;
  std::int64_t vocab_size = 0;
  Tokens max_position_embeddings = 0;  // 0 when the config does not say
  // The longest sequence (prompt + output) the model serves, as vLLM derives
  // max_model_len from the config (src/model/max_model_len.h): the smallest
  // length key, scaled by a RoPE factor. A config with no length key gets
  // vLLM's 2,048 (max_model_len_assumed); 0 for a shape built by hand.
  Tokens max_model_len = 0;
  // The config says no length: max_model_len is vLLM's assumption, which a
  // deployment's own max_model_len replaces without complaint.
  bool max_model_len_assumed = false;
  // The longest max_model_len a deployment may set without
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN, when vLLM's default is shorter: a
  // LongRoPE model (Phi-3-128k, Phi-3.5, Phi-4-mini) starts at its
  // original_max_position_embeddings (max_model_len) unless --max-model-len
  // asks for up to this. 0: max_model_len is both.
  Tokens max_model_len_ceiling = 0;
  Tokens MaxModelLenCeiling() const {
    return max_model_len_ceiling > 0 ? max_model_len_ceiling : max_model_len;
  }
  // The config's model type has no family rule in kvbill (docs/models.md):
  // its layers were read by the generic rule, as a Llama-like model.
  bool generic_rule = false;
  // The config names no model_type (a remote-code model's hand-written file:
  // openbmb's MiniCPM3-4B): model_type was read from its architecture, the
  // class vLLM loads ("MiniCPM3ForCausalLM": "minicpm3").
  bool model_type_from_architecture = false;
  // The sizing keys (hidden_size, layers, heads, KV heads, head_dim,
  // intermediate sizes, vocab_size, experts, MLA dims, sliding_window) the
  // config omits and the model type's class default supplied, in the
  // defaults table's order; defaults_source names the configuration class
  // file. Keys a class derives from others (num_key_value_heads absent is
  // multi-head attention) are not listed.
  std::vector<DefaultedField> defaulted_fields;
  std::string defaults_source;
  // Multimodal RoPE: the RoPE scaling has an `mrope_section` (vLLM's
  // uses_mrope: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5).
  bool uses_mrope = false;
  // Transformer blocks a decoder layer holds (LongCat-Flash: two
  // attentions and two MLPs a layer): the per-block work of the time model
  // (norms and elementwise passes, all-reduces, launches) scales by it.
  int blocks_per_layer = 1;
  // Dense MLP blocks of the decoder (MTP modules and towers not counted;
  // an MLP beside the experts, Gemma 4's or Arctic's, is a shared expert):
  // two a layer for LongCat-Flash.
  std::int64_t dense_mlps = 0;
  std::vector<LayerShape> layers;
  ParamCounts params;
  MoeShape moe;
  // Every weight tensor (grouped), with the format the checkpoint stores it
  // in; params is their sum by role.
  std::vector<WeightGroup> weights;
  std::string weight_description;  // e.g. "fp8-block128 linear, bf16 other"
  // The model's 16/32-bit type (torch_dtype): unquantized tensors, states.
  std::string dtype = "bf16";
  // The ElementFormat the checkpoint's dense (non-expert) linear layers
  // compute in: "fp8-e4m3" for DeepSeek-V3, the dtype for weight-only int4.
  std::string compute_format = "bf16";
  // State entries keep their state in this format (the model dtype).
  std::string state_format = "bf16";
  // The KV cache format the checkpoint declares (an 8-bit float
  // kv_cache_scheme in compressed-tensors, ModelOpt's kv_cache_quant_algo
  // FP8): "fp8-e4m3", which vLLM's kv_cache_dtype "auto" then stores; empty
  // when it declares none.
  std::string checkpoint_kv_format;

  // Number of inventory entries of `kind`.
  int CountLayers(LayerKind kind) const;
  // Decoder layers (the largest index + 1).
  int DecoderLayers() const;
  // Whether any entry keeps a constant per-sequence state.
  bool HasState() const;
  // Whether any entry is a compressed layer (DeepSeek-V4).
  bool HasCompressedLayers() const;
  // Largest kv_heads over the attention layers (the tensor-parallel split unit).
  std::int64_t MaxKvHeads() const;
  // Query heads of the first attention layer (tensor parallelism must divide them).
  std::int64_t QueryHeads() const;
  // Parameters a forward pass applies again beyond once each (WeightGroup::
  // uses - 1 times): their FLOPs and weight reads per token add to the
  // once-each figures of `params`. With attention_only, those of attention
  // projections alone (which the attention entries' own GEMMs price).
  std::int64_t ReappliedParams(bool attention_only = false) const;
};

}  // namespace kvbill

#endif  // KVBILL_MODEL_MODEL_SHAPE_H_
