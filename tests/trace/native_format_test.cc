// The native trace format: writer and reader round-trip, and the reader's
// errors name the line and field.
#include <gtest/gtest.h>

#include <sstream>

#include "kvbill/trace/reader.h"
#include "kvbill/trace/writer.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::unique_ptr<TraceReader> ReaderOf(const std::string& text, ReaderOptions options = {}) {
  return NewNativeReader(std::make_unique<std::istringstream>(text), "mem.jsonl", options);
}

std::vector<Task> ReadAll(TraceReader* reader) {
  std::vector<Task> tasks;
  Task task;
  while (true) {
    auto more = reader->Next(&task);
    EXPECT_TRUE(more.ok()) << more.error().message();
    if (!more.ok() || !*more) break;
    tasks.push_back(task);
  }
  return tasks;
}

std::string FirstError(const std::string& text) {
  auto reader = ReaderOf(text);
  Task task;
  while (true) {
    auto more = reader->Next(&task);
    if (!more.ok()) return more.error().message();
    if (!*more) return "no error";
  }
}

Task RichTask() {
  Task task;
  task.id = "session-1";
  task.parent_id = "root";
  task.arrival_s = 1.25;
  task.tool_s_from_start = true;
  Turn first;
  first.spans = {Span{SpanKind::kSystem, 3000, "sys-v1"}, Span{SpanKind::kTools, 9000, "tools"},
                 Span{SpanKind::kUser, 57, std::nullopt}};
  first.output = 412;
  first.tool_s = 0.1;  // not exactly representable: must still round-trip
  first.time_s = 1.25;
  first.usage = RecordedUsage{4, 12000, 0, 412};
  Turn second;
  second.keep = 12000;
  second.spans = {Span{SpanKind::kAssistant, 412, std::nullopt},
                  Span{SpanKind::kToolResult, 1'000'000, std::nullopt}};
  second.output = 3;
  second.output_is_placeholder = true;
  second.time_s = 7.0 / 3.0;
  // One full block of 2^19 tokens in its 1,012,412 and a partial one: a
  // hash for each, ceil(1,012,412 / 2^19) = 2, the most a turn may hold.
  second.blocks = BlockHashes{524288, {0, 18446744073709551615ULL}};
  task.turns = {first, second};
  return task;
}

TEST(TraceNativeFormatTest, WriterOutputReadsBackEqual) {
  std::ostringstream out;
  TraceWriter writer(&out);
  Task minimal;  // one turn of a 1-token prompt (a reader refuses an empty one)
  minimal.id = "m";
  minimal.turns.push_back(Turn{});
  minimal.turns[0].spans.push_back(Span{SpanKind::kOther, 1, std::nullopt});
  ASSERT_TRUE(writer.Write(RichTask()).ok());
  ASSERT_TRUE(writer.Write(minimal).ok());
  auto reader = ReaderOf(out.str());
  const std::vector<Task> tasks = ReadAll(reader.get());
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0], RichTask());
  EXPECT_EQ(tasks[1], minimal);
}

TEST(TraceNativeFormatTest, WritesTheDocumentedLayout) {
  std::ostringstream out;
  TraceWriter writer(&out);
  Task task;
  task.id = "a";
  Turn turn;
  turn.spans = {Span{SpanKind::kSystem, 1000, "sys"}};
  turn.output = 20;
  turn.tool_s = 2.5;
  task.turns = {turn};
  ASSERT_TRUE(writer.Write(task).ok());
  EXPECT_EQ(out.str(),
            "{\"kvbill_trace\":1}\n"
            "{\"id\":\"a\",\"arrival_s\":0.0,\"turns\":[{\"spans\":[{\"kind\":\"system\","
            "\"tokens\":1000,\"id\":\"sys\"}],\"out\":20,\"tool_s\":2.5}]}\n");
}

TEST(TraceNativeFormatTest, WriterRejectsAnInvalidTask) {
  std::ostringstream out;
  TraceWriter writer(&out);
  Task task;
  task.id = "x";
  EXPECT_EQ(writer.Write(task).error().message(), "task \"x\": a task needs at least one turn");
}

constexpr char kHeader[] = "{\"kvbill_trace\":1}\n";
// A turn of a 100-token prompt.
const std::string kTurn = R"({"spans":[{"kind":"user","tokens":100}],"out":5})";

