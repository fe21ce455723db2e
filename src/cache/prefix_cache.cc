#include "kvbill/cache/prefix_cache.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kvbill {
namespace {

using Id = std::uint32_t;
constexpr Id kNone = std::numeric_limits<Id>::max();
// Extents ever live at once: kNone is reserved, so ids run up to 2^32 - 2.
constexpr std::size_t kMaxExtents = kNone;
// A released sequence's run list keeps its memory for the next sequence up
// to this many runs.
constexpr std::size_t kSpareListMaxRuns = 4096;

// 64-bit key -> 32-bit id map (block key -> its first extent, sequence id ->
// slot) with open addressing: linear probing from a Fibonacci home slot,
// deletion by backward shift (no tombstones), load at most 1/2.
class KeyIndex {
 public:
  KeyIndex() : slots_(kInitialSlots) {}

  Id Find(std::uint64_t key) const {
    for (std::size_t i = Home(key);; i = (i + 1) & mask()) {
      const Slot& slot = slots_[i];
      if (slot.id == kNone) return kNone;
      if (slot.key == key) return slot.id;
    }
  }

  // Inserts or overwrites.
  void Assign(std::uint64_t key, Id id) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(2 * slots_.size());
    std::size_t i = Home(key);
    for (; slots_[i].id != kNone; i = (i + 1) & mask()) {
      if (slots_[i].key == key) {
        slots_[i].id = id;
        return;
      }
    }
    slots_[i] = Slot{key, id};
    ++size_;
  }

  // Precondition: `key` is present.
  void Erase(std::uint64_t key) {
    std::size_t hole = Home(key);
    while (slots_[hole].key != key || slots_[hole].id == kNone) hole = (hole + 1) & mask();
    // Pull later entries of the probe run back over the hole when the hole
    // lies between their home and where they sit.
    for (std::size_t j = (hole + 1) & mask(); slots_[j].id != kNone; j = (j + 1) & mask()) {
      const std::size_t home = Home(slots_[j].key);
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
    std::uint64_t key = 0;
    Id id = kNone;
  };

  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t Home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9e37'79b9'7f4a'7c15ULL) >> shift_);
  }
  void Rehash(std::size_t slot_count) {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(slot_count));
    --shift_;  // slot counts double each time
    for (const Slot& slot : old) {
      if (slot.id == kNone) continue;
      std::size_t i = Home(slot.key);
      while (slots_[i].id != kNone) i = (i + 1) & mask();
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  int shift_ = 64 - 6;  // log2(kInitialSlots) = 6
  std::size_t size_ = 0;
};

// Named blocks (key, lo) .. (key, hi - 1), all in one state: referenced by
// `refs` sequences, or (refs 0) cached at one place in the LRU order, where
// the highest index is the oldest (evicted first).
struct Extent {
  std::uint64_t key = 0;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  Id kprev = kNone;  // the key's extents, in index order (disjoint)
  Id knext = kNone;
  Id prev = kNone;  // LRU links while cached (prev: older)
  Id next = kNone;
  std::int32_t refs = 0;
};

// A stretch of a sequence's blocks: the named blocks (key, first ..
// first + count - 1), or `count` unnamed ones.
struct SeqRun {
  std::uint64_t key = 0;
  std::int64_t first = 0;
  std::int64_t count = 0;
  bool named = false;
};

struct Sequence {
  std::vector<SeqRun> runs;
  std::int64_t blocks = 0;
  bool pinned = false;
};

std::int64_t Total(std::span<const BlockRun> runs) {
  std::int64_t n = 0;
  for (const BlockRun& r : runs) n += r.count;
  return n;
}

}  // namespace

struct PrefixCache::Impl {
  Impl(std::int64_t capacity_blocks, bool caching_on)
      : capacity(capacity_blocks), caching(caching_on) {}

  std::int64_t FreeBlocks() const { return capacity - referenced; }

  // --- extents -------------------------------------------------------------

