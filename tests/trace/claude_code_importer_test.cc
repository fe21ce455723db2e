#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kvbill/trace/importers.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::SharedTrace;
using testing::TraceFixture;

std::vector<Task> Import(const std::string& path, std::string* error) {
  auto reader = OpenTrace(path, std::nullopt);
  if (!reader.ok()) {
    *error = reader.error().message();
    return {};
  }
  return ReadAllTasks(reader->get(), error);
}

// tests/data/traces/claude_code_small.jsonl, worked by hand:
//   msg_a (2 lines, output 8 then 120) main,  prompt 4 + 20000 + 0     = 20004, at 45.5 s
//   msg_b sidechain, prompt 3 + 9000            = 9003,  at 50 s
//   msg_c sidechain, prompt 3 + 500 + 9000      = 9503,  at 55.25 s (output 5: placeholder)
//   msg_d main,      prompt 6 + 700 + 20004     = 20710, at 62 s
//   msg_e main,      prompt 10 + 5000 + 15000   = 20010, at 420 s (shrank: keeps its cache read)
TEST(TraceClaudeCodeImporterTest, DeduplicatesCallsAndSplitsSubagentChains) {
  std::string error;
  const std::vector<Task> tasks = Import(TraceFixture("claude_code_small.jsonl"), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 2u);

  const Task& main = tasks[0];
  EXPECT_EQ(main.id, "s1");
  // The gaps are between call times: a replay counts them from the start.
  EXPECT_TRUE(main.tool_s_from_start);
  EXPECT_FALSE(main.parent_id.has_value());
  EXPECT_EQ(main.arrival_s, 0.0);
  ASSERT_EQ(main.turns.size(), 3u);
  EXPECT_EQ(PromptTokens(main), (std::vector<Tokens>{20004, 20710, 20010}));
  EXPECT_EQ(main.turns[0].output, 120);  // the largest count among the message's lines
  EXPECT_FALSE(main.turns[0].output_is_placeholder);
  EXPECT_EQ(main.turns[0].usage, (RecordedUsage{4, 20000, 0, 120}));
  EXPECT_EQ(main.turns[0].tool_s, 16.5);  // 62 - 45.5
  // 706 appended = the previous answer (120; its line 4 holds a "tool_use"
  // block, so a tool_call span) + 586 tokens that came with the tool result
  // of line 7 (a user line holding a "tool_result" block, in the main chain
  // after msg_a): a tool_result span, which drop_tool_results can drop.
  EXPECT_EQ(main.turns[1].spans,
            (std::vector<Span>{Span{SpanKind::kToolCall, 120, std::nullopt},
                               Span{SpanKind::kToolResult, 586, std::nullopt}}));
  // msg_e follows no tool result: its growth stays "other".
  EXPECT_EQ(main.turns[2].spans.back().kind, SpanKind::kOther);
  EXPECT_EQ(main.turns[1].time_s, 16.5);
  EXPECT_EQ(main.turns[1].tool_s, 418.0);  // 03:40:00 - 03:33:02
  EXPECT_EQ(main.turns[2].keep, 15000);
  EXPECT_EQ(AppendedTokens(main.turns[2]), 5010);
  EXPECT_EQ(main.turns[2].tool_s, 0.0);

  const Task& sub = tasks[1];
  EXPECT_EQ(sub.id, "s1/sidechain-1");
  EXPECT_EQ(sub.parent_id, "s1");
  EXPECT_EQ(sub.arrival_s, 4.5);
  EXPECT_EQ(PromptTokens(sub), (std::vector<Tokens>{9003, 9503}));
  EXPECT_EQ(sub.turns[0].tool_s, 5.25);
  EXPECT_TRUE(sub.turns[1].output_is_placeholder);
  // msg_b's lines hold no content: its answer (60) stays "assistant", and
  // the other 440 of the 500 appended follow no tool result.
  EXPECT_EQ(sub.turns[1].spans, (std::vector<Span>{Span{SpanKind::kAssistant, 60, std::nullopt},
                                                   Span{SpanKind::kOther, 440, std::nullopt}}));
}

