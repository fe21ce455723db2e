// ccusage's cost cases: apps/ccusage/src/calculate-cost.ts and
// packages/internal/src/pricing.ts (v18.0.11), and the Rust rewrite's
// rust/crates/ccusage/src/cost.rs (commit 5816e640), on inputs written from
// them (cost/ccusage_cases.h).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cost/ccusage_cases.h"

namespace kvbill::ccusage_cases {
namespace KVBILL_TEST_FILE_ID {
namespace {

using nlohmann::json;

// --- apps/ccusage/src/calculate-cost.ts -------------------------------------

// "calculateTotals should aggregate daily usage data" and "... session usage
// data": two days (or sessions) of 100/50/25/10 and 200/100/50/20 tokens
// costing $0.01 and $0.02 total 300/150/75/30 and $0.03.
TEST(CcusageCalculateCostTest, TotalsAggregateDaysAndSessions) {
  const Bill bill = Make(Read({{.time = "2024-01-01T12:00:00Z",
                                .input = 100,
                                .output = 50,
                                .cache_creation = 25,
                                .cache_read = 10,
                                .cost = 0.01,
                                .session = "session-1"},
                               {.time = "2024-01-02T12:00:00Z",
                                .input = 200,
                                .output = 100,
                                .cache_creation = 50,
                                .cache_read = 20,
                                .cost = 0.02,
                                .session = "session-2"}}));
  ASSERT_EQ(bill.days.size(), 2u);
  ASSERT_EQ(bill.sessions.size(), 2u);
  CallUsage sum;
  for (const auto& [id, m] : bill.total.by_model) sum += m.usage;
  EXPECT_EQ(sum.input, 300);
  EXPECT_EQ(sum.output, 150);
  EXPECT_EQ(sum.cache_write(), 75);
  EXPECT_EQ(sum.cache_read, 30);
  EXPECT_EQ(bill.total.cost.pico_usd, 30'000 * kMicro);  // $0.03, exactly
}

// "getTotalTokens should sum all token types", "... handle zero values",
// "createTotalsObject should create complete totals object": 100 + 50 + 25
// + 10 = 185 tokens; 0 for zeros.
TEST(CcusageCalculateCostTest, TotalTokensSumAllFourCounts) {
  const CallUsage usage{.input = 100, .cache_write_5m = 25, .cache_read = 10, .output = 50};
  EXPECT_EQ(usage.prompt() + usage.output, 185);
  const CallUsage zero;
  EXPECT_EQ(zero.prompt() + zero.output, 0);
}

// "calculateTotals should handle empty array".
TEST(CcusageCalculateCostTest, EmptyBillIsAllZeros) {
  const Bill bill = Make(UsageLog{});
  EXPECT_EQ(bill.total.calls, 0);
  EXPECT_EQ(bill.total.cost.pico_usd, 0);
  EXPECT_TRUE(bill.days.empty());
  EXPECT_TRUE(bill.sessions.empty());
}

// --- packages/internal/src/pricing.ts ----------------------------------------

// "returns pricing data from LiteLLM dataset".
TEST(CcusagePricingTest, ReadsTheOneModelOfALiteLlmFile) {
  EXPECT_EQ(LiteLlm(kGpt5).models().size(), 1u);
}

// "calculates cost using pricing information": 1,000 input x $1.25 + 500
// output x $10 + 200 cache reads x $0.125 per Mtok = 1,250 + 5,000 + 25 =
// 6,275 micro-dollars.
TEST(CcusagePricingTest, PricesEachTokenKind) {
  const PriceSheet sheet = LiteLlm(kGpt5);
  const auto cost =
      PriceCall(*sheet.Find("gpt-5"), CallUsage{.input = 1000, .cache_read = 200, .output = 500});
  EXPECT_EQ(cost->cost.pico_usd, 6'275 * kMicro);
}

const char kSonnet4Tiers[] = R"({"anthropic/claude-4-sonnet-20250514": {
    "input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5,
    "input_cost_per_token_above_200k_tokens": 6e-6,
    "output_cost_per_token_above_200k_tokens": 2.25e-5,
    "cache_creation_input_token_cost": 3.75e-6, "cache_read_input_token_cost": 3e-7,
    "cache_creation_input_token_cost_above_200k_tokens": 7.5e-6,
    "cache_read_input_token_cost_above_200k_tokens": 6e-7}})";

// "calculates tiered pricing for tokens exceeding 200k threshold (300k input,
// 250k output, 300k cache creation, 250k cache read)". DISAGREES: ccusage
// prices each kind's first 200k tokens at the base rate and the rest at the
// tier's ($6.915). Anthropic prices the whole request at the long-context
// rates once its input (uncached, written and read) exceeds 200k tokens
// (Anthropic's pricing page, "Long context pricing"; docs/billing.md#pricing-rules):
// 300k x $6 + 250k x $22.5 + 300k x $7.5 + 250k x $0.6 per Mtok
//   = 1.8 + 5.625 + 2.25 + 0.15 = $9.825.
TEST(CcusagePricingTest, AboveTheTierTheWholeRequestIsRepricedNotTheExcess) {
  const PriceSheet sheet = LiteLlm(kSonnet4Tiers);
  ASSERT_NE(sheet.Find("anthropic/claude-4-sonnet-20250514"), nullptr);
  const auto cost = PriceCall(
      *sheet.Find("anthropic/claude-4-sonnet-20250514"),
      CallUsage{
          .input = 300'000, .cache_write_5m = 300'000, .cache_read = 250'000, .output = 250'000});
  EXPECT_TRUE(cost->long_context);
  EXPECT_EQ(cost->cost.pico_usd, 9'825'000 * kMicro);
}

// "uses standard pricing for 300k/250k tokens when model lacks tiered
// pricing": 300k x $1 + 250k x $2 per Mtok = $0.80.
TEST(CcusagePricingTest, WithoutATierLargeRequestsStayAtBaseRates) {
  const PriceSheet sheet =
      LiteLlm(R"({"gpt-5": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}})");
  const auto cost = PriceCall(*sheet.Find("gpt-5"), CallUsage{.input = 300'000, .output = 250'000});
  EXPECT_FALSE(cost->long_context);
  EXPECT_EQ(cost->cost.pico_usd, 800'000 * kMicro);
}

// "correctly applies pricing at 200k boundary (200k uses base, 200,001 uses
// tiered, 0 returns 0)". The case's entry lists input prices only: kvbill
// skips it (a call also needs an output price, and $0 would be a guess) and
// says so. With the output price the entry lacks (Sonnet 4's $15): 200,000
// tokens cost 200,000 x $3 = $0.60; 200,001 cost 200,001 x $6 = $1.200006
// (DISAGREES with ccusage's 200,000 x $3 + 1 x $6 = $0.600006: the whole
// request is repriced, as above); 0 tokens cost $0.
TEST(CcusagePricingTest, TheTierBoundaryAt200kTokens) {
  const PriceSheet partial = LiteLlm(R"({"claude-4-sonnet-20250514": {
      "input_cost_per_token": 3e-6, "input_cost_per_token_above_200k_tokens": 6e-6}})");
  EXPECT_EQ(partial.Find("claude-4-sonnet-20250514"), nullptr);
  ASSERT_NE(partial.FindSkipped("claude-4-sonnet-20250514"), nullptr);
  EXPECT_EQ(partial.FindSkipped("claude-4-sonnet-20250514")->missing, "output_cost_per_token");