  Id NewExtent(std::uint64_t key, std::int64_t lo, std::int64_t hi, std::int32_t refs) {
    Id e = kNone;
    if (!free_extents.empty()) {
      e = free_extents.back();
      free_extents.pop_back();
    } else {
      if (extents.size() >= kMaxExtents) {
        throw std::length_error("PrefixCache: more than 2^32 - 2 extents");
      }
      e = static_cast<Id>(extents.size());
      extents.emplace_back();
    }
    extents[e] = Extent{key, lo, hi, kNone, kNone, kNone, kNone, refs};
    return e;
  }

  // The first extent of `key` ending after `index` (kNone when none), and in
  // *before the extent before it (the key's last one when none).
  Id Locate(std::uint64_t key, std::int64_t index, Id* before = nullptr) const {
    Id prev = kNone;
    Id e = index_of.Find(key);
    while (e != kNone && extents[e].hi <= index) {
      prev = e;
      e = extents[e].knext;
    }
    if (before != nullptr) *before = prev;
    return e;
  }

  // Links e into its key's list after `prev` (kNone: as the first).
  void KeyInsertAfter(Id prev, Id e) {
    Extent& x = extents[e];
    if (prev == kNone) {
      const Id head = index_of.Find(x.key);
      x.knext = head;
      if (head != kNone) extents[head].kprev = e;
      index_of.Assign(x.key, e);
    } else {
      x.knext = extents[prev].knext;
      if (x.knext != kNone) extents[x.knext].kprev = e;
      extents[prev].knext = e;
    }
    x.kprev = prev;
  }

  void KeyUnlink(Id e) {
    Extent& x = extents[e];
    if (x.kprev == kNone) {
      if (x.knext == kNone) {
        index_of.Erase(x.key);
      } else {
        index_of.Assign(x.key, x.knext);
      }
    } else {
      extents[x.kprev].knext = x.knext;
    }
    if (x.knext != kNone) extents[x.knext].kprev = x.kprev;
    x.kprev = x.knext = kNone;
  }

  void LruUnlink(Id e) {
    Extent& x = extents[e];
    if (x.prev == kNone) {
      lru_head = x.next;
    } else {
      extents[x.prev].next = x.next;
    }
    if (x.next == kNone) {
      lru_tail = x.prev;
    } else {
      extents[x.next].prev = x.prev;
    }
    x.prev = x.next = kNone;
  }

  // Links e into the LRU order just before `pos` (kNone: at the tail).
  void LruInsertBefore(Id pos, Id e) {
    Extent& x = extents[e];
    x.next = pos;
    x.prev = pos == kNone ? lru_tail : extents[pos].prev;
    if (x.prev == kNone) {
      lru_head = e;
    } else {
      extents[x.prev].next = e;
    }
    if (pos == kNone) {
      lru_tail = e;
    } else {
      extents[pos].prev = e;
    }
  }

  void Free(Id e) { free_extents.push_back(e); }

  // Splits e at `at` (lo < at < hi): e keeps [lo, at); returns the new
  // [at, hi), which is older than e in the LRU order when cached.
  Id Split(Id e, std::int64_t at) {
    assert(extents[e].lo < at && at < extents[e].hi);
    const Id f = NewExtent(extents[e].key, at, extents[e].hi, extents[e].refs);
    extents[e].hi = at;
    KeyInsertAfter(e, f);
    if (extents[f].refs == 0) LruInsertBefore(e, f);
    return f;
  }

  // Merges e's next extent of its key into e when they are contiguous and in
  // one state: both referenced as often, or both cached with the next one
  // (higher indices) just older in the LRU order. True when merged.
  bool TryMergeNext(Id e) {
    const Id f = extents[e].knext;
    if (f == kNone || extents[f].lo != extents[e].hi) return false;
    const std::int32_t refs = extents[e].refs;
    if (refs != extents[f].refs) return false;
    if (refs == 0) {
      if (extents[e].prev != f) return false;
      LruUnlink(f);
    }
    extents[e].hi = extents[f].hi;
    KeyUnlink(f);
    Free(f);
    return true;
  }

