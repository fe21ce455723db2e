// TEMPORARY: see legacy_block_cache.h.
#include "cache/legacy_block_cache.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kvbill::legacy {

namespace {

using BlockId = std::uint32_t;
constexpr BlockId kNoBlock = std::numeric_limits<BlockId>::max();
// Blocks ever stored: kNoBlock is reserved, so ids run up to 2^32 - 2.
constexpr std::size_t kMaxStoredBlocks = kNoBlock;
// A released sequence's block list keeps its memory for the next sequence
// up to this many blocks.
constexpr std::size_t kSpareListMaxBlocks = 16384;

// 64-bit key -> 32-bit id map (block hash -> block, sequence id -> slot) with
// open addressing: linear probing from a Fibonacci home slot, deletion by
// backward shift (no tombstones), load at most 1/2.
class BlockIndex {
 public:
  BlockIndex() : slots_(kInitialSlots) {}

  BlockId Find(std::uint64_t hash) const {
    for (std::size_t i = Home(hash);; i = (i + 1) & mask()) {
      const Slot& slot = slots_[i];
      if (slot.block == kNoBlock) return kNoBlock;
      if (slot.hash == hash) return slot.block;
    }
  }

  // Precondition: `hash` is absent.
  void Insert(std::uint64_t hash, BlockId block) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(2 * slots_.size());
    Place(hash, block);
    ++size_;
  }

  // Inserts unless `hash` is present (one probe for Find and Insert); true
  // when it inserted.
  bool InsertIfAbsent(std::uint64_t hash, BlockId block) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(2 * slots_.size());
    std::size_t i = Home(hash);
    for (; slots_[i].block != kNoBlock; i = (i + 1) & mask()) {
      if (slots_[i].hash == hash) return false;
    }
    slots_[i] = Slot{hash, block};
    ++size_;
    return true;
  }

  // Precondition: `hash` is present.
  void Erase(std::uint64_t hash) {
    std::size_t hole = Home(hash);
    while (slots_[hole].hash != hash || slots_[hole].block == kNoBlock) hole = (hole + 1) & mask();
    // Pull later entries of the probe run back over the hole when the hole
    // lies between their home and where they sit.
    for (std::size_t j = (hole + 1) & mask(); slots_[j].block != kNoBlock; j = (j + 1) & mask()) {
      const std::size_t home = Home(slots_[j].hash);
      const bool stays = hole < j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole] = Slot{};
    --size_;
  }

 private:
  static constexpr std::size_t kInitialSlots = 64;
  struct Slot {
    std::uint64_t hash = 0;
    BlockId block = kNoBlock;
  };

  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t Home(std::uint64_t hash) const {
    return static_cast<std::size_t>((hash * 0x9e37'79b9'7f4a'7c15ULL) >> shift_);
  }
  void Place(std::uint64_t hash, BlockId block) {
    std::size_t i = Home(hash);
    while (slots_[i].block != kNoBlock) i = (i + 1) & mask();
    slots_[i] = Slot{hash, block};
  }
  void Rehash(std::size_t slot_count) {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(slot_count));
    --shift_;  // slot counts double each time
    for (const Slot& slot : old) {
      if (slot.block != kNoBlock) Place(slot.hash, slot.block);
    }
  }

  std::vector<Slot> slots_;
  int shift_ = 64 - 6;  // log2(kInitialSlots) = 6
  std::size_t size_ = 0;
};

struct Block {
  std::uint64_t hash = 0;
  BlockId prev = kNoBlock;  // LRU links, meaningful while cached
  BlockId next = kNoBlock;
  std::int32_t refs = 0;
  bool hashed = false;
};

struct Sequence {
  std::vector<BlockId> blocks;
  bool pinned = false;
};

}  // namespace

struct BlockPrefixCache::Impl {
  Impl(std::int64_t capacity_blocks, bool caching_on)
      : capacity(capacity_blocks), caching(caching_on) {}

  std::int64_t FreeBlocks() const { return capacity - referenced; }

  // Hashes of evicted blocks, in eviction order, when tracking is on.
  bool track_evictions = false;
  std::vector<std::uint64_t> evicted_hashes;

