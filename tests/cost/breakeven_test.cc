#include "kvbill/cost/breakeven.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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
// (W + 131,072 (c + 1)) / bw x $2.95 / 3600 with W the weights a step reads:
// Llama-3.1-8B's 16,060,522,496 bytes less its input embedding table
// (128,256 x 4,096 x 2 = 1,050,673,152 bytes; its lm_head is a separate
// matrix, so a step gathers only the batch's rows of the table), W =
// 15,009,849,344, and bw = 3.35e12 x 0.65 = 2.1775e12 B/s. At $20 per
// million tokens the budget per token is 2.1775e12 x 20e-6 x 3600 / 2.95 =
// 53,145,762,711.9 bytes, so c <= (53,145,762,711.9 - W - 131,072) / 131,072
// = 290,952.9.
TEST(BreakevenTest, BatchOneContextFromTheMemoryBoundDecodeCost) {
  auto r = FindBreakeven(Llama8bOnH100("bf16", 20), 1);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->max_profitable, 290952);
  EXPECT_FALSE(r->limited_by_memory);
  auto cost = DecodeCostPerToken(Llama8bOnH100("bf16", 20), 290952, 1);
  ASSERT_TRUE(cost.ok());
  EXPECT_LE(*cost, 20e-6);
  EXPECT_GT(*DecodeCostPerToken(Llama8bOnH100("bf16", 20), 290953, 1), 20e-6);
}

// FP8 halves the KV bytes per token (65,536): the same budget reaches
// c <= (53,145,762,711.9 - W - 65,536) / 65,536 = 581,906: the break-even
// context about doubles.
TEST(BreakevenTest, Fp8KvAboutDoublesTheProfitableContext) {
  auto bf16 = FindBreakeven(Llama8bOnH100("bf16", 20), 1);
  auto fp8 = FindBreakeven(Llama8bOnH100("fp8", 20), 1);
  ASSERT_TRUE(bf16.ok() && fp8.ok());
  const double budget = 3.35e12 * 0.65 * 20e-6 * 3600 / 2.95;
  EXPECT_EQ(fp8->max_profitable,
            static_cast<Tokens>(std::floor((budget - 15009849344.0 - 65536) / 65536)));
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

// With an input price the revenue grows with the prompt: a request of c
// prompt tokens and 100 output tokens at $2 / $5 per million earns
// (2c + 500) x 1e-6 dollars. Its cost at batch one, memory-bound for short
// prompts: the prefill reads the weights W once and writes c tokens of KV
// (W + 131,072 c bytes), each output token reads W and c + 1 tokens of KV:
// (101 W + 101 x 131,072 c + 100 x 131,072) bytes at $2.95/h / 2.1775e12 B/s
// = 3.76323e-16 $/byte: 5.70507e-4 + 4.9819e-9 c dollars. It pays from
// c = (5.70507e-4 - 5e-4) / (2e-6 - 4.9819e-9) = 35.3, i.e. 36 tokens, to
// the model limit (a 131,072-token request earns $0.263 and costs about
// $0.002). Short prompts lose money, which once read "not profitable at
// any context".
TEST(BreakevenTest, AnInputPriceMakesShortPromptsTheOnesThatDoNotPay) {
  BreakevenQuery q = Llama8bOnH100("bf16", 5);
  q.input_usd_per_mtok = 2;
  q.output_tokens = 100;
  q.max_model_len = 131072;
  auto r = FindBreakeven(q, 1);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const double per_byte = 2.95 / 3600 / 2.1775e12;
  const double fixed = per_byte * (101 * 15009849344.0 + 100 * 131072.0);
  const double slope = per_byte * 101 * 131072.0;
  EXPECT_EQ(r->min_profitable, static_cast<Tokens>(std::ceil((fixed - 500e-6) / (2e-6 - slope))));
  EXPECT_EQ(r->min_profitable, 36);
  EXPECT_EQ(r->max_profitable, 131072);
  EXPECT_TRUE(r->limited_by_model);
  // An input token at $0.001 per million never pays for the output's decode.
  q.input_usd_per_mtok = 0.001;
  auto none = FindBreakeven(q, 1);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->max_profitable, 0);
  EXPECT_EQ(none->min_profitable, 0);
}

