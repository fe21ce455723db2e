#include "kvbill/policy/context_policy.h"

#include <gtest/gtest.h>

#include "policy/policy_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::AgentPieces;
using testing::AgentTask;
using testing::CutTo;
using testing::MakeError;
using testing::MakeSpan;
using testing::MakeTurn;
using testing::MustMake;
using testing::Piece;
using testing::Shared;
using testing::Unique;

std::vector<Request> PlanKeepAll(const Task& task) {
  ContextPolicyParams params;
  return MustMake(params)->Plan(task);
}

TEST(ContextPolicyTest, NamesTheFivePoliciesInTableOrder) {
  EXPECT_EQ(ContextPolicyNames(),
            (std::vector<std::string>{"keep_all", "sliding_window", "drop_tool_results",
                                      "summarise", "sinks_recent"}));
}

TEST(ContextPolicyTest, RejectsAnUnknownPolicyListingTheKnownOnes) {
  ContextPolicyParams params;
  params.kind = "lru";
  EXPECT_EQ(MakeError(params),
            "context_policy: unknown policy \"lru\" (known: keep_all, sliding_window, "
            "drop_tool_results, summarise, sinks_recent)");
}

TEST(ContextPolicyTest, ParameterErrorsNameThePolicyAndTheParameter) {
  ContextPolicyParams p;
  p.kind = "sliding_window";
  EXPECT_EQ(MakeError(p), "context_policy: sliding_window: window_tokens must be positive, got 0");
  p.window_tokens = -3;
  EXPECT_EQ(MakeError(p), "context_policy: sliding_window: window_tokens must be positive, got -3");
  p.window_tokens = 1;
  EXPECT_EQ(MakeError(p), "ok");

  p = ContextPolicyParams();
  p.kind = "drop_tool_results";
  EXPECT_EQ(MakeError(p), "ok");  // older_than_turns 0 and stub_tokens 0 are meaningful
  p.older_than_turns = -1;
  EXPECT_EQ(MakeError(p),
            "context_policy: drop_tool_results: older_than_turns must be non-negative, got -1");
  p.older_than_turns = 2;
  p.stub_tokens = -8;
  EXPECT_EQ(MakeError(p),
            "context_policy: drop_tool_results: stub_tokens must be non-negative, got -8");

  p = ContextPolicyParams();
  p.kind = "summarise";
  EXPECT_EQ(MakeError(p), "context_policy: summarise: threshold_tokens must be positive, got 0");
  p.threshold_tokens = 4000;
  EXPECT_EQ(MakeError(p), "context_policy: summarise: summary_tokens must be positive, got 0");
  p.summary_tokens = 1000;
  p.keep_recent_tokens = -1;
  EXPECT_EQ(MakeError(p),
            "context_policy: summarise: keep_recent_tokens must be non-negative, got -1");
  p.keep_recent_tokens = 3000;  // 3000 + 1000 is not below 4000: every turn would summarise
  EXPECT_EQ(MakeError(p),
            "context_policy: summarise: keep_recent_tokens + summary_tokens must be below "
            "threshold_tokens, got 3000 + 1000 >= 4000");
  p.keep_recent_tokens = 2999;
  EXPECT_EQ(MakeError(p), "ok");

  p = ContextPolicyParams();
  p.kind = "sinks_recent";
  EXPECT_EQ(MakeError(p), "context_policy: sinks_recent: recent_tokens must be positive, got 0");
  p.recent_tokens = 512;
  EXPECT_EQ(MakeError(p), "ok");  // no sinks: a window over the whole context
  p.sink_tokens = -4;
  EXPECT_EQ(MakeError(p), "context_policy: sinks_recent: sink_tokens must be non-negative, got -4");
}

TEST(ContextPolicyTest, IgnoresTheParametersOfOtherPolicies) {
  ContextPolicyParams p;
  p.window_tokens = -1;
  p.threshold_tokens = -1;
  EXPECT_EQ(MakeError(p), "ok");
}

TEST(ContextPolicyTest, OutputIdentityFollowsTheHeaderFormula) {
  EXPECT_EQ(OutputIdentity("a", 3), HashCombine(HashString("a"), HashCombine(3, 0x6f7574)));
  EXPECT_NE(OutputIdentity("a", 3), OutputIdentity("a", 4));
  EXPECT_NE(OutputIdentity("a", 3), OutputIdentity("b", 3));
}

TEST(ContextPolicyTest, PromptTokensSumThePieces) {
  Request request;
  EXPECT_EQ(request.PromptTokens(), 0);
  request.prompt = {Piece(SpanKind::kSystem, 1, 0, 100), Piece(SpanKind::kUser, 2, 7, 23)};
  EXPECT_EQ(request.PromptTokens(), 123);
}

