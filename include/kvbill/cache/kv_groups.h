// KV cache groups and the grouped KV pool of one replica, after vLLM v1's
// hybrid KV cache manager. Spec: docs/engine.md ("The KV pool").
//
// Layers that keep per-token KV are split into KV cache groups by kind: full
// attention (and MLA), sliding window of W tokens, chunked local attention of
// C tokens. As vLLM does (kv_cache_utils.py, _get_kv_cache_config_uniform_page_size),
// every group has the same number of layers, the fewest layers of any kind
// (the most when no kind has 1.25 times the fewest), the last group of a
// kind padded; a page of the pool is block_size tokens of
// one group's layers, and every group's block table draws pages from the one
// pool. A model whose per-token layers are all of one kind has one group, and
// its page is the block of every layer, as before groups existed.
//
// A sequence holds, per group, the blocks of positions [lo, hi):
//   - full: lo = 0 (every block it computed);
//   - sliding W: blocks before the one holding token c - W + 1 (c tokens
//     computed) are freed, as vLLM's remove_skipped_blocks does;
//   - chunked C: blocks before the current chunk's first token are freed.
// A freed block keeps its hash: it is cached and evictable like any released
// block. Linear-state layers (SSM, linear attention) keep a constant state
// per sequence, held as ceil(state bytes / page bytes) pages while the
// sequence is held.
//
// Prefix hits: n leading blocks hit when every full group has blocks [0, n)
// and every windowed group has the blocks covering [WindowStart(n x bs), n x bs)
// (sliding: the W - 1 tokens before position n x bs, which the next token
// attends; chunked: the current chunk so far). The hit is the longest n
// satisfying every group (vLLM's HybridKVCacheCoordinator find_longest_cache_hit).
//
// Groups are distinct blocks in one PrefixCache: group g's copy of a block
// has its run key mixed with g, so each group finds only its own blocks.
// Blocks are passed as runs (BlockRun, block_hash.h), as the cache holds them.
// Each (sequence, group) is one PrefixCache sequence holding [lo, hi); a
// windowed group drops blocks leaving its window with ReleaseFront, newest
// first, so they enter the LRU order as vLLM's remove_skipped_blocks frees
// them.
// Deterministic; with one group every call maps onto the same PrefixCache
// calls as before groups existed.
#ifndef KVBILL_CACHE_KV_GROUPS_H_
#define KVBILL_CACHE_KV_GROUPS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "kvbill/cache/prefix_cache.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/units.h"

namespace kvbill {

enum class KvGroupKind { kFull, kSliding, kChunked };

struct KvCacheGroup {
  KvGroupKind kind = KvGroupKind::kFull;
  Tokens window = 0;  // sliding window or chunk size, tokens (0 for full)
  int layers = 0;     // model layers in the group (padding not counted)
};

// The first token position a group still needs when `computed` tokens are
// computed: 0 (full), max(0, computed - W + 1) (sliding), the current
// chunk's start (chunked).
Tokens WindowStart(const KvCacheGroup& group, Tokens computed);

struct KvGroupLayout {
  Tokens block_size = 16;
  // In order of the kinds' first layers in the model (vLLM's order).
  std::vector<KvCacheGroup> groups;
  int layers_per_group = 0;      // the fewest layers of any kind (or the most: above)
  Bytes page_bytes = 0;          // one page: block_size tokens of one group, one GPU
  Bytes state_bytes = 0;         // constant bytes per sequence, one GPU
  std::int64_t state_pages = 0;  // pages a held sequence takes for its state
  // The state includes a constant-state layer's (SSM, linear attention,
  // short convolution), which a prefix hit cannot restore; false when it is
  // only compressed layers' windows and compressor state, which vLLM keeps
  // in sliding-window pages beside the cached blocks.
  bool state_stops_prefix_caching = false;

  // One full-attention group and no linear state: the pool behaves as a
  // plain PrefixCache.
  bool Single() const {
    return groups.size() == 1 && groups[0].kind == KvGroupKind::kFull && state_pages == 0;
  }
  bool Windowed() const;  // any sliding or chunked group
};

// Compressed layers (DeepSeek-V4) are one full group whose page holds each
// layer's compressed latents (and indexer keys) of block_size tokens, at
// least one entry; their windows of raw latents and the compressors' state
// are a constant per sequence, held as state pages.
//
// Groups the per-token layers of `model` (split over `tensor_parallel` GPUs)
// as vLLM does. Page bytes: block_size x layers_per_group x the largest
// per-token bytes of a layer (vLLM needs equal page sizes), rounded up to
// whole bytes; with one kind, block_size x the bytes of all its layers.
// Precondition: block_size >= 1.
KvGroupLayout MakeKvGroupLayout(const ModelShape& model, const ElementFormat& format,
                                int tensor_parallel, Tokens block_size);

// The layers SGLang's KV pool holds for `model` (docs/engine.md, "Batching,
// SGLang"): its hybrid sliding-window pool (SWAKVPool) serves only the
// architectures model_config.py's is_hybrid_swa_model lists (Llama 4, MiMo-V2,
// Step-3.5, and gpt-oss, for which server_args.py's model-specific
// adjustments of the v0.5 series set disable_hybrid_swa_memory, as they do for
// Gemma 2 and 3). Every other model's pool keeps every token of every
// layer: its sliding-window and chunked layers come back as full attention
// (their attention still reads the window; only the pool changes). The
// hybrid architectures come back unchanged (kvbill pages them as vLLM does,
// not in SGLang's pool of swa_full_tokens_ratio 0.8, which it does not
// model).
ModelShape SglangPoolModel(const ModelShape& model);
bool SglangHybridSlidingPool(const ModelShape& model);

// One sequence of a fused decode block (KvPool::AdvanceDecode).
struct DecodingSeq {
  SeqId id = 0;
  Tokens computed = 0;  // tokens computed before the block
  BlockRunList blocks;  // its full blocks, at least up to the block's end
};

// Tokens a pool of `pages` pages holds for sequences that keep every block
// of every group (kUnlimitedBlocks for an unlimited pool).
Tokens PoolTokens(const KvGroupLayout& layout, std::int64_t pages);

// The most pages of `layout` a sequence reaching `tokens` tokens holds,
// computing at most `chunk` tokens per iteration: its blocks in every full
// group, WindowedPeakBlocks (kv_footprint.h) in every windowed group, and
// its state pages; with one group, its blocks. KvPool::PeakPages, and `fit`
// for a model of several groups.
std::int64_t PeakPages(const KvGroupLayout& layout, Tokens tokens, Tokens chunk);

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

