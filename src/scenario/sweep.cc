#include "kvbill/scenario/sweep.h"

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace kvbill {

Result<std::string> WithSetting(const std::string& text, const std::string& pointer,
                                const std::string& value_json) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded()) return Error("not valid JSON");
  nlohmann::ordered_json value = nlohmann::ordered_json::parse(value_json, nullptr, false);
  if (value.is_discarded()) return Error("bad value " + value_json);
  try {
    // A string where an object is wanted ("model": "qwen3-8b" with a path
    // /model/set/...) becomes {"name": ...}, the object form of the same.
    if (pointer.starts_with("/model/") && doc.contains("model") && doc["model"].is_string()) {
      doc["model"] = nlohmann::ordered_json{{"name", doc["model"]}};
    }
    doc[nlohmann::ordered_json::json_pointer(pointer)] = value;
  } catch (const nlohmann::json::exception& e) {
    return Error(pointer + ": cannot set: " + e.what());
  }
  return doc.dump(2);
}

Result<std::vector<SweepPoint>> ExpandSweep(const std::string& text, const std::string& source,
                                            int shard, int shards) {
  if (shards < 1 || shard < 0 || shard >= shards) {
    return Error("shard " + std::to_string(shard) + "/" + std::to_string(shards) +
                 ": expected 0 <= i < n");
  }
  auto base = ParseScenario(text, source);
  if (!base) return base.error();
  std::int64_t total = 1;
  for (const SweepAxis& a : base->sweep) total *= static_cast<std::int64_t>(a.values.size());
  std::vector<SweepPoint> points;
  for (std::int64_t k = shard; k < total; k += shards) {
    SweepPoint p;
    p.index = k;
    std::string point_text = text;
    std::int64_t rest = k, stride = total;
    for (const SweepAxis& a : base->sweep) {
      stride /= static_cast<std::int64_t>(a.values.size());
      const std::string& v = a.values[static_cast<std::size_t>(rest / stride)];
      rest %= stride;
      p.values.push_back(v);
      auto edited = WithSetting(point_text, a.path, v);
      if (!edited) return edited.error().Within(source + "#/sweep/" + a.path.substr(1));
      point_text = std::move(*edited);
    }
    auto scenario = ParseScenario(point_text, source);
    if (!scenario) return scenario.error().Within("sweep point " + std::to_string(k));
    p.scenario = std::move(*scenario);
    points.push_back(std::move(p));
  }
  return points;
}

Result<std::vector<SweepRow>> RunSweep(const std::vector<SweepPoint>& points, int jobs,
                                       const std::function<void(std::int64_t)>& progress) {
  std::vector<std::optional<Result<ScenarioOutcome>>> results(points.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> done{0};
  std::mutex progress_mutex;
  auto worker = [&] {
    while (true) {
      const std::size_t i = next.fetch_add(1);
      if (i >= points.size()) return;
      results[i].emplace(RunScenario(points[i].scenario));
      const std::int64_t n = ++done;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress(n);
      }
    }
  };
  const int threads = std::max(1, std::min<int>(jobs, static_cast<int>(points.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  std::vector<SweepRow> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    Result<ScenarioOutcome>& r = *results[i];
    if (!r) return r.error().Within("sweep point " + std::to_string(points[i].index));
    r->result.requests.clear();  // rows keep the per-task metrics and the summary
    if (r->api) r->api->replay.requests.clear();
    rows.push_back(SweepRow{points[i].index, points[i].values, std::move(*r)});
  }
  return rows;
}

}  // namespace kvbill
