// The per-turn model (Turn::model): read by the Claude Code and Codex
// importers, carried by the native format, written only when known.
#include <gtest/gtest.h>

#include <sstream>

#include "kvbill/trace/importers.h"
#include "kvbill/trace/reader.h"
#include "kvbill/trace/writer.h"
#include "trace/json_fields.h"
#include "trace/native_codec.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;

std::vector<Task> Read(std::unique_ptr<TraceReader> reader, std::string* error) {
  return ReadAllTasks(reader.get(), error);
}

std::string ClaudeLine(const std::string& id, const std::string& time, const std::string& model) {
  return R"({"type": "assistant", "sessionId": "s", "timestamp": "2026-01-12T07:40:)" + time +
         R"(Z", "message": {"id": ")" + id + R"(", )" + model +
         R"("usage": {"input_tokens": 3, "output_tokens": 50}}})" + "\n";
}

TEST(TurnModelTest, ClaudeCodeImporterKeepsEachCallsModel) {
  // Line 2's model is spelled with an escape ("\u0068" is "h"), which the
  // fast path leaves to the DOM path; line 3 names none; line 4 is null.
  const std::string text =
      ClaudeLine("m1", "00.000", R"("model": "claude-sonnet-4-5-20250929", )") +
      ClaudeLine("m2", "01.000", R"("model": "claude-\u0068aiku-4-5-20251001", )") +
      ClaudeLine("m3", "02.000", "") + ClaudeLine("m4", "03.000", R"("model": null, )");
  std::string error;
  const auto tasks = Read(
      NewClaudeCodeReader(std::make_unique<std::istringstream>(text), "mem.jsonl", {}), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_EQ(tasks[0].turns.size(), 4u);
  EXPECT_EQ(tasks[0].turns[0].model, "claude-sonnet-4-5-20250929");
  EXPECT_EQ(tasks[0].turns[1].model, "claude-haiku-4-5-20251001");
  EXPECT_EQ(tasks[0].turns[2].model, "");
  EXPECT_EQ(tasks[0].turns[3].model, "");
}

TEST(TurnModelTest, ClaudeCodeModelThatIsNotAStringNamesTheLine) {
  const std::string text = ClaudeLine("m1", "00.000", R"("model": 5, )");
  std::string error;
  Read(NewClaudeCodeReader(std::make_unique<std::istringstream>(text), "mem.jsonl", {}), &error);
  EXPECT_EQ(error, "mem.jsonl:1: message: \"model\" must be a string, got 5");
}

TEST(TurnModelTest, CodexImporterTakesTheLatestTurnContextsModel) {
  auto count = [](int total_in, int last_in) {
    return R"({"timestamp": "2026-01-12T07:40:0)" + std::to_string(total_in / 1000) +
           R"(.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {)" +
           R"("total_token_usage": {"input_tokens": )" + std::to_string(total_in) +
           R"(, "output_tokens": 10}, "last_token_usage": {"input_tokens": )" +
           std::to_string(last_in) + R"(, "output_tokens": 10}}}})" + "\n";
  };
  const std::string text =
      R"({"timestamp": "2026-01-12T07:40:00.000Z", "type": "session_meta", "payload": {"id": "c"}})"
      "\n" +
      count(1000, 1000) +
      R"({"timestamp": "2026-01-12T07:40:01.000Z", "type": "turn_context", "payload": {"model": "gpt-5-codex"}})"
      "\n" +
      count(3000, 2000);
  std::string error;
  const auto tasks =
      Read(NewCodexReader(std::make_unique<std::istringstream>(text), "mem.jsonl", {}), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_EQ(tasks[0].turns.size(), 2u);
  EXPECT_EQ(tasks[0].turns[0].model, "");  // before any turn_context
  EXPECT_EQ(tasks[0].turns[1].model, "gpt-5-codex");
}

Task TwoTurns() {
  Task task;
  task.id = "t";
  Turn turn;
  turn.spans.push_back(Span{SpanKind::kUser, 10, std::nullopt});
  turn.output = 5;
  task.turns = {turn, turn};
  return task;
}

TEST(TurnModelTest, NativeFormatWritesTheModelOnlyWhenKnown) {
  Task task = TwoTurns();
  // Without models the line is what it was before the field existed.
  EXPECT_EQ(EncodeTask(task),
            R"({"id":"t","arrival_s":0.0,"turns":[{"spans":[{"kind":"user","tokens":10}],"out":5},)"
            R"({"spans":[{"kind":"user","tokens":10}],"out":5}]})");
  task.turns[1].model = "claude-haiku-4-5";
  const std::string line = EncodeTask(task);
  EXPECT_EQ(line,
            R"({"id":"t","arrival_s":0.0,"turns":[{"spans":[{"kind":"user","tokens":10}],"out":5},)"
            R"({"spans":[{"kind":"user","tokens":10}],"out":5,"model":"claude-haiku-4-5"}]})");
  // Both decoders read it back.
  Task fast;
  ASSERT_TRUE(FastDecodeTask(line, &fast));
  EXPECT_EQ(fast, task);
  auto json = ParseJsonObject(line);
  ASSERT_TRUE(json.ok());
  auto dom = DecodeTask(*json);
  ASSERT_TRUE(dom.ok()) << dom.error().message();
  EXPECT_EQ(*dom, task);
}

TEST(TurnModelTest, NativeReaderAcceptsNullAndEscapedModelsAndRejectsOthers) {
  const std::string head = std::string(kNativeHeader) + "\n";
  const std::string text =
      head +
      R"({"id":"a","turns":[{"spans":[{"kind":"user","tokens":1}],"out":1,"model":null},)"
      R"({"out":1,"model":"claude-\u0068aiku-4-5"}]})" +
      "\n";
  std::string error;
  const auto tasks =
      Read(NewNativeReader(std::make_unique<std::istringstream>(text), "mem.jsonl", {}), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].turns[0].model, "");
  EXPECT_EQ(tasks[0].turns[1].model, "claude-haiku-4-5");
  const std::string bad = head + R"({"id":"a","turns":[{"out":1,"model":7}]})" + "\n";
  Read(NewNativeReader(std::make_unique<std::istringstream>(bad), "mem.jsonl", {}), &error);
  EXPECT_EQ(error, "mem.jsonl:2: task \"a\": turn 1: \"model\" must be a string, got 7");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
