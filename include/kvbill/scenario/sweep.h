// Sweeps: the cartesian product of a scenario's "sweep" axes, run in
// parallel, sliceable into deterministic shards.
//
// Points are made one at a time as the workers reach them (a point's
// scenario is the base scenario, without its "sweep", with the point's
// values set), and its runs share one prepared workload per trace and
// context policy (workload.h), so a sweep's memory is the workloads plus a
// few hundred bytes per point (its row), and a point costs about what the
// engine's run costs.
//
// Point k of a sweep with axes A1..An (in lexicographic order of their JSON
// pointers, A1 varying slowest) sets each axis to one of its values; points are numbered
// 0..N-1 in that order. Shard i of n runs the points with k mod n == i, so
// any set of shards covers the sweep once, and merging their rows sorted by
// k gives exactly a single run's output.
#ifndef KVBILL_SCENARIO_SWEEP_H_
#define KVBILL_SCENARIO_SWEEP_H_

#include <functional>
#include <string>
#include <vector>

#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {

struct SweepPoint {
  std::int64_t index = 0;
  std::vector<std::string> values;  // JSON text, one per axis
  Scenario scenario;                // the scenario with those values set
};

// The scenario text with the JSON value `value_json` set at `pointer`
// (objects on the way are created; "sweep" and "budgets" are kept).
Result<std::string> WithSetting(const std::string& scenario_text, const std::string& pointer,
                                const std::string& value_json);

// A sweep ready to make its points: the base scenario text (without
// "sweep"), the axes and the shard.
struct SweepPlan {
  std::string base_text;
  std::string source;
  std::vector<SweepAxis> axes;
  std::int64_t total = 1;  // points of the whole sweep
  int shard = 0;
  int shards = 1;

  // The points of the shard: k = shard, shard + shards, ... below total.
  std::int64_t count() const { return total > shard ? (total - shard + shards - 1) / shards : 0; }
  std::int64_t index(std::int64_t i) const { return shard + i * shards; }
};

// The plan of the sweep of the scenario in `text` (read from `source`) for
// shard `shard` of `shards` (0 <= shard < shards), every point of the shard
// checked (made and parsed) once. A scenario without a sweep is one point.
// Errors name the point and the field.
Result<SweepPlan> PlanSweep(const std::string& text, const std::string& source, int shard = 0,
                            int shards = 1);

// Point k of the sweep (its values and scenario).
Result<SweepPoint> MakeSweepPoint(const SweepPlan& plan, std::int64_t k);

// Every point of the shard, made at once (for tests and small sweeps).
Result<std::vector<SweepPoint>> ExpandSweep(const std::string& text, const std::string& source,
                                            int shard = 0, int shards = 1);

struct SweepRow {
  std::int64_t index = 0;
  std::vector<std::string> values;
  RunMetrics metrics;
  // Why no engine runs this point (Scenario::not_runnable); the metrics are
  // then empty and the row is not a run.
  std::string not_runnable;
};

// Runs the plan's points on `jobs` threads, sharing prepared workloads;
// rows come back in point order. The callback, if set, is called (from
// worker threads, serialised) after each point with the number done so far.
// The first failing point's error is returned, prefixed with its index.
Result<std::vector<SweepRow>> RunSweep(const SweepPlan& plan, int jobs,
                                       const std::function<void(std::int64_t)>& progress = {});

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_SWEEP_H_
