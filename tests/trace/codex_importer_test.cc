#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "kvbill/bill/usage_log.h"
#include "kvbill/trace/importers.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::TraceFixture;

std::unique_ptr<TraceReader> Inline(const std::string& text, ReaderOptions options = {}) {
  return NewCodexReader(std::make_unique<std::istringstream>(text), "mem.jsonl", options);
}

// A token_count line at `time` with the given last and running-total usage
// (input, cached input, output, reasoning output).
std::string TokenCount(const std::string& time, const std::string& last, const std::string& total) {
  return R"({"timestamp":")" + time + R"(","type":"event_msg","payload":{"type":"token_count",)" +
         R"("info":{"total_token_usage":)" + total + R"(,"last_token_usage":)" + last + "}}}\n";
}

std::string Usage(int input, int cached, int output, int reasoning) {
  return R"({"input_tokens":)" + std::to_string(input) + R"(,"cached_input_tokens":)" +
         std::to_string(cached) + R"(,"output_tokens":)" + std::to_string(output) +
         R"(,"reasoning_output_tokens":)" + std::to_string(reasoning) + R"(,"total_tokens":)" +
         std::to_string(input + output) + "}";
}

// tests/data/traces/codex_small.jsonl, worked by hand (times after 21:55:50):
//   session 019a-s1: a rate-limit-only event (info null) and a repeated
//   event with unchanged totals are not calls. Calls:
//     6.5 s:  input 12000, cached 0, out 300 (100 reasoning)
//             -> one other span of 12000.
//     14 s:   input 12500, cached 11904, out 150
//             -> +500: assistant 300 - 100 = 200, other 300.
//     20.25 s: input 4000, cached 3968, out 80: the prompt shrank (compaction)
//             -> keep 3968, other 32.
//   session 019a-s2 at 70 s: one call at 72 s, input 9000, out 40.
TEST(TraceCodexImporterTest, RolloutBecomesOneTaskPerSessionWithUsage) {
  const std::string path = TraceFixture("codex_small.jsonl");
  auto reader = OpenTrace(path, std::nullopt);  // detected from the content
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader->get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 2u);

  const Task& first = tasks[0];
  EXPECT_EQ(first.id, "019a-s1");
  EXPECT_EQ(first.arrival_s, 0);
  ASSERT_EQ(first.turns.size(), 3u);
  EXPECT_EQ(PromptTokens(first), (std::vector<Tokens>{12000, 12500, 4000}));
  EXPECT_EQ(first.turns[0].spans, (std::vector<Span>{{SpanKind::kOther, 12000, std::nullopt}}));
  EXPECT_EQ(first.turns[1].spans, (std::vector<Span>{{SpanKind::kAssistant, 200, std::nullopt},
                                                     {SpanKind::kOther, 300, std::nullopt}}));
  EXPECT_EQ(first.turns[2].keep, 3968);
  EXPECT_EQ(first.turns[2].spans, (std::vector<Span>{{SpanKind::kOther, 32, std::nullopt}}));
  EXPECT_EQ(first.turns[0].time_s, 6.5);
  EXPECT_EQ(first.turns[0].tool_s, 7.5);   // 14 - 6.5
  EXPECT_EQ(first.turns[1].tool_s, 6.25);  // 20.25 - 14
  EXPECT_EQ(first.turns[2].tool_s, 0);
  EXPECT_EQ(first.turns[1].output, 150);
  // input excludes the cached tokens; no cache writes are reported.
  EXPECT_EQ(first.turns[1].usage, (RecordedUsage{596, 0, 11904, 150}));
  for (std::size_t k = 0; k < first.turns.size(); ++k) {
    EXPECT_EQ(first.turns[k].usage->prompt(), PromptTokens(first)[k]) << k;
  }

  const Task& second = tasks[1];
  EXPECT_EQ(second.id, "019a-s2");
  EXPECT_EQ(second.arrival_s, 70);
  ASSERT_EQ(second.turns.size(), 1u);
  EXPECT_EQ(second.turns[0].time_s, 72);
  EXPECT_EQ(second.turns[0].usage, (RecordedUsage{9000, 0, 0, 40}));
  // Models: the first session's turn context names gpt-5-codex; the second
  // session names none, and does not inherit the first's (kvbill bill
  // prices it as its legacy gpt-5, marked assumed).
  for (const Turn& t : first.turns) EXPECT_EQ(t.model, "gpt-5-codex");
  EXPECT_EQ(second.turns[0].model, "");
}

