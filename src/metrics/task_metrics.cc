#include "kvbill/metrics/task_metrics.h"

#include <algorithm>
#include <limits>

#include "kvbill/metrics/run_aggregator.h"

namespace kvbill {

std::vector<TaskMetrics> AggregateTasks(const std::vector<Task>& tasks,
                                        const SimulationResult& result) {
  struct Acc {
    TaskMetrics m;
    Seconds first_release = std::numeric_limits<Seconds>::infinity();
    Seconds last_finish = 0;
    Seconds ttft_sum = 0;
    Seconds queue_sum = 0;
  };
  std::vector<Acc> acc(tasks.size());
  for (const RequestRecord& r : result.requests) {
    Acc& a = acc[static_cast<std::size_t>(r.task_index)];
    TaskMetrics& m = a.m;
    m.requests += 1;
    m.prompt_tokens += r.prompt_tokens;
    m.cached_tokens += r.cached_tokens;
    m.offload_hit_tokens += r.offload_hit_tokens;
    m.prefill_tokens += r.prefill_tokens;
    m.output_tokens += r.output_tokens;
    m.preemptions += r.preemptions;
    m.kv_read_bytes += r.kv_read_bytes;
    m.kv_written_bytes += r.kv_written_bytes;
    m.peak_kv_bytes = std::max(m.peak_kv_bytes, r.peak_kv_bytes);
    m.gpu_seconds += r.gpu_seconds;
    m.cost_usd += r.cost_usd;
    a.first_release = std::min(a.first_release, r.release_s);
    a.last_finish = std::max(a.last_finish, r.finish_s);
    a.ttft_sum += r.first_token_s - r.release_s;
    a.queue_sum += r.admitted_s - r.release_s;
  }
  std::vector<TaskMetrics> out;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    Acc& a = acc[i];
    if (a.m.requests == 0) continue;
    a.m.id = tasks[i].id;
    a.m.completion_s = a.last_finish - a.first_release;
    a.m.ttft_mean_s = a.ttft_sum / a.m.requests;
    a.m.queue_mean_s = a.queue_sum / a.m.requests;
    out.push_back(a.m);
  }
  return out;
}

RunSummary SumTasks(const std::vector<TaskMetrics>& tasks) {
  TaskSums sums;
  for (const TaskMetrics& t : tasks) sums.Add(t);
  return sums.Build();
}

RunSummary Summarise(const std::vector<TaskMetrics>& tasks, const SimulationResult& result) {
  RunSummary s = SumTasks(tasks);
  SummaryBuilder ttft;
  for (const RequestRecord& r : result.requests) ttft.Add(r.first_token_s - r.release_s);
  s.cost_usd = result.bill_usd;
  s.idle_usd = result.idle_usd;
  s.ttft_s = ttft.Build();
  s.simulated_s = result.simulated_s;
  s.evicted_blocks = result.evicted_blocks;
  s.kv_pool_blocks = result.kv_pool_blocks;
  s.kv_cache_groups = result.kv_cache_groups;
  return s;
}

}  // namespace kvbill
