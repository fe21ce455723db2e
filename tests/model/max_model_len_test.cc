// ModelShape::max_model_len: the limit vLLM derives from a config
// (_get_and_verify_max_len in vllm/config/model.py; src/model/max_model_len.h),
// worked by hand, through the config reader and directly.
#include "model/max_model_len.h"

#include <gtest/gtest.h>

#include "kvbill/model/hf_config.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace {

Tokens MaxLen(const std::string& extra) {
  const std::string json = R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "vocab_size": 100)" +
                           extra + "}";
  auto m = ParseHfConfig(json, "inline.json", "inline");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? m->max_model_len : -1;
}

TEST(MaxModelLenTest, CatalogModelsReadAsVllmReadsThem) {
  // llama3 RoPE is not scaled: max_position_embeddings 131,072 stands.
  EXPECT_EQ(Catalog("llama-3.1-8b").max_model_len, 131072);
  // No rope_scaling: max_position_embeddings.
  EXPECT_EQ(Catalog("qwen3-8b").max_model_len, 40960);
  EXPECT_EQ(Catalog("gemma-2-9b").max_model_len, 8192);
  // yarn: original_max_position_embeddings x factor = 4,096 x 40 and 4,096 x 32.
  EXPECT_EQ(Catalog("deepseek-v3").max_model_len, 163840);
  EXPECT_EQ(Catalog("gpt-oss-20b").max_model_len, 131072);
}

TEST(MaxModelLenTest, RopeScalingMultipliesTheLengthExceptLlama3AndLongrope) {
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096)"), 4096);
  // dynamic, factor 2: 4,096 x 2.
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096,
                       "rope_scaling": {"rope_type": "dynamic", "factor": 2.0})"),
            8192);
  // The older "type" key, linear x 4.
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096,
                       "rope_scaling": {"type": "linear", "factor": 4})"),
            16384);
  // Qwen3's long-context recipe: yarn from 32,768, x 4 = 131,072 (not 40,960 x 4).
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 40960,
                       "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                        "original_max_position_embeddings": 32768})"),
            131072);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096,
                       "rope_scaling": {"rope_type": "longrope", "factor": 4})"),
            4096);
  // Transformers v5 rope_parameters, one entry per layer type: yarn 1,000 x 2.
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096,
                       "rope_parameters": {"full_attention": {"rope_type": "yarn", "factor": 2,
                                            "original_max_position_embeddings": 1000},
                                           "sliding_attention": {"rope_type": "default"}})"),
            2000);
}

// LongRoPE (Phi-3-128k, Phi-3.5, Phi-4-mini): vLLM starts the model at its
// top-level original_max_position_embeddings when --max-model-len is not
// given (_get_and_verify_max_len: "to avoid performance degradation for
// shorter sequences"), 4,096 for Phi-4-mini, and takes up to the derived
// 131,072 when asked. The legacy "su" type is the same; without the key the
// derived length is both.
TEST(MaxModelLenTest, LongRopeStartsAtItsOriginalLength) {
  const std::string phi = R"(, "max_position_embeddings": 131072,
      "original_max_position_embeddings": 4096, "rope_scaling": {"type": "TYPE",
      "long_factor": [1.0], "short_factor": [1.0]})";
  for (const char* type : {"longrope", "su"}) {
    std::string extra = phi;
    extra.replace(extra.find("TYPE"), 4, type);
    auto m = ParseHfConfig(R"({"num_hidden_layers": 2, "hidden_size": 64,
        "num_attention_heads": 4, "vocab_size": 100)" +
                               extra + "}",
                           "inline.json", "inline");
    ASSERT_TRUE(m.ok()) << m.error().message();
    EXPECT_EQ(m->max_model_len, 4096) << type;
    EXPECT_EQ(m->max_model_len_ceiling, 131072) << type;
    EXPECT_EQ(m->MaxModelLenCeiling(), 131072) << type;
  }
  auto plain = ParseHfConfig(R"({"num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 131072,
      "rope_scaling": {"type": "longrope", "long_factor": [1.0], "short_factor": [1.0]}})",
                             "inline.json", "inline");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->max_model_len, 131072);
  EXPECT_EQ(plain->max_model_len_ceiling, 0);
}