TEST(KeepAllPolicyTest, SendsTheRecordedContextWithTheIdentityRules) {
  const AgentPieces a;
  const std::vector<Request> requests = PlanKeepAll(AgentTask("a"));
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_EQ(requests[0].prompt, (std::vector<PromptPiece>{a.sys, a.tools, a.user0}));
  EXPECT_EQ(requests[1].prompt,
            (std::vector<PromptPiece>{a.sys, a.tools, a.user0, a.out0, a.result1}));
  EXPECT_EQ(requests[4].prompt,
            (std::vector<PromptPiece>{a.sys, a.tools, a.user0, a.out0, a.result1, a.out1, a.result2,
                                      a.out2, a.result3, a.out3, a.user4}));
  // 180; +10+200; +20+300; +30+40; +15+25.
  EXPECT_EQ(testing::PromptTokensOf(requests), (std::vector<Tokens>{180, 390, 710, 780, 820}));
}

TEST(KeepAllPolicyTest, CarriesEachTurnsFields) {
  Task task = AgentTask("a");
  RecordedUsage usage;
  usage.input = 5;
  usage.cache_read = 175;
  usage.output = 10;
  task.turns[0].usage = usage;
  const std::vector<Request> requests = PlanKeepAll(task);
  for (int k = 0; k < 5; ++k) {
    const Request& r = requests[static_cast<std::size_t>(k)];
    EXPECT_EQ(r.task_id, "a");
    EXPECT_EQ(r.index, k);
    EXPECT_EQ(r.turn, k);
    EXPECT_FALSE(r.is_summary);
    EXPECT_EQ(r.output, task.turns[static_cast<std::size_t>(k)].output);
    EXPECT_EQ(r.output_identity, OutputIdentity("a", k));
    EXPECT_EQ(r.tool_s, k + 1);
    EXPECT_EQ(r.recorded_time_s, 10.0 * k);
    EXPECT_FALSE(r.explicit_blocks.has_value());
  }
  EXPECT_EQ(requests[0].usage, usage);
  EXPECT_FALSE(requests[1].usage.has_value());
}

TEST(KeepAllPolicyTest, PassesExplicitBlockHashesThrough) {
  Task task = AgentTask("a");
  BlockHashes blocks;
  blocks.block_size = 64;
  blocks.hashes = {11, 12, 13};
  task.turns[1].blocks = blocks;
  const std::vector<Request> requests = PlanKeepAll(task);
  EXPECT_FALSE(requests[0].explicit_blocks.has_value());
  EXPECT_EQ(requests[1].explicit_blocks, blocks);
}

TEST(KeepAllPolicyTest, SharesContentIdsAcrossTasksAndKeepsUniqueSpansApart) {
  const std::vector<Request> a = PlanKeepAll(AgentTask("a"));
  const std::vector<Request> b = PlanKeepAll(AgentTask("b"));
  // The system prompt and tool definitions are the same content in both.
  EXPECT_EQ(a[0].prompt[0], b[0].prompt[0]);
  EXPECT_EQ(a[0].prompt[1], b[0].prompt[1]);
  EXPECT_EQ(a[0].prompt[0].content.identity, Shared("sys"));
  // Spans without an id: unique per task, per turn, per span.
  EXPECT_EQ(b[0].prompt[2].content.identity, Unique("b", 0, 2));
  EXPECT_NE(a[0].prompt[2].content.identity, b[0].prompt[2].content.identity);
  EXPECT_NE(a[1].prompt[4].content.identity, a[2].prompt[6].content.identity);
  EXPECT_EQ(a[1].prompt[4].content.identity, Unique("a", 1, 1));
  // Answers are the task's own outputs.
  EXPECT_EQ(b[1].prompt[3].content.identity, OutputIdentity("b", 0));
  EXPECT_NE(a[1].prompt[3].content.identity, b[1].prompt[3].content.identity);
}

