// Checked arithmetic and numeric ranges on the command line
// (docs/robustness.md#numeric-ranges): an overflow is an error naming the
// inputs, never a wrapped number.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(NumericLimitsCliTest, FitRefusesAKvCacheBeyondTwoToTheSixtyThreeBytes) {
  // qwen3-32b: 64 layers x 8 KV heads x head dim 128 x (K and V) x 2 bytes
  // = 262,144 = 2^18 bytes per token; at 1M = 2^20 tokens a sequence holds
  // 2^38 bytes. A batch of 2^25 = 33,554,432 needs exactly 2^63 bytes: one
  // beyond int64. (40,000,000 used to print a negative size and FITS.)
  const auto over = testing::RunKvbill(
      "fit --model qwen3-32b --gpu h100-sxm --context 1M --batch 33554432 --check");
  EXPECT_EQ(over.exit_status, 2);
  EXPECT_EQ(over.err,
            "kvbill fit: --batch 33554432 x --context 1048576: the KV cache is beyond 2^63 bytes "
            "(8 EiB), the range of a size\n");
  EXPECT_EQ(over.out, "");
  // One sequence fewer: 2^63 - 2^38 bytes plus 65 GB of weights still fit
  // in int64, and it does not fit the GPU (exit 1).
  const auto under = testing::RunKvbill(
      "fit --model qwen3-32b --gpu h100-sxm --context 1M --batch 33554431 --check --format json");
  EXPECT_EQ(under.exit_status, 1) << under.err;
  EXPECT_NE(under.out.find("\"fits\": false"), std::string::npos) << under.out.substr(0, 400);
}

TEST(NumericLimitsCliTest, ANegativeGpuPriceIsAnError) {
  // It used to mean "the catalog's price" silently.
  const auto r = testing::RunKvbill(
      "breakeven --model llama-3.1-8b --gpu h100-sxm --price 20 --usd-per-gpu-hour -3");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill breakeven: --usd-per-gpu-hour: must be in (0, 1,000,000] dollars\n");
  // Nor is a free GPU, as a GPU file's price of 0 is not: nothing breaks even.
  const auto free = testing::RunKvbill(
      "breakeven --model llama-3.1-8b --gpu h100-sxm --price 20 --usd-per-gpu-hour 0");
  EXPECT_EQ(free.exit_status, 2);
  EXPECT_EQ(free.err, r.err);
}

// Format names are lower case; "FP8" is said to be a typo of "fp8". A
// thousands separator in a context list reads as the list's comma: said so.
TEST(NumericLimitsCliTest, AnUpperCaseFormatAndASeparatorInAListAreExplained) {
  const auto upper = testing::RunKvbill("kv --model qwen3-8b --kv-format FP8");
  EXPECT_EQ(upper.exit_status, 2);
  EXPECT_NE(upper.err.find("unknown format \"FP8\" (format names are lower case: \"fp8\")"),
            std::string::npos)
      << upper.err;
  const auto comma = testing::RunKvbill("kv --model qwen3-8b --context 1,000");
  EXPECT_EQ(comma.exit_status, 2);
  EXPECT_NE(comma.err.find("\"1,000\" reads as a number with a thousands separator, but commas "
                           "separate the list's counts: write 1000"),
            std::string::npos)
      << comma.err;
  // Also where both halves parse as counts: 32,768 is not 32 and 768 tokens.
  const auto parses = testing::RunKvbill("kv --model qwen3-8b --context 8k,32,768");
  EXPECT_EQ(parses.exit_status, 2);
  EXPECT_NE(parses.err.find("\"32,768\" reads as a number with a thousands separator"),
            std::string::npos)
      << parses.err;
  // A list of counts of other lengths is a list.
  EXPECT_EQ(testing::RunKvbill("kv --model qwen3-8b --context 1024,4096,8k").exit_status, 0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
