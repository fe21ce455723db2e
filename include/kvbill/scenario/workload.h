// Workloads: a scenario's tasks and the requests its context policy plans
// for them, as the engine takes them (TaskFeed, engine/simulator.h).
//
// Many runs per process (sweep points, compare's levers, a plan's
// candidates) share one workload when they read the same trace (file and
// format, or generator, task count and seed) under the same context policy:
// WorkloadCache reads and plans it once and every run reads the same
// prepared copy, from any thread. Everything else of a scenario (model,
// deployment, engine, prefix cache, trace.release) may differ between them.
//
// The prepared copy keeps, per task, its id and arrival and, per request,
// what the engine reads: the prompt (pieces sharing storage with the prompts
// they extend), output, output identity, tool wait, recorded time, the
// trace's block hashes; the fields only the API replay reads (recorded
// usage, model) and the task id copied into each request are dropped. Its
// size is counted as PreparedWorkload::bytes (sizeof of what is stored plus
// the pieces and hashes each request adds, and the block runs planned from
// the hashes at the first run's block size when they fit). Ceiling: a workload of more than
// kMaxWorkloadBytesPerRequest on average per request, or one that would take
// a cache past kMaxWorkloadCacheBytes, is not kept: each run streams it from
// the trace instead (TraceFeed), holding only the tasks in flight.
//
// TraceFeed streams a scenario's trace: it reads and plans one task at a
// time and needs the trace in arrival order (arrivals never decreasing, as
// `trace gen` and the importers write them); at the first task that arrives
// before the one before it, it stops with an error and out_of_order() says
// so, and the caller falls back to reading the whole trace (docs/engine.md,
// "Many runs in one process").
#ifndef KVBILL_SCENARIO_WORKLOAD_H_
#define KVBILL_SCENARIO_WORKLOAD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/engine/simulator.h"
#include "kvbill/policy/context_policy.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/trace/generator.h"
#include "kvbill/trace/reader.h"
#include "kvbill/trace/trace.h"
#include "kvbill/util/result.h"

namespace kvbill {

inline constexpr std::int64_t kMaxWorkloadBytesPerRequest = 2048;
inline constexpr std::int64_t kMaxWorkloadCacheBytes = std::int64_t{256} << 20;  // 256 MiB

struct PreparedTask {
  std::string id;
  Seconds arrival_s = 0;
  std::vector<Request> requests;
};

struct PreparedWorkload {
  std::vector<PreparedTask> tasks;  // in input order
  std::vector<int> arrival_order;   // task indexes by arrival (ties in input order)
  std::int64_t requests = 0;
  std::int64_t bytes = 0;  // as counted above
  TaskChecks checks;       // the engine's checks of the tasks (CheckRun), made once
};

// Plans every request's explicit block hashes as the engine's block runs at
// block_size (Request::planned_runs, what each run would otherwise make
// anew: docs/engine.md, "Many runs in one process") and counts them in
// w->bytes, unless that would take w->bytes past max_bytes: then nothing is
// planned. Returns the bytes added.
std::int64_t PlanBlockRuns(PreparedWorkload* w, Tokens block_size, std::int64_t max_bytes);

// The key of the workload a scenario runs: equal keys, equal workloads.
std::string WorkloadKey(const Scenario& scenario);

// Reads and plans the scenario's whole workload, task by task, giving up
// (nullopt) as soon as it counts more than max_bytes. Errors: the trace's,
// the context policy's (with the scenario's JSON pointers, as RunScenario's).
Result<std::optional<PreparedWorkload>> PrepareWorkload(const Scenario& scenario,
                                                        std::int64_t max_bytes);

// The generator preset a scenario without trace.file names; an error at
// #/trace when it names none either (`{}` with no --trace), or at
// #/trace/generator when the preset is unknown.
Result<GeneratorPreset> ScenarioGenerator(const Scenario& scenario);

// Whether the scenario's trace.file names a file to read: a path that names
// nothing or a directory is an error of the field,
// "s.json#/trace/file: t.jsonl: file not found" and
// "s.json#/trace/file: t: a directory, not a trace file" (a file that
// cannot be opened is the reader's error, naming the file). OkStatus
// without trace.file, and for "-" (standard input).
Status CheckTraceFile(const Scenario& scenario);

// A scenario's tasks one at a time: the trace's reader, or the generator.
class TaskSource {
 public:
  static Result<std::unique_ptr<TaskSource>> Open(const Scenario& scenario);
  // As TraceReader::Next.
  Result<bool> Next(Task* task);

 private:
  TaskSource() = default;
  std::unique_ptr<TraceReader> reader_;
  std::unique_ptr<TraceGenerator> generator_;
  std::int64_t generated_ = 0, to_generate_ = 0;
};

// The tasks of a prepared workload, in order of arrival; it must outlive the feed.
class PreparedFeed final : public TaskFeed {
 public:
  explicit PreparedFeed(const PreparedWorkload& workload) : workload_(workload) {}
  Result<bool> Next(FedTask* task) override;
  void Done(int) override {}

 private:
  const PreparedWorkload& workload_;
  std::size_t next_ = 0;
};

// Streams the scenario's trace (or generator), planning each task as it is
// read; memory holds the tasks the engine has not finished.
class TraceFeed final : public TaskFeed {
 public:
  static Result<std::unique_ptr<TraceFeed>> Open(const Scenario& scenario);
  Result<bool> Next(FedTask* task) override;
  void Done(int index) override;
  // True once Next failed because a task arrived before the one before it.
  bool out_of_order() const { return out_of_order_; }
  // True once Next failed (reading the trace, or out of order): the run's
  // error is then the feed's, as reading the whole trace would give it.
  bool failed() const { return failed_; }
  ~TraceFeed() override;

 private:
  TraceFeed() = default;
  struct Held {
    std::string id;
    std::vector<Request> requests;
  };
  std::string source_;      // the scenario, for errors
  std::string trace_name_;  // its trace file (or generator), for the tasks' errors
  std::unique_ptr<TaskSource> tasks_;
  std::unique_ptr<ContextPolicy> policy_;
  Task task_;
  int next_index_ = 0;
  Seconds last_arrival_ = 0;
  bool out_of_order_ = false;
  bool failed_ = false;
  std::map<int, Held> held_;
};

// Prepared workloads by key, shared by the runs of one process. Get
// prepares a workload the first time its key is asked for (other threads
// asking for it meanwhile wait) and returns it, or nullptr when it is above
// the ceiling (the run streams it). Thread-safe.
class WorkloadCache {
 public:
  // The ceiling (tests lower it to make runs stream).
  explicit WorkloadCache(std::int64_t max_bytes = kMaxWorkloadCacheBytes,
                         std::int64_t max_bytes_per_request = kMaxWorkloadBytesPerRequest)
      : max_bytes_(max_bytes), max_bytes_per_request_(max_bytes_per_request) {}

  Result<std::shared_ptr<const PreparedWorkload>> Get(const Scenario& scenario);
  std::int64_t bytes() const;  // what the workloads kept take

 private:
  struct Entry {
    std::once_flag once;
    Result<std::shared_ptr<const PreparedWorkload>> value = Error("not prepared");
  };
  const std::int64_t max_bytes_;
  const std::int64_t max_bytes_per_request_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  std::int64_t bytes_ = 0;
};

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_WORKLOAD_H_
