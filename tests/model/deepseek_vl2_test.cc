// DeepSeek-VL2 and DeepSeek-OCR (model_type deepseek_vl_v2) as vLLM builds
// them: the text model is language_config (vLLM's DeepseekVLV2Config), its
// layers DeepseekV2DecoderLayer (deepseek_v2.py), which takes DeepseekAttention,
// plain multi-head attention of hidden / heads, when qk_nope_head_dim and
// qk_rope_head_dim are both 0. The vision towers (deepseek_vl2.py: timm's
// SigLIP-so400m; deepseek_ocr.py: SAM ViT-B and CLIP-L built from fixed
// settings, not from vision_config) are not counted. Every number is worked
// by hand in the comments.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const std::string kOcr =
    std::string(KVBILL_SOURCE_DIR) + "/tests/data/reconstructed/deepseek-ocr.json";

std::string ErrorOf(const std::string& text, bool text_only = true) {
  auto m = ParseHfConfig(text, "c.json", "c", {}, text_only);
  return m.ok() ? std::string("(loaded)") : m.error().message();
}

// deepseek-ai/DeepSeek-OCR's config.json (tests/data/reconstructed/README.md).
// language_config: hidden 1,280, 12 layers, 10 heads and 10 KV heads of
// 1,280 / 10 = 128 (kv_lora_rank null, qk dims 0: no MLA), MLP 6,848 in
// layer 0 (first_k_dense_replace 1), then MoE: 64 experts of 896, top 6, 2
// shared experts, a router without bias (topk_method greedy), vocabulary
// 129,280, untied (DeepseekV2Config's default).
//   attention q, k, v, o 4 x 1,280^2 = 6,553,600; norms 2 x 1,280 = 2,560;
//   layer 0: MLP 3 x 1,280 x 6,848 = 26,296,320: 32,852,480;
//   MoE layers: router 64 x 1,280 = 81,920; experts 64 x 3 x 1,280 x 896 =
//     220,200,960; shared 3 x 1,280 x (2 x 896) = 6,881,280: 227,164,160;
//     a layer 233,720,320; x 11 = 2,570,923,520;
//   embedding and lm_head 2 x 129,280 x 1,280 = 330,956,800; final norm
//   1,280: 2,934,734,080 (the checkpoint holds 3,336,106,240 in all; the
//   rest, 401,372,160, is SAM, CLIP, the projector and two separators).
//   Active: 6 of 64 experts, 58 x 3 x 1,280 x 896 = 199,557,120 fewer a MoE
//   layer: 2,934,734,080 - 11 x 199,557,120 = 739,605,760.
// KV: 12 layers x 10 heads x (128 + 128) x 2 B = 61,440 B a token.
TEST(DeepseekVl2Test, DeepseekOcrTextModelIsMultiHeadAttention) {
  auto loaded = LoadModel(kOcr, {}, /*text_only=*/true);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const ModelShape& m = *loaded;
  // Its language_config names no model_type: vLLM makes it a DeepseekV2Config.
  EXPECT_EQ(m.model_type, "deepseek_v2");
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 2934734080);
  EXPECT_EQ(m.params.Active(), 739605760);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 12);
  EXPECT_EQ(m.CountLayers(LayerKind::kLatentAttention), 0);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 61440.0);
  EXPECT_EQ(m.max_model_len, 8192);
}

TEST(DeepseekVl2Test, TowersAreRefusedButWithTextOnly) {
  auto loaded = LoadModel(kOcr);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message().rfind(
                kOcr + ": vision_config: kvbill cannot count the vision tower of model_type "
                       "\"deepseek_vl_v2\" (known: ",
                0),
            0u)
      << loaded.error().message();
}

// A small DeepSeek-VL2-style config: 2 layers, hidden 256, 4 heads.
nlohmann::json Small() {
  return nlohmann::json::parse(R"({"model_type": "deepseek_vl_v2", "global_view_pos": "head",
    "tile_tag": "2D",
    "language_config": {"model_type": "deepseek_v2", "hidden_size": 256,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
      "intermediate_size": 512, "vocab_size": 1000, "use_mla": false,
      "kv_lora_rank": null, "q_lora_rank": null, "qk_nope_head_dim": 0,
      "qk_rope_head_dim": 0, "v_head_dim": 0}})");
}

// Both qk dims 0: DeepseekAttention whatever head_dim or kv_lora_rank say:
// 2 layers x 4 heads x (64 + 64) x 2 B = 2,048 B a token.
TEST(DeepseekVl2Test, ZeroQkDimsMeanMultiHeadAttentionOfHiddenOverHeads) {
  nlohmann::json c = Small();
  c["language_config"]["head_dim"] = 96;
  c["language_config"]["kv_lora_rank"] = 512;
  auto m = ParseHfConfig(c.dump(), "c.json", "c", {}, /*text_only=*/true);
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->CountLayers(LayerKind::kFullAttention), 2);
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 2048.0);
  c["language_config"]["num_attention_heads"] = 3;
  c["language_config"]["num_key_value_heads"] = 3;
  EXPECT_EQ(ErrorOf(c.dump()),
            "c.json: language_config.num_attention_heads: 3 does not divide hidden_size 256 "
            "(vLLM's DeepseekAttention takes head_dim from them)");
}

// MLA keys (DeepSeek-VL2-Small's and -VL2's layout) are read as
// DeepSeek-V2's: 2 layers x (512 + 64) x 2 B = 2,304 B a token.
TEST(DeepseekVl2Test, MlaKeysStayLatent) {
  nlohmann::json c = Small();
  c["language_config"]["use_mla"] = true;
  c["language_config"]["kv_lora_rank"] = 512;
  c["language_config"]["qk_nope_head_dim"] = 128;
  c["language_config"]["qk_rope_head_dim"] = 64;
  c["language_config"]["v_head_dim"] = 128;
  auto m = ParseHfConfig(c.dump(), "c.json", "c", {}, /*text_only=*/true);
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->CountLayers(LayerKind::kLatentAttention), 2);
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 2304.0);
  // use_mla false beside MLA dims: the two vLLM wrappers build it
  // differently, so it is refused rather than guessed.
  c["language_config"]["use_mla"] = false;
  EXPECT_EQ(ErrorOf(c.dump()),
            "c.json: language_config.use_mla: is false beside qk_nope_head_dim 128 and "
            "qk_rope_head_dim 64: kvbill reads DeepSeek-VL2's multi-head attention only when both "
            "are 0 (vLLM's deepseek_vl2.py and deepseek_ocr.py build this case differently)");
}

// language_config is the text config only under deepseek_vl_v2: elsewhere
// the top level is read, and its global_view_pos still trips the guard on
// keys the generic rule does not read.
TEST(DeepseekVl2Test, LanguageConfigOnlyUnderDeepseekVl2) {
  nlohmann::json c = Small();
  c["model_type"] = "my_vlm";
  const std::string error = ErrorOf(c.dump());
  EXPECT_EQ(error.rfind("c.json: global_view_pos: kvbill cannot tell which layers keep KV for "
                        "model_type \"my_vlm\"",
                        0),
            0u)
      << error;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
