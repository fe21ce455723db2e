#include "kvbill/cost/api_bill.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const ModelPrice& Find(const char* model) {
  static const PriceSheet sheet = *BundledPriceSheet();
  const ModelPrice* price = sheet.Find(model);
  EXPECT_NE(price, nullptr) << model;
  return *price;
}

TEST(PriceCallTest, AnthropicCallAtBaseRates) {
  // The first call of a SWEContextBench session on Sonnet 4.5 ($/Mtok: 3 in,
  // 3.75 5-minute write, 0.3 read, 15 out):
  //   10 x 3 + 10,247 x 3.75 + 15,411 x 0.3 + 1 x 15
  //   = 30 + 38,426.25 + 4,623.3 + 15 = 43,094.55 micro-dollars = $0.04309455.
  CallUsage usage{.input = 10,
                  .cache_write_5m = 10'247,
                  .cache_write_1h = 0,
                  .cache_read = 15'411,
                  .output = 1};
  const auto cost = PriceCall(Find("claude-sonnet-4-5-20250929"), usage);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->cost.pico_usd, 43'094'550'000);
  EXPECT_FALSE(cost->long_context);
}

TEST(PriceCallTest, OneHourWritesCostTwiceTheInputPrice) {
  // Opus 4.5: input $5, 5-minute write 6.25, 1-hour write 10 per Mtok.
  //   1,000 x 6.25 + 2,000 x 10 = 6,250 + 20,000 = 26,250 micro-dollars.
  CallUsage usage{
      .input = 0, .cache_write_5m = 1'000, .cache_write_1h = 2'000, .cache_read = 0, .output = 0};
  EXPECT_EQ(PriceCall(Find("claude-opus-4-5"), usage)->cost.pico_usd, 26'250'000'000);
}

TEST(PriceCallTest, LongContextRepricesTheWholeRequestAboveTheThreshold) {
  const ModelPrice& sonnet = Find("claude-sonnet-4-5");
  // Prompt of exactly 200,000 tokens: base rates.
  //   1 x 3 + 199,999 x 0.3 + 100 x 15 = 3 + 59,999.7 + 1,500 = 61,502.7 micro-dollars.
  CallUsage at{
      .input = 1, .cache_write_5m = 0, .cache_write_1h = 0, .cache_read = 199'999, .output = 100};
  const auto base = PriceCall(sonnet, at);
  EXPECT_EQ(base->cost.pico_usd, 61'502'700'000);
  EXPECT_FALSE(base->long_context);
  // One more cached token (200,001, cached tokens count toward the
  // threshold): everything at 6 / 0.6 / 22.5 per Mtok.
  //   1 x 6 + 200,000 x 0.6 + 100 x 22.5 = 6 + 120,000 + 2,250 = 122,256 micro-dollars.
  CallUsage above = at;
  above.cache_read = 200'000;
  const auto repriced = PriceCall(sonnet, above);
  EXPECT_EQ(repriced->cost.pico_usd, 122'256'000'000);
  EXPECT_TRUE(repriced->long_context);
  // Opus 4.5 has no tier: 300k tokens stay at base, 300,000 x 0.5 = $0.15.
  CallUsage big{
      .input = 0, .cache_write_5m = 0, .cache_write_1h = 0, .cache_read = 300'000, .output = 0};
  EXPECT_EQ(PriceCall(Find("claude-opus-4-5"), big)->cost.pico_usd, 150'000'000'000);
}

TEST(PriceCallTest, GeminiTwoFiveProRepricesAbove200kTokensCachedIncluded) {
  const ModelPrice& pro = Find("gemini-2.5-pro");
  // 10,000 input + 190,000 cached = 200,000: base (1.25 in, 0.125 cached, 10 out):
  //   10,000 x 1.25 + 190,000 x 0.125 + 1,000 x 10 = 12,500 + 23,750 + 10,000
  //   = 46,250 micro-dollars.
  CallUsage at{.input = 10'000, .cache_read = 190'000, .output = 1'000};
  EXPECT_EQ(PriceCall(pro, at)->cost.pico_usd, 46'250'000'000);
  EXPECT_FALSE(PriceCall(pro, at)->long_context);
  // One more cached token: all at 2.5 / 0.25 / 15:
  //   10,000 x 2.5 + 190,001 x 0.25 + 1,000 x 15 = 25,000 + 47,500.25 + 15,000
  //   = 87,500.25 micro-dollars.
  CallUsage above = at;
  above.cache_read = 190'001;
  EXPECT_EQ(PriceCall(pro, above)->cost.pico_usd, 87'500'250'000);
  EXPECT_TRUE(PriceCall(pro, above)->long_context);
}

TEST(PriceCallTest, TotalsArePricedAtBaseRates) {
  // A run's modelUsage for Opus 4.5 (acceptance run-00):
  //   5 x 5 + 1,071 x 25 + 92,986 x 0.5 + 42,641 x 6.25
  //   = 25 + 26,775 + 46,493 + 266,506.25 = 339,799.25 micro-dollars,
  // the provider's costUSD 0.33979925.
  CallUsage usage{.input = 5,
                  .cache_write_5m = 42'641,
                  .cache_write_1h = 0,
                  .cache_read = 92'986,
                  .output = 1'071};
  EXPECT_EQ(PriceTotal(Find("claude-opus-4-5-20251101"), usage)->pico_usd, 339'799'250'000);
}

TEST(PriceCallTest, OpenAiCachedInputAtTheCachedPrice) {
  // gpt-5-codex: $1.25 input, $0.125 cached, $10 output per Mtok; a call
  // with 12,500 prompt tokens of which 11,904 cached and 150 output:
  //   596 x 1.25 + 11,904 x 0.125 + 150 x 10 = 745 + 1,488 + 1,500 = 3,733 micro-dollars.
  CallUsage usage{
      .input = 596, .cache_write_5m = 0, .cache_write_1h = 0, .cache_read = 11'904, .output = 150};
  EXPECT_EQ(PriceCall(Find("gpt-5-codex"), usage)->cost.pico_usd, 3'733'000'000);
}

TEST(PriceCallTest, SumsOfManyCallsStayExact) {
  // 10,000 calls of the first test's 43,094.55 micro-dollars sum to exactly
  // $430.9455: no drift however many calls.
  const ModelPrice& sonnet = Find("claude-sonnet-4-5");
  CallUsage usage{.input = 10,
                  .cache_write_5m = 10'247,
                  .cache_write_1h = 0,
                  .cache_read = 15'411,
                  .output = 1};
  Money sum;
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(AddMoney(PriceCall(sonnet, usage)->cost, &sum));
  EXPECT_EQ(sum.pico_usd, 430'945'500'000'000);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
