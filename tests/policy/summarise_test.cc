#include <gtest/gtest.h>

#include "kvbill/policy/context_policy.h"
#include "policy/policy_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::AgentPieces;
using testing::AgentTask;
using testing::CutFront;
using testing::CutTo;
using testing::MakeSpan;
using testing::MakeTurn;
using testing::Piece;
using testing::Shared;
using testing::Unique;

std::vector<Request> Plan(const Task& task, Tokens threshold, Tokens summary, Tokens keep_recent) {
  ContextPolicyParams params;
  params.kind = "summarise";
  params.threshold_tokens = threshold;
  params.summary_tokens = summary;
  params.keep_recent_tokens = keep_recent;
  return testing::MustMake(params)->Plan(task);
}

PromptPiece SummaryPiece(const std::string& task, int index, Tokens tokens) {
  return Piece(SpanKind::kSummary, OutputIdentity(task, index), 0, tokens);
}

// AgentTask (policy_test_util.h) summarised past 700 tokens into 40, keeping
// the last 100 tokens of the rest (after the 150 system + tools tokens).
//   r0 turn 0: 180
//   r1 turn 1: 390
//   turn 2 would be 710 > 700: the rest (user0 30, out0 10, result1 200 =
//   240) is longer than 100 + 40, so
//   r2 summary: r1's prompt + r1's output (out1, 20) = 410 in, 40 out
//   r3 turn 2: sys, tools, summary 40, the last 100 of result1, out1, result2
//              = 150 + 40 + 100 + 20 + 300 = 610
//   r4 turn 3: 610 + out2 30 + result3 40 = 680 (out2 is r3's output now)
//   turn 4 would be 680 + 15 + 25 = 720 > 700: rest = 40 + 100 + 20 + 300 +
//   30 + 40 = 530, drop 430: summary 40, result1' 100, out1 20, then 270 of
//   result2 (30 left), out2 30, result3 40
//   r5 summary: r4's prompt + r4's output (15) = 695 in, 40 out
//   r6 turn 4: 150 + 40 + 30 + 30 + 40 + out3 15 + user4 25 = 330
TEST(SummarisePolicyTest, InsertsSummaryRequestsAndContinuesFromTheCompactedContext) {
  const AgentPieces a;
  const std::vector<Request> r = Plan(AgentTask("a"), 700, 40, 100);
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{180, 390, 410, 610, 680, 695, 330}));
  std::vector<int> turns;
  std::vector<bool> summaries;
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].index, static_cast<int>(i));
    EXPECT_EQ(r[i].output_identity, OutputIdentity("a", static_cast<int>(i)));
    turns.push_back(r[i].turn);
    summaries.push_back(r[i].is_summary);
  }
  EXPECT_EQ(turns, (std::vector<int>{0, 1, 2, 2, 3, 4, 4}));
  EXPECT_EQ(summaries, (std::vector<bool>{false, false, true, false, false, true, false}));

  // The summary request: the conversation so far, a full prefix hit.
  const PromptPiece out1 = Piece(SpanKind::kAssistant, OutputIdentity("a", 1), 0, 20);
  std::vector<PromptPiece> in = r[1].prompt.ToVector();
  in.push_back(out1);
  EXPECT_EQ(r[2].prompt, in);
  EXPECT_EQ(r[2].output, 40);
  EXPECT_EQ(r[2].tool_s, 0);
  EXPECT_FALSE(r[2].recorded_time_s.has_value());
  EXPECT_FALSE(r[2].usage.has_value());

  // Turn 2 continues from the summary; turn 3's answer span is r3's output.
  const PromptPiece summary2 = SummaryPiece("a", 2, 40);
  const PromptPiece out2 = Piece(SpanKind::kAssistant, OutputIdentity("a", 3), 0, 30);
  EXPECT_EQ(r[3].prompt, (std::vector<PromptPiece>{a.sys, a.tools, summary2,
                                                   CutFront(a.result1, 100), out1, a.result2}));
  EXPECT_EQ(r[3].output, 30);
  EXPECT_EQ(r[3].tool_s, 3);
  EXPECT_EQ(r[3].recorded_time_s, 20.0);
  EXPECT_EQ(r[4].prompt,
            (std::vector<PromptPiece>{a.sys, a.tools, summary2, CutFront(a.result1, 100), out1,
                                      a.result2, out2, a.result3}));

  // The second summary replaces the first one too.
  const PromptPiece out3 = Piece(SpanKind::kAssistant, OutputIdentity("a", 4), 0, 15);
  in = r[4].prompt.ToVector();
  in.push_back(out3);
  EXPECT_EQ(r[5].prompt, in);
  EXPECT_EQ(r[6].prompt,
            (std::vector<PromptPiece>{a.sys, a.tools, SummaryPiece("a", 5, 40),
                                      CutFront(a.result2, 270), out2, a.result3, out3, a.user4}));
  EXPECT_EQ(r[6].turn, 4);
  EXPECT_EQ(r[6].output, 5);
}