// Some Codex versions spell the cached count "cache_read_input_tokens"
// (docs/billing.md#logs). Two calls, the second's usage
// {input 12500, cache_read_input_tokens 11904, output 150}:
//   input = 12500 - 11904 = 596, cache_read = 11904, output = 150,
// and `kvbill bill` reads the same numbers from the same lines (until
// 2026-12 the importer read 0 cached: input 12500, cache_read 0).
TEST(TraceCodexImporterTest, ReadsTheCachedCountUnderEitherNameAsBillDoes) {
  const std::string alias = R"({"input_tokens":12500,"cache_read_input_tokens":11904,)"
                            R"("output_tokens":150})";
  const std::string text =
      TokenCount("2025-01-01T00:00:00Z", Usage(12000, 0, 300, 100), Usage(12000, 0, 300, 100)) +
      TokenCount("2025-01-01T00:00:08Z", alias,
                 R"({"input_tokens":24500,"cache_read_input_tokens":11904,"output_tokens":450})");
  auto reader = Inline(text);
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_EQ(tasks[0].turns.size(), 2u);
  EXPECT_EQ(tasks[0].turns[1].usage, (RecordedUsage{596, 0, 11904, 150}));
  // Prompt 12500 after 12000: +500, the previous visible answer 300 - 100 =
  // 200 as assistant, 300 other.
  EXPECT_EQ(tasks[0].turns[1].spans, (std::vector<Span>{{SpanKind::kAssistant, 200, std::nullopt},
                                                        {SpanKind::kOther, 300, std::nullopt}}));

  std::istringstream in(text);
  UsageLog log;
  ASSERT_TRUE(ReadUsageLog(in, "mem.jsonl", &log).ok());
  ASSERT_EQ(log.calls.size(), 2u);
  EXPECT_EQ(log.calls[1].usage.input, 596);
  EXPECT_EQ(log.calls[1].usage.cache_read, 11904);
  EXPECT_EQ(log.calls[1].usage.output, 150);

  // The error names the key as spelled.
  auto over = Inline(TokenCount("2025-01-01T00:00:00Z",
                                R"({"input_tokens":100,"cache_read_input_tokens":200,)"
                                R"("output_tokens":5})",
                                Usage(100, 0, 5, 0)));
  ReadAllTasks(over.get(), &error);
  EXPECT_EQ(error,
            "mem.jsonl:1: payload.info: last_token_usage: \"cache_read_input_tokens\" 200 "
            "exceeds \"input_tokens\" 100");
}

// A token_count with only the running totals (older rollouts), as `kvbill
// bill` reads it (docs/billing.md#logs): each call is the difference from
// the previous event's totals. Totals (input, cached, output, reasoning):
//   (12000, 0, 300, 100)      -> call 1 = the same: prompt 12000, out 300.
//   (12000, 0, 300, 100) again -> Codex's rate-limit repeat: no call.
//   (24500, 11904, 450, 100)  -> call 2 = (12500, 11904, 150, 0):
//      usage {12500 - 11904 = 596, 0, 11904, 150}; +500 over 12000:
//      assistant 300 - 100 = 200, other 300.
// Until 2026-12 the importer refused these events ("missing
// \"last_token_usage\" object") while bill priced them.
TEST(TraceCodexImporterTest, TotalsOnlyEventsAreCallsByDifferencesAsBillReadsThem) {
  const auto totals = [](const std::string& time, const std::string& total) {
    return R"({"timestamp":")" + time + R"(","type":"event_msg","payload":{"type":"token_count",)" +
           R"("info":{"total_token_usage":)" + total + "}}}\n";
  };
  const std::string text = totals("2025-01-01T00:00:06Z", Usage(12000, 0, 300, 100)) +
                           totals("2025-01-01T00:00:07Z", Usage(12000, 0, 300, 100)) +
                           totals("2025-01-01T00:00:14Z", Usage(24500, 11904, 450, 100));
  auto reader = Inline(text);
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_EQ(tasks[0].turns.size(), 2u);
  EXPECT_EQ(PromptTokens(tasks[0]), (std::vector<Tokens>{12000, 12500}));
  EXPECT_EQ(tasks[0].turns[0].usage, (RecordedUsage{12000, 0, 0, 300}));
  EXPECT_EQ(tasks[0].turns[1].usage, (RecordedUsage{596, 0, 11904, 150}));
  EXPECT_EQ(tasks[0].turns[1].spans, (std::vector<Span>{{SpanKind::kAssistant, 200, std::nullopt},
                                                        {SpanKind::kOther, 300, std::nullopt}}));
  EXPECT_EQ(tasks[0].turns[0].tool_s, 8);  // 14 - 6: the repeat at 7 s is no call

  std::istringstream in(text);
  UsageLog log;
  ASSERT_TRUE(ReadUsageLog(in, "mem.jsonl", &log).ok());
  CallUsage sum;
  for (const LoggedCall& c : log.calls) {
    sum.input += c.usage.input;
    sum.cache_read += c.usage.cache_read;
    sum.output += c.usage.output;
  }
  // ReadUsageLog lists the repeat as a call of 0 tokens under call 1's key
  // (the bill counts a key once); the sums are the importer's: input
  // 12000 + 596, cache read 11904, output 300 + 150.
  EXPECT_EQ(sum.input, 12596);
  EXPECT_EQ(sum.cache_read, 11904);
  EXPECT_EQ(sum.output, 450);

  // Totals that go down say nothing about a call: an error, in both readers.
  auto down = Inline(totals("2025-01-01T00:00:06Z", Usage(12000, 0, 300, 100)) +
                     totals("2025-01-01T00:00:14Z", Usage(11000, 0, 400, 100)));
  ReadAllTasks(down.get(), &error);
  EXPECT_EQ(error,
            "mem.jsonl:2: payload.info.total_token_usage: below the previous event's (input "
            "12000 -> 11000, cached 0 -> 0, output 300 -> 400)");
  // Reasoning is part of the output: its total may not grow by more.
  auto reasoning = Inline(totals("2025-01-01T00:00:06Z", Usage(12000, 0, 300, 100)) +
                          totals("2025-01-01T00:00:14Z", Usage(13000, 0, 310, 150)));
  ReadAllTasks(reasoning.get(), &error);
  EXPECT_EQ(error,
            "mem.jsonl:2: payload.info.total_token_usage: \"reasoning_output_tokens\" went "
            "from 100 to 150 while \"output_tokens\" grew by 10");
}