TEST(BreakevenTest, PriceBelowTheWeightsAloneMeansNoContextPays) {
  // Reading 15 GB of weights per token costs 15.01e9 / 2.1775e12 s x $2.95/3600
  // = $5.65 per million tokens: at $5 nothing is profitable at batch one.
  auto r = FindBreakeven(Llama8bOnH100("bf16", 5), 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_profitable, 0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// The same query capped at Llama-3.1-8B's max_model_len, 131,072 (its
// config: llama3 rope scaling, counted in max_position_embeddings): the
// uncapped answer, 290,952, is past it, so every context up to the limit pays.
TEST(BreakevenTest, CappedAtTheModelLimit) {
  BreakevenQuery q = Llama8bOnH100("bf16", 20);
  q.max_model_len = q.fit.model.max_model_len;
  ASSERT_EQ(q.max_model_len, 131072);
  auto r = FindBreakeven(q, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_profitable, 131072);
  EXPECT_TRUE(r->limited_by_model);
  EXPECT_FALSE(r->limited_by_memory);
  // Below the limit the cap changes nothing: $10 per million tokens, a
  // budget of 2.1775e12 x 10e-6 x 3600 / 2.95 = 26,572,881,355.9 bytes per
  // token, c <= (26,572,881,355.9 - 15,009,849,344 - 131,072) / 131,072 = 88,217.9.
  q.output_usd_per_mtok = 10;
  auto ten = FindBreakeven(q, 1);
  ASSERT_TRUE(ten.ok());
  EXPECT_EQ(ten->max_profitable, 88217);
  EXPECT_FALSE(ten->limited_by_model);
}

// At $5 per million tokens the weights alone cost more: a token at context 1
// reads W + 2 x 131,072 bytes (one token's KV read, one written) =
// 15,010,111,488 bytes at 2.1775e12 B/s = 6.8933 ms, x $2.95 / 3,600 s =
// $5.649 per million tokens > $5: not profitable at any context.
TEST(BreakevenTest, NotProfitableAtAnyContextWhenTheWeightsCostMore) {
  auto r = FindBreakeven(Llama8bOnH100("bf16", 5), 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_profitable, 0);
  EXPECT_NEAR(r->usd_per_token_at_context_1 * 1e6, 15010111488.0 / 2.1775e12 * 2.95 / 3600 * 1e6,
              1e-9);
  EXPECT_GT(r->usd_per_token_at_context_1 * 1e6, 5.64);
}

// The batch that fills memory, capped at the model limit: at 131,072 tokens
// a sequence holds 131,072 x 131,072 = 17,179,869,184 bytes of KV, and
// 60,862,341,775 bytes of KV pool hold 3 of them. A token then costs
// (W + 3 x 131,072 x 131,073) / 3 = 22,183,283,370.7 bytes of reading, under
// the $20 budget of 53,145,762,711.9: profitable up to the limit, 3 sequences.
TEST(BreakevenTest, BatchFillingMemoryAtTheModelLimit) {
  BreakevenQuery q = Llama8bOnH100("bf16", 20);
  q.max_model_len = 131072;
  auto r = FindBreakevenFillingMemory(q, 256);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->max_profitable, 131072);
  EXPECT_TRUE(r->limited_by_model);
  EXPECT_EQ(r->batch, 3);
}

ModelPrice Offer(const std::string& id, double output_usd_per_mtok) {
  ModelPrice m;
  m.id = id;
  m.provider = "test";
  m.base.input = 10'000;  // $0.01 per million tokens
  m.base.output = static_cast<PicoUsdPerToken>(std::llround(output_usd_per_mtok * 1e6));
  return m;
}

TEST(BreakevenTest, ComparableOffersAreTheSameModelAtApiProviders) {
  PriceSheet sheet("2026-11-29", "test");
  ASSERT_TRUE(sheet.Add(Offer("groq/llama-3.1-8b-instant", 0.08)).ok());
  ASSERT_TRUE(sheet.Add(Offer("nebius/meta-llama/Meta-Llama-3.1-8B-Instruct", 0.06)).ok());
  ASSERT_TRUE(sheet.Add(Offer("deepinfra/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo", 0.03)).ok());
  ASSERT_TRUE(sheet.Add(Offer("vertex/meta/llama-3.1-8b-instruct-maas", 0)).ok());  // unpriced
  ASSERT_TRUE(sheet.Add(Offer("llama-3.1-80b", 0.5)).ok());                         // not 8b
  ASSERT_TRUE(sheet.Add(Offer("fireworks/models/qwen3-8b", 0.2)).ok());
  ASSERT_TRUE(sheet.Add(Offer("novita/deepseek/deepseek-r1-0528-qwen3-8b", 0.09)).ok());
  const ComparableOffers llama = FindComparableOffers(sheet, "llama-3.1-8b");
  ASSERT_EQ(llama.offers.size(), 3u);
  EXPECT_EQ(llama.offers[0]->id, "groq/llama-3.1-8b-instant");
  EXPECT_DOUBLE_EQ(llama.median_output_usd_per_mtok, 0.06);  // of 0.03, 0.06, 0.08
  EXPECT_DOUBLE_EQ(llama.median_input_usd_per_mtok, 0.01);
  const ComparableOffers qwen = FindComparableOffers(sheet, "qwen3-8b");
  ASSERT_EQ(qwen.offers.size(), 1u);  // not the distilled DeepSeek model
  EXPECT_DOUBLE_EQ(qwen.median_output_usd_per_mtok, 0.2);
  EXPECT_TRUE(FindComparableOffers(sheet, "gemma-2-9b").offers.empty());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
