#include "kvbill/trace/stats.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kvbill {
namespace {

// The block hashes seen so far: exactly, in an open-addressing table, up to
// a limit of distinct hashes; beyond it, in a Bloom filter of 2^29 bits
// (64 MiB) and 5 probes, whose false positives (a new hash taken for a seen
// one) can only raise the reuse share: at n distinct hashes the rate is
// (1 - e^(-5n / 2^29))^5, 1.5% at 6 x 10^7 and 0.1% at 2.5 x 10^7.
class SeenBlocks {
 public:
  explicit SeenBlocks(std::int64_t exact_limit) : exact_limit_(exact_limit) {}

  bool exact() const { return bloom_.empty(); }

  bool Contains(std::uint64_t hash) const {
    if (!exact()) return BloomContains(hash);
    if (hash == kEmpty) return has_empty_key_;
    if (table_.empty()) return false;
    for (std::size_t i = Mix(hash) & (table_.size() - 1);; i = (i + 1) & (table_.size() - 1)) {
      if (table_[i] == hash) return true;
      if (table_[i] == kEmpty) return false;
    }
  }

  void Insert(std::uint64_t hash) {
    if (!exact()) {
      BloomInsert(hash);
      return;
    }
    if (Contains(hash)) return;
    if (count_ + 1 > exact_limit_) {
      // Every hash held moves into the filter; the table is freed.
      bloom_.assign(kBloomWords, 0);
      for (const std::uint64_t h : table_) {
        if (h != kEmpty) BloomInsert(h);
      }
      if (has_empty_key_) BloomInsert(kEmpty);
      std::vector<std::uint64_t>().swap(table_);
      BloomInsert(hash);
      return;
    }
    ++count_;
    if (hash == kEmpty) {
      has_empty_key_ = true;
      return;
    }
    if (table_.empty() || 2 * count_ > static_cast<std::int64_t>(table_.size())) Grow();
    Place(hash);
  }

 private:
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::size_t kBloomBits = std::size_t{1} << 29;
  static constexpr std::size_t kBloomWords = kBloomBits / 64;
  static constexpr int kProbes = 5;

  // splitmix64's finaliser: ids may be small consecutive integers.
  static std::uint64_t Mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  void Place(std::uint64_t hash) {
    for (std::size_t i = Mix(hash) & (table_.size() - 1);; i = (i + 1) & (table_.size() - 1)) {
      if (table_[i] == kEmpty) {
        table_[i] = hash;
        return;
      }
    }
  }

  void Grow() {
    std::vector<std::uint64_t> old;
    old.swap(table_);
    table_.assign(old.empty() ? 1024 : 2 * old.size(), kEmpty);
    for (const std::uint64_t h : old) {
      if (h != kEmpty) Place(h);
    }
  }

  // Double hashing: probe i is h1 + i * h2 (Kirsch and Mitzenmacher).
  template <class Visit>
  static bool Probes(std::uint64_t hash, Visit&& visit) {
    const std::uint64_t mixed = Mix(hash);
    const std::uint64_t h1 = mixed & 0xffffffffULL;
    const std::uint64_t h2 = (mixed >> 32) | 1;
    for (int i = 0; i < kProbes; ++i) {
      if (!visit((h1 + static_cast<std::uint64_t>(i) * h2) & (kBloomBits - 1))) return false;
    }
    return true;
  }

  bool BloomContains(std::uint64_t hash) const {
    return Probes(hash, [&](std::uint64_t bit) { return (bloom_[bit / 64] >> (bit % 64)) & 1; });
  }

  void BloomInsert(std::uint64_t hash) {
    Probes(hash, [&](std::uint64_t bit) {
      bloom_[bit / 64] |= std::uint64_t{1} << (bit % 64);
      return true;
    });
  }

  std::int64_t exact_limit_;
  std::int64_t count_ = 0;
  bool has_empty_key_ = false;
  std::vector<std::uint64_t> table_;
  std::vector<std::uint64_t> bloom_;
};

}  // namespace

Result<TraceStats> ComputeTraceStats(TraceReader* reader, const TraceStatsOptions& options) {
  TraceStats stats;
  SummaryBuilder turns, input, appended, output, growth, gap;
  Tokens prompt_sum = 0;
  Tokens reused_sum = 0;
  Tokens hashed_prompt_sum = 0;
  Tokens hashed_hit_sum = 0;
  SeenBlocks seen_blocks(options.exact_block_hashes);
  Task task;
  while (true) {
    auto more = reader->Next(&task);
    if (!more) return more.error();
    if (!*more) break;
    ++stats.tasks;
    turns.Add(static_cast<double>(task.turns.size()));
    const std::vector<Tokens> prompts = PromptTokens(task);
    for (std::size_t k = 0; k < task.turns.size(); ++k) {
      const Turn& turn = task.turns[k];
      const Tokens added = AppendedTokens(turn);
      ++stats.requests;
      input.Add(static_cast<double>(prompts[k]));
      appended.Add(static_cast<double>(added));
      output.Add(static_cast<double>(turn.output));
      if (turn.output_is_placeholder) ++stats.placeholder_outputs;
      if (k > 0) growth.Add(static_cast<double>(prompts[k] - prompts[k - 1]));
      if (k + 1 < task.turns.size()) gap.Add(turn.tool_s);
      prompt_sum += prompts[k];
      reused_sum += prompts[k] - added;
      if (turn.blocks) {
        hashed_prompt_sum += prompts[k];
        const Tokens size = turn.blocks->block_size;
        for (std::size_t b = 0; b < turn.blocks->hashes.size(); ++b) {
          if (!seen_blocks.Contains(turn.blocks->hashes[b])) break;
          const Tokens start = static_cast<Tokens>(b) * size;
          hashed_hit_sum += std::clamp<Tokens>(prompts[k] - start, 0, size);
        }
        for (const std::uint64_t h : turn.blocks->hashes) seen_blocks.Insert(h);
      }
    }
  }
  stats.turns_per_task = turns.Build();
  stats.input_tokens = input.Build();
  stats.appended_tokens = appended.Build();
  stats.output_tokens = output.Build();
  stats.context_growth_tokens = growth.Build();
  stats.gap_s = gap.Build();
  if (prompt_sum > 0) {
    stats.task_prefix_reuse_share =
        static_cast<double>(reused_sum) / static_cast<double>(prompt_sum);
  }
  stats.block_reuse_exact = seen_blocks.exact();
  if (hashed_prompt_sum > 0) {
    stats.block_reuse_share =
        static_cast<double>(hashed_hit_sum) / static_cast<double>(hashed_prompt_sum);
  }
  return stats;
}

}  // namespace kvbill
