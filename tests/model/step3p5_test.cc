// Step 3.5 Flash as vLLM builds it (vllm/model_executor/models/step3p5.py):
// full and sliding layers with different query heads, a per-head gate,
// MoE layers by moe_layers_enum. Every number is worked by hand below.
#include <gtest/gtest.h>

#include <string>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const std::string kDir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/reconstructed/";

// stepfun-ai/Step-3.5-Flash's config.json (tests/data/reconstructed/README.md
// gives the sources of its keys). H 4,096, 45 layers (layer_types has 48
// entries: the last 3 are the MTP layers' and vLLM's main model builds none
// of them), head_dim 128, 8 KV heads (num_attention_groups) on every layer.
// layer_types: layer i is full when i % 4 == 0: 12 full (0, 4, ..., 44) with
// 64 query heads, 33 sliding (window 512) with attention_other_setting's 96.
//   full attention: q 4,096 x 8,192 = 33,554,432; k, v 2 x 4,096 x 1,024 =
//     8,388,608; o 33,554,432; q and k norms 2 x 128 = 256; g_proj 4,096 x
//     64 = 262,144: 75,759,872;
//   sliding: q 4,096 x 12,288 = 50,331,648; k, v 8,388,608; o 50,331,648;
//     norms 256; g_proj 4,096 x 96 = 393,216: 109,445,376;
//   12 x 75,759,872 + 33 x 109,445,376 = 909,118,464 + 3,611,697,408 =
//     4,520,815,872.
//   Layers 0-2 dense: 3 x 4,096 x 11,264 = 138,412,032 each: 415,236,096.
//   Layers 3-44 MoE (moe_layers_enum): 288 experts 288 x 3 x 4,096 x 1,280 =
//     4,529,848,320; the shared expert 3 x 4,096 x 1,280 = 15,728,640; the
//     router 4,096 x 288 = 1,179,648 and its bias 288: 4,546,756,896; x 42 =
//     190,963,789,632.
//   Norms 2 x 4,096 a layer: 368,640. Embedding and lm_head (untied)
//   2 x 128,896 x 4,096 = 1,055,916,032; final norm 4,096.
//   Total 196,956,130,368 (the card's "196B").
//   Active: 8 of 288 experts, 42 x 280 x 15,728,640 = 184,968,806,400 less:
//   11,987,323,968 (the card's "11B").
// KV: 45 layers x 8 heads x 128 x (K, V) x 2 B = 184,320 B a token (the 33
// sliding layers within their 512-token windows).
TEST(Step3p5Test, FlashAsPublished) {
  auto loaded = LoadModel(kDir + "step-3.5-flash.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const ModelShape& m = *loaded;
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 196956130368);
  EXPECT_EQ(m.params.Active(), 11987323968);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 12);
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingWindow), 33);
  EXPECT_EQ(m.layers[0].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.layers[1].kind, LayerKind::kSlidingWindow);
  EXPECT_EQ(m.layers[1].window, 512);
  EXPECT_EQ(m.layers[44].kind, LayerKind::kFullAttention);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 184320.0);
  EXPECT_EQ(m.max_model_len, 262144);
}

// Four layers (layer_types has a fifth entry, an MTP layer's), H 64,
// head_dim 16, 2 KV heads, 4 query heads on full layers and 6 on sliding
// ones, intermediate 128, 4 experts of 32 (top 2) and a shared expert of 32
// on layers 2 and 3, vocabulary 100, untied, the head-wise gate on:
//   full: q 64 x 64 + k, v 2 x 64 x 32 + o 64 x 64 = 12,288, norms 32,
//     g_proj 64 x 4 = 256: 12,576;
//   sliding: q 64 x 96 = 6,144 + k, v 4,096 + o 6,144, norms 32, g_proj
//     64 x 6 = 384: 16,800;
//   dense MLP 3 x 64 x 128 = 24,576; MoE 4 x 3 x 64 x 32 = 24,576 + shared
//     6,144 + router 256 + its bias 4 = 30,980; norms 128 a layer.
//   Layer 0 (full, dense) 37,280; 1 (sliding, dense) 41,504; 2 (sliding,
//   MoE) 47,908; 3 (full, MoE) 43,684: 170,376; embedding and head 12,800,
//   final norm 64: 183,240.
// KV: 4 x 2 x 16 x 2 x 2 B = 512 B a token.
TEST(Step3p5Test, OtherSettingHeadsGateAndMoeLayers) {
  const std::string base = R"({"model_type": "step3p5", "hidden_size": 64,
      "num_hidden_layers": 4, "num_attention_heads": 4, "num_attention_groups": 2,
      "head_dim": 16, "intermediate_size": 128, "vocab_size": 100,
      "tie_word_embeddings": false, "use_head_wise_attn_gate": true,
      "moe_num_experts": 4, "moe_top_k": 2, "moe_intermediate_size": 32,
      "share_expert_dim": 32, "moe_layers_enum": "2,3",
      "layer_types": ["full_attention", "sliding_attention", "sliding_attention",
                      "full_attention", "sliding_attention"],
      "attention_other_setting": {"attention_type": "sliding_attention",
          "num_attention_heads": 6, "num_attention_groups": 2, "head_dim": 16}, )";
  const ModelShape m = InlineConfig(base + R"("sliding_window": 8})");
  EXPECT_EQ(m.params.Total(), 183240);
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingWindow), 2);
  EXPECT_EQ(m.layers[1].window, 8);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 512.0);
  // No window: vLLM builds the sliding layers as full attention, with the
  // other setting's heads still (the same parameters).
  const ModelShape full = InlineConfig(base + R"("sliding_window": null})");
  EXPECT_EQ(full.params.Total(), 183240);
  EXPECT_EQ(full.CountLayers(LayerKind::kFullAttention), 4);
}