  struct Hits {
    std::int64_t hits = 0;
    std::int64_t cached = 0;  // hits on cached blocks, which leave the free pool
  };

  // The blocks Admit would reuse, appended to `out` when given.
  Hits FindHits(std::span<const std::uint64_t> hashes, std::int64_t blocks_needed,
                std::int64_t max_hit_blocks, std::vector<BlockId>* out) const {
    Hits found;
    if (out != nullptr) out->clear();
    if (!caching) return found;
    const std::int64_t limit =
        std::min({max_hit_blocks, blocks_needed, static_cast<std::int64_t>(hashes.size())});
    for (std::int64_t i = 0; i < limit; ++i) {
      const BlockId b = index.Find(hashes[static_cast<std::size_t>(i)]);
      if (b == kNoBlock) break;
      ++found.hits;
      if (blocks[b].refs == 0) ++found.cached;
      if (out != nullptr) out->push_back(b);
    }
    return found;
  }

  void PushMostRecent(BlockId b) {
    blocks[b].prev = lru_tail;
    blocks[b].next = kNoBlock;
    if (lru_tail == kNoBlock) {
      lru_head = b;
    } else {
      blocks[lru_tail].next = b;
    }
    lru_tail = b;
    ++cached;
  }

  void Unlink(BlockId b) {
    Block& block = blocks[b];
    if (block.prev == kNoBlock) {
      lru_head = block.next;
    } else {
      blocks[block.prev].next = block.next;
    }
    if (block.next == kNoBlock) {
      lru_tail = block.prev;
    } else {
      blocks[block.next].prev = block.prev;
    }
    block.prev = block.next = kNoBlock;
    --cached;
  }

  // A referenced block that holds nothing yet. Precondition: FreeBlocks() > 0.
  BlockId TakeFresh() {
    BlockId b = kNoBlock;
    if (!empty.empty()) {
      b = empty.back();
      empty.pop_back();
    } else if (static_cast<std::int64_t>(blocks.size()) < capacity) {
      if (blocks.size() >= kMaxStoredBlocks) {
        throw std::length_error("BlockPrefixCache: more than 2^32 - 2 blocks stored");
      }
      b = static_cast<BlockId>(blocks.size());
      blocks.emplace_back();
    } else {
      assert(lru_head != kNoBlock);
      b = lru_head;
      Unlink(b);
      index.Erase(blocks[b].hash);
      if (track_evictions) evicted_hashes.push_back(blocks[b].hash);
      blocks[b].hashed = false;
      ++stats.evicted_blocks;
    }
    blocks[b].refs = 1;
    ++referenced;
    return b;
  }

  // Gives referenced block b `hash` unless it or another block has one.
  void CommitBlock(BlockId b, std::uint64_t hash) {
    Block& block = blocks[b];
    if (block.hashed || !index.InsertIfAbsent(hash, b)) return;  // first commit wins
    block.hash = hash;
    block.hashed = true;
  }

  void Reference(BlockId b) {
    if (blocks[b].refs == 0) {
      Unlink(b);
      ++referenced;
    }
    ++blocks[b].refs;
  }

  void Unreference(BlockId b) {
    if (--blocks[b].refs > 0) return;
    --referenced;
    if (blocks[b].hashed) {
      PushMostRecent(b);
    } else {
      empty.push_back(b);
    }
  }

  static std::uint64_t Key(SeqId id) { return static_cast<std::uint64_t>(id); }

  // The held sequence `id`, or nullptr.
  Sequence* Find(SeqId id) {
    const BlockId slot = sequence_slots.Find(Key(id));
    return slot == kNoBlock ? nullptr : &sequences[slot];
  }
  const Sequence* Find(SeqId id) const {
    const BlockId slot = sequence_slots.Find(Key(id));
    return slot == kNoBlock ? nullptr : &sequences[slot];
  }

  // Sequence `id`, started (with no blocks) when not held.
  Sequence& Start(SeqId id) {
    if (Sequence* seq = Find(id)) return *seq;
    BlockId slot = kNoBlock;
    if (!free_slots.empty()) {
      slot = free_slots.back();
      free_slots.pop_back();
    } else {
      slot = static_cast<BlockId>(sequences.size());
      sequences.emplace_back();
    }
    sequence_slots.Insert(Key(id), slot);
    return sequences[slot];
  }

