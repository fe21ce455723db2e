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
#include "reader_bench_util.h"

namespace kvbill {
namespace {

using bench::ReadAll;

std::string Shared(const std::string& relative) { return bench::SharedFile(relative); }

std::string TestData(const std::string& name) {
  return bench::ReadWhole(std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/" + name);
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
