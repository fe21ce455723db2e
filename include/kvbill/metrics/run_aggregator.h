// RunAggregator: per-task metrics and the run summary, folded from the
// engine's records as they come (a RecordSink), so that a run need not keep
// its records.
//
// Contract. Records arrive in finishing order; OnTaskDone(i) says task i has
// no more (every input index is announced once, tasks without requests
// included). Each task's metrics are summed over its records in finishing
// order, and tasks are released in input order (a task finished early waits
// for the ones before it): to `on_task`, when given, then into the summary.
// So the metrics, the summary and every sum in them are exactly those of
// AggregateTasks and Summarise (task_metrics.h) over the same run. Memory:
// the tasks in flight, the finished ones waiting for an earlier one, and 8
// bytes per task and per request for the exact percentiles.
#ifndef KVBILL_METRICS_RUN_AGGREGATOR_H_
#define KVBILL_METRICS_RUN_AGGREGATOR_H_

#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kvbill/engine/simulator.h"
#include "kvbill/metrics/summary.h"
#include "kvbill/metrics/task_metrics.h"

namespace kvbill {

// A request's queueing delay: release to first admission less its own time
// in the API server and on the way (RequestRecord::frontend_s), which is
// service, not waiting; waiting behind other requests in the API server
// counts. Computed as arrival to admission plus frontend_wait_s, so that a
// request admitted on arrival that waited for no one waited exactly 0.
Seconds QueueSeconds(const RequestRecord& r);

// One task's metrics folded from its records (in the order given).
class TaskAccumulator {
 public:
  void Add(const RequestRecord& r);
  // The task was cut short: `unserved` of its requests were not served.
  void Cut(int unserved) { m_.unserved_requests = unserved; }
  bool empty() const { return m_.requests == 0; }
  // The metrics so far, with completion and the means; `id` as given.
  TaskMetrics Metrics(const std::string& id) const;

 private:
  TaskMetrics m_;
  Seconds first_release_ = std::numeric_limits<Seconds>::infinity();
  Seconds last_finish_ = 0;
  Seconds ttft_sum_ = 0;
  std::int64_t ttft_n_ = 0;  // requests with a first token (output tokens > 0)
  Seconds queue_sum_ = 0;
};

// The per-request latency distributions of a run (RunSummary::ttft_s,
// tpot_s, queue_s, frontend_wait_s), folded one record at a time in any order the caller
// keeps fixed: one implementation for the whole-run and the streamed
// aggregation.
class RequestLatencies {
 public:
  void Add(const RequestRecord& r);
  // Sets ttft_s, tpot_s, queue_s and frontend_wait_s of *s.
  void Build(RunSummary* s);

 private:
  SummaryBuilder ttft_, tpot_, queue_, frontend_wait_;
};

// Copies the engine's run totals (bill, idle, simulated time, evictions,
// pool size) into a summary.
void ApplyTotals(const SimulationTotals& totals, RunSummary* s);

// The sums SumTasks makes, one task at a time (in input order).
class TaskSums {
 public:
  void Add(const TaskMetrics& t);
  // The summary of the tasks added: counts, sums, hit rate, cost and
  // completion time per task.
  RunSummary Build();

 private:
  RunSummary sums_;
  SummaryBuilder cost_, completion_;
};

class RunAggregator final : public RecordSink {
 public:
  // on_task: each task's metrics, in input order (tasks with no request
  // served are skipped, as AggregateTasks does).
  // Under billing "amortized" the tasks are held until Finish (their idle
  // share is known only then) and released there, re-billed
  // (metrics/billing.h): memory then holds every task's metrics.
  explicit RunAggregator(std::function<void(const TaskMetrics&)> on_task = {},
                         BillingRule billing = BillingRule::kDedicated);

  void OnRequest(RequestRecord&& record) override;
  void OnTaskDone(int index) override;
  void OnTaskCut(int index, int unserved) override;

  // The summary of the run, once every task is done.
  RunSummary Finish(const SimulationTotals& totals);

 private:
  struct Acc {
    std::string id;
    TaskAccumulator task;
    bool done = false;
  };
  Acc& Slot(int index);  // task `index`'s, index >= next_
  void Release(const Acc& acc);
  void Emit(const TaskMetrics& m);

  std::function<void(const TaskMetrics&)> on_task_;
  // Tasks next_, next_ + 1, ... in input order: in flight, or done and
  // waiting for an earlier one (tasks start in input order, so the window
  // spans the tasks started since the oldest unfinished one).
  std::deque<Acc> window_;
  int next_ = 0;  // the next index to release
  BillingRule billing_;
  std::vector<TaskMetrics> held_;  // billing "amortized": released tasks, until Finish
  TaskSums sums_;
  RequestLatencies latencies_;
};

}  // namespace kvbill

#endif  // KVBILL_METRICS_RUN_AGGREGATOR_H_
