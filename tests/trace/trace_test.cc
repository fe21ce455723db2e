#include "kvbill/trace/trace.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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

// CheckServable names the turn at fault (from 1 in the text, from 0 in
// `turn`), and passes what stays within the limits.
TEST(TraceTaskTest, CheckServableNamesTheTurnAtFault) {
  Task task;
  task.id = "t";
  task.turns = {MakeTurn(100, 1), MakeTurn(10, 1)};
  EXPECT_FALSE(CheckServable(task).has_value());

  // Turn 2 keeps nothing and appends nothing: its prompt is 0 tokens.
  Task empty = task;
  empty.turns[1] = MakeTurn(0, 1, 0);
  auto e = CheckServable(empty);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->turn, 1u);
  EXPECT_EQ(e->error.message(), "turn 2: an empty prompt (0 tokens; a request sends at least one)");

  // Waits of 6e8 s then 5e8 s: 1.1e9 s by turn 2, over 1e9 s. Exactly 1e9 s
  // passes.
  Task waits = task;
  waits.turns.push_back(MakeTurn(1, 1));
  waits.turns[0].tool_s = 6e8;
  waits.turns[1].tool_s = 4e8;
  EXPECT_FALSE(CheckServable(waits).has_value());
  waits.turns[1].tool_s = 5e8;
  auto w = CheckServable(waits);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->turn, 1u);
  EXPECT_EQ(w->error.message(),
            "turn 2: the tool waits add up to 1.1e+09 s, beyond the 1e9 s (31.7 years) a "
            "simulation can time");

  // Times from turn 2 (turn 1 has none): turn 3 at 5 + 2e9 s is 2e9 s after
  // turn 2's 5 s. The waits are over too, but times come first.
  Task times = waits;
  times.turns[1].time_s = 5;
  times.turns[2].time_s = 5 + 2e9;
  auto t = CheckServable(times);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->turn, 2u);
  EXPECT_EQ(t->error.message(),
            "turn 3: its time is 2e+09 s after turn 2's, beyond the 1e9 s (31.7 years) a "
            "simulation can time");
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
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
