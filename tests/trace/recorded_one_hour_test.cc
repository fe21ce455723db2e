// The 1-hour part of a call's recorded cache writes (RecordedUsage::
// cache_creation_1h): read from Claude Code logs as `kvbill bill` reads it,
// and kept by the native format (docs/trace-format.md#turn).
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kvbill/trace/importers.h"
#include "kvbill/trace/reader.h"
#include "kvbill/trace/writer.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::TraceFixture;

std::vector<Task> ReadClaude(const std::string& text, std::string* error) {
  auto reader = NewClaudeCodeReader(std::make_unique<std::istringstream>(text), "h.jsonl", {});
  return ReadAllTasks(reader.get(), error);
}

std::vector<Task> ReadNative(const std::string& text, std::string* error) {
  auto reader = NewNativeReader(std::make_unique<std::istringstream>(text), "n.jsonl", {});
  return ReadAllTasks(reader.get(), error);
}

// A Claude Code assistant line with `usage` as given.
std::string ClaudeLine(const std::string& usage) {
  return R"({"type":"assistant","sessionId":"s","timestamp":"2026-11-02T10:00:00Z",)"
         R"("message":{"id":"m","model":"claude-opus-4-5","usage":)" +
         usage + "}}\n";
}

// tests/data/traces/claude_code_1h.jsonl: h1 writes 30,000 of which 10,000
// for 1 hour (cache_creation.ephemeral_1h_input_tokens; logged twice, the
// first copy a streaming placeholder), h2 writes 2,000 for 5 minutes, h3
// writes 36,000 for 1 hour (ephemeral_1h_input_tokens directly in usage).
TEST(RecordedOneHourTest, ClaudeCodeImporterKeepsTheOneHourWrites) {
  std::string error;
  auto reader = OpenTrace(TraceFixture("claude_code_1h.jsonl"), std::nullopt);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  const std::vector<Task> tasks = ReadAllTasks(reader->get(), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_EQ(tasks[0].turns.size(), 3u);
  EXPECT_EQ(tasks[0].turns[0].usage, (RecordedUsage{.input = 10,
                                                    .cache_creation = 30'000,
                                                    .cache_read = 0,
                                                    .output = 500,
                                                    .cache_creation_1h = 10'000}));
  EXPECT_EQ(tasks[0].turns[1].usage, (RecordedUsage{8, 2'000, 30'010, 300}));
  EXPECT_EQ(tasks[0].turns[2].usage, (RecordedUsage{.input = 6,
                                                    .cache_creation = 36'000,
                                                    .cache_read = 0,
                                                    .output = 100,
                                                    .cache_creation_1h = 36'000}));
  // The 1-hour writes are part of cache_creation: the prompts are unchanged.
  EXPECT_EQ(PromptTokens(tasks[0]), (std::vector<Tokens>{30'010, 32'018, 36'006}));
}

TEST(RecordedOneHourTest, NestedOneHourCountWinsOverTheDirectKey) {
  // As `kvbill bill` reads it (src/bill/usage_log.cc): the nested count when
  // present, else the direct key; a null nested count falls back.
  std::string error;
  auto tasks = ReadClaude(
      ClaudeLine(
          R"({"input_tokens":1,"cache_creation_input_tokens":9,"output_tokens":2,)"
          R"("ephemeral_1h_input_tokens":7,"cache_creation":{"ephemeral_1h_input_tokens":4}})"),
      &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(tasks.at(0).turns.at(0).usage->cache_creation_1h, 4);
  tasks = ReadClaude(
      ClaudeLine(
          R"({"input_tokens":1,"cache_creation_input_tokens":9,"output_tokens":2,)"
          R"("ephemeral_1h_input_tokens":7,"cache_creation":{"ephemeral_1h_input_tokens":null}})"),
      &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(tasks.at(0).turns.at(0).usage->cache_creation_1h, 7);
}

TEST(RecordedOneHourTest, MoreOneHourWritesThanWritesIsAnError) {
  std::string error;
  ReadClaude(ClaudeLine(R"({"input_tokens":1,"cache_creation_input_tokens":5,"output_tokens":2,)"
                        R"("cache_creation":{"ephemeral_1h_input_tokens":9}})"),
             &error);
  EXPECT_EQ(error,
            "h.jsonl:1: usage: 1-hour cache writes 9 exceed \"cache_creation_input_tokens\" 5");
  ReadClaude(ClaudeLine(R"({"input_tokens":1,"output_tokens":2,"ephemeral_1h_input_tokens":-3})"),
             &error);
  EXPECT_NE(error.find("h.jsonl:1: usage: \"ephemeral_1h_input_tokens\""), std::string::npos)
      << error;
}

// The 1-hour split alone, without "cache_creation_input_tokens": the 1-hour
// writes are all that is known written (it read as writes of 0, exceeded by
// their own 1-hour share).
TEST(RecordedOneHourTest, TheOneHourSplitAloneIsTheWrites) {
  std::string error;
  auto tasks = ReadClaude(ClaudeLine(R"({"input_tokens":1,"output_tokens":2,)"
                                     R"("cache_creation":{"ephemeral_1h_input_tokens":200}})"),
                          &error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(tasks.at(0).turns.at(0).usage->cache_creation, 200);
  EXPECT_EQ(tasks.at(0).turns.at(0).usage->cache_creation_1h, 200);
}

TEST(RecordedOneHourTest, NativeFormatRoundTripsTheOneHourWrites) {
  Task task;
  task.id = "a";
  Turn turn;
  turn.spans.push_back(Span{SpanKind::kUser, 30'010, std::nullopt});
  turn.output = 500;
  turn.usage = RecordedUsage{.input = 10,
                             .cache_creation = 30'000,
                             .cache_read = 0,
                             .output = 500,
                             .cache_creation_1h = 10'000};
  task.turns.push_back(turn);
  turn.usage->cache_creation_1h = 0;  // written without the field
  task.turns.push_back(turn);
  std::ostringstream out;
  TraceWriter writer(&out);
  ASSERT_TRUE(writer.Write(task).ok());
  const std::string text = out.str();
  EXPECT_NE(text.find(R"("usage":{"input":10,"cache_creation":30000,"cache_read":0,)"
                      R"("output":500,"cache_creation_1h":10000})"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"("usage":{"input":10,"cache_creation":30000,"cache_read":0,)"
                      R"("output":500}})"),
            std::string::npos)
      << text;
  std::string error;
  const std::vector<Task> back = ReadNative(text, &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0], task);
}

TEST(RecordedOneHourTest, NativeOneHourWritesAboveTheWritesIsAnError) {
  std::string error;
  ReadNative(
      "{\"kvbill_trace\":1}\n"
      R"({"id":"a","turns":[{"spans":[{"kind":"user","tokens":20}],"out":1,)"
      R"("usage":{"input":10,"cache_creation":5,"cache_read":5,"output":1,"cache_creation_1h":6}}]})"
      "\n",
      &error);
  EXPECT_EQ(error,
            "n.jsonl:2: task \"a\": turn 1: usage: \"cache_creation_1h\" 6 exceeds "
            "\"cache_creation\" 5");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