TEST(SummarisePolicyTest, CompactionMissesOnceAfterTheSystemPrefixThenHitsAgain) {
  const std::vector<Request> r = Plan(AgentTask("a"), 700, 40, 100);
  // The summary request is the previous prompt and answer: all 410 / 16 =
  // 25 full blocks were written by r1's prefill and decode.
  std::vector<PromptPiece> served = r[1].prompt.ToVector();
  served.push_back(Piece(SpanKind::kAssistant, OutputIdentity("a", 1), 0, 20));
  EXPECT_EQ(testing::SharedBlocks(served, r[2].prompt), 25u);
  // The compacted turn shares 9 blocks (144 of the 150 system + tools tokens).
  EXPECT_EQ(testing::SharedBlocks(r[2].prompt, r[3].prompt), 9u);
  // The next turn extends it: all 610 / 16 = 38 full blocks hit.
  EXPECT_EQ(testing::SharedBlocks(r[3].prompt, r[4].prompt), 38u);
}

TEST(SummarisePolicyTest, NeverSummarisesTheFirstTurnNorANearlyEmptyContext) {
  Task task;
  task.id = "s";
  task.turns = {
      MakeTurn({MakeSpan(SpanKind::kSystem, 100, "sys"), MakeSpan(SpanKind::kUser, 800)}, 10),
      MakeTurn({MakeSpan(SpanKind::kUser, 1000)}, 10, /*keep=*/100),
  };
  // Turn 0 (900) has nothing before it; turn 1 (1100) keeps only the system
  // prompt, so there is no rest to summarise.
  const std::vector<Request> r = Plan(task, 700, 50, 100);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{900, 1100}));
  EXPECT_FALSE(r[0].is_summary || r[1].is_summary);
}

// After a compaction the trace's own `keep` still applies, by recorded
// position. Threshold 700, summary 50, keep_recent 100:
//   r0 turn 0: sys 100 + user0 500                            = 600
//   turn 1: 600 + out0 10 + user1 200 = 810 > 700; rest user0 500 > 150
//   r1 summary: 600 + out0 10 = 610 in
//   r2 turn 1: sys, summary 50, user0[400, 500), out0, user1  = 460
//      recorded positions: user0' from 500, out0 from 600, user1 from 610
//   r3 turn 2: keep 605 drops user1 and out0's last 5; + user2 20 = 275
//   r4 turn 3: keep 50 keeps half the system prompt; the summary, which
//      stands for recorded tokens from 100 on, goes too; + user3 30 = 80
TEST(SummarisePolicyTest, AppliesTheTracesKeepToTheCompactedContext) {
  Task task;
  task.id = "s";
  task.turns = {
      MakeTurn({MakeSpan(SpanKind::kSystem, 100, "sys"), MakeSpan(SpanKind::kUser, 500)}, 10),
      MakeTurn({MakeSpan(SpanKind::kAssistant, 10), MakeSpan(SpanKind::kUser, 200)}, 10),
      MakeTurn({MakeSpan(SpanKind::kUser, 20)}, 10, /*keep=*/605),
      MakeTurn({MakeSpan(SpanKind::kUser, 30)}, 10, /*keep=*/50),
  };
  ASSERT_TRUE(ValidateTask(task).ok());
  const PromptPiece sys = Piece(SpanKind::kSystem, Shared("sys"), 0, 100);
  const PromptPiece user0 = Piece(SpanKind::kUser, Unique("s", 0, 1), 0, 500);
  const PromptPiece out0 = Piece(SpanKind::kAssistant, OutputIdentity("s", 0), 0, 10);
  const PromptPiece summary = SummaryPiece("s", 1, 50);
  const std::vector<Request> r = Plan(task, 700, 50, 100);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[1].prompt, (std::vector<PromptPiece>{sys, user0, out0}));
  EXPECT_EQ(r[2].prompt,
            (std::vector<PromptPiece>{sys, summary, CutFront(user0, 400), out0,
                                      Piece(SpanKind::kUser, Unique("s", 1, 1), 0, 200)}));
  EXPECT_EQ(r[3].prompt,
            (std::vector<PromptPiece>{sys, summary, CutFront(user0, 400), CutTo(out0, 5),
                                      Piece(SpanKind::kUser, Unique("s", 2, 0), 0, 20)}));
  EXPECT_EQ(r[4].prompt, (std::vector<PromptPiece>{
                             CutTo(sys, 50), Piece(SpanKind::kUser, Unique("s", 3, 0), 0, 30)}));
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{600, 610, 460, 275, 80}));
}

TEST(SummarisePolicyTest, BelowTheThresholdSendsTheRecordedPrompts) {
  Task task = AgentTask("a");
  BlockHashes blocks;
  blocks.hashes = {7};
  task.turns[4].blocks = blocks;
  const std::vector<Request> r = Plan(task, 820, 40, 100);  // 820 does not pass 820
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{180, 390, 710, 780, 820}));
  EXPECT_EQ(r[4].explicit_blocks, blocks);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
