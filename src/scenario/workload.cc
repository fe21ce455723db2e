#include "kvbill/scenario/workload.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "kvbill/cache/block_hash.h"
#include "kvbill/scenario/run.h"
#include "kvbill/trace/importers.h"

namespace kvbill {
namespace {

// What only the API replay reads, dropped from prepared requests.
void DropApiFields(Request* r) {
  r->task_id = {};
  r->usage.reset();
  r->model = {};
}

// Bytes a task's prepared requests add (PreparedWorkload::bytes).
std::int64_t BytesOf(const PreparedTask& t) {
  std::int64_t bytes = static_cast<std::int64_t>(sizeof(PreparedTask) + t.id.capacity() +
                                                 t.requests.capacity() * sizeof(Request));
  const Prompt* previous = nullptr;
  for (const Request& r : t.requests) {
    std::size_t pieces = r.prompt.size();
    if (previous != nullptr && r.prompt.SharesStorageWith(*previous)) {
      pieces = r.prompt.size() > previous->size() ? r.prompt.size() - previous->size() : 0;
    }
    bytes += static_cast<std::int64_t>(pieces * sizeof(PromptPiece));
    if (r.explicit_blocks) {
      bytes +=
          static_cast<std::int64_t>(r.explicit_blocks->hashes.capacity() * sizeof(std::uint64_t));
    }
    previous = &r.prompt;
  }
  return bytes;
}

// Where a trace's errors are named: its file, or the scenario's generator.
std::string TraceName(const Scenario& s) {
  return s.trace.file.empty() ? s.source + "#/trace/generator" : s.trace.file;
}

// A trace with no task (a header and nothing else, or only skipped lines)
// has nothing to run: an error, not a bill of $0.
Error NoTasks(const std::string& trace_name) {
  return Error(trace_name + ": no tasks (the trace holds none to simulate)");
}

Result<std::unique_ptr<ContextPolicy>> PolicyOf(const Scenario& s) {
  auto policy = MakeContextPolicy(s.context_policy);
  if (!policy) return policy.error().Within(s.source + "#/context_policy");
  return std::move(*policy);
}

}  // namespace

std::int64_t PlanBlockRuns(PreparedWorkload* w, Tokens block_size, std::int64_t max_bytes) {
  std::int64_t added = 0;
  for (PreparedTask& t : w->tasks) {
    for (Request& r : t.requests) {
      if (!r.explicit_blocks) continue;
      if (!BlockRunsFromTrace(r.explicit_blocks->hashes, r.explicit_blocks->block_size,
                              r.PromptTokens(), block_size, r.ExplicitTailKey(), &r.planned_runs,
                              &r.planned_ends)) {
        continue;  // the engine names this prompt from its pieces
      }
      r.planned_runs.shrink_to_fit();
      r.planned_ends.shrink_to_fit();
      r.planned_block_size = block_size;
      added += static_cast<std::int64_t>(r.planned_runs.capacity() * sizeof(BlockRun) +
                                         r.planned_ends.capacity() * sizeof(std::int64_t));
    }
  }
  if (w->bytes + added <= max_bytes) {
    w->bytes += added;
    return added;
  }
  for (PreparedTask& t : w->tasks) {
    for (Request& r : t.requests) {
      r.planned_block_size = 0;
      r.planned_runs = {};
      r.planned_ends = {};
    }
  }
  return 0;
}

std::string WorkloadKey(const Scenario& s) {
  std::ostringstream key;
  const ContextPolicyParams& p = s.context_policy;
  key << s.trace.file << '\0' << s.trace.format << '\0' << s.trace.generator << '\0'
      << s.trace.tasks << '\0' << (s.trace.file.empty() ? s.seed : 0) << '\0' << p.kind << '\0'
      << p.window_tokens << ' ' << p.older_than_turns << ' ' << p.stub_tokens << ' '
      << p.threshold_tokens << ' ' << p.summary_tokens << ' ' << p.keep_recent_tokens << ' '
      << p.sink_tokens << ' ' << p.recent_tokens;
  return key.str();
}

Result<GeneratorPreset> ScenarioGenerator(const Scenario& s) {
  if (s.trace.generator.empty()) {
    return Error(s.source + "#/trace: needs \"file\" or \"generator\" (or simulate's --trace)");
  }
  auto preset = FindGeneratorPreset(s.trace.generator);
  if (!preset) return preset.error().Within(s.source + "#/trace/generator");
  return preset;
}

Status CheckTraceFile(const Scenario& s) {
  const std::string& file = s.trace.file;
  if (file.empty() || file == "-") return OkStatus();
  std::error_code ec;
  const std::filesystem::file_type type = std::filesystem::status(file, ec).type();
  const std::string where = s.source + "#/trace/file: " + file + ": ";
  if (type == std::filesystem::file_type::not_found) return Error(where + "file not found");
  if (type == std::filesystem::file_type::directory) {
    return Error(where + "a directory, not a trace file");
  }
  return OkStatus();
}

Result<std::unique_ptr<TaskSource>> TaskSource::Open(const Scenario& s) {
  std::unique_ptr<TaskSource> source(new TaskSource());
  if (!s.trace.file.empty()) {
    std::optional<TraceFormat> format;
    if (s.trace.format != "auto") {
      auto f = ParseTraceFormat(s.trace.format);
      if (!f) return f.error().Within(s.source + "#/trace/format");
      format = *f;
    }
    if (auto checked = CheckTraceFile(s); !checked) return checked.error();
    auto reader = OpenTrace(s.trace.file, format);
    if (!reader) return reader.error();
    source->reader_ = std::move(*reader);
  } else {
    auto preset = ScenarioGenerator(s);
    if (!preset) return preset.error();
    source->generator_ = std::make_unique<TraceGenerator>(*preset, s.seed);
    source->to_generate_ = s.trace.tasks;
  }
  return source;
}

Result<bool> TaskSource::Next(Task* task) {
  if (reader_) return reader_->Next(task);
  if (generated_ >= to_generate_) return false;
  *task = generator_->Next();
  ++generated_;
  return true;
}

Result<std::optional<PreparedWorkload>> PrepareWorkload(const Scenario& s, std::int64_t max_bytes) {
  auto policy = PolicyOf(s);
  if (!policy) return policy.error();
  auto source = TaskSource::Open(s);
  if (!source) return source.error();
  PreparedWorkload w;
  w.bytes = static_cast<std::int64_t>(sizeof(PreparedWorkload));
  Seconds origin = 0;
  Task task;
  for (std::size_t i = 0;; ++i) {
    auto more = (*source)->Next(&task);
    if (!more) return more.error();
    if (!*more) break;
    std::vector<Request> requests = (*policy)->Plan(task);  // before the id moves
    PreparedTask t{std::move(task.id), task.arrival_s, std::move(requests)};
    for (Request& r : t.requests) DropApiFields(&r);
    w.requests += static_cast<std::int64_t>(t.requests.size());
    w.bytes += BytesOf(t) + static_cast<std::int64_t>(sizeof(int));  // and its arrival_order slot
    if (w.bytes > max_bytes) return std::optional<PreparedWorkload>();
    origin = i == 0 ? t.arrival_s : std::min(origin, t.arrival_s);
    w.tasks.push_back(std::move(t));
  }
  if (w.tasks.empty()) return NoTasks(TraceName(s));
  std::vector<FedTask> fed;
  fed.reserve(w.tasks.size());
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    fed.push_back(
        FedTask{static_cast<int>(i), w.tasks[i].id, w.tasks[i].arrival_s, w.tasks[i].requests});
  }
  w.checks = CheckTasks(fed);
  if (!w.checks.prompts) w.checks.prompts = w.checks.prompts.error().Within(TraceName(s));
  w.arrival_order.resize(w.tasks.size());
  for (std::size_t i = 0; i < w.tasks.size(); ++i) w.arrival_order[i] = static_cast<int>(i);
  std::stable_sort(w.arrival_order.begin(), w.arrival_order.end(), [&](int a, int b) {
    return w.tasks[static_cast<std::size_t>(a)].arrival_s - origin <
           w.tasks[static_cast<std::size_t>(b)].arrival_s - origin;
  });
  return std::optional<PreparedWorkload>(std::move(w));
}

