#include "kvbill/cache/kv_groups.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "kvbill/model/kv_footprint.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

// PrefixCache sequence keys: group g of sequence id is one PrefixCache
// sequence whose block list is the group's held blocks [lo, hi) (a windowed
// group drops its leading blocks with ReleaseFront), and the linear state is
// one more. Keys are negative; ids below 2^55, groups below 255.
constexpr int kGroupBits = 8;
constexpr std::int64_t kStateGroup = (std::int64_t{1} << kGroupBits) - 1;

SeqId Key(SeqId id, std::int64_t group) {
  if (id < 0 || id >= (std::int64_t{1} << (63 - kGroupBits))) {
    throw std::length_error("KvPool: sequence id out of range");
  }
  return -1 - ((id << kGroupBits) | group);
}

// Group g's copy of a block: its run key mixed with g (group 0 unchanged).
std::uint64_t Salt(std::size_t g, std::uint64_t hash) {
  if (g == 0) return hash;
  std::uint64_t x = hash ^ (static_cast<std::uint64_t>(g) * 0x9e37'79b9'7f4a'7c15ULL);
  x ^= x >> 31;
  x *= 0xbf58'476d'1ce4'e5b9ULL;
  return x ^ (x >> 29);
}

struct KindKey {
  KvGroupKind kind;
  Tokens window;
  bool operator==(const KindKey&) const = default;
};

KindKey KindOf(const LayerShape& layer) {
  switch (layer.kind) {
    case LayerKind::kSlidingWindow:
      return {KvGroupKind::kSliding, layer.window};
    case LayerKind::kChunkedAttention:
      return {KvGroupKind::kChunked, layer.window};
    default:
      return {KvGroupKind::kFull, 0};
  }
}

}  // namespace

Tokens WindowStart(const KvCacheGroup& group, Tokens computed) {
  switch (group.kind) {
    case KvGroupKind::kSliding:
      return std::max<Tokens>(0, computed - group.window + 1);
    case KvGroupKind::kChunked:
      return computed / group.window * group.window;
    case KvGroupKind::kFull:
      break;
  }
  return 0;
}

bool KvGroupLayout::Windowed() const {
  return std::any_of(groups.begin(), groups.end(),
                     [](const KvCacheGroup& g) { return g.kind != KvGroupKind::kFull; });
}

bool SglangHybridSlidingPool(const ModelShape& model) {
  // model_config.py is_hybrid_swa_model, less gpt-oss (disabled in
  // server_args.py's GptOssForCausalLM branch).
  static constexpr std::string_view kHybrid[] = {"Llama4ForConditionalGeneration",
                                                 "MiMoV2FlashForCausalLM", "MiMoV2MTP",
                                                 "Step3p5ForCausalLM", "Step3p5MTP"};
  return std::find(std::begin(kHybrid), std::end(kHybrid), model.architecture) != std::end(kHybrid);
}

ModelShape SglangPoolModel(const ModelShape& model) {
  if (SglangHybridSlidingPool(model)) return model;
  ModelShape out = model;
  for (LayerShape& l : out.layers) {
    if (l.kind == LayerKind::kSlidingWindow || l.kind == LayerKind::kChunkedAttention) {
      l.kind = LayerKind::kFullAttention;
      l.window = 0;
    }
  }
  return out;
}

