#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "kvbill/trace/importers.h"
#include "trace/open_trace.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::TraceFixture;

std::unique_ptr<TraceReader> Inline(const std::string& text, ReaderOptions options = {}) {
  return NewDynamoReader(std::make_unique<std::istringstream>(text), "mem.jsonl", options);
}

// tests/data/traces/dynamo_small.jsonl, worked by hand (times in ms):
//   session root: r1 (0 ms, 1500 tokens, out 100), r2 (3000 ms, 2000, out 80,
//   delay 400 + tool_wait_ms 1600), r3 (6000 ms, 1200, delay 500), r4
//   (7000 ms, 900, delay 100, prefix_reset true).
//     r2: +500 -> assistant min(100, 500) = 100, other 400.
//     r3: shrank; hash_ids [0,1,5,6] vs [0,1,7] share 2 blocks = 1024 tokens
//         -> keep min(1024, 1200, 2000) = 1024, other 176.
//     r4: prefix_reset -> keep 0, other 900.
//     tool_s: the next row's (delay + tool_wait_ms) / 1000 = 2, 0.5, 0.1, 0.
//   session child: c1 (2500 ms, 600, out 50) waits for r1 -> parent root;
//   its delay 300 is the wait after r1 and is not used. c2 (3100 ms, 700,
//   delay 250.5): +100 -> assistant 50, other 50; c1.tool_s = 0.2505.
TEST(TraceDynamoImporterTest, SessionsBecomeTasksWithWaitsResetsAndBlocks) {
  const std::string path = TraceFixture("dynamo_small.jsonl");
  auto reader = OpenTrace(path, std::nullopt);  // detected from the content
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader->get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 2u);

  const Task& root = tasks[0];
  EXPECT_EQ(root.id, "root");
  EXPECT_EQ(root.parent_id, std::nullopt);
  EXPECT_EQ(root.arrival_s, 0);
  ASSERT_EQ(root.turns.size(), 4u);
  EXPECT_EQ(PromptTokens(root), (std::vector<Tokens>{1500, 2000, 1200, 900}));
  EXPECT_EQ(root.turns[0].keep, std::nullopt);
  EXPECT_EQ(root.turns[1].spans, (std::vector<Span>{{SpanKind::kAssistant, 100, std::nullopt},
                                                    {SpanKind::kOther, 400, std::nullopt}}));
  EXPECT_EQ(root.turns[2].keep, 1024);
  EXPECT_EQ(root.turns[2].spans, (std::vector<Span>{{SpanKind::kOther, 176, std::nullopt}}));
  EXPECT_EQ(root.turns[3].keep, 0);
  EXPECT_EQ(root.turns[3].spans, (std::vector<Span>{{SpanKind::kOther, 900, std::nullopt}}));
  EXPECT_EQ(root.turns[0].tool_s, 2.0);
  EXPECT_EQ(root.turns[1].tool_s, 0.5);
  EXPECT_EQ(root.turns[2].tool_s, 0.1);
  EXPECT_EQ(root.turns[3].tool_s, 0);
  EXPECT_EQ(root.turns[1].time_s, 3.0);
  EXPECT_EQ(root.turns[3].output, 30);
  EXPECT_EQ(root.turns[1].blocks, (BlockHashes{512, {0, 1, 5, 6}}));
  EXPECT_EQ(root.turns[0].usage, std::nullopt);  // rows carry no provider usage

  const Task& child = tasks[1];
  EXPECT_EQ(child.id, "child");
  EXPECT_EQ(child.parent_id, "root");
  EXPECT_EQ(child.arrival_s, 2.5);
  ASSERT_EQ(child.turns.size(), 2u);
  EXPECT_EQ(PromptTokens(child), (std::vector<Tokens>{600, 700}));
  EXPECT_EQ(child.turns[1].spans, (std::vector<Span>{{SpanKind::kAssistant, 50, std::nullopt},
                                                     {SpanKind::kOther, 50, std::nullopt}}));
  EXPECT_EQ(child.turns[0].tool_s, 0.2505);
  EXPECT_EQ(child.turns[1].time_s, 3.1);
}