Result<bool> PreparedFeed::Next(FedTask* task) {
  if (next_ >= workload_.arrival_order.size()) return false;
  const int i = workload_.arrival_order[next_++];
  const PreparedTask& t = workload_.tasks[static_cast<std::size_t>(i)];
  *task = FedTask{i, t.id, t.arrival_s, t.requests};
  return true;
}

Result<std::unique_ptr<TraceFeed>> TraceFeed::Open(const Scenario& s) {
  std::unique_ptr<TraceFeed> feed(new TraceFeed());
  feed->source_ = s.source;
  feed->trace_name_ = TraceName(s);
  auto policy = PolicyOf(s);
  if (!policy) return policy.error();
  feed->policy_ = std::move(*policy);
  auto tasks = TaskSource::Open(s);
  if (!tasks) return tasks.error();
  feed->tasks_ = std::move(*tasks);
  return feed;
}

TraceFeed::~TraceFeed() = default;

Result<bool> TraceFeed::Next(FedTask* out) {
  auto more = tasks_->Next(&task_);
  if (!more) {
    failed_ = true;
    return more.error();
  }
  if (!*more && next_index_ == 0) {
    failed_ = true;
    return NoTasks(trace_name_);
  }
  if (!*more) return false;
  const int index = next_index_++;
  if (index > 0 && task_.arrival_s < last_arrival_) {
    failed_ = out_of_order_ = true;
    std::ostringstream text;
    text << source_ << "#/trace: task \"" << task_.id << "\" arrives at " << task_.arrival_s
         << " s, before the task before it (" << last_arrival_
         << " s): the trace is not in arrival order";
    return Error(text.str());
  }
  last_arrival_ = task_.arrival_s;
  Held& held = held_[index];
  held.requests = policy_->Plan(task_);
  for (Request& r : held.requests) DropApiFields(&r);
  held.id = std::move(task_.id);
  *out = FedTask{index, held.id, task_.arrival_s, held.requests};
  // A task the engine cannot serve is the trace's error, named at the trace.
  if (TaskChecks checks = CheckTasks({out, 1}); !checks.prompts) {
    failed_ = true;
    return checks.prompts.error().Within(trace_name_);
  }
  return true;
}

