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

// Engine block hashes for a prompt of `prompt_tokens` published only as
// trace block hashes (Mooncake: one hash per 512-token block standing for the
// whole prefix). The engine's block size must divide the trace's; engine
// block j of trace block i is HashCombine(trace_hash_i, j). Full engine
// blocks only.
// Error when the sizes do not divide or hashes are fewer than
// ceil(prompt_tokens / trace_block_size).
Result<std::vector<std::uint64_t>> BlockHashesFromTrace(std::span<const std::uint64_t> trace_hashes,
                                                        Tokens trace_block_size,
                                                        Tokens prompt_tokens, Tokens block_size);

}  // namespace kvbill

#endif  // KVBILL_CACHE_BLOCK_HASH_H_
