#include "kvbill/engine/router.h"

#include <gtest/gtest.h>

#include <vector>

#include "engine/engine_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using Loads = std::vector<std::int64_t>;

TEST(RouterTest, RoundRobinTakesReplicasInTurn) {
  auto router = MakeRouter(RouterKind::kRoundRobin, 3, 256);
  int task = -1;
  std::vector<int> got;
  for (int i = 0; i < 5; ++i) got.push_back(router->Route(Loads{9, 0, 0}, &task));
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 0, 1}));
  EXPECT_EQ(task, -1);  // no stickiness
}

TEST(RouterTest, PrefixAffinityCountsTasksAndKeepsEachOnItsReplica) {
  auto router = MakeRouter(RouterKind::kPrefixAffinity, 3, 256);
  int a = -1, b = -1, c = -1;
  EXPECT_EQ(router->Route(Loads{0, 0, 0}, &a), 0);
  EXPECT_EQ(router->Route(Loads{1, 0, 0}, &b), 1);
  EXPECT_EQ(router->Route(Loads{5, 5, 0}, &a), 0);  // a stays, whatever the load
  EXPECT_EQ(router->Route(Loads{5, 5, 0}, &c), 2);
  EXPECT_EQ(router->Route(Loads{5, 5, 0}, &b), 1);
}

TEST(RouterTest, LeastLoadedTakesTheFewestRequestsLowestIndexOnTies) {
  auto router = MakeRouter(RouterKind::kLeastLoaded, 3, 256);
  int task = -1;
  EXPECT_EQ(router->Route(Loads{3, 1, 1}, &task), 1);
  EXPECT_EQ(router->Route(Loads{0, 1, 0}, &task), 0);
  EXPECT_EQ(router->Route(Loads{2, 2, 1}, &task), 2);
}

TEST(RouterTest, SessionAffinityStaysBelowTheCapAndMovesWithTheSession) {
  auto router = MakeRouter(RouterKind::kSessionAffinity, 3, 4);
  int s = -1;
  EXPECT_EQ(router->Route(Loads{2, 0, 1}, &s), 1);  // first request: least loaded
  EXPECT_EQ(s, 1);
  EXPECT_EQ(router->Route(Loads{0, 3, 0}, &s), 1);  // 3 < 4: stays
  EXPECT_EQ(router->Route(Loads{2, 4, 0}, &s), 2);  // at the cap: moves to the least loaded
  EXPECT_EQ(s, 2);
  EXPECT_EQ(router->Route(Loads{0, 0, 3}, &s), 2);  // and stays there
}

TEST(RouterTest, NamesParseAndUnknownOnesAreErrors) {
  for (RouterKind k : {RouterKind::kRoundRobin, RouterKind::kPrefixAffinity,
                       RouterKind::kLeastLoaded, RouterKind::kSessionAffinity}) {
    auto parsed = ParseRouterKind(RouterName(k));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, k);
  }
  auto bad = ParseRouterKind("random");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "unknown router \"random\" (one of "
            "round_robin|prefix_affinity|least_loaded|session_affinity)");
}

int ReplicaOf(const SimulationResult& r, const std::string& task, int index = 0) {
  for (const RequestRecord& rec : r.requests) {
    if (rec.task_id == task && rec.index == index) return rec.replica;
  }
  return -1;
}

