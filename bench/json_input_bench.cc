// The cost of refusing repeated keys on the JSON DOM path
// (src/util/json_input.h): the same documents parsed with the check (every
// reader but model configs) and without it (model configs), side by side.
// The ratio is recorded in docs/performance.md ("Repeated-key check").
#include <benchmark/benchmark.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kvbill/trace/generator.h"
#include "kvbill/trace/writer.h"
#include "reader_bench_util.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

// Workload 0: LiteLLM's price sheet (one 1.5 MB document of 2,985 small
// objects, as `--prices` reads it). Workload 1: a generated coding-agent
// trace's lines, each one document (the DOM fallback of the line readers).
const std::vector<std::string>& Documents(std::int64_t workload) {
  static const std::vector<std::string> sheet = [] {
    std::string text = bench::SharedFile("prices/litellm_model_prices_and_context_window.json");
    return text.empty() ? std::vector<std::string>{} : std::vector<std::string>{std::move(text)};
  }();
  static const std::vector<std::string> lines = [] {
    auto preset = FindGeneratorPreset("coding-agent");
    TraceGenerator generator(std::move(*preset), 1);
    std::ostringstream out;
    TraceWriter writer(&out);
    for (int i = 0; i < 100; ++i) (void)writer.Write(generator.Next());
    std::vector<std::string> docs;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) docs.push_back(line);
    return docs;
  }();
  return workload == 0 ? sheet : lines;
}

// Args: workload, check (1: refuse repeated keys, as every reader but model
// configs; 0: allow them, as model configs).
void BM_JsonParseRepeatedKeyCheck(benchmark::State& state) {
  const std::vector<std::string>& docs = Documents(state.range(0));
  if (docs.empty()) {
    state.SkipWithError("input not found");
    return;
  }
  json_input::Options options;
  options.allow_duplicate_keys = state.range(1) == 0;
  std::int64_t bytes = 0;
  for (const std::string& d : docs) bytes += static_cast<std::int64_t>(d.size());
  for (auto _ : state) {
    for (const std::string& d : docs) {
      json_input::Problem problem;
      auto doc = json_input::Parse(d, &problem, options);
      if (!doc) {
        state.SkipWithError(problem.reason.c_str());
        return;
      }
      benchmark::DoNotOptimize(doc->size());
    }
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["input_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_JsonParseRepeatedKeyCheck)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"workload", "check"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kvbill
