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

std::vector<Request> Plan(const Task& task, Tokens sink_tokens, Tokens recent_tokens) {
  ContextPolicyParams params;
  params.kind = "sinks_recent";
  params.sink_tokens = sink_tokens;
  params.recent_tokens = recent_tokens;
  return testing::MustMake(params)->Plan(task);
}

// AgentTask (policy_test_util.h), 120 sink and 200 recent tokens (320 in all).
// The sinks are sys 100 and the first 20 tokens of tools. The recent window
// drops the first (context - 200) tokens:
//   turn 0: 180 fits                                     -> unchanged
//   turn 1: 390, drop 190: sys, tools, user0, out0 (190) -> result1 whole
//   turn 2: 710, drop 510: ... out1 (410), then 100 of result2
//   turn 3: 780, drop 580: 410, then 170 of result2; out2, result3
//   turn 4: 820, drop 620: 410, then 210 of result2; out2, result3, out3, user4
TEST(SinksRecentPolicyTest, KeepsTheFirstSinkAndTheLastRecentTokens) {
  const AgentPieces a;
  const PromptPiece sinks_tools = CutTo(a.tools, 20);
  const std::vector<Request> r = Plan(AgentTask("a"), 120, 200);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].prompt, (std::vector<PromptPiece>{a.sys, a.tools, a.user0}));
  EXPECT_EQ(r[1].prompt, (std::vector<PromptPiece>{a.sys, sinks_tools, a.result1}));
  EXPECT_EQ(r[2].prompt, (std::vector<PromptPiece>{a.sys, sinks_tools, CutFront(a.result2, 100)}));
  EXPECT_EQ(r[3].prompt, (std::vector<PromptPiece>{a.sys, sinks_tools, CutFront(a.result2, 170),
                                                   a.out2, a.result3}));
  EXPECT_EQ(r[4].prompt, (std::vector<PromptPiece>{a.sys, sinks_tools, CutFront(a.result2, 210),
                                                   a.out2, a.result3, a.out3, a.user4}));
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{180, 320, 320, 320, 320}));
}

TEST(SinksRecentPolicyTest, WithoutSinksKeepsOnlyTheRecentTokens) {
  const AgentPieces a;
  const std::vector<Request> r = Plan(AgentTask("a"), 0, 200);
  EXPECT_EQ(r[1].prompt, (std::vector<PromptPiece>{a.result1}));
  EXPECT_EQ(r[0].prompt, (std::vector<PromptPiece>{a.sys, a.tools, a.user0}));  // 180 fits
}

// The sinks are a stable prefix: 7 blocks of 16 (112 of the 120 tokens) are
// shared with the recorded prompt and between consecutive turns.
TEST(SinksRecentPolicyTest, KeepsTheSinksCachedAndMissesAfterThem) {
  const std::vector<Request> all = Plan(AgentTask("a"), 0, 1'000'000);  // never cuts
  const std::vector<Request> sinks = Plan(AgentTask("a"), 120, 200);
  EXPECT_EQ(sinks[0].prompt, all[0].prompt);
  for (std::size_t k = 1; k < 5; ++k) {
    EXPECT_EQ(testing::SharedBlocks(all[k].prompt, sinks[k].prompt), 7u) << k;
    EXPECT_EQ(testing::SharedBlocks(sinks[k - 1].prompt, sinks[k].prompt), 7u) << k;
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
