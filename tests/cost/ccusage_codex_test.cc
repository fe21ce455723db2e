// ccusage's apps/codex/src cases (v18.0.11): data-loader.ts, pricing.ts and
// the daily, monthly and session reports, on Codex rollouts written from
// them (cost/ccusage_cases.h).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cost/ccusage_cases.h"

namespace kvbill::ccusage_cases {
namespace KVBILL_TEST_FILE_ID {
namespace {

using nlohmann::json;

// --- apps/codex/src --------------------------------------------------------------

std::string CodexLine(const json& line) { return line.dump() + "\n"; }

json TokenCount(const std::string& time, const json& info) {
  return {{"timestamp", time},
          {"type", "event_msg"},
          {"payload", {{"type", "token_count"}, {"info", info}}}};
}

json CodexUsage(Tokens input, Tokens cached, Tokens output) {
  return {{"input_tokens", input},
          {"cached_input_tokens", cached},
          {"output_tokens", output},
          {"reasoning_output_tokens", 0},
          {"total_tokens", input + output}};
}

// data-loader.ts "parses token_count events and skips entries without model
// metadata": an event with last_token_usage (1,200 input, 200 cached), then
// one with only total_token_usage (2,000 and 300): the second call is the
// difference, 800 input of which 100 cached. Both gpt-5 (turn_context). The
// session is the file's name: no session_meta.
TEST(CcusageCodexTest, TotalsOnlyEventsAreBilledByDifferences) {
  const std::string text =
      CodexLine({{"timestamp", "2025-09-11T18:25:30.000Z"},
                 {"type", "turn_context"},
                 {"payload", {{"model", "gpt-5"}}}}) +
      CodexLine(TokenCount("2025-09-11T18:25:40.670Z",
                           {{"total_token_usage", CodexUsage(1'200, 200, 500)},
                            {"last_token_usage", CodexUsage(1'200, 200, 500)},
                            {"model", "gpt-5"}})) +
      CodexLine({{"timestamp", "2025-09-11T18:40:00.000Z"},
                 {"type", "turn_context"},
                 {"payload", {{"model", "gpt-5"}}}}) +
      CodexLine(TokenCount("2025-09-12T00:00:00.000Z",
                           {{"total_token_usage", CodexUsage(2'000, 300, 800)}}));
  UsageLog log;
  std::istringstream in(text);
  ASSERT_TRUE(ReadUsageLog(in, "sessions/project-1.jsonl", &log).ok());
  ASSERT_EQ(log.calls.size(), 2u);
  EXPECT_EQ(log.calls[0].model, "gpt-5");
  EXPECT_EQ(log.calls[0].usage.prompt(), 1'200);
  EXPECT_EQ(log.calls[0].usage.cache_read, 200);
  EXPECT_EQ(log.calls[1].model, "gpt-5");
  EXPECT_EQ(log.calls[1].usage.prompt(), 800);
  EXPECT_EQ(log.calls[1].usage.cache_read, 100);
  EXPECT_EQ(log.calls[1].usage.output, 300);
  EXPECT_EQ(log.calls[1].session, "project-1");
}

// data-loader.ts "falls back to legacy model when metadata is missing
// entirely": gpt-5, marked as assumed. 5,000 input x $1.25 + 1,000 output x
// $10 per Mtok = 16,250 micro-dollars.
TEST(CcusageCodexTest, ALogWithoutAModelIsPricedAsGpt5AndMarked) {
  UsageLog log;
  std::istringstream in(CodexLine(TokenCount(
      "2025-09-15T13:00:00.000Z", {{"total_token_usage", CodexUsage(5'000, 0, 1'000)}})));
  ASSERT_TRUE(ReadUsageLog(in, "legacy.jsonl", &log).ok());
  ASSERT_EQ(log.calls.size(), 1u);
  EXPECT_EQ(log.calls[0].model, "gpt-5");
  EXPECT_TRUE(log.calls[0].assumed_model);
  const Bill bill = Make(log);
  EXPECT_EQ(bill.total.by_model.at("gpt-5").assumed_model_calls, 1);
  EXPECT_EQ(bill.total.cost.pico_usd, 16'250 * kMicro);
}

// pricing.ts "converts LiteLLM pricing to per-million costs": gpt-5 at $1.25,
// $10 and $0.125 per Mtok. The case asks for gpt-5-codex, which ccusage
// aliases to gpt-5. DIFFERS: kvbill does not price one model as another;
// the bundled sheet lists gpt-5-codex (at gpt-5's prices), and a sheet that
// lacks it leaves its calls unpriced.
TEST(CcusageCodexTest, LiteLlmPricesPerMillionTokens) {
  const PriceSheet sheet = LiteLlm(kGpt5);
  const ModelPrice* gpt5 = sheet.Find("gpt-5");
  EXPECT_EQ(gpt5->base.input, 1'250'000);
  EXPECT_EQ(gpt5->base.output, 10'000'000);
  EXPECT_EQ(gpt5->base.cache_read, 125'000);
  EXPECT_EQ(sheet.Find("gpt-5-codex"), nullptr);
  EXPECT_EQ(Bundled().Find("gpt-5-codex")->base, Bundled().Find("gpt-5")->base);
}

// pricing.ts "returns zero pricing for OpenRouter free routes", "falls back
// to zero pricing for unknown non-free models". DIFFER: kvbill prices no
// model it has no entry for, free routes included; their calls are unpriced
// with a note (a user adds `--price 'openrouter/free:input=0,output=0'`).
TEST(CcusageCodexTest, UnknownAndFreeRoutesAreUnpriced) {
  for (const char* model :
       {"openrouter/free", "openrouter/openai/gpt-5:free", "openrouter/unknown"}) {
    EXPECT_EQ(Bundled().Find(model), nullptr) << model;
  }
  PriceSheet sheet = Bundled();
  ASSERT_TRUE(ApplyPriceOverrides({"openrouter/free:input=0,output=0"}, &sheet).ok());
  EXPECT_EQ(sheet.Find("openrouter/free")->base, TokenRates{});
}

// pricing.ts "falls back to alias pricing when direct model pricing is all
// zeros" (DIFFERS: a listed price of $0 is a price; kvbill bills $0 and
// does not substitute gpt-5.2-codex's), "prefers direct pricing when
// non-zero pricing is available" (gpt-5.3-codex at its own $1.90 / $15 /
// $0.19).
TEST(CcusageCodexTest, ADirectEntryIsUsedAsListed) {
  const PriceSheet zero = LiteLlm(R"({
      "gpt-5.3-codex": {"input_cost_per_token": 0, "output_cost_per_token": 0,
                        "cache_read_input_token_cost": 0},
      "gpt-5.2-codex": {"input_cost_per_token": 1.75e-6, "output_cost_per_token": 1.4e-5,
                        "cache_read_input_token_cost": 1.75e-7}})");
  EXPECT_EQ(zero.Find("gpt-5.3-codex")->base, TokenRates{});
  const PriceSheet direct = LiteLlm(R"({
      "gpt-5.3-codex": {"input_cost_per_token": 1.9e-6, "output_cost_per_token": 1.5e-5,
                        "cache_read_input_token_cost": 1.9e-7}})");
  const TokenRates& rates = direct.Find("gpt-5.3-codex")->base;
  EXPECT_EQ(rates.input, 1'900'000);
  EXPECT_EQ(rates.output, 15'000'000);
  EXPECT_EQ(rates.cache_read, 190'000);
}

// The events of the report cases, priced with their stub prices: gpt-5 at
// $1.25 / $0.125 cached / $10, gpt-5-mini at $0.60 / $0.06 / $2.
PriceSheet CodexStubSheet() {
  PriceSheet sheet("test", "ccusage's codex report cases");
  ModelPrice gpt5;
  gpt5.id = "gpt-5";
  gpt5.provider = "openai";
  gpt5.base = {1'250'000, 10'000'000, 125'000, 1'250'000, 1'250'000};
  ModelPrice mini;
  mini.id = "gpt-5-mini";
  mini.provider = "openai";
  mini.base = {600'000, 2'000'000, 60'000, 600'000, 600'000};
  EXPECT_TRUE(sheet.Add(gpt5).ok());
  EXPECT_TRUE(sheet.Add(mini).ok());
  return sheet;
}

// One Codex rollout per session (the file's name), each event a
// turn_context naming its model and a token_count with last_token_usage.
UsageLog CodexEvents(
    const std::vector<std::tuple<std::string, std::string, std::string, Tokens, Tokens, Tokens>>&
        events) {
  std::vector<std::pair<std::string, std::string>> files;  // session, text
  for (const auto& [session, time, model, input, cached, output] : events) {
    if (files.empty() || files.back().first != session) files.emplace_back(session, "");
    files.back().second +=
        CodexLine(
            {{"timestamp", time}, {"type", "turn_context"}, {"payload", {{"model", model}}}}) +
        CodexLine(TokenCount(time, {{"last_token_usage", CodexUsage(input, cached, output)}}));
  }
  UsageLog log;
  for (const auto& [session, text] : files) {
    std::istringstream in(text);
    EXPECT_TRUE(ReadUsageLog(in, session + ".jsonl", &log).ok());
  }
  return log;
}

// daily-report.ts "aggregates events by day and calculates costs": the 11th
// holds gpt-5 (1,000 input, 200 cached, 500 output) and gpt-5-mini (400,
// 100, 200): 800 x 1.25 + 200 x 0.125 + 500 x 10 + 300 x 0.6 + 100 x 0.06
// + 200 x 2 = 1,000 + 25 + 5,000 + 180 + 6 + 400 = 6,611 micro-dollars.
// monthly-report.ts "aggregates events by month and calculates costs": the
// same two calls in August 2025, 6,611.
TEST(CcusageCodexTest, DailyAndMonthlyReports) {
  const UsageLog daily =
      CodexEvents({{"session-1", "2025-09-11T03:00:00.000Z", "gpt-5", 1'000, 200, 500},
                   {"session-1", "2025-09-11T05:00:00.000Z", "gpt-5-mini", 400, 100, 200},
                   {"session-2", "2025-09-12T01:00:00.000Z", "gpt-5", 2'000, 0, 800}});
  BillOptions options = Auto();
  options.since = "2025-09-11";
  options.until = "2025-09-12";
  const Bill bill = Make(daily, options, CodexStubSheet());
  ASSERT_EQ(bill.days.size(), 2u);
  CallUsage first;
  for (const auto& [id, m] : bill.days[0].by_model) first += m.usage;
  EXPECT_EQ(first.prompt(), 1'400);
  EXPECT_EQ(first.cache_read, 300);
  EXPECT_EQ(first.output, 700);
  EXPECT_EQ(bill.days[0].cost.pico_usd, 6'611 * kMicro);

  const UsageLog monthly =
      CodexEvents({{"session-1", "2025-08-11T03:00:00.000Z", "gpt-5", 1'000, 200, 500},
                   {"session-1", "2025-08-20T05:00:00.000Z", "gpt-5-mini", 400, 100, 200},
                   {"session-2", "2025-09-12T01:00:00.000Z", "gpt-5", 2'000, 0, 800}});
  const Bill months = Make(monthly, Auto(), CodexStubSheet());
  ASSERT_EQ(Ids(months.months), (std::vector<std::string>{"2025-08", "2025-09"}));
  EXPECT_EQ(months.months[0].cost.pico_usd, 6'611 * kMicro);
}

// session-report.ts "groups events by session and calculates costs":
// session-a: gpt-5 (1,000 input, 100 cached, 500 output) and gpt-5-mini
// (400, 100, 200): 900 x 1.25 + 100 x 0.125 + 500 x 10 + 300 x 0.6 + 100 x
// 0.06 + 200 x 2 = 1,125 + 12.5 + 5,000 + 180 + 6 + 400 = 6,723.5
// micro-dollars; its tokens 1,000 + 500 + 400 + 200 = 2,100 (ccusage's
// 2,130 adds the 30 reasoning tokens that Codex's total_tokens carries,
// which output_tokens already includes). session-b sorts first by last
// activity.
TEST(CcusageCodexTest, SessionReport) {
  const UsageLog log =
      CodexEvents({{"session-a", "2025-09-12T01:00:00.000Z", "gpt-5", 1'000, 100, 500},
                   {"session-a", "2025-09-12T02:00:00.000Z", "gpt-5-mini", 400, 100, 200},
                   {"session-b", "2025-09-11T23:30:00.000Z", "gpt-5", 800, 0, 300}});
  BillOptions options = Auto();
  options.order = BillOrder::kAscending;
  const Bill bill = Make(log, options, CodexStubSheet());
  ASSERT_EQ(Ids(bill.sessions), (std::vector<std::string>{"session-b", "session-a"}));
  const GroupBill& a = bill.sessions[1];
  CallUsage tokens;
  for (const auto& [id, m] : a.by_model) tokens += m.usage;
  EXPECT_EQ(tokens.prompt() + tokens.output, 2'100);
  EXPECT_EQ(a.by_model.at("gpt-5").usage.prompt() + a.by_model.at("gpt-5").usage.output, 1'500);
  EXPECT_EQ(a.cost.pico_usd, 6'723'500'000);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill::ccusage_cases