void TraceFeed::Done(int index) { held_.erase(index); }

Result<std::shared_ptr<const PreparedWorkload>> WorkloadCache::Get(const Scenario& scenario) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = entries_[WorkloadKey(scenario)];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
  }
  std::call_once(entry->once, [&] {
    std::int64_t room = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      room = max_bytes_ - bytes_;
    }
    auto prepared = PrepareWorkload(scenario, room);
    if (!prepared) {
      entry->value = prepared.error();
      return;
    }
    std::shared_ptr<const PreparedWorkload> kept;
    const PreparedWorkload* w = prepared->has_value() ? &**prepared : nullptr;
    const std::int64_t per_request_cap =
        w != nullptr ? max_bytes_per_request_ * std::max<std::int64_t>(1, w->requests) : 0;
    if (w != nullptr && w->bytes <= per_request_cap) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        room = max_bytes_ - bytes_;
      }
      PlanBlockRuns(&**prepared, scenario.prefix_cache.block_size, std::min(per_request_cap, room));
      std::lock_guard<std::mutex> lock(mutex_);
      if (bytes_ + w->bytes <= max_bytes_) {
        bytes_ += w->bytes;
        kept = std::make_shared<const PreparedWorkload>(std::move(**prepared));
      }
    }
    entry->value = kept;  // nullptr: above the ceiling, runs stream it
  });
  return entry->value;
}

std::int64_t WorkloadCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace kvbill
