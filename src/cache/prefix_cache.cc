#include "kvbill/cache/prefix_cache.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kvbill {
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

struct PrefixCache::Impl {
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
        throw std::length_error("PrefixCache: more than 2^32 - 2 blocks stored");
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

PrefixCache::PrefixCache(std::int64_t capacity_blocks, bool caching)
    : impl_(std::make_unique<Impl>(capacity_blocks, caching)) {
  assert(capacity_blocks >= 0);
}

PrefixCache::~PrefixCache() = default;

std::int64_t PrefixCache::LongestPrefix(std::span<const std::uint64_t> hashes) const {
  if (!impl_->caching) return 0;
  std::int64_t n = 0;
  for (const std::uint64_t hash : hashes) {
    if (impl_->index.Find(hash) == kNoBlock) break;
    ++n;
  }
  return n;
}

std::optional<std::int64_t> PrefixCache::Admit(SeqId id,
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

bool PrefixCache::CanAdmit(std::span<const std::uint64_t> prompt_hashes, std::int64_t blocks_needed,
                           std::int64_t max_hit_blocks) const {
  const Impl::Hits found = impl_->FindHits(prompt_hashes, blocks_needed, max_hit_blocks, nullptr);
  return blocks_needed - found.hits <= impl_->FreeBlocks() - found.cached;
}

bool PrefixCache::Grow(SeqId id, std::int64_t n) {
  Impl& s = *impl_;
  if (n <= 0) return true;
  if (s.FreeBlocks() < n) return false;
  Sequence& seq = s.Start(id);
  for (std::int64_t i = 0; i < n; ++i) seq.blocks.push_back(s.TakeFresh());
  return true;
}

void PrefixCache::Commit(SeqId id, std::int64_t index, std::uint64_t hash) {
  Impl& s = *impl_;
  if (!s.caching) return;
  const Sequence* seq = s.Find(id);
  if (seq == nullptr) return;
  if (index < 0 || index >= static_cast<std::int64_t>(seq->blocks.size())) return;
  s.CommitBlock(seq->blocks[static_cast<std::size_t>(index)], hash);
}

void PrefixCache::CommitRange(SeqId id, std::int64_t first_index,
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

void PrefixCache::ReleaseFront(SeqId id, std::int64_t n) {
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

void PrefixCache::Release(SeqId id) {
  if (Sequence* seq = impl_->Find(id)) impl_->Drop(id, *seq);
}

void PrefixCache::ReleasePinned(SeqId id) {
  if (Sequence* seq = impl_->Find(id)) seq->pinned = true;
}

void PrefixCache::Unpin(SeqId id) {
  Sequence* seq = impl_->Find(id);
  if (seq != nullptr && seq->pinned) impl_->Drop(id, *seq);
}

std::int64_t PrefixCache::BlocksOf(SeqId id) const {
  const Sequence* seq = impl_->Find(id);
  return seq == nullptr ? 0 : static_cast<std::int64_t>(seq->blocks.size());
}

bool PrefixCache::Evictable(std::uint64_t hash) const {
  if (!impl_->caching) return false;
  const BlockId b = impl_->index.Find(hash);
  return b != kNoBlock && impl_->blocks[b].refs == 0;
}

std::int64_t PrefixCache::capacity_blocks() const { return impl_->capacity; }
std::int64_t PrefixCache::free_blocks() const { return impl_->FreeBlocks(); }
std::int64_t PrefixCache::cached_blocks() const { return impl_->cached; }
std::int64_t PrefixCache::referenced_blocks() const { return impl_->referenced; }
const PrefixCacheStats& PrefixCache::stats() const { return impl_->stats; }

void PrefixCache::TrackEvictions(bool on) {
  impl_->track_evictions = on;
  if (!on) impl_->evicted_hashes.clear();
}

std::vector<std::uint64_t> PrefixCache::TakeEvictedHashes() {
  std::vector<std::uint64_t> out;
  out.swap(impl_->evicted_hashes);
  return out;
}

}  // namespace kvbill