  void Drop(SeqId id, Sequence& seq) {
    const std::vector<BlockId>& held = seq.blocks;
    for (auto b = held.rbegin(); b != held.rend(); ++b) Unreference(*b);  // tail first
    const BlockId slot = static_cast<BlockId>(&seq - sequences.data());
    sequence_slots.Erase(Key(id));
    seq.blocks.clear();  // keeps its memory for the slot's next sequence
    if (seq.blocks.capacity() > kSpareListMaxBlocks) seq.blocks.shrink_to_fit();
    seq.pinned = false;
    free_slots.push_back(slot);
  }

  const std::int64_t capacity;
  const bool caching;
  std::vector<Block> blocks;    // every block ever used; grows on demand
  std::vector<BlockId> empty;   // used blocks freed without a hash
  BlockId lru_head = kNoBlock;  // least recently released cached block
  BlockId lru_tail = kNoBlock;  // most recently released
  std::int64_t cached = 0;
  std::int64_t referenced = 0;
  BlockIndex index;  // hash -> block, for referenced and cached blocks
  // Held sequences in reused slots (a slot keeps its block list's memory),
  // found through a flat index: the engine looks a sequence up for every
  // block it commits, and a node-based map cost more than the commit.
  std::vector<Sequence> sequences;
  std::vector<BlockId> free_slots;
  BlockIndex sequence_slots;  // sequence id -> slot
  std::vector<BlockId> hits;  // scratch for Admit
  PrefixCacheStats stats;
};

BlockPrefixCache::BlockPrefixCache(std::int64_t capacity_blocks, bool caching)
    : impl_(std::make_unique<Impl>(capacity_blocks, caching)) {
  assert(capacity_blocks >= 0);
}

BlockPrefixCache::~BlockPrefixCache() = default;

std::int64_t BlockPrefixCache::LongestPrefix(std::span<const std::uint64_t> hashes) const {
  if (!impl_->caching) return 0;
  std::int64_t n = 0;
  for (const std::uint64_t hash : hashes) {
    if (impl_->index.Find(hash) == kNoBlock) break;
    ++n;
  }
  return n;
}

std::optional<std::int64_t> BlockPrefixCache::Admit(SeqId id,
                                                    std::span<const std::uint64_t> prompt_hashes,
                                                    std::int64_t blocks_needed,
                                                    std::int64_t max_hit_blocks) {
  Impl& s = *impl_;
  assert(blocks_needed >= 0);
  if (s.Find(id) != nullptr) return std::nullopt;

  const Impl::Hits found = s.FindHits(prompt_hashes, blocks_needed, max_hit_blocks, &s.hits);
  const std::int64_t fresh = blocks_needed - found.hits;
  if (fresh > s.FreeBlocks() - found.cached) return std::nullopt;

  Sequence& seq = s.Start(id);
  seq.blocks.reserve(static_cast<std::size_t>(blocks_needed));
  for (const BlockId b : s.hits) {
    s.Reference(b);
    seq.blocks.push_back(b);
  }
  for (std::int64_t i = 0; i < fresh; ++i) seq.blocks.push_back(s.TakeFresh());
  ++s.stats.lookups;
  s.stats.hit_blocks += found.hits;
  return found.hits;
}

bool BlockPrefixCache::CanAdmit(std::span<const std::uint64_t> prompt_hashes,
                                std::int64_t blocks_needed, std::int64_t max_hit_blocks) const {
  const Impl::Hits found = impl_->FindHits(prompt_hashes, blocks_needed, max_hit_blocks, nullptr);
  return blocks_needed - found.hits <= impl_->FreeBlocks() - found.cached;
}

bool BlockPrefixCache::Grow(SeqId id, std::int64_t n) {
  Impl& s = *impl_;
  if (n <= 0) return true;
  if (s.FreeBlocks() < n) return false;
  Sequence& seq = s.Start(id);
  for (std::int64_t i = 0; i < n; ++i) seq.blocks.push_back(s.TakeFresh());
  return true;
}

