// ModelShape::max_model_len: the limit vLLM derives from a config
// (_get_and_verify_max_len in vllm/config/model.py; src/model/max_model_len.h),
// worked by hand, through the config reader and directly.
#include "model/max_model_len.h"

#include <gtest/gtest.h>

#include "kvbill/model/hf_config.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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
                       "rope_scaling": {"rope_type": "longrope", "factor": 4,
                                        "short_factor": [1.0], "long_factor": [1.0]})"),
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

// A RoPE scaling that transformers and vLLM would not read is refused,
// naming the field, where it used to be read as no scaling (factor 1): the
// issue's Qwen3 with yarn and a factor "4" got 40,960 for 131,072.
TEST(MaxModelLenTest, MalformedRopeScalingIsRefusedNamingTheField) {
  const std::string head = R"({"num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 40960)";
  auto error = [&](const std::string& extra) { return InlineError(head + extra + "}"); };
  const std::string yarn = R"(, "rope_scaling": {"rope_type": "yarn",
      "original_max_position_embeddings": 32768, "factor": )";
  EXPECT_EQ(error(yarn + R"("4"})"),
            "c.json: rope_scaling.factor: must be a positive number, got \"4\"");
  EXPECT_EQ(error(yarn + "0}"), "c.json: rope_scaling.factor: must be a positive number, got 0");
  EXPECT_EQ(error(yarn + "-4}"), "c.json: rope_scaling.factor: must be a positive number, got -4");
  // A factor the length cannot hold: 32,768 x 1e300 = 3.277e304 tokens would
  // overflow the token count (it read -2^63); 40,960 x 1e-9 is no token.
  EXPECT_EQ(error(yarn + "1e300}"),
            "c.json: rope_scaling.factor: scales max_model_len to 3.277e+304 tokens, past 2^40 "
            "(1,099,511,627,776), a length no engine serves");
  EXPECT_EQ(error(R"(, "rope_scaling": {"rope_type": "linear", "factor": 1e-9})"),
            "c.json: rope_scaling.factor: scales max_model_len to 4.096e-05 tokens, less than "
            "one");
  // The factor named is the one the length takes: llama3's does not scale
  // it (its max_position_embeddings counts the scaling already).
  EXPECT_EQ(error(R"(, "rope_parameters": {"full_attention": {"rope_type": "yarn",
      "factor": 1e300, "original_max_position_embeddings": 32768}, "sliding_attention":
      {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4}})"),
            "c.json: rope_parameters.full_attention.factor: scales max_model_len to 3.277e+304 "
            "tokens, past 2^40 (1,099,511,627,776), a length no engine serves");
  // A length past the bound before any scaling is named itself.
  EXPECT_EQ(InlineError(R"({"num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 40960,
      "model_max_length": 1e30, "rope_scaling": {"rope_type": "dynamic", "factor": 2}})"),
            "c.json: model_max_length: 1e+30 tokens, past 2^40 (1,099,511,627,776), a length no "
            "engine serves");
  // 2^40 itself is a length: 32,768 x 33,554,432 = 2^40.
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 40960, "rope_scaling": {"rope_type": "yarn",
      "original_max_position_embeddings": 32768, "factor": 33554432})"),
            Tokens{1} << 40);
  EXPECT_EQ(error(yarn + "null}"),
            "c.json: rope_scaling.factor: is null (None): rope type \"yarn\" requires it");
  // Each type that scales by its factor requires one; linear by the older
  // "type" key too.
  EXPECT_EQ(error(R"(, "rope_scaling": {"rope_type": "yarn",
                      "original_max_position_embeddings": 32768})"),
            "c.json: rope_scaling.factor: missing: rope type \"yarn\" requires it");
  EXPECT_EQ(error(R"(, "rope_scaling": {"rope_type": "dynamic"})"),
            "c.json: rope_scaling.factor: missing: rope type \"dynamic\" requires it");
  EXPECT_EQ(error(R"(, "rope_scaling": {"type": "linear"})"),
            "c.json: rope_scaling.factor: missing: rope type \"linear\" requires it");
  EXPECT_EQ(error(R"(, "rope_scaling": {"rope_type": "yarn", "factor": 4,
                      "original_max_position_embeddings": "32768"})"),
            "c.json: rope_scaling.original_max_position_embeddings: must be a positive integer, "
            "got \"32768\"");
  EXPECT_EQ(error(R"(, "rope_scaling": {"rope_type": "yarnn", "factor": 4})"),
            "c.json: rope_scaling.rope_type: unknown rope type \"yarnn\" (known: default, "
            "linear, dynamic, yarn, longrope, llama3, proportional, ntk, deepseek_yarn, "
            "deepseek_llama_scaling, mllama4, xdrope, openpangu, su, mrope)");
  EXPECT_EQ(error(R"(, "rope_scaling": {"rope_type": "yarn", "type": "linear", "factor": 4})"),
            "c.json: rope_scaling.type: is \"linear\", but rope_type is \"yarn\" (vLLM refuses "
            "the conflict)");
  EXPECT_EQ(error(R"(, "rope_scaling": "yarn")"),
            "c.json: rope_scaling: must be an object, got \"yarn\"");
  EXPECT_EQ(error(R"(, "rope_scaling": ["yarn", 4])"),
            "c.json: rope_scaling: must be an object, got [\"yarn\",4]");
  // LongRoPE requires its two factor lists; its top-level original length
  // (vLLM's default max_model_len) must be a count.
  EXPECT_EQ(error(R"(, "rope_scaling": {"type": "longrope", "short_factor": [1.0]})"),
            "c.json: rope_scaling.long_factor: missing: rope type \"longrope\" requires it");
  EXPECT_EQ(error(R"(, "original_max_position_embeddings": "4096", "rope_scaling":
                      {"type": "longrope", "short_factor": [1.0], "long_factor": [1.0]})"),
            "c.json: original_max_position_embeddings: must be a positive integer, got \"4096\"");
  // Transformers v5's rope_parameters, one object per layer type.
  EXPECT_EQ(error(R"(, "rope_parameters": {"full_attention": {"rope_type": "yarn", "factor": "2"},
                                           "sliding_attention": {"rope_type": "default"}})"),
            "c.json: rope_parameters.full_attention.factor: must be a positive number, got \"2\"");
  // In a text config, with its prefix; a value --set gave says so.
  EXPECT_EQ(InlineError(R"({"text_config": {"num_hidden_layers": 2, "hidden_size": 64,
                "num_attention_heads": 4, "vocab_size": 100,
                "rope_scaling": {"rope_type": "dynamic", "factor": 0}}})"),
            "c.json: text_config.rope_scaling.factor: must be a positive number, got 0");
  auto set = LoadModel("qwen3-32b", {{"rope_scaling", R"({"rope_type": "yarn", "factor": "4",
                                      "original_max_position_embeddings": 32768})"}});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message(),
            "models/qwen3-32b.json: rope_scaling.factor (overridden): must be a positive number, "
            "got \"4\"");
}