TEST(TraceNativeFormatTest, ErrorsNameTheLineTaskTurnAndField) {
  EXPECT_EQ(FirstError(std::string(kHeader) +
                       "{\"id\":\"a\",\"turns\":[{\"spans\":[],\"out\":1},"
                       "{\"spans\":[{\"kind\":\"user\",\"tokens\":-5}],\"out\":1}]}\n"),
            "mem.jsonl:2: task \"a\": turn 2: span 1: \"tokens\" must be a non-negative "
            "integer, got -5");
  EXPECT_EQ(FirstError(std::string(kHeader) + "\n{\"id\":\"a\",\"turns\":[{\"out\":1}\n"),
            "mem.jsonl:3: truncated JSON");
  EXPECT_EQ(FirstError(std::string(kHeader) + "{\"id\":\"a\",\"turns\":[{\"otu\":1}]}\n"),
            "mem.jsonl:2: task \"a\": turn 1: unknown field \"otu\"");
  EXPECT_EQ(FirstError(std::string(kHeader) +
                       "{\"id\":\"a\",\"turns\":[{\"t\":5,\"out\":1},{\"t\":4,\"out\":1}]}\n"),
            "mem.jsonl:2: task \"a\": turn 2: time runs backwards: 4 s is before the previous "
            "turn's 5 s");
  EXPECT_EQ(FirstError(std::string(kHeader) +
                       "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"code\",\"tokens\":1}],"
                       "\"out\":1}]}\n"),
            "mem.jsonl:2: task \"a\": turn 1: span 1: \"kind\" must be one of "
            "system|tools|user|tool_result|tool_call|assistant|summary|other, got \"code\"");
  EXPECT_EQ(FirstError(std::string(kHeader) +
                       "{\"id\":\"a\",\"tool_s_from_start\":1,\"turns\":[{\"out\":1}]}\n"),
            "mem.jsonl:2: task \"a\": \"tool_s_from_start\" must be true or false, got 1");
  EXPECT_EQ(FirstError("{\"id\":\"a\",\"turns\":[]}\n"),
            "mem.jsonl:1: not a kvbill trace: the first line must be {\"kvbill_trace\":1}");
}

// A turn's usage may say where the call ran: "us" (Anthropic's US-only
// inference) is kept, "global" is the default; another value, or null, is an
// error naming it. The plain line reads on the fast path, the escaped one
// ("u\u0073", "us") on the DOM path; both give the same turn.
TEST(TraceNativeFormatTest, UsageInferenceGeoIsUsOrGlobal) {
  const auto turn = [](const std::string& geo) {
    return std::string(kHeader) +
           R"({"id":"a","turns":[{"spans":[{"kind":"user","tokens":1}],"out":1,"usage":{"input":1,)" +
           R"("cache_creation":0,"cache_read":0,)" + R"("output":1,"inference_geo":)" + geo +
           "}}]}\n";
  };
  for (const char* us : {R"("us")", R"("u\u0073")"}) {
    auto reader = ReaderOf(turn(us));
    const std::vector<Task> tasks = ReadAll(reader.get());
    ASSERT_EQ(tasks.size(), 1u) << us;
    ASSERT_TRUE(tasks[0].turns[0].usage.has_value());
    EXPECT_TRUE(tasks[0].turns[0].usage->us_only) << us;
  }
  auto global = ReaderOf(turn(R"("global")"));
  const std::vector<Task> tasks = ReadAll(global.get());
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_FALSE(tasks[0].turns[0].usage->us_only);
  for (const char* bad : {R"("eu")", "null"}) {
    EXPECT_EQ(FirstError(turn(bad)), std::string("mem.jsonl:2: task \"a\": turn 1: usage: "
                                                 "\"inference_geo\" must be \"global\" or "
                                                 "\"us\", got ") +
                                         bad)
        << bad;
  }
}

// A turn's hashes name its prompt's blocks: every full one at least, and at
// most every one, the last, partial one included. 100 tokens in blocks of
// 16 are 6 full blocks (96 tokens) and a partial one of 4: 6 or 7 hashes;
// 5 are too few and 8 too many (the 8th stood for no token of the prompt).
TEST(TraceNativeFormatTest, HashesFewerThanTheFullBlocksOrMoreThanTheBlocksNameTheLine) {
  const auto turn = [](const std::string& hashes) {
    return std::string(kHeader) +
           R"({"id":"a","turns":[{"spans":[{"kind":"user","tokens":100}],"out":5,)"
           R"("block_size":16,"hashes":[)" +
           hashes + "]}]}\n";
  };
  EXPECT_EQ(ReadAll(ReaderOf(turn("1,2,3,4,5,6")).get()).size(), 1u);
  EXPECT_EQ(ReadAll(ReaderOf(turn("1,2,3,4,5,6,7")).get()).size(), 1u);
  EXPECT_EQ(FirstError(turn("1,2,3,4,5")),
            "mem.jsonl:2: task \"a\": turn 1: \"hashes\" holds 5 block hashes, fewer than the 6 "
            "full blocks of 16 tokens of its 100-token prompt (one hash a block, the prefix "
            "through it; the last, partial block may go without)");
  EXPECT_EQ(FirstError(turn("1,2,3,4,5,6,7,8")),
            "mem.jsonl:2: task \"a\": turn 1: \"hashes\" holds 8 block hashes, more than the 7 "
            "blocks of 16 tokens of its 100-token prompt (one hash a block, the last, partial "
            "one included)");
}