// model_type step3p7 (Step-3.7-Flash's text model, flattened: vLLM's
// step3p7.py builds its language model as Step 3.5's) is read by the same
// rule, in StepFun's keys or in Hugging Face's (num_experts,
// num_experts_per_tok, num_key_value_heads). The layout of
// OtherSettingHeadsGateAndMoeLayers above, so the same working: 183,240
// parameters, 512 B a token. Active: layers 2 and 3 hold 4 experts of
// 3 x 64 x 32 = 6,144, 2 routed a token: 183,240 - 2 x 2 x 6,144 = 158,664.
TEST(Step3p5Test, Step3p7IsReadAsStep3p5InEitherKeys) {
  const std::string layout = R"("model_type": "step3p7", "hidden_size": 64,
      "num_hidden_layers": 4, "num_attention_heads": 4, "head_dim": 16,
      "intermediate_size": 128, "vocab_size": 100, "tie_word_embeddings": false,
      "use_head_wise_attn_gate": true, "moe_intermediate_size": 32,
      "share_expert_dim": 32, "moe_layers_enum": "2,3", "sliding_window": 8,
      "layer_types": ["full_attention", "sliding_attention", "sliding_attention",
                      "full_attention", "sliding_attention"],
      "attention_other_setting": {"attention_type": "sliding_attention",
          "num_attention_heads": 6, "num_attention_groups": 2, "head_dim": 16}, )";
  const ModelShape stepfun = InlineConfig("{" + layout + R"("num_attention_groups": 2,
      "moe_num_experts": 4, "moe_top_k": 2})");
  const ModelShape hf = InlineConfig("{" + layout + R"("num_key_value_heads": 2,
      "num_experts": 4, "num_experts_per_tok": 2})");
  for (const ModelShape* m : {&stepfun, &hf}) {
    EXPECT_FALSE(m->generic_rule);
    EXPECT_EQ(m->params.Total(), 183240);
    EXPECT_EQ(m->params.Active(), 158664);
    EXPECT_EQ(m->CountLayers(LayerKind::kSlidingWindow), 2);
    EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 512.0);
  }
}

TEST(Step3p5Test, RefusesWhatVllmDoesNotBuild) {
  const std::string base = R"({"model_type": "step3p5", "hidden_size": 64,
      "num_hidden_layers": 4, "num_attention_heads": 4, "num_attention_groups": 2,
      "head_dim": 16, "vocab_size": 100, )";
  EXPECT_EQ(InlineError(base + R"("att_impl_type": "MLA"})"),
            "c.json: att_impl_type: is \"MLA\": vLLM's step3p5.py builds only \"GQA\"");
  EXPECT_EQ(InlineError(base + R"("layer_types": ["full_attention", "sliding_attention",
      "sliding_attention"], "sliding_window": 8})"),
            "c.json: layer_types: has 3 entries, num_hidden_layers is 4");
  EXPECT_EQ(InlineError(base + R"("layer_types": ["full_attention", "sliding_attention",
      "sliding_attention", "full_attention"], "sliding_window": 8,
      "attention_other_setting": {"attention_type": "sliding_attention",
          "num_attention_heads": 6, "num_attention_groups": 2, "head_dim": 32}})"),
            "c.json: attention_other_setting.head_dim: is 32, not head_dim 16: kvbill sizes "
            "one head dim for every layer");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
