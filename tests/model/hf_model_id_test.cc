#include "kvbill/model/hf_model_id.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(HfModelIdTest, StripsTheOrganisationAndTheCopySuffixes) {
  const HfModelChoice fp8 = CatalogModelFromHfId("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8");
  EXPECT_EQ(fp8.catalog, "qwen3-235b-a22b");
  EXPECT_EQ(fp8.weight_format, "fp8");
  EXPECT_TRUE(fp8.fp8_checkpoint);
  const HfModelChoice awq = CatalogModelFromHfId("Qwen/Qwen3-32B-AWQ");
  EXPECT_EQ(awq.catalog, "qwen3-32b");
  EXPECT_EQ(awq.weight_format, "int4-g128");
  EXPECT_FALSE(awq.fp8_checkpoint);
  EXPECT_EQ(CatalogModelFromHfId("Qwen/Qwen3-8B").weight_format, "auto");
  EXPECT_EQ(CatalogModelFromHfId("qwen3-8b").catalog, "qwen3-8b");
}

TEST(HfModelIdTest, DeepSeekR1IsDeepSeekV3) {
  EXPECT_EQ(CatalogModelFromHfId("deepseek-ai/DeepSeek-R1-0528").catalog, "deepseek-v3");
  EXPECT_EQ(CatalogModelFromHfId("deepseek-ai/DeepSeek-R1").catalog, "deepseek-v3");
  // Its published fp8 precision is the model's own: no separate weight format.
  EXPECT_EQ(CatalogModelFromHfId("deepseek-ai/DeepSeek-R1", "fp8").weight_format, "auto");
}

TEST(HfModelIdTest, PublishedPrecisionNamesTheCopy) {
  const HfModelChoice c = CatalogModelFromHfId("Qwen/Qwen3-32B", "FP8");
  EXPECT_EQ(c.weight_format, "fp8");
  EXPECT_TRUE(c.fp8_checkpoint);
  EXPECT_EQ(CatalogModelFromHfId("Qwen/Qwen3-32B", "awq-int4").weight_format, "int4-g128");
  // GLM-4.5's FP8 releases scale per channel: not a block-scaled checkpoint.
  const HfModelChoice glm = CatalogModelFromHfId("zai-org/GLM-4.5-Air-FP8");
  EXPECT_EQ(glm.catalog, "glm-4.5-air");
  EXPECT_EQ(glm.weight_format, "fp8");
  EXPECT_FALSE(glm.fp8_checkpoint);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