KvGroupLayout MakeKvGroupLayout(const ModelShape& model, const ElementFormat& format,
                                int tensor_parallel, Tokens block_size) {
  assert(block_size >= 1);
  KvGroupLayout layout;
  layout.block_size = block_size;
  std::vector<KindKey> kinds;
  std::vector<int> counts;
  std::int64_t all_page_bits = 0, max_bits = 0;
  Bytes window_bytes = 0;
  for (const LayerShape& l : model.layers) {
    // A layer reading another's cache has no pages of its own (vLLM leaves
    // KV-sharing layers out of the cache spec).
    if (!l.KeepsPerTokenKv() || l.SharesKv()) continue;
    // A compressed layer pages its entries; its window is a per-sequence
    // constant (kv_footprint.h).
    const std::int64_t page_bits = LayerBitsPerBlock(l, format, block_size, tensor_parallel);
    const std::int64_t bits = CeilDiv(page_bits, block_size);
    if (l.IsCompressed()) window_bytes += (l.window * LatentEntryBits(l, format) + 7) / 8;
    all_page_bits += page_bits;
    max_bits = std::max(max_bits, bits);
    const KindKey k = KindOf(l);
    const auto it = std::find(kinds.begin(), kinds.end(), k);
    if (it == kinds.end()) {
      kinds.push_back(k);
      counts.push_back(1);
    } else {
      ++counts[static_cast<std::size_t>(it - kinds.begin())];
    }
  }
  layout.state_bytes = StateBytesPerSequence(model, tensor_parallel) + window_bytes;
  layout.state_stops_prefix_caching = model.HasState();
  if (!kinds.empty()) {
    // The fewest layers of any kind, or the most when no kind has 1.25
    // times the fewest (vLLM pads 12 sliding + 13 full layers to 13 + 13,
    // not 12 + 24).
    const int fewest = *std::min_element(counts.begin(), counts.end());
    const int most = *std::max_element(counts.begin(), counts.end());
    const int size = 4 * most < 5 * fewest ? most : fewest;
    layout.layers_per_group = size;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      for (int left = counts[k]; left > 0; left -= size) {
        layout.groups.push_back(KvCacheGroup{kinds[k].kind, kinds[k].window, std::min(left, size)});
      }
    }
    const std::int64_t page_bits = kinds.size() == 1 ? all_page_bits : max_bits * size * block_size;
    layout.page_bytes = (page_bits + 7) / 8;
  } else {
    layout.page_bytes = layout.state_bytes;  // a state-only model: one page per sequence
  }
  if (layout.state_bytes > 0 && layout.page_bytes > 0) {
    layout.state_pages = CeilDiv(layout.state_bytes, layout.page_bytes);
  }
  return layout;
}

KvPool::KvPool(KvGroupLayout layout, std::int64_t capacity_pages, bool caching)
    : layout_(std::move(layout)), cache_(capacity_pages, caching) {}

std::vector<std::uint64_t> KvPool::TakeEvictedHashes() {
  std::vector<std::uint64_t> out;
  for (const BlockRun& b : cache_.TakeEvicted()) out.push_back(BlockRunHash(b.key, b.first));
  return out;
}

KvPool::~KvPool() = default;

void KvPool::GroupSlice(std::size_t g, std::span<const BlockRun> blocks, std::int64_t from,
                        std::int64_t to, std::vector<BlockRun>* out) const {
  out->clear();
  std::int64_t start = 0;
  for (const BlockRun& r : blocks) {
    const std::int64_t end = start + r.count;
    const std::int64_t lo = std::max(start, from), hi = std::min(end, to);
    if (lo < hi) out->push_back(BlockRun{Salt(g, r.key), r.first + (lo - start), hi - lo});
    if (end >= to) break;
    start = end;
  }
}

std::int64_t KvPool::FirstBlock(std::size_t g, Tokens computed) const {
  return WindowStart(layout_.groups[g], computed) / layout_.block_size;
}

std::int64_t KvPool::LongestPrefix(std::span<const BlockRun> blocks, std::int64_t limit) const {
  if (layout_.Single()) return cache_.LongestPrefix(blocks, limit);
  std::int64_t n = 0;
  for (const BlockRun& r : blocks) n += r.count;
  n = std::min(n, limit);
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (layout_.groups[g].kind != KvGroupKind::kFull) continue;
    if (g == 0) {
      n = cache_.LongestPrefix(blocks, n);
      continue;
    }
    GroupSlice(g, blocks, 0, n, &scratch_);
    n = cache_.LongestPrefix(scratch_, n);
  }
  // Windowed groups: lower n to the largest value whose window is cached,
  // jumping below the highest missing block; repeat until no group lowers it
  // (a group's window start never grows as n falls).
  for (bool lowered = true; lowered && n > 0;) {
    lowered = false;
    for (std::size_t g = 0; g < layout_.groups.size() && n > 0; ++g) {
      if (layout_.groups[g].kind == KvGroupKind::kFull) continue;
      for (;;) {
        const std::int64_t lo = FirstBlock(g, n * layout_.block_size);
        GroupSlice(g, blocks, lo, n, &scratch_);
        const std::int64_t missing = cache_.LastMissing(scratch_);
        if (missing < 0) break;
        n = lo + missing;  // every n' above block lo + missing needs that block
        lowered = true;
        if (n == 0) break;
      }
    }
  }
  return n;
}