// A session's first call that read 15,000 tokens from the cache read a
// prefix an earlier session cached (the system prompt and tools): its
// prompt, 10 + 5,000 + 15,000, is a system span of 15,000 and 5,010 of its
// own, so that summarise keeps the system prompt. A cold first call (no
// cache read) stays one span.
TEST(TraceClaudeCodeImporterTest, AFirstCallsCacheReadIsItsSystemPrompt) {
  const std::string log =
      R"({"type":"assistant","sessionId":"w","timestamp":"2025-08-07T03:00:00.000Z",)"
      R"("message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":10,)"
      R"("cache_creation_input_tokens":5000,"cache_read_input_tokens":15000,"output_tokens":50}}})"
      "\n"
      R"({"type":"assistant","sessionId":"c","timestamp":"2025-08-07T03:00:01.000Z",)"
      R"("message":{"id":"m2","model":"claude-sonnet-4-5","usage":{"input_tokens":10,)"
      R"("cache_creation_input_tokens":5000,"cache_read_input_tokens":0,"output_tokens":50}}})"
      "\n";
  auto reader = NewClaudeCodeReader(std::make_unique<std::istringstream>(log), "log.jsonl");
  std::string error;
  const std::vector<Task> tasks = testing::ReadAllTasks(reader.get(), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 2u);
  // The system span is content every session of the model shares (its
  // cache read came from an earlier session's cache).
  EXPECT_EQ(tasks[0].turns[0].spans,
            (std::vector<Span>{
                Span{SpanKind::kSystem, 15000, "claude-code/system/claude-sonnet-4-5/main"},
                Span{SpanKind::kOther, 5010, std::nullopt}}));
  EXPECT_EQ(tasks[1].turns[0].spans,
            (std::vector<Span>{Span{SpanKind::kOther, 5010, std::nullopt}}));
}