  // Merges what can be merged around [a, b) of the key list holding `first`.
  void Coalesce(Id first, std::int64_t b) {
    Id p = extents[first].kprev != kNone ? extents[first].kprev : first;
    while (p != kNone) {
      if (TryMergeNext(p)) continue;
      if (extents[p].hi >= b) break;
      p = extents[p].knext;
    }
  }

  // Puts cached extent e at the LRU tail (most recent), merging it into the
  // tail when that holds the key's next indices (released just before it).
  // Returns the extent that now holds e's blocks.
  Id PushMostRecent(Id e) {
    const Id t = lru_tail;
    if (t != kNone && extents[t].key == extents[e].key && extents[t].lo == extents[e].hi) {
      extents[t].lo = extents[e].lo;
      KeyUnlink(e);
      Free(e);
      return t;
    }
    LruInsertBefore(kNone, e);
    return e;
  }

  // --- blocks ---------------------------------------------------------------

  struct Hits {
    std::int64_t hits = 0;
    std::int64_t cached = 0;  // hits on cached blocks, which leave the free pool
  };

  // The leading blocks of `runs` that are named, at most `limit`.
  Hits FindHits(std::span<const BlockRun> runs, std::int64_t limit) const {
    Hits found;
    if (!caching) return found;
    for (const BlockRun& run : runs) {
      if (found.hits >= limit) break;
      const std::int64_t want = std::min(run.count, limit - found.hits);
      const std::int64_t end = run.first + want;
      std::int64_t pos = run.first;
      for (Id e = Locate(run.key, pos); e != kNone && pos < end && extents[e].lo <= pos;
           e = extents[e].knext) {
        const std::int64_t take = std::min(extents[e].hi, end) - pos;
        if (extents[e].refs == 0) found.cached += take;
        pos += take;
      }
      found.hits += pos - run.first;
      if (pos < end) break;
    }
    return found;
  }

  // Takes a reference on named blocks [a, b) of `key` (all present).
  void Reference(std::uint64_t key, std::int64_t a, std::int64_t b) {
    Id e = Locate(key, a);
    assert(e != kNone && extents[e].lo <= a);
    if (extents[e].lo < a) e = Split(e, a);
    const Id first = e;
    for (;;) {
      if (extents[e].hi > b) Split(e, b);
      Extent& x = extents[e];
      if (x.refs == 0) {
        LruUnlink(e);
        cached -= x.hi - x.lo;
        referenced += x.hi - x.lo;
      }
      ++x.refs;
      if (x.hi == b) break;
      const std::int64_t hi = x.hi;
      e = x.knext;
      assert(e != kNone && extents[e].lo == hi);
      (void)hi;
    }
    Coalesce(first, b);
  }

  // Drops a reference on named blocks [a, b) of `key`, the highest first.
  void Unreference(std::uint64_t key, std::int64_t a, std::int64_t b) {
    Id e = Locate(key, b - 1);
    assert(e != kNone && extents[e].lo <= b - 1);
    if (extents[e].hi > b) Split(e, b);
    Id last_referenced = kNone;
    for (;;) {
      if (extents[e].lo < a) e = Split(e, a);
      const Id prev = extents[e].kprev;
      const bool done = extents[e].lo == a;
      Extent& x = extents[e];
      if (--x.refs == 0) {
        referenced -= x.hi - x.lo;
        cached += x.hi - x.lo;
        PushMostRecent(e);
      } else {
        last_referenced = e;
      }
      if (done) break;
      e = prev;
      assert(e != kNone);
    }
    if (last_referenced != kNone) Coalesce(last_referenced, b);
  }