void BlockPrefixCache::Commit(SeqId id, std::int64_t index, std::uint64_t hash) {
  Impl& s = *impl_;
  if (!s.caching) return;
  const Sequence* seq = s.Find(id);
  if (seq == nullptr) return;
  if (index < 0 || index >= static_cast<std::int64_t>(seq->blocks.size())) return;
  s.CommitBlock(seq->blocks[static_cast<std::size_t>(index)], hash);
}

void BlockPrefixCache::CommitRange(SeqId id, std::int64_t first_index,
                                   std::span<const std::uint64_t> hashes) {
  Impl& s = *impl_;
  if (!s.caching || hashes.empty()) return;
  const Sequence* seq = s.Find(id);
  if (seq == nullptr) return;
  const auto held = static_cast<std::int64_t>(seq->blocks.size());
  const std::int64_t end = std::min(held, first_index + static_cast<std::int64_t>(hashes.size()));
  for (std::int64_t index = std::max<std::int64_t>(0, first_index); index < end; ++index) {
    s.CommitBlock(seq->blocks[static_cast<std::size_t>(index)],
                  hashes[static_cast<std::size_t>(index - first_index)]);
  }
}

void BlockPrefixCache::ReleaseFront(SeqId id, std::int64_t n) {
  Impl& s = *impl_;
  if (n <= 0) return;
  Sequence* seq = s.Find(id);
  if (seq == nullptr) return;
  std::vector<BlockId>& held = seq->blocks;
  const auto count = static_cast<std::ptrdiff_t>(
      std::min<std::int64_t>(n, static_cast<std::int64_t>(held.size())));
  for (std::ptrdiff_t i = count - 1; i >= 0; --i) {
    s.Unreference(held[static_cast<std::size_t>(i)]);  // newest first
  }
  held.erase(held.begin(), held.begin() + count);
}

void BlockPrefixCache::Release(SeqId id) {
  if (Sequence* seq = impl_->Find(id)) impl_->Drop(id, *seq);
}

void BlockPrefixCache::ReleasePinned(SeqId id) {
  if (Sequence* seq = impl_->Find(id)) seq->pinned = true;
}

void BlockPrefixCache::Unpin(SeqId id) {
  Sequence* seq = impl_->Find(id);
  if (seq != nullptr && seq->pinned) impl_->Drop(id, *seq);
}

std::int64_t BlockPrefixCache::BlocksOf(SeqId id) const {
  const Sequence* seq = impl_->Find(id);
  return seq == nullptr ? 0 : static_cast<std::int64_t>(seq->blocks.size());
}

bool BlockPrefixCache::Evictable(std::uint64_t hash) const {
  if (!impl_->caching) return false;
  const BlockId b = impl_->index.Find(hash);
  return b != kNoBlock && impl_->blocks[b].refs == 0;
}

std::int64_t BlockPrefixCache::capacity_blocks() const { return impl_->capacity; }
std::int64_t BlockPrefixCache::free_blocks() const { return impl_->FreeBlocks(); }
std::int64_t BlockPrefixCache::cached_blocks() const { return impl_->cached; }
std::int64_t BlockPrefixCache::referenced_blocks() const { return impl_->referenced; }
const PrefixCacheStats& BlockPrefixCache::stats() const { return impl_->stats; }

void BlockPrefixCache::TrackEvictions(bool on) {
  impl_->track_evictions = on;
  if (!on) impl_->evicted_hashes.clear();
}

std::vector<std::uint64_t> BlockPrefixCache::TakeEvictedHashes() {
  std::vector<std::uint64_t> out;
  out.swap(impl_->evicted_hashes);
  return out;
}

