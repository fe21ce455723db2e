#include "kvbill/cost/provider_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Content A: 2,000 tokens; B, C: other contents appended after A.
constexpr ContentPiece kA{1, 0, 2'000};
constexpr ContentPiece kB{2, 0, 500};
constexpr ContentPiece kC{3, 0, 100};

std::unique_ptr<ProviderCache> Make(const char* provider, const char* model,
                                    ProviderCacheOptions options = {}) {
  auto cache = MakeProviderCache(provider, model, options);
  EXPECT_TRUE(cache.ok()) << cache.error().message();
  return std::move(*cache);
}

CallUsage Serve(ProviderCache& cache, Seconds now_s, std::vector<ContentPiece> pieces) {
  return cache.Serve(now_s, pieces);
}

CallUsage Usage(Tokens input, Tokens write_5m, Tokens write_1h, Tokens read) {
  return CallUsage{.input = input,
                   .cache_write_5m = write_5m,
                   .cache_write_1h = write_1h,
                   .cache_read = read,
                   .output = 0};
}

TEST(PrefixHashesTest, SplittingAPieceKeepsEveryHash) {
  const PrefixHashes whole(std::vector<ContentPiece>{{7, 0, 100}, {8, 0, 10}});
  const PrefixHashes split(std::vector<ContentPiece>{{7, 0, 40}, {7, 40, 60}, {8, 0, 10}});
  for (Tokens p : {0, 1, 40, 70, 100, 105, 110}) EXPECT_EQ(whole.At(p), split.At(p)) << p;
  EXPECT_NE(whole.At(100), whole.At(99));
  EXPECT_NE(whole.At(100), PrefixHashes(std::vector<ContentPiece>{{7, 1, 100}}).At(100));
}

TEST(ProviderCacheTest, AnthropicWritesTheWholeFirstPrompt) {
  auto cache = Make("anthropic", "claude-sonnet-4-5");
  EXPECT_EQ(Serve(*cache, 0, {kA}), Usage(0, 2'000, 0, 0));
}

TEST(ProviderCacheTest, AnthropicReadsThePreviousBreakpointAndWritesTheRest) {
  auto cache = Make("anthropic", "claude-sonnet-4-5");
  Serve(*cache, 0, {kA});
  EXPECT_EQ(Serve(*cache, 10, {kA, kB}), Usage(0, 500, 0, 2'000));
  // The same prompt again: all read, nothing written.
  EXPECT_EQ(Serve(*cache, 20, {kA, kB}), Usage(0, 0, 0, 2'500));
  // Other content at the same length is not a hit.
  EXPECT_EQ(Serve(*cache, 30, {{9, 0, 2'000}}), Usage(0, 2'000, 0, 0));
}

TEST(ProviderCacheTest, AnthropicReadsTheLongestBreakpointThatIsAPrefix) {
  auto cache = Make("anthropic", "claude-sonnet-4-5");
  Serve(*cache, 0, {kA});      // breakpoint at 2,000
  Serve(*cache, 1, {kA, kB});  // breakpoint at 2,500: A + B
  // A + C shares 2,000 tokens with A + B, but only A ends at a breakpoint.
  EXPECT_EQ(Serve(*cache, 2, {kA, kC}), Usage(0, 100, 0, 2'000));
}

TEST(ProviderCacheTest, AnthropicReadRefreshesTheLifetime) {
  auto cache = Make("anthropic", "claude-sonnet-4-5");
  Serve(*cache, 0, {kA});
  Serve(*cache, 200, {kA, kB});  // reads A: A's lifetime now runs to 500
  // At 450 A was last used 250 s ago: alive (without the refresh it would
  // have expired at 300).
  EXPECT_EQ(Serve(*cache, 450, {kA, kC}), Usage(0, 100, 0, 2'000));
}

TEST(ProviderCacheTest, AnthropicEntryExpiresAtExactly300Seconds) {
  auto cache = Make("anthropic", "claude-sonnet-4-5");
  Serve(*cache, 0, {kA});
  EXPECT_EQ(Serve(*cache, 299.5, {kA, kB}), Usage(0, 500, 0, 2'000));
  // A + B was written at 299.5, A read then; both gone 300 s later exactly.
  EXPECT_EQ(Serve(*cache, 599.5, {kA, kB, kC}), Usage(0, 2'600, 0, 0));
}

TEST(ProviderCacheTest, AnthropicDoesNotCacheBelowTheModelsMinimum) {
  auto sonnet = Make("anthropic", "claude-sonnet-4-5");
  // 1,000 < 1,024 tokens: neither written nor read.
  EXPECT_EQ(Serve(*sonnet, 0, {{1, 0, 1'000}}), Usage(1'000, 0, 0, 0));
  EXPECT_EQ(Serve(*sonnet, 1, {{1, 0, 1'000}}), Usage(1'000, 0, 0, 0));
  // 1,100 tokens are cached, but nothing was written at 1,000.
  EXPECT_EQ(Serve(*sonnet, 2, {{1, 0, 1'000}, {2, 0, 100}}), Usage(0, 1'100, 0, 0));
  // Haiku 4.5 needs 4,096.
  auto haiku = Make("anthropic", "claude-haiku-4-5");
  EXPECT_EQ(Serve(*haiku, 0, {kA}), Usage(2'000, 0, 0, 0));
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-3-5-haiku"), 2'048);
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-opus-4-5"), 4'096);
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-sonnet-4-5"), 1'024);
  // Anthropic's "Cache limitations" list (2026-10): Opus 4.6 4,096, Opus 4.7
  // 2,048, Opus 4.8 1,024, Opus 5 512, Sonnet 4.6 1,024; a dated id takes its
  // model's. The bare family prefix claude-opus-4 (Opus 4) stays 1,024.
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-opus-4-6"), 4'096);
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-opus-4-6-20260205"), 4'096);
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-opus-4-7"), 2'048);
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-opus-4-8"), 1'024);
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-opus-5"), 512);
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-sonnet-4-6"), 1'024);
  EXPECT_EQ(AnthropicMinimumCacheableTokens("claude-opus-4-20250514"), 1'024);
  // 3,000 tokens on Opus 4.6 are under its 4,096: nothing is written.
  auto opus46 = Make("anthropic", "claude-opus-4-6");
  EXPECT_EQ(Serve(*opus46, 0, {{1, 0, 3'000}}), Usage(3'000, 0, 0, 0));
}

TEST(ProviderCacheTest, AnthropicOneHourLifetimeWritesAtTheOneHourRate) {
  auto cache = Make("anthropic", "claude-sonnet-4-5", {.ttl_s = 3'600, .min_cacheable_tokens = 0});
  EXPECT_EQ(Serve(*cache, 0, {kA}), Usage(0, 0, 2'000, 0));
  const CallUsage second = Serve(*cache, 3'000, {kA, kB});
  EXPECT_EQ(second, Usage(0, 0, 500, 2'000));
  // Sonnet 4.5 at $/Mtok 0.3 read and 6 for 1-hour writes:
  //   2,000 x 0.3 + 500 x 6 = 600 + 3,000 = 3,600 micro-dollars.
  const auto sheet = BundledPriceSheet();  // keep it alive: Find points into it
  ASSERT_TRUE(sheet.ok());
  const ModelPrice* sonnet = sheet->Find("claude-sonnet-4-5");
  ASSERT_NE(sonnet, nullptr);
  EXPECT_EQ(PriceCall(*sonnet, second)->cost.pico_usd, 3'600'000'000);
}

TEST(ProviderCacheTest, SeedMakesAPrefixReadable) {
  auto cache = Make("anthropic", "claude-sonnet-4-5");
  cache->Seed(0, std::vector<ContentPiece>{kA, kB}, 1'500);
  EXPECT_EQ(Serve(*cache, 1, {kA, kB}), Usage(0, 1'000, 0, 1'500));
}

TEST(ProviderCacheTest, OnlyAnthropicLetsTheClientPlaceBreakpoints) {
  EXPECT_TRUE(Make("anthropic", "claude-sonnet-4-5")->ClientBreakpoints());
  EXPECT_FALSE(Make("openai", "gpt-4o")->ClientBreakpoints());
  EXPECT_FALSE(Make("deepseek", "deepseek-chat")->ClientBreakpoints());
}

TEST(ProviderCacheTest, OpenAiReadsIn128TokenStepsWithoutWriteFee) {
  auto cache = Make("openai", "gpt-5");
  EXPECT_EQ(Serve(*cache, 0, {{1, 0, 1'500}}), Usage(1'500, 0, 0, 0));
  // 1,500 tokens left steps 1,024 ... 1,408 (= 11 x 128).
  EXPECT_EQ(Serve(*cache, 10, {{1, 0, 1'500}, {2, 0, 500}}), Usage(592, 0, 0, 1'408));
  // Below 1,024 nothing is cached.
  EXPECT_EQ(Serve(*cache, 20, {{3, 0, 1'000}}), Usage(1'000, 0, 0, 0));
  EXPECT_EQ(Serve(*cache, 30, {{3, 0, 1'000}}), Usage(1'000, 0, 0, 0));
  // Retention 300 s since the last use (10): gone at 310.
  EXPECT_EQ(Serve(*cache, 310, {{1, 0, 1'500}}), Usage(1'500, 0, 0, 0));
}

TEST(ProviderCacheTest, DeepSeekReadsIn64TokenUnits) {
  auto cache = Make("deepseek", "deepseek-chat");
  Serve(*cache, 0, {{1, 0, 200}});
  EXPECT_EQ(Serve(*cache, 5, {{1, 0, 200}, {2, 0, 10}}), Usage(18, 0, 0, 192));
}

TEST(ProviderCacheTest, MakeNamesTheProviderAndParameter) {
  EXPECT_EQ(MakeProviderCache("mistral", "x", {}).error().message(),
            R"(unknown provider "mistral" (one of anthropic|openai|deepseek|gemini))");
  EXPECT_EQ(MakeProviderCache("anthropic", "x", {.ttl_s = 60, .min_cacheable_tokens = 0})
                .error()
                .message(),
            "anthropic: ttl_s must be 300 or 3600, got 60");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
