// Throughput of the importers that bench/trace_reader_bench.cc does not
// cover, on in-memory data, in bytes of input per second. Inputs are the
// real files of the shared data directory where it has one (skipped when it
// is missing), else the small test files of tests/data/traces (a few KB: the
// rate then includes the reader's set-up). Results: docs/performance.md.
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "kvbill/trace/importers.h"

namespace kvbill {
namespace {

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  if (in) out << in.rdbuf();
  return out.str();
}

std::string Shared(const std::string& relative) {
  return ReadWhole(std::string(KVBILL_SHARED_DATA_DIR) + "/" + relative);
}

std::string TestData(const std::string& name) {
  return ReadWhole(std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/" + name);
}

using NewReader = std::unique_ptr<TraceReader> (*)(std::unique_ptr<std::istream>, std::string,
                                                   ReaderOptions);

// Reads `data` to the end with a fresh reader per iteration.
void ReadAll(benchmark::State& state, const std::string& data, NewReader new_reader) {
  if (data.empty()) {
    state.SkipWithError("input not found");
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

void BM_AzureImporter(benchmark::State& state) {
  static const std::string data = Shared("traces/azure2023/AzureLLMInferenceTrace_conv.csv");
  ReadAll(state, data, &NewAzureReader);
}

void BM_TraceLabImporter(benchmark::State& state) {
  static const std::string data =
      Shared("traces/tracelab/example_sessions_sanitized_round_trace.jsonl");
  ReadAll(state, data, &NewTraceLabReader);
}

// A Claude Code transcript as the stop hook saves it: one JSON array.
void BM_ClaudeCodeArrayImporter(benchmark::State& state) {
  static const std::string data = Shared("traces/claude-code/raw/attio-mcp-server_3954325b.json");
  ReadAll(state, data, &NewClaudeCodeReader);
}

void BM_CodexImporter(benchmark::State& state) {
  static const std::string data = TestData("codex_small.jsonl");
  ReadAll(state, data, &NewCodexReader);
}

void BM_OpenAiImporter(benchmark::State& state) {
  static const std::string data = TestData("openai_small.jsonl");
  ReadAll(state, data, &NewOpenAiReader);
}

void BM_DynamoImporter(benchmark::State& state) {
  static const std::string data = TestData("dynamo_small.jsonl");
  ReadAll(state, data, &NewDynamoReader);
}

BENCHMARK(BM_AzureImporter)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceLabImporter)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ClaudeCodeArrayImporter)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CodexImporter)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OpenAiImporter)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DynamoImporter)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kvbill