  // A reference on `n` fresh blocks. Precondition: n <= FreeBlocks().
  void TakeFresh(std::int64_t n) {
    assert(n <= FreeBlocks());
    std::int64_t evict = n - (FreeBlocks() - cached);
    while (evict > 0) {
      const Id e = lru_head;
      assert(e != kNone);
      Extent& x = extents[e];
      const std::int64_t take = std::min(evict, x.hi - x.lo);
      if (track_evictions) {
        for (std::int64_t i = x.hi - 1; i >= x.hi - take; --i) {
          evicted.push_back(BlockRun{x.key, i, 1});
        }
      }
      x.hi -= take;
      cached -= take;
      stats.evicted_blocks += take;
      evict -= take;
      if (x.hi == x.lo) {
        LruUnlink(e);
        KeyUnlink(e);
        Free(e);
      }
    }
    referenced += n;
  }

  // Names blocks [a, b) of `key` where no block has the name yet, appending
  // to *out, in order, the named stretches and the unnamed ones (names
  // taken by other blocks).
  void Name(std::uint64_t key, std::int64_t a, std::int64_t b, std::vector<SeqRun>* out) {
    Id prev = kNone;
    Id e = Locate(key, a, &prev);
    std::int64_t pos = a;
    while (pos < b) {
      while (e != kNone && extents[e].hi <= pos) {
        prev = e;
        e = extents[e].knext;
      }
      if (e != kNone && extents[e].lo <= pos) {
        // Named already (by another block): this one stays unnamed.
        const std::int64_t take = std::min(extents[e].hi, b) - pos;
        AppendRun(out, SeqRun{0, 0, take, false});
        pos += take;
        continue;
      }
      const std::int64_t gap_end = e != kNone ? std::min(extents[e].lo, b) : b;
      const Id n = NewExtent(key, pos, gap_end, 1);
      KeyInsertAfter(prev, n);
      AppendRun(out, SeqRun{key, pos, gap_end - pos, true});
      pos = gap_end;
      // Merge with the neighbours (the new extent may vanish into prev, and
      // the next one into it); what holds `pos - 1` then continues the walk.
      const Id keep = (prev != kNone && TryMergeNext(prev)) ? prev : n;
      TryMergeNext(keep);
      prev = extents[keep].kprev;
      e = keep;
    }
  }

  static void AppendRun(std::vector<SeqRun>* runs, const SeqRun& r) {
    if (r.count <= 0) return;
    if (!runs->empty()) {
      SeqRun& last = runs->back();
      if (!last.named && !r.named) {
        last.count += r.count;
        return;
      }
      if (last.named && r.named && last.key == r.key && last.first + last.count == r.first) {
        last.count += r.count;
        return;
      }
    }
    runs->push_back(r);
  }

  // Drops the references of sequence blocks [0, count), the last first.
  void ReleaseBlocks(const Sequence& seq, std::int64_t count) {
    std::int64_t end = seq.blocks;
    for (std::size_t i = seq.runs.size(); i-- > 0;) {
      const SeqRun& r = seq.runs[i];
      const std::int64_t start = end - r.count;
      if (start < count) {
        const std::int64_t n = std::min(end, count) - start;
        if (r.named) {
          Unreference(r.key, r.first, r.first + n);
        } else {
          referenced -= n;
        }
      }
      end = start;
    }
  }

  // --- sequences ------------------------------------------------------------

  static std::uint64_t SeqKey(SeqId id) { return static_cast<std::uint64_t>(id); }

  Sequence* Find(SeqId id) {
    const Id slot = sequence_slots.Find(SeqKey(id));
    return slot == kNone ? nullptr : &sequences[slot];
  }
  const Sequence* Find(SeqId id) const {
    const Id slot = sequence_slots.Find(SeqKey(id));
    return slot == kNone ? nullptr : &sequences[slot];
  }

  // Sequence `id`, started (with no blocks) when not held.
  Sequence& Start(SeqId id) {
    if (Sequence* seq = Find(id)) return *seq;
    Id slot = kNone;
    if (!free_slots.empty()) {
      slot = free_slots.back();
      free_slots.pop_back();
    } else {
      slot = static_cast<Id>(sequences.size());
      sequences.emplace_back();
    }
    sequence_slots.Assign(SeqKey(id), slot);
    return sequences[slot];
  }

