// Throughput of the trace readers on in-memory data, in bytes of input per
// second. Results are recorded in docs/performance.md ("Readers").
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "kvbill/trace/generator.h"
#include "kvbill/trace/importers.h"
#include "kvbill/trace/writer.h"
#include "reader_bench_util.h"
#include "trace/json_fields.h"
#include "trace/line_reader.h"
#include "trace/native_codec.h"

namespace kvbill {
namespace {

using bench::ReadAll;

constexpr std::int64_t kGeneratedTasks = 300;
constexpr std::uint64_t kSeed = 1;

// A generated coding-agent trace in the native format (~ 1 MB at 300 tasks).
const std::string& NativeData() {
  static const std::string data = [] {
    auto preset = FindGeneratorPreset("coding-agent");
    TraceGenerator generator(std::move(*preset), kSeed);
    std::ostringstream out;
    TraceWriter writer(&out);
    for (std::int64_t i = 0; i < kGeneratedTasks; ++i) (void)writer.Write(generator.Next());
    return out.str();
  }();
  return data;
}

using bench::SharedFile;

void BM_NativeReader(benchmark::State& state) { ReadAll(state, NativeData(), &NewNativeReader); }

void BM_MooncakeImporter(benchmark::State& state) {
  static const std::string data = SharedFile("traces/mooncake/conversation_trace.jsonl");
  ReadAll(state, data, &NewMooncakeReader);
}

void BM_ClaudeCodeImporter(benchmark::State& state) {
  static const std::string data =
      SharedFile("traces/claude-code/usage/swecontextbench_sonnet45.jsonl");
  ReadAll(state, data, &NewClaudeCodeReader);
}

// Baseline: the native reader's loop with every line decoded through the
// nlohmann/json DOM (ParseJsonObject + DecodeTask), as all readers did before
// the scanning fast paths; its ratio to BM_NativeReader is the speed-up.
void BM_NativeReaderDomBaseline(benchmark::State& state) {
  const std::string& data = NativeData();
  std::int64_t turns = 0;
  for (auto _ : state) {
    LineReader lines(std::make_unique<std::istringstream>(data), "bench");
    std::string line;
    bool header = true;
    while (lines.Next(&line)) {
      if (std::exchange(header, false)) continue;
      auto json = ParseJsonObject(line);
      if (!json) {
        state.SkipWithError(json.error().message().c_str());
        return;
      }
      auto task = DecodeTask(*json);
      if (!task || !ValidateTask(*task)) {
        state.SkipWithError("bad task");
        return;
      }
      turns += static_cast<std::int64_t>(task->turns.size());
    }
    benchmark::DoNotOptimize(turns);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(data.size()));
  state.counters["input_MB"] = static_cast<double>(data.size()) / 1e6;
}

BENCHMARK(BM_NativeReader)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MooncakeImporter)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ClaudeCodeImporter)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NativeReaderDomBaseline)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kvbill