// Sessions share the system prefix only where a provider cache could have
// served it: the same model, and a main chain with main chains (a
// subagent's system prompt and tools are another text).
TEST(TraceClaudeCodeImporterTest, TheSharedSystemPrefixIsOnePerModelAndChainKind) {
  const auto line = [](const char* session, const char* model, bool sidechain, int read) {
    return std::string(R"({"type":"assistant","sessionId":")") + session + R"(","isSidechain":)" +
           (sidechain ? "true" : "false") + R"(,"timestamp":"2025-08-07T03:00:0)" + session +
           R"(.000Z","message":{"id":"m)" + session + R"(","model":")" + model +
           R"(","usage":{"input_tokens":10,"cache_creation_input_tokens":100,)"
           R"("cache_read_input_tokens":)" +
           std::to_string(read) + R"(,"output_tokens":50}}})" + "\n";
  };
  const std::string log =
      line("1", "claude-opus-4-1", false, 12000) + line("2", "claude-opus-4-1", false, 15000) +
      line("3", "claude-sonnet-4-5", false, 12000) + line("4", "claude-opus-4-1", true, 9000);
  auto reader = NewClaudeCodeReader(std::make_unique<std::istringstream>(log), "log.jsonl");
  std::string error;
  const std::vector<Task> tasks = testing::ReadAllTasks(reader.get(), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 4u);
  std::vector<std::optional<std::string>> ids;
  for (const Task& task : tasks) {
    ASSERT_EQ(task.turns[0].spans.front().kind, SpanKind::kSystem) << task.id;
    ids.push_back(task.turns[0].spans.front().content_id);
  }
  EXPECT_EQ(ids[0], "claude-code/system/claude-opus-4-1/main");
  EXPECT_EQ(ids[1], ids[0]);  // 12,000 and 15,000 tokens: one text, cut at two lengths
  EXPECT_EQ(ids[2], "claude-code/system/claude-sonnet-4-5/main");
  EXPECT_EQ(ids[3], "claude-code/system/claude-opus-4-1/subagent");
}

// tests/data/traces/claude_code_tool_calls.jsonl: lines 2, 3, 4, 6, 9, 11 and
// 14 (elements of the JSON array) of the real transcript
// ../shared/data/traces/claude-code/raw/attio-mcp-server_465eb442.json
// (kesslerio/attio-mcp-server, Apache-2.0; tests/data/traces/README.md),
// one object a line. Worked by hand from the usage fields:
//   msg_01Qhb (a text line, output 8, then a tool_use line, output 271)
//             prompt 4 + 60912 + 0     = 60916
//   a user line with a tool_result block
//   msg_01QFC (one tool_use line, output 182)
//             prompt 6 + 418 + 60912   = 61336: appended 420
//             = the tool call fed back (271) + the tool result (420 - 271 = 149)
//   a user line with a tool_result block
//   msg_01T5Q (one tool_use line, output 99)
//             prompt 5 + 381 + 61330   = 61716: appended 380 = 182 + 198
TEST(TraceClaudeCodeImporterTest, ToolCallsAndToolResultsOfARealTranscriptAreToolSpans) {
  std::string error;
  const std::vector<Task> tasks = Import(TraceFixture("claude_code_tool_calls.jsonl"), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  const Task& task = tasks[0];
  EXPECT_EQ(task.id, "8664c04e-75fa-497d-ac11-57d69997e3ec");
  ASSERT_EQ(task.turns.size(), 3u);
  EXPECT_EQ(PromptTokens(task), (std::vector<Tokens>{60916, 61336, 61716}));
  EXPECT_EQ(task.turns[0].output, 271);
  EXPECT_EQ(task.turns[0].spans, (std::vector<Span>{Span{SpanKind::kOther, 60916, std::nullopt}}));
  EXPECT_EQ(task.turns[1].spans,
            (std::vector<Span>{Span{SpanKind::kToolCall, 271, std::nullopt},
                               Span{SpanKind::kToolResult, 149, std::nullopt}}));
  EXPECT_EQ(task.turns[2].spans,
            (std::vector<Span>{Span{SpanKind::kToolCall, 182, std::nullopt},
                               Span{SpanKind::kToolResult, 198, std::nullopt}}));
  // The same lines as the JSON array a stop hook saves read the same.
  std::ifstream in(TraceFixture("claude_code_tool_calls.jsonl"));
  std::string array = "[", line;
  while (std::getline(in, line)) array += (array.size() > 1 ? "," : "") + line;
  array += "]";
  auto reader = NewClaudeCodeReader(std::make_unique<std::istringstream>(array), "chat.json", {});
  EXPECT_EQ(ReadAllTasks(reader.get(), &error), tasks);
  EXPECT_EQ(error, "");
}

// Current Claude Code transcripts open with a file-history snapshot (no
// sessionId): detected as a transcript all the same, the snapshot skipped,
// so the fixture reads as without it.
TEST(TraceClaudeCodeImporterTest, ATranscriptOpeningWithAFileHistorySnapshotIsDetected) {
  const std::string snapshot =
      R"({"type": "file-history-snapshot", "messageId": "u1", "snapshot": {"messageId": "u1",)"
      R"( "trackedFileBackups": {}, "timestamp": "2026-01-12T07:40:20.000Z"},)"
      R"( "isSnapshotUpdate": false})";
  auto format = DetectTraceFormat(snapshot, "f", 1);
  ASSERT_TRUE(format.ok()) << format.error().message();
  EXPECT_EQ(*format, TraceFormat::kClaudeCode);
  EXPECT_EQ(*DetectTraceFormat(R"({"type": "queue-operation", "operation": "enqueue"})", "f", 1),
            TraceFormat::kClaudeCode);
  std::ifstream in(TraceFixture("claude_code_small.jsonl"));
  std::stringstream body;
  body << in.rdbuf();
  const std::string path = ::testing::TempDir() + "/claude_code_snapshot.jsonl";
  std::ofstream(path) << snapshot << "\n" << body.str();
  std::string error;
  const std::vector<Task> with = Import(path, &error);
  EXPECT_EQ(error, "");
  const std::vector<Task> without = Import(TraceFixture("claude_code_small.jsonl"), &error);
  ASSERT_EQ(with.size(), without.size());
  for (std::size_t i = 0; i < with.size(); ++i) {
    EXPECT_EQ(PromptTokens(with[i]), PromptTokens(without[i]));
  }
}

TEST(TraceClaudeCodeImporterTest, ReadsTheJsonArrayAStopHookSaves) {
  std::string error;
  const std::vector<Task> tasks = Import(TraceFixture("claude_code_array.json"), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(PromptTokens(tasks[0]), std::vector<Tokens>{20004});
  EXPECT_EQ(tasks[0].turns[0].output, 120);
  EXPECT_EQ(tasks[1].parent_id, "s1");
  EXPECT_EQ(tasks[1].arrival_s, 4.5);
}

TEST(TraceClaudeCodeImporterTest, TimeRunningBackwardsNamesTheLine) {
  const std::string path = TraceFixture("claude_code_backwards.jsonl");
  std::string error;
  Import(path, &error);
  EXPECT_EQ(error, path +
                       ":2: session \"s1\": time runs backwards: 2025-08-07T03:32:44.000Z is "
                       "before the previous call's 2025-08-07T03:32:45.500Z");

  auto lenient = OpenTrace(path, TraceFormat::kClaudeCode, ReaderOptions{.skip_bad = true});
  ASSERT_TRUE(lenient.ok());
  const std::vector<Task> tasks = ReadAllTasks(lenient->get());
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].turns.size(), 2u);
  EXPECT_EQ((*lenient)->bad_lines().count, 1);
}

// Calls as `kvbill bill` reads them: a line without "type" whose message
// carries usage (older Claude Code versions) is a call; one with no message
// id is keyed by its requestId, two lines of one requestId one call; a line
// with neither is a call of its own; "usage": null is no call. Four calls
// of session s: typeless (input 100), request r1 (two lines, input 200),
// no id (input 300), an assistant line with an id (input 400).
TEST(TraceClaudeCodeImporterTest, ReadsTheCallsBillReads) {
  const std::string path = ::testing::TempDir() + "/claude_code_like_bill.jsonl";
  {
    std::ofstream f(path);
    const auto line = [&](const std::string& type, const std::string& ids, int input,
                          const std::string& usage_override = "") {
      f << "{" << type << R"("sessionId": "s", "timestamp": "2026-01-01T10:00:0)" << input / 100
        << R"(Z", )" << ids << R"("message": {"model": "claude-sonnet-4-5", )"
        << (usage_override.empty() ? R"("usage": {"input_tokens": )" + std::to_string(input) +
                                         R"(, "output_tokens": 10})"
                                   : usage_override)
        << "}}\n";
    };
    line("", "", 100);
    line(R"("type": "assistant", )", R"("requestId": "r1", )", 200);
    line(R"("type": "assistant", )", R"("requestId": "r1", )", 200);
    line(R"("type": "assistant", )", "", 300);
    line(R"("type": "assistant", )", "", 350, R"("usage": null)");
    f << R"({"type": "assistant", "sessionId": "s", "timestamp": "2026-01-01T10:00:04Z", )"
      << R"("message": {"id": "m4", "model": "claude-sonnet-4-5", "usage": {"input_tokens": )"
      << R"(400, "output_tokens": 10}}})"
      << "\n";
  }
  std::string error;
  const std::vector<Task> tasks = Import(path, &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_EQ(tasks[0].turns.size(), 4u);
  std::vector<std::int64_t> inputs;
  for (const Turn& t : tasks[0].turns) {
    ASSERT_TRUE(t.usage.has_value());
    inputs.push_back(t.usage->input);
  }
  EXPECT_EQ(inputs, (std::vector<std::int64_t>{100, 200, 300, 400}));
  std::filesystem::remove(path);
}

// The SWEContextBench usage log (../shared/data/README.md): 300 sessions,
// 14,507 calls, and each prompt is input + cache creation + cache read.
TEST(TraceClaudeCodeImporterTest, SweContextBenchLogImportsAs300TasksOf14507Calls) {
  const std::string path = SharedTrace("claude-code/usage/swecontextbench_sonnet45.jsonl");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared Claude Code usage log not present";
  std::string error;
  const std::vector<Task> tasks = Import(path, &error);
  EXPECT_EQ(error, "");
  EXPECT_EQ(tasks.size(), 300u);
  std::size_t calls = 0;
  std::set<std::string> ids;
  for (const Task& task : tasks) {
    ids.insert(task.id);
    EXPECT_FALSE(task.parent_id.has_value());
    const std::vector<Tokens> prompts = PromptTokens(task);
    for (std::size_t k = 0; k < task.turns.size(); ++k) {
      ++calls;
      ASSERT_TRUE(task.turns[k].usage.has_value());
      const RecordedUsage& u = *task.turns[k].usage;
      ASSERT_EQ(prompts[k], u.input + u.cache_creation + u.cache_read)
          << task.id << " turn " << k + 1;
    }
  }
  EXPECT_EQ(calls, 14507u);
  EXPECT_EQ(ids.size(), 300u);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