  void Append(Sequence& seq, const SeqRun& r) {
    AppendRun(&seq.runs, r);
    seq.blocks += r.count;
  }

  void Drop(SeqId id, Sequence& seq) {
    ReleaseBlocks(seq, seq.blocks);
    const Id slot = static_cast<Id>(&seq - sequences.data());
    sequence_slots.Erase(SeqKey(id));
    seq.runs.clear();  // keeps its memory for the slot's next sequence
    if (seq.runs.capacity() > kSpareListMaxRuns) seq.runs.shrink_to_fit();
    seq.blocks = 0;
    seq.pinned = false;
    free_slots.push_back(slot);
  }

  void CommitRange(SeqId id, std::int64_t first_index, std::span<const BlockRun> runs) {
    if (!caching || runs.empty()) return;
    Sequence* seq = Find(id);
    if (seq == nullptr) return;
    const std::int64_t start = std::max<std::int64_t>(first_index, 0);
    const std::int64_t end = std::min(seq->blocks, first_index + Total(runs));
    if (start >= end) return;
    // The sequence's runs i0..i1 cover [start, end); commits are usually at
    // the end of the sequence, so look from there.
    std::vector<SeqRun>& held = seq->runs;
    std::size_t i1 = held.size() - 1;
    std::int64_t i1_end = seq->blocks;
    while (i1_end - held[i1].count >= end) i1_end -= held[i1--].count;
    std::size_t i0 = i1;
    std::int64_t i0_start = i1_end - held[i1].count;
    while (i0_start > start) i0_start -= held[--i0].count;
    // Rebuild runs i0..i1 into scratch.
    std::vector<SeqRun>& out = scratch_runs;
    out.clear();
    std::size_t k = 0;  // the commit's run holding position `pos`
    std::int64_t k_start = first_index;
    std::int64_t pos = i0_start;
    for (std::size_t i = i0; i <= i1; ++i) {
      const SeqRun r = held[i];
      const std::int64_t r_end = pos + r.count;
      // Before `start` or after `end`, or already named: unchanged.
      const std::int64_t lo = std::max(pos, start), hi = std::min(r_end, end);
      if (r.named || lo >= hi) {
        AppendRun(&out, r);
        pos = r_end;
        continue;
      }
      AppendRun(&out, SeqRun{0, 0, lo - pos, false});
      for (std::int64_t p = lo; p < hi;) {
        while (k_start + runs[k].count <= p) k_start += runs[k++].count;
        const std::int64_t take = std::min(hi, k_start + runs[k].count) - p;
        const std::int64_t index = runs[k].first + (p - k_start);
        Name(runs[k].key, index, index + take, &out);
        p += take;
      }
      AppendRun(&out, SeqRun{0, 0, r_end - hi, false});
      pos = r_end;
    }
    held.erase(held.begin() + static_cast<std::ptrdiff_t>(i0),
               held.begin() + static_cast<std::ptrdiff_t>(i1 + 1));
    // Re-insert, merging with the runs on either side.
    std::vector<SeqRun> tail(held.begin() + static_cast<std::ptrdiff_t>(i0), held.end());
    held.resize(i0);
    for (const SeqRun& r : out) AppendRun(&held, r);
    for (const SeqRun& r : tail) AppendRun(&held, r);
  }

  // The hashes of the per-hash forms as one-block runs.
  static std::vector<BlockRun> AsRuns(std::span<const std::uint64_t> hashes) {
    std::vector<BlockRun> runs;
    runs.reserve(hashes.size());
    for (const std::uint64_t h : hashes) runs.push_back(BlockRun{h, 0, 1});
    return runs;
  }

