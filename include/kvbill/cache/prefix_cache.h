// PrefixCache: the KV block pool of one replica with prefix caching, as vLLM
// v1 manages it.
//
// The pool has `capacity_blocks` blocks. A block is either
//   - referenced: held by one or more running sequences (or pinned), never evicted;
//   - cached: unreferenced but holding a hashed full block, findable by its
//     hash, kept in LRU order and evicted (oldest first) when a fresh block
//     is needed and no empty block is left;
//   - empty: never used, or freed without a hash.
// free_blocks() = empty + cached: what an allocation may take. A fresh block
// is an empty one while any is left, else the least recently released cached
// block, whose hash is then forgotten. (vLLM keeps empty and cached blocks in
// one queue; taking empty blocks first keeps cached content longer and
// behaves the same until the never-used blocks run out.)
//
// Sequences are identified by a caller-chosen SeqId. A sequence holds a list
// of blocks in order. Admit reuses the longest cached prefix of the prompt's
// block hashes (taking references on those blocks) and allocates the rest
// fresh; Grow adds fresh blocks as decode crosses block boundaries; Commit
// gives a sequence's full block its hash so others can find it; Release drops
// the references, blocks with a hash becoming cached (the sequence's last
// block first, so tails are evicted before heads, as vLLM's free queue
// does), blocks without one empty.
//
// When two sequences compute the same block, the first committed hash wins:
// the second block stays unhashed and becomes empty on release.
//
// Pinning keeps a released sequence's blocks referenced (counted against
// capacity) until Unpin, for keeping an agent's context across a tool call.
//
// All operations are deterministic. Costs: Admit O(prompt blocks), Grow and
// Release O(blocks touched), LongestPrefix O(hits). Storage grows with the
// blocks actually used, so kUnlimitedBlocks costs only what a trace touches
// (up to 2^32 - 2 distinct blocks; beyond that std::length_error, as for
// running out of memory).
#ifndef KVBILL_CACHE_PREFIX_CACHE_H_
#define KVBILL_CACHE_PREFIX_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kvbill/util/units.h"

namespace kvbill {

using SeqId = std::int64_t;

// Capacity meaning "never evict" (for cache studies).
inline constexpr std::int64_t kUnlimitedBlocks = std::int64_t{1} << 60;

// Counters since construction. A refused Admit changes none of them.
struct PrefixCacheStats {
  std::int64_t lookups = 0;         // Admit calls
  std::int64_t hit_blocks = 0;      // blocks reused by Admit
  std::int64_t evicted_blocks = 0;  // cached blocks dropped to make room
};

class PrefixCache {
 public:
  // capacity_blocks >= 0 or kUnlimitedBlocks. caching=false: nothing is ever
  // found (hashes are ignored) but allocation works the same.
  explicit PrefixCache(std::int64_t capacity_blocks, bool caching = true);
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // Leading hashes found in the cache (referenced or cached). No state change.
  std::int64_t LongestPrefix(std::span<const std::uint64_t> hashes) const;

  // Starts sequence `id` (not currently held): reuses the longest cached
  // prefix of `prompt_hashes` (at most max_hit_blocks of it) and allocates
  // fresh blocks so that the sequence holds `blocks_needed` in all
  // (hits are capped at blocks_needed). Returns the hit count, or nullopt and
  // changes nothing when the pool cannot supply the fresh blocks (after
  // evicting) or `id` is already held (running or pinned). Hits on cached
  // blocks leave the free pool, so they count against what it can supply.
  std::optional<std::int64_t> Admit(SeqId id, std::span<const std::uint64_t> prompt_hashes,
                                    std::int64_t blocks_needed,
                                    std::int64_t max_hit_blocks = kUnlimitedBlocks);

  // Whether Admit(id, prompt_hashes, blocks_needed, max_hit_blocks) would
  // succeed for an id not held. No state change.
  bool CanAdmit(std::span<const std::uint64_t> prompt_hashes, std::int64_t blocks_needed,
                std::int64_t max_hit_blocks = kUnlimitedBlocks) const;

  // Adds `n` fresh blocks to sequence `id` (starting it when unknown). False,
  // changing nothing, when free_blocks() < n.
  bool Grow(SeqId id, std::int64_t n);

  // Gives block `index` of sequence `id` the hash `hash` (the block is full).
  // No-op when that block already has a hash or another block has `hash`,
  // when `id` is unknown or `index` out of range, and when caching is off.
  void Commit(SeqId id, std::int64_t index, std::uint64_t hash);

  // Commit(id, first_index + i, hashes[i]) for each i in order, with one
  // look-up of `id`: the same result as those calls.
  void CommitRange(SeqId id, std::int64_t first_index, std::span<const std::uint64_t> hashes);

  // Drops sequence `id`'s references on its first min(n, held) blocks, the
  // last of them first (so the first block becomes the most recently
  // released, as Release orders a whole sequence's blocks), then removes them
  // from its list: block n of before is block 0 after. Hashed blocks become
  // cached, unhashed ones empty, as for Release. `id` stays held (pinned or
  // not), with no blocks if all went. Unknown ids and n <= 0 are no-ops.
  // Cost O(held) (the list is shifted). For a sliding window: one sequence
  // whose list is the window's blocks [lo, hi).
  void ReleaseFront(SeqId id, std::int64_t n);

  // Drops sequence `id`'s references (pinned or not); `id` is then unknown.
  // With pin: the blocks stay referenced under `id` until Unpin(id).
  // Unknown ids are no-ops; so is Unpin of a sequence that is not pinned.
  void Release(SeqId id);
  void ReleasePinned(SeqId id);  // keeps references; Unpin later
  void Unpin(SeqId id);          // releases a pinned sequence's blocks

  // Blocks sequence `id` holds (0 when unknown).
  std::int64_t BlocksOf(SeqId id) const;

  // Whether a cached (unreferenced, so evictable) block has `hash`: reusing
  // it takes it out of the free pool. False when caching is off.
  bool Evictable(std::uint64_t hash) const;

  std::int64_t capacity_blocks() const;
  std::int64_t free_blocks() const;        // empty + cached
  std::int64_t cached_blocks() const;      // unreferenced with a hash
  std::int64_t referenced_blocks() const;  // held by sequences or pins
  const PrefixCacheStats& stats() const;

  // With tracking on, the hashes of evicted cached blocks are kept, in
  // eviction order, until taken (for an offload tier below the pool).
  void TrackEvictions(bool on);
  std::vector<std::uint64_t> TakeEvictedHashes();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvbill

#endif  // KVBILL_CACHE_PREFIX_CACHE_H_
