#include "kvbill/trace/trace.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace {

Turn MakeTurn(Tokens appended, Tokens output, std::optional<Tokens> keep = std::nullopt) {
  Turn turn;
  turn.keep = keep;
  turn.spans.push_back(Span{SpanKind::kOther, appended, std::nullopt});
  turn.output = output;
  return turn;
}

TEST(TraceTaskTest, SpanKindNamesRoundTrip) {
  for (SpanKind kind : {SpanKind::kSystem, SpanKind::kTools, SpanKind::kUser, SpanKind::kToolResult,
                        SpanKind::kAssistant, SpanKind::kSummary, SpanKind::kOther}) {
    EXPECT_EQ(ParseSpanKind(SpanKindName(kind)), kind);
  }
  EXPECT_EQ(SpanKindName(SpanKind::kToolResult), "tool_result");
  EXPECT_FALSE(ParseSpanKind("tool-result").has_value());
}

// The choices errors list are the table's, every kind once, in enum order:
// tool_call (which the Claude Code importer writes) among them.
TEST(TraceTaskTest, SpanKindChoicesListEveryKindOnce) {
  EXPECT_EQ(SpanKindChoices(), "system|tools|user|tool_result|tool_call|assistant|summary|other");
  std::string joined;
  for (int k = 0; k <= static_cast<int>(SpanKind::kOther); ++k) {
    const SpanKind kind = static_cast<SpanKind>(k);
    EXPECT_EQ(ParseSpanKind(SpanKindName(kind)), kind);
    joined += (k == 0 ? "" : "|") + std::string(SpanKindName(kind));
  }
  EXPECT_EQ(SpanKindChoices(), joined);
}

TEST(TraceTaskTest, PromptGrowsByAppendedSpansAndShrinksToKeep) {
  Task task;
  task.id = "t";
  task.turns = {MakeTurn(1000, 10), MakeTurn(250, 10), MakeTurn(50, 10, 400)};
  task.turns[0].spans.push_back(Span{SpanKind::kUser, 24, std::nullopt});
  // 1000 + 24; 1024 + 250; keep 400 then + 50.
  EXPECT_EQ(PromptTokens(task), (std::vector<Tokens>{1024, 1274, 450}));
  EXPECT_EQ(AppendedTokens(task.turns[0]), 1024);
  EXPECT_TRUE(ValidateTask(task).ok());
}

TEST(TraceTaskTest, RejectsKeepBeyondThePreviousPrompt) {
  Task task;
  task.id = "t";
  task.turns = {MakeTurn(100, 1), MakeTurn(10, 1, 101)};
  const Status status = ValidateTask(task);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "turn 2: \"keep\" 101 exceeds the previous prompt (100 tokens)");
}

TEST(TraceTaskTest, RejectsTimeRunningBackwards) {
  Task task;
  task.id = "t";
  task.turns = {MakeTurn(100, 1), MakeTurn(10, 1), MakeTurn(10, 1)};
  task.turns[0].time_s = 14;
  task.turns[2].time_s = 12.5;  // turn 2 has no time: compared with turn 1
  const Status status = ValidateTask(task);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message(),
            "turn 3: time runs backwards: 12.5 s is before the previous turn's 14 s");
}

TEST(TraceTaskTest, RejectsATaskWithoutTurns) {
  Task task;
  task.id = "t";
  EXPECT_EQ(ValidateTask(task).error().message(), "a task needs at least one turn");
}

}  // namespace
}  // namespace kvbill