  const std::int64_t capacity;
  const bool caching;
  std::vector<Extent> extents;  // live ones are reachable from index_of
  std::vector<Id> free_extents;
  KeyIndex index_of;    // key -> its first extent
  Id lru_head = kNone;  // least recently released cached extent
  Id lru_tail = kNone;  // most recently released
  std::int64_t cached = 0;
  std::int64_t referenced = 0;
  // Held sequences in reused slots (a slot keeps its run list's memory),
  // found through a flat index.
  std::vector<Sequence> sequences;
  std::vector<Id> free_slots;
  KeyIndex sequence_slots;  // sequence id -> slot
  std::vector<SeqRun> scratch_runs;
  bool track_evictions = false;
  std::vector<BlockRun> evicted;  // in eviction order, when tracking
  PrefixCacheStats stats;
};

PrefixCache::PrefixCache(std::int64_t capacity_blocks, bool caching)
    : impl_(std::make_unique<Impl>(capacity_blocks, caching)) {
  assert(capacity_blocks >= 0);
}

PrefixCache::~PrefixCache() = default;

std::int64_t PrefixCache::LongestPrefix(std::span<const BlockRun> runs, std::int64_t limit) const {
  return impl_->FindHits(runs, limit).hits;
}

std::optional<std::int64_t> PrefixCache::Admit(SeqId id, std::span<const BlockRun> prompt,
                                               std::int64_t blocks_needed,
                                               std::int64_t max_hit_blocks) {
  Impl& s = *impl_;
  assert(blocks_needed >= 0);
  if (s.Find(id) != nullptr) return std::nullopt;
  const Impl::Hits found = s.FindHits(prompt, std::min(max_hit_blocks, blocks_needed));
  const std::int64_t fresh = blocks_needed - found.hits;
  if (fresh > s.FreeBlocks() - found.cached) return std::nullopt;
  Sequence& seq = s.Start(id);
  // References on the hits first, then fresh blocks, so that no fresh block
  // evicts a block about to be hit.
  std::int64_t left = found.hits;
  for (const BlockRun& run : prompt) {
    if (left == 0) break;
    const std::int64_t take = std::min(run.count, left);
    s.Reference(run.key, run.first, run.first + take);
    s.Append(seq, SeqRun{run.key, run.first, take, true});
    left -= take;
  }
  s.TakeFresh(fresh);
  s.Append(seq, SeqRun{0, 0, fresh, false});
  ++s.stats.lookups;
  s.stats.hit_blocks += found.hits;
  return found.hits;
}

bool PrefixCache::CanAdmit(std::span<const BlockRun> prompt, std::int64_t blocks_needed,
                           std::int64_t max_hit_blocks) const {
  const Impl::Hits found = impl_->FindHits(prompt, std::min(max_hit_blocks, blocks_needed));
  return blocks_needed - found.hits <= impl_->FreeBlocks() - found.cached;
}

bool PrefixCache::Grow(SeqId id, std::int64_t n) {
  Impl& s = *impl_;
  if (n <= 0) return true;
  if (s.FreeBlocks() < n) return false;
  Sequence& seq = s.Start(id);
  s.TakeFresh(n);
  s.Append(seq, SeqRun{0, 0, n, false});
  return true;
}

void PrefixCache::CommitRange(SeqId id, std::int64_t first_index, std::span<const BlockRun> runs) {
  impl_->CommitRange(id, first_index, runs);
}

void PrefixCache::ReleaseFront(SeqId id, std::int64_t n) {
  Impl& s = *impl_;
  if (n <= 0) return;
  Sequence* seq = s.Find(id);
  if (seq == nullptr) return;
  const std::int64_t count = std::min(n, seq->blocks);
  s.ReleaseBlocks(*seq, count);
  // Drop positions [0, count) from the list.
  std::vector<SeqRun>& held = seq->runs;
  std::size_t i = 0;
  std::int64_t left = count;
  while (i < held.size() && held[i].count <= left) left -= held[i++].count;
  held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(i));
  if (left > 0) {
    held.front().count -= left;
    if (held.front().named) held.front().first += left;
  }
  seq->blocks -= count;
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
  return seq == nullptr ? 0 : seq->blocks;
}

