// What a trace holds, before any simulation: sizes, shapes and the prefix
// reuse an ideal cache could exploit. Backs `kvbill trace stats`.
#ifndef KVBILL_TRACE_STATS_H_
#define KVBILL_TRACE_STATS_H_

#include <cstdint>
#include <optional>

#include "kvbill/metrics/summary.h"
#include "kvbill/trace/reader.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct TraceStats {
  std::int64_t tasks = 0;
  std::int64_t requests = 0;  // turns over all tasks
  Summary turns_per_task;
  Summary input_tokens;     // the prompt of each request
  Summary appended_tokens;  // tokens of each request's spans
  Summary output_tokens;    // per request
  // prompt(k) - prompt(k-1) for every turn after a task's first (may be < 0).
  Summary context_growth_tokens;
  Summary gap_s;  // tool_s of every turn that has a next turn in its task
  // Requests whose output is flagged as a streaming placeholder.
  std::int64_t placeholder_outputs = 0;
  // Σ over requests of the prompt prefix kept from the task's previous
  // request, over Σ prompts: the hit rate of an infinite per-task cache.
  double task_prefix_reuse_share = 0;
  // For requests with block hashes: tokens in the leading blocks whose hash
  // appeared anywhere earlier in the trace, over their Σ prompts (an infinite
  // cache shared by all tasks). nullopt when no request has hashes.
  std::optional<double> block_reuse_share;
  // Whether block_reuse_share is exact: the block hashes seen are held
  // exactly up to TraceStatsOptions::exact_block_hashes distinct ones, then
  // in a Bloom filter of fixed size (docs/robustness.md#memory-of-trace-stats).
  bool block_reuse_exact = true;
};

// Distinct block hashes `trace stats` holds exactly: 4,194,304 (64 MiB at
// most: 8 bytes each in a table kept at most half full). The largest trace
// in the project's data, Mooncake's conversation trace, has 182,790.
inline constexpr std::int64_t kExactBlockHashes = std::int64_t{1} << 22;

struct TraceStatsOptions {
  std::int64_t exact_block_hashes = kExactBlockHashes;
};

// Reads `reader` to the end. Fails with the reader's first error.
Result<TraceStats> ComputeTraceStats(TraceReader* reader, const TraceStatsOptions& options = {});

}  // namespace kvbill

#endif  // KVBILL_TRACE_STATS_H_
