// Family rules added after an audit of real configs against vLLM's modeling
// code: K-EXAONE's shared expert, StableLM's, InternLM's and Orion's biases,
// Phi-4-multimodal's towers, and the model types vLLM cannot serve. Every
// expected count is worked by hand on a toy config in the comments.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// A toy of one layer: hidden 64, 4 heads of 16, MLP 128, vocabulary 100,
// untied. Attention q, k, v, o 4 x 64 x 64 = 16,384; gated MLP 3 x 64 x
// 128 = 24,576; embedding and lm_head 2 x 6,400 = 12,800.
std::string Toy(const std::string& model_type, const std::string& extra) {
  return R"({"model_type": ")" + model_type +
         R"(", "num_hidden_layers": 1, "hidden_size": 64, "num_attention_heads": 4,
             "num_key_value_heads": 4, "intermediate_size": 128, "vocab_size": 100,
             "tie_word_embeddings": false)" +
         extra + "}";
}

std::int64_t Params(const std::string& config) {
  auto m = ParseHfConfig(config, "c.json", "c");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  EXPECT_TRUE(!m.ok() || !m->generic_rule);
  return m.ok() ? m->params.Total() : 0;
}

// StableLM (vLLM stablelm.py): q, k, v biased by use_qkv_bias (3 x 64), the
// output projection not; two LayerNorms with bias a layer (2 x 128) and a
// final one (128): 16,384 + 192 + 24,576 + 256 + 128 + 12,800 = 54,336.
// InternLM (vLLM llama.py, attention_bias or bias): q, k, v and o biased
// (4 x 64), RMSNorms (2 x 64 + 64): 16,640 + 24,576 + 192 + 12,800 = 54,208.
// Orion (vLLM orion.py): no projection biases, LayerNorms with bias:
// 16,384 + 24,576 + 256 + 128 + 12,800 = 54,144.
TEST(FamilyRulesTest, StableLmInternLmAndOrionBiases) {
  EXPECT_EQ(Params(Toy("stablelm", R"(, "use_qkv_bias": true)")), 54336);
  EXPECT_EQ(Params(Toy("internlm", R"(, "bias": true)")), 54208);
  EXPECT_EQ(Params(Toy("orion", "")), 54144);
}

// K-EXAONE (vLLM exaone_moe.py), two layers, KV heads 2: attention q and o
// 4,096 each, k and v 2,048 each, q and k norms 16 each: 12,320 a layer.
// Layer 0 dense (3 x 64 x 128 = 24,576); layer 1 sparse: 4 experts of 32 (4
// x 3 x 64 x 32 = 24,576), the shared expert 1 x 32 (6,144), the router 4 x
// 64 = 256 and its score-correction bias 4. Norms 2 x 2 x 64 + 64 = 320;
// embedding and lm_head 12,800. Total 24,640 + 24,576 + 30,980 + 320 +
// 12,800 = 93,316; a token reaches 2 of the 4 experts: 93,316 - 12,288 =
// 81,028 active.
TEST(FamilyRulesTest, ExaoneMoeKeepsItsSharedExpert) {
  const std::string config = R"({"model_type": "exaone_moe", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "intermediate_size": 128, "moe_intermediate_size": 32, "num_experts": 4,
      "num_experts_per_tok": 2, "num_shared_experts": 1, "vocab_size": 100,
      "tie_word_embeddings": false, "mlp_layer_types": ["dense", "sparse"]})";
  auto m = ParseHfConfig(config, "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_FALSE(m->generic_rule);
  EXPECT_EQ(m->params.Total(), 93316);
  EXPECT_EQ(m->params.Active(), 81028);
  EXPECT_EQ(m->params.shared_experts, 6144);
  // 2 layers x 2 KV heads x 16 x (K, V) x 2 B.
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 256.0);
  auto beta = ParseHfConfig(R"({"model_type": "exaone_moe", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "num_experts": 4,
      "num_experts_per_tok": 2, "is_moe_layer": [false, true]})",
                            "c.json", "c");
  ASSERT_FALSE(beta.ok());
  EXPECT_EQ(beta.error().message(),
            "c.json: is_moe_layer: is a pre-release key vLLM's exaone_moe.py does not read: give "
            "mlp_layer_types (\"dense\" / \"sparse\" per layer)");
}

