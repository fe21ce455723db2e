// Helpers shared by the reader benchmarks (trace_reader_bench.cc,
// importer_bench.cc): reading inputs whole, and timing a reader over
// in-memory data in bytes of input per second.
#ifndef KVBILL_BENCH_READER_BENCH_UTIL_H_
#define KVBILL_BENCH_READER_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "kvbill/trace/reader.h"

namespace kvbill::bench {

// The whole file, or "" when it is not there.
inline std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  if (in) out << in.rdbuf();
  return out.str();
}

// A file of the shared data directory, or "" when it is missing.
inline std::string SharedFile(const std::string& relative) {
  return ReadWhole(std::string(KVBILL_SHARED_DATA_DIR) + "/" + relative);
}

using NewReader = std::unique_ptr<TraceReader> (*)(std::unique_ptr<std::istream>, std::string,
                                                   ReaderOptions);

// Reads `data` to the end with a fresh reader per iteration.
inline void ReadAll(benchmark::State& state, const std::string& data, NewReader new_reader) {
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

}  // namespace kvbill::bench

#endif  // KVBILL_BENCH_READER_BENCH_UTIL_H_
