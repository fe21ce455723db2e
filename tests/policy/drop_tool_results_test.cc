#include <gtest/gtest.h>

#include "kvbill/policy/context_policy.h"
#include "policy/policy_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::AgentPieces;
using testing::AgentTask;
using testing::Piece;
using testing::Stub;

std::vector<Request> Plan(const Task& task, int older_than_turns, Tokens stub_tokens) {
  ContextPolicyParams params;
  params.kind = "drop_tool_results";
  params.older_than_turns = older_than_turns;
  params.stub_tokens = stub_tokens;
  return testing::MustMake(params)->Plan(task);
}

PromptPiece StubOf(const PromptPiece& result, Tokens tokens) {
  return Piece(SpanKind::kToolResult, Stub(result.content.identity), 0, tokens);
}

// AgentTask (policy_test_util.h): tool results in turns 1 (200), 2 (300) and
// 3 (40). With older_than_turns 1, turn k stubs a result of turn t when
// k - t > 1:
//   turns 0-2: nothing is older than one turn         -> 180, 390, 710
//   turn 3: result1 (3-1 = 2) -> 8 tokens              -> 780 - 200 + 8 = 588
//   turn 4: result1 and result2 (4-2 = 2) -> 8 tokens  -> 820 - 500 + 16 = 336
TEST(DropToolResultsPolicyTest, StubsToolResultsOlderThanTheGivenTurns) {
  const AgentPieces a;
  const std::vector<Request> r = Plan(AgentTask("a"), 1, 8);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[2].prompt, (std::vector<PromptPiece>{a.sys, a.tools, a.user0, a.out0, a.result1,
                                                   a.out1, a.result2}));
  EXPECT_EQ(r[3].prompt,
            (std::vector<PromptPiece>{a.sys, a.tools, a.user0, a.out0, StubOf(a.result1, 8), a.out1,
                                      a.result2, a.out2, a.result3}));
  EXPECT_EQ(r[4].prompt,
            (std::vector<PromptPiece>{a.sys, a.tools, a.user0, a.out0, StubOf(a.result1, 8), a.out1,
                                      StubOf(a.result2, 8), a.out2, a.result3, a.out3, a.user4}));
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{180, 390, 710, 588, 336}));
}

// older_than_turns 0 stubs every result of an earlier turn, never the current
// turn's; a result no longer than the stub (result3, 40 <= 50) stays.
//   turn 1: result1 is the turn's own                  -> 390
//   turn 2: result1 -> 50                              -> 710 - 200 + 50 = 560
//   turn 3: result1, result2 -> 50                     -> 780 - 500 + 100 = 380
//   turn 4: result3 (40) is shorter than the stub      -> 820 - 500 + 100 = 420
TEST(DropToolResultsPolicyTest, ZeroTurnsStubsEveryEarlierResultButNotShortOnes) {
  const AgentPieces a;
  const std::vector<Request> r = Plan(AgentTask("a"), 0, 50);
  EXPECT_EQ(r[4].prompt, (std::vector<PromptPiece>{
                             a.sys, a.tools, a.user0, a.out0, StubOf(a.result1, 50), a.out1,
                             StubOf(a.result2, 50), a.out2, a.result3, a.out3, a.user4}));
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{180, 390, 560, 380, 420}));
}

// A stub of 0 tokens drops the results: 820 - 200 - 300 - 40 = 280 at turn 4.
TEST(DropToolResultsPolicyTest, ZeroStubTokensDropsTheResults) {
  const AgentPieces a;
  const std::vector<Request> r = Plan(AgentTask("a"), 0, 0);
  EXPECT_EQ(r[4].prompt, (std::vector<PromptPiece>{a.sys, a.tools, a.user0, a.out0, a.out1, a.out2,
                                                   a.out3, a.user4}));
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{180, 390, 510, 280, 280}));
}

TEST(DropToolResultsPolicyTest, StubsOfSharedResultsAreSharedAcrossTasks) {
  Task a = AgentTask("a");
  Task b = AgentTask("b");
  a.turns[1].spans[1].content_id = "readme";
  b.turns[1].spans[1].content_id = "readme";
  const std::vector<Request> ra = Plan(a, 1, 8);
  const std::vector<Request> rb = Plan(b, 1, 8);
  EXPECT_EQ(ra[3].prompt[4], StubOf(Piece(SpanKind::kToolResult, HashString("readme"), 0, 200), 8));
  EXPECT_EQ(ra[3].prompt[4], rb[3].prompt[4]);
}

// The stub at turn 3 sits at token 190 (150 + user0 30 + out0 10): the
// first 11 blocks of 16 (176 tokens) are the recorded prompt's, none after.
TEST(DropToolResultsPolicyTest, MissesFromTheFirstStubOn) {
  const std::vector<Request> all = Plan(AgentTask("a"), 1'000, 8);  // never stubs
  const std::vector<Request> dropped = Plan(AgentTask("a"), 1, 8);
  EXPECT_EQ(dropped[2].prompt, all[2].prompt);
  EXPECT_EQ(testing::SharedBlocks(all[3].prompt, dropped[3].prompt), 11u);
  // Turn 4 stubs result2 as well, at token 190 + 8 + 20 = 218: it keeps
  // 13 blocks (208 tokens) of turn 3's prompt.
  EXPECT_EQ(testing::SharedBlocks(dropped[3].prompt, dropped[4].prompt), 13u);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