TEST(TraceCodexImporterTest, DetectsRolloutLines) {
  auto format = DetectTraceFormat(
      R"({"timestamp":"2025-11-18T21:55:50.000Z","type":"session_meta","payload":{"id":"x"}})", "f",
      1);
  ASSERT_TRUE(format.ok());
  EXPECT_EQ(*format, TraceFormat::kCodex);
  EXPECT_EQ(TraceFormatName(TraceFormat::kCodex), "codex");
}

TEST(TraceCodexImporterTest, EventsBeforeAnySessionMetaFormAnUnnamedSession) {
  auto reader =
      Inline(TokenCount("2025-01-01T00:00:00Z", Usage(100, 0, 5, 0), Usage(100, 0, 5, 0)));
  const std::vector<Task> tasks = ReadAllTasks(reader.get());
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].id, "session-1");
}

// A resumed Codex thread writes a new rollout whose session_meta keeps the
// thread's id; two segments in one file (concatenated rollouts) would be
// two tasks "s" of one trace, which its own reader refuses (and a
// simulation would share their cache by name), so the second is an error
// naming both session_meta lines.
TEST(TraceCodexImporterTest, ARepeatedSessionIdIsAnErrorNamingBothLines) {
  const std::string meta = R"({"timestamp":"2025-01-01T00:00:00Z","type":"session_meta",)"
                           R"("payload":{"id":"s"}})"
                           "\n";
  auto reader =
      Inline(meta + TokenCount("2025-01-01T00:00:05Z", Usage(100, 0, 5, 0), Usage(100, 0, 5, 0)) +
             meta + TokenCount("2025-01-01T01:00:00Z", Usage(500, 0, 5, 0), Usage(500, 0, 5, 0)));
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(tasks.size(), 1u);
  EXPECT_EQ(error,
            "mem.jsonl:3: task \"s\": repeated task id (first at mem.jsonl:1; ids are unique "
            "within a trace)");
}

TEST(TraceCodexImporterTest, BadLinesNameTheLine) {
  std::string error;
  auto backwards =
      Inline(TokenCount("2025-01-01T00:00:10Z", Usage(100, 0, 5, 0), Usage(100, 0, 5, 0)) +
             TokenCount("2025-01-01T00:00:05Z", Usage(120, 100, 5, 0), Usage(220, 100, 10, 0)));
  ReadAllTasks(backwards.get(), &error);
  EXPECT_EQ(error,
            "mem.jsonl:2: time runs backwards: 2025-01-01T00:00:05Z is before the previous "
            "call's 2025-01-01T00:00:10Z");

  auto cached =
      Inline(TokenCount("2025-01-01T00:00:00Z", Usage(100, 200, 5, 0), Usage(100, 0, 5, 0)));
  ReadAllTasks(cached.get(), &error);
  EXPECT_EQ(error,
            "mem.jsonl:1: payload.info: last_token_usage: \"cached_input_tokens\" 200 exceeds "
            "\"input_tokens\" 100");

  auto negative = Inline(TokenCount("2025-01-01T00:00:00Z", Usage(-5, 0, 5, 0), Usage(1, 0, 5, 0)));
  ReadAllTasks(negative.get(), &error);
  EXPECT_EQ(error,
            "mem.jsonl:1: payload.info: last_token_usage: \"input_tokens\" must be a non-negative "
            "integer, got -5");

  auto truncated =
      Inline(R"({"timestamp":"2025-01-01T00:00:00Z","type":)"
             "\n" +
                 TokenCount("2025-01-01T00:00:01Z", Usage(100, 0, 5, 0), Usage(100, 0, 5, 0)),
             ReaderOptions{.skip_bad = true});
  EXPECT_EQ(ReadAllTasks(truncated.get()).size(), 1u);
  EXPECT_EQ(truncated->bad_lines().count, 1);
  EXPECT_EQ(truncated->bad_lines().first_messages[0], "mem.jsonl:1: truncated JSON");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
