#include "kvbill/policy/prompt.h"

#include <gtest/gtest.h>

#include <vector>

#include "kvbill/policy/context_policy.h"
#include "policy/policy_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::AgentTask;
using testing::MakeSpan;
using testing::MakeTurn;
using testing::MustMake;
using testing::Piece;

PromptPiece P(std::uint64_t identity, Tokens tokens) {
  return Piece(SpanKind::kOther, identity, 0, tokens);
}

TEST(PromptTest, ACopyExtendsTheSharedBufferAndLeavesTheOriginalAsItWas) {
  Prompt a{P(1, 10), P(2, 20)};
  Prompt b = a;
  b.push_back(P(3, 30));
  EXPECT_TRUE(b.SharesStorageWith(a));  // appended in place: a's view ended at the buffer's end
  EXPECT_EQ(a, (std::vector<PromptPiece>{P(1, 10), P(2, 20)}));
  EXPECT_EQ(b, (std::vector<PromptPiece>{P(1, 10), P(2, 20), P(3, 30)}));
  EXPECT_TRUE(b.StartsWith(a));
  EXPECT_FALSE(a.StartsWith(b));
}

TEST(PromptTest, AppendingToAShorterViewCopiesItOut) {
  Prompt a{P(1, 10)};
  Prompt b = a;
  b.push_back(P(2, 20));
  // a now ends before the buffer does: appending to it must not overwrite b's piece.
  a.push_back(P(9, 90));
  EXPECT_FALSE(a.SharesStorageWith(b));
  EXPECT_EQ(a, (std::vector<PromptPiece>{P(1, 10), P(9, 90)}));
  EXPECT_EQ(b, (std::vector<PromptPiece>{P(1, 10), P(2, 20)}));
  EXPECT_FALSE(b.StartsWith(a));
  EXPECT_NE(a, b);
}

TEST(PromptTest, EqualityComparesPiecesNotStorage) {
  const Prompt a{P(1, 10), P(2, 20)};
  const Prompt b{P(1, 10), P(2, 20)};
  EXPECT_FALSE(a.SharesStorageWith(b));
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.StartsWith(Prompt{P(1, 10)}));
  EXPECT_FALSE(a.StartsWith(Prompt{P(1, 11)}));
  EXPECT_TRUE(a.StartsWith(Prompt{}));
  EXPECT_TRUE(Prompt{}.empty());
}

TEST(PromptTest, KeepAllRequestsOfATaskShareOneBuffer) {
  // Under keep_all every prompt of AgentTask extends the one before it
  // (policy_test_util.h), so all five views share one buffer of 3 + 2 x 4 =
  // 11 pieces instead of 3 + 5 + 7 + 9 + 11 = 35 copied pieces.
  const std::vector<Request> r = MustMake(ContextPolicyParams{})->Plan(AgentTask("a"));
  ASSERT_EQ(r.size(), 5u);
  for (std::size_t k = 1; k < r.size(); ++k) {
    EXPECT_TRUE(r[k].prompt.SharesStorageWith(r[0].prompt)) << k;
    EXPECT_EQ(r[k].prompt.size(), 3 + 2 * k);
  }
}

TEST(PromptTest, AnEditedPromptGetsABufferOfItsOwn) {
  // sliding_window of 400 tokens keeps system + tools (150) whole and the
  // last 400 tokens of the rest: turn 1's rest (240 tokens) fits, so it
  // extends turn 0; turn 2's rest (560) is cut at its front to 400, so its
  // prompt (550 tokens) cannot share turn 1's buffer.
  ContextPolicyParams params;
  params.kind = "sliding_window";
  params.window_tokens = 400;
  const std::vector<Request> r = MustMake(params)->Plan(AgentTask("a"));
  ASSERT_GE(r.size(), 3u);
  EXPECT_TRUE(r[1].prompt.SharesStorageWith(r[0].prompt));
  EXPECT_FALSE(r[2].prompt.SharesStorageWith(r[1].prompt));
  EXPECT_EQ(r[2].PromptTokens(), 550);
}

TEST(PromptTest, ThreeThousandTurnsHoldLinearlyManyPieces) {
  // 3,000 turns adding two pieces each: shared, the requests view one buffer
  // of 2 + 2 x 2,999 pieces; copied, they would hold sum over k of
  // (2 + 2k) = 2 x 3,000 + 2,999 x 3,000 = about 9 x 10^6.
  Task task;
  task.id = "long";
  task.turns.push_back(
      MakeTurn({MakeSpan(SpanKind::kSystem, 3000, "s"), MakeSpan(SpanKind::kUser, 500)}, 20));
  for (int k = 1; k < 3'000; ++k) {
    task.turns.push_back(
        MakeTurn({MakeSpan(SpanKind::kAssistant, 20), MakeSpan(SpanKind::kToolResult, 30)}, 20));
  }
  const std::vector<Request> r = MustMake(ContextPolicyParams{})->Plan(task);
  ASSERT_EQ(r.size(), 3'000u);
  EXPECT_TRUE(r.back().prompt.SharesStorageWith(r.front().prompt));
  EXPECT_EQ(r.back().prompt.size(), 2u + 2u * 2'999u);
  // 3,500 + 2,999 x 50 tokens.
  EXPECT_EQ(r.back().PromptTokens(), 3'500 + 2'999 * 50);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
