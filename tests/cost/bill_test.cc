#include "kvbill/bill/bill.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kvbill/bill/usage_log.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const PriceSheet& Sheet() {
  static const PriceSheet sheet = *BundledPriceSheet();
  return sheet;
}

UsageLog Read(const std::string& text, const std::string& name = "log.jsonl") {
  UsageLog log;
  std::istringstream in(text);
  const Status s = ReadUsageLog(in, name, &log);
  EXPECT_TRUE(s.ok()) << s.error().message();
  return log;
}

Bill MakeOrDie(const UsageLog& log, const BillOptions& options = {}) {
  auto bill = MakeBill(log, Sheet(), options);
  EXPECT_TRUE(bill.ok()) << bill.error().message();
  return *bill;
}

std::string Assistant(const std::string& session, const std::string& id, const std::string& model,
                      const std::string& time, int input, int write, int read, int output) {
  return R"({"type":"assistant","sessionId":")" + session + R"(","timestamp":")" + time +
         R"(","message":{"id":")" + id + R"(","model":")" + model +
         R"(","usage":{"input_tokens":)" + std::to_string(input) +
         R"(,"cache_creation_input_tokens":)" + std::to_string(write) +
         R"(,"cache_read_input_tokens":)" + std::to_string(read) + R"(,"output_tokens":)" +
         std::to_string(output) + "}}}\n";
}

TEST(BillTest, CountsACallLoggedOnSeveralLinesAndFilesOnce) {
  // Claude Code writes one line per content block with the same usage; the
  // first carries a streaming placeholder output. A second copy of the file
  // (interactive logs overlap) repeats the call again.
  const std::string text = Assistant("s1", "msg_a", "claude-sonnet-4-5-20250929",
                                     "2025-12-12T15:19:59Z", 10, 10247, 15411, 1) +
                           Assistant("s1", "msg_a", "claude-sonnet-4-5-20250929",
                                     "2025-12-12T15:20:01Z", 10, 10247, 15411, 120);
  UsageLog log = Read(text);
  std::istringstream copy(text);
  ASSERT_TRUE(ReadUsageLog(copy, "copy.jsonl", &log).ok());
  const Bill bill = MakeOrDie(log);
  EXPECT_EQ(bill.total.calls, 1);
  EXPECT_EQ(bill.duplicate_lines, 3);
  // The copy with the real output: 10 x 3 + 10,247 x 3.75 + 15,411 x 0.3 + 120 x 15
  //   = 30 + 38,426.25 + 4,623.3 + 1,800 = 44,879.55 micro-dollars.
  EXPECT_EQ(bill.total.cost.pico_usd, 44'879'550'000);
  ASSERT_EQ(bill.sessions.size(), 1u);
  EXPECT_EQ(bill.sessions[0].by_model.at("claude-sonnet-4-5-20250929").priced_as,
            "claude-sonnet-4-5");
}

// Web searches are billed per search beside the tokens: Anthropic's $10 per
// 1,000 (a cent each). One Sonnet 4.5 call (the fast path's line) and one
// Haiku 4.5 call (a line the DOM path reads: its usage carries an unknown
// nested object too), 3 and 2 searches:
//   sonnet 10 x 3 + 1,000 x 3.75 + 20,000 x 0.3 + 500 x 15 = 17,280 micro-$,
//          + 3 x 10,000 = 47,280
//   haiku  100 x 1 + 50 x 5 = 350, + 2 x 10,000 = 20,350
// A result line's modelUsage webSearchRequests are priced the same way.
TEST(BillTest, WebSearchesAreBilledPerSearch) {
  const std::string text =
      R"({"type":"assistant","sessionId":"s","timestamp":"2026-01-01T10:00:00Z","message":)"
      R"({"id":"a","model":"claude-sonnet-4-5","usage":{"input_tokens":10,)"
      R"("cache_creation_input_tokens":1000,"cache_read_input_tokens":20000,"output_tokens":500,)"
      R"("server_tool_use":{"web_search_requests":3}}}})"
      "\n"
      R"({"type":"assistant","sessionId":"s","timestamp":"2026-01-01T10:00:05Z","message":)"
      R"({"id":"b","model":"claude-haiku-4-5","usage":{"input_tokens":100,"output_tokens":50,)"
      R"("server_tool_use":{"web_search_requests":2,"web_fetch_requests":1},)"
      R"("extra":{"x":[1]}}}})"
      "\n"
      R"({"type":"result","session_id":"s","total_cost_usd":0.06763,"modelUsage":)"
      R"({"claude-sonnet-4-5":{"inputTokens":10,"outputTokens":500,"cacheReadInputTokens":20000,)"
      R"("cacheCreationInputTokens":1000,"webSearchRequests":3,"costUSD":0.04728}}})"
      "\n";
  const Bill bill = MakeOrDie(Read(text));
  ASSERT_EQ(bill.total.calls, 2);
  EXPECT_EQ(bill.total.cost.pico_usd, (47280 + 20350) * 1'000'000LL);
  EXPECT_EQ(bill.total.by_model.at("claude-sonnet-4-5").usage.web_searches, 3);
  EXPECT_EQ(bill.total.by_model.at("claude-haiku-4-5").usage.web_searches, 2);
  ASSERT_TRUE(bill.total.reported_usage_cost.has_value());
  EXPECT_EQ(bill.total.reported_usage_cost->pico_usd, 47280 * 1'000'000LL);
  // A listed fee of 0 is a price (free searches), not "none listed".
  ModelPrice free = *Sheet().Find("claude-sonnet-4-5");
  free.web_search_pico_usd = 0;
  CallUsage three;
  three.web_searches = 3;
  EXPECT_EQ(WebSearchFee(free).pico_usd, 0);
  EXPECT_EQ(PriceCall(free, three)->cost.pico_usd, 0);
  free.web_search_pico_usd.reset();
  EXPECT_EQ(PriceCall(free, three)->cost.pico_usd, 3 * kAnthropicWebSearchPicoUsd);
}

// A Claude Code call whose kept copy records 10 output tokens or fewer (the
// importer's rule, IsClaudeCodePlaceholderOutput) kept only a streaming
// placeholder: msg_a's stub is replaced by its 120-token copy (not counted),
// msg_b (10) and msg_d (0) are counted, msg_c (11) is not. A Codex call
// with 5 output tokens reports its final count: not counted.
TEST(BillTest, CountsCallsWhoseKeptOutputIsAPlaceholder) {
  const std::string model = "claude-sonnet-4-5-20250929";
  UsageLog log = Read(Assistant("s1", "msg_a", model, "2025-12-12T15:19:59Z", 10, 0, 0, 1) +
                      Assistant("s1", "msg_a", model, "2025-12-12T15:20:01Z", 10, 0, 0, 120) +
                      Assistant("s1", "msg_b", model, "2025-12-12T15:20:02Z", 10, 0, 0, 10) +
                      Assistant("s1", "msg_c", model, "2025-12-12T15:20:03Z", 10, 0, 0, 11) +
                      Assistant("s1", "msg_d", model, "2025-12-12T15:20:04Z", 10, 0, 0, 0));
  std::istringstream codex(
      R"({"timestamp":"2025-11-18T21:55:50.000Z","type":"session_meta","payload":{"id":"c1"}})"
      "\n"
      R"({"timestamp":"2025-11-18T21:55:51.000Z","type":"turn_context","payload":{"model":"gpt-5-codex"}})"
      "\n"
      R"({"timestamp":"2025-11-18T21:55:52.000Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5},"total_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5}}}})"
      "\n");
  ASSERT_TRUE(ReadUsageLog(codex, "rollout.jsonl", &log).ok());
  const Bill bill = MakeOrDie(log);
  EXPECT_EQ(bill.total.calls, 5);
  EXPECT_EQ(bill.placeholder_output_calls, 2);
}