std::int64_t PrefixCache::CachedBlocksIn(std::span<const BlockRun> runs) const {
  const Impl& s = *impl_;
  if (!s.caching) return 0;
  std::int64_t n = 0;
  for (const BlockRun& run : runs) {
    const std::int64_t end = run.first + run.count;
    for (Id e = s.Locate(run.key, run.first); e != kNone && s.extents[e].lo < end;
         e = s.extents[e].knext) {
      if (s.extents[e].refs != 0) continue;
      n += std::min(end, s.extents[e].hi) - std::max(run.first, s.extents[e].lo);
    }
  }
  return n;
}

std::int64_t PrefixCache::LastMissing(std::span<const BlockRun> runs) const {
  const Impl& s = *impl_;
  std::int64_t base = Total(runs);
  if (!s.caching) return base - 1;
  for (std::size_t i = runs.size(); i-- > 0;) {
    const BlockRun& run = runs[i];
    base -= run.count;
    std::int64_t index = run.first + run.count - 1;
    Id e = s.Locate(run.key, index);
    if (e == kNone || s.extents[e].lo > index) return base + (index - run.first);
    // Walk down over contiguous extents.
    for (;;) {
      index = s.extents[e].lo - 1;
      if (index < run.first) break;
      const Id p = s.extents[e].kprev;
      if (p == kNone || s.extents[p].hi <= index) return base + (index - run.first);
      e = p;
    }
  }
  return -1;
}

std::int64_t PrefixCache::LongestPrefix(std::span<const std::uint64_t> hashes) const {
  return LongestPrefix(Impl::AsRuns(hashes));
}

std::optional<std::int64_t> PrefixCache::Admit(SeqId id,
                                               std::span<const std::uint64_t> prompt_hashes,
                                               std::int64_t blocks_needed,
                                               std::int64_t max_hit_blocks) {
  return Admit(id, Impl::AsRuns(prompt_hashes), blocks_needed, max_hit_blocks);
}

bool PrefixCache::CanAdmit(std::span<const std::uint64_t> prompt_hashes, std::int64_t blocks_needed,
                           std::int64_t max_hit_blocks) const {
  return CanAdmit(Impl::AsRuns(prompt_hashes), blocks_needed, max_hit_blocks);
}

void PrefixCache::Commit(SeqId id, std::int64_t index, std::uint64_t hash) {
  const BlockRun run{hash, 0, 1};
  CommitRange(id, index, std::span<const BlockRun>(&run, 1));
}

void PrefixCache::CommitRange(SeqId id, std::int64_t first_index,
                              std::span<const std::uint64_t> hashes) {
  CommitRange(id, first_index, Impl::AsRuns(hashes));
}

bool PrefixCache::Evictable(std::uint64_t hash) const {
  const BlockRun run{hash, 0, 1};
  return CachedBlocksIn(std::span<const BlockRun>(&run, 1)) == 1;
}

std::int64_t PrefixCache::capacity_blocks() const { return impl_->capacity; }
std::int64_t PrefixCache::free_blocks() const { return impl_->FreeBlocks(); }
std::int64_t PrefixCache::cached_blocks() const { return impl_->cached; }
std::int64_t PrefixCache::referenced_blocks() const { return impl_->referenced; }
const PrefixCacheStats& PrefixCache::stats() const { return impl_->stats; }

void PrefixCache::TrackEvictions(bool on) {
  impl_->track_evictions = on;
  if (!on) impl_->evicted.clear();
}

std::vector<BlockRun> PrefixCache::TakeEvicted() {
  std::vector<BlockRun> out;
  out.swap(impl_->evicted);
  return out;
}

std::vector<std::uint64_t> PrefixCache::TakeEvictedHashes() {
  std::vector<std::uint64_t> out;
  for (const BlockRun& r : TakeEvicted()) out.push_back(r.key);
  return out;
}

}  // namespace kvbill