// Two replicas. A (a long answer) arrives at 0 and goes to replica 0, B (a
// short one) to replica 1; B is done within a second, A is not. C arrives
// at 5 s: round robin sends it to replica 0 (its third request), least
// loaded to replica 1, which is empty.
TEST(RouterTest, LeastLoadedSendsARequestToTheIdleReplica) {
  const std::vector<Task> tasks = {OneRequest("A", 0, 20000), OneRequest("B", 0, 10),
                                   OneRequest("C", 5, 10)};
  SimulationConfig c = Config("llama-3.1-8b");
  c.replicas = 2;
  const SimulationResult rr = RunSim(c, tasks);
  c.router = RouterKind::kLeastLoaded;
  const SimulationResult ll = RunSim(c, tasks);
  for (const SimulationResult* r : {&rr, &ll}) {
    for (const RequestRecord& rec : r->requests) {
      if (rec.task_id == "B") {
        EXPECT_LT(rec.finish_s, 5.0);  // B is done before C arrives
      }
      if (rec.task_id == "A") {
        EXPECT_GT(rec.finish_s, 5.0);  // A is not
      }
    }
  }
  EXPECT_EQ(ReplicaOf(rr, "A"), 0);
  EXPECT_EQ(ReplicaOf(rr, "B"), 1);
  EXPECT_EQ(ReplicaOf(rr, "C"), 0);
  EXPECT_EQ(ReplicaOf(ll, "A"), 0);
  EXPECT_EQ(ReplicaOf(ll, "B"), 1);
  EXPECT_EQ(ReplicaOf(ll, "C"), 1);
}

// Six tasks sent at the same instant to three replicas whose API servers
// take 0.25 s a request: each is routed the moment it is sent, while those
// before it are still in an API server. Counted as load there, they spread
// 2/2/2 (least loaded: replica 0, 1, 2, 0, 1, 2 as ties go to the lowest
// index); not counted, all six would go to replica 0, whose scheduler had
// seen none of them yet. Session affinity routes a task's first request the
// same way.
TEST(RouterTest, RequestsInTheApiServerCountAsLoad) {
  std::vector<Task> tasks;
  for (int i = 0; i < 6; ++i) tasks.push_back(OneRequest("T" + std::to_string(i), 0, 10));
  SimulationConfig c = Config("llama-3.1-8b");
  c.replicas = 3;
  c.frontend_per_request_s = 0.25;
  for (const RouterKind kind : {RouterKind::kLeastLoaded, RouterKind::kSessionAffinity}) {
    c.router = kind;
    const SimulationResult r = RunSim(c, tasks);
    std::vector<int> per_replica(3, 0);
    for (const RequestRecord& rec : r.requests)
      ++per_replica[static_cast<std::size_t>(rec.replica)];
    EXPECT_EQ(per_replica, (std::vector<int>{2, 2, 2})) << RouterName(kind);
    for (int i = 0; i < 6; ++i) EXPECT_EQ(ReplicaOf(r, "T" + std::to_string(i)), i % 3);
  }
}

// Session affinity with a cap of max_num_seqs = 1 request per replica. S
// (three turns, 1 s tool waits) starts on replica 0; X (short) goes to
// replica 1 and Y (long) to replica 0, where it waits behind S's first turn.
// When S's second turn is released, replica 0 holds Y (1 request, the cap)
// and replica 1 nothing: the session moves to replica 1 and stays there for
// its third turn. Prefix affinity keeps S on replica 0 throughout.
TEST(RouterTest, SessionAffinityLeavesAReplicaAtTheLoadCap) {
  std::vector<Task> tasks = {LoopTask("S", 3, 2000, 100, 50, 1.0, 0), OneRequest("X", 0.001, 10),
                             OneRequest("Y", 0.002, 20000)};
  SimulationConfig c = Config("llama-3.1-8b");
  c.replicas = 2;
  c.max_num_seqs = 1;
  c.router = RouterKind::kSessionAffinity;
  const SimulationResult sa = RunSim(c, tasks);
  EXPECT_EQ(ReplicaOf(sa, "S", 0), 0);
  EXPECT_EQ(ReplicaOf(sa, "X"), 1);
  EXPECT_EQ(ReplicaOf(sa, "Y"), 0);
  EXPECT_EQ(ReplicaOf(sa, "S", 1), 1);
  EXPECT_EQ(ReplicaOf(sa, "S", 2), 1);
  c.router = RouterKind::kPrefixAffinity;
  const SimulationResult pa = RunSim(c, tasks);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ReplicaOf(pa, "S", i), 0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
