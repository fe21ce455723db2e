// ModelShape: what kvbill needs to know about a model to size its KV cache,
// its weights and its FLOPs, layer by layer. Built from a Hugging Face
// config.json by hf_config.h; spec of the rules in docs/models.md.
//
// Invariants: layers is non-empty; every attention layer has kv_heads > 0
// and head dims > 0; latent layers have latent_dim > 0; sliding and chunked
// layers have window > 0; linear-state layers have state_elements > 0.
#ifndef KVBILL_MODEL_MODEL_SHAPE_H_
#define KVBILL_MODEL_MODEL_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kvbill/model/kv_format.h"
#include "kvbill/util/units.h"

namespace kvbill {

enum class LayerKind {
  kFullAttention,     // keeps K and V of every token
  kLatentAttention,   // MLA: one compressed latent + decoupled rope key per token
  kSlidingWindow,     // keeps K and V of the last `window` tokens
  kChunkedAttention,  // keeps K and V of the tokens of the current `window`-token chunk
  kLinearState,       // linear attention / SSM: a constant state per sequence
};

// "full", "mla", "sliding", "chunked", "linear".
const char* LayerKindName(LayerKind kind);

struct LayerShape {
  LayerKind kind = LayerKind::kFullAttention;
  // Query heads and their dims, for attention FLOPs (0 for linear-state layers).
  std::int64_t query_heads = 0;
  std::int64_t qk_head_dim = 0;
  std::int64_t v_head_dim = 0;
  // Cached K/V heads (full, sliding, chunked). K vectors have qk_head_dim
  // elements, V vectors v_head_dim.
  std::int64_t kv_heads = 0;
  // MLA: elements of the cached latent per token (kv_lora_rank + qk_rope_head_dim).
  std::int64_t latent_dim = 0;
  // Sliding window or chunk size, in tokens (sliding and chunked layers).
  Tokens window = 0;
  // Linear-state layers: elements of recurrent + convolution state per sequence.
  std::int64_t state_elements = 0;

  bool KeepsPerTokenKv() const { return kind != LayerKind::kLinearState; }
};

// Parameter counts by role. Routed experts are counted once in
// routed_experts; active_routed_experts is what one token uses (top-k).
struct ParamCounts {
  std::int64_t embedding = 0;              // input token embedding
  std::int64_t lm_head = 0;                // output projection; 0 when tied to the embedding
  std::int64_t attention = 0;              // attention projections, biases and q/k norms
  std::int64_t dense_mlp = 0;              // dense feed-forward layers
  std::int64_t routed_experts = 0;         // all routed experts of all MoE layers
  std::int64_t active_routed_experts = 0;  // experts_per_token of them per MoE layer
  std::int64_t shared_experts = 0;         // always-on experts of MoE layers
  std::int64_t routers = 0;                // router / gate projections
  std::int64_t linear_mixers = 0;          // SSM and linear-attention layers
  std::int64_t norms = 0;                  // layer norms

  std::int64_t Total() const {
    return embedding + lm_head + attention + dense_mlp + routed_experts + shared_experts + routers +
           linear_mixers + norms;
  }
  std::int64_t Active() const { return Total() - routed_experts + active_routed_experts; }
};

struct MoeShape {
  std::int64_t layers = 0;             // layers with routed experts
  std::int64_t experts = 0;            // routed experts per MoE layer
  std::int64_t experts_per_token = 0;  // top-k
  std::int64_t params_per_expert = 0;
};

// How the published checkpoint stores its weights (from torch_dtype and
// quantization_config): linear layers of the experts may differ from the rest.
struct NativeWeightFormat {
  std::string dense = "bf16";    // attention, dense MLP, shared experts, mixers
  std::string experts = "bf16";  // routed experts
  std::string other = "bf16";    // embeddings, lm_head, norms, routers
};

struct ModelShape {
  std::string name;          // catalog name or file stem
  std::string source;        // file the shape was read from
  std::string architecture;  // architectures[0] or model_type
  std::int64_t hidden_size = 0;
  std::int64_t vocab_size = 0;
  Tokens max_position_embeddings = 0;  // 0 when the config does not say
  std::vector<LayerShape> layers;
  ParamCounts params;
  MoeShape moe;
  NativeWeightFormat native_weights;
  // Linear-state layers keep their state in this format (the model dtype).
  std::string state_format = "bf16";

  // Number of layers of `kind`.
  int CountLayers(LayerKind kind) const;
  // Largest kv_heads over the attention layers (the tensor-parallel split unit).
  std::int64_t MaxKvHeads() const;
  // Query heads of the first attention layer (tensor parallelism must divide them).
  std::int64_t QueryHeads() const;
};

}  // namespace kvbill

#endif  // KVBILL_MODEL_MODEL_SHAPE_H_
