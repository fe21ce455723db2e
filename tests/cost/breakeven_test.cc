#include "kvbill/cost/breakeven.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/model_test_util.h"

namespace kvbill {
namespace {

BreakevenQuery Llama8bOnH100(const std::string& kv, double price) {
  BreakevenQuery q;
  q.fit.model = Catalog("llama-3.1-8b");
  q.fit.kv_format = Fmt(kv);
  q.fit.deployment.gpu = *LookupGpu("h100-sxm");
  q.usd_per_gpu_hour = 2.95;
  q.output_usd_per_mtok = price;
  return q;
}

// Batch one, memory-bound decode: a token at context c costs
// (W + 131,072 (c + 1)) / bw x $2.95 / 3600 with W = 16,060,522,496 bytes of
// weights and bw = 3.35e12 x 0.65 = 2.1775e12 B/s. At $20 per million tokens
// the budget per token is 2.1775e12 x 20e-6 x 3600 / 2.95 = 53,145,762,711.9
// bytes, so c <= (53,145,762,711.9 - W - 131,072) / 131,072 = 282,936.
TEST(BreakevenTest, BatchOneContextFromTheMemoryBoundDecodeCost) {
  auto r = FindBreakeven(Llama8bOnH100("bf16", 20), 1);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->max_profitable, 282936);
  EXPECT_FALSE(r->limited_by_memory);
  auto cost = DecodeCostPerToken(Llama8bOnH100("bf16", 20), 282936, 1);
  ASSERT_TRUE(cost.ok());
  EXPECT_LE(*cost, 20e-6);
  EXPECT_GT(*DecodeCostPerToken(Llama8bOnH100("bf16", 20), 282937, 1), 20e-6);
}

// FP8 halves the KV bytes per token (65,536): the same budget reaches
// c <= (53,145,762,711.9 - W - 65,536) / 65,536 = 565,874: the break-even
// context about doubles.
TEST(BreakevenTest, Fp8KvAboutDoublesTheProfitableContext) {
  auto bf16 = FindBreakeven(Llama8bOnH100("bf16", 20), 1);
  auto fp8 = FindBreakeven(Llama8bOnH100("fp8", 20), 1);
  ASSERT_TRUE(bf16.ok() && fp8.ok());
  const double budget = 3.35e12 * 0.65 * 20e-6 * 3600 / 2.95;
  EXPECT_EQ(fp8->max_profitable,
            static_cast<Tokens>(std::floor((budget - 16060522496.0 - 65536) / 65536)));
  EXPECT_NEAR(static_cast<double>(fp8->max_profitable) / static_cast<double>(bf16->max_profitable),
              2.0, 0.01);
}

// At batch 32 the weights are shared: every context that fits is profitable,
// and the answer is the memory limit (32 sequences of block-rounded KV in
// 76,922,864,271 - 16,060,522,496 bytes: 14,496 tokens each).
TEST(BreakevenTest, LargeBatchIsLimitedByMemory) {
  auto r = FindBreakeven(Llama8bOnH100("bf16", 20), 32);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->limited_by_memory);
  // floor(60,862,341,775 / 32 / 131,072 / 16) x 16 = floor(14,510.6 / 16) x 16.
  EXPECT_EQ(r->max_profitable, 14496);
}

TEST(BreakevenTest, PriceBelowTheWeightsAloneMeansNoContextPays) {
  // Reading 16 GB of weights per token costs 16.06e9 / 2.1775e12 s x $2.95/3600
  // = $6.04 per million tokens: at $5 nothing is profitable at batch one.
  auto r = FindBreakeven(Llama8bOnH100("bf16", 5), 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_profitable, 0);
}

}  // namespace
}  // namespace kvbill