namespace {
Tokens CeilDiv(Tokens a, Tokens b) { return (a + b - 1) / b; }

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

// Group g's copy of a block: the block hash mixed with g (group 0 unchanged).
std::uint64_t Salt(std::size_t g, std::uint64_t hash) {
  if (g == 0) return hash;
  std::uint64_t x = hash ^ (static_cast<std::uint64_t>(g) * 0x9e37'79b9'7f4a'7c15ULL);
  x ^= x >> 31;
  x *= 0xbf58'476d'1ce4'e5b9ULL;
  return x ^ (x >> 29);
}

}  // namespace

KvPool::KvPool(KvGroupLayout layout, std::int64_t capacity_pages, bool caching)
    : layout_(std::move(layout)), cache_(capacity_pages, caching) {}

KvPool::~KvPool() = default;

bool KvPool::Cached(std::size_t g, std::uint64_t hash) const {
  const std::uint64_t salted = Salt(g, hash);
  return cache_.LongestPrefix(std::span<const std::uint64_t>(&salted, 1)) == 1;
}

std::int64_t KvPool::FirstBlock(std::size_t g, Tokens computed) const {
  return WindowStart(layout_.groups[g], computed) / layout_.block_size;
}

std::int64_t KvPool::LongestPrefix(std::span<const std::uint64_t> hashes) const {
  if (layout_.Single()) return cache_.LongestPrefix(hashes);
  std::int64_t n = static_cast<std::int64_t>(hashes.size());
  std::vector<std::uint64_t> salted;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (layout_.groups[g].kind != KvGroupKind::kFull) continue;
    if (g == 0) {
      n = cache_.LongestPrefix(hashes.first(static_cast<std::size_t>(n)));
      continue;
    }
    salted.clear();
    for (std::int64_t b = 0; b < n; ++b)
      salted.push_back(Salt(g, hashes[static_cast<std::size_t>(b)]));
    n = cache_.LongestPrefix(salted);
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
        std::int64_t b = n - 1;
        while (b >= lo && Cached(g, hashes[static_cast<std::size_t>(b)])) --b;
        if (b < lo) break;
        n = b;  // every n' in (b, n] needs block b
        lowered = true;
        if (n == 0) break;
      }
    }
  }
  return n;
}

KvPool::Plan KvPool::PlanAdmit(std::span<const std::uint64_t> hit_hashes,
                               std::int64_t blocks_needed) const {
  Plan plan;
  const std::int64_t n =
      std::min<std::int64_t>(static_cast<std::int64_t>(hit_hashes.size()), blocks_needed);
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    const std::int64_t lo = std::min(FirstBlock(g, n * layout_.block_size), n);
    for (std::int64_t b = lo; b < n; ++b) {
      if (cache_.Evictable(Salt(g, hit_hashes[static_cast<std::size_t>(b)]))) ++plan.cached;
    }
    plan.fresh += blocks_needed - n;
  }
  plan.fresh += layout_.state_pages;
  return plan;
}

bool KvPool::CanAdmit(std::span<const std::uint64_t> hit_hashes, std::int64_t blocks_needed) const {
  if (layout_.Single()) return cache_.CanAdmit(hit_hashes, blocks_needed);
  const Plan plan = PlanAdmit(hit_hashes, blocks_needed);
  return plan.fresh <= cache_.free_blocks() - plan.cached;
}

