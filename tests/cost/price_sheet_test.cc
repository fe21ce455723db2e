#include "kvbill/cost/price_sheet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "kvbill/cost/money.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

PriceSheet Bundled() {
  auto sheet = BundledPriceSheet();
  EXPECT_TRUE(sheet.ok()) << (sheet ? "" : sheet.error().message());
  return sheet ? *sheet : PriceSheet();
}

TEST(PriceMoneyTest, PricesAreWholePicoDollarsPerToken) {
  // $3 per Mtok = 3e-6 $/token = 3,000,000 pico-dollars per token.
  EXPECT_EQ(*PriceFromUsdPerMtok(3), 3'000'000);
  EXPECT_EQ(*PriceFromUsdPerMtok(3.75), 3'750'000);
  // DeepSeek V4 Pro's cache hit, $0.003625 per Mtok.
  EXPECT_EQ(*PriceFromUsdPerMtok(0.003625), 3'625);
  EXPECT_EQ(PriceFromUsdPerMtok(-1).error().message(), "must be a non-negative number, got -1");
  EXPECT_EQ(FormatUsdPerMtok(3'750'000), "3.75");
  // +infinity is above the $1e8 bound, not "no number"; NaN is no number.
  EXPECT_EQ(PriceFromUsdPerMtok(std::numeric_limits<double>::infinity()).error().message(),
            "is above $100,000,000 per Mtok ($100 per token)");
  EXPECT_EQ(PriceFromUsdPerMtok(std::nan("")).error().message(),
            "must be a non-negative number, got nan");
}

TEST(PriceMoneyTest, FormatsExactAndRoundedDollars) {
  const Money m{339'799'250'000};  // $0.33979925
  EXPECT_EQ(FormatUsdExact(m), "0.33979925");
  EXPECT_EQ(FormatUsd(m, 4), "$0.3398");
  EXPECT_EQ(FormatUsd(Money{1'234'567'850'000'000}, 4), "$1,234.5679");
  EXPECT_EQ(FormatUsdExact(Money{12 * kPicoUsdPerUsd}), "12");
  EXPECT_EQ(FormatUsd(Money{-500'000'000'000}, 2), "-$0.50");
}

TEST(PriceMoneyTest, OverflowIsAnErrorNotAWrap) {
  // 2^40 tokens at $150 per Mtok is $164,926,744: beyond the +-$9.2M range.
  const auto product = TokensTimesPrice(Tokens{1} << 40, 150'000'000);
  ASSERT_FALSE(product.ok());
  Money sum{INT64_MAX};
  EXPECT_FALSE(AddMoney(Money{1}, &sum));
  EXPECT_EQ(sum.pico_usd, INT64_MAX);
}

TEST(PriceSheetTest, BundledSheetPricesEveryClaudeModelOfTheSharedLogs) {
  const PriceSheet sheet = Bundled();
  EXPECT_EQ(sheet.as_of(), "2026-07");
  for (const char* id :
       {"claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-opus-4-5-20251101",
        "claude-sonnet-4-20250514", "claude-opus-4-20250514", "claude-haiku-4-5-20251001",
        "gpt-5-codex", "gpt-5", "o3", "gemini-2.5-pro", "deepseek-chat"}) {
    EXPECT_NE(sheet.Find(id), nullptr) << id;
  }
  const ModelPrice* sonnet = sheet.Find("claude-sonnet-4-5-20250929");
  ASSERT_NE(sonnet, nullptr);
  EXPECT_EQ(sonnet->id, "claude-sonnet-4-5");
  // $3 / $15 per Mtok; writes 1.25x and 2x input, reads 0.1x.
  EXPECT_EQ(sonnet->base, (TokenRates{3'000'000, 15'000'000, 300'000, 3'750'000, 6'000'000}));
  EXPECT_EQ(sonnet->long_context_threshold, 200'000);
  EXPECT_EQ(sonnet->long_context,
            (TokenRates{6'000'000, 22'500'000, 600'000, 7'500'000, 12'000'000}));
}

TEST(PriceSheetTest, ResolvesLoggedIdsByTheDocumentedRules) {
  const PriceSheet sheet = Bundled();
  const auto id_of = [&](const char* model) {
    const ModelPrice* p = sheet.Find(model);
    return p == nullptr ? std::string("(unpriced)") : p->id;
  };
  EXPECT_EQ(id_of("claude-sonnet-4-5"), "claude-sonnet-4-5");                     // exact
  EXPECT_EQ(id_of("Claude-Sonnet-4-5"), "claude-sonnet-4-5");                     // case
  EXPECT_EQ(id_of("anthropic/claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");  // prefix
  EXPECT_EQ(id_of("claude-sonnet-4-5@20250929"), "claude-sonnet-4-5");            // Vertex
  EXPECT_EQ(id_of("claude-opus-4-5-20991231"), "claude-opus-4-5");                // date
  EXPECT_EQ(id_of("gpt-5.2-2030-01-01"), "gpt-5.2");                              // ISO date
  // A dated snapshot with its own price is found before the date is dropped.
  EXPECT_EQ(id_of("gpt-4o-2024-05-13"), "gpt-4o-2024-05-13");
  EXPECT_EQ(id_of("llama-9-1t"), "(unpriced)");
  EXPECT_EQ(id_of("<synthetic>"), "(unpriced)");
}

TEST(PriceSheetTest, KvbillSheetErrorsCarryAJsonPointer) {
  const std::string text = R"({"kvbill_prices": 1, "as_of": "2026-07", "source": "test",
    "models": {"m": {"provider": "x", "source": "s", "input": -1, "output": 1,
                     "cache_read": 0, "cache_write_5m": 1, "cache_write_1h": 1}}})";
  const auto sheet = ParsePriceSheet(text, "p.json");
  ASSERT_FALSE(sheet.ok());
  EXPECT_EQ(sheet.error().message(),
            "p.json#/models/m/input: must be a non-negative number, got -1");
  const auto missing = ParsePriceSheet(
      R"({"kvbill_prices": 1, "as_of": "x", "source": "y", "models": {"m": {"provider": "x",
      "source": "s", "input": 1, "output": 1, "cache_read": 0, "cache_write_5m": 1}}})",
      "p.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), "p.json#/models/m/cache_write_1h: missing");
  // A sheet in other units or currency, or with a key kvbill does not read
  // (a misspelt price would go unread), is refused; each was accepted and
  // priced as dollars per million tokens.
  const std::string model = R"("m": {"provider": "x", "source": "s", "input": 1, "output": 1,
      "cache_read": 0, "cache_write_5m": 1, "cache_write_1h": 1)";
  for (const auto& [sheet_text, said] : std::vector<std::pair<std::string, std::string>>{
           {R"({"kvbill_prices": 1, "as_of": "x", "source": "y", "unit": "USD per token",
               "models": {)" +
                model + "}}}",
            "p.json#/unit: kvbill reads prices as \"USD per million tokens\", got \"USD per "
            "token\""},
           {R"({"kvbill_prices": 1, "as_of": "x", "source": "y", "currency": "EUR",
               "models": {)" +
                model + "}}}",
            "p.json#/currency: kvbill prices in USD, got \"EUR\""},
           {R"({"kvbill_prices": 1, "as_of": "x", "source": "y", "models": {)" + model +
                R"(, "inputt": 2}}})",
            "p.json#/models/m/inputt: unknown key (known: provider, aliases, input, output, "
            "cache_read, cache_write_5m, cache_write_1h, cache_storage_per_hour, "
            "fast_multiplier, us_multiplier, long_context, max_input_tokens, web_search_usd, "
            "source, notes)"},
           {R"({"kvbill_prices": 1, "as_of": "x", "source": "y", "modles": {}, "models": {)" +
                model + "}}}",
            "p.json#/modles: unknown key (known: kvbill_prices, as_of, currency, unit, source, "
            "models)"}}) {
    const auto bad = ParsePriceSheet(sheet_text, "p.json");
    ASSERT_FALSE(bad.ok()) << said;
    EXPECT_EQ(bad.error().message(), said);
  }
  EXPECT_TRUE(ParsePriceSheet(R"({"kvbill_prices": 1, "as_of": "x", "source": "y", "currency":
      "USD", "unit": "USD per million tokens", "models": {)" +
                                  model + "}}}",
                              "p.json")
                  .ok());
}

// LiteLLM prices are dollars per token, and an error shows the price as the
// file wrote it: -3e-06 (it said "got -3", the $/Mtok kvbill converts to,
// beside a pointer to a $/token field). 1e303 $/token is 1e309 $/Mtok,
// beyond a double (~1.8e308): above the bound, not "got inf".
TEST(PriceSheetTest, LiteLlmPriceErrorsShowThePriceAsWritten) {
  const auto error_of = [](const std::string& input) {
    const auto sheet = ImportLiteLlmPrices(
        R"({"m": {"input_cost_per_token": )" + input + R"(, "output_cost_per_token": 1.5e-05}})",
        "p.json");
    return sheet.ok() ? std::string("(no error)") : sheet.error().message();
  };
  EXPECT_EQ(error_of("-3e-06"),
            "p.json#/m/input_cost_per_token: must be a non-negative number, got -3e-06");
  EXPECT_EQ(error_of("-0.5"),
            "p.json#/m/input_cost_per_token: must be a non-negative number, got -0.5");
  EXPECT_EQ(error_of("1e303"),
            "p.json#/m/input_cost_per_token: is above $100,000,000 per Mtok ($100 per token)");
  EXPECT_EQ(error_of("3e-06"), "(no error)");
}

TEST(PriceSheetTest, ImportsLiteLlmWithProviderRulesForAbsentFields) {
  // An Anthropic entry without a 1-hour price gets 2x input; an OpenAI
  // entry without a write price writes at the input price; a DeepSeek entry
  // names its cached price input_cost_per_token_cache_hit.
  const std::string text = R"({
    "sample_spec": {"input_cost_per_token": 0.0},
    "claude-x-20250101": {"litellm_provider": "anthropic", "input_cost_per_token": 3e-06,
      "output_cost_per_token": 1.5e-05, "cache_read_input_token_cost": 3e-07,
      "cache_creation_input_token_cost": 3.75e-06,
      "input_cost_per_token_above_200k_tokens": 6e-06,
      "output_cost_per_token_above_200k_tokens": 2.25e-05},
    "gpt-y": {"litellm_provider": "openai", "input_cost_per_token": 1.25e-06,
      "output_cost_per_token": 1e-05, "cache_read_input_token_cost": 1.25e-07},
    "deepseek-z": {"litellm_provider": "deepseek", "input_cost_per_token": 2.8e-07,
      "output_cost_per_token": 4.2e-07, "input_cost_per_token_cache_hit": 2.8e-08,
      "cache_creation_input_token_cost": 0.0},
    "an-image-model": {"litellm_provider": "openai", "output_cost_per_image": 0.04}})";
  const auto sheet = ImportLiteLlmPrices(text, "litellm.json");
  ASSERT_TRUE(sheet.ok()) << sheet.error().message();
  EXPECT_EQ(sheet->models().size(), 3u);
  const ModelPrice* claude = sheet->Find("anthropic/claude-x-20250101");  // prefix dropped
  ASSERT_NE(claude, nullptr);
  EXPECT_EQ(claude->provider, "anthropic");
  EXPECT_EQ(claude->base, (TokenRates{3'000'000, 15'000'000, 300'000, 3'750'000, 6'000'000}));
  EXPECT_EQ(claude->long_context_threshold, 200'000);
  // Long tier: 6 input, 22.5 output; reads 0.6, writes 7.5 / 12 by the rule.
  EXPECT_EQ(claude->long_context,
            (TokenRates{6'000'000, 22'500'000, 600'000, 7'500'000, 12'000'000}));
  EXPECT_EQ(sheet->Find("gpt-y")->base,
            (TokenRates{1'250'000, 10'000'000, 125'000, 1'250'000, 1'250'000}));
  EXPECT_EQ(sheet->Find("deepseek-z")->base,
            (TokenRates{280'000, 420'000, 28'000, 280'000, 280'000}));
}

TEST(PriceSheetTest, OverridesChangeAFieldOrAddAModel) {
  PriceSheet sheet = Bundled();
  ASSERT_TRUE(ApplyPriceOverrides({"claude-sonnet-4-5-20250929:output=20,cache_read=0.25",
                                   "my-model:input=2", "my-model:output=8"},
                                  &sheet)
                  .ok());
  const ModelPrice* sonnet = sheet.Find("claude-sonnet-4-5");
  EXPECT_EQ(sonnet->base.output, 20'000'000);
  EXPECT_EQ(sonnet->base.cache_read, 250'000);
  EXPECT_EQ(sonnet->base.input, 3'000'000);  // untouched
  const ModelPrice* mine = sheet.Find("my-model");
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(mine->provider, "custom");
  // Reads and 5-minute writes of a new model default to its input price,
  // 1-hour writes to twice it (the 1-hour rate).
  EXPECT_EQ(mine->base, (TokenRates{2'000'000, 8'000'000, 2'000'000, 2'000'000, 4'000'000}));
  // A new Claude model is Anthropic's: 0.1x reads, 1.25x and 2x writes.
  ASSERT_TRUE(ApplyPriceOverrides({"claude-next-9:input=4,output=20"}, &sheet).ok());
  EXPECT_EQ(sheet.Find("claude-next-9")->provider, "anthropic");
  EXPECT_EQ(sheet.Find("claude-next-9")->base,
            (TokenRates{4'000'000, 20'000'000, 400'000, 5'000'000, 8'000'000}));
  ASSERT_TRUE(ApplyPriceOverrides({"claude-next-9:fast_multiplier=2.5"}, &sheet).ok());
  EXPECT_EQ(sheet.Find("claude-next-9")->fast_multiplier, 2.5);

  PriceSheet other = Bundled();
  EXPECT_EQ(ApplyPriceOverrides({"gpt-5:speed=3"}, &other).error().message(),
            "--price \"gpt-5:speed=3\": unknown field \"speed\" (input, output, cache_read, "
            "cache_write_5m, cache_write_1h, cache_storage_per_hour, long_context_threshold, "
            "long_input, long_output, long_cache_read, long_cache_write_5m, long_cache_write_1h, "
            "fast_multiplier, us_multiplier, max_input_tokens, web_search)");
  EXPECT_EQ(ApplyPriceOverrides({"new-model:input=1"}, &other).error().message(),
            "--price: model \"new-model\" is not in the price sheet; give at least its input and "
            "output prices");
  EXPECT_EQ(ApplyPriceOverrides({"gpt-5"}, &other).error().message(),
            "--price \"gpt-5\": expected MODEL:field=value");
  // strtod read "0x10" as 16 and the second of two inputs won.
  EXPECT_EQ(ApplyPriceOverrides({"gpt-5:input=0x10"}, &other).error().message(),
            "--price \"gpt-5:input=0x10\": input: \"0x10\" is not a decimal number");
  EXPECT_EQ(ApplyPriceOverrides({"gpt-5:input=3,input=4"}, &other).error().message(),
            "--price \"gpt-5:input=3,input=4\": input: given twice");
}

TEST(PriceSheetTest, FastModeMultipliers) {
  // The bundled sheet: Opus 4.6 and 4.7 at 6x (Anthropic: "6x standard Opus
  // rates"; LiteLLM provider_specific_entry.fast 6.0), Opus 4.8 and Opus 5 at
  // 2x (LiteLLM 2.0); the others none.
  const PriceSheet sheet = Bundled();
  EXPECT_EQ(sheet.Find("claude-opus-4-6-20260205")->fast_multiplier, 6);
  EXPECT_EQ(sheet.Find("claude-opus-4-7")->fast_multiplier, 6);
  EXPECT_EQ(sheet.Find("claude-opus-4-8")->fast_multiplier, 2);
  EXPECT_EQ(sheet.Find("claude-opus-5")->fast_multiplier, 2);
  EXPECT_EQ(sheet.Find("claude-sonnet-4-5")->fast_multiplier, 0);
  // Opus 4.6 fast: $5 x 6 = $30 input, $25 x 6 = $150 output per Mtok.
  const auto fast = FastModePrice(*sheet.Find("claude-opus-4-6"));
  EXPECT_EQ(fast->base.input, 30'000'000);
  EXPECT_EQ(fast->base.output, 150'000'000);
  EXPECT_EQ(fast->base.cache_read, 3'000'000);
  // A multiplier that is not a number in (0, 1000] names its pointer.
  const auto bad = ParsePriceSheet(R"({"kvbill_prices": 1, "as_of": "x", "source": "y", "models": {
      "m": {"provider": "p", "source": "s", "input": 1, "output": 2, "cache_read": 0.1,
            "cache_write_5m": 1, "cache_write_1h": 1, "fast_multiplier": -6}}})",
                                   "p.json");
  EXPECT_EQ(bad.error().message(),
            "p.json#/models/m/fast_multiplier: must be a number in (0, 1000], got -6");
  const auto litellm = ImportLiteLlmPrices(
      R"({"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                "provider_specific_entry": {"fast": "six"}}})",
      "l.json");
  EXPECT_EQ(litellm.error().message(),
            "l.json#/m/provider_specific_entry/fast: must be a number in (0, 1000], got \"six\"");
}

TEST(PriceSheetTest, LiteLlmEntriesWithoutAProviderOrAPriceHalf) {
  // ccusage's test sheets: no litellm_provider, prices up to $10 per token.
  const auto sheet = ImportLiteLlmPrices(R"({
      "claude-x": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05},
      "test-model": {"input_cost_per_token": 1.0, "output_cost_per_token": 10.0,
                     "cache_creation_input_token_cost": 1.25},
      "embedder": {"input_cost_per_token": 1e-07},
      "image-model": {"output_cost_per_image": 0.04}})",
                                         "l.json");
  ASSERT_TRUE(sheet.ok()) << sheet.error().message();
  // A Claude model without a provider is Anthropic's: 0.1x, 1.25x, 2x input.
  EXPECT_EQ(sheet->Find("claude-x")->provider, "anthropic");
  EXPECT_EQ(sheet->Find("claude-x")->base,
            (TokenRates{3'000'000, 15'000'000, 300'000, 3'750'000, 6'000'000}));
  // Another model without a provider: reads at input, 1-hour writes at 2x.
  EXPECT_EQ(sheet->Find("test-model")->base,
            (TokenRates{1'000'000'000'000, 10'000'000'000'000, 1'000'000'000'000, 1'250'000'000'000,
                        2'000'000'000'000}));
  // One price of two: skipped and listed; no per-token price: left out.
  EXPECT_EQ(sheet->Find("embedder"), nullptr);
  ASSERT_EQ(sheet->skipped().size(), 1u);
  EXPECT_EQ(sheet->skipped()[0].id, "embedder");
  EXPECT_EQ(sheet->skipped()[0].missing, "output_cost_per_token");
  EXPECT_EQ(sheet->FindSkipped("openai/embedder"), &sheet->skipped()[0]);
  // Past $100 per token is still an error.
  EXPECT_EQ(ImportLiteLlmPrices(
                R"({"m": {"input_cost_per_token": 101, "output_cost_per_token": 1}})", "l.json")
                .error()
                .message(),
            "l.json#/m/input_cost_per_token: is above $100,000,000 per Mtok ($100 per token)");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
