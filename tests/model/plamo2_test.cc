// PLaMo 2 as vLLM builds it (vllm/model_executor/models/plamo2.py): Mamba
// mixers and sliding-window attention in turn. Every number is worked by
// hand in the comments.
#include <gtest/gtest.h>

#include <string>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// pfnet/plamo-2-1b's config.json as published (the copy at
// huggingface.co/mlx-community/plamo-2-1b/raw/main/config.json, whose
// weights are pfnet's).
constexpr char kPlamo2_1b[] = R"({
  "architectures": ["PlamoForCausalLM"], "attention_window_size": 2048,
  "auto_map": {"AutoConfig": "modeling_plamo.PlamoConfig",
               "AutoModelForCausalLM": "modeling_plamo.PlamoForCausalLM"},
  "bos_token_id": 1, "capacity_factor": 1.0, "eos_token_id": 2,
  "eval_attention_n_bit": null, "eval_mlp_n_bit": null, "expert_dropout": 0.0,
  "fp8_accum_dtype": "bfloat16", "group_size": 1024, "hidden_size": 2048,
  "hidden_size_per_head": 128, "image_feature_size": null, "image_proj_type": "linear",
  "image_token_id": null, "intermediate_size": 8192, "k_expert": null, "linear_type": "fp8",
  "mamba_chunk_size": 256, "mamba_d_conv": 4, "mamba_d_state": 64, "mamba_enabled": true,
  "mamba_num_heads": 32, "mamba_step": 2, "max_position_embeddings": 10485760,
  "model_type": "plamo2", "n_expert": null, "num_attention_heads": 16, "num_hidden_layers": 16,
  "num_key_value_heads": 1, "rms_norm_eps": 1e-06, "shared_intermediate_size": null,
  "sliding_window": 2048, "sparse_intermediate_size": null, "sparse_step": null,
  "tokenizer_class": "PlamoTokenizer", "torch_dtype": "float32", "transformers_version": "4.44.2",
  "use_cache": true, "use_predefined_initial_state": false, "vocab_size": 100000})";

ModelShape Parse(const std::string& text) {
  auto m = ParseHfConfig(text, "c.json", "c");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

// Hidden H 2,048, 16 layers, mamba_step 2: layer i attends when i % 2 == 1,
// so 8 Mamba and 8 attention layers. Mamba channels Im = 32 heads x 128 =
// 4,096, dt rank max(64, 2,048 / 16) = 128:
//   in_proj 2 x 4,096 x 2,048 = 16,777,216; conv1d 4,096 x 4 = 16,384;
//   bcdt_proj (128 + 2 x 64) x 4,096 = 1,048,576; dt_proj 32 x 128 = 4,096;
//   A, D, dt_bias 3 x 32 = 96; dt, B and C norms 128 + 64 + 64 = 256;
//   out_proj 2,048 x 4,096 = 8,388,608: 26,235,232.
// Attention (16 heads, 1 KV head of 128): qkv (16 + 2) x 128 x 2,048 =
//   4,718,592; o 2,048 x 2,048 = 4,194,304; q and k norms (16 + 1) x 128 =
//   2,176: 8,915,072.
// Every layer: gated MLP 3 x 8,192 x 2,048 = 50,331,648 and four norms
// 8,192. Layers: 8 x (26,235,232 + 50,339,840) + 8 x (8,915,072 +
// 50,339,840) = 612,600,576 + 474,039,296 = 1,086,639,872. Embedding
// (tied: the class default) 100,000 x 2,048 = 204,800,000, final norm
// 2,048: 1,291,441,920, which the fp32 checkpoint's 5.166 GB (the shards'
// sum, its 819.2 MB shard the embedding alone) confirms: 4 bytes each.
TEST(Plamo2Test, TheOneBillionModelAsPublished) {
  const ModelShape m = Parse(kPlamo2_1b);
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 1291441920);
  EXPECT_EQ(m.CountLayers(LayerKind::kMambaState), 8);
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingWindow), 8);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 0);
  EXPECT_EQ(m.layers[0].kind, LayerKind::kMambaState);
  EXPECT_EQ(m.layers[1].kind, LayerKind::kSlidingWindow);
  EXPECT_EQ(m.layers[1].window, 2048);
  // A float32 checkpoint is served in bf16. KV: 8 layers x 1 head x 128 x
  // (K, V) x 2 B = 4,096 B a token, each within its 2,048-token window.
  // State: per Mamba layer conv 3 x 4,096 = 12,288 and SSM 32 x 128 x 64 =
  // 262,144 elements, x 2 B = 548,864 B; x 8 = 4,390,912 B a sequence.
  EXPECT_EQ(m.dtype, "bf16");
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 4096.0);
  EXPECT_EQ(StateBytesPerSequence(m, 1), 4390912);
  EXPECT_EQ(m.max_model_len, 10485760);
}

// A config that leaves out what the remote configuration class defaults:
// hidden_size_per_head 128, mamba_d_state 64, mamba_d_conv 4, mamba_step 2,
// attention_window_size 2048 (and so sliding_window), tied embeddings.
// With 2 layers (one Mamba, one attention) of H 256, 2 Mamba heads, 2
// attention heads and 1 KV head, MLP 512, vocabulary 1,000:
//   Mamba: Im 256, dt 64: in_proj 131,072 + conv 1,024 + bcdt (64 + 128) x
//   256 = 49,152 + dt_proj 128 + A, D, dt_bias 6 + norms 64 + 128 = 192 +
//   out_proj 65,536 = 247,110;
//   attention: qkv (2 + 2) x 128 x 256 = 131,072 + o 65,536 + norms 384 =
//   196,992; each layer MLP 3 x 512 x 256 = 393,216 and norms 1,024;
//   embedding 256,000, final norm 256:
//   247,110 + 196,992 + 2 x 394,240 + 256,256 = 1,488,838.
// With one layer, mamba_step 2 (no more layers than 2 / 2): the last layer
// attends, so the only layer does.
TEST(Plamo2Test, ClassDefaultsAndTheLayerPattern) {
  const std::string base = R"({"model_type": "plamo2", "hidden_size": 256,
      "num_attention_heads": 2, "num_key_value_heads": 1, "mamba_num_heads": 2,
      "intermediate_size": 512, "vocab_size": 1000, )";
  const ModelShape two = Parse(base + R"("num_hidden_layers": 2})");
  EXPECT_EQ(two.params.Total(), 1488838);
  EXPECT_EQ(two.layers[0].kind, LayerKind::kMambaState);
  EXPECT_EQ(two.layers[1].kind, LayerKind::kSlidingWindow);
  EXPECT_EQ(two.layers[1].window, 2048);
  EXPECT_EQ(two.max_model_len, 10485760);
  const ModelShape one = Parse(base + R"("num_hidden_layers": 1})");
  EXPECT_EQ(one.CountLayers(LayerKind::kMambaState), 0);
  EXPECT_EQ(one.CountLayers(LayerKind::kSlidingWindow), 1);
  // mamba_step 4 over 8 layers: attention at 2 and 6.
  const ModelShape four = Parse(base + R"("num_hidden_layers": 8, "mamba_step": 4})");
  EXPECT_EQ(four.CountLayers(LayerKind::kSlidingWindow), 2);
  EXPECT_EQ(four.layers[2].kind, LayerKind::kSlidingWindow);
  EXPECT_EQ(four.layers[6].kind, LayerKind::kSlidingWindow);
  auto step = ParseHfConfig(base + R"("num_hidden_layers": 2, "mamba_step": 1})", "c.json", "c");
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.error().message().rfind("c.json: mamba_step: ", 0), 0u) << step.error().message();
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
