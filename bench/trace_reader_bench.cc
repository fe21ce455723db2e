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
#include "trace/json_fields.h"
#include "trace/line_reader.h"
#include "trace/native_codec.h"

namespace kvbill {
namespace {

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

// The whole file, or "" when it is not there.
std::string SharedFile(const std::string& relative) {
  std::ifstream in(std::string(KVBILL_SHARED_DATA_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream out;
  if (in) out << in.rdbuf();
  return out.str();
}

using NewReader = std::unique_ptr<TraceReader> (*)(std::unique_ptr<std::istream>, std::string,
                                                   ReaderOptions);

// Reads `data` to the end with a fresh reader per iteration.
void ReadAll(benchmark::State& state, const std::string& data, NewReader new_reader) {
  if (data.empty()) {
    state.SkipWithError("input not found (shared data directory missing)");
    return;
  }
  std::int64_t turns = 0;
  for (auto _ : state) {
    auto reader = new_reader(std::make_unique<std::istringstream>(data), "bench", {});
    Task task;
    while (true) {
      auto more = reader->Next(&task);
      if (!more.ok()) {
        state.SkipWithError(more.error().message().c_str());
        return;
      }
      if (!*more) break;
      turns += static_cast<std::int64_t>(task.turns.size());
    }
    benchmark::DoNotOptimize(turns);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(data.size()));
  state.counters["input_MB"] = static_cast<double>(data.size()) / 1e6;
}

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