  const PriceSheet sheet = LiteLlm(R"({"claude-4-sonnet-20250514": {
      "input_cost_per_token": 3e-6, "input_cost_per_token_above_200k_tokens": 6e-6,
      "output_cost_per_token": 1.5e-5}})");
  const ModelPrice& price = *sheet.Find("claude-4-sonnet-20250514");
  EXPECT_EQ(PriceCall(price, CallUsage{.input = 200'000})->cost.pico_usd, 600'000 * kMicro);
  EXPECT_EQ(PriceCall(price, CallUsage{.input = 200'001})->cost.pico_usd, 1'200'006 * kMicro);
  EXPECT_EQ(PriceCall(price, CallUsage{})->cost.pico_usd, 0);
}

// "charges only for tokens above 200k when base price is missing (300k→100k
// charged, 100k→0 charged)". DISAGREES: an entry without base prices prices
// nothing in kvbill; a call of it is unpriced, with a note naming what the
// entry lacks, where ccusage bills only the tokens past 200k and $0 below.
TEST(CcusagePricingTest, AnEntryWithOnlyTierPricesIsSkippedWithANote) {
  const PriceSheet sheet = LiteLlm(R"({"theoretical-model": {
      "input_cost_per_token_above_200k_tokens": 6e-6,
      "output_cost_per_token_above_200k_tokens": 2.25e-5}})");
  EXPECT_TRUE(sheet.models().empty());
  ASSERT_EQ(sheet.skipped().size(), 1u);
  EXPECT_EQ(sheet.skipped()[0].missing, "input_cost_per_token and output_cost_per_token");
  const Bill bill = Make(
      Read({{.input = 300'000, .output = 250'000, .model = "theoretical-model"}}), Auto(), sheet);
  EXPECT_EQ(bill.total.unpriced_calls, 1);
  EXPECT_EQ(bill.total.cost.pico_usd, 0);
}

const char kOpus46Fast[] = R"({"claude-opus-4-6": {"input_cost_per_token": 5e-6,
    "output_cost_per_token": 2.5e-5, "provider_specific_entry": {"fast": 6.0}}})";

