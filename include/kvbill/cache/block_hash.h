// Content identity of prompt tokens, and chained block hashes over it.
//
// A prompt is a sequence of ContentPieces: `tokens` consecutive tokens of the
// content called `identity`, starting `offset` tokens into that content.
// Two pieces denote the same tokens exactly when identity and offset are
// equal (and then the shorter is a prefix of the longer). Block i of a prompt
// (tokens [i*B, (i+1)*B)) is hashed together with the hash of block i-1, so
// equal hashes mean equal prefixes, the property a prefix cache keys on:
//
//   h(-1) = kChainSeed
//   h(i)  = Mix(h(i-1), for each run (identity, offset, length) covering block i)
//
// Only full blocks get a hash; a partial last block is never shared (as in
// vLLM). Hashes are a fixed function of the inputs, identical on every
// platform and run (no std::hash).
//
// The functions, exactly (all arithmetic modulo 2^64):
//   Mix64(z)         = splitmix64's finalizer: z ^= z >> 30; z *= 0xbf58476d1ce4e5b9;
//                      z ^= z >> 27; z *= 0x94d049bb133111eb; z ^= z >> 31
//   HashCombine(a,b) = Mix64(a ^ (Mix64(b) + 0x9e3779b97f4a7c15))
//   HashString(s)    = Mix64(FNV-1a 64 of the bytes of s)
//   folding a run into state s:
//                      s = HashCombine(HashCombine(HashCombine(s, identity), offset), length)
// The runs of a block are its maximal stretches of one identity with
// consecutive offsets, cut at the block's edges; zero-token pieces are
// ignored. So splitting a piece, or a block boundary, never changes a hash.
#ifndef KVBILL_CACHE_BLOCK_HASH_H_
#define KVBILL_CACHE_BLOCK_HASH_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct ContentPiece {
  std::uint64_t identity = 0;
  Tokens offset = 0;  // tokens into the content, >= 0
  Tokens tokens = 0;  // >= 0

  bool operator==(const ContentPiece&) const = default;
};

inline constexpr std::uint64_t kChainSeed = 0x6b76'6269'6c6c'0001ULL;
// Folded into the key of a prompt's blocks past its trace block hashes.
inline constexpr std::uint64_t kUnhashedTailTag = 0x7461'696c;  // "tail"

// A stable 64-bit hash of a string (e.g. a span's content id).
std::uint64_t HashString(std::string_view text);

// A stable 64-bit combination of values (e.g. task id hash, turn, span index).
std::uint64_t HashCombine(std::uint64_t a, std::uint64_t b);

// Incrementally hashes a growing token sequence into full blocks.
// Contract: Append pieces in order; full_blocks() lists the hash of every
// block completed so far. Appending a piece adjacent to the previous one with
// the same identity and consecutive offset is the same as one longer piece.
class BlockHasher {
 public:
  explicit BlockHasher(Tokens block_size);  // block_size >= 1

  void Append(const ContentPiece& piece);
  void Append(std::span<const ContentPiece> pieces);

  const std::vector<std::uint64_t>& full_blocks() const { return hashes_; }
  Tokens tokens() const { return tokens_; }
  Tokens block_size() const { return block_size_; }

 private:
  void FoldPending();

  Tokens block_size_;
  Tokens tokens_ = 0;
  std::uint64_t running_;  // hash state of the block being filled
  Tokens filled_ = 0;      // tokens in the block being filled
  ContentPiece pending_;   // the open run of that block (tokens 0: none)
  std::vector<std::uint64_t> hashes_;
};

// The chained hashes of the full blocks of `pieces`.
std::vector<std::uint64_t> BlockHashesOf(std::span<const ContentPiece> pieces, Tokens block_size);

// Runs of blocks: the prefix cache's unit (prefix_cache.h).
//
// A run is `count` consecutive blocks named (key, first), (key, first + 1),
// ...: block i of a run is identified by the pair (key, first + i), and two
// blocks are the same exactly when their pairs are equal, which (as for block
// hashes) means equal prefixes. A prompt's blocks are a list of runs; the
// prefix cache looks up, admits, commits and evicts whole runs, so its cost
// grows with the runs, not the blocks. The 64-bit hash standing for one block
// (for the host offload tier) is BlockRunHash(key, index).
//
// RunHasher cuts a prompt into runs canonically, so that equal prefixes give
// equal pairs whatever pieces they were appended as (the contract of
// BlockHasher, with pairs in place of hashes; docs/engine.md, "Block runs"):
//   - a block is uniform when all its tokens lie in one piece (after merging
//     adjacent pieces of one identity with consecutive offsets), else mixed;
//   - consecutive uniform blocks of one merged piece form one run, whose key
//     is HashCombine(HashCombine(HashCombine(chain, kUniformRunTag),
//     identity), offset of its first token) and whose first index is 0;
//   - a mixed block is a run of one block whose key folds its runs
//     (identity, offset, length), cut at the block's edges, into
//     HashCombine(chain, kMixedBlockTag) as BlockHasher folds them;
//   - chain starts at kChainSeed and, after a uniform run of n blocks with
//     key k, becomes HashCombine(k, n); after a mixed block, its key.
// Prompts published as trace block hashes (Mooncake) are runs too: engine
// blocks j of trace block i are the run (trace hash i, j), whose BlockRunHash
// is the hash BlockHashesFromTrace gives them.
struct BlockRun {
  std::uint64_t key = 0;
  std::int64_t first = 0;  // index of the run's first block under `key`
  std::int64_t count = 0;  // blocks, >= 1