TEST(TraceNativeFormatTest, SkipBadCountsAndSkipsMalformedLines) {
  auto reader = ReaderOf(std::string(kHeader) + "{\"id\":\"a\",\"turns\":[" + kTurn + "]}\n" +
                             "{\"id\":\"b\",\"turns\":[{\"out\":-1}]}\n" + "{\"id\":\"c\"\n" +
                             "{\"id\":\"d\",\"turns\":[" + kTurn + "]}\n",
                         ReaderOptions{.skip_bad = true});
  const std::vector<Task> tasks = ReadAll(reader.get());
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].id, "a");
  EXPECT_EQ(tasks[1].id, "d");
  EXPECT_EQ(reader->bad_lines().count, 2);
  EXPECT_EQ(reader->bad_lines().first_messages,
            (std::vector<std::string>{
                "mem.jsonl:3: task \"b\": turn 1: \"out\" must be a non-negative integer, got -1",
                "mem.jsonl:4: truncated JSON"}));
}

// A task no simulation can take is the error of its line, like any other:
// an empty prompt, a late arrival, tool waits or times past 10^9 s.
TEST(TraceNativeFormatTest, TasksASimulationCannotTakeAreErrorsOfTheirLine) {
  const std::string a = "{\"id\":\"a\",\"arrival_s\":0,\"turns\":[" + std::string(kTurn) + "]}\n";
  EXPECT_EQ(
      FirstError(std::string(kHeader) + "{\"id\":\"a\",\"turns\":[{\"spans\":[],\"out\":5}]}\n"),
      "mem.jsonl:2: task \"a\": turn 1: an empty prompt (0 tokens; a request sends at least "
      "one)");
  // b arrives 2e9 s after a (line 2), on line 3.
  EXPECT_EQ(FirstError(std::string(kHeader) + a + "{\"id\":\"b\",\"arrival_s\":2e9,\"turns\":[" +
                       kTurn + "]}\n"),
            "mem.jsonl:3: task \"b\": arrives 2e+09 s after task \"a\", beyond the 1e9 s (31.7 "
            "years) a simulation can time");
  // Out of order: c, 1.5e9 s before b, is the line that widens the span.
  EXPECT_EQ(
      FirstError(std::string(kHeader) + "{\"id\":\"b\",\"arrival_s\":1e9,\"turns\":[" + kTurn +
                 "]}\n" + a + "{\"id\":\"c\",\"arrival_s\":-5e8,\"turns\":[" + kTurn + "]}\n"),
      "mem.jsonl:4: task \"c\": arrives 1.5e+09 s before task \"b\", beyond the 1e9 s "
      "(31.7 years) a simulation can time");
  EXPECT_EQ(FirstError(std::string(kHeader) + "{\"id\":\"a\",\"turns\":[" +
                       kTurn.substr(0, kTurn.size() - 1) + ",\"tool_s\":2e9}," + kTurn + "]}\n"),
            "mem.jsonl:2: task \"a\": turn 1: the tool waits add up to 2e+09 s, beyond the 1e9 s "
            "(31.7 years) a simulation can time");
  // Under skip_bad the task is a bad line, and its arrival does not count:
  // c (3e8 s) is within 1e9 s of a (0 s) once b (2e9 s) is skipped.
  auto reader =
      ReaderOf(std::string(kHeader) + a + "{\"id\":\"b\",\"arrival_s\":2e9,\"turns\":[" + kTurn +
                   "]}\n{\"id\":\"c\",\"arrival_s\":3e8,\"turns\":[" + kTurn + "]}\n",
               ReaderOptions{.skip_bad = true});
  const std::vector<Task> tasks = ReadAll(reader.get());
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[1].id, "c");
  EXPECT_EQ(reader->bad_lines().count, 1);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