KvPool::Plan KvPool::PlanAdmit(std::span<const BlockRun> blocks, std::int64_t hits,
                               std::int64_t blocks_needed) const {
  Plan plan;
  const std::int64_t n = std::min(hits, blocks_needed);
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    const std::int64_t lo = std::min(FirstBlock(g, n * layout_.block_size), n);
    GroupSlice(g, blocks, lo, n, &scratch_);
    plan.cached += cache_.CachedBlocksIn(scratch_);
    plan.fresh += blocks_needed - n;
  }
  plan.fresh += layout_.state_pages;
  return plan;
}

bool KvPool::CanAdmit(std::span<const BlockRun> blocks, std::int64_t hits,
                      std::int64_t blocks_needed) const {
  if (layout_.Single()) return cache_.CanAdmit(blocks, blocks_needed, hits);
  const Plan plan = PlanAdmit(blocks, hits, blocks_needed);
  return plan.fresh <= cache_.free_blocks() - plan.cached;
}

std::int64_t KvPool::AdmissionDeficit(std::span<const BlockRun> blocks, std::int64_t hits,
                                      std::int64_t blocks_needed) const {
  if (layout_.Single()) {
    return CanAdmit(blocks, hits, blocks_needed) ? 0 : kUnlimitedBlocks;  // no frees to wait for
  }
  const Plan plan = PlanAdmit(blocks, hits, blocks_needed);
  return plan.fresh - (cache_.free_blocks() - plan.cached);
}

std::int64_t KvPool::EvictableHits(std::span<const BlockRun> blocks, std::int64_t hits) const {
  return PlanAdmit(blocks, hits, hits).cached;
}

std::int64_t KvPool::FreedDuring(SeqId id, Tokens computed, Tokens steps) const {
  if (layout_.Single() || steps <= 0) return 0;
  const auto it = held_.find(id);
  if (it == held_.end()) return 0;
  std::int64_t freed = 0;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (layout_.groups[g].kind == KvGroupKind::kFull) continue;
    freed += std::max<std::int64_t>(0, FirstBlock(g, computed + steps - 1) - it->second.lo[g]);
  }
  return freed;
}

std::int64_t KvPool::AdmissionPages(std::int64_t hits, std::int64_t blocks_needed) const {
  if (layout_.Single()) return blocks_needed;
  std::int64_t pages = layout_.state_pages;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    pages += blocks_needed - std::min(FirstBlock(g, hits * layout_.block_size), hits);
  }
  return pages;
}

std::int64_t PeakPages(const KvGroupLayout& layout, Tokens tokens, Tokens chunk) {
  const Tokens bs = layout.block_size;
  const std::int64_t blocks = CeilDiv(tokens, bs);
  if (layout.Single()) return blocks;
  std::int64_t pages = layout.state_pages;
  for (const KvCacheGroup& g : layout.groups) {
    pages +=
        g.kind == KvGroupKind::kFull ? blocks : WindowedPeakBlocks(g.window, tokens, chunk, bs);
  }
  return pages;
}

std::int64_t KvPool::PeakPages(Tokens tokens, Tokens chunk) const {
  return kvbill::PeakPages(layout_, tokens, chunk);
}

Tokens PoolTokens(const KvGroupLayout& layout, std::int64_t pages) {
  const std::int64_t groups = std::max<std::int64_t>(1, std::ssize(layout.groups));
  if (pages >= kUnlimitedBlocks / layout.block_size) return kUnlimitedBlocks;
  return pages / groups * layout.block_size;
}

Tokens KvPool::capacity_tokens() const { return PoolTokens(layout_, cache_.capacity_blocks()); }

