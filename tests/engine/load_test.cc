// trace.load: the gaps between task starts divided by the load factor, the
// gaps within a task kept (SimulationConfig::load).
#include <gtest/gtest.h>

#include <map>

#include "engine/engine_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Release times of each task's requests, by task id.
std::map<std::string, std::vector<Seconds>> Releases(const SimulationResult& r) {
  std::map<std::string, std::vector<Seconds>> out;
  for (const RequestRecord& rec : r.requests) {
    auto& v = out[rec.task_id];
    if (v.size() <= static_cast<std::size_t>(rec.index)) v.resize(rec.index + 1);
    v[static_cast<std::size_t>(rec.index)] = rec.release_s;
  }
  return out;
}

std::vector<Task> ThreeTasks() {
  // Arrivals 100, 110 and 130 s on the trace clock: gaps of 10 and 20 s.
  // Two turns each, 5 s of tool wait between them.
  return {LoopTask("a", 2, 1000, 100, 20, 5.0, 100), LoopTask("b", 2, 1000, 100, 20, 5.0, 110),
          LoopTask("c", 2, 1000, 100, 20, 5.0, 130)};
}

TEST(LoadTest, LoadTwoHalvesTheGapsBetweenTaskStarts) {
  SimulationConfig c = Config("qwen3-8b");
  const std::vector<Task> tasks = ThreeTasks();
  for (double load : {1.0, 2.0, 0.5}) {
    SCOPED_TRACE("load " + std::to_string(load));
    c.load = load;
    const SimulationResult r = RunSim(c, tasks);
    auto releases = Releases(r);
    // First requests: (arrival - 100) / load: load 1 -> 0, 10, 30;
    // load 2 -> 0, 5, 15; load 0.5 -> 0, 20, 60.
    EXPECT_DOUBLE_EQ(releases["a"][0], 0);
    EXPECT_DOUBLE_EQ(releases["b"][0], 10 / load);
    EXPECT_DOUBLE_EQ(releases["c"][0], 30 / load);
    // Within a task the 5 s tool wait keeps: the second request goes 5 s
    // after the first finished.
    for (const RequestRecord& rec : r.requests) {
      if (rec.index != 0) continue;
      EXPECT_NEAR(releases[rec.task_id][1] - rec.finish_s, 5.0, 1e-9) << rec.task_id;
    }
  }
}

TEST(LoadTest, RecordedReleaseMovesWholeTasksAndKeepsTheirRecordedGaps) {
  SimulationConfig c = Config("qwen3-8b");
  c.release = ReleaseRule::kRecorded;
  c.load = 4;
  std::vector<Task> tasks = ThreeTasks();
  // Recorded turn times 100 s apart within each task (far longer than a
  // turn takes): the second request goes 100 s after the task's start.
  for (Task& t : tasks) {
    t.turns[0].time_s = t.arrival_s;
    t.turns[1].time_s = t.arrival_s + 100;
  }
  auto releases = Releases(RunSim(c, tasks));
  // Starts (arrival - 100) / 4: 0, 2.5, 7.5; second turns 100 s later.
  EXPECT_DOUBLE_EQ(releases["a"][0], 0);
  EXPECT_DOUBLE_EQ(releases["b"][0], 2.5);
  EXPECT_DOUBLE_EQ(releases["c"][0], 7.5);
  EXPECT_DOUBLE_EQ(releases["a"][1], 100);
  EXPECT_DOUBLE_EQ(releases["b"][1], 102.5);
  EXPECT_DOUBLE_EQ(releases["c"][1], 107.5);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