// Two copies of one call with the same output in two sessions a day apart
// (overlapping exports): the earlier is kept whichever log is read first,
// so the call's day and session do not move with the order of the logs.
TEST(BillTest, TiedCopiesKeepTheEarliestWhateverTheOrder) {
  const std::string early = Assistant("s-early", "msg_t", "claude-sonnet-4-5-20250929",
                                      "2025-08-06T10:00:00Z", 10, 0, 0, 50);
  const std::string late = Assistant("s-late", "msg_t", "claude-sonnet-4-5-20250929",
                                     "2025-08-07T01:00:00Z", 10, 0, 0, 50);
  for (const auto& [first, second] : {std::pair{early, late}, std::pair{late, early}}) {
    UsageLog log = Read(first, "a.jsonl");
    std::istringstream more(second);
    ASSERT_TRUE(ReadUsageLog(more, "b.jsonl", &log).ok());
    const Bill bill = MakeOrDie(log);
    ASSERT_EQ(bill.calls.size(), 1u);
    EXPECT_EQ(bill.calls[0].call->session, "s-early");
    ASSERT_EQ(bill.days.size(), 1u);
    EXPECT_EQ(bill.days[0].id, "2025-08-06");
  }
}

TEST(BillTest, RequestIdIdentifiesACallWithoutMessageId) {
  const std::string line =
      R"({"type":"assistant","sessionId":"s","requestId":"req_1","message":{"model":"claude-opus-4-5","usage":{"input_tokens":1000,"output_tokens":0}}})"
      "\n";
  const Bill bill = MakeOrDie(Read(line + line));
  EXPECT_EQ(bill.total.calls, 1);
  // 1,000 x $5 per Mtok = $0.005.
  EXPECT_EQ(bill.total.cost.pico_usd, 5'000'000'000);
}

TEST(BillTest, OneHourWritesFromTheUsageSplit) {
  const std::string line =
      R"({"type":"assistant","sessionId":"s","message":{"id":"m","model":"claude-opus-4-5","usage":{"input_tokens":0,"cache_creation_input_tokens":3000,"cache_read_input_tokens":0,"output_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000}}}})"
      "\n";
  const Bill bill = MakeOrDie(Read(line));
  // 1,000 x 6.25 + 2,000 x 10 = 26,250 micro-dollars.
  EXPECT_EQ(bill.total.cost.pico_usd, 26'250'000'000);
  EXPECT_EQ(bill.total.by_model.at("claude-opus-4-5").usage.cache_write_1h, 2000);
}

