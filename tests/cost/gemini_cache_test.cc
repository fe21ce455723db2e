// Gemini's implicit and explicit caches, OpenAI's write-fee variant and the
// pricing of explicit caches (creation and storage). Every expected number is
// worked out by hand in the comments; prices are the bundled sheet's
// ($ per Mtok): Gemini 2.5 Flash 0.3 in, 0.03 read, storage 1 per hour;
// Gemini 2.5 Pro 1.25 in, 0.125 read, 10 out, storage 4.5 per hour, above
// 200k tokens 2.5 in, 0.25 read, 15 out; GPT-5.6 5 in, 0.5 read, 6.25 write.
#include <gtest/gtest.h>

#include <vector>

#include "kvbill/cost/api_bill.h"
#include "kvbill/cost/api_replay.h"
#include "kvbill/cost/provider_cache.h"
#include "kvbill/policy/context_policy.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Content A: 2,000 tokens; B, C: other contents appended after A.
constexpr ContentPiece kA{1, 0, 2'000};
constexpr ContentPiece kB{2, 0, 500};
constexpr ContentPiece kC{3, 0, 100};

const ModelPrice& Find(const char* model) {
  static const PriceSheet sheet = *BundledPriceSheet();
  const ModelPrice* price = sheet.Find(model);
  EXPECT_NE(price, nullptr) << model;
  return *price;
}

std::unique_ptr<ProviderCache> Make(const char* provider, const char* model,
                                    ProviderCacheOptions options = {}) {
  auto cache = MakeProviderCache(provider, model, options);
  EXPECT_TRUE(cache.ok()) << cache.error().message();
  return std::move(*cache);
}

CallUsage Serve(ProviderCache& cache, Seconds now_s, std::vector<ContentPiece> pieces) {
  return cache.Serve(now_s, pieces);
}

CallUsage Usage(Tokens input, Tokens write, Tokens read) {
  return CallUsage{.input = input, .cache_write_5m = write, .cache_read = read};
}

TEST(GeminiCacheTest, MinimumCacheableTokensPerModel) {
  EXPECT_EQ(GeminiMinimumCacheableTokens("gemini-2.5-flash"), 2'048);
  EXPECT_EQ(GeminiMinimumCacheableTokens("gemini-2.5-pro"), 2'048);
  EXPECT_EQ(GeminiMinimumCacheableTokens("gemini/gemini-2.5-flash-lite"), 2'048);
  EXPECT_EQ(GeminiMinimumCacheableTokens("gemini-3-pro-preview"), 4'096);
  EXPECT_EQ(GeminiMinimumCacheableTokens("gemini-3.1-pro-preview"), 4'096);
}

TEST(GeminiCacheTest, ImplicitReadsIn128TokenStepsFromTheMinimumWithoutWriteFee) {
  auto cache = Make("gemini", "gemini-2.5-flash");
  // 2,000 < 2,048: not cached.
  EXPECT_EQ(Serve(*cache, 0, {kA}), Usage(2'000, 0, 0));
  // 2,500 tokens: nothing to read; leaves steps 2,048, 2,176, 2,304, 2,432.
  EXPECT_EQ(Serve(*cache, 10, {kA, kB}), Usage(2'500, 0, 0));
  // 2,600 tokens sharing the first 2,500: reads 2,432, 168 input.
  const CallUsage third = Serve(*cache, 20, {kA, kB, kC});
  EXPECT_EQ(third, Usage(168, 0, 2'432));
  //   2,432 x 0.03 + 168 x 0.3 = 72.96 + 50.4 = 123.36 micro-dollars.
  EXPECT_EQ(PriceCall(Find("gemini-2.5-flash"), third)->cost.pico_usd, 123'360'000);
  // Retention 300 s since the last use (20): gone at 320.
  EXPECT_EQ(Serve(*cache, 320, {kA, kB}), Usage(2'500, 0, 0));
}

TEST(GeminiCacheTest, ExplicitFixedPrefixLivesTtlFromCreationAndIsRecreated) {
  auto cache = Make("gemini", "gemini-2.5-pro", {.explicit_cache = true, .prefix_tokens = 2'048});
  // Created at 0 for A + 48 tokens of B; the request reads it.
  EXPECT_EQ(Serve(*cache, 0, {kA, kB}), Usage(452, 0, 2'048));
  // A + C differs within the first 2,048 tokens: a second cache.
  EXPECT_EQ(Serve(*cache, 100, {kA, kC}), Usage(52, 0, 2'048));
  // The first cache, read at 3,599, is not refreshed by reads...
  EXPECT_EQ(Serve(*cache, 3'599, {kA, kB, kC}), Usage(552, 0, 2'048));
  // ...and is gone at exactly 3,600: created again.
  EXPECT_EQ(Serve(*cache, 3'600, {kA, kB}), Usage(452, 0, 2'048));
  // Shorter than the prefix: no cache.
  EXPECT_EQ(Serve(*cache, 3'601, {kA}), Usage(2'000, 0, 0));
  const std::vector<CacheCreation> created = cache->Creations();
  EXPECT_EQ(created, (std::vector<CacheCreation>{
                         {0, 2'048, 3'600}, {100, 2'048, 3'600}, {3'600, 2'048, 3'600}}));
  // Creation as input: 3 x 2,048 x 1.25 = 7,680 micro-dollars.
  // Storage: 3 x 2,048 tokens x 1 hour x 4.5 = 27,648 micro-dollars.
  const auto cost = PriceCacheCreations(Find("gemini-2.5-pro"), created);
  ASSERT_TRUE(cost.ok()) << cost.error().message();
  EXPECT_EQ(cost->creations, 3);
  EXPECT_EQ(cost->created_tokens, 6'144);
  EXPECT_DOUBLE_EQ(cost->storage_token_hours, 6'144);
  EXPECT_EQ(cost->creation.pico_usd, 7'680'000'000);
  EXPECT_EQ(cost->storage.pico_usd, 27'648'000'000);
  EXPECT_EQ(cost->total.pico_usd, 35'328'000'000);
}

TEST(GeminiCacheTest, ExplicitFirstRequestCachesTheWholePromptOfARequestWithoutACache) {
  auto cache = Make("gemini", "gemini-2.5-flash", {.ttl_s = 600, .explicit_cache = true});
  EXPECT_EQ(Serve(*cache, 0, {kA}), Usage(2'000, 0, 0));  // below 2,048
  EXPECT_EQ(Serve(*cache, 10, {kA, kB}), Usage(0, 0, 2'500));
  // A live cache covers the first 2,500 tokens: no new one.
  EXPECT_EQ(Serve(*cache, 20, {kA, kB, kC}), Usage(100, 0, 2'500));
  // Created at 10 with a 600 s lifetime: gone at 610, created for 2,600.
  EXPECT_EQ(Serve(*cache, 610, {kA, kB, kC}), Usage(0, 0, 2'600));
  // Creation: (2,500 + 2,600) x 0.3 = 1,530 micro-dollars.
  // Storage at $1 per Mtok-hour for 600 s = 1/6 hour, each rounded to the pico-dollar:
  //   2,500 / 6 = 416.6666... micro-dollars -> 416,666,667 pico-dollars
  //   2,600 / 6 = 433.3333... micro-dollars -> 433,333,333 pico-dollars
  const auto cost = PriceCacheCreations(Find("gemini-2.5-flash"), cache->Creations());
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->creation.pico_usd, 1'530'000'000);
  EXPECT_EQ(cost->storage.pico_usd, 416'666'667 + 433'333'333);
  EXPECT_NEAR(cost->storage_token_hours, 5'100.0 / 6, 1e-9);
}

TEST(GeminiCacheTest, CreationAboveTheLongContextThresholdIsPricedAtTheTier) {
  // 250,000 > 200,000 tokens: created at 2.5 per Mtok = 625,000 micro-dollars;
  // stored 2 hours: 250,000 x 4.5 x 2 = 2,250,000 micro-dollars.
  const std::vector<CacheCreation> created = {{0, 250'000, 7'200}};
  const auto cost = PriceCacheCreations(Find("gemini-2.5-pro"), created);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->creation.pico_usd, 625'000'000'000);
  EXPECT_EQ(cost->storage.pico_usd, 2'250'000'000'000);
}

TEST(GeminiCacheTest, ExplicitCachesNeedAStoragePrice) {
  const std::vector<CacheCreation> created = {{0, 4'096, 3'600}};
  EXPECT_EQ(PriceCacheCreations(Find("gpt-5"), created).error().message(),
            "model \"gpt-5\" has no cache storage price (cache_storage_per_hour); explicit "
            "caches are charged storage per token-hour");
  // Nothing created, nothing to price.
  EXPECT_EQ(PriceCacheCreations(Find("gpt-5"), {})->total.pico_usd, 0);
}

TEST(GeminiCacheTest, ReplayAddsTheExplicitCacheChargesToTheBill) {
  // One task, prompts 2,500 at 0 s and 2,600 at 60 s on Gemini 2.5 Flash,
  // explicit cache of the first request's prompt (1 hour):
  //   request 0: 2,500 read x 0.03 + 100 out x 2.5 = 75 + 250 = 325 micro-dollars
  //   request 1: 2,500 read x 0.03 + 100 in x 0.3 + 100 out x 2.5 = 75 + 30 + 250 = 355
  //   creation 2,500 x 0.3 = 750; storage 2,500 x 1 x 1 hour = 2,500
  //   bill 325 + 355 + 750 + 2,500 = 3,930 micro-dollars
  Task task;
  task.id = "t";
  for (Tokens appended : {2'500, 100}) {
    Turn turn;
    turn.spans.push_back(Span{SpanKind::kOther, appended, std::nullopt});
    turn.output = 100;
    turn.tool_s = 60;
    task.turns.push_back(turn);
  }
  const std::vector<Task> tasks = {task};
  auto policy = MakeContextPolicy(ContextPolicyParams{});
  const std::vector<std::vector<Request>> requests = {(*policy)->Plan(task)};
  auto cache = Make("gemini", "gemini-2.5-flash", {.explicit_cache = true});
  auto out = ReplayApi(tasks, requests, Find("gemini-2.5-flash"), *cache, {});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->requests.at(1).predicted,
            (CallUsage{.input = 100, .cache_read = 2'500, .output = 100}));
  EXPECT_EQ(out->cache_creations.creation.pico_usd, 750'000'000);
  EXPECT_EQ(out->cache_creations.storage.pico_usd, 2'500'000'000);
  EXPECT_EQ(out->tasks.at(0).cost.pico_usd, (325 + 355) * 1'000'000LL);
  EXPECT_EQ(out->cost.pico_usd, 3'930'000'000);
}

TEST(GeminiCacheTest, SheetListsStoragePerTokenHourAndOverridesIt) {
  // $4.50 per Mtok per hour = 4,500,000 pico-dollars per token-hour.
  EXPECT_EQ(Find("gemini-2.5-pro").cache_storage_per_hour, 4'500'000);
  EXPECT_EQ(Find("gemini-2.5-flash").cache_storage_per_hour, 1'000'000);
  EXPECT_EQ(Find("claude-sonnet-4-5").cache_storage_per_hour, 0);
  PriceSheet sheet = *BundledPriceSheet();
  ASSERT_TRUE(ApplyPriceOverrides({"gemini-2.5-flash:cache_storage_per_hour=2.25"}, &sheet).ok());
  EXPECT_EQ(sheet.Find("gemini-2.5-flash")->cache_storage_per_hour, 2'250'000);
  EXPECT_EQ(ParsePriceSheet(R"({"kvbill_prices": 1, "as_of": "x", "source": "y", "models": {
              "m": {"provider": "gemini", "source": "s", "input": 1, "output": 1,
                    "cache_read": 1, "cache_write_5m": 1, "cache_write_1h": 1,
                    "cache_storage_per_hour": "a"}}})",
                            "p.json")
                .error()
                .message(),
            "p.json#/models/m/cache_storage_per_hour: must be a number, got \"a\"");
}

TEST(OpenAiWriteFeeTest, GptFiveSixWritesTheStepsPastTheRead) {
  auto cache = Make("openai", "gpt-5.6");
  // 1,500 tokens: steps up to 1,408 written, the 92-token tail input.
  EXPECT_EQ(Serve(*cache, 0, {{1, 0, 1'500}}), Usage(92, 1'408, 0));
  // 2,000 tokens: reads 1,408, writes up to 1,920 (15 x 128), 80 input.
  const CallUsage second = Serve(*cache, 10, {{1, 0, 1'500}, {2, 0, 500}});
  EXPECT_EQ(second, Usage(80, 512, 1'408));
  //   80 x 5 + 512 x 6.25 + 1,408 x 0.5 = 400 + 3,200 + 704 = 4,304 micro-dollars.
  EXPECT_EQ(PriceCall(Find("gpt-5.6"), second)->cost.pico_usd, 4'304'000'000);
  // Below 1,024 nothing is written.
  EXPECT_EQ(Serve(*cache, 20, {{3, 0, 1'000}}), Usage(1'000, 0, 0));
  // Retention 1,800 s by default with the write fee: last used at 10, gone at 1,810.
  EXPECT_EQ(Serve(*cache, 1'810, {{1, 0, 1'500}, {2, 0, 500}}), Usage(80, 1'920, 0));
}

TEST(OpenAiWriteFeeTest, WriteFeeIsAnOptionEitherWay) {
  auto off = Make("openai", "gpt-5.6", {.write_fee = WriteFee::kOff});
  EXPECT_EQ(Serve(*off, 0, {{1, 0, 1'500}}), Usage(1'500, 0, 0));
  // Without the fee the default retention stays 300 s: alive at 299.
  EXPECT_EQ(Serve(*off, 299, {{1, 0, 1'500}}), Usage(92, 0, 1'408));
  auto on = Make("openai", "gpt-5", {.write_fee = WriteFee::kOn});
  EXPECT_EQ(Serve(*on, 0, {{1, 0, 1'500}}), Usage(92, 1'408, 0));
  // 24-hour extended retention is ttl_s 86,400.
  auto extended = Make("openai", "gpt-5", {.ttl_s = 86'400});
  Serve(*extended, 0, {{1, 0, 1'500}});
  EXPECT_EQ(Serve(*extended, 86'399, {{1, 0, 1'500}}), Usage(92, 0, 1'408));
}

TEST(ProviderCacheOptionsTest, ErrorsNameTheProviderAndTheOption) {
  EXPECT_EQ(MakeProviderCache("x", "m", {}).error().message(),
            R"(unknown provider "x" (one of anthropic|openai|deepseek|gemini))");
  EXPECT_EQ(
      MakeProviderCache("gemini", "gemini-2.5-pro", {.explicit_cache = true, .prefix_tokens = 500})
          .error()
          .message(),
      "gemini: prefix_tokens 500 is below the model's minimum of 2048");
  EXPECT_EQ(
      MakeProviderCache("gemini", "gemini-2.5-pro", {.prefix_tokens = 4'096}).error().message(),
      "gemini: prefix_tokens applies to explicit caches (\"mode\": \"explicit\")");
  EXPECT_EQ(MakeProviderCache("anthropic", "claude-sonnet-4-5", {.write_fee = WriteFee::kOn})
                .error()
                .message(),
            "anthropic: write_fee is an openai option");
  EXPECT_EQ(MakeProviderCache("openai", "gpt-5", {.explicit_cache = true}).error().message(),
            "openai: explicit caches (mode, prefix_tokens) are a gemini rule");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
