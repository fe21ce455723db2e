#include "kvbill/scenario/sweep.h"

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "kvbill/scenario/warnings.h"
#include "util/json_input.h"

namespace kvbill {

Result<std::string> WithSetting(const std::string& text, const std::string& pointer,
                                const std::string& value_json) {
  json_input::Problem problem;
  auto parsed = json_input::ParseOrdered(text, &problem);
  if (!parsed) return Error("not valid JSON");
  nlohmann::ordered_json doc = std::move(*parsed);
  auto parsed_value = json_input::ParseOrdered(value_json, &problem);
  if (!parsed_value) return Error("bad value " + json_input::Bounded(value_json));
  nlohmann::ordered_json value = std::move(*parsed_value);
  try {
    // A string where an object is wanted ("model": "qwen3-8b" with a path
    // /model/set/...) becomes {"name": ...}, the object form of the same.
    if (pointer.starts_with("/model/") && doc.contains("model") && doc["model"].is_string()) {
      doc["model"] = nlohmann::ordered_json{{"name", doc["model"]}};
    }
    // Into an array only at an index it has: past its end the JSON library
    // pads it with nulls (an axis /x/1000000000 took all memory), and an
    // index that is not a plain number is no element.
    const nlohmann::ordered_json::json_pointer where(pointer);
    const nlohmann::ordered_json* node = &doc;
    std::string at;
    for (std::size_t start = 1; start <= pointer.size() && node != nullptr;) {
      const std::size_t slash = std::min(pointer.find('/', start), pointer.size());
      const std::string token = pointer.substr(start, slash - start);
      if (node->is_array()) {
        const bool digits = !token.empty() && token.size() <= 9 &&
                            token.find_first_not_of("0123456789") == std::string::npos &&
                            (token == "0" || token[0] != '0');
        if (!digits || std::stoul(token) >= node->size()) {
          return Error(pointer + ": cannot set: " + (at.empty() ? "the scenario" : at) +
                       (node->empty() ? std::string(" is an empty array: it has no element to set")
                                      : " is an array of " + std::to_string(node->size()) +
                                            (node->size() == 1 ? " element" : " elements") +
                                            ": an index from 0 to " +
                                            std::to_string(node->size() - 1) + " sets one"));
        }
        node = &(*node)[std::stoul(token)];
      } else if (node->is_object()) {
        std::string key;
        for (std::size_t i = 0; i < token.size(); ++i) {
          if (token[i] == '~' && i + 1 < token.size()) {
            key += token[i + 1] == '1' ? '/' : '~';
            ++i;
          } else {
            key += token[i];
          }
        }
        const auto it = node->find(key);
        node = it == node->end() ? nullptr : &*it;
      } else {
        node = nullptr;  // a member of a scalar: the library says so below
      }
      at = pointer.substr(0, slash);
      start = slash + 1;
    }
    doc[where] = value;
  } catch (const nlohmann::json::parse_error&) {
    return Error(pointer +
                 ": not a JSON pointer (each \"~\" is followed by 0 or 1, \"~0\" for "
                 "\"~\" and \"~1\" for \"/\")");
  } catch (const nlohmann::json::exception&) {
    // The deepest part of the path the scenario has, and what it holds: a
    // member of a string, or an index past an array, cannot be set.
    std::string parent = pointer;
    std::string held;
    while (!parent.empty()) {
      parent = parent.substr(0, parent.rfind('/'));
      try {
        const auto& at = doc.at(nlohmann::ordered_json::json_pointer(parent));
        held = at.type_name();
        break;
      } catch (const nlohmann::json::exception&) {
      }
    }
    // (Members of an object are set, and arrays checked above: a scalar.)
    return Error(pointer + ": cannot set: " + (parent.empty() ? "the scenario" : parent) +
                 " holds " + (held == "null" ? std::string("null") : "a " + held) +
                 ", which has no member to set");
  }
  return doc.dump(2);
}

namespace {

// The scenario text without its "sweep" (a point's text keeps everything else).
Result<std::string> WithoutSweep(const std::string& text) {
  json_input::Problem problem;
  auto parsed = json_input::ParseOrdered(text, &problem);
  if (!parsed) return Error("not valid JSON");
  nlohmann::ordered_json doc = std::move(*parsed);
  if (doc.is_object()) doc.erase("sweep");
  return doc.dump(2);
}

// "sweep point 1 (/kv_format = \"fp8\", /seed = 2)": the point and its
// axes' values, so an error names the setting.
std::string PointWhere(const SweepPlan& plan, std::int64_t k,
                       const std::vector<std::string>& values) {
  std::string where = "sweep point " + std::to_string(k);
  for (std::size_t a = 0; a < plan.axes.size() && a < values.size(); ++a) {
    where += (a == 0 ? " (" : ", ") + plan.axes[a].path + " = " + values[a];
  }
  if (!plan.axes.empty() && !values.empty()) where += ")";
  return where;
}

}  // namespace

Result<SweepPlan> PlanSweep(const std::string& text, const std::string& source, int shard,
                            int shards) {
  if (shards < 1 || shard < 0 || shard >= shards) {
    return Error("shard " + std::to_string(shard) + "/" + std::to_string(shards) +
                 ": expected 0 <= i < n");
  }
  auto base = ParseScenario(text, source);
  if (!base) return base.error();
  SweepPlan plan;
  auto base_text = WithoutSweep(text);
  if (!base_text) return base_text.error();
  plan.base_text = std::move(*base_text);
  plan.source = source;
  plan.axes = base->sweep;
  plan.total = SweepPointCount(plan.axes);  // at most kMaxSweepPoints: the reader refused more
  plan.shard = shard;
  plan.shards = shards;
  for (std::int64_t i = 0; i < plan.count(); ++i) {
    auto p = MakeSweepPoint(plan, plan.index(i));
    if (!p) return p.error();
    // An API run and an engine run have other columns: a sweep's points are
    // all one or all the other, as the scenario is.
    if (p->scenario.pricing.has_value() != base->pricing.has_value()) {
      std::string axis = "/pricing";
      for (const SweepAxis& a : plan.axes) {
        if (a.path == "/pricing" || a.path.starts_with("/pricing/")) axis = a.path;
      }
      return Error(plan.source + "#/sweep: " + PointWhere(plan, p->index, p->values) + ": " +
                   (base->pricing ? "is an engine run (no \"pricing\") where the scenario is an "
                                    "API run"
                                  : "is an API run (\"pricing\" set) where the scenario is an "
                                    "engine run") +
                   ": a sweep prints the scenario's kind of columns (an API run's and an "
                   "engine run's differ); sweep " +
                   axis + " within a scenario that has \"pricing\", or make two scenarios");
    }
  }
  return plan;
}

Result<SweepPoint> MakeSweepPoint(const SweepPlan& plan, std::int64_t k) {
  SweepPoint p;
  p.index = k;
  std::string point_text = plan.base_text;
  std::int64_t rest = k, stride = plan.total;
  for (const SweepAxis& a : plan.axes) {
    stride /= static_cast<std::int64_t>(a.values.size());
    const std::string& v = a.values[static_cast<std::size_t>(rest / stride)];
    rest %= stride;
    p.values.push_back(v);
    auto edited = WithSetting(point_text, a.path, v);
    if (!edited) {
      return edited.error().Within(plan.source + "#/sweep/" + json_input::EscapePointerKey(a.path));
    }
    point_text = std::move(*edited);
  }
  auto scenario = ParseSweepPointScenario(point_text, plan.source);
  if (!scenario) return scenario.error().Within(PointWhere(plan, k, p.values));
  p.scenario = std::move(*scenario);
  return p;
}

Result<std::vector<SweepPoint>> ExpandSweep(const std::string& text, const std::string& source,
                                            int shard, int shards) {
  auto plan = PlanSweep(text, source, shard, shards);
  if (!plan) return plan.error();
  std::vector<SweepPoint> points;
  for (std::int64_t i = 0; i < plan->count(); ++i) {
    auto p = MakeSweepPoint(*plan, plan->index(i));
    if (!p) return p.error();
    points.push_back(std::move(*p));
  }
  return points;
}

Result<std::vector<SweepRow>> RunSweep(const SweepPlan& plan, int jobs,
                                       const std::function<void(std::int64_t)>& progress) {
  const std::size_t count = static_cast<std::size_t>(plan.count());
  std::vector<std::optional<Result<SweepRow>>> results(count);
  WorkloadCache workloads;
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> done{0};
  std::mutex progress_mutex;
  auto run_point = [&](std::size_t i) -> Result<SweepRow> {
    auto point = MakeSweepPoint(plan, plan.index(static_cast<std::int64_t>(i)));
    if (!point) return point.error();
    const std::string where = PointWhere(plan, point->index, point->values);
    // A point no engine runs, or whose deployment cannot serve its workload
    // (weights or a request beyond its memory): a row that says why, not a
    // run. Any other error stops the sweep.
    auto not_runnable = [&](std::string why) {
      SweepRow row{point->index, std::move(point->values), RunMetrics{}, ""};
      row.not_runnable = std::move(why);
      return row;
    };
    if (!point->scenario.not_runnable.empty()) {
      return not_runnable(std::move(point->scenario.not_runnable));
    }
    auto refused = [&](const Error& e) -> Result<SweepRow> {
      if (!e.cannot_serve()) return e.Within(where);
      return not_runnable(e.message());
    };
    if (point->scenario.pricing) {
      auto outcome = RunScenario(point->scenario, workloads);
      if (!outcome) return refused(outcome.error());
      RunMetrics metrics = MetricsOf(*outcome);
      metrics.warnings = RunWarnings(point->scenario, *outcome);
      return SweepRow{point->index, std::move(point->values), std::move(metrics), ""};
    }
    // The row folds the tasks' distributions as they come (as MetricsOf
    // does, in input order) and keeps no task.
    SummaryBuilder kv;
    RunObserver observer;
    observer.on_task = [&](const TaskMetrics& t) { kv.Add(static_cast<double>(t.kv_read_bytes)); };
    observer.on_restart = [&] { kv = SummaryBuilder(); };
    auto run = RunScenario(point->scenario, workloads, observer);
    if (!run) return refused(run.error());
    // A deployment vLLM would not start (its pool holds no max_model_len
    // request) is no run either, as kvbill check fails it.
    if (std::string why = VllmRefusesToStart(run->totals); !why.empty()) {
      return not_runnable(std::move(why));
    }
    RunMetrics metrics;
    metrics.summary = run->summary;
    metrics.kv_read_bytes_per_task = kv.Build();
    metrics.completion_s = run->summary.completion_s;
    metrics.warnings = EngineRunWarnings(point->scenario, run->totals, run->summary);
    return SweepRow{point->index, std::move(point->values), std::move(metrics), ""};
  };
  auto worker = [&] {
    while (true) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      results[i].emplace(run_point(i));
      const std::int64_t n = ++done;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress(n);
      }
    }
  };
  const int threads = std::max(1, std::min<int>(jobs, static_cast<int>(count)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  std::vector<SweepRow> rows;
  rows.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    Result<SweepRow>& r = *results[i];
    if (!r) return r.error();
    rows.push_back(std::move(*r));
  }
  return rows;
}

}  // namespace kvbill