  bool operator==(const BlockRun&) const = default;
};

inline constexpr std::uint64_t kUniformRunTag = 0x7275'6e00'0000'0001ULL;
inline constexpr std::uint64_t kMixedBlockTag = 0x7275'6e00'0000'0002ULL;

// HashCombine(key, index): the 64-bit hash of block `index` of runs keyed `key`.
std::uint64_t BlockRunHash(std::uint64_t key, std::int64_t index);

// A prompt's runs with their cumulative ends (ends[i] = blocks in runs
// [0, i]), so that blocks can be found by position in O(log runs).
struct BlockRunList {
  std::span<const BlockRun> runs;
  std::span<const std::int64_t> ends;  // same size as runs

  std::int64_t blocks() const { return ends.empty() ? 0 : ends.back(); }
  // Appends to *out the runs of blocks [from, to) (clamped to the list).
  void Slice(std::int64_t from, std::int64_t to, std::vector<BlockRun>* out) const;
};

// Incrementally cuts a growing token sequence into runs of full blocks (the
// rules above). Appending a piece adjacent to the previous one with the same
// identity and consecutive offset is the same as one longer piece. Costs
// O(pieces + runs), whatever the block size; a copy continues independently.
class RunHasher {
 public:
  explicit RunHasher(Tokens block_size);  // block_size >= 1

  void Append(const ContentPiece& piece);
  void Append(std::span<const ContentPiece> pieces);

  const std::vector<BlockRun>& runs() const { return runs_; }
  const std::vector<std::int64_t>& ends() const { return ends_; }
  BlockRunList list() const { return {runs_, ends_}; }
  std::int64_t blocks() const { return ends_.empty() ? 0 : ends_.back(); }  // full blocks
  Tokens tokens() const { return tokens_; }
  Tokens block_size() const { return block_size_; }

 private:
  void CloseBlock();
  void CloseRun();
  void PushRun(std::uint64_t key);

  Tokens block_size_;
  Tokens tokens_ = 0;
  std::uint64_t chain_;               // after every closed run and mixed block
  Tokens filled_ = 0;                 // tokens in the block being filled
  ContentPiece open_;                 // its last segment (tokens 0: none)
  std::vector<ContentPiece> closed_;  // its earlier segments (a mixed block)
  bool run_open_ = false;             // runs_.back() is a uniform run that may grow
  ContentPiece run_;                  // that run: identity, offset of its first token, tokens
  std::vector<BlockRun> runs_;
  std::vector<std::int64_t> ends_;
};

// The runs of full blocks of `pieces`.
std::vector<BlockRun> BlockRunsOf(std::span<const ContentPiece> pieces, Tokens block_size);

// Engine block runs for a prompt published as trace block hashes (the runs
// of BlockHashesFromTrace's blocks: the engine blocks whose last token lies
// in trace block i form the run (trace_hashes[i], 0, their count), any
// block size against any trace block size), appended to *runs and *ends
// (cleared first). The same errors as BlockHashesFromTrace, which then
// leaves both empty.
Status BlockRunsFromTrace(std::span<const std::uint64_t> trace_hashes, Tokens trace_block_size,
                          Tokens prompt_tokens, Tokens block_size, std::uint64_t tail_key,
                          std::vector<BlockRun>* runs, std::vector<std::int64_t>* ends);

// Engine block hashes for a prompt of `prompt_tokens` published only as
// trace block hashes (Mooncake: one hash per 512-token block standing for the
// whole prefix): the j-th engine block ending in trace block i (its last
// token in it) is HashCombine(trace_hash_i, j). When the engine's block
// size divides the trace's that is engine block j of trace block i. Full
// engine blocks only.
// The hashes may leave out a partial last trace block (a tool that hashes
// full blocks only): the engine blocks ending in it are the run
// (HashCombine(HashCombine(the hash before it, or kChainSeed,
// kUnhashedTailTag), tail_key), 0, count), the prompt's own content when
// tail_key is (Request::ExplicitTailKey).
// Error when a size is not positive or hashes are fewer than
// floor(prompt_tokens / trace_block_size).
Result<std::vector<std::uint64_t>> BlockHashesFromTrace(std::span<const std::uint64_t> trace_hashes,
                                                        Tokens trace_block_size,
                                                        Tokens prompt_tokens, Tokens block_size,
                                                        std::uint64_t tail_key = 0);

}  // namespace kvbill

#endif  // KVBILL_CACHE_BLOCK_HASH_H_