// "applies fast speed multiplier from provider_specific_entry": 1,000 input
// x $5 + 500 output x $25 per Mtok = $0.0175; fast, 6 times that = $0.105.
// "does not apply multiplier when speed is standard": $0.0175.
TEST(CcusagePricingTest, FastModeMultipliesEveryRate) {
  const PriceSheet sheet = LiteLlm(kOpus46Fast);
  const Bill bill =
      Make(Read({{.input = 1000, .output = 500, .model = "claude-opus-4-6"},
                 {.input = 1000, .output = 500, .model = "claude-opus-4-6", .speed = "standard"},
                 {.input = 1000, .output = 500, .model = "claude-opus-4-6", .speed = "fast"}}),
           Auto(), sheet);
  EXPECT_EQ(bill.calls[0].cost.cost.pico_usd, 17'500 * kMicro);
  EXPECT_EQ(bill.calls[1].cost.cost.pico_usd, 17'500 * kMicro);
  EXPECT_EQ(bill.calls[2].cost.cost.pico_usd, 105'000 * kMicro);
}

// "defaults to 1x multiplier when provider_specific_entry has no fast field".
// DISAGREES: a fast call of a model whose entry lists no fast-mode price is
// unpriced in kvbill (with a note asking for --price MODEL:fast_multiplier=),
// not billed at the standard rates: fast mode costs more ("priced at 6x
// standard Opus rates", Anthropic, "Fast mode").
TEST(CcusagePricingTest, AFastCallWithoutAFastPriceIsUnpriced) {
  const PriceSheet sheet = LiteLlm(
      R"({"claude-sonnet-4-6": {"input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5}})");
  const Bill bill =
      Make(Read({{.input = 1000, .output = 500, .model = "claude-sonnet-4-6"},
                 {.input = 1000, .output = 500, .model = "claude-sonnet-4-6", .speed = "fast"}}),
           Auto(), sheet);
  // Standard: 1,000 x $3 + 500 x $15 per Mtok = $0.0105.
  EXPECT_EQ(bill.calls[0].cost.cost.pico_usd, 10'500 * kMicro);
  EXPECT_EQ(bill.calls[1].unpriced, Unpriced::kNoFastPrice);
  EXPECT_EQ(bill.total.by_model.at("claude-sonnet-4-6-fast").unpriced_calls, 1);
}

// --- the Rust rewrite, rust/crates/ccusage/src/cost.rs -----------------------------

// The cases' sheet: "test-model" without a provider, at $1 input, $10
// output, $1.25 written, $0.10 read per token (prices as high as $10 per
// token are accepted), with a 200k tier.
const char kTestModel[] = R"({"test-model": {"input_cost_per_token": 1.0,
    "output_cost_per_token": 10.0, "cache_creation_input_token_cost": 1.25,
    "cache_read_input_token_cost": 0.1, "input_cost_per_token_above_200k_tokens": 2.0,
    "cache_creation_input_token_cost_above_200k_tokens": 1.5}})";