TEST(KeepAllPolicyTest, MapsOnlyAnAnswerThatDirectlyFollowsThePreviousPrompt) {
  Task task;
  task.id = "m";
  task.turns = {
      MakeTurn({MakeSpan(SpanKind::kUser, 40)}, 10),
      // Directly after the prompt, exactly the 10 output tokens: the output.
      MakeTurn({MakeSpan(SpanKind::kAssistant, 10), MakeSpan(SpanKind::kUser, 5)}, 8),
      // 7 tokens, not the 8 generated: an answer edited by the client.
      MakeTurn({MakeSpan(SpanKind::kAssistant, 7)}, 6),
      // Not the first span.
      MakeTurn({MakeSpan(SpanKind::kUser, 3), MakeSpan(SpanKind::kAssistant, 6)}, 4),
      // The turn dropped the end of the previous prompt first.
      MakeTurn({MakeSpan(SpanKind::kAssistant, 4)}, 2, /*keep=*/60),
      // keep equal to the whole previous prompt (64) drops nothing.
      MakeTurn({MakeSpan(SpanKind::kAssistant, 2)}, 1, /*keep=*/64),
      // A content id is the trace's own statement of identity.
      MakeTurn({MakeSpan(SpanKind::kAssistant, 1, "canned")}, 1),
  };
  ASSERT_TRUE(ValidateTask(task).ok());
  const std::vector<Request> r = PlanKeepAll(task);
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[1].prompt[1], Piece(SpanKind::kAssistant, OutputIdentity("m", 0), 0, 10));
  EXPECT_EQ(r[2].prompt[3], Piece(SpanKind::kAssistant, Unique("m", 2, 0), 0, 7));
  EXPECT_EQ(r[3].prompt[5], Piece(SpanKind::kAssistant, Unique("m", 3, 1), 0, 6));
  EXPECT_EQ(r[4].prompt.back(), Piece(SpanKind::kAssistant, Unique("m", 4, 0), 0, 4));
  EXPECT_EQ(r[5].prompt.back(), Piece(SpanKind::kAssistant, OutputIdentity("m", 4), 0, 2));
  EXPECT_EQ(r[6].prompt.back(), Piece(SpanKind::kAssistant, Shared("canned"), 0, 1));
}

TEST(KeepAllPolicyTest, KeepCutsThePreviousPromptFromItsEnd) {
  Task task;
  task.id = "k";
  task.turns = {
      // An empty span adds no piece but still counts in the span index.
      MakeTurn({MakeSpan(SpanKind::kSystem, 100, "sys"), MakeSpan(SpanKind::kUser, 0),
                MakeSpan(SpanKind::kUser, 50)},
               10),
      MakeTurn({MakeSpan(SpanKind::kUser, 30)}, 10, /*keep=*/120),
      MakeTurn({MakeSpan(SpanKind::kSummary, 20)}, 10, /*keep=*/90),
      MakeTurn({MakeSpan(SpanKind::kUser, 5)}, 10, /*keep=*/0),
  };
  ASSERT_TRUE(ValidateTask(task).ok());
  const PromptPiece sys = Piece(SpanKind::kSystem, Shared("sys"), 0, 100);
  const PromptPiece user0 = Piece(SpanKind::kUser, Unique("k", 0, 2), 0, 50);
  const PromptPiece user1 = Piece(SpanKind::kUser, Unique("k", 1, 0), 0, 30);
  const std::vector<Request> r = PlanKeepAll(task);
  EXPECT_EQ(r[0].prompt, (std::vector<PromptPiece>{sys, user0}));
  // keep 120: the system prompt and the first 20 tokens of the user span.
  EXPECT_EQ(r[1].prompt, (std::vector<PromptPiece>{sys, CutTo(user0, 20), user1}));
  // keep 90: the first 90 tokens of the system prompt.
  EXPECT_EQ(r[2].prompt, (std::vector<PromptPiece>{
                             CutTo(sys, 90), Piece(SpanKind::kSummary, Unique("k", 2, 0), 0, 20)}));
  EXPECT_EQ(r[3].prompt,
            (std::vector<PromptPiece>{Piece(SpanKind::kUser, Unique("k", 3, 0), 0, 5)}));
  // The same numbers as the trace's own prompt formula.
  EXPECT_EQ(testing::PromptTokensOf(r), PromptTokens(task));
}

TEST(ContextPolicyTest, EveryPolicyIsDeterministic) {
  std::vector<ContextPolicyParams> all(5);
  all[1].kind = "sliding_window";
  all[1].window_tokens = 300;
  all[2].kind = "drop_tool_results";
  all[2].older_than_turns = 1;
  all[2].stub_tokens = 8;
  all[3].kind = "summarise";
  all[3].threshold_tokens = 700;
  all[3].summary_tokens = 40;
  all[3].keep_recent_tokens = 100;
  all[4].kind = "sinks_recent";
  all[4].sink_tokens = 120;
  all[4].recent_tokens = 200;
  const Task task = AgentTask("a");
  for (const ContextPolicyParams& params : all) {
    SCOPED_TRACE(params.kind);
    const std::vector<Request> first = MustMake(params)->Plan(task);
    const std::unique_ptr<ContextPolicy> policy = MustMake(params);
    const std::vector<Request> second = policy->Plan(task);
    const std::vector<Request> third = policy->Plan(task);
    ASSERT_EQ(first.size(), second.size());
    for (std::size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ(first[i].prompt, second[i].prompt);
      EXPECT_EQ(first[i].output_identity, second[i].output_identity);
      EXPECT_EQ(second[i].prompt, third[i].prompt);
    }
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