TEST(TraceDynamoImporterTest, DetectsAgenticRowsApartFromPlainMooncake) {
  const auto detect = [](const std::string& line) { return DetectTraceFormat(line, "f", 1); };
  const std::string plain = R"("input_length":10,"output_length":1,"hash_ids":[0])";
  EXPECT_EQ(*detect("{\"timestamp\":0," + plain + "}"), TraceFormat::kMooncake);
  EXPECT_EQ(*detect(R"({"request_id":"r","timestamp":0,)" + plain + "}"), TraceFormat::kDynamo);
  EXPECT_EQ(*detect(R"({"session_id":"s","timestamp":0,)" + plain + "}"), TraceFormat::kDynamo);
  EXPECT_EQ(*detect(R"({"prefix_reset":false,"delay":5,)" + plain + "}"), TraceFormat::kDynamo);
  EXPECT_EQ(TraceFormatName(TraceFormat::kDynamo), "dynamo");
  EXPECT_EQ(*ParseTraceFormat("dynamo"), TraceFormat::kDynamo);
}

// Rows spelled with the aliases input_tokens / output_tokens and without
// hash_ids are Dynamo rows when a field OpenAI's bare usage objects lack
// says so (until 2026-12 they were read as OpenAI usage: no times, no tool
// waits). Read end to end, the two rows are one session "root": r2's
// (delay 400 + tool_wait_ms 1600) / 1000 = 2 s is r1's tool_s, and r2
// starts at 3000 ms = 3 s.
TEST(TraceDynamoImporterTest, DetectsAliasRowsByAFieldOnlyDynamoHas) {
  const auto detect = [](const std::string& line) { return DetectTraceFormat(line, "f", 1); };
  const std::string r1 =
      R"({"request_id":"r1","session_id":"root","input_tokens":1500,"output_tokens":100,)"
      R"("timestamp":0})";
  const std::string r2 =
      R"({"request_id":"r2","session_id":"root","input_tokens":2000,"output_tokens":80,)"
      R"("timestamp":3000,"delay":400,"tool_wait_ms":1600,"wait_for":["r1"]})";
  EXPECT_EQ(*detect(r1), TraceFormat::kDynamo);
  EXPECT_EQ(*detect(R"({"session_id":"s","input_tokens":10,"output_tokens":1,"delay":5})"),
            TraceFormat::kDynamo);
  // The fields an OpenAI bare usage object shares, and a field Dynamo does
  // not have, stay OpenAI.
  EXPECT_EQ(*detect(R"({"session_id":"s","input_tokens":10,"output_tokens":1})"),
            TraceFormat::kOpenAi);
  EXPECT_EQ(*detect(R"({"session_id":"s","input_tokens":10,"output_tokens":1,"timestamp":0,)"
                    R"("input_tokens_details":{"cached_tokens":0}})"),
            TraceFormat::kOpenAi);

  auto tasks = ReadTraceTasksFrom(std::make_unique<std::istringstream>(r1 + "\n" + r2 + "\n"),
                                  "mem.jsonl", std::nullopt);
  ASSERT_TRUE(tasks.ok()) << tasks.error().message();
  ASSERT_EQ(tasks->size(), 1u);
  const Task& root = (*tasks)[0];
  EXPECT_EQ(root.id, "root");
  ASSERT_EQ(root.turns.size(), 2u);
  EXPECT_EQ(root.turns[0].tool_s, 2);
  EXPECT_EQ(root.turns[1].time_s, 3);
  EXPECT_FALSE(root.turns[0].usage.has_value());  // Dynamo rows carry no provider usage
}

// A row without session_id is a task named by its request_id, which may
// be another row's session: two tasks "x" are an error naming both rows.
TEST(TraceDynamoImporterTest, ARequestIdEqualToASessionIdIsAnError) {
  auto reader = Inline(
      R"({"request_id":"a","session_id":"x","input_length":100,"output_length":1,"timestamp":0})"
      "\n"
      R"({"request_id":"x","input_length":100,"output_length":1,"timestamp":1000})"
      "\n");
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(tasks.size(), 1u);
  EXPECT_EQ(error,
            "mem.jsonl:2: task \"x\": repeated task id (first at mem.jsonl:1; ids are unique "
            "within a trace)");
}

