// TEMPORARY: the block-by-block prefix cache and KV pool as they were before
// the run cache (prefix_cache.h), kept only so that tests can run the engine
// on both and compare the outputs. Removed once the comparison has passed.
#ifndef KVBILL_CACHE_LEGACY_BLOCK_CACHE_H_
#define KVBILL_CACHE_LEGACY_BLOCK_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kvbill/cache/kv_groups.h"
#include "kvbill/cache/prefix_cache.h"

namespace kvbill::legacy {

class BlockPrefixCache {
 public:
  // capacity_blocks >= 0 or kUnlimitedBlocks. caching=false: nothing is ever
  // found (hashes are ignored) but allocation works the same.
  explicit BlockPrefixCache(std::int64_t capacity_blocks, bool caching = true);
  ~BlockPrefixCache();
  BlockPrefixCache(const BlockPrefixCache&) = delete;
  BlockPrefixCache& operator=(const BlockPrefixCache&) = delete;

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

// One sequence of a fused decode block (KvPool::AdvanceDecode).
struct DecodingSeq {
  SeqId id = 0;
  Tokens computed = 0;                    // tokens computed before the block
  std::span<const std::uint64_t> hashes;  // its full-block hashes, at least up to the block's end
};

// The KV pool of one replica: `capacity_pages` pages of layout.page_bytes.
// Sequence ids are the caller's (non-negative, below 2^55). Blocks are
// counted in positions of block_size tokens ("blocks_needed"), pages in the
// pool's unit; with a single group the two are the same.
class KvPool {
 public:
  KvPool(KvGroupLayout layout, std::int64_t capacity_pages, bool caching = true);
  ~KvPool();
  KvPool(const KvPool&) = delete;
  KvPool& operator=(const KvPool&) = delete;

  // The longest prefix hit, in blocks, of a prompt with these full-block
  // hashes (the hit rule above). No state change.
  std::int64_t LongestPrefix(std::span<const std::uint64_t> hashes) const;

  // Starts sequence `id` with the hits `hit_hashes` (a valid LongestPrefix
  // result) and fresh blocks up to position `blocks_needed`, in every group;
  // windowed groups take only the hits inside their window. Returns the hit
  // count, or nullopt changing nothing when the pool cannot supply the pages
  // or `id` is held.
  std::optional<std::int64_t> Admit(SeqId id, std::span<const std::uint64_t> hit_hashes,
                                    std::int64_t blocks_needed);
  bool CanAdmit(std::span<const std::uint64_t> hit_hashes, std::int64_t blocks_needed) const;
  // Pages the pool lacks for that admission (<= 0: it fits).
  std::int64_t AdmissionDeficit(std::span<const std::uint64_t> hit_hashes,
                                std::int64_t blocks_needed) const;
  // Pages held sequence `id` frees in windowed groups during the next
  // `steps` decode steps from `computed` (an upper bound; non-decreasing).
  std::int64_t FreedDuring(SeqId id, Tokens computed, Tokens steps) const;
  // Pages such an admission holds (to tell a request that can never fit).
  std::int64_t AdmissionPages(std::int64_t hits, std::int64_t blocks_needed) const;
  // The most pages a sequence reaching `tokens` tokens can hold, computing
  // at most `chunk` tokens per iteration (exact with one group; an upper
  // bound with windowed groups, which also hold a prefill chunk's blocks).
  std::int64_t PeakPages(Tokens tokens, Tokens chunk) const;
  // Tokens the pool holds for sequences that keep every block of every group.
  Tokens capacity_tokens() const;

  // Before computing tokens [computed, tokens) of held sequence `id`: frees
  // its blocks outside every window at `computed` (committing hashes[b]
  // first, when given), then allocates blocks up to position
  // ceil(tokens / block_size). False when the pool cannot supply them; the
  // freeing stays done (as in vLLM, which frees skipped blocks first).
  bool Reserve(SeqId id, Tokens computed, Tokens tokens,
               std::span<const std::uint64_t> hashes = {});

  // Pages the pool must have free for `steps` decode steps (one Reserve per
  // step, tokens computed + j -> computed + j + 1) of held sequence `id` to
  // succeed whatever the order of the other sequences' steps: the most
  // pages it holds at any point of those steps, less what it holds now.
  // Non-decreasing in `steps`; exact for full groups.
  std::int64_t DecodeDemand(SeqId id, Tokens computed, Tokens steps) const;

  // The most pages held sequence `id` holds after any of the next `steps`
  // decode steps (what the step-by-step engine samples after each step).
  std::int64_t PeakPagesDuring(SeqId id, Tokens computed, Tokens steps) const;

  // Applies `steps` decode steps of `seqs` (in scheduling order) as the
  // step-by-step engine would: step by step, sequence by sequence, each
  // freeing then allocating, so that blocks are freed and evicted in the
  // same order. Precondition: the sum of DecodeDemand over seqs <= free_blocks().
  void AdvanceDecode(std::span<const DecodingSeq> seqs, Tokens steps);

  // Gives block `index` of sequence `id` its hash in every group holding it.
  void Commit(SeqId id, std::int64_t index, std::uint64_t hash);
  // Commit(id, first_index + i, hashes[i]) for each i: the same result, one
  // sequence look-up per group instead of one per block and group.
  void CommitRange(SeqId id, std::int64_t first_index, std::span<const std::uint64_t> hashes);
  void Release(SeqId id);
  void ReleasePinned(SeqId id);
  void Unpin(SeqId id);

  // Positions (blocks of block_size tokens) sequence `id` has allocated, and
  // the pages it holds now over all groups (0 when unknown).
  std::int64_t BlocksOf(SeqId id) const;
  std::int64_t PagesOf(SeqId id) const;

  std::int64_t capacity_blocks() const { return cache_.capacity_blocks(); }  // pages
  std::int64_t free_blocks() const { return cache_.free_blocks(); }          // pages
  // With groups, lookups and hit_blocks count PrefixCache sequences (one per
  // group with hits); evicted_blocks counts pages.
  const PrefixCacheStats& stats() const { return cache_.stats(); }
  const KvGroupLayout& layout() const { return layout_; }

  // Host-tier support (single-group pools only; see docs/engine.md).
  void TrackEvictions(bool on) { cache_.TrackEvictions(on); }
  std::vector<std::uint64_t> TakeEvictedHashes() { return cache_.TakeEvictedHashes(); }

 private:
  struct Held {
    std::vector<std::int64_t> lo, hi;  // per group: blocks [lo, hi) held
    bool pinned = false;
  };
  struct Plan {
    std::int64_t fresh = 0;   // pages to allocate
    std::int64_t cached = 0;  // hits on unreferenced blocks
  };
  Plan PlanAdmit(std::span<const std::uint64_t> hit_hashes, std::int64_t blocks_needed) const;
  bool Cached(std::size_t g, std::uint64_t hash) const;
  std::int64_t FirstBlock(std::size_t g, Tokens computed) const;
  std::int64_t MaxHeld(std::size_t g, Tokens from, Tokens to) const;

  KvGroupLayout layout_;
  BlockPrefixCache cache_;
  std::unordered_map<SeqId, Held> held_;
  std::vector<std::uint64_t> scratch_;
};

}  // namespace kvbill::legacy

#endif  // KVBILL_CACHE_LEGACY_BLOCK_CACHE_H_