// The RoPE scalings real configs write still read: null; Qwen2.5-VL's old
// {"type": "mrope"} (vLLM: default with its mrope_section, no factor:
// 128,000 as given); Llama 3.1's llama3 (131,072 as given); Hunyuan-A13B's
// dynamic with alpha and factor 1 (32,768 x 1); alpha without a factor
// (vLLM's DynamicNTKAlphaRotaryEmbedding, no factor: x 1); yarn without an
// original length (transformers takes max_position_embeddings: 4,096 x 2);
// Gemma 4's proportional per layer type (262,144 as given); Qwen3.5's flat
// rope_parameters with an mrope_section (262,144 as given); Laguna's per
// layer type with a shared original length beside them (yarn from 4,096 x
// 64 = 262,144).
TEST(MaxModelLenTest, RopeScalingsOfRealConfigsStillRead) {
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 40960, "rope_scaling": null)"), 40960);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 128000,
                       "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]})"),
            128000);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 131072,
                       "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
                                        "high_freq_factor": 4.0,
                                        "original_max_position_embeddings": 8192,
                                        "rope_type": "llama3"})"),
            131072);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 32768,
                       "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1,
                                        "factor": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                        "type": "dynamic"})"),
            32768);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 32768,
                       "rope_scaling": {"type": "dynamic", "alpha": 1000.0})"),
            32768);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 4096,
                       "rope_scaling": {"rope_type": "yarn", "factor": 2})"),
            8192);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 262144,
                       "rope_parameters": {"full_attention": {"partial_rotary_factor": 0.25,
                                             "rope_theta": 1000000.0, "rope_type": "proportional"},
                                           "sliding_attention": {"rope_theta": 10000.0,
                                             "rope_type": "default"}})"),
            262144);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 262144,
                       "rope_parameters": {"mrope_interleaved": true, "mrope_section": [11, 11, 10],
                                           "rope_type": "default", "rope_theta": 10000000,
                                           "partial_rotary_factor": 0.25})"),
            262144);
  EXPECT_EQ(MaxLen(R"(, "max_position_embeddings": 131072,
                       "rope_parameters": {"full_attention": {"rope_type": "yarn", "factor": 64.0,
                                             "original_max_position_embeddings": 4096},
                                           "sliding_attention": {"rope_type": "default"},
                                           "original_max_position_embeddings": 4096})"),
            262144);
}

TEST(MaxModelLenTest, Gemma3LengthIsNotScaledAgain) {
  EXPECT_EQ(MaxLen(R"(, "model_type": "gemma3_text", "max_position_embeddings": 131072,
                       "rope_scaling": {"rope_type": "linear", "factor": 8.0})"),
            131072);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID

namespace model_config {
namespace KVBILL_TEST_FILE_ID {
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
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace model_config
}  // namespace kvbill
