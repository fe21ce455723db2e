// max_model_len as vLLM derives it from a config (src/model/max_model_len.h).
#include "model/max_model_len.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace kvbill::model_config {
namespace {

Tokens Derived(const char* config, const std::string& model_type = "qwen3") {
  return DerivedMaxModelLen(nlohmann::json::parse(config), model_type);
}

TEST(MaxModelLenTest, SmallestLengthKeyWithoutRopeScaling) {
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 40960, "rope_scaling": null})"), 40960);
  EXPECT_EQ(Derived(R"({"max_position_embeddings": 8192, "seq_length": 4096})"), 4096);
  EXPECT_EQ(Derived(R"({"n_positions": 2048})"), 2048);
  EXPECT_EQ(Derived(R"({"hidden_size": 4096})"), 0);  // unsaid
}

TEST(MaxModelLenTest, RopeScalingFactorsAsVllmAppliesThem) {
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

TEST(MaxModelLenTest, CatalogModelsCarryTheirLimit) {
  EXPECT_EQ(Catalog("qwen3-8b").max_model_len, 40960);  // the issue's limit
  EXPECT_EQ(Catalog("gemma-2-9b").max_model_len, 8192);
  EXPECT_EQ(Catalog("llama-3.1-8b").max_model_len, 131072);  // llama3 rope: as configured
}

}  // namespace
}  // namespace kvbill::model_config
