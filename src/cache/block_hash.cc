#include "kvbill/cache/block_hash.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace kvbill {
namespace {

constexpr std::uint64_t kGolden = 0x9e37'79b9'7f4a'7c15ULL;
constexpr std::uint64_t kFnvOffset = 0xcbf2'9ce4'8422'2325ULL;
constexpr std::uint64_t kFnvPrime = 0x0000'0100'0000'01b3ULL;

// splitmix64's finalizer: a bijection of 64-bit words with full avalanche.
constexpr std::uint64_t Mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58'476d'1ce4'e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d0'49bb'1331'11ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t HashString(std::string_view text) {
  std::uint64_t h = kFnvOffset;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return Mix64(h);
}

std::uint64_t HashCombine(std::uint64_t a, std::uint64_t b) {
  return Mix64(a ^ (Mix64(b) + kGolden));
}

BlockHasher::BlockHasher(Tokens block_size) : block_size_(block_size), running_(kChainSeed) {
  assert(block_size >= 1);
}

void BlockHasher::FoldPending() {
  if (pending_.tokens == 0) return;
  running_ = HashCombine(running_, pending_.identity);
  running_ = HashCombine(running_, static_cast<std::uint64_t>(pending_.offset));
  running_ = HashCombine(running_, static_cast<std::uint64_t>(pending_.tokens));
  pending_ = ContentPiece{};
}

void BlockHasher::Append(const ContentPiece& piece) {
  assert(piece.offset >= 0 && piece.tokens >= 0);
  if (piece.tokens <= 0) return;
  tokens_ += piece.tokens;
  Tokens offset = piece.offset;
  Tokens remaining = piece.tokens;
  while (remaining > 0) {
    const bool continues = pending_.tokens > 0 && pending_.identity == piece.identity &&
                           pending_.offset + pending_.tokens == offset;
    if (!continues) {
      FoldPending();
      pending_ = ContentPiece{piece.identity, offset, 0};
    }
    const Tokens take = std::min(remaining, block_size_ - filled_);
    pending_.tokens += take;
    filled_ += take;
    offset += take;
    remaining -= take;
    if (filled_ == block_size_) {
      FoldPending();
      hashes_.push_back(running_);
      filled_ = 0;
    }
  }
}

void BlockHasher::Append(std::span<const ContentPiece> pieces) {
  for (const ContentPiece& piece : pieces) Append(piece);
}

std::vector<std::uint64_t> BlockHashesOf(std::span<const ContentPiece> pieces, Tokens block_size) {
  BlockHasher hasher(block_size);
  hasher.Append(pieces);
  return hasher.full_blocks();
}

namespace {

// The checks BlockHashesFromTrace and BlockRunsFromTrace share.
Status CheckTraceBlocks(std::span<const std::uint64_t> trace_hashes, Tokens trace_block_size,
                        Tokens prompt_tokens, Tokens block_size) {
  if (block_size < 1)
    return Error("block size must be positive, got " + std::to_string(block_size));
  if (trace_block_size < 1) {
    return Error("trace block size must be positive, got " + std::to_string(trace_block_size));
  }
  if (prompt_tokens < 0) {
    return Error("prompt tokens must be non-negative, got " + std::to_string(prompt_tokens));
  }
  const Tokens needed = prompt_tokens / trace_block_size;
  if (static_cast<Tokens>(trace_hashes.size()) < needed) {
    return Error("a prompt of " + std::to_string(prompt_tokens) + " tokens needs " +
                 std::to_string(needed) + " trace block hashes, got " +
                 std::to_string(trace_hashes.size()));
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<std::uint64_t>> BlockHashesFromTrace(std::span<const std::uint64_t> trace_hashes,
                                                        Tokens trace_block_size,
                                                        Tokens prompt_tokens, Tokens block_size,
                                                        std::uint64_t tail_key) {
  std::vector<BlockRun> runs;
  std::vector<std::int64_t> ends;
  if (auto s = BlockRunsFromTrace(trace_hashes, trace_block_size, prompt_tokens, block_size,
                                  tail_key, &runs, &ends);
      !s) {
    return s.error();
  }
  std::vector<std::uint64_t> hashes;
  hashes.reserve(static_cast<std::size_t>(prompt_tokens / block_size));
  for (const BlockRun& run : runs) {
    for (std::int64_t j = 0; j < run.count; ++j)
      hashes.push_back(HashCombine(run.key, run.first + j));
  }
  return hashes;
}

std::uint64_t BlockRunHash(std::uint64_t key, std::int64_t index) {
  return HashCombine(key, static_cast<std::uint64_t>(index));
}

void BlockRunList::Slice(std::int64_t from, std::int64_t to, std::vector<BlockRun>* out) const {
  from = std::max<std::int64_t>(from, 0);
  to = std::min(to, blocks());
  if (from >= to) return;
  // The first run ending after `from`.
  std::size_t i =
      static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), from) - ends.begin());
  for (; i < runs.size(); ++i) {
    const std::int64_t end = ends[i];
    const std::int64_t start = end - runs[i].count;
    const std::int64_t lo = std::max(start, from);
    const std::int64_t hi = std::min(end, to);
    if (lo >= hi) break;
    out->push_back(BlockRun{runs[i].key, runs[i].first + (lo - start), hi - lo});
    if (hi == to) break;
  }
}

RunHasher::RunHasher(Tokens block_size) : block_size_(block_size), chain_(kChainSeed) {
  assert(block_size >= 1);
}

void RunHasher::PushRun(std::uint64_t key) {
  runs_.push_back(BlockRun{key, 0, 1});
  ends_.push_back(blocks() + 1);
}

void RunHasher::CloseRun() {
  if (!run_open_) return;
  chain_ = HashCombine(runs_.back().key, static_cast<std::uint64_t>(runs_.back().count));
  run_open_ = false;
}

void RunHasher::CloseBlock() {
  if (closed_.empty()) {
    // Uniform: one segment of block_size tokens.
    const bool continues =
        run_open_ && run_.identity == open_.identity && run_.offset + run_.tokens == open_.offset;
    if (continues) {
      ++runs_.back().count;
      ++ends_.back();
      run_.tokens += block_size_;
    } else {
      CloseRun();
      std::uint64_t key = HashCombine(chain_, kUniformRunTag);
      key = HashCombine(key, open_.identity);
      key = HashCombine(key, static_cast<std::uint64_t>(open_.offset));
      PushRun(key);
      run_open_ = true;
      run_ = ContentPiece{open_.identity, open_.offset, block_size_};
    }
  } else {
    CloseRun();
    std::uint64_t key = HashCombine(chain_, kMixedBlockTag);
    closed_.push_back(open_);
    for (const ContentPiece& s : closed_) {
      key = HashCombine(key, s.identity);
      key = HashCombine(key, static_cast<std::uint64_t>(s.offset));
      key = HashCombine(key, static_cast<std::uint64_t>(s.tokens));
    }
    PushRun(key);
    chain_ = key;
    closed_.clear();
  }
  open_ = ContentPiece{};
  filled_ = 0;
}

void RunHasher::Append(const ContentPiece& piece) {
  assert(piece.offset >= 0 && piece.tokens >= 0);
  if (piece.tokens <= 0) return;
  tokens_ += piece.tokens;
  Tokens offset = piece.offset;
  Tokens remaining = piece.tokens;
  while (remaining > 0) {
    const bool continues = open_.tokens > 0 && open_.identity == piece.identity &&
                           open_.offset + open_.tokens == offset;
    if (!continues) {
      if (open_.tokens > 0) closed_.push_back(open_);
      open_ = ContentPiece{piece.identity, offset, 0};
    }
    const Tokens take = std::min(remaining, block_size_ - filled_);
    open_.tokens += take;
    filled_ += take;
    offset += take;
    remaining -= take;
    if (filled_ < block_size_) continue;
    CloseBlock();
    if (run_open_ && remaining >= block_size_ && run_.identity == piece.identity &&
        run_.offset + run_.tokens == offset) {
      // Whole blocks of the open run's piece follow: each would extend the
      // run by one block, so extend it by all of them at once.
      const Tokens more = remaining / block_size_;
      runs_.back().count += more;
      ends_.back() += more;
      run_.tokens += more * block_size_;
      offset += more * block_size_;
      remaining -= more * block_size_;
    }
  }
}

void RunHasher::Append(std::span<const ContentPiece> pieces) {
  for (const ContentPiece& piece : pieces) Append(piece);
}

std::vector<BlockRun> BlockRunsOf(std::span<const ContentPiece> pieces, Tokens block_size) {
  RunHasher hasher(block_size);
  hasher.Append(pieces);
  return hasher.runs();
}

Status BlockRunsFromTrace(std::span<const std::uint64_t> trace_hashes, Tokens trace_block_size,
                          Tokens prompt_tokens, Tokens block_size, std::uint64_t tail_key,
                          std::vector<BlockRun>* runs, std::vector<std::int64_t>* ends) {
  runs->clear();
  ends->clear();
  if (auto s = CheckTraceBlocks(trace_hashes, trace_block_size, prompt_tokens, block_size); !s) {
    return s;
  }
  // Engine block k holds tokens [kB, (k + 1)B); its last token lies in trace
  // block i = ((k + 1)B - 1) / T, whose hash stands for the whole prefix up
  // to (i + 1)T. The engine blocks ending in trace block i are the run
  // (trace_hashes[i], 0, count): equal names exactly when the trace hashes
  // (so the prefixes through their trace blocks) are equal. When B divides T
  // that is T / B blocks a trace block; when T divides B, one block every
  // B / T trace blocks; otherwise some of each (a block ending within a
  // trace block is known equal only with that whole trace block).
  const Tokens full_blocks = prompt_tokens / block_size;
  for (Tokens k = 0; k < full_blocks;) {
    const Tokens i = ((k + 1) * block_size - 1) / trace_block_size;
    // The last engine block ending in trace block i.
    const Tokens last = std::min(full_blocks, ((i + 1) * trace_block_size) / block_size);
    const Tokens count = std::max<Tokens>(1, last - k);
    // Past the hashes (a partial last trace block left unhashed): the
    // prompt's own tokens after the hashed prefix.
    const std::uint64_t key =
        i < static_cast<Tokens>(trace_hashes.size())
            ? trace_hashes[static_cast<std::size_t>(i)]
            : HashCombine(
                  HashCombine(i > 0 ? trace_hashes[static_cast<std::size_t>(i - 1)] : kChainSeed,
                              kUnhashedTailTag),
                  tail_key);
    runs->push_back(BlockRun{key, 0, count});
    ends->push_back(k + count);
    k += count;
  }
  return OkStatus();
}

}  // namespace kvbill
