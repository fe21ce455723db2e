// SimulationConfig::pin_during_tool_s: a finished request's blocks stay
// referenced during its task's tool wait, until the task's next request is
// admitted or the pin expires; and a pin never holds a replica idle while
// requests wait (it gives way, oldest first). Times are worked by hand on a
// cost model whose every iteration takes 1 s.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "engine/engine_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::map<std::string, std::vector<RequestRecord>> ByTask(const SimulationResult& r) {
  std::map<std::string, std::vector<RequestRecord>> out;
  for (const RequestRecord& rec : r.requests) out[rec.task_id].push_back(rec);
  return out;
}

// One request of `prompt` user tokens and `output` output tokens.
Task OneTurn(const std::string& id, Seconds arrival, Tokens prompt, Tokens output) {
  Task t;
  t.id = id;
  t.arrival_s = arrival;
  Turn turn;
  turn.spans.push_back(Span{SpanKind::kUser, prompt, std::nullopt});
  turn.output = output;
  t.turns.push_back(turn);
  return t;
}

// Task "a" at 0: a 1,500-token prompt, 1 output token, a 10 s tool wait,
// then 1,600 tokens (+1 assistant, +99 tool). Task "b" at 1: one request of
// 1,800 tokens and 1 output token. Blocks of 16 tokens.
std::vector<Task> Tasks() {
  return {LoopTask("a", 2, 1500, 99, 1, 10.0), OneTurn("b", 1, 1800, 1)};
}

SimulationConfig PinConfig(Tokens capacity_tokens) {
  SimulationConfig c = Config("qwen3-8b");
  c.cost_model = std::make_shared<ContextCost>(1.0, 0.0);
  c.capacity_tokens = capacity_tokens;
  c.pin_during_tool_s = 30;
  return c;
}

// A pool of 2,048 tokens = 128 blocks.
//   [0, 1]  a's prefill: its token at 1, a finishes at 1 and pins
//           ceil(1,500 / 16) = 94 blocks until 31.
//   at 1    b (1,800 tokens) needs ceil(1,800 / 16) = 113 blocks; 34 are
//           free and nothing else runs. Held, the pin would leave the replica
//           idle until 31 (b's first token at 32). It gives way: a's blocks
//           become evictable and b is admitted at 1.
//   [1, 2]  b's prefill: first token (and finish) at 2; TTFT 1 s.
//   at 11   a's second request (sent 10 s after a finished) is admitted at
//           once: first token at 12, TTFT 1 s.
TEST(PinTest, APinGivesWayRatherThanHoldAReplicaIdleWithRequestsWaiting) {
  SimulationConfig c = PinConfig(2048);
  const SimulationResult event = RunBothModes(c, Tasks(), /*skips=*/false);
  auto r = ByTask(event);
  ASSERT_EQ(r["a"].size(), 2u);
  ASSERT_EQ(r["b"].size(), 1u);
  EXPECT_DOUBLE_EQ(r["b"][0].release_s, 1);
  EXPECT_DOUBLE_EQ(r["b"][0].first_token_s, 2);
  EXPECT_DOUBLE_EQ(r["a"][1].release_s, 11);
  EXPECT_DOUBLE_EQ(r["a"][1].first_token_s, 12);
  EXPECT_EQ(event.pins_yielded, 1);
  EXPECT_DOUBLE_EQ(event.simulated_s, 12);
}

// A pool of 4,096 tokens = 256 blocks: a's 94 pinned blocks and b's 113 fit
// together, so the pin holds (none gives way) and a's second request finds
// its first prompt's 93 full blocks (1,488 tokens) cached.
TEST(PinTest, APinHoldsWhileThePoolHasRoom) {
  const SimulationResult run = RunSim(PinConfig(4096), Tasks());
  auto r = ByTask(run);
  ASSERT_EQ(r["a"].size(), 2u);
  EXPECT_EQ(run.pins_yielded, 0);
  EXPECT_DOUBLE_EQ(r["b"][0].first_token_s, 2);
  EXPECT_EQ(r["a"][1].cached_tokens, 1488);
}

// While another request runs, the pin holds: task "c" (at 0, 320 tokens,
// 30 output tokens) runs [0, 30] beside a (pool 128 blocks; c holds
// ceil(349 / 16) = 22 blocks at most). b, at 1, needs 113 blocks and finds
// at most 128 - 94 - 20 = 14 free, so it waits while c decodes; a's second
// request (at 11) waits behind it, first come first served. At 30 c
// finishes and frees its blocks: 34 free, still short of 113, and nothing
// runs, so the pin gives way and b is admitted at 30 (first token at 31).
TEST(PinTest, APinHoldsWhileAnotherRequestRuns) {
  SimulationConfig c = PinConfig(2048);
  std::vector<Task> tasks = Tasks();
  tasks.push_back(OneTurn("c", 0, 320, 30));
  const SimulationResult event = RunBothModes(c, tasks);
  auto r = ByTask(event);
  ASSERT_EQ(r["c"].size(), 1u);
  // c: prefill [0, 1] gives its first token, 29 decode steps end at 30.
  EXPECT_DOUBLE_EQ(r["c"][0].finish_s, 30);
  EXPECT_DOUBLE_EQ(r["b"][0].admitted_s, 30);
  EXPECT_DOUBLE_EQ(r["b"][0].first_token_s, 31);
  EXPECT_EQ(event.pins_yielded, 1);
}

// A pin never stalls the replica's only sequence either: a pool of 256
// tokens = 16 blocks, a pin of 300 s. Task "a" at 0: 128 prompt tokens, 1
// output token, a 200-s tool wait, then 1 + 99 more; task "c" at 0: 16
// prompt tokens, 150 output tokens.
//   [0, 1]   both prefill (a 8 blocks, c 1); a finishes at 1 and pins its
//            ceil(128 / 16) = 8 blocks until its next request (at 201).
//   c decodes alone, one token a second: its 150th at 150. It stores up to
//   16 + 149 = 165 tokens, 11 blocks, where 16 - 8 = 8 are not pinned. Short
//   of its 9th block, it once preempted itself (nothing else to preempt),
//   was readmitted at once and preempted again, thousands of times, until
//   a's next request dropped the pin; now the pin gives way (its blocks stay
//   cached, evictable) and c runs on: no preemption, finished at 150.
//   c takes 3 of a's 8 blocks (11 - 8 free), the tail's first: a's second
//   request (at 201, 228 tokens) finds 5 blocks, 80 tokens, cached.
TEST(PinTest, APinGivesWayBeforeTheOnlyRunningSequencePreemptsItself) {
  SimulationConfig c = PinConfig(256);
  c.pin_during_tool_s = 300;
  const std::vector<Task> tasks = {LoopTask("a", 2, 128, 99, 1, 200.0), OneTurn("c", 0, 16, 150)};
  const SimulationResult event = RunBothModes(c, tasks);
  auto r = ByTask(event);
  ASSERT_EQ(r["a"].size(), 2u);
  ASSERT_EQ(r["c"].size(), 1u);
  EXPECT_EQ(r["c"][0].preemptions, 0);
  EXPECT_DOUBLE_EQ(r["c"][0].finish_s, 150);
  EXPECT_EQ(event.pins_yielded, 1);
  EXPECT_DOUBLE_EQ(r["a"][1].release_s, 201);
  EXPECT_EQ(r["a"][1].cached_tokens, 80);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
