// SimulationConfig::client_max_tasks: a client that keeps at most N tasks
// in flight. A task arriving at the cap waits at the client, first come
// first served, and is sent when one finishes; its release time is when it
// was sent, so the wait is in no latency. Times are worked by hand on a cost
// model whose every iteration takes 1 s, whatever it computes.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>

#include "engine/engine_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::map<std::string, RequestRecord> ByTask(const SimulationResult& r) {
  std::map<std::string, RequestRecord> out;
  for (const RequestRecord& rec : r.requests) out[rec.task_id] = rec;
  return out;
}

// Four requests of 1,000-token prompts arriving every 0.5 s (A at 0 with 2
// output tokens, B at 0.5 with 4, C at 1.0 with 2, D at 1.5 with 2), at most
// two in flight. Each iteration takes 1 s; a prompt fits one (8,192-token
// budget); the iteration that completes a prefill gives the first token,
// every later one a token to each decoding request.
//   [0, 1]  A's prefill: A's first token at 1. B arrived at 0.5 (2 in flight).
//   [1, 2]  A decodes (its 2nd token: A ends at 2), B's prefill (first at 2).
//           C (1.0) and D (1.5) wait at the client: A and B are in flight.
//   [2, 3]  A ended: C is sent at 2. B decodes (2nd), C's prefill (first at 3).
//   [3, 4]  B decodes (3rd), C decodes (2nd: C ends at 4).
//   [4, 5]  C ended: D is sent at 4. B decodes (4th: B ends at 5), D's prefill
//           (first at 5).
//   [5, 6]  D decodes (2nd: D ends at 6).
// TTFT (first token - sent): A 1, B 1.5, C 1, D 1; the client-side waits of
// C (1 s) and D (2.5 s) are in none of them.
TEST(ClientCapTest, TasksOverTheCapWaitAtTheClientAndAreSentWhenOneFinishes) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.cost_model = std::make_shared<ContextCost>(1.0, 0.0);
  c.client_max_tasks = 2;
  const std::vector<Task> tasks = {OneRequest("A", 0, 2), OneRequest("B", 0.5, 4),
                                   OneRequest("C", 1.0, 2), OneRequest("D", 1.5, 2)};
  c.step_mode = false;
  const SimulationResult event = RunSim(c, tasks);
  c.step_mode = true;
  const SimulationResult step = RunSim(c, tasks);
  ExpectSameRuns(event, step);
  auto r = ByTask(event);
  ASSERT_EQ(r.size(), 4u);
  const std::map<std::string, std::array<double, 3>> expected = {// sent, first token, finish
                                                                 {"A", {0, 1, 2}},
                                                                 {"B", {0.5, 2, 5}},
                                                                 {"C", {2, 3, 4}},
                                                                 {"D", {4, 5, 6}}};
  for (const auto& [id, times] : expected) {
    SCOPED_TRACE(id);
    EXPECT_DOUBLE_EQ(r[id].release_s, times[0]);
    EXPECT_DOUBLE_EQ(r[id].first_token_s, times[1]);
    EXPECT_DOUBLE_EQ(r[id].finish_s, times[2]);
  }
  EXPECT_DOUBLE_EQ(event.simulated_s, 6);

  // Without the cap C goes at its arrival (1.0) and rides [1, 2] with A and B.
  c.client_max_tasks = 0;
  c.step_mode = false;
  auto free = ByTask(RunSim(c, tasks));
  EXPECT_DOUBLE_EQ(free["C"].release_s, 1.0);
  EXPECT_DOUBLE_EQ(free["C"].first_token_s, 2.0);
}

// A cap on several replicas: a task held at the client starts when a
// request on any replica finishes, so event skipping must stop there too.
TEST(ClientCapTest, EventSkippingEqualsStepModeWithTheCapOnTwoReplicas) {
  SimulationConfig c = Config("qwen3-8b");
  c.replicas = 2;
  c.client_max_tasks = 3;
  const std::vector<Task> tasks = PresetTasks("coding-agent", 2.0, 7, 24);
  const SimulationResult r = RunBothModes(c, tasks);
  // Never more than 3 tasks in flight: at each send, count the tasks sent
  // before it and not yet done (a task is done when its last request ends).
  std::map<std::string, std::pair<Seconds, Seconds>> span;  // first send, last finish
  for (const RequestRecord& rec : r.requests) {
    auto [it, fresh] = span.emplace(rec.task_id, std::make_pair(rec.release_s, rec.finish_s));
    if (!fresh) {
      it->second.first = std::min(it->second.first, rec.release_s);
      it->second.second = std::max(it->second.second, rec.finish_s);
    }
  }
  ASSERT_EQ(span.size(), tasks.size());
  for (const auto& [id, s] : span) {
    int in_flight = 0;
    for (const auto& [other, o] : span) {
      if (other != id && o.first <= s.first && o.second > s.first) ++in_flight;
    }
    EXPECT_LE(in_flight, 2) << id << " sent at " << s.first;
  }
  // And the cap bit: some task was sent after it arrived.
  int waited = 0;
  for (const Task& t : tasks) {
    waited += span[t.id].first > t.arrival_s - tasks.front().arrival_s + 1e-9 ? 1 : 0;
  }
  EXPECT_GT(waited, 0);
}

TEST(ClientCapTest, ANegativeCapIsRefused) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.client_max_tasks = -1;
  const std::vector<Task> tasks = {OneRequest("A", 0, 2)};
  auto r = Simulate(c, tasks, PlanAll(tasks));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("client_max_tasks"), std::string::npos);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
