// PrefixCache::ReleaseFront and CommitRange: what a windowed KV cache group
// (one sequence holding blocks [lo, hi)) uses to drop blocks leaving its
// window and to hash a chunk's blocks in one call.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kvbill/cache/prefix_cache.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using Hashes = std::vector<std::uint64_t>;

TEST(PrefixCacheWindowTest, ReleaseFrontCachesLeadingBlocksNewestFirst) {
  PrefixCache cache(6);
  cache.TrackEvictions(true);
  ASSERT_EQ(cache.Admit(1, Hashes{}, 5), 0);  // blocks at positions 0-4
  for (std::int64_t i = 0; i < 3; ++i) cache.Commit(1, i, static_cast<std::uint64_t>(10 + i));
  // Positions 0-3 leave: 3 (unhashed) becomes empty, then 2, 1, 0 (hashes
  // 12, 11, 10) are cached in that order, so 12 is the least recently
  // released and 10 the most. One block (position 4) stays held.
  cache.ReleaseFront(1, 4);
  EXPECT_EQ(cache.BlocksOf(1), 1);
  EXPECT_EQ(cache.free_blocks(), 5);  // 6 - 1 referenced
  EXPECT_EQ(cache.cached_blocks(), 3);
  EXPECT_EQ(cache.referenced_blocks(), 1);
  EXPECT_EQ(cache.LongestPrefix(Hashes{10, 11, 12}), 3);
  // The list is renumbered: old position 4 is index 0 now.
  cache.Commit(1, 0, 14);
  EXPECT_EQ(cache.LongestPrefix(Hashes{14}), 1);
  // Five fresh blocks: the empty one (old position 3), the one never used
  // (capacity 6, 5 used), then evictions in LRU order: 12, 11, 10.
  ASSERT_TRUE(cache.Grow(1, 5));
  EXPECT_EQ(cache.TakeEvictedHashes(), (Hashes{12, 11, 10}));
  EXPECT_EQ(cache.stats().evicted_blocks, 3);
  EXPECT_EQ(cache.BlocksOf(1), 6);
  EXPECT_EQ(cache.free_blocks(), 0);
}

TEST(PrefixCacheWindowTest, ReleaseFrontOrdersLikeReleasingOneSequencePerBlockNewestFirst) {
  // The windowed group before ReleaseFront: one sequence per block (ids
  // 100 + position), blocks leaving the window released newest first.
  // Both pools: 4 blocks, positions 0-2 hashed 20, 21, 22, then 0-1 leave,
  // then the rest is released (tail first), then 3 fresh blocks evict.
  // LRU after the window moves: 21, 20; after the release: 21, 20, 22.
  // Fresh blocks: the never-used 4th, then 21, 20 evicted.
  const Hashes expected_evictions = {21, 20};

  PrefixCache per_block(4);
  per_block.TrackEvictions(true);
  for (SeqId p = 0; p < 3; ++p) {
    ASSERT_EQ(per_block.Admit(100 + p, Hashes{}, 1), 0);
    per_block.Commit(100 + p, 0, static_cast<std::uint64_t>(20 + p));
  }
  per_block.Release(101);
  per_block.Release(100);
  per_block.Release(102);
  ASSERT_TRUE(per_block.Grow(7, 3));
  EXPECT_EQ(per_block.TakeEvictedHashes(), expected_evictions);

  PrefixCache windowed(4);
  windowed.TrackEvictions(true);
  ASSERT_EQ(windowed.Admit(1, Hashes{}, 3), 0);
  windowed.CommitRange(1, 0, Hashes{20, 21, 22});
  windowed.ReleaseFront(1, 2);
  EXPECT_EQ(windowed.BlocksOf(1), 1);
  windowed.Release(1);
  ASSERT_TRUE(windowed.Grow(7, 3));
  EXPECT_EQ(windowed.TakeEvictedHashes(), expected_evictions);
  EXPECT_EQ(windowed.LongestPrefix(Hashes{22}), 1);  // the most recent: still cached
  EXPECT_EQ(windowed.LongestPrefix(Hashes{20}), 0);  // evicted: its hash is gone
}

