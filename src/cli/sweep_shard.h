// The shape of a `kvbill sweep --format json` document, checked before
// `kvbill merge` reads it, so a damaged or foreign file is an input error
// naming the JSON pointer instead of a crash inside the JSON library.
#ifndef KVBILL_CLI_SWEEP_SHARD_H_
#define KVBILL_CLI_SWEEP_SHARD_H_

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>

#include "kvbill/util/result.h"

namespace kvbill::cli {

// "--shard i/n" (sweep and plan): {i, n} with 0 <= i < n. Error: '--shard:
// expected i/n with 0 <= i < n, got "x"'.
Result<std::pair<int, int>> ParseShard(const std::string& text);

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
