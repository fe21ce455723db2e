#include "kvbill/cache/block_hash.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace kvbill {
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
  // (trace_hashes[k / 2], k % 2). 20 tokens = 5 full engine blocks and needs
  // ceil(20 / 8) = 3 trace hashes.
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

TEST(BlockHashTest, FromTraceRejectsSizesThatDoNotDivide) {
  const Hashes trace = {1, 2};
  auto hashes = BlockHashesFromTrace(trace, 500, 600, 16);
  ASSERT_FALSE(hashes.ok());
  EXPECT_EQ(hashes.error().message(), "block size 16 does not divide trace block size 500");
  EXPECT_EQ(BlockHashesFromTrace(trace, 512, 600, 0).error().message(),
            "block size must be positive, got 0");
  EXPECT_EQ(BlockHashesFromTrace(trace, 0, 600, 16).error().message(),
            "trace block size must be positive, got 0");
  EXPECT_EQ(BlockHashesFromTrace(trace, 512, -1, 16).error().message(),
            "prompt tokens must be non-negative, got -1");
}

TEST(BlockHashTest, FromTraceRejectsTooFewHashes) {
  // 1025 tokens in 512-token trace blocks need ceil(1025 / 512) = 3 hashes.
  const Hashes trace = {1, 2};
  auto hashes = BlockHashesFromTrace(trace, 512, 1025, 16);
  ASSERT_FALSE(hashes.ok());
  EXPECT_EQ(hashes.error().message(), "a prompt of 1025 tokens needs 3 trace block hashes, got 2");
}

}  // namespace
}  // namespace kvbill
