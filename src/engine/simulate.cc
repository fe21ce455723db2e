// Simulate: the engine over tasks and requests held in memory (every record
// kept), and the parsing of the engine's enumerations.
#include <algorithm>

#include "engine/setup.h"
#include "engine/task_table.h"
#include "kvbill/engine/simulator.h"

namespace kvbill {
namespace {

// The tasks of Simulate's vectors, in order of arrival.
class VectorFeed final : public TaskFeed {
 public:
  VectorFeed(const std::vector<Task>& tasks, const std::vector<std::vector<Request>>& requests)
      : tasks_(tasks), requests_(requests) {
    // By arrival since the first (as the engine times them), ties in input order.
    Seconds origin = 0;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      origin = i == 0 ? tasks[i].arrival_s : std::min(origin, tasks[i].arrival_s);
    }
    order_.resize(tasks.size());
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int>(i);
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      return tasks[static_cast<std::size_t>(a)].arrival_s - origin <
             tasks[static_cast<std::size_t>(b)].arrival_s - origin;
    });
  }
  Result<bool> Next(FedTask* task) override {
    if (next_ >= order_.size()) return false;
    const std::size_t i = static_cast<std::size_t>(order_[next_++]);
    *task = FedTask{static_cast<int>(i), tasks_[i].id, tasks_[i].arrival_s, requests_[i]};
    return true;
  }
  void Done(int) override {}

 private:
  const std::vector<Task>& tasks_;
  const std::vector<std::vector<Request>>& requests_;
  std::vector<int> order_;
  std::size_t next_ = 0;
};

// Keeps every record, in finishing order.
class CollectingSink final : public RecordSink {
 public:
  CollectingSink(std::vector<RequestRecord>* out, std::vector<TaskCut>* cuts)
      : out_(out), cuts_(cuts) {}
  void OnRequest(RequestRecord&& record) override { out_->push_back(std::move(record)); }
  void OnTaskDone(int) override {}
  void OnTaskCut(int index, int unserved) override { cuts_->push_back({index, unserved}); }

 private:
  std::vector<RequestRecord>* out_;
  std::vector<TaskCut>* cuts_;
};

}  // namespace

Result<ReleaseRule> ParseReleaseRule(std::string_view name) {
  if (name == "after_finish") return ReleaseRule::kAfterFinish;
  if (name == "recorded") return ReleaseRule::kRecorded;
  return Error("unknown release \"" + std::string(name) + "\" (one of after_finish|recorded)");
}

TaskChecks CheckTasks(std::span<const FedTask> tasks) {
  TaskChecks checks;
  for (const FedTask& t : tasks) {
    if (auto s = engine::CheckPrompts(t.id, t.requests); !s) {
      checks.prompts = s;
      break;
    }
  }
  Seconds origin = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    origin = i == 0 ? tasks[i].arrival_s : std::min(origin, tasks[i].arrival_s);
  }
  for (const FedTask& t : tasks) {
    if (auto s = engine::CheckTimeSpan(t.id, t.arrival_s - origin, t.requests); !s) {
      checks.time_spans = s;
      break;
    }
  }
  return checks;
}

Status CheckRun(const SimulationConfig& config, const TaskChecks& checks) {
  if (config.replicas < 1 || config.gpus_per_replica < 1) {
    return Error("replicas and gpus_per_replica must be at least 1");
  }
  if (config.block_size < 1) return Error("block_size must be at least 1");
  if (!checks.prompts) return checks.prompts;
  // The set-up's errors, then every task's time span, in input order.
  if (auto setup = engine::SetUpEngine(config); !setup) return setup.error();
  return checks.time_spans;
}

Status CheckRun(const SimulationConfig& config, std::span<const FedTask> tasks) {
  return CheckRun(config, CheckTasks(tasks));
}

Result<ReplicaPoolSize> SizeReplicaPool(const SimulationConfig& config) {
  auto setup = engine::SetUpEngine(config);
  if (!setup) return setup.error();
  const KvPool pool(setup->layout, setup->pool_pages, config.prefix_caching);
  ReplicaPoolSize size;
  size.pages = setup->pool_pages;
  size.tokens = pool.capacity_tokens();
  size.sequence_tokens = pool.LongestSequence(config.max_num_batched_tokens);
  size.holds_max_model_len =
      config.max_model_len <= 0 ||
      pool.PeakPages(config.max_model_len, config.max_num_batched_tokens) <= pool.capacity_blocks();
  return size;
}

Result<SimulationResult> Simulate(const SimulationConfig& config, const std::vector<Task>& tasks,
                                  const std::vector<std::vector<Request>>& requests) {
  if (tasks.size() != requests.size()) return Error("internal: tasks and requests differ in size");
  std::vector<FedTask> fed;
  fed.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    fed.push_back(FedTask{static_cast<int>(i), tasks[i].id, tasks[i].arrival_s, requests[i]});
  }
  if (auto s = CheckRun(config, fed); !s) return s.error();
  SimulationResult result;
  std::size_t request_count = 0;
  for (const auto& r : requests) request_count += r.size();
  result.requests.reserve(request_count);
  VectorFeed feed(tasks, requests);
  CollectingSink sink(&result.requests, &result.cut_tasks);
  auto totals = RunSimulation(config, feed, sink);
  if (!totals) return totals.error();
  static_cast<SimulationTotals&>(result) = *totals;
  return result;
}

}  // namespace kvbill
