// `kvbill bill`'s stages on the SWEContextBench usage log (300 sessions,
// 14,507 calls): reading the log (bytes per second), pricing one call, and
// the whole bill from a parsed log (calls per second). The log comes from the
// shared data directory; without it the log benchmarks skip themselves.
// Results: docs/performance.md ("tools/bench").
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "kvbill/bill/bill.h"
#include "kvbill/bill/usage_log.h"
#include "kvbill/cost/api_bill.h"
#include "kvbill/cost/price_sheet.h"

namespace kvbill {
namespace {

// The whole file, or "" when it is not there.
const std::string& UsageLogText() {
  static const std::string text = [] {
    std::ifstream in(std::string(KVBILL_SHARED_DATA_DIR) +
                         "/traces/claude-code/usage/swecontextbench_sonnet45.jsonl",
                     std::ios::binary);
    std::ostringstream out;
    if (in) out << in.rdbuf();
    return out.str();
  }();
  return text;
}

const PriceSheet& Sheet() {
  static const PriceSheet sheet = *BundledPriceSheet();
  return sheet;
}

void BM_ReadUsageLog(benchmark::State& state) {
  const std::string& text = UsageLogText();
  if (text.empty()) {
    state.SkipWithError("input not found (shared data directory missing)");
    return;
  }
  std::int64_t calls = 0;
  for (auto _ : state) {
    std::istringstream in(text);
    UsageLog log;
    if (auto s = ReadUsageLog(in, "bench", &log); !s) {
      state.SkipWithError(s.error().message().c_str());
      return;
    }
    calls = static_cast<std::int64_t>(log.calls.size());
    benchmark::DoNotOptimize(log.calls.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
  state.counters["calls"] = static_cast<double>(calls);
}
BENCHMARK(BM_ReadUsageLog)->Unit(benchmark::kMillisecond);

// MakeBill on a log read once: de-duplication, pricing, grouping by session,
// day and model.
void BM_MakeBill(benchmark::State& state) {
  const std::string& text = UsageLogText();
  if (text.empty()) {
    state.SkipWithError("input not found (shared data directory missing)");
    return;
  }
  std::istringstream in(text);
  UsageLog log;
  if (auto s = ReadUsageLog(in, "bench", &log); !s) {
    state.SkipWithError(s.error().message().c_str());
    return;
  }
  for (auto _ : state) {
    auto bill = MakeBill(log, Sheet(), {});
    if (!bill) {
      state.SkipWithError(bill.error().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(bill->total.cost);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(log.calls.size()));
  state.SetLabel("items = calls");
}
BENCHMARK(BM_MakeBill)->Unit(benchmark::kMillisecond);

// One Claude Sonnet 4.5 call of a 60k-token context (a typical late call of
// an autonomous session); Find() resolves the dated id as the bill does.
void BM_PriceCall(benchmark::State& state) {
  const ModelPrice* price = Sheet().Find("claude-sonnet-4-5-20250929");
  if (price == nullptr) {
    state.SkipWithError("claude-sonnet-4-5 not in the bundled sheet");
    return;
  }
  CallUsage usage;
  usage.input = 10;
  usage.cache_write_5m = 581;
  usage.cache_read = 59'000;
  usage.output = 144;
  for (auto _ : state) {
    benchmark::DoNotOptimize(usage);
    auto cost = PriceCall(*price, usage);
    benchmark::DoNotOptimize(cost);
  }
}
BENCHMARK(BM_PriceCall);

void BM_FindModelPrice(benchmark::State& state) {
  for (auto _ : state) {
    const ModelPrice* price = Sheet().Find("claude-sonnet-4-5-20250929");
    benchmark::DoNotOptimize(price);
  }
}
BENCHMARK(BM_FindModelPrice);

}  // namespace
}  // namespace kvbill