// Phi-4-multimodal: Phi-3 layers (the toy's 54,144 less the LayerNorm
// biases: RMSNorms 2 x 64 + 64, 16,384 + 24,576 + 192 + 12,800 = 53,952),
// every layer full with full_attn_mod 1; its towers (embd_layer's image
// tower, audio_processor) are refused unless left out.
TEST(FamilyRulesTest, Phi4MultimodalReadsItsTextModelAndRefusesItsTowers) {
  const std::string towers =
      R"(, "full_attn_mod": 1, "embd_layer": {"image_embd_layer": {"crop_size": 448}},
         "audio_processor": {"config": {"num_blocks": 24}})";
  auto text = ParseHfConfig(Toy("phi4mm", towers), "c.json", "c", {}, /*text_only=*/true);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(text->params.Total(), 53952);
  auto all = ParseHfConfig(Toy("phi4mm", towers), "c.json", "c");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().message().rfind("c.json: audio_processor: kvbill cannot count the audio "
                                        "tower of model_type \"phi4mm\"",
                                        0),
            0u)
      << all.error().message();
  auto image =
      ParseHfConfig(Toy("phi4mm", R"(, "embd_layer": {"image_embd_layer": {}})"), "c.json", "c");
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.error().message().rfind("c.json: embd_layer.image_embd_layer: kvbill cannot "
                                          "count the image tower of model_type \"phi4mm\"",
                                          0),
            0u)
      << image.error().message();
  auto period = ParseHfConfig(Toy("phi4mm", R"(, "full_attn_mod": 2)"), "c.json", "c");
  ASSERT_FALSE(period.ok());
  EXPECT_EQ(period.error().message(),
            "c.json: full_attn_mod: is 2: only 1 (every layer full attention) is read");
}

// Qwen-VL (v1) keeps its ViT in a top-level "visual" object: refused unless
// the towers are left out, never silently dropped.
TEST(FamilyRulesTest, QwenVlVisualTowerIsNotLeftOutSilently) {
  const std::string config = Toy("qwen", R"(, "visual": {"width": 1664, "layers": 48})");
  auto all = ParseHfConfig(config, "c.json", "c");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().message().rfind(
                "c.json: visual: kvbill cannot count the image tower of model_type \"qwen\"", 0),
            0u)
      << all.error().message();
  EXPECT_TRUE(ParseHfConfig(config, "c.json", "c", {}, /*text_only=*/true).ok());
}

// PaliGemma (vLLM paligemma.py): SigLIP and a biased projector into
// projection_dim. A toy tower of hidden 64, MLP 128, one layer, 16-pixel
// patches of a 32-pixel image, no pooling head: patches 3 x 16^2 x 64 +
// 64 = 49,216, positions 4 x 64 = 256; the block 4 x 64^2 + 4 x 64 + 2 x 64
// x 128 + 128 + 64 + 4 x 64 = 33,472; the post-norm 128: 83,072; the
// projector 64 x 96 + 96 = 6,240: 89,312. SigLIP under another wrapper,
// whose connector kvbill does not know, is refused.
TEST(FamilyRulesTest, PaliGemmaCountsItsProjector) {
  const std::string text = Toy("gemma", "");
  const std::string vision = R"({"model_type": "siglip_vision_model", "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 1, "patch_size": 16, "image_size": 32,
      "num_channels": 3, "vision_use_head": false, "projection_dim": 96})";
  auto m = ParseHfConfig(R"({"model_type": "paligemma", "vision_config": )" + vision +
                             R"(, "text_config": )" + text + "}",
                         "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.vision, 89312);
  auto other = ParseHfConfig(R"({"model_type": "idefics9", "vision_config": )" + vision +
                                 R"(, "text_config": )" + text + "}",
                             "c.json", "c");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message().rfind(
                "c.json: vision_config: kvbill cannot count the vision tower of model_type "
                "\"idefics9\"",
                0),
            0u)
      << other.error().message();
}

