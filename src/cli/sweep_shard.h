// Shards: the `--shard` flag of `kvbill sweep` (and `kvbill plan`), read
// from its text or from a cluster's job-array environment, and the shape of a
// `kvbill sweep --format json` document, checked before `kvbill merge` reads
// it, so a damaged or foreign file is an input error naming the JSON pointer
// instead of a crash inside the JSON library.
#ifndef KVBILL_CLI_SWEEP_SHARD_H_
#define KVBILL_CLI_SWEEP_SHARD_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "kvbill/util/result.h"

namespace kvbill::cli {

// One slice of a run: the points whose number k has k mod count == index.
// Invariant: 0 <= index < count.
struct Shard {
  int index = 0;
  int count = 1;
};

// Reads one environment variable: its value, or nullopt when it is unset.
// The CLI passes ProcessEnvironment; tests pass a map.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> ProcessEnvironment(const std::string& name);

// Parses the value of --shard (docs/cluster.md):
// - "i/n": slice i of n, 0 <= i < n;
// - "auto": the slice of this task of a Slurm job array: index =
//   (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP,
//   count = SLURM_ARRAY_TASK_COUNT. The array must be evenly spaced
//   (--array=A-B or A-B:S, any %limit): MAX = MIN + STEP * (COUNT - 1), which
//   also catches a list such as 1,3,8 (Slurm 22.05 sets STEP=1 for it). With
//   STEP unset, the step is (MAX - MIN) / (COUNT - 1);
// - "auto/N": the same in a Slurm array of N tasks (COUNT must equal N), or
//   in a Kubernetes Indexed Job of N completions: index = JOB_COMPLETION_INDEX
//   (Kubernetes does not tell the pod the count, hence N).
// Every variable is a decimal integer. Error (exit status 2), naming the
// variable and its value: a variable missing or not an integer, an uneven
// array, an index out of range, both SLURM_ARRAY_TASK_ID and
// JOB_COMPLETION_INDEX set, or neither set.
Result<Shard> ParseShard(const std::string& text,
                         const EnvironmentLookup& environment = ProcessEnvironment);

// Checks `doc` (read from `path`) is {"scenario": string, "axes": [string...],
// "total_points": integer >= 1, "points": [{"index": integer in
// [0, total_points), "values": {one per axis}, "summary": {every name in
// `columns`}}]}. Error: "PATH#/points/2/index: must be an integer in [0, 4),
// got \"x\"", or "PATH: not the JSON output of kvbill sweep" when `doc` is not
// an object with those four keys.
Status CheckSweepShard(const nlohmann::ordered_json& doc, const std::string& path,
                       std::span<const char* const> columns);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_SWEEP_SHARD_H_