  // The longest prefix hit, in blocks, of a prompt with these full blocks,
  // at most `limit` (the hit rule above). No state change.
  std::int64_t LongestPrefix(std::span<const BlockRun> blocks,
                             std::int64_t limit = kUnlimitedBlocks) const;

  // Starts sequence `id` with the first `hits` blocks of `blocks` as hits (a
  // valid LongestPrefix result) and fresh blocks up to position
  // `blocks_needed`, in every group; windowed groups take only the hits
  // inside their window. Returns the hit count, or nullopt changing nothing
  // when the pool cannot supply the pages or `id` is held.
  std::optional<std::int64_t> Admit(SeqId id, std::span<const BlockRun> blocks, std::int64_t hits,
                                    std::int64_t blocks_needed);
  bool CanAdmit(std::span<const BlockRun> blocks, std::int64_t hits,
                std::int64_t blocks_needed) const;
  // Pages the pool lacks for that admission (<= 0: it fits).
  std::int64_t AdmissionDeficit(std::span<const BlockRun> blocks, std::int64_t hits,
                                std::int64_t blocks_needed) const;
  // Pages held sequence `id` frees in windowed groups during the next
  // `steps` decode steps from `computed` (an upper bound; non-decreasing).
  std::int64_t FreedDuring(SeqId id, Tokens computed, Tokens steps) const;
  // Pages such an admission holds (to tell a request that can never fit).
  std::int64_t AdmissionPages(std::int64_t hits, std::int64_t blocks_needed) const;
  // Of the first `hits` blocks of `blocks` (a prompt's hits), the pages now
  // cached and unreferenced: counted in free_blocks(), they leave it when the
  // prompt takes them.
  std::int64_t EvictableHits(std::span<const BlockRun> blocks, std::int64_t hits) const;
  // The most pages a sequence reaching `tokens` tokens can hold, computing
  // at most `chunk` tokens per iteration (exact with one group; an upper
  // bound with windowed groups, which also hold a prefill chunk's blocks:
  // WindowedPeakBlocks, kv_footprint.h, the count `fit` makes too).
  std::int64_t PeakPages(Tokens tokens, Tokens chunk) const;
  // Tokens the pool holds for sequences that keep every block of every group.
  Tokens capacity_tokens() const;
  // The longest sequence the whole pool holds alone (PeakPages within the
  // capacity, computing `chunk` tokens an iteration): below capacity_tokens
  // by a sequence's state pages, above it with windowed groups.
  Tokens LongestSequence(Tokens chunk) const;

  // Before computing tokens [computed, tokens) of held sequence `id`: frees
  // its blocks outside every window at `computed` (committing those of
  // `blocks` first, when given), then allocates blocks up to position
  // ceil(tokens / block_size). False when the pool cannot supply them; the
  // freeing stays done (as in vLLM, which frees skipped blocks first).
  bool Reserve(SeqId id, Tokens computed, Tokens tokens, BlockRunList blocks = {});

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

  // Names blocks first_index, first_index + 1, ... of sequence `id` with the
  // blocks of `runs`, in every group holding them (PrefixCache::CommitRange).
  void CommitRange(SeqId id, std::int64_t first_index, std::span<const BlockRun> runs);
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

  // Host-tier support (single-group pools only; see docs/engine.md): evicted
  // blocks in eviction order, as BlockRunHash(key, index).
  void TrackEvictions(bool on) { cache_.TrackEvictions(on); }
  std::vector<std::uint64_t> TakeEvictedHashes();

 private:
  struct Held {
    std::vector<std::int64_t> lo, hi;  // per group: blocks [lo, hi) held
    bool pinned = false;
  };
  struct Plan {
    std::int64_t fresh = 0;   // pages to allocate
    std::int64_t cached = 0;  // hits on unreferenced blocks
  };
  Plan PlanAdmit(std::span<const BlockRun> blocks, std::int64_t hits,
                 std::int64_t blocks_needed) const;
  // Group g's copy of blocks [from, to) of `blocks`, into *out (cleared).
  void GroupSlice(std::size_t g, std::span<const BlockRun> blocks, std::int64_t from,
                  std::int64_t to, std::vector<BlockRun>* out) const;
  std::int64_t FirstBlock(std::size_t g, Tokens computed) const;
  std::int64_t MaxHeld(std::size_t g, Tokens from, Tokens to) const;

  KvGroupLayout layout_;
  PrefixCache cache_;
  std::unordered_map<SeqId, Held> held_;
  mutable std::vector<BlockRun> scratch_;
};

}  // namespace kvbill

#endif  // KVBILL_CACHE_KV_GROUPS_H_