std::int64_t KvPool::AdmissionDeficit(std::span<const std::uint64_t> hit_hashes,
                                      std::int64_t blocks_needed) const {
  if (layout_.Single()) {
    return CanAdmit(hit_hashes, blocks_needed) ? 0 : kUnlimitedBlocks;  // no frees to wait for
  }
  const Plan plan = PlanAdmit(hit_hashes, blocks_needed);
  return plan.fresh - (cache_.free_blocks() - plan.cached);
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

std::int64_t KvPool::PeakPages(Tokens tokens, Tokens chunk) const {
  const Tokens bs = layout_.block_size;
  const std::int64_t blocks = CeilDiv(tokens, bs);
  if (layout_.Single()) return blocks;
  std::int64_t pages = layout_.state_pages;
  for (const KvCacheGroup& g : layout_.groups) {
    pages += g.kind == KvGroupKind::kFull
                 ? blocks
                 : std::min(blocks, CeilDiv(g.window, bs) + CeilDiv(chunk, bs) + 1);
  }
  return pages;
}

Tokens KvPool::capacity_tokens() const {
  const std::int64_t groups = std::max<std::int64_t>(1, std::ssize(layout_.groups));
  if (cache_.capacity_blocks() >= kUnlimitedBlocks / layout_.block_size) return kUnlimitedBlocks;
  return cache_.capacity_blocks() / groups * layout_.block_size;
}

std::optional<std::int64_t> KvPool::Admit(SeqId id, std::span<const std::uint64_t> hit_hashes,
                                          std::int64_t blocks_needed) {
  if (layout_.Single()) return cache_.Admit(id, hit_hashes, blocks_needed);
  if (held_.contains(id)) return std::nullopt;
  const Plan plan = PlanAdmit(hit_hashes, blocks_needed);
  if (plan.fresh > cache_.free_blocks() - plan.cached) return std::nullopt;
  const std::int64_t n =
      std::min<std::int64_t>(static_cast<std::int64_t>(hit_hashes.size()), blocks_needed);
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
    scratch_.clear();
    for (std::int64_t b = lo; b < n; ++b) {
      scratch_.push_back(Salt(g, hit_hashes[static_cast<std::size_t>(b)]));
    }
    [[maybe_unused]] auto hits =
        cache_.Admit(Key(id, static_cast<std::int64_t>(g)), scratch_, n - lo);
    assert(hits && *hits == n - lo);
  }
  for (std::size_t g = 0; g < groups; ++g) {
    cache_.Grow(Key(id, static_cast<std::int64_t>(g)), blocks_needed - n);
  }
  if (layout_.state_pages > 0) cache_.Grow(Key(id, kStateGroup), layout_.state_pages);
  return n;
}

bool KvPool::Reserve(SeqId id, Tokens computed, Tokens tokens,
                     std::span<const std::uint64_t> hashes) {
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
      // Blocks [lo, first) leave the window: committed newest first, then
      // released newest first (ReleaseFront), as vLLM's remove_skipped_blocks
      // frees them. (Committing all before releasing any is the same: a
      // release neither hashes a block nor changes the hash index.)
      const std::int64_t hashed = std::min(first, static_cast<std::int64_t>(hashes.size()));
      for (std::int64_t b = hashed - 1; b >= lo; --b) {
        cache_.Commit(key, b - lo, Salt(g, hashes[static_cast<std::size_t>(b)]));
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
    [[maybe_unused]] const bool ok = Reserve(s.id, s.computed + j - 1, s.computed + j, s.hashes);
    assert(ok);
  }
}

void KvPool::Commit(SeqId id, std::int64_t index, std::uint64_t hash) {
  if (layout_.Single()) {
    cache_.Commit(id, index, hash);
    return;
  }
  const auto it = held_.find(id);
  if (it == held_.end()) return;
  const Held& held = it->second;
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    if (index >= held.lo[g] && index < held.hi[g]) {
      cache_.Commit(Key(id, static_cast<std::int64_t>(g)), index - held.lo[g], Salt(g, hash));
    }
  }
}

void KvPool::CommitRange(SeqId id, std::int64_t first_index,
                         std::span<const std::uint64_t> hashes) {
  if (layout_.Single()) {
    cache_.CommitRange(id, first_index, hashes);
    return;
  }
  const auto it = held_.find(id);
  if (it == held_.end()) return;
  const Held& held = it->second;
  const std::int64_t end = first_index + static_cast<std::int64_t>(hashes.size());
  // Group by group instead of block by block: the groups' hashes are
  // distinct, so the order across groups does not matter.
  for (std::size_t g = 0; g < layout_.groups.size(); ++g) {
    const std::int64_t from = std::max(first_index, held.lo[g]);
    const std::int64_t to = std::min(end, held.hi[g]);
    if (from >= to) continue;
    const auto hashes_of = hashes.subspan(static_cast<std::size_t>(from - first_index),
                                          static_cast<std::size_t>(to - from));
    if (g != 0) {
      scratch_.clear();
      for (const std::uint64_t h : hashes_of) scratch_.push_back(Salt(g, h));
    }
    cache_.CommitRange(Key(id, static_cast<std::int64_t>(g)), from - held.lo[g],
                       g == 0 ? hashes_of : std::span<const std::uint64_t>(scratch_));
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

}  // namespace kvbill::legacy