TEST(BillTest, UnpricedModelIsCountedNeverAZero) {
  const Bill bill = MakeOrDie(Read(
      Assistant("s", "m1", "mystery-model-7", "2026-01-01T00:00:00Z", 1000, 0, 0, 10) +
      Assistant("s", "m2", "claude-haiku-4-5-20251001", "2026-01-01T00:00:01Z", 1000, 0, 0, 10)));
  EXPECT_EQ(bill.total.calls, 2);
  EXPECT_EQ(bill.total.unpriced_calls, 1);
  const ModelBill& mystery = bill.total.by_model.at("mystery-model-7");
  EXPECT_FALSE(mystery.priced());
  EXPECT_EQ(mystery.calls, 1);
  // Only Haiku 4.5 is in the total: 1,000 x 1 + 10 x 5 = 1,050 micro-dollars.
  EXPECT_EQ(bill.total.cost.pico_usd, 1'050'000'000);
}

TEST(BillTest, SyntheticMessagesAreNotCalls) {
  const Bill bill =
      MakeOrDie(Read(Assistant("s", "m", "<synthetic>", "2026-01-01T00:00:00Z", 0, 0, 0, 0)));
  EXPECT_EQ(bill.total.calls, 0);
}

TEST(BillTest, ResultLineCostIsShownBesideKvbillsPrice) {
  // Acceptance run-24: Sonnet's calls carry all its usage; Opus and Haiku
  // side calls appear only in modelUsage.
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/tests/data/bill/headless_two_runs.jsonl");
  UsageLog log;
  ASSERT_TRUE(ReadUsageLog(in, "headless_two_runs.jsonl", &log).ok());
  const Bill bill = MakeOrDie(log);
  ASSERT_EQ(bill.sessions.size(), 2u);
  const GroupBill& run = bill.sessions[1];
  EXPECT_EQ(run.id, "run-24");
  EXPECT_EQ(run.calls, 2);
  // Sonnet calls: 6 x 3 + 8,870 x 3.75 + 42,853 x 0.3 + 591 x 15
  //   = 18 + 33,262.5 + 12,855.9 + 8,865 = 55,001.4 micro-dollars (costUSD 0.0550014).
  const ModelBill& sonnet = run.by_model.at("claude-sonnet-4-5-20250929");
  EXPECT_EQ(sonnet.cost.pico_usd, 55'001'400'000);
  EXPECT_EQ(sonnet.usage, *sonnet.reported_usage);
  EXPECT_DOUBLE_EQ(*sonnet.reported_cost_usd, 0.0550014);
  // Opus side calls: 4 x 5 + 122 x 25 + 22,959 x 0.5 = 14,549.5 micro-dollars.
  // Haiku: 2 x 1 + 168 x 5 + 14,934 x 0.1 = 2,335.4 micro-dollars.
  EXPECT_EQ(run.by_model.at("claude-opus-4-5-20251101").reported_usage_cost->pico_usd,
            14'549'500'000);
  EXPECT_EQ(run.by_model.at("claude-haiku-4-5-20251001").reported_usage_cost->pico_usd,
            2'335'400'000);
  // 55,001.4 + 14,549.5 + 2,335.4 = 71,886.3 micro-dollars = total_cost_usd 0.0718863.
  EXPECT_EQ(run.reported_usage_cost->pico_usd, 71'886'300'000);
  EXPECT_DOUBLE_EQ(*run.reported_cost_usd, 0.0718863);
  // run-00's Opus calls are a part of its usage: 1 x 5 + 19,686 x 6.25 +
  // 92,986 x 0.5 + 1,004 x 25 = 194,635.5 micro-dollars, against 339,799.25
  // for its modelUsage (costUSD 0.33979925).
  const ModelBill& opus = bill.sessions[0].by_model.at("claude-opus-4-5-20251101");
  EXPECT_EQ(opus.cost.pico_usd, 194'635'500'000);
  EXPECT_EQ(opus.reported_usage_cost->pico_usd, 339'799'250'000);
}

TEST(BillTest, DaysAreUtcDatesAndSinceUntilAreInclusive) {
  const UsageLog log =
      Read(Assistant("s", "m1", "claude-haiku-4-5", "2026-01-11T23:59:59Z", 1000, 0, 0, 0) +
           Assistant("s", "m2", "claude-haiku-4-5", "2026-01-12T00:30:00+01:00", 2000, 0, 0, 0) +
           Assistant("s", "m3", "claude-haiku-4-5", "2026-01-12T10:00:00Z", 4000, 0, 0, 0));
  const Bill all = MakeOrDie(log);
  ASSERT_EQ(all.days.size(), 2u);
  // 00:30 at +01:00 is 23:30 UTC on the 11th.
  EXPECT_EQ(all.days[0].id, "2026-01-11");
  EXPECT_EQ(all.days[0].calls, 2);
  EXPECT_EQ(all.days[1].id, "2026-01-12");
  BillOptions options;
  options.since = "2026-01-12";
  options.until = "2026-01-12";
  const Bill one = MakeOrDie(log, options);
  EXPECT_EQ(one.total.calls, 1);
  EXPECT_EQ(one.total.cost.pico_usd, 4'000'000'000);  // 4,000 x $1 per Mtok
}

TEST(BillTest, DaysAndSinceUntilFollowTheTimeZone) {
  // UTC 2026-01-11T23:59:59 is 2026-01-12T01:59:59 at +02:00; 2026-01-12T10:00Z
  // stays on the 12th; 2026-01-12T23:30Z is 2026-01-13T01:30 at +02:00.
  const UsageLog log =
      Read(Assistant("s", "m1", "claude-haiku-4-5", "2026-01-11T23:59:59Z", 1000, 0, 0, 0) +
           Assistant("s", "m2", "claude-haiku-4-5", "2026-01-12T10:00:00Z", 2000, 0, 0, 0) +
           Assistant("s", "m3", "claude-haiku-4-5", "2026-01-12T23:30:00Z", 4000, 0, 0, 0));
  BillOptions options;
  options.time_zone = TimeZone::FixedOffset(7'200, "+02:00");
  const Bill east = MakeOrDie(log, options);
  ASSERT_EQ(east.days.size(), 2u);
  EXPECT_EQ(east.days[0].id, "2026-01-12");
  EXPECT_EQ(east.days[0].calls, 2);
  EXPECT_EQ(east.days[1].id, "2026-01-13");
  // --since/--until are dates in the zone: only the 13th, 4,000 x $1 per Mtok.
  options.since = options.until = "2026-01-13";
  EXPECT_EQ(MakeOrDie(log, options).total.cost.pico_usd, 4'000'000'000);
  // At -05:30 the first call is on the 11th (18:29:59), the others on the 12th.
  BillOptions west;
  west.time_zone = TimeZone::FixedOffset(-19'800, "-05:30");
  const Bill w = MakeOrDie(log, west);
  ASSERT_EQ(w.days.size(), 2u);
  EXPECT_EQ(w.days[0].id, "2026-01-11");
  EXPECT_EQ(w.days[0].calls, 1);
  EXPECT_EQ(w.days[1].calls, 2);
}

TEST(TimeZoneTest, ParsesUtcOffsetsAndRejectsTheRest) {
  EXPECT_TRUE(TimeZone::Parse("UTC")->is_utc());
  EXPECT_EQ(TimeZone::Parse("+02:00")->OffsetAt(0), 7'200);
  EXPECT_EQ(TimeZone::Parse("-0530")->OffsetAt(0), -19'800);
  EXPECT_EQ(TimeZone::Parse("+09")->OffsetAt(0), 32'400);
  for (const char* bad : {"+25:00", "+02:60", "2", "Mars/Olympus", "../etc/passwd", "+2:00"}) {
    const auto zone = TimeZone::Parse(bad);
    ASSERT_FALSE(zone.ok()) << bad;
    EXPECT_EQ(zone.error().message().rfind(std::string("time zone \"") + bad + "\": not UTC", 0),
              0u)
        << zone.error().message();
  }
  // 1969-12-31T23:59:59.5Z at +00:00:01... before the epoch the second is floored:
  // -0.5 s is 1969-12-31T23:59:59.5, +1 s later 1970-01-01T00:00:00.5.
  EXPECT_EQ(TimeZone::FixedOffset(1, "+00:00:01").Date(-500'000'000), "1970-01-01");
  EXPECT_EQ(TimeZone::FixedOffset(0, "x").Date(-500'000'000), "1969-12-31");
}

// "local" reads TZ: a name the C library cannot find it reads as UTC
// without a word, so a misspelt TZ is an error; a POSIX rule and a zone of
// the database (a leading ':' allowed) are taken, as is no TZ at all.
TEST(TimeZoneTest, LocalRefusesATzTheCLibraryWouldReadAsUtc) {
  const char* saved = std::getenv("TZ");
  const std::string before = saved != nullptr ? saved : "";
  setenv("TZ", "Garbage/Zone", 1);
  const auto bad = TimeZone::Parse("local");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message().rfind("local: TZ=\"Garbage/Zone\" is not a zone of the time "
                                        "zone database (",
                                        0),
            0u)
      << bad.error().message();
  for (const char* good : {"EST5EDT", "<+03>-3", "UTC", ":UTC"}) {
    setenv("TZ", good, 1);
    EXPECT_TRUE(TimeZone::Parse("local").ok()) << good;
  }
  unsetenv("TZ");
  EXPECT_TRUE(TimeZone::Parse("local").ok());
  if (saved != nullptr) setenv("TZ", before.c_str(), 1);
}

TEST(TimeZoneTest, IanaZoneFollowsDaylightSavingTime) {
  if (!std::ifstream("/usr/share/zoneinfo/Europe/Berlin")) GTEST_SKIP() << "no tz database";
  const auto berlin = TimeZone::Parse("Europe/Berlin");
  ASSERT_TRUE(berlin.ok()) << berlin.error().message();
  // 2026-01-15T12:00Z (1,768,478,400 s): CET, +1 hour. 2026-07-15T12:00Z
  // (1,784,116,800 s): CEST, +2 hours. EU summer time 2026 starts 29 March 01:00Z.
  EXPECT_EQ(berlin->OffsetAt(1'768'478'400), 3'600);
  EXPECT_EQ(berlin->OffsetAt(1'784'116'800), 7'200);
  // 2026-07-15T22:30Z is the 16th in Berlin (00:30 CEST).
  EXPECT_EQ(berlin->Date((1'784'116'800LL + 10 * 3'600 + 1'800) * 1'000'000'000), "2026-07-16");
}

TEST(BillTest, CodexCallsUseTheTurnContextModel) {
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/codex_small.jsonl");
  UsageLog log;
  ASSERT_TRUE(ReadUsageLog(in, "codex_small.jsonl", &log).ok());
  const Bill bill = MakeOrDie(log);
  ASSERT_EQ(bill.sessions.size(), 2u);
  const GroupBill& s1 = bill.sessions[0];
  EXPECT_EQ(s1.id, "019a-s1");
  EXPECT_EQ(s1.calls, 3);  // the repeated token_count counts once
  // gpt-5-codex ($1.25 input, $0.125 cached, $10 output per Mtok), three calls:
  //   uncached 12,000 + 596 + 32 = 12,628; cached 11,904 + 3,968 = 15,872; output 530
  //   12,628 x 1.25 + 15,872 x 0.125 + 530 x 10 = 15,785 + 1,984 + 5,300 = 23,069 micro-dollars.
  EXPECT_EQ(s1.cost.pico_usd, 23'069'000'000);
  EXPECT_EQ(s1.project, "/work");  // session_meta's cwd
  // The second session names no model: priced as gpt-5, the legacy
  // fallback, and marked.
  const ModelBill& assumed = bill.sessions[1].by_model.at("gpt-5");
  EXPECT_EQ(assumed.assumed_model_calls, 1);
  EXPECT_EQ(bill.sessions[1].unpriced_calls, 0);
}

TEST(BillUsageLogTest, ErrorsNameTheFileAndLine) {
  UsageLog log;
  std::istringstream bad_usage(
      "{\"type\":\"user\"}\n"
      R"({"type":"assistant","sessionId":"s","message":{"id":"m","model":"x","usage":{"input_tokens":-5,"output_tokens":1}}})");
  EXPECT_EQ(ReadUsageLog(bad_usage, "log.jsonl", &log).error().message(),
            "log.jsonl:2: message.usage: \"input_tokens\" must be a non-negative integer, got -5");
  std::istringstream bad_json("{\"type\":\"assistant\"\n");
  EXPECT_EQ(ReadUsageLog(bad_json, "log.jsonl", &log).error().message(),
            "log.jsonl:1: truncated JSON");
  std::istringstream too_many_1h(
      R"({"type":"assistant","message":{"id":"m","usage":{"input_tokens":0,"cache_creation_input_tokens":5,"output_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":9}}}})");
  EXPECT_EQ(ReadUsageLog(too_many_1h, "log.jsonl", &log).error().message(),
            "log.jsonl:1: message.usage: 1-hour cache writes 9 exceed "
            "\"cache_creation_input_tokens\" 5");
}

TEST(BillUsageLogTest, ReadsTheJsonArrayCopy) {
  UsageLog log;
  std::istringstream in(
      "[" +
      Assistant("s", "m1", "claude-opus-4-1-20250805", "2025-08-07T03:32:45Z", 4, 20000, 0, 8) +
      "," + R"({"type":"user","message":{"role":"user","content":"hi"}}])");
  ASSERT_TRUE(ReadUsageLog(in, "chat.json", &log).ok());
  ASSERT_EQ(log.calls.size(), 1u);
  EXPECT_EQ(log.calls[0].where, "chat.json: element 1");
  EXPECT_EQ(log.calls[0].usage.cache_write_5m, 20000);
}

// Anthropic's pricing page: US-only inference (inference_geo "us") is 1.1x
// every rate of Claude 4.6 and later models, on top of fast mode; earlier
// models always bill standard. Opus 4.6's call of the fast-mode test below,
// $0.0315 standard: 1.1 x 31,500 = 34,650 micro-dollars with "us";
// 1.1 x 6 x 31,500 = 207,900 fast and "us". Sonnet 4.5 (no multiplier):
// 1,000 x $3 + 2,000 x $3.75 + 3,000 x $0.30 + 500 x $15 = 18,900 either way.
TEST(BillTest, UsOnlyInferenceIsElevenTenthsOfEveryRate) {
  const auto line = [](const std::string& id, const std::string& model, const std::string& extra) {
    return R"({"type":"assistant","sessionId":"s","message":{"id":")" + id + R"(","model":")" +
           model +
           R"(","usage":{"input_tokens":1000,"cache_creation_input_tokens":2000,"cache_read_input_tokens":3000,"output_tokens":500)" +
           extra + "}}}\n";
  };
  const Bill bill =
      MakeOrDie(Read(line("a", "claude-opus-4-6", R"(,"inference_geo":"us")") +
                     line("b", "claude-opus-4-6", R"(,"inference_geo":"global")") +
                     line("c", "claude-opus-4-6", R"(,"inference_geo":"not_available")") +
                     line("d", "claude-opus-4-6", R"(,"inference_geo":"us","speed":"fast")") +
                     line("e", "claude-sonnet-4-5", R"(,"inference_geo":"us")") +
                     line("f", "claude-opus-4-6", R"(,"inference_geo":null)")));
  EXPECT_EQ(bill.calls[0].cost.cost.pico_usd, 34'650'000'000);
  EXPECT_EQ(bill.calls[1].cost.cost.pico_usd, 31'500'000'000);
  EXPECT_EQ(bill.calls[2].cost.cost.pico_usd, 31'500'000'000);
  EXPECT_EQ(bill.calls[3].cost.cost.pico_usd, 207'900'000'000);
  EXPECT_EQ(bill.calls[4].cost.cost.pico_usd, 18'900'000'000);
  EXPECT_EQ(bill.calls[5].cost.cost.pico_usd, 31'500'000'000);
  // A region kvbill has no price rule for is an error naming the line, on
  // the fast path and the DOM path alike (a line with an escape takes the DOM).
  for (const std::string& geo : {std::string(R"("eu")"), std::string(R"("e\u0075")")}) {
    UsageLog log;
    std::istringstream eu(line("g", "claude-opus-4-6", ",\"inference_geo\":" + geo));
    const auto read = ReadUsageLog(eu, "log.jsonl", &log);
    ASSERT_FALSE(read.ok()) << geo;
    EXPECT_EQ(read.error().message(),
              "log.jsonl:1: message.usage: \"inference_geo\" must be \"global\", \"us\" or "
              "\"not_available\", got \"eu\"")
        << geo;
  }
  // The LiteLLM sheet's provider_specific_entry.us, and the rates scaled.
  auto sheet = ParsePriceSheet(R"({"claude-x": {"litellm_provider": "anthropic",
      "input_cost_per_token": 5e-6, "output_cost_per_token": 2.5e-5,
      "provider_specific_entry": {"us": 1.1}}})",
                               "sheet.json");
  ASSERT_TRUE(sheet.ok()) << sheet.error().message();
  const ModelPrice us = UsOnlyPrice(*sheet->Find("claude-x")).value();
  EXPECT_EQ(us.base.input, 5'500'000);  // 1.1 x $5 per Mtok, pico-dollars a token
  EXPECT_EQ(us.base.output, 27'500'000);
  EXPECT_EQ(us.base.cache_read, 550'000);
  // Stacked multipliers past $1,000 a token are an error, not an int64
  // overflow: $1 a token (10^12 pico-dollars) x 1000 fast = $1,000, the
  // most; x 1000 US-only more would be 10^18.
  ModelPrice steep;
  steep.id = "steep";
  steep.base.input = 1'000'000'000'000;
  steep.fast_multiplier = 1000;
  steep.us_multiplier = 1000;
  const auto fast = FastModePrice(steep);
  ASSERT_TRUE(fast.ok());
  EXPECT_EQ(fast->base.input, 1'000'000'000'000'000);
  EXPECT_EQ(UsOnlyPrice(*fast).error().message(),
            "model \"steep\": its US-only rate is above $1,000 a token (a multiplier too large)");
}

TEST(BillTest, FastModeOpus46IsSixTimesEveryRate) {
  // Opus 4.6: 1,000 input x $5 + 2,000 written x $6.25 + 3,000 read x $0.50
  // + 500 output x $25 per Mtok = 5,000 + 12,500 + 1,500 + 12,500 = 31,500
  // micro-dollars; fast (Anthropic: 6x every rate) 189,000.
  const auto line = [](const std::string& id, const std::string& speed) {
    return R"({"type":"assistant","sessionId":"s","message":{"id":")" + id +
           R"(","model":"claude-opus-4-6","usage":{"input_tokens":1000,"cache_creation_input_tokens":2000,"cache_read_input_tokens":3000,"output_tokens":500)" +
           (speed.empty() ? "" : R"(,"speed":")" + speed + "\"") + "}}}\n";
  };
  const Bill bill = MakeOrDie(Read(line("a", "") + line("b", "standard") + line("c", "fast")));
  EXPECT_EQ(bill.calls[0].cost.cost.pico_usd, 31'500'000'000);
  EXPECT_EQ(bill.calls[1].cost.cost.pico_usd, 31'500'000'000);
  EXPECT_EQ(bill.calls[2].cost.cost.pico_usd, 189'000'000'000);
  EXPECT_EQ(bill.total.by_model.at("claude-opus-4-6").calls, 2);
  EXPECT_EQ(bill.total.by_model.at("claude-opus-4-6-fast").calls, 1);
  // The fast tier of a model with a long-context tier: both tiers scale.
  ModelPrice sonnet = *Sheet().Find("claude-sonnet-4-5");
  sonnet.fast_multiplier = 2;
  const auto fast = FastModePrice(sonnet);
  ASSERT_TRUE(fast.ok());
  EXPECT_EQ(fast->base.input, 6'000'000);            // 2 x $3
  EXPECT_EQ(fast->long_context.output, 45'000'000);  // 2 x $22.50
  sonnet.fast_multiplier = 0;
  EXPECT_EQ(FastModePrice(sonnet).error().message(),
            "model \"claude-sonnet-4-5\" has no fast-mode price (fast_multiplier)");
  // A speed kvbill has no price rule for is an error naming the line.
  UsageLog log;
  std::istringstream turbo(line("d", "turbo"));
  EXPECT_EQ(ReadUsageLog(turbo, "log.jsonl", &log).error().message(),
            "log.jsonl:1: message.usage: \"speed\" must be \"standard\" or \"fast\", got "
            "\"turbo\"");
}

TEST(BillTest, SessionsKeepTheirFirstProjectAndLastActivity) {
  const std::string text =
      R"({"type":"assistant","sessionId":"s","cwd":"/a","timestamp":"2026-01-02T10:00:00Z","message":{"id":"1","model":"claude-haiku-4-5","usage":{"input_tokens":1,"output_tokens":1}}})"
      "\n"
      R"({"type":"assistant","sessionId":"s","cwd":"/a/sub","timestamp":"2026-01-03T09:00:00Z","message":{"id":"2","model":"claude-haiku-4-5","usage":{"input_tokens":1,"output_tokens":1}}})"
      "\n"
      R"({"type":"assistant","sessionId":"t","timestamp":"2026-01-01T09:00:00Z","message":{"id":"3","model":"claude-haiku-4-5","usage":{"input_tokens":1,"output_tokens":1}}})"
      "\n";
  const UsageLog log = Read(text);
  EXPECT_EQ(log.projects, (std::vector<std::string>{"/a", "/a/sub"}));
  const Bill bill = MakeOrDie(log);
  ASSERT_EQ(bill.sessions.size(), 2u);
  EXPECT_EQ(bill.sessions[0].project, "/a");
  EXPECT_EQ(UtcTime(*bill.sessions[0].last_ns), "2026-01-03T09:00:00Z");
  EXPECT_EQ(bill.sessions[1].project, "");
}

TEST(BillTest, BlocksFollowCcusagesRule) {
  // 09:45 starts a block at 09:00; 14:00 is exactly 5 hours after it (not
  // more): the same block; 14:00:01 is past 5 hours from 09:00: a new block
  // at 14:00; 19:00:01 is 5 hours and 1 s after the previous call: another,
  // at 19:00. A call without a timestamp is in the block "unknown", last.
  std::string text;
  int id = 0;
  for (const char* time : {"2026-01-05T09:45:00Z", "2026-01-05T14:00:00Z", "2026-01-05T14:00:01Z",
                           "2026-01-05T19:00:02Z", ""}) {
    text += R"({"type":"assistant","sessionId":"s",)" +
            (*time != 0 ? R"("timestamp":")" + std::string(time) + "\"," : std::string()) +
            R"("message":{"id":")" + std::to_string(++id) +
            R"(","model":"claude-haiku-4-5","usage":{"input_tokens":1000,"output_tokens":0}}})" +
            "\n";
  }
  BillOptions options;
  options.blocks = true;
  const Bill bill = MakeOrDie(Read(text), options);
  std::vector<std::string> ids;
  for (const GroupBill& b : bill.blocks) ids.push_back(b.id + "/" + std::to_string(b.calls));
  EXPECT_EQ(ids, (std::vector<std::string>{"2026-01-05T09:00:00Z/2", "2026-01-05T14:00:00Z/1",
                                           "2026-01-05T19:00:00Z/1", "unknown/1"}));
  EXPECT_EQ(UtcTime(*bill.blocks[0].last_ns), "2026-01-05T14:00:00Z");
  // Haiku 4.5, 1,000 input x $1 per Mtok a call: the blocks add up to the total.
  Money sum;
  for (const GroupBill& b : bill.blocks) ASSERT_TRUE(AddMoney(b.cost, &sum));
  EXPECT_EQ(sum, bill.total.cost);
  EXPECT_EQ(sum.pico_usd, 5'000'000'000);
}

TEST(BillTest, WeekOfAndUtcTime) {
  // 2024-01-15 was a Monday: its week starts Sunday the 14th, or Monday the
  // 15th, or Saturday the 13th.
  EXPECT_EQ(WeekOf("2024-01-15", 0), "2024-01-14");
  EXPECT_EQ(WeekOf("2024-01-15", 1), "2024-01-15");
  EXPECT_EQ(WeekOf("2024-01-15", 6), "2024-01-13");
  EXPECT_EQ(WeekOf("2024-03-01", 0), "2024-02-25");  // across a leap February
  EXPECT_EQ(UtcTime(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(UtcTime(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(UtcTime(1'704'067'200'500'000'000), "2024-01-01T00:00:00Z");
}

TEST(BillUsageLogTest, LinesWithoutATypeAreCalls) {
  // Older Claude Code lines: no "type" (or null), the call's costUSD beside
  // its usage; the fast path and the DOM path (a JSON array) agree.
  const std::string lines[] = {
      R"({"timestamp":"2024-01-01T12:00:00Z","costUSD":0.25,"message":{"usage":{"input_tokens":100,"output_tokens":50}}})",
      R"({"type":null,"message":{"id":"n","model":"claude-haiku-4-5","usage":{"input_tokens":3,"output_tokens":4}}})"};
  UsageLog jsonl = Read(lines[0] + "\n" + lines[1] + "\n");
  UsageLog array = Read("[" + lines[0] + "," + lines[1] + "]", "chat.json");
  for (const UsageLog* log : {&jsonl, &array}) {
    ASSERT_EQ(log->calls.size(), 2u);
    EXPECT_EQ(log->calls[0].recorded_cost, Money{250'000'000'000});  // $0.25
    EXPECT_EQ(log->calls[0].model, "unknown");
    EXPECT_EQ(log->calls[1].model, "claude-haiku-4-5");
    EXPECT_FALSE(log->calls[1].recorded_cost.has_value());
  }
}

TEST(BillUsageLogTest, CodexTotalsOnly) {
  // Totals only: 1,000 prompt (200 cached) then 2,500 (700 cached): the
  // second call is 1,500 prompt of which 500 cached. Totals going down are
  // an error naming the line. Some Codex versions call the cached count
  // cache_read_input_tokens.
  const auto event = [](int input, int cached, int output, const char* cached_key) {
    return R"({"timestamp":"2025-09-11T18:25:40Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":)" +
           std::to_string(input) + R"(,")" + cached_key + R"(":)" + std::to_string(cached) +
           R"(,"output_tokens":)" + std::to_string(output) + "}}}}\n";
  };
  UsageLog log;
  std::istringstream ok(event(1000, 200, 10, "cached_input_tokens") +
                        event(2500, 700, 30, "cache_read_input_tokens"));
  ASSERT_TRUE(ReadUsageLog(ok, "rollout-x.jsonl", &log).ok());
  ASSERT_EQ(log.calls.size(), 2u);
  EXPECT_EQ(log.calls[1].usage, (CallUsage{.input = 1000, .cache_read = 500, .output = 20}));
  EXPECT_EQ(log.calls[1].session, "rollout-x");
  std::istringstream down(event(2500, 700, 30, "cached_input_tokens") +
                          event(1000, 200, 40, "cached_input_tokens"));
  EXPECT_EQ(ReadUsageLog(down, "r.jsonl", &log).error().message(),
            "r.jsonl:2: payload.info.total_token_usage: below the previous event's (input 2500 -> "
            "1000, cached 700 -> 200, output 30 -> 40)");
  std::istringstream neither(
      R"({"type":"event_msg","payload":{"type":"token_count","info":{"rate":1}}})");
  EXPECT_EQ(ReadUsageLog(neither, "r.jsonl", &log).error().message(),
            "r.jsonl:1: payload.info: neither \"last_token_usage\" nor \"total_token_usage\"");
}

#ifdef KVBILL_SHARED_DATA_DIR
// The acceptance check of docs/billing.md on the 48 headless runs: pricing
// each run's reported per-model usage reproduces every model's costUSD and
// the run's total_cost_usd; where a model's call lines add up to its
// reported usage, pricing the calls reproduces its cost.
TEST(BillAcceptanceTest, HeadlessRunsReproduceTheProvidersCosts) {
  const std::string path =
      std::string(KVBILL_SHARED_DATA_DIR) + "/acceptance/claude-code-headless/runs.jsonl";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "shared data not present: " << path;
  UsageLog log;
  ASSERT_TRUE(ReadUsageLog(in, path, &log).ok());
  const Bill bill = MakeOrDie(log);
  constexpr double kTolerance = 1e-9;  // the provider sums doubles
  int runs = 0, runs_matched = 0, complete = 0, complete_matched = 0;
  for (const GroupBill& run : bill.sessions) {
    if (!run.reported_cost_usd) continue;
    ++runs;
    bool matched = run.reported_usage_cost &&
                   std::abs(run.reported_usage_cost->usd() - *run.reported_cost_usd) < kTolerance;
    for (const auto& [model, m] : run.by_model) {
      ASSERT_TRUE(m.reported_usage_cost) << run.id << " " << model;
      matched =
          matched && std::abs(m.reported_usage_cost->usd() - *m.reported_cost_usd) < kTolerance;
      if (m.calls > 0 && m.usage == *m.reported_usage) {
        ++complete;
        const bool same = std::abs(m.cost.usd() - *m.reported_cost_usd) < kTolerance;
        complete_matched += same ? 1 : 0;
        EXPECT_TRUE(same) << run.id << " " << model;
      }
    }
    EXPECT_TRUE(matched) << run.id;
    runs_matched += matched ? 1 : 0;
  }
  EXPECT_EQ(runs, 48);
  EXPECT_EQ(runs_matched, 48);
  EXPECT_EQ(complete, 30);
  EXPECT_EQ(complete_matched, 30);
}
#endif

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