Tokens KvPool::LongestSequence(Tokens chunk) const {
  const std::int64_t pages = cache_.capacity_blocks();
  if (pages >= kUnlimitedBlocks / layout_.block_size) return kUnlimitedBlocks;
  if (PeakPages(1, chunk) > pages) return 0;
  // PeakPages grows with the tokens; with windowed groups alone it stops
  // growing, and the pool holds any length (kUnlimitedBlocks, as an
  // unlimited pool: a finite bound here was read as the pool's, 41,345
  // tokens for Mistral-7B on an L4, whose sliding layers hold any length).
  Tokens lo = 1, hi = std::max<Tokens>(2, pages * layout_.block_size + 1);
  if (PeakPages(hi, chunk) <= pages) {
    return PeakPages(2 * hi, chunk) == PeakPages(hi, chunk) ? kUnlimitedBlocks : hi;
  }
  while (hi - lo > 1) {  // PeakPages(lo) fits, PeakPages(hi) does not
    const Tokens mid = lo + (hi - lo) / 2;
    (PeakPages(mid, chunk) <= pages ? lo : hi) = mid;
  }
  return lo;
}

std::optional<std::int64_t> KvPool::Admit(SeqId id, std::span<const BlockRun> blocks,
                                          std::int64_t hits, std::int64_t blocks_needed) {
  if (layout_.Single()) return cache_.Admit(id, blocks, blocks_needed, hits);
  if (held_.contains(id)) return std::nullopt;
  const Plan plan = PlanAdmit(blocks, hits, blocks_needed);
  if (plan.fresh > cache_.free_blocks() - plan.cached) return std::nullopt;
  const std::int64_t n = std::min(hits, blocks_needed);
  Held& held = held_[id];
  const std::size_t groups = layout_.groups.size();
  held.lo.assign(groups, 0);
  held.hi.assign(groups, blocks_needed);
  // References on every group's hits first, then fresh pages (as vLLM's
  // allocate_slots does), so no fresh page evicts a block about to be hit.
  // A windowed group takes only the hits inside its window, in order.
  for (std::size_t g = 0; g < groups; ++g) {
    if (layout_.groups[g].kind != KvGroupKind::kFull) {
      held.lo[g] = std::min(FirstBlock(g, n * layout_.block_size), n);
    }
    const std::int64_t lo = held.lo[g];
    if (lo == n) continue;
    GroupSlice(g, blocks, lo, n, &scratch_);
    [[maybe_unused]] auto got =
        cache_.Admit(Key(id, static_cast<std::int64_t>(g)), scratch_, n - lo);
    assert(got && *got == n - lo);
  }
  for (std::size_t g = 0; g < groups; ++g) {
    cache_.Grow(Key(id, static_cast<std::int64_t>(g)), blocks_needed - n);
  }
  if (layout_.state_pages > 0) cache_.Grow(Key(id, kStateGroup), layout_.state_pages);
  return n;
}

bool KvPool::Reserve(SeqId id, Tokens computed, Tokens tokens, BlockRunList blocks) {
  const std::int64_t want = CeilDiv(tokens, layout_.block_size);
  if (layout_.Single()) {
    const std::int64_t need = want - cache_.BlocksOf(id);
    return need <= 0 || cache_.Grow(id, need);
  }
  const auto it = held_.find(id);
  assert(it != held_.end());
  Held& held = it->second;
  std::int64_t need = 0;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    const SeqId key = Key(id, static_cast<std::int64_t>(g));
    const std::int64_t lo = held.lo[g];
    const std::int64_t first = std::min(FirstBlock(g, computed), held.hi[g]);
    if (first > lo) {
      // Blocks [lo, first) leave the window: committed, then released newest
      // first (ReleaseFront), as vLLM's remove_skipped_blocks frees them.
      // (The order of the commits does not matter: their names are distinct,
      // and a release neither names a block nor changes the index.)
      const std::int64_t named = std::min(first, blocks.blocks());
      if (named > lo) {
        scratch_.clear();
        blocks.Slice(lo, named, &scratch_);
        for (BlockRun& r : scratch_) r.key = Salt(g, r.key);
        cache_.CommitRange(key, 0, scratch_);
      }
      cache_.ReleaseFront(key, first - lo);
      held.lo[g] = first;
    }
    need += std::max<std::int64_t>(0, want - held.hi[g]);
  }
  if (need > cache_.free_blocks()) return false;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (want <= held.hi[g]) continue;
    cache_.Grow(Key(id, static_cast<std::int64_t>(g)), want - held.hi[g]);
    held.hi[g] = want;
  }
  return true;
}