TEST(PrefixCacheWindowTest, ReleaseFrontOfEverythingKeepsTheSequenceHeld) {
  PrefixCache cache(4);
  ASSERT_EQ(cache.Admit(1, Hashes{}, 2), 0);
  cache.ReleaseFront(1, 0);   // no-op
  cache.ReleaseFront(1, -3);  // no-op
  cache.ReleaseFront(9, 1);   // unknown: no-op
  EXPECT_EQ(cache.BlocksOf(1), 2);
  cache.ReleaseFront(1, 5);  // more than held: both go (unhashed: empty)
  EXPECT_EQ(cache.BlocksOf(1), 0);
  EXPECT_EQ(cache.free_blocks(), 4);
  EXPECT_EQ(cache.cached_blocks(), 0);
  // Still held: a second Admit of id 1 is refused, Grow extends it.
  EXPECT_EQ(cache.Admit(1, Hashes{}, 1), std::nullopt);
  ASSERT_TRUE(cache.Grow(1, 1));
  EXPECT_EQ(cache.BlocksOf(1), 1);
  cache.Release(1);
  EXPECT_EQ(cache.free_blocks(), 4);
}

TEST(PrefixCacheWindowTest, ReleaseFrontOfAPinnedSequenceFreesOnlyThoseBlocks) {
  PrefixCache cache(4);
  ASSERT_EQ(cache.Admit(1, Hashes{}, 3), 0);
  cache.CommitRange(1, 0, Hashes{30, 31, 32});
  cache.ReleasePinned(1);
  cache.ReleaseFront(1, 1);  // block 30 cached; 31, 32 stay pinned
  EXPECT_EQ(cache.cached_blocks(), 1);
  EXPECT_EQ(cache.referenced_blocks(), 2);
  cache.Unpin(1);  // tail first: 32, then 31 cached after 30
  EXPECT_EQ(cache.cached_blocks(), 3);
  EXPECT_EQ(cache.BlocksOf(1), 0);
}

TEST(PrefixCacheWindowTest, CommitRangeCommitsTheBlocksInRangeFirstHashWinning) {
  PrefixCache cache(8);
  ASSERT_EQ(cache.Admit(1, Hashes{}, 3), 0);
  ASSERT_EQ(cache.Admit(2, Hashes{}, 2), 0);
  // Index 1 and 2 of sequence 1 get 41, 42; 43 falls past its 3 blocks.
  cache.CommitRange(1, 1, Hashes{41, 42, 43});
  // Starting at -1: the first hash has no block, index 0 gets 40.
  cache.CommitRange(1, -1, Hashes{99, 40});
  EXPECT_EQ(cache.LongestPrefix(Hashes{40, 41, 42}), 3);
  EXPECT_EQ(cache.LongestPrefix(Hashes{43}), 0);
  EXPECT_EQ(cache.LongestPrefix(Hashes{99}), 0);
  // Sequence 2 computes the same 41: sequence 1's block keeps it, 2's block
  // stays unhashed; its block 1 takes 50.
  cache.CommitRange(2, 0, Hashes{41, 50});
  cache.CommitRange(7, 0, Hashes{60});  // unknown: no-op
  cache.Release(2);
  EXPECT_EQ(cache.cached_blocks(), 1);  // only 50; the other became empty
  EXPECT_EQ(cache.LongestPrefix(Hashes{41}), 1);
  EXPECT_EQ(cache.LongestPrefix(Hashes{60}), 0);
  cache.Release(1);
  EXPECT_EQ(cache.cached_blocks(), 4);  // 40, 41, 42 and 50
}

TEST(PrefixCacheWindowTest, CommitRangeDoesNothingWithoutCaching) {
  PrefixCache cache(4, /*caching=*/false);
  ASSERT_EQ(cache.Admit(1, Hashes{}, 2), 0);
  cache.CommitRange(1, 0, Hashes{1, 2});
  cache.Release(1);
  EXPECT_EQ(cache.cached_blocks(), 0);
  EXPECT_EQ(cache.LongestPrefix(Hashes{1}), 0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
