#include "kvbill/metrics/task_metrics.h"

#include "kvbill/metrics/run_aggregator.h"

namespace kvbill {

std::vector<TaskMetrics> AggregateTasks(const std::vector<Task>& tasks,
                                        const SimulationResult& result) {
  std::vector<TaskAccumulator> acc(tasks.size());
  for (const RequestRecord& r : result.requests) acc[static_cast<std::size_t>(r.task_index)].Add(r);
  for (const TaskCut& c : result.cut_tasks) {
    acc[static_cast<std::size_t>(c.task_index)].Cut(c.unserved_requests);
  }
  std::vector<TaskMetrics> out;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (!acc[i].empty()) out.push_back(acc[i].Metrics(tasks[i].id));
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
  RequestLatencies latencies;
  for (const RequestRecord& r : result.requests) latencies.Add(r);
  ApplyTotals(result, &s);
  latencies.Build(&s);
  return s;
}

}  // namespace kvbill
