#include <gtest/gtest.h>

#include "kvbill/policy/context_policy.h"
#include "policy/policy_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::AgentPieces;
using testing::AgentTask;
using testing::CutFront;

std::vector<Request> Plan(const Task& task, Tokens window_tokens) {
  ContextPolicyParams params;
  params.kind = "sliding_window";
  params.window_tokens = window_tokens;
  return testing::MustMake(params)->Plan(task);
}

// AgentTask (policy_test_util.h) with a 300-token window after the 150
// leading system + tools tokens. The rest of each turn's context:
//   turn 0: user0 30                                     = 30, all kept
//   turn 1: 30 + out0 10 + result1 200                   = 240, all kept
//   turn 2: 240 + out1 20 + result2 300                  = 560, drop 260:
//           user0, out0, result1, out1 (30+10+200+20 = 260) go
//   turn 3: 560 + out2 30 + result3 40                   = 630, drop 330:
//           the same 260, then 70 of result2 (offset 70, 230 left)
//   turn 4: 630 + out3 15 + user4 25                     = 670, drop 370:
//           260, then 110 of result2 (offset 110, 190 left)
TEST(SlidingWindowPolicyTest, KeepsSystemAndToolsAndTheLastWindowTokens) {
  const AgentPieces a;
  const std::vector<Request> r = Plan(AgentTask("a"), 300);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[0].prompt, (std::vector<PromptPiece>{a.sys, a.tools, a.user0}));
  EXPECT_EQ(r[1].prompt, (std::vector<PromptPiece>{a.sys, a.tools, a.user0, a.out0, a.result1}));
  EXPECT_EQ(r[2].prompt, (std::vector<PromptPiece>{a.sys, a.tools, a.result2}));
  EXPECT_EQ(r[3].prompt,
            (std::vector<PromptPiece>{a.sys, a.tools, CutFront(a.result2, 70), a.out2, a.result3}));
  EXPECT_EQ(r[4].prompt, (std::vector<PromptPiece>{a.sys, a.tools, CutFront(a.result2, 110), a.out2,
                                                   a.result3, a.out3, a.user4}));
  EXPECT_EQ(testing::PromptTokensOf(r), (std::vector<Tokens>{180, 390, 450, 450, 450}));
}

TEST(SlidingWindowPolicyTest, MissesFromTheWindowStartOnAndKeepsTheSystemPrefix) {
  const std::vector<Request> all = Plan(AgentTask("a"), 1'000'000);  // never slides
  const std::vector<Request> window = Plan(AgentTask("a"), 300);
  // Turns 0 and 1 fit in the window: the recorded prompts.
  EXPECT_EQ(window[1].prompt, all[1].prompt);
  // From turn 2 the window starts at token 150: the first 9 blocks of 16
  // (144 tokens) are shared with the recorded prompt, none after.
  for (std::size_t k = 2; k < 5; ++k) {
    EXPECT_EQ(testing::SharedBlocks(all[k].prompt, window[k].prompt), 9u) << k;
  }
  // The window moves every turn, so a turn shares with the previous turn's
  // prompt only the system prefix again.
  EXPECT_EQ(testing::SharedBlocks(window[2].prompt, window[3].prompt), 9u);
}

TEST(SlidingWindowPolicyTest, PassesBlockHashesOnlyForTurnsItLeavesAlone) {
  Task task = AgentTask("a");
  BlockHashes blocks;
  blocks.hashes = {1};
  task.turns[1].blocks = blocks;
  task.turns[2].blocks = blocks;
  const std::vector<Request> r = Plan(task, 300);
  EXPECT_EQ(r[1].explicit_blocks, blocks);
  EXPECT_FALSE(r[2].explicit_blocks.has_value());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