TEST(MaxModelLenTest, SmallestLengthKeyWinsAndModelMaxLengthOverrides) {
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096, "seq_length": 2048)"), 2048);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096, "model_max_length": 8192)"), 8192);
  // No length key: vLLM's _get_and_verify_max_len "Assuming the model's
  // maximum length is 2048", marked as assumed.
  EXPECT_EQ(MaxLen(""), 2048);
  auto m = ParseHfConfig(R"({"num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 100})",
                         "inline.json", "inline");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->max_model_len_assumed);
  auto given = ParseHfConfig(R"({"num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 4096})",
                             "inline.json", "inline");
  ASSERT_TRUE(given.ok());
  EXPECT_FALSE(given->max_model_len_assumed);
}

// vLLM reads the lengths from transformers' configuration object, so a
// config.json without one takes its class's default (configuration_gemma.py:
// max_position_embeddings 8192; configuration_deepseek_v3.py 4096;
// configuration_starcoder2.py 4096), not the 2,048 vLLM assumes when no
// class has one (BLOOM). max_target_positions (Whisper's) counts too.
TEST(MaxModelLenTest, AnOmittedLengthTakesTheClassDefault) {
  const std::string body = R"("num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
      "vocab_size": 100, "head_dim": 16)";
  for (const auto& [type, len] : std::vector<std::pair<std::string, Tokens>>{
           {"gemma", 8192}, {"starcoder2", 4096}, {"cohere", 8192}, {"gpt_neox", 2048}}) {
    auto m = ParseHfConfig(R"({"model_type": ")" + type + R"(", )" + body + "}", "c.json", "c");
    ASSERT_TRUE(m.ok()) << type << ": " << m.error().message();
    EXPECT_EQ(m->max_model_len, len) << type;
    EXPECT_FALSE(m->max_model_len_assumed) << type;
  }
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096, "max_target_positions": 448)"), 448);
}

TEST(MaxModelLenTest, Gemma3LengthIsNotScaledAgain) {
  EXPECT_EQ(MaxLen(R"(, "model_type": "gemma3_text", "max_position_embeddings": 131072,
                       "rope_scaling": {"rope_type": "linear", "factor": 8.0})"),
            131072);
}

}  // namespace

namespace model_config {
namespace {

Tokens Derived(const char* config, const std::string& model_type = "qwen3") {
  return DerivedMaxModelLen(nlohmann::json::parse(config), model_type);
}

TEST(DerivedMaxModelLenTest, SmallestLengthKeyWithoutRopeScaling) {
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 40960, "rope_scaling": null})"), 40960);
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 8192, "seq_length": 4096})"), 4096);
  EXPECT_EQ(Derived(R"({"n_positions": 2048})"), 2048);
  EXPECT_EQ(Derived(R"({"hidden_size": 4096})"), 0);  // unsaid
}

TEST(DerivedMaxModelLenTest, RopeScalingFactorsAsVllmAppliesThem) {
  // YaRN: original 32,768 x 4 = 131,072 (not 40,960 x 4).
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 40960, "rope_scaling":
                        {"rope_type": "yarn", "factor": 4.0,
                         "original_max_position_embeddings": 32768}})"),
            131072);
  // Linear (the older "type" key): 4,096 x 2 = 8,192.
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 4096,
                        "rope_scaling": {"type": "linear", "factor": 2.0}})"),
            8192);
  // llama3, longrope and su already count their scaling in max_position_embeddings.
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 131072,
                        "rope_scaling": {"rope_type": "llama3", "factor": 8.0}})"),
            131072);
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 131072,
                        "rope_scaling": {"type": "longrope", "factor": 32.0}})"),
            131072);
  // So does Gemma 3.
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 131072,
                        "rope_scaling": {"rope_type": "linear", "factor": 8.0}})",
                    "gemma3_text"),
            131072);
}

TEST(DerivedMaxModelLenTest, CatalogModelsCarryTheirLimit) {
  EXPECT_EQ(Catalog("qwen3-8b").max_model_len, 40960);  // the issue's limit
  EXPECT_EQ(Catalog("gemma-2-9b").max_model_len, 8192);
  EXPECT_EQ(Catalog("llama-3.1-8b").max_model_len, 131072);  // llama3 rope: as configured
}

}  // namespace
}  // namespace model_config
}  // namespace kvbill