// Rows without session_id are one-turn tasks named by request_id; the
// upstream aliases input_tokens, output_tokens, created_time and delay_ms
// read like the canonical names.
TEST(TraceDynamoImporterTest, ReadsAliasesAndSessionlessRows) {
  auto reader = Inline(
      R"({"request_id":"a","input_tokens":100,"output_tokens":7,"created_time":1000})"
      "\n"
      R"({"request_id":"b","session_id":"s","input_length":10,"output_length":1,"timestamp":0})"
      "\n"
      R"({"request_id":"c","session_id":"s","input_length":30,"output_length":2,"delay_ms":1500})"
      "\n");
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].id, "a");
  EXPECT_EQ(tasks[0].arrival_s, 1.0);
  EXPECT_EQ(PromptTokens(tasks[0]), std::vector<Tokens>{100});
  EXPECT_EQ(tasks[0].turns[0].output, 7);
  EXPECT_EQ(tasks[0].turns[0].blocks, std::nullopt);
  EXPECT_EQ(tasks[1].id, "s");
  EXPECT_EQ(PromptTokens(tasks[1]), (std::vector<Tokens>{10, 30}));
  EXPECT_EQ(tasks[1].turns[0].tool_s, 1.5);
  EXPECT_EQ(tasks[1].turns[1].time_s, std::nullopt);  // later rows may omit the timestamp
}

// Dynamo's rows do not say their block size, and its converter's examples
// use 64: a 1,000-token prompt then has ceil(1,000 / 64) = 16 ids, where
// the 512 assumed gives ceil(1,000 / 512) = 2 blocks. The ids past those 2
// stand for no token of the prompt at 512: dropped, so the turn holds a
// hash for each of its blocks and no more, as ValidateTask requires of
// every task (and `trace convert --to native` writes what it reads back).
TEST(TraceDynamoImporterTest, IdsPastThePromptsBlocksAreDropped) {
  auto reader = Inline(R"({"session_id":"s","input_length":1000,"output_length":1,"timestamp":0,)"
                       R"("hash_ids":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]})"
                       "\n");
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_TRUE(tasks[0].turns[0].blocks.has_value());
  EXPECT_EQ(tasks[0].turns[0].blocks->block_size, 512);
  EXPECT_EQ(tasks[0].turns[0].blocks->hashes, (std::vector<std::uint64_t>{0, 1}));
}

TEST(TraceDynamoImporterTest, BadRowsNameTheLine) {
  const std::string first =
      R"({"request_id":"a","session_id":"s","input_length":10,"output_length":1,"timestamp":1000})"
      "\n";
  const auto error_of = [](const std::string& text) {
    auto reader = Inline(text);
    std::string error;
    ReadAllTasks(reader.get(), &error);
    return error;
  };
  EXPECT_EQ(
      error_of(
          R"({"request_id":"a","input_length":10,"output_length":1,"timestamp":0,"extra":{}})"),
      "mem.jsonl:1: unknown field \"extra\"");
  EXPECT_EQ(
      error_of(first + R"({"session_id":"s","input_length":20,"output_length":1,"delay":-5})"),
      "mem.jsonl:2: \"delay\" must be a non-negative number, got -5");
  EXPECT_EQ(
      error_of(first + R"({"session_id":"s","input_length":20,"output_length":1,"timestamp":500})"),
      "mem.jsonl:2: session \"s\": time runs backwards: 500 ms is before the previous row's "
      "1000 ms");
  EXPECT_EQ(error_of(R"({"session_id":"s","input_length":1,"input_tokens":1,"output_length":1})"),
            "mem.jsonl:1: both \"input_length\" and its alias \"input_tokens\"");
  EXPECT_EQ(error_of(R"({"session_id":"s","input_length":-5,"output_length":1,"timestamp":0})"),
            "mem.jsonl:1: \"input_length\" must be a non-negative integer, got -5");
  EXPECT_EQ(error_of(R"({"session_id":"s","input_length":5,"output_length":1})"),
            "mem.jsonl:1: missing \"timestamp\" on the first row of a session");
  EXPECT_EQ(
      error_of(first + R"({"session_id":"s","input_length":5,"output_length":1,"prefix_reset":1})"),
      "mem.jsonl:2: \"prefix_reset\" must be true or false, got 1");
  EXPECT_EQ(error_of(first + R"({"session_id":"s","input_length":5,"output_length":1,)"
                             R"("wait_for":"a"})"),
            "mem.jsonl:2: \"wait_for\" must be an array of request ids, got \"a\"");
  // 7,322 tokens are 14 full 512-token blocks: 13 hashes cannot name them
  // (a session's later row read so broke ValidateTask; found by fuzzing).
  EXPECT_EQ(error_of(first + R"({"session_id":"s","input_length":7322,"output_length":1,)"
                             R"("hash_ids":[0,1,2,3,4,5,6,7,8,9,10,11,12]})"),
            "mem.jsonl:2: \"hash_ids\" holds 13 block hashes, fewer than the 14 full blocks of "
            "512 tokens of its 7322-token prompt (one hash a block, the prefix through it; the "
            "last, partial block may go without)");
}