// The most blocks group g holds during decode steps at computed tokens
// c in [from, to]: after the step's Reserve it holds blocks
// [FirstBlock(c), ceil((c + 1) / bs)).
std::int64_t KvPool::MaxHeld(std::size_t g, Tokens from, Tokens to) const {
  const KvCacheGroup& group = layout_.groups[g];
  const Tokens bs = layout_.block_size;
  auto held = [&](Tokens c) { return CeilDiv(c + 1, bs) - FirstBlock(g, c); };
  std::int64_t best = 0;
  if (group.kind == KvGroupKind::kSliding) {
    // Non-decreasing until the window fills (c = W - 1), then periodic in c
    // with period bs.
    const Tokens fill = group.window - 1;
    if (from < fill) best = held(std::min(to, fill - 1));
    const Tokens start = std::max(from, fill);
    for (Tokens c = start; c <= to && c < start + bs; ++c) best = std::max(best, held(c));
    return best;
  }
  // Chunked: non-decreasing within a chunk, so the maximum is at the end of
  // a chunk or of the range; chunk ends repeat their value with a period of
  // at most bs chunks.
  const Tokens w = group.window;
  best = held(to);
  int seen = 0;
  for (Tokens end = from / w * w + w - 1; end < to && seen <= bs; end += w, ++seen) {
    best = std::max(best, held(end));
  }
  return best;
}

std::int64_t KvPool::DecodeDemand(SeqId id, Tokens computed, Tokens steps) const {
  const Tokens bs = layout_.block_size;
  if (layout_.Single()) return CeilDiv(computed + steps, bs) - cache_.BlocksOf(id);
  if (steps <= 0) return 0;
  const auto it = held_.find(id);
  if (it == held_.end()) return 0;
  const Held& held = it->second;
  std::int64_t demand = 0;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    const std::int64_t now = held.hi[g] - held.lo[g];
    const std::int64_t most = layout_.groups[g].kind == KvGroupKind::kFull
                                  ? std::max(held.hi[g], CeilDiv(computed + steps, bs))
                                  : std::max(MaxHeld(g, computed, computed + steps - 1), now);
    demand += most - now;
  }
  return demand;
}

std::int64_t KvPool::PeakPagesDuring(SeqId id, Tokens computed, Tokens steps) const {
  const Tokens bs = layout_.block_size;
  if (layout_.Single()) return CeilDiv(computed + steps, bs);
  const auto it = held_.find(id);
  if (it == held_.end() || steps <= 0) return PagesOf(id);
  const Held& held = it->second;
  // Pages after the Reserve at c tokens computed.
  auto pages_at = [&](Tokens c) {
    std::int64_t pages = layout_.state_pages;
    for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
      const std::int64_t hi = std::max(held.hi[g], CeilDiv(c + 1, bs));
      pages += hi - std::max(held.lo[g], std::min(FirstBlock(g, c), hi));
    }
    return pages;
  };
  // Pages only fall where a window start crosses a block boundary, so the
  // maximum is at the range's end or just before such a crossing. Past the
  // window's fill, pages at c + P are at least those at c (P: bs for
  // sliding groups, the chunk, or chunk x bs when bs does not divide it), so
  // only crossings in the last P steps matter.
  const Tokens end = computed + steps - 1;
  Tokens period = 1;
  for (const KvCacheGroup& g : layout_.groups) {
    if (g.kind == KvGroupKind::kSliding) period = std::max(period, bs);
    if (g.kind == KvGroupKind::kChunked) {
      period = std::max(period, g.window % bs == 0 ? g.window : g.window * bs);
    }
  }
  const Tokens from = std::max(computed, end - period + 1);
  std::int64_t best = pages_at(end);
  for (const KvCacheGroup& g : layout_.groups) {
    if (g.kind == KvGroupKind::kFull) continue;
    const Tokens first = g.kind == KvGroupKind::kSliding ? g.window - 1 + bs : g.window;
    const Tokens step = g.kind == KvGroupKind::kSliding ? bs : g.window;
    Tokens d = first;
    if (d <= from) d += (from - d) / step * step + step;  // first crossing in (from, end]
    for (; d <= end; d += step) best = std::max(best, pages_at(d - 1));
  }
  return best;
}

