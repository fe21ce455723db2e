#include "kvbill/cache/block_hash.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using Hashes = std::vector<std::uint64_t>;

// The literal values below were computed with an independent script that
// follows the algorithm written in block_hash.h (splitmix64 finalizer,
// HashCombine(a, b) = Mix64(a ^ (Mix64(b) + golden)), FNV-1a 64 + Mix64).
TEST(BlockHashTest, HashStringIsFnv1aThenMix64) {
  // FNV-1a("") is the offset basis 0xcbf29ce484222325; FNV-1a("a") is
  // 0xaf63dc4c8601ec8c; both are then put through Mix64.
  EXPECT_EQ(HashString(""), 0xf52a15e9a9b5e89bULL);
  EXPECT_EQ(HashString("a"), 0x02c0bdbf481420f8ULL);
  EXPECT_EQ(HashString("system-prompt"), 0xa785079fab4c4eeeULL);
}

TEST(BlockHashTest, HashCombineIsFixedAndOrderSensitive) {
  EXPECT_EQ(HashCombine(0, 0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(HashCombine(1, 2), 0x74460ffc71dbfb62ULL);
  EXPECT_EQ(HashCombine(2, 1), 0xf36f78ee23d3031cULL);
}

TEST(BlockHashTest, BlockHashesArePinnedToTheDocumentedChain) {
  // One piece (identity 7, offset 0, 8 tokens), block size 4:
  //   h0 = fold(kChainSeed, run (7, 0, 4)), h1 = fold(h0, run (7, 4, 4)).
  const std::vector<ContentPiece> pieces = {{7, 0, 8}};
  EXPECT_EQ(BlockHashesOf(pieces, 4), (Hashes{0xdb9c10a35b3741c1ULL, 0x58a520be7741d0a1ULL}));
  // A block of two runs: fold(fold(kChainSeed, (7, 0, 2)), (9, 5, 2)).
  const std::vector<ContentPiece> two_runs = {{7, 0, 2}, {9, 5, 2}};
  EXPECT_EQ(BlockHashesOf(two_runs, 4), (Hashes{0x54f38863dc424505ULL}));
}

TEST(BlockHashTest, EqualPrefixesGiveEqualHashes) {
  const std::vector<ContentPiece> a = {{1, 0, 40}, {2, 0, 30}, {3, 0, 10}};
  const std::vector<ContentPiece> b = {{1, 0, 40}, {2, 0, 30}, {4, 0, 50}};
  const Hashes ha = BlockHashesOf(a, 16);  // 80 tokens: 5 blocks
  const Hashes hb = BlockHashesOf(b, 16);  // 120 tokens: 7 blocks
  ASSERT_EQ(ha.size(), 5u);
  ASSERT_EQ(hb.size(), 7u);
  // Tokens 0..69 agree; block 4 (tokens 64..79) is the first to differ.
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(ha[i], hb[i]) << "block " << i;
  EXPECT_NE(ha[4], hb[4]);
}

TEST(BlockHashTest, DifferentPieceInBlockTwoChangesHashesFromBlockTwoOn) {
  // Block size 10, five 10-token pieces; only the third (block 2) differs.
  const std::vector<ContentPiece> a = {{1, 0, 10}, {2, 0, 10}, {3, 0, 10}, {4, 0, 10}, {5, 0, 10}};
  std::vector<ContentPiece> b = a;
  b[2] = {33, 0, 10};
  const Hashes ha = BlockHashesOf(a, 10);
  const Hashes hb = BlockHashesOf(b, 10);
  ASSERT_EQ(ha.size(), 5u);
  ASSERT_EQ(hb.size(), 5u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_EQ(ha[1], hb[1]);
  for (std::size_t i = 2; i < 5; ++i) EXPECT_NE(ha[i], hb[i]) << "block " << i;
}

TEST(BlockHashTest, SameContentAtAnotherOffsetIsDifferent) {
  const std::vector<ContentPiece> a = {{1, 0, 16}};
  const std::vector<ContentPiece> b = {{1, 16, 16}};
  EXPECT_NE(BlockHashesOf(a, 16), BlockHashesOf(b, 16));
}

TEST(BlockHashTest, SplittingAPieceDoesNotChangeHashes) {
  const std::vector<ContentPiece> whole = {{5, 100, 64}, {6, 0, 16}};
  // The same tokens as three adjacent pieces of identity 5 (offsets 100, 103,
  // 140) plus zero-token pieces, which carry no tokens and are ignored.
  const std::vector<ContentPiece> split = {{5, 100, 3},  {9, 0, 0}, {5, 103, 37},
                                           {5, 140, 24}, {6, 0, 0}, {6, 0, 16}};
  EXPECT_EQ(BlockHashesOf(whole, 16), BlockHashesOf(split, 16));
  EXPECT_EQ(BlockHashesOf(whole, 7), BlockHashesOf(split, 7));
}

TEST(BlockHashTest, AppendingPieceByPieceEqualsHashingAllAtOnce) {
  const std::vector<ContentPiece> pieces = {{1, 0, 5}, {2, 0, 20}, {2, 20, 3}, {3, 7, 12}};
  BlockHasher hasher(8);
  for (const ContentPiece& piece : pieces) hasher.Append(piece);
  EXPECT_EQ(hasher.full_blocks(), BlockHashesOf(pieces, 8));
  EXPECT_EQ(hasher.tokens(), 40);
  EXPECT_EQ(hasher.block_size(), 8);
  EXPECT_EQ(hasher.full_blocks().size(), 5u);  // 40 / 8
}

TEST(BlockHashTest, PartialLastBlockHasNoHash) {
  const std::vector<ContentPiece> pieces = {{1, 0, 31}};
  EXPECT_EQ(BlockHashesOf(pieces, 16).size(), 1u);  // 31 tokens: one full block
  BlockHasher hasher(16);
  hasher.Append(pieces);
  EXPECT_EQ(hasher.full_blocks().size(), 1u);
  hasher.Append(ContentPiece{1, 31, 1});  // completes block 1
  ASSERT_EQ(hasher.full_blocks().size(), 2u);
  const std::vector<ContentPiece> whole = {{1, 0, 32}};
  EXPECT_EQ(hasher.full_blocks(), BlockHashesOf(whole, 16));
  EXPECT_TRUE(BlockHashesOf(std::vector<ContentPiece>{{1, 0, 15}}, 16).empty());
}

TEST(BlockHashTest, HashesAreDeterministicAndDistinct) {
  std::vector<ContentPiece> pieces;
  for (std::uint64_t i = 0; i < 50; ++i) pieces.push_back({HashString("span") + i, 0, 100});
  const Hashes first = BlockHashesOf(pieces, 16);
  EXPECT_EQ(first, BlockHashesOf(pieces, 16));
  ASSERT_EQ(first.size(), 312u);  // 5000 / 16 = 312.5
  const std::set<std::uint64_t> distinct(first.begin(), first.end());
  EXPECT_EQ(distinct.size(), first.size());
}

TEST(BlockHashTest, FromTraceSplitsEachTraceBlockIntoEngineBlocks) {
  // Trace blocks of 8 tokens, engine blocks of 4: engine block k hashes
  // (trace_hashes[k / 2], k % 2). 20 tokens = 5 full engine blocks, the
  // last in trace block 2 (tokens 16-23, hashed here).
  const Hashes trace = {100, 200, 300};
  auto hashes = BlockHashesFromTrace(trace, 8, 20, 4);
  ASSERT_TRUE(hashes.ok()) << hashes.error().message();
  EXPECT_EQ(*hashes, (Hashes{HashCombine(100, 0), HashCombine(100, 1), HashCombine(200, 0),
                             HashCombine(200, 1), HashCombine(300, 0)}));
  EXPECT_EQ((*hashes)[0], 0x9d589011dcd0f76fULL);
  EXPECT_EQ((*hashes)[1], 0x9a7f7590b9796b18ULL);
}

TEST(BlockHashTest, FromTraceSharesPrefixesThatShareTraceHashes) {
  const Hashes a = {1, 2, 3};
  const Hashes b = {1, 2, 4};
  auto ha = BlockHashesFromTrace(a, 512, 1536, 16);
  auto hb = BlockHashesFromTrace(b, 512, 1536, 16);
  ASSERT_TRUE(ha.ok() && hb.ok());
  ASSERT_EQ(ha->size(), 96u);  // 1536 / 16
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ((*ha)[i], (*hb)[i]);
  for (std::size_t i = 64; i < 96; ++i) EXPECT_NE((*ha)[i], (*hb)[i]);
}

TEST(BlockHashTest, FromTraceAcceptsExtraHashesAndEmptyPrompts) {
  const Hashes trace = {1, 2, 3};
  auto hashes = BlockHashesFromTrace(trace, 16, 20, 16);  // 1 full block
  ASSERT_TRUE(hashes.ok());
  EXPECT_EQ(*hashes, (Hashes{HashCombine(1, 0)}));
  auto empty = BlockHashesFromTrace({}, 16, 0, 16);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

// An engine block is named by the trace block its last token lies in: that
// trace hash stands for the whole prefix through it. Trace blocks of 500
// tokens, engine blocks of 16, a 600-token prompt: 37 full blocks; blocks
// 0..30 end by token 496 <= 500 (trace block 0), blocks 31..36 (ending at
// 512 ... 592) in trace block 1. It once refused sizes that do not divide,
// and the engine then named such prompts from their (unshared) pieces: a
// Mooncake trace at block size 384 or 1024 hit 0%.
TEST(BlockHashTest, FromTraceNamesBlocksByTheTraceBlockTheyEndIn) {
  const Hashes trace = {1, 2};
  auto hashes = BlockHashesFromTrace(trace, 500, 600, 16);
  ASSERT_TRUE(hashes.ok()) << hashes.error().message();
  Hashes want;
  for (int j = 0; j < 31; ++j) want.push_back(HashCombine(1, j));
  for (int j = 0; j < 6; ++j) want.push_back(HashCombine(2, j));
  EXPECT_EQ(*hashes, want);
  // Engine blocks of 12 over trace blocks of 8, 40 tokens: block 0 (tokens
  // 0-11) ends in trace block 1, block 1 (12-23) in block 2, block 2
  // (24-35) in block 4; ceil(40 / 8) = 5 hashes needed.
  const Hashes five = {10, 11, 12, 13, 14};
  auto wide = BlockHashesFromTrace(five, 8, 40, 12);
  ASSERT_TRUE(wide.ok()) << wide.error().message();
  EXPECT_EQ(*wide, (Hashes{HashCombine(11, 0), HashCombine(12, 0), HashCombine(14, 0)}));
  // 1,024-token blocks over Mooncake's 512: one block every two trace
  // blocks, shared exactly when the second trace hash is.
  const Hashes a = {1, 2, 3, 4};
  const Hashes b = {1, 2, 3, 5};
  auto ha = BlockHashesFromTrace(a, 512, 2048, 1024);
  auto hb = BlockHashesFromTrace(b, 512, 2048, 1024);
  ASSERT_TRUE(ha.ok() && hb.ok());
  EXPECT_EQ(*ha, (Hashes{HashCombine(2, 0), HashCombine(4, 0)}));
  EXPECT_EQ((*ha)[0], (*hb)[0]);
  EXPECT_NE((*ha)[1], (*hb)[1]);
}

TEST(BlockHashTest, FromTraceRejectsBadSizes) {
  const Hashes trace = {1, 2};
  EXPECT_EQ(BlockHashesFromTrace(trace, 512, 600, 0).error().message(),
            "block size must be positive, got 0");
  EXPECT_EQ(BlockHashesFromTrace(trace, 0, 600, 16).error().message(),
            "trace block size must be positive, got 0");
  EXPECT_EQ(BlockHashesFromTrace(trace, 512, -1, 16).error().message(),
            "prompt tokens must be non-negative, got -1");
}

TEST(BlockHashTest, FromTraceRejectsTooFewHashes) {
  // 1,536 tokens in 512-token trace blocks are 3 full trace blocks: 3
  // hashes at least (a partial last block may go without).
  const Hashes trace = {1, 2};
  auto hashes = BlockHashesFromTrace(trace, 512, 1536, 16);
  ASSERT_FALSE(hashes.ok());
  EXPECT_EQ(hashes.error().message(), "a prompt of 1536 tokens needs 3 trace block hashes, got 2");
}

// A trace that hashes full blocks only: 1,100 tokens over 512-token trace
// blocks with 2 hashes. Engine blocks of 16: 68 full ones; blocks 0..31 end
// in trace block 0, 32..63 in block 1, and 64..67 (tokens 1,024..1,087) in
// the unhashed third: named after the hash before them and the prompt's own
// tail key, so two prompts sharing both hashes share 64 blocks and not the
// last 4 (they once fell back to the prompt's pieces and shared none).
TEST(BlockHashTest, FromTraceNamesAnUnhashedPartialBlockByThePromptsTail) {
  const Hashes trace = {1, 2};
  auto a = BlockHashesFromTrace(trace, 512, 1100, 16, /*tail_key=*/7);
  auto b = BlockHashesFromTrace(trace, 512, 1100, 16, /*tail_key=*/8);
  ASSERT_TRUE(a.ok() && b.ok()) << a.error().message();
  ASSERT_EQ(a->size(), 68u);
  const std::uint64_t tail = HashCombine(HashCombine(2, kUnhashedTailTag), 7);
  for (int j = 0; j < 4; ++j)
    EXPECT_EQ((*a)[static_cast<std::size_t>(64 + j)], HashCombine(tail, j));
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ((*a)[i], (*b)[i]) << i;
  for (std::size_t i = 64; i < 68; ++i) EXPECT_NE((*a)[i], (*b)[i]) << i;
  // A prompt shorter than one trace block, with no hash: all its own.
  auto alone = BlockHashesFromTrace({}, 512, 40, 16, 7);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ((*alone)[0], HashCombine(HashCombine(HashCombine(kChainSeed, kUnhashedTailTag), 7), 0));
}

// --- runs -------------------------------------------------------------------

using Runs = std::vector<BlockRun>;

// The key of a uniform run starting after chain value `chain` with a piece
// of `identity` at `offset`, by the rule in block_hash.h.
std::uint64_t UniformKey(std::uint64_t chain, std::uint64_t identity, Tokens offset) {
  return HashCombine(HashCombine(HashCombine(chain, kUniformRunTag), identity),
                     static_cast<std::uint64_t>(offset));
}

TEST(RunHasherTest, OnePieceIsOneRunOfItsFullBlocks) {
  // 40 tokens of identity 7 in blocks of 16: blocks 0 and 1 lie in the piece
  // (tokens 0..31); tokens 32..39 are a partial block with no name.
  EXPECT_EQ(BlockRunsOf(std::vector<ContentPiece>{{7, 0, 40}}, 16),
            (Runs{{UniformKey(kChainSeed, 7, 0), 0, 2}}));
  EXPECT_TRUE(BlockRunsOf(std::vector<ContentPiece>{{7, 0, 15}}, 16).empty());
}

TEST(RunHasherTest, AMixedBlockIsARunOfOneAndChainsWhatFollows) {
  // Pieces (7, 0, 20) and (9, 0, 40), blocks of 16, 60 tokens:
  //   block 0: tokens 0..15 of 7, uniform: run K0 = uniform(seed, 7, 0), 1 block;
  //   block 1: 7 at 16..19 and 9 at 0..11, mixed: the chain after run K0 is
  //            HashCombine(K0, 1), and the block's key folds its two runs;
  //   block 2: 9 at 12..27, uniform: a run keyed after the mixed block;
  //   tokens 48..59: partial.
  const std::uint64_t k0 = UniformKey(kChainSeed, 7, 0);
  std::uint64_t mixed = HashCombine(HashCombine(k0, 1), kMixedBlockTag);
  for (const ContentPiece& run : {ContentPiece{7, 16, 4}, ContentPiece{9, 0, 12}}) {
    mixed = HashCombine(mixed, run.identity);
    mixed = HashCombine(mixed, static_cast<std::uint64_t>(run.offset));
    mixed = HashCombine(mixed, static_cast<std::uint64_t>(run.tokens));
  }
  const std::vector<ContentPiece> pieces = {{7, 0, 20}, {9, 0, 40}};
  EXPECT_EQ(BlockRunsOf(pieces, 16),
            (Runs{{k0, 0, 1}, {mixed, 0, 1}, {UniformKey(mixed, 9, 12), 0, 1}}));
}

TEST(RunHasherTest, APieceEndingOnABlockEdgeStartsANewRun) {
  // (7, 0, 32) then (9, 0, 32): two runs of two blocks; the second keyed
  // after HashCombine(first key, 2).
  const std::uint64_t k0 = UniformKey(kChainSeed, 7, 0);
  const std::vector<ContentPiece> pieces = {{7, 0, 32}, {9, 0, 32}};
  RunHasher hasher(16);
  hasher.Append(pieces);
  EXPECT_EQ(hasher.runs(), (Runs{{k0, 0, 2}, {UniformKey(HashCombine(k0, 2), 9, 0), 0, 2}}));
  EXPECT_EQ(hasher.ends(), (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(hasher.blocks(), 4);
  EXPECT_EQ(hasher.tokens(), 64);
}

TEST(RunHasherTest, AdjacentPiecesOfOneContentAreOneRun) {
  // The same tokens as one piece, as three pieces cut inside blocks and on
  // an edge, and with empty pieces between: the same runs.
  const std::vector<ContentPiece> whole = {{5, 100, 64}, {6, 0, 16}};
  const std::vector<ContentPiece> split = {{5, 100, 3},  {9, 0, 0}, {5, 103, 29},
                                           {5, 132, 32}, {6, 0, 0}, {6, 0, 16}};
  EXPECT_EQ(BlockRunsOf(whole, 16), BlockRunsOf(split, 16));
  EXPECT_EQ(BlockRunsOf(whole, 16).size(), 2u);  // 4 blocks of 5, 1 of 6
  EXPECT_EQ(BlockRunsOf(whole, 7), BlockRunsOf(split, 7));
}

TEST(RunHasherTest, AMillionTokenPieceIsOneRun) {
  RunHasher hasher(16);
  hasher.Append(ContentPiece{3, 0, 1 << 20});
  ASSERT_EQ(hasher.runs().size(), 1u);
  EXPECT_EQ(hasher.runs()[0].count, (1 << 20) / 16);
}

TEST(RunHasherTest, SliceCutsRunsAtBlockPositions) {
  const std::vector<ContentPiece> pieces = {{7, 0, 32}, {9, 0, 48}};  // runs of 2 and 3 blocks
  RunHasher hasher(16);
  hasher.Append(pieces);
  const Runs& r = hasher.runs();
  Runs out;
  hasher.list().Slice(1, 4, &out);
  EXPECT_EQ(out, (Runs{{r[0].key, 1, 1}, {r[1].key, 0, 2}}));
  out.clear();
  hasher.list().Slice(3, 100, &out);
  EXPECT_EQ(out, (Runs{{r[1].key, 1, 2}}));
  out.clear();
  hasher.list().Slice(-5, 0, &out);
  EXPECT_TRUE(out.empty());
}

// Random prompts that share prefixes and cut content at odd places: each is
// a walk of up to 8 pieces drawn from few identities, offsets that often
// continue the previous piece, and lengths from 1 to 70 tokens.
std::vector<std::vector<ContentPiece>> RandomPrompts(std::uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<ContentPiece>> prompts;
  for (int p = 0; p < count; ++p) {
    std::vector<ContentPiece> pieces;
    if (!prompts.empty() && rng() % 2 == 0) {  // start from an earlier prompt's prefix
      const auto& earlier = prompts[rng() % prompts.size()];
      pieces.assign(earlier.begin(),
                    earlier.begin() + static_cast<std::ptrdiff_t>(rng() % (earlier.size() + 1)));
    }
    for (int n = static_cast<int>(rng() % 6); n > 0; --n) {
      ContentPiece piece{rng() % 3, static_cast<Tokens>(rng() % 3) * 8,
                         1 + static_cast<Tokens>(rng() % 70)};
      if (!pieces.empty() && rng() % 2 == 0) {  // continue the previous piece
        piece.identity = pieces.back().identity;
        piece.offset = pieces.back().offset + pieces.back().tokens;
      }
      pieces.push_back(piece);
    }
    prompts.push_back(pieces);
  }
  return prompts;
}

// Two blocks anywhere in any of the prompts get equal names from RunHasher
// exactly when BlockHasher gives them equal hashes (equal prefixes), at
// several block sizes; and appending piece by piece, or continuing a copy of
// the hasher, gives the runs of hashing all at once.
TEST(RunHasherTest, NamesBlocksEqualExactlyWhenBlockHashesAreEqual) {
  const auto prompts = RandomPrompts(17, 400);
  for (const Tokens bs : {Tokens{1}, Tokens{3}, Tokens{8}, Tokens{16}}) {
    SCOPED_TRACE("block size " + std::to_string(bs));
    std::map<std::uint64_t, std::set<std::pair<std::uint64_t, std::int64_t>>> names_of_hash;
    std::map<std::pair<std::uint64_t, std::int64_t>, std::set<std::uint64_t>> hashes_of_name;
    std::int64_t blocks = 0;
    for (const auto& pieces : prompts) {
      const Hashes hashes = BlockHashesOf(pieces, bs);
      const Runs runs = BlockRunsOf(pieces, bs);
      std::vector<std::pair<std::uint64_t, std::int64_t>> names;
      for (const BlockRun& r : runs) {
        ASSERT_GE(r.count, 1);
        for (std::int64_t i = 0; i < r.count; ++i) names.emplace_back(r.key, r.first + i);
      }
      ASSERT_EQ(names.size(), hashes.size());
      for (std::size_t i = 0; i < names.size(); ++i) {
        names_of_hash[hashes[i]].insert(names[i]);
        hashes_of_name[names[i]].insert(hashes[i]);
      }
      blocks += static_cast<std::int64_t>(names.size());
      // Piece by piece, with a copy taken half way continuing alone.
      RunHasher hasher(bs);
      for (std::size_t i = 0; i < pieces.size() / 2; ++i) hasher.Append(pieces[i]);
      RunHasher copy = hasher;
      for (std::size_t i = pieces.size() / 2; i < pieces.size(); ++i) copy.Append(pieces[i]);
      ASSERT_EQ(copy.runs(), runs);
      ASSERT_EQ(copy.blocks(), static_cast<std::int64_t>(hashes.size()));
    }
    for (const auto& [hash, names] : names_of_hash) ASSERT_EQ(names.size(), 1u);
    for (const auto& [name, hashes] : hashes_of_name) ASSERT_EQ(hashes.size(), 1u);
    // The prompts did share blocks, and did differ.
    EXPECT_LT(names_of_hash.size() * 4, static_cast<std::size_t>(blocks) * 3);
    EXPECT_GT(names_of_hash.size(), 100u);
  }
}

TEST(RunHasherTest, TraceBlocksAreRunsWhoseBlockHashesAreTheEngineHashes) {
  // Trace blocks of 8 tokens, engine blocks of 4, 20 tokens: 5 full engine
  // blocks, runs (100, 0, 2), (200, 0, 2), (300, 0, 1).
  const Hashes trace = {100, 200, 300};
  Runs runs;
  std::vector<std::int64_t> ends;
  ASSERT_TRUE(BlockRunsFromTrace(trace, 8, 20, 4, 0, &runs, &ends).ok());
  EXPECT_EQ(runs, (Runs{{100, 0, 2}, {200, 0, 2}, {300, 0, 1}}));
  EXPECT_EQ(ends, (std::vector<std::int64_t>{2, 4, 5}));
  auto hashes = BlockHashesFromTrace(trace, 8, 20, 4);
  ASSERT_TRUE(hashes.ok());
  Hashes from_runs;
  for (const BlockRun& r : runs) {
    for (std::int64_t i = 0; i < r.count; ++i)
      from_runs.push_back(BlockRunHash(r.key, r.first + i));
  }
  EXPECT_EQ(from_runs, *hashes);
  // Sizes that do not divide: the engine blocks ending in each trace block
  // (FromTraceNamesBlocksByTheTraceBlockTheyEndIn): 31 in the first 500
  // tokens, 6 more in the next.
  ASSERT_TRUE(BlockRunsFromTrace(Hashes{1, 2}, 500, 600, 16, 0, &runs, &ends).ok());
  EXPECT_EQ(runs, (Runs{{1, 0, 31}, {2, 0, 6}}));
  EXPECT_EQ(ends, (std::vector<std::int64_t>{31, 37}));
  // The same errors as BlockHashesFromTrace, leaving nothing behind.
  EXPECT_EQ(BlockRunsFromTrace(trace, 512, 600, 0, 0, &runs, &ends).error().message(),
            "block size must be positive, got 0");
  EXPECT_TRUE(runs.empty());
  EXPECT_TRUE(ends.empty());
  EXPECT_EQ(BlockRunsFromTrace(Hashes{1, 2}, 512, 1536, 16, 0, &runs, &ends).error().message(),
            "a prompt of 1536 tokens needs 3 trace block hashes, got 2");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