// "prices_cache_creation_breakdown_by_duration": 10 five-minute writes x
// $1.25 + 20 one-hour writes x $2 (twice the input price: an entry without a
// provider writes for 1 hour at the 1-hour rate) + 30 reads x $0.10 = 12.5 +
// 40 + 3 = $55.50. The case's usage says 999 writes in all beside that
// 10 + 20 split; kvbill does not pick one of two disagreeing counts: the
// line is an error naming them.
TEST(CcusageRustCostTest, CacheWritesPricedByTheirDuration) {
  const PriceSheet sheet = LiteLlm(kTestModel);
  const ModelPrice& price = *sheet.Find("test-model");
  EXPECT_EQ(price.base.cache_write_1h, 2'000'000'000'000);  // $2 per token
  const auto line = [](int total) {
    return R"({"type":"assistant","message":{"id":"m","model":"test-model","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":)" +
           std::to_string(total) +
           R"(,"cache_read_input_tokens":30,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":20}}}})"
           "\n";
  };
  UsageLog log;
  std::istringstream consistent(line(30));
  ASSERT_TRUE(ReadUsageLog(consistent, "usage.jsonl", &log).ok());
  const Bill bill = Make(log, Auto(), sheet);
  EXPECT_EQ(bill.total.cost.pico_usd, 55'500'000'000'000);
  std::istringstream disagreeing(line(999));
  EXPECT_EQ(ReadUsageLog(disagreeing, "usage.jsonl", &log).error().message(),
            "usage.jsonl:1: message.usage: cache_creation: ephemeral_5m_input_tokens 10 + "
            "ephemeral_1h_input_tokens 20 differ from \"cache_creation_input_tokens\" 999");
}

// "falls_back_to_flat_cache_creation_rate_without_breakdown": 10 writes
// without a split are 5-minute writes: 10 x $1.25 = $12.50.
TEST(CcusageRustCostTest, WritesWithoutASplitAreFiveMinuteWrites) {
  const PriceSheet sheet = LiteLlm(kTestModel);
  UsageLog log;
  std::istringstream in(
      R"({"type":"assistant","message":{"id":"m","model":"test-model","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":10}}})");
  ASSERT_TRUE(ReadUsageLog(in, "usage.jsonl", &log).ok());
  EXPECT_EQ(Make(log, Auto(), sheet).total.cost.pico_usd, 12'500'000'000'000);
}

// "parses_cache_creation_breakdown_from_usage_json": 100 + 200 written of
// 300: 100 five-minute, 200 one-hour.
TEST(CcusageRustCostTest, ReadsTheWriteSplit) {
  UsageLog log;
  std::istringstream in(
      R"({"type":"assistant","message":{"id":"m","model":"x","usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200}}}})");
  ASSERT_TRUE(ReadUsageLog(in, "usage.jsonl", &log).ok());
  EXPECT_EQ(log.calls[0].usage.cache_write(), 300);
  EXPECT_EQ(log.calls[0].usage.cache_write_5m, 100);
  EXPECT_EQ(log.calls[0].usage.cache_write_1h, 200);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill::ccusage_cases