// A task no simulation can take is the error of the row at fault, found
// after grouping: the wait before a row is that row's (tool_wait_ms 2e12 ms
// = 2e9 s on line 3 is turn 1's tool_s), an empty prompt its own row's, an
// arrival its session's first row's.
TEST(TraceDynamoImporterTest, TasksASimulationCannotTakeNameTheirRow) {
  const auto error_of = [](const std::string& text) {
    auto reader = Inline(text);
    std::string error;
    ReadAllTasks(reader.get(), &error);
    return error;
  };
  const std::string t = R"({"session_id":"t","input_length":10,"output_length":1,"timestamp":0})"
                        "\n";
  EXPECT_EQ(
      error_of(t + R"({"session_id":"s","input_length":10,"output_length":1,"timestamp":1000})"
                   "\n"
                   R"({"session_id":"s","input_length":20,"output_length":1,"tool_wait_ms":2e12})"
                   "\n"),
      "mem.jsonl:3: task \"s\": turn 1: the tool waits add up to 2e+09 s, beyond the 1e9 s "
      "(31.7 years) a simulation can time");
  EXPECT_EQ(error_of(t + R"({"session_id":"s","input_length":0,"output_length":1,"timestamp":0})"
                         "\n"),
            "mem.jsonl:2: task \"s\": turn 1: an empty prompt (0 tokens; a request sends at least "
            "one)");
  // s starts 2e12 ms = 2e9 s after t.
  EXPECT_EQ(error_of(t + R"({"session_id":"s","input_length":5,"output_length":1,)"
                         R"("timestamp":2e12})"
                         "\n"),
            "mem.jsonl:2: task \"s\": arrives 2e+09 s after task \"t\", beyond the 1e9 s (31.7 "
            "years) a simulation can time");
}

TEST(TraceDynamoImporterTest, SkipBadCountsBadRowsAndKeepsTheRest) {
  auto reader = Inline(R"({"session_id":"s","input_length":10,"output_length":1,"timestamp":1000})"
                       "\n"
                       R"({"session_id":"s","input_length":)"
                       "\n"
                       R"({"session_id":"s","input_length":20,"output_length":1,"timestamp":500})"
                       "\n"
                       R"({"session_id":"s","input_length":30,"output_length":1,"timestamp":2000})"
                       "\n",
                       ReaderOptions{.skip_bad = true});
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(PromptTokens(tasks[0]), (std::vector<Tokens>{10, 30}));  // rows 1 and 4
  EXPECT_EQ(reader->bad_lines().count, 2);
  EXPECT_EQ(reader->bad_lines().first_messages,
            (std::vector<std::string>{"mem.jsonl:2: truncated JSON",
                                      "mem.jsonl:3: session \"s\": time runs backwards: 500 ms "
                                      "is before the previous row's 1000 ms"}));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