// Model types no vLLM release serves are refused by name, before their
// quantization (BitNet's "bitnet") is read.
TEST(FamilyRulesTest, ModelTypesVllmCannotServeAreRefused) {
  const std::pair<std::string, std::string> refused[] = {
      {"jetmoe", "vLLM has no JetMoE model"},
      {"molmo", "kvbill has no rule for Molmo"},
      {"phi4flash", "vLLM dropped Phi-4-mini-flash"},
      // vLLM's registry: _PREVIOUSLY_SUPPORTED_MODELS (the last release).
      {"phi3small",
       "vLLM dropped Phi-3-small (block-sparse attention on every other layer) "
       "after v0.9.2"},
      {"Motif", "vLLM dropped Motif"},
      {"motif", "vLLM dropped Motif"},  // model types compare without regard to case
      {"phi4_multimodal", "vLLM dropped the Transformers-format Phi-4-multimodal"}};
  for (const auto& [type, why] : refused) {
    auto m = ParseHfConfig(Toy(type, ""), "c.json", "c");
    ASSERT_FALSE(m.ok()) << type;
    EXPECT_EQ(m.error().message().rfind("c.json: model_type: is \"" + type + "\": " + why, 0), 0u)
        << m.error().message();
  }
  // Llama 3.2 Vision: its text config names its own type.
  auto mllama = ParseHfConfig(
      R"({"model_type": "mllama", "text_config": )" + Toy("mllama_text_model", "") + "}", "c.json",
      "c");
  ASSERT_FALSE(mllama.ok());
  EXPECT_EQ(mllama.error().message().rfind(
                "c.json: text_config.model_type: is \"mllama_text_model\": vLLM dropped Llama "
                "3.2 Vision",
                0),
            0u)
      << mllama.error().message();
  auto bitnet = ParseHfConfig(
      Toy("bitnet",
          R"(, "hidden_act": "relu2", "quantization_config": {"quant_method": "bitnet"})"),
      "c.json", "c");
  ASSERT_FALSE(bitnet.ok());
  EXPECT_EQ(
      bitnet.error().message().rfind("c.json: model_type: is \"bitnet\": vLLM has no BitNet", 0),
      0u)
      << bitnet.error().message();
}

// Mistral 3's text model (transformers ministral3/configuration_ministral3.py:
// head_dim 128, max_position_embeddings 262,144, untied, no window by
// default): Ministral 3 3B's sizes (hidden 3,072, 26 layers, 32 heads, 8 KV
// heads, MLP 9,216, vocabulary 131,072, tied). Its head_dim is not
// 3,072 / 32 = 96: a config leaving the key out takes the class's 128, as
// one naming it null takes 96.
//   q 3,072 x 4,096 = 12,582,912; k, v 2 x 3,072 x 1,024 = 6,291,456; o
//   12,582,912; MLP 3 x 3,072 x 9,216 = 84,934,656; norms 6,144: 116,398,080
//   a layer, x 26 = 3,026,350,080; embedding 131,072 x 3,072 = 402,653,184;
//   final norm 3,072: 3,429,006,336 (the card's 3.4B language model).
// KV: 26 x 8 x 128 x (K, V) x 2 B = 106,496 B a token (96: 79,872).
TEST(FamilyRulesTest, Ministral3TakesItsClassHeadDim) {
  const std::string text = R"({"model_type": "ministral3", "hidden_size": 3072,
      "num_hidden_layers": 26, "num_attention_heads": 32, "num_key_value_heads": 8,
      "intermediate_size": 9216, "vocab_size": 131072, "tie_word_embeddings": true)";
  const ModelShape m = InlineConfig(text + "}");
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 3429006336);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 106496.0);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 26);
  EXPECT_EQ(m.max_model_len, 262144);
  EXPECT_EQ(BytesPerToken(InlineConfig(text + R"(, "head_dim": null})"), Fmt("bf16")), 79872.0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
