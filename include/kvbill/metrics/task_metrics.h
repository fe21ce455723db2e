// Per-task metrics and the run summary, aggregated from the engine's request
// records. Sums of bytes and dollars are kept in long double (64-bit
// mantissa): exact for integers up to 2^64, so a 10,000-turn task at a
// 1M-token context does not lose precision.
#ifndef KVBILL_METRICS_TASK_METRICS_H_
#define KVBILL_METRICS_TASK_METRICS_H_

#include <optional>
#include <string>
#include <vector>

#include "kvbill/engine/simulator.h"
#include "kvbill/metrics/summary.h"
#include "kvbill/trace/trace.h"

namespace kvbill {

// Who pays for idle GPU time (metrics/billing.h).
enum class BillingRule { kDedicated, kBusy, kAmortized };

struct TaskMetrics {
  std::string id;
  int requests = 0;
  Tokens prompt_tokens = 0;
  Tokens cached_tokens = 0;
  Tokens offload_hit_tokens = 0;
  Tokens prefill_tokens = 0;
  Tokens output_tokens = 0;
  int preemptions = 0;
  long double kv_read_bytes = 0;
  long double kv_written_bytes = 0;
  Bytes peak_kv_bytes = 0;
  // The longest prompt plus output of its requests: the context its last
  // decode attended.
  Tokens longest_sequence_tokens = 0;
  long double gpu_seconds = 0;
  long double cost_usd = 0;        // with its idle share under "amortized" billing
  long double idle_share_usd = 0;  // billing "amortized": its share of the idle time
  Seconds completion_s = 0;        // last finish minus first release
  // Mean time to first token of its requests that had an output token;
  // none when no request had one (a turn recorded with 0 output tokens).
  std::optional<Seconds> ttft_mean_s;
  Seconds queue_mean_s = 0;  // mean release-to-admission delay
  // Requests of the task not served because one was beyond the model's
  // context (max_model_len, or SGLang's request limit): the first such
  // request and every later one, never sent (an agent cannot go on past a
  // refused turn). 0: the task ran to its end.
  int unserved_requests = 0;
};

struct RunSummary {
  std::int64_t tasks = 0;
  std::int64_t requests = 0;
  Tokens prompt_tokens = 0;
  Tokens cached_tokens = 0;
  Tokens offload_hit_tokens = 0;
  Tokens prefill_tokens = 0;
  Tokens output_tokens = 0;
  double hit_rate = 0;  // cached_tokens / prompt_tokens
  long double kv_read_bytes = 0;
  long double cost_usd = 0;       // the whole bill: tasks + idle
  long double task_cost_usd = 0;  // what the tasks paid
  long double idle_usd = 0;       // idle billed on its own line (0 unless billing is dedicated)
  // What the idle GPU time costs at the rental price, whoever pays
  // (metrics/billing.h); the billing rule applied.
  long double idle_gpu_usd = 0;
  BillingRule billing = BillingRule::kDedicated;
  Summary cost_per_task_usd;
  Summary ttft_s;  // per request: release to first token
  // Per request: (finish - first token) / (output tokens - 1), time per
  // output token after the first; requests of one output token or none
  // have no such interval and are left out (count says how many are in).
  Summary tpot_s;
  Summary queue_s;  // per request: release to first admission less its own
                    // API-server time (queueing delay, QueueSeconds)
  // Per request: the part of queue_s spent waiting for the API server
  // (RequestRecord::frontend_wait_s); the rest waited for the scheduler.
  Summary frontend_wait_s;
  Summary completion_s;  // per task: first release to last finish
  Seconds simulated_s = 0;
  std::int64_t preemptions = 0;
  Tokens longest_sequence_tokens = 0;  // of any task (TaskMetrics)
  std::int64_t evicted_blocks = 0;
  std::int64_t kv_pool_blocks = 0;  // per replica: pages of one KV cache group
  int kv_cache_groups = 1;          // a token held takes a page slot in each group
};

// Tasks in input order (tasks with no served request are omitted).
std::vector<TaskMetrics> AggregateTasks(const std::vector<Task>& tasks,
                                        const SimulationResult& result);

RunSummary Summarise(const std::vector<TaskMetrics>& tasks, const SimulationResult& result);

// What a summary takes from the tasks alone, for either mode (the engine's
// Summarise and the API replay's): counts, token and byte sums, task dollars,
// hit rate and the cost per task distribution. Bill, idle and times are left
// to the caller.
RunSummary SumTasks(const std::vector<TaskMetrics>& tasks);

}  // namespace kvbill

#endif  // KVBILL_METRICS_TASK_METRICS_H_
