// Sweeps: the cartesian product of a scenario's "sweep" axes, run in
// parallel, sliceable into deterministic shards.
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

// Expands the sweep of the scenario in `text` (read from `source`): the
// points of shard `shard` of `shards` (0 <= shard < shards). A scenario
// without a sweep is one point. Errors name the point and the field.
Result<std::vector<SweepPoint>> ExpandSweep(const std::string& text, const std::string& source,
                                            int shard = 0, int shards = 1);

struct SweepRow {
  std::int64_t index = 0;
  std::vector<std::string> values;
  ScenarioOutcome outcome;
};

// Runs the points on `jobs` threads; rows come back in point order. The
// callback, if set, is called (from worker threads, serialised) after each
// point with the number done so far. The first failing point's error is
// returned, prefixed with its index and values.
Result<std::vector<SweepRow>> RunSweep(const std::vector<SweepPoint>& points, int jobs,
                                       const std::function<void(std::int64_t)>& progress = {});

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_SWEEP_H_
