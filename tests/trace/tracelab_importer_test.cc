#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "kvbill/trace/importers.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::TraceFixture;

// The first three rows of TraceLab's example round trace (one Claude session):
//   round 0: input_tokens_total 32272, uncached 2892 + creation 2163 + read 27217, output 931,
//            first timing event 05:40:20.151
//   round 1: 35740 (2 + 6358 + 29380), output 1016, first event 05:40:31.696
//   round 2: 38592 (2 + 2852 + 35738), output 2475, first event 05:41:17.550
TEST(TraceTraceLabImporterTest, RoundTraceRowsBecomeTurnsWithUsageAndTimes) {
  auto reader = OpenTrace(TraceFixture("tracelab_round_small.jsonl"), std::nullopt);
  ASSERT_TRUE(reader.ok());
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader->get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  const Task& task = tasks[0];
  EXPECT_EQ(task.id, "claude:92ee5b8a-429c-e80b-5db6-5381512f4697");
  EXPECT_EQ(PromptTokens(task), (std::vector<Tokens>{32272, 35740, 38592}));
  EXPECT_EQ(task.turns[0].usage, (RecordedUsage{2892, 2163, 27217, 931}));
  EXPECT_EQ(task.turns[2].output, 2475);
  EXPECT_EQ(task.turns[1].time_s, 11.545);
  EXPECT_EQ(task.turns[0].tool_s, 11.545);
  EXPECT_EQ(task.turns[1].tool_s, 45.854);
  EXPECT_EQ(task.turns[2].time_s, 57.399);
  // Each row names claude-opus-4-8, the turn's model for an API replay.
  EXPECT_EQ(task.turns[1].model, "claude-opus-4-8");
  // Round 1 grew by 35740 - 32272 = 3468: round 0's answer (931) fed back,
  // then 2537 of its own; round 2 by 2852: 1016, then 1836.
  EXPECT_EQ(task.turns[1].spans, (std::vector<Span>{Span{SpanKind::kAssistant, 931, std::nullopt},
                                                    Span{SpanKind::kOther, 2537, std::nullopt}}));
  EXPECT_EQ(task.turns[2].spans, (std::vector<Span>{Span{SpanKind::kAssistant, 1016, std::nullopt},
                                                    Span{SpanKind::kOther, 1836, std::nullopt}}));
}

// tracelab_sim_small.csv (TraceLab's multi-session example), session 0:
//   round 0: prefix 0 + input 512 -> prompt 512, output 64, wait 100 ms
//   round 1: prefix 576 (= 512 + the previous 64 output) + 128 -> 704
//   round 2: prefix 768 (= 704 + 64) + 128 -> 896
TEST(TraceTraceLabImporterTest, SimulatorCsvCarriesThePrefixAndTheAnswer) {
  auto reader = OpenTrace(TraceFixture("tracelab_sim_small.csv"), std::nullopt);
  ASSERT_TRUE(reader.ok());
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader->get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(PromptTokens(tasks[0]), (std::vector<Tokens>{512, 704, 896}));
  EXPECT_EQ(tasks[0].turns[1].spans,
            (std::vector<Span>{Span{SpanKind::kAssistant, 64, std::nullopt},
                               Span{SpanKind::kOther, 128, std::nullopt}}));
  EXPECT_EQ(tasks[0].turns[0].tool_s, 0.1);
  EXPECT_EQ(tasks[1].id, "1");
  EXPECT_EQ(tasks[1].arrival_s, 0.2);  // arrival_time 200 ms
}

// A round repeated within a session used to become a second turn: an error
// naming the line, the session and the first row of that round; another
// session may use the same round. With --skip-bad the repeat is dropped.
TEST(TraceTraceLabImporterTest, ARepeatedRoundIsAnErrorNamingTheLineAndSession) {
  const std::string jsonl =
      R"({"session_id":"a","round_index":0,"input_tokens_total":100,"prefix_tokens":0,)"
      R"("output_tokens":5})"
      "\n"
      R"({"session_id":"b","round_index":0,"input_tokens_total":100,"prefix_tokens":0,)"
      R"("output_tokens":5})"
      "\n"
      R"({"session_id":"a","round_index":0,"input_tokens_total":200,"prefix_tokens":100,)"
      R"("output_tokens":5})"
      "\n";
  auto reader = NewTraceLabReader(std::make_unique<std::istringstream>(jsonl), "t.jsonl");
  std::string error;
  ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(error, "t.jsonl:3: session \"a\": round_index 0 appears twice (first on line 1)");

  auto lenient = NewTraceLabReader(std::make_unique<std::istringstream>(jsonl), "t.jsonl",
                                   ReaderOptions{.skip_bad = true});
  const std::vector<Task> tasks = ReadAllTasks(lenient.get());
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(PromptTokens(tasks[0]), std::vector<Tokens>{100});  // session a keeps line 1
  EXPECT_EQ(lenient->bad_lines().count, 1);

  const std::string csv =
      "session_id,arrival_time,round_idx,prefix_len,input_len,output_len,tool_wait_after_ms\n"
      "s1,0,0,0,100,10,500\n"
      "s1,0,1,110,50,10,500\n"
      "s1,0,1,110,60,10,500\n";
  auto csv_reader = NewTraceLabCsvReader(std::make_unique<std::istringstream>(csv), "t.csv");
  ReadAllTasks(csv_reader.get(), &error);
  EXPECT_EQ(error, "t.csv:4: session \"s1\": round_idx 1 appears twice (first on line 3)");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
