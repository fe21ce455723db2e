// Speed of the KV block pool: chained block hashing of a long prompt, and
// Admit / Commit / Release of 50-block prompts against a full 1M-block pool
// (so every fresh block is an eviction).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "kvbill/cache/block_hash.h"
#include "kvbill/cache/prefix_cache.h"

namespace kvbill {
namespace {

constexpr Tokens kBlockSize = 16;
constexpr Tokens kPromptTokens = 100'000;
constexpr std::int64_t kPoolBlocks = 1 << 20;
constexpr std::int64_t kPromptBlocks = 50;
constexpr std::int64_t kSharedBlocks = 10;  // a system prompt, one of 8
constexpr std::int64_t kSystems = 8;

// A 100k-token prompt cut into state.range(0) pieces of distinct content.
void BM_BlockHashes100kTokens(benchmark::State& state) {
  const std::int64_t pieces = state.range(0);
  std::vector<ContentPiece> prompt;
  for (std::int64_t i = 0; i < pieces; ++i) {
    prompt.push_back({HashCombine(42, static_cast<std::uint64_t>(i)), 0, kPromptTokens / pieces});
  }
  for (auto _ : state) {
    std::vector<std::uint64_t> hashes = BlockHashesOf(prompt, kBlockSize);
    benchmark::DoNotOptimize(hashes.data());
  }
  state.SetItemsProcessed(state.iterations() * kPromptTokens);
  state.SetLabel("items = tokens");
}
BENCHMARK(BM_BlockHashes100kTokens)->Arg(1)->Arg(100)->Arg(10'000);

// Prompt `serial`: 10 blocks of a shared system prompt, then 40 of its own.
void FillPrompt(std::uint64_t serial, std::vector<std::uint64_t>* hashes) {
  hashes->clear();
  const std::uint64_t system = serial % kSystems;
  for (std::int64_t i = 0; i < kSharedBlocks; ++i) {
    hashes->push_back((system << 8) | static_cast<std::uint64_t>(i));
  }
  for (std::int64_t i = kSharedBlocks; i < kPromptBlocks; ++i) {
    hashes->push_back(((serial + kSystems) << 8) | static_cast<std::uint64_t>(i));
  }
}

void Run(PrefixCache& cache, SeqId id, const std::vector<std::uint64_t>& hashes) {
  const auto hits = cache.Admit(id, hashes, kPromptBlocks);
  benchmark::DoNotOptimize(hits);
  for (std::int64_t i = 0; i < kPromptBlocks; ++i) {
    cache.Commit(id, i, hashes[static_cast<std::size_t>(i)]);
  }
}

// One request at a time: Admit (10 hits, 40 evictions), commit, release.
void BM_AdmitRelease50BlocksFullPool(benchmark::State& state) {
  PrefixCache cache(kPoolBlocks);
  std::vector<std::uint64_t> hashes;
  std::uint64_t serial = 0;
  for (; serial < static_cast<std::uint64_t>(kPoolBlocks / (kPromptBlocks - kSharedBlocks)) + 100;
       ++serial) {
    FillPrompt(serial, &hashes);
    Run(cache, static_cast<SeqId>(serial), hashes);
    cache.Release(static_cast<SeqId>(serial));
  }
  for (auto _ : state) {
    FillPrompt(serial, &hashes);
    Run(cache, static_cast<SeqId>(serial), hashes);
    cache.Release(static_cast<SeqId>(serial));
    ++serial;
  }
  state.SetItemsProcessed(state.iterations() * kPromptBlocks);
  state.counters["evicted"] = static_cast<double>(cache.stats().evicted_blocks);
  state.SetLabel("items = blocks");
}
BENCHMARK(BM_AdmitRelease50BlocksFullPool);

// state.range(0) requests running at once: each iteration admits one and
// releases the oldest, so the LRU and the sequence table stay busy.
void BM_AdmitRelease50BlocksWithRunningBatch(benchmark::State& state) {
  const auto running = static_cast<std::size_t>(state.range(0));
  PrefixCache cache(kPoolBlocks);
  std::vector<std::uint64_t> hashes;
  std::deque<SeqId> live;
  std::uint64_t serial = 0;
  auto step = [&] {
    FillPrompt(serial, &hashes);
    Run(cache, static_cast<SeqId>(serial), hashes);
    live.push_back(static_cast<SeqId>(serial));
    ++serial;
    if (live.size() > running) {
      cache.Release(live.front());
      live.pop_front();
    }
  };
  while (serial <
         static_cast<std::uint64_t>(kPoolBlocks / (kPromptBlocks - kSharedBlocks)) + running)
    step();
  for (auto _ : state) step();
  state.SetItemsProcessed(state.iterations() * kPromptBlocks);
  state.SetLabel("items = blocks");
}
BENCHMARK(BM_AdmitRelease50BlocksWithRunningBatch)->Arg(256);

// Cache lookup alone: the longest cached prefix of a 50-block prompt whose
// first state.range(0) blocks are cached, in a full 1M-block pool.
void BM_LongestPrefix50BlocksFullPool(benchmark::State& state) {
  const std::int64_t cached = state.range(0);
  PrefixCache cache(kPoolBlocks);
  std::vector<std::uint64_t> hashes;
  std::uint64_t serial = 0;
  for (; serial < static_cast<std::uint64_t>(kPoolBlocks / (kPromptBlocks - kSharedBlocks)) + 100;
       ++serial) {
    FillPrompt(serial, &hashes);
    Run(cache, static_cast<SeqId>(serial), hashes);
    cache.Release(static_cast<SeqId>(serial));
  }
  // The last prompt run is cached whole; change its blocks from `cached` on.
  for (std::int64_t i = cached; i < kPromptBlocks; ++i) {
    hashes[static_cast<std::size_t>(i)] = ~hashes[static_cast<std::size_t>(i)];
  }
  std::int64_t hits = 0;
  for (auto _ : state) {
    hits = cache.LongestPrefix(hashes);
    benchmark::DoNotOptimize(hits);
  }
  if (hits != cached) state.SkipWithError("unexpected hit count");
  state.SetItemsProcessed(state.iterations() * kPromptBlocks);
  state.SetLabel("items = prompt blocks");
}
BENCHMARK(BM_LongestPrefix50BlocksFullPool)->Arg(0)->Arg(10)->Arg(50);

}  // namespace
}  // namespace kvbill
