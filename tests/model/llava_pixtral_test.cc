// Pixtral-12B in Hugging Face's LLaVA format (mistral-community/pixtral-12b:
// model_type llava, vision_config.model_type pixtral) as vLLM builds it:
// llava.py LlavaForConditionalGeneration with init_vision_tower_for_llava's
// PixtralHFVisionModel (pixtral.py) and LlavaMultiModalProjector. Every
// number is worked by hand in the comments.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const std::string kConfig =
    std::string(KVBILL_SOURCE_DIR) + "/tests/data/reconstructed/pixtral-12b.json";

std::string ErrorOf(const std::string& text) {
  auto m = ParseHfConfig(text, "c.json", "c");
  return m.ok() ? std::string("(loaded)") : m.error().message();
}

// tests/data/reconstructed/README.md gives the source of every key.
// Text (Mistral NeMo's layers): hidden 5,120, 40 layers, 32 heads of 128,
// 8 KV heads, MLP 14,336, vocabulary 131,072, untied.
//   attention q 5,120 x 4,096 = 20,971,520; k, v 2 x 5,120 x 1,024 =
//     10,485,760; o 4,096 x 5,120 = 20,971,520: 52,428,800;
//   MLP 3 x 5,120 x 14,336 = 220,200,960; norms 2 x 5,120 = 10,240;
//   a layer 272,640,000; x 40 = 10,905,600,000;
//   embedding and lm_head 2 x 131,072 x 5,120 = 1,342,177,280; final norm
//   5,120: 12,247,782,400.
// Tower: vision_feature_layer -1 builds all 24 blocks (1,024 wide, MLP
// 4,096, patch 16):
//   patch Conv2d 3 x 16 x 16 x 1,024 (no bias) = 786,432; ln_pre 1,024;
//   a block: q, k, v, o 4 x 1,024^2 = 4,194,304; gate, up, down 3 x 1,024 x
//     4,096 = 12,582,912; two RMSNorms 2,048: 16,779,264; x 24 =
//     402,702,336; the tower 403,489,792.
//   Projector (LlavaMultiModalProjector, multimodal_projector_bias absent:
//   LlavaConfig's default true): linear_1 1,024 x 5,120 + 5,120 =
//   5,248,000; linear_2 5,120 x 5,120 + 5,120 = 26,219,520: 31,467,520.
//   Vision 434,957,312; total 12,682,739,712.
// KV: 40 layers x 8 heads x (128 + 128) x 2 B = 163,840 B a token
// (sliding_window null: every layer full).
TEST(LlavaPixtralTest, Pixtral12bAsVllmBuildsIt) {
  auto loaded = LoadModel(kConfig);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const ModelShape& m = *loaded;
  EXPECT_EQ(m.params.vision, 434957312);
  EXPECT_EQ(m.params.Total(), 12682739712);
  EXPECT_EQ(m.params.Active(), 12247782400);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 40);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 163840.0);
  auto text = LoadModel(kConfig, {}, /*text_only=*/true);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(text->params.Total(), 12247782400);
}

// A small LLaVA over Pixtral: text hidden 64 (2 layers, 4 heads, MLP 128,
// vocabulary 100), tower 32 wide, MLP 48, 3 layers, 2 heads, patch 4.
//   patch 3 x 4 x 4 x 32 = 1,536; ln_pre 32; a block 4 x 32^2 + 3 x 32 x
//   48 + 2 x 32 = 4,096 + 4,608 + 64 = 8,768; projector 32 x 64 + 64 +
//   64 x 64 + 64 = 6,272.
constexpr const char* kSmall = R"({"model_type": "llava",
  "text_config": {"model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
    "vocab_size": 100},
  "vision_config": {"model_type": "pixtral", "hidden_size": 32, "intermediate_size": 48,
    "num_hidden_layers": 3, "num_attention_heads": 2, "patch_size": 4, "image_size": 16}})";

TEST(LlavaPixtralTest, FeatureLayerAndProjectorBiasAsLlavaReadsThem) {
  // vision_feature_layer absent: LlavaConfig's -2, two of the three blocks:
  // 1,536 + 32 + 2 x 8,768 + 6,272 = 25,376.
  auto m = ParseHfConfig(kSmall, "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.vision, 25376);
  // -1: all three blocks (8,768 more); no projector bias: 2 x 64 fewer.
  nlohmann::json c = nlohmann::json::parse(kSmall);
  c["vision_feature_layer"] = -1;
  c["multimodal_projector_bias"] = false;
  auto all = ParseHfConfig(c.dump(), "c.json", "c");
  ASSERT_TRUE(all.ok()) << all.error().message();
  EXPECT_EQ(all->params.vision, 25376 + 8768 - 128);
}

TEST(LlavaPixtralTest, PixtralOnlyUnderLlavaAndWithWholeHeads) {
  nlohmann::json next = nlohmann::json::parse(kSmall);
  next["model_type"] = "llava_next";
  EXPECT_EQ(ErrorOf(next.dump()),
            "c.json: vision_config.model_type: is \"pixtral\": kvbill counts llava_next's CLIP or "
            "SigLIP towers (clip_vision_model, siglip_vision_model) only");
  nlohmann::json other = nlohmann::json::parse(kSmall);
  other["vision_config"]["model_type"] = "eva_clip";
  EXPECT_EQ(ErrorOf(other.dump()),
            "c.json: vision_config.model_type: is \"eva_clip\": kvbill counts llava's CLIP, "
            "SigLIP or Pixtral towers (clip_vision_model, siglip_vision_model, pixtral) only");
  nlohmann::json heads = nlohmann::json::parse(kSmall);
  heads["vision_config"]["num_attention_heads"] = 3;
  EXPECT_EQ(ErrorOf(heads.dump()),
            "c.json: vision_config.num_attention_heads: 3 does not divide hidden_size 32 (vLLM's "
            "pixtral.py asserts it divides)");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
