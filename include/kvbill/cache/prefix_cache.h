// PrefixCache: the KV block pool of one replica with prefix caching, as vLLM
// v1 manages it, held in runs of blocks.
//
// The pool has `capacity_blocks` blocks. A block is either
//   - referenced: held by one or more running sequences (or pinned), never evicted;
//   - cached: unreferenced but holding a committed full block, findable by
//     its name, kept in LRU order and evicted (oldest first) when a fresh
//     block is needed and no empty block is left;
//   - empty: never used, or freed without a name.
// free_blocks() = empty + cached: what an allocation may take. A fresh block
// is an empty one while any is left, else the least recently released cached
// block, which is then forgotten. (vLLM keeps empty and cached blocks in one
// queue; taking empty blocks first keeps cached content longer and behaves
// the same until the never-used blocks run out.)
//
// Blocks are named by (key, index) pairs and passed as runs of consecutive
// indices under one key (BlockRun, block_hash.h): a prompt's blocks are a
// list of runs. Sequences are identified by a caller-chosen SeqId. A
// sequence holds a list of blocks in order. Admit reuses the longest cached
// prefix of the prompt's blocks (taking references on them) and allocates
// the rest fresh; Grow adds fresh blocks as decode crosses block boundaries;
// CommitRange names a sequence's full blocks so others can find them;
// Release drops the references, named blocks becoming cached (the sequence's
// last block first, so tails are evicted before heads, as vLLM's free queue
// does), unnamed ones empty.
//
// When two sequences compute the same block, the first committed name wins:
// the second block stays unnamed and becomes empty on release.
//
// Pinning keeps a released sequence's blocks referenced (counted against
// capacity) until Unpin, for keeping an agent's context across a tool call.
//
// How it is held (after SGLang's RadixAttention, which keeps token runs in a
// radix tree): every named block lives in an extent, a stretch of one key's
// indices in one state (referenced by r sequences, or cached at one place in
// the LRU order). A run's key chains everything before it, so the extents of
// a key are a node of the radix tree of prefixes, found by one hash probe
// instead of a walk from the root. The LRU order is a list of cached extents,
// each evicted from its highest index down, which is the order a sequence's
// release puts its blocks in. Every operation is exactly what the block-by-
// block pool did (same hits, same evictions in the same order, same counts;
// tests/cache/prefix_cache_test.cc checks it against a block-level model),
// at a cost that grows with the runs and extents touched, not the blocks:
// Admit O(prompt runs + extents hit), CommitRange O(runs committed), Release
// O(runs held), eviction O(extents evicted).
//
// The per-hash overloads treat each 64-bit hash as a run of one block
// (key hash, index 0), for callers that hash block by block.
//
// All operations are deterministic. Storage grows with the extents and the
// sequences' runs, so kUnlimitedBlocks costs only what a trace touches (up
// to 2^32 - 2 extents; beyond that std::length_error, as for running out of
// memory).
#ifndef KVBILL_CACHE_PREFIX_CACHE_H_
#define KVBILL_CACHE_PREFIX_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kvbill/cache/block_hash.h"
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
  // found (names are ignored) but allocation works the same.
  explicit PrefixCache(std::int64_t capacity_blocks, bool caching = true);
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // Leading blocks of `runs` found in the cache (referenced or cached), at
  // most `limit`. No state change.
  std::int64_t LongestPrefix(std::span<const BlockRun> runs,
                             std::int64_t limit = kUnlimitedBlocks) const;

  // Starts sequence `id` (not currently held): reuses the longest cached
  // prefix of `prompt` (at most max_hit_blocks of it) and allocates fresh
  // blocks so that the sequence holds `blocks_needed` in all (hits are
  // capped at blocks_needed). Returns the hit count, or nullopt and changes
  // nothing when the pool cannot supply the fresh blocks (after evicting) or
  // `id` is already held (running or pinned). Hits on cached blocks leave the
  // free pool, so they count against what it can supply.
  std::optional<std::int64_t> Admit(SeqId id, std::span<const BlockRun> prompt,
                                    std::int64_t blocks_needed,
                                    std::int64_t max_hit_blocks = kUnlimitedBlocks);

  // Whether Admit(id, prompt, blocks_needed, max_hit_blocks) would succeed
  // for an id not held. No state change.
  bool CanAdmit(std::span<const BlockRun> prompt, std::int64_t blocks_needed,
                std::int64_t max_hit_blocks = kUnlimitedBlocks) const;

  // Adds `n` fresh blocks to sequence `id` (starting it when unknown). False,
  // changing nothing, when free_blocks() < n.
  bool Grow(SeqId id, std::int64_t n);

  // Names blocks first_index, first_index + 1, ... of sequence `id` with the
  // blocks of `runs` in order (they are full). A block that already has a
  // name, or whose name another block has, is left as it is; so are blocks
  // out of range, an unknown `id`, and everything when caching is off.
  void CommitRange(SeqId id, std::int64_t first_index, std::span<const BlockRun> runs);

  // Drops sequence `id`'s references on its first min(n, held) blocks, the
  // last of them first (so the first block becomes the most recently
  // released, as Release orders a whole sequence's blocks), then removes them
  // from its list: block n of before is block 0 after. Named blocks become
  // cached, unnamed ones empty, as for Release. `id` stays held (pinned or
  // not), with no blocks if all went. Unknown ids and n <= 0 are no-ops.
  // For a sliding window: one sequence whose list is the window's blocks [lo, hi).
  void ReleaseFront(SeqId id, std::int64_t n);

  // Drops sequence `id`'s references (pinned or not); `id` is then unknown.
  // With pin: the blocks stay referenced under `id` until Unpin(id).
  // Unknown ids are no-ops; so is Unpin of a sequence that is not pinned.
  void Release(SeqId id);
  void ReleasePinned(SeqId id);  // keeps references; Unpin later
  void Unpin(SeqId id);          // releases a pinned sequence's blocks

  // Blocks sequence `id` holds (0 when unknown).
  std::int64_t BlocksOf(SeqId id) const;

  // How many blocks of `runs` are cached (unreferenced, so evictable):
  // reusing them takes them out of the free pool. 0 when caching is off.
  std::int64_t CachedBlocksIn(std::span<const BlockRun> runs) const;

  // The position (0-based, over the concatenated runs) of the last block of
  // `runs` not found in the cache, or -1 when all are found. With caching
  // off, the last position.
  std::int64_t LastMissing(std::span<const BlockRun> runs) const;

  // Per-hash forms: hash h stands for the one-block run {h, 0, 1}.
  std::int64_t LongestPrefix(std::span<const std::uint64_t> hashes) const;
  std::optional<std::int64_t> Admit(SeqId id, std::span<const std::uint64_t> prompt_hashes,
                                    std::int64_t blocks_needed,
                                    std::int64_t max_hit_blocks = kUnlimitedBlocks);
  bool CanAdmit(std::span<const std::uint64_t> prompt_hashes, std::int64_t blocks_needed,
                std::int64_t max_hit_blocks = kUnlimitedBlocks) const;
  void Commit(SeqId id, std::int64_t index, std::uint64_t hash);
  void CommitRange(SeqId id, std::int64_t first_index, std::span<const std::uint64_t> hashes);
  bool Evictable(std::uint64_t hash) const;

  std::int64_t capacity_blocks() const;
  std::int64_t free_blocks() const;        // empty + cached
  std::int64_t cached_blocks() const;      // unreferenced with a name
  std::int64_t referenced_blocks() const;  // held by sequences or pins
  const PrefixCacheStats& stats() const;

  // With tracking on, evicted blocks are kept, in eviction order, until
  // taken, each as a one-block run {key, index, 1} (for an offload tier
  // below the pool). TakeEvictedHashes gives their keys: the hashes of the
  // per-hash forms.
  void TrackEvictions(bool on);
  std::vector<BlockRun> TakeEvicted();
  std::vector<std::uint64_t> TakeEvictedHashes();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvbill

#endif  // KVBILL_CACHE_PREFIX_CACHE_H_
