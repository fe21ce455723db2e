// Ring-linear 2.0 (model_type bailing_moe_linear) as SGLang builds it
// (python/sglang/srt/models/bailing_moe_linear.py, BailingMoeLinearV2ForCausalLM):
// every layer_group_size-th layer softmax attention (GQA), the others
// lightning attention with a constant state. Every number is worked by hand
// below.
#include <gtest/gtest.h>

#include <string>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const std::string kDir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/reconstructed/";

// inclusionAI/Ring-mini-linear-2.0's config.json (tests/data/reconstructed/
// README.md gives the sources of its keys). H 2,048, 20 layers,
// layer_group_size 5: layers 4, 9, 14 and 19 softmax attention, the other 16
// lightning attention. 16 heads of head_dim 128, 4 KV heads, use_qk_norm,
// no biases; MoE from layer 1 (first_k_dense_replace 1): 256 experts of 512,
// top 8, one shared expert of 512, an expert bias; vocabulary 157,184,
// untied.
//   softmax layer: query_key_value 2,048 x (16 + 2 x 4) x 128 = 6,291,456;
//     dense 2,048 x 2,048 = 4,194,304; q and k norms 2 x 128 = 256:
//     10,486,016; x 4 = 41,944,064.
//   lightning layer: query_key_value for every head 3 x 2,048 x 2,048 =
//     12,582,912; g_proj 4,194,304; dense 4,194,304; g_norm 2,048; q and k
//     norms 256: 20,973,824; x 16 = 335,581,184.
//   Layer 0 dense MLP 3 x 2,048 x 5,120 = 31,457,280.
//   Layers 1-19 MoE: experts 256 x 3 x 2,048 x 512 = 805,306,368; shared
//     3 x 2,048 x 512 = 3,145,728; router 256 x 2,048 = 524,288; expert bias
//     256: 808,976,640; x 19 = 15,370,556,160.
//   Norms 2 x 2,048 a layer: 81,920; final norm 2,048. Embedding and lm_head
//   2 x 157,184 x 2,048 = 643,825,664.
//   Total 16,423,448,320 (published: 16.4B).
//   Active: 8 of 256 experts, 19 x 248 x 3,145,728 = 14,822,670,336 less:
//   1,600,777,984; without the embedding and lm_head 956,952,320.
// KV: 4 layers x 4 KV heads x 128 x (K, V) x 2 B = 8,192 B a token (a Llama
// reading said 40,960: 20 layers). State: 16 layers x 16 heads x 128 x 128 x
// 2 B (bf16) = 8,388,608 B a sequence.
TEST(BailingLinearTest, RingMiniLinearAsPublished) {
  auto loaded = LoadModel(kDir + "ring-mini-linear-2.0.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const ModelShape& m = *loaded;
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 16423448320);
  EXPECT_EQ(m.params.Active(), 1600777984);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 4);
  EXPECT_EQ(m.CountLayers(LayerKind::kLinearState), 16);
  EXPECT_EQ(m.layers[0].kind, LayerKind::kLinearState);
  EXPECT_EQ(m.layers[4].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.layers[4].kv_heads, 4);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 8192.0);
  EXPECT_EQ(StateBytesPerSequence(m), 8388608);
  EXPECT_EQ(m.max_model_len, 131072);
}

// Four layers, layer_group_size 2 (layers 1 and 3 softmax), H 64, 4 heads of
// 16, 2 KV heads, use_qkv_bias (query_key_value biased in both kinds of
// layer, the output projections not), no q/k norms, dense (no experts),
// intermediate 128, vocabulary 100, tied:
//   softmax: query_key_value 64 x (4 + 4) x 16 = 8,192 + bias 128; dense
//     64 x 64 = 4,096: 12,416;
//   lightning: query_key_value 3 x 64 x 64 = 12,288 + bias 192; g_proj 4,096;
//     dense 4,096; g_norm 64: 20,736;
//   MLP 3 x 64 x 128 = 24,576; norms 128 a layer.
//   2 x (12,416 + 20,736) + 4 x (24,576 + 128) = 66,304 + 98,816 = 165,120;
//   embedding 6,400; final norm 64: 171,584.
// KV: 2 layers x 2 x 16 x 2 x 2 B = 256 B a token; state 2 x 4 x 16 x 16 x 2 B
// = 4,096 B.
TEST(BailingLinearTest, GroupSizeBiasesAndDenseLayers) {
  const ModelShape m = InlineConfig(R"({"model_type": "bailing_moe_linear",
      "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128,
      "vocab_size": 100, "tie_word_embeddings": true, "layer_group_size": 2,
      "use_qkv_bias": true, "torch_dtype": "bfloat16"})");
  EXPECT_EQ(m.params.Total(), 171584);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 2);
  EXPECT_EQ(m.layers[0].kind, LayerKind::kLinearState);
  EXPECT_EQ(m.layers[1].kind, LayerKind::kFullAttention);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 256.0);
  EXPECT_EQ(StateBytesPerSequence(m), 4096);
}

// SGLang asserts num_hidden_layers % layer_group_size == 0; a config without
// the key has no layout to read; latent softmax layers (kv_lora_rank) are
// Ling 2.5's layout, vLLM's bailing_moe_linear.py, which kvbill does not size.
TEST(BailingLinearTest, RefusesWhatItCannotRead) {
  const std::string head = R"({"model_type": "bailing_moe_linear", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
      "vocab_size": 100)";
  EXPECT_EQ(InlineError(head + R"(, "layer_group_size": 3})"),
            "c.json: layer_group_size: must divide num_hidden_layers 4 (SGLang asserts it), got 3");
  EXPECT_EQ(InlineError(head + "}"), "c.json: layer_group_size: missing");
  EXPECT_EQ(InlineError(head + R"(, "layer_group_size": 2, "kv_lora_rank": 32,
      "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16})"),
            "c.json: kv_lora_rank: is set: latent (MLA) softmax layers are Ling 2.5's layout "
            "(vLLM's bailing_moe_linear.py), which kvbill does not size; model_type "
            "\"bailing_moe_linear\" is read as Ring-linear 2.0 (GQA softmax layers)");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