void KvPool::AdvanceDecode(std::span<const DecodingSeq> seqs, Tokens steps) {
  const Tokens bs = layout_.block_size;
  if (layout_.Single()) {
    for (const DecodingSeq& s : seqs) {
      const std::int64_t need = CeilDiv(s.computed + steps, bs) - cache_.BlocksOf(s.id);
      if (need > 0) cache_.Grow(s.id, need);
    }
    return;
  }
  // The steps at which a sequence's Reserve can change something: its first,
  // and those where computed c crosses a block boundary (allocation) or a
  // window start crosses one (freeing). Step j (1-based) has c = computed + j - 1.
  std::vector<std::pair<Tokens, std::size_t>> events;
  auto add_progression = [&](std::size_t i, Tokens c0, Tokens first_c, Tokens period) {
    // c in [c0, c0 + steps) with c = first_c (mod period), c >= first_c.
    Tokens c = first_c;
    if (c < c0) c += (c0 - c + period - 1) / period * period;
    for (; c < c0 + steps; c += period) events.emplace_back(c - c0 + 1, i);
  };
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const Tokens c0 = seqs[i].computed;
    events.emplace_back(1, i);
    add_progression(i, c0, 0, bs);
    for (const KvCacheGroup& g : layout_.groups) {
      if (g.kind == KvGroupKind::kSliding) {
        // c - W + 1 = m bs for m >= 1.
        add_progression(i, c0, g.window - 1 + bs, bs);
      } else if (g.kind == KvGroupKind::kChunked) {
        add_progression(i, c0, g.window, g.window);
      }
    }
  }
  std::sort(events.begin(), events.end());
  events.erase(std::unique(events.begin(), events.end()), events.end());
  for (const auto& [j, i] : events) {
    const DecodingSeq& s = seqs[i];
    [[maybe_unused]] const bool ok = Reserve(s.id, s.computed + j - 1, s.computed + j, s.blocks);
    assert(ok);
  }
}

void KvPool::CommitRange(SeqId id, std::int64_t first_index, std::span<const BlockRun> runs) {
  if (layout_.Single()) {
    cache_.CommitRange(id, first_index, runs);
    return;
  }
  const auto it = held_.find(id);
  if (it == held_.end()) return;
  const Held& held = it->second;
  std::int64_t total = 0;
  for (const BlockRun& r : runs) total += r.count;
  const std::int64_t end = first_index + total;
  // Group by group: the groups' names are distinct, so the order across
  // groups does not matter.
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    const std::int64_t from = std::max(first_index, held.lo[g]);
    const std::int64_t to = std::min(end, held.hi[g]);
    if (from >= to) continue;
    GroupSlice(g, runs, from - first_index, to - first_index, &scratch_);
    cache_.CommitRange(Key(id, static_cast<std::int64_t>(g)), from - held.lo[g], scratch_);
  }
}

void KvPool::Release(SeqId id) {
  if (layout_.Single()) {
    cache_.Release(id);
    return;
  }
  const auto it = held_.find(id);
  if (it == held_.end()) return;
  // Group by group, each tail first (vLLM frees each group's blocks in reverse).
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    cache_.Release(Key(id, static_cast<std::int64_t>(g)));
  }
  if (layout_.state_pages > 0) cache_.Release(Key(id, kStateGroup));
  held_.erase(it);
}

void KvPool::ReleasePinned(SeqId id) {
  if (layout_.Single()) {
    cache_.ReleasePinned(id);
    return;
  }
  const auto it = held_.find(id);
  if (it != held_.end()) it->second.pinned = true;  // its blocks stay referenced
}

void KvPool::Unpin(SeqId id) {
  if (layout_.Single()) {
    cache_.Unpin(id);
    return;
  }
  const auto it = held_.find(id);
  if (it != held_.end() && it->second.pinned) Release(id);
}

std::int64_t KvPool::BlocksOf(SeqId id) const {
  if (layout_.Single()) return cache_.BlocksOf(id);
  const auto it = held_.find(id);
  if (it == held_.end() || it->second.hi.empty()) return 0;
  return it->second.hi.front();
}

std::int64_t KvPool::PagesOf(SeqId id) const {
  if (layout_.Single()) return cache_.BlocksOf(id);
  const auto it = held_.find(id);
  if (it == held_.end()) return 0;
  std::int64_t pages = layout_.state_pages;
  for (std::size_t g = 0; g < it->second.hi.size(); ++g)
    pages += it->second.hi[g] - it->second.lo[g];
  return pages;
}

}  // namespace kvbill
