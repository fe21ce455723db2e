#include "kvbill/cache/prefix_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kvbill/cache/block_hash.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using Hashes = std::vector<std::uint64_t>;

// Pool counts in one line, so that a failure shows all of them.
struct Counts {
  std::int64_t free = 0;
  std::int64_t cached = 0;
  std::int64_t referenced = 0;
  bool operator==(const Counts&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Counts& c) {
  return out << "{free " << c.free << ", cached " << c.cached << ", referenced " << c.referenced
             << "}";
}

Counts CountsOf(const PrefixCache& cache) {
  return {cache.free_blocks(), cache.cached_blocks(), cache.referenced_blocks()};
}

// Admits `id` for `hashes` (blocks_needed = hashes.size() + extra), commits
// every hashed block and releases it, leaving its blocks cached.
void RunAndRelease(PrefixCache& cache, SeqId id, const Hashes& hashes, std::int64_t extra = 0) {
  ASSERT_TRUE(cache.Admit(id, hashes, static_cast<std::int64_t>(hashes.size()) + extra));
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    cache.Commit(id, static_cast<std::int64_t>(i), hashes[i]);
  }
  cache.Release(id);
}

TEST(PrefixCacheTest, AdmitOnEmptyPoolMissesAndAllocatesFresh) {
  PrefixCache cache(10);
  EXPECT_EQ(CountsOf(cache), (Counts{10, 0, 0}));
  EXPECT_EQ(cache.Admit(1, Hashes{11, 12, 13}, 4), 0);
  EXPECT_EQ(cache.BlocksOf(1), 4);
  EXPECT_EQ(CountsOf(cache), (Counts{6, 0, 4}));  // 10 - 4 referenced
  EXPECT_EQ(cache.BlocksOf(2), 0);
  EXPECT_EQ(cache.capacity_blocks(), 10);
}

TEST(PrefixCacheTest, ReleasedCommittedBlocksAreHitByTheNextPrompt) {
  PrefixCache cache(10);
  // A holds 4 blocks, 3 of them committed; on release the hashed 3 are
  // cached and the unhashed 4th is empty: free 10, cached 3.
  RunAndRelease(cache, 1, {11, 12, 13}, 1);
  EXPECT_EQ(CountsOf(cache), (Counts{10, 3, 0}));
  EXPECT_EQ(cache.BlocksOf(1), 0);
  EXPECT_EQ(cache.LongestPrefix(Hashes{11, 12, 99}), 2);
  // B shares blocks 0-1: 2 hits leave the cache, 2 fresh come from the empty
  // blocks. referenced 4, cached 3 - 2 = 1, free 10 - 4 = 6.
  EXPECT_EQ(cache.Admit(2, Hashes{11, 12, 99}, 4), 2);
  EXPECT_EQ(CountsOf(cache), (Counts{6, 1, 4}));
  EXPECT_EQ(cache.stats().lookups, 2);
  EXPECT_EQ(cache.stats().hit_blocks, 2);
  EXPECT_EQ(cache.stats().evicted_blocks, 0);
}

TEST(PrefixCacheTest, RunningSequencesShareCommittedBlocks) {
  PrefixCache cache(10);
  ASSERT_EQ(cache.Admit(1, Hashes{11, 12, 13}, 4), 0);
  for (std::int64_t i = 0; i < 3; ++i) cache.Commit(1, i, static_cast<std::uint64_t>(11 + i));
  // B needs 3 blocks, all found in A's referenced blocks: nothing fresh.
  EXPECT_EQ(cache.Admit(2, Hashes{11, 12, 13}, 3), 3);
  EXPECT_EQ(CountsOf(cache), (Counts{6, 0, 4}));
  // A goes: its unhashed block 3 becomes empty; 0-2 are still B's.
  cache.Release(1);
  EXPECT_EQ(CountsOf(cache), (Counts{7, 0, 3}));
  cache.Release(2);
  EXPECT_EQ(CountsOf(cache), (Counts{10, 3, 0}));
}

TEST(PrefixCacheTest, EvictsASequencesLastBlockFirst) {
  // A's 3 blocks fill the pool. Release pushes block 2, then 1, then 0 to
  // the most recent end, so the least recent is A's last block (hash 3).
  PrefixCache cache(3);
  RunAndRelease(cache, 1, {1, 2, 3});
  EXPECT_EQ(CountsOf(cache), (Counts{3, 3, 0}));
  EXPECT_EQ(cache.Admit(2, Hashes{}, 1), 0);
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2, 3}), 2);  // block 3 gone, 1-2 kept
  EXPECT_EQ(cache.stats().evicted_blocks, 1);
  EXPECT_EQ(CountsOf(cache), (Counts{2, 2, 1}));
  EXPECT_EQ(cache.Admit(3, Hashes{}, 1), 0);
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2, 3}), 1);  // then block 2
  EXPECT_EQ(cache.stats().evicted_blocks, 2);
}

TEST(PrefixCacheTest, EvictsLeastRecentlyReleasedBlockFirst) {
  // LRU after A then B release: [a2, a1, b6, b5] (least recent first).
  PrefixCache cache(4);
  RunAndRelease(cache, 1, {1, 2});
  RunAndRelease(cache, 2, {5, 6});
  EXPECT_EQ(cache.Admit(3, Hashes{}, 1), 0);  // evicts a2
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2}), 1);
  EXPECT_EQ(cache.LongestPrefix(Hashes{5, 6}), 2);
  EXPECT_EQ(cache.Admit(4, Hashes{}, 1), 0);  // evicts a1
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2}), 0);
  EXPECT_EQ(cache.Admit(5, Hashes{}, 1), 0);  // evicts b6, B's tail
  EXPECT_EQ(cache.LongestPrefix(Hashes{5, 6}), 1);
  EXPECT_EQ(cache.stats().evicted_blocks, 3);
}

TEST(PrefixCacheTest, AHitMakesABlockMostRecentAgainOnRelease) {
  // LRU [a2, a1, b6, b5]; C hits a1 (leaves the LRU) and releases it to the
  // most recent end: [a2, b6, b5, a1]. Two fresh blocks evict a2 and b6.
  PrefixCache cache(4);
  RunAndRelease(cache, 1, {1, 2});
  RunAndRelease(cache, 2, {5, 6});
  EXPECT_EQ(cache.Admit(3, Hashes{1}, 1), 1);
  cache.Release(3);
  EXPECT_EQ(cache.Admit(4, Hashes{}, 2), 0);
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2}), 1);
  EXPECT_EQ(cache.LongestPrefix(Hashes{5, 6}), 1);
  EXPECT_EQ(cache.stats().evicted_blocks, 2);
}

TEST(PrefixCacheTest, TakesEmptyBlocksBeforeEvicting) {
  // A holds 3 blocks, 2 committed. After release: cached 2 (hashes 1, 2) and
  // empty 2 (the unhashed block and the never-used 4th).
  PrefixCache cache(4);
  RunAndRelease(cache, 1, {1, 2}, 1);
  EXPECT_EQ(CountsOf(cache), (Counts{4, 2, 0}));
  EXPECT_EQ(cache.Admit(2, Hashes{}, 2), 0);  // both empty blocks
  EXPECT_EQ(cache.stats().evicted_blocks, 0);
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2}), 2);
  EXPECT_EQ(CountsOf(cache), (Counts{2, 2, 2}));
  EXPECT_EQ(cache.Admit(3, Hashes{}, 1), 0);  // now evicts hash 2
  EXPECT_EQ(cache.stats().evicted_blocks, 1);
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2}), 1);
}

TEST(PrefixCacheTest, RefusedAdmitChangesNothing) {
  PrefixCache cache(4);
  RunAndRelease(cache, 1, {1, 2});  // cached 2, empty 2
  // 5 blocks with 2 hits: 3 fresh, but the hits leave the free pool,
  // leaving 4 - 2 = 2 for fresh blocks. Refused.
  EXPECT_EQ(cache.Admit(2, Hashes{1, 2}, 5), std::nullopt);
  EXPECT_EQ(CountsOf(cache), (Counts{4, 2, 0}));
  EXPECT_EQ(cache.BlocksOf(2), 0);
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2}), 2);
  EXPECT_EQ(cache.stats().lookups, 1);  // A's only
  EXPECT_EQ(cache.stats().hit_blocks, 0);
  EXPECT_EQ(cache.stats().evicted_blocks, 0);
  // 4 blocks fit exactly: 2 hits + 2 fresh from the empty blocks.
  EXPECT_EQ(cache.Admit(2, Hashes{1, 2}, 4), 2);
  EXPECT_EQ(CountsOf(cache), (Counts{0, 0, 4}));
  EXPECT_EQ(cache.Admit(3, Hashes{}, 1), std::nullopt);
}

TEST(PrefixCacheTest, AdmitOfAHeldSequenceIsRefused) {
  PrefixCache cache(4);
  ASSERT_EQ(cache.Admit(1, Hashes{}, 1), 0);
  EXPECT_EQ(cache.Admit(1, Hashes{}, 1), std::nullopt);
  EXPECT_EQ(cache.BlocksOf(1), 1);
  EXPECT_EQ(cache.stats().lookups, 1);
}

TEST(PrefixCacheTest, MaxHitBlocksAndBlocksNeededCapHits) {
  PrefixCache cache(3);
  RunAndRelease(cache, 1, {1, 2, 3});  // LRU [3, 2, 1]
  // At most 1 hit: block 1 is taken, 2 fresh blocks evict 3 then 2.
  EXPECT_EQ(cache.Admit(2, Hashes{1, 2, 3}, 3, 1), 1);
  EXPECT_EQ(cache.stats().evicted_blocks, 2);
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2, 3}), 1);
  cache.Release(2);
  // Only 1 block needed: 1 hit, although 1 more hash is given.
  EXPECT_EQ(cache.Admit(3, Hashes{1, 2}, 1), 1);
  EXPECT_EQ(cache.BlocksOf(3), 1);
  EXPECT_EQ(cache.Admit(4, Hashes{1}, 1, 0), 0);  // max 0: a fresh block
  EXPECT_EQ(cache.stats().hit_blocks, 2);
}

TEST(PrefixCacheTest, FirstCommittedHashWins) {
  PrefixCache cache(10);
  ASSERT_EQ(cache.Admit(1, Hashes{7}, 1), 0);
  ASSERT_EQ(cache.Admit(2, Hashes{7}, 1), 0);  // A has not committed yet
  cache.Commit(1, 0, 7);
  cache.Commit(2, 0, 7);  // no-op: A's block has 7
  cache.Commit(1, 0, 8);  // no-op: A's block already has a hash
  EXPECT_EQ(cache.LongestPrefix(Hashes{8}), 0);
  cache.Release(1);  // A's block cached
  EXPECT_EQ(CountsOf(cache), (Counts{9, 1, 1}));
  cache.Release(2);  // B's unhashed block empty
  EXPECT_EQ(CountsOf(cache), (Counts{10, 1, 0}));
  EXPECT_EQ(cache.LongestPrefix(Hashes{7}), 1);
  cache.Commit(3, 0, 9);  // unknown sequence: no-op
  EXPECT_EQ(cache.LongestPrefix(Hashes{9}), 0);
}

TEST(PrefixCacheTest, PinnedBlocksStayReferencedUntilUnpin) {
  PrefixCache cache(6);
  ASSERT_EQ(cache.Admit(1, Hashes{1, 2, 3}, 4), 0);
  for (std::int64_t i = 0; i < 3; ++i) cache.Commit(1, i, static_cast<std::uint64_t>(i + 1));
  cache.ReleasePinned(1);
  EXPECT_EQ(CountsOf(cache), (Counts{2, 0, 4}));
  EXPECT_EQ(cache.BlocksOf(1), 4);
  // The next turn hits the 3 pinned blocks and takes 2 fresh: pool full.
  EXPECT_EQ(cache.Admit(2, Hashes{1, 2, 3, 4}, 5), 3);
  EXPECT_EQ(CountsOf(cache), (Counts{0, 0, 6}));
  // Unpin: A's unhashed 4th block is empty; blocks 1-3 are still B's.
  cache.Unpin(1);
  EXPECT_EQ(CountsOf(cache), (Counts{1, 0, 5}));
  EXPECT_EQ(cache.BlocksOf(1), 0);
  cache.Unpin(1);  // unknown now: no-op
  // B never committed its 2 fresh blocks: 3 cached, 3 empty.
  cache.Release(2);
  EXPECT_EQ(CountsOf(cache), (Counts{6, 3, 0}));
}

TEST(PrefixCacheTest, UnpinIgnoresRunningSequencesAndReleaseFreesPinnedOnes) {
  PrefixCache cache(4);
  ASSERT_EQ(cache.Admit(1, Hashes{}, 2), 0);
  cache.Unpin(1);  // running, not pinned: no-op
  EXPECT_EQ(cache.BlocksOf(1), 2);
  cache.ReleasePinned(1);
  EXPECT_EQ(CountsOf(cache), (Counts{2, 0, 2}));
  cache.Release(1);
  EXPECT_EQ(CountsOf(cache), (Counts{4, 0, 0}));
  cache.Release(42);  // unknown: no-op
  EXPECT_EQ(CountsOf(cache), (Counts{4, 0, 0}));
}

TEST(PrefixCacheTest, GrowTakesFreshBlocksOrChangesNothing) {
  PrefixCache cache(4);
  RunAndRelease(cache, 1, {1});  // cached 1, empty 3
  ASSERT_EQ(cache.Admit(2, Hashes{}, 2), 0);
  EXPECT_FALSE(cache.Grow(2, 3));  // free 2
  EXPECT_EQ(cache.BlocksOf(2), 2);
  EXPECT_EQ(CountsOf(cache), (Counts{2, 1, 2}));
  EXPECT_TRUE(cache.Grow(2, 2));  // the last empty block, then evicts hash 1
  EXPECT_EQ(cache.BlocksOf(2), 4);
  EXPECT_EQ(CountsOf(cache), (Counts{0, 0, 4}));
  EXPECT_EQ(cache.stats().evicted_blocks, 1);
  EXPECT_TRUE(cache.Grow(2, 0));
  cache.Release(2);
  EXPECT_TRUE(cache.Grow(3, 1));  // an unknown sequence starts
  EXPECT_EQ(cache.BlocksOf(3), 1);
}

TEST(PrefixCacheTest, WithoutCachingNothingIsFound) {
  PrefixCache cache(10, /*caching=*/false);
  RunAndRelease(cache, 1, {1, 2});
  EXPECT_EQ(CountsOf(cache), (Counts{10, 0, 0}));
  EXPECT_EQ(cache.LongestPrefix(Hashes{1, 2}), 0);
  EXPECT_EQ(cache.Admit(2, Hashes{1, 2}, 2), 0);
  EXPECT_EQ(cache.stats().hit_blocks, 0);
  EXPECT_EQ(cache.stats().lookups, 2);
}

TEST(PrefixCacheTest, UnlimitedCapacityNeverEvicts) {
  PrefixCache cache(kUnlimitedBlocks);
  EXPECT_EQ(cache.capacity_blocks(), kUnlimitedBlocks);
  // 200 sequences of 50 distinct blocks each: 10,000 cached blocks.
  for (SeqId id = 0; id < 200; ++id) {
    Hashes hashes;
    for (std::uint64_t i = 0; i < 50; ++i)
      hashes.push_back(static_cast<std::uint64_t>(id) * 1000 + i);
    RunAndRelease(cache, id, hashes);
  }
  EXPECT_EQ(cache.cached_blocks(), 10'000);
  EXPECT_EQ(cache.free_blocks(), kUnlimitedBlocks);
  EXPECT_EQ(cache.stats().evicted_blocks, 0);
  for (SeqId id = 0; id < 200; ++id) {
    EXPECT_EQ(cache.LongestPrefix(Hashes{static_cast<std::uint64_t>(id) * 1000}), 1);
  }
  EXPECT_EQ(cache.Admit(1000, Hashes{7000, 7001, 7002}, 4), 3);
  EXPECT_EQ(cache.free_blocks(), kUnlimitedBlocks - 4);
}

TEST(PrefixCacheTest, ZeroCapacityRefusesEveryBlock) {
  PrefixCache cache(0);
  EXPECT_EQ(cache.Admit(1, Hashes{}, 0), 0);
  EXPECT_EQ(cache.BlocksOf(1), 0);
  EXPECT_EQ(cache.Admit(2, Hashes{1}, 1), std::nullopt);
  EXPECT_FALSE(cache.Grow(1, 1));
}

// Sequences are found by id whatever its value, and a released sequence's
// storage (reused for the next one) keeps none of its state.
TEST(PrefixCacheTest, SequenceIdsOfAnyValueAndReusedStorage) {
  PrefixCache cache(10);
  const SeqId big = SeqId{1} << 40, negative = -7;
  ASSERT_TRUE(cache.Grow(big, 2));
  ASSERT_TRUE(cache.Grow(negative, 3));
  EXPECT_EQ(cache.BlocksOf(big), 2);
  EXPECT_EQ(cache.BlocksOf(negative), 3);
  EXPECT_EQ(cache.BlocksOf(0), 0);
  cache.ReleasePinned(big);
  cache.Unpin(big);  // its 2 blocks had no hash: empty again
  EXPECT_EQ(cache.BlocksOf(big), 0);
  EXPECT_EQ(CountsOf(cache), (Counts{7, 0, 3}));  // 10 - negative's 3
  // Sequence 5 is not pinned (whatever storage it got), so Unpin leaves it.
  EXPECT_EQ(cache.Admit(5, Hashes{}, 1), 0);
  cache.Unpin(5);
  EXPECT_EQ(cache.BlocksOf(5), 1);
  EXPECT_EQ(CountsOf(cache), (Counts{6, 0, 4}));
  EXPECT_EQ(cache.Admit(negative, Hashes{}, 1), std::nullopt);  // still held
  cache.Release(negative);
  cache.Release(5);
  EXPECT_EQ(CountsOf(cache), (Counts{10, 0, 0}));
}

// --- runs of blocks ------------------------------------------------------------

using Runs = std::vector<BlockRun>;

// Sequence `id` computes `runs` (no hits wanted), names them and releases.
void ComputeAndRelease(PrefixCache& cache, SeqId id, const Runs& runs) {
  std::int64_t blocks = 0;
  for (const BlockRun& r : runs) blocks += r.count;
  ASSERT_TRUE(cache.Admit(id, Runs{}, blocks));
  cache.CommitRange(id, 0, runs);
  cache.Release(id);
}

TEST(PrefixCacheRunTest, ARunIsEvictedFromItsLastBlock) {
  // Blocks (7, 0..3) computed and released: the LRU order is 3, 2, 1, 0
  // (last block first, as block by block). A full pool then evicts 3, 2.
  PrefixCache cache(4);
  cache.TrackEvictions(true);
  ComputeAndRelease(cache, 1, {{7, 0, 4}});
  EXPECT_EQ(CountsOf(cache), (Counts{4, 4, 0}));
  ASSERT_TRUE(cache.Grow(2, 2));
  EXPECT_EQ(cache.TakeEvicted(), (Runs{{7, 3, 1}, {7, 2, 1}}));
  EXPECT_EQ(cache.LongestPrefix(Runs{{7, 0, 4}}), 2);
  EXPECT_EQ(cache.LongestPrefix(Runs{{7, 0, 4}}, 1), 1);
  EXPECT_EQ(cache.stats().evicted_blocks, 2);
}

TEST(PrefixCacheRunTest, AHitInsideACachedRunKeepsTheRestInEvictionOrder) {
  // 10 blocks. (7, 0..5) cached in the order 5, 4, 3, 2, 1, 0. A hit on
  // (7, 2..3) references those two; 5, 4 and 1, 0 stay cached, still in
  // that order (5 oldest). A sequence of 6 fresh blocks takes the 4 empty
  // ones and evicts 5 and 4; one more block evicts 1, not 0.
  PrefixCache cache(10);
  cache.TrackEvictions(true);
  ComputeAndRelease(cache, 1, {{7, 0, 6}});
  EXPECT_EQ(cache.Admit(2, Runs{{7, 2, 2}}, 2), 2);
  EXPECT_EQ(CountsOf(cache), (Counts{8, 4, 2}));
  ASSERT_TRUE(cache.Admit(3, Runs{}, 6));
  EXPECT_EQ(cache.TakeEvicted(), (Runs{{7, 5, 1}, {7, 4, 1}}));
  ASSERT_TRUE(cache.Grow(3, 1));
  EXPECT_EQ(cache.TakeEvicted(), (Runs{{7, 1, 1}}));
  EXPECT_EQ(cache.LongestPrefix(Runs{{7, 0, 6}}), 1);  // block 0 only: 1 is gone
  EXPECT_EQ(cache.LongestPrefix(Runs{{7, 2, 2}}), 2);  // still held by sequence 2
  EXPECT_EQ(cache.LastMissing(Runs{{7, 0, 6}}), 5);    // 4 and 5 are gone
  EXPECT_EQ(cache.LastMissing(Runs{{7, 0, 4}}), 1);
  EXPECT_EQ(cache.LastMissing(Runs{{7, 2, 2}}), -1);
  EXPECT_EQ(cache.CachedBlocksIn(Runs{{7, 0, 6}}), 1);  // block 0
}

TEST(PrefixCacheRunTest, ReleaseGoesTailFirstAcrossRunsAndSharedBlocks) {
  // Sequence 1 holds (7, 0..2) then (8, 0..1); sequence 2 hits (7, 0..1).
  // Releasing 1 caches, tail first, 8:1, 8:0, 7:2 (7:0, 7:1 stay held by 2);
  // releasing 2 then caches 7:1, 7:0. The LRU order: 8:1 8:0 7:2 7:1 7:0.
  PrefixCache cache(5);
  cache.TrackEvictions(true);
  ASSERT_TRUE(cache.Admit(1, Runs{}, 5));
  cache.CommitRange(1, 0, Runs{{7, 0, 3}, {8, 0, 2}});
  EXPECT_EQ(cache.Admit(2, Runs{{7, 0, 2}}, 2), 2);
  cache.Release(1);
  cache.Release(2);
  EXPECT_EQ(CountsOf(cache), (Counts{5, 5, 0}));
  ASSERT_TRUE(cache.Grow(3, 5));
  EXPECT_EQ(cache.TakeEvicted(), (Runs{{8, 1, 1}, {8, 0, 1}, {7, 2, 1}, {7, 1, 1}, {7, 0, 1}}));
}

TEST(PrefixCacheRunTest, ABlockWhoseNameIsTakenStaysUnnamed) {
  // Sequences 1 and 2 compute the same run at once; 1 commits first, so 2's
  // copies stay unnamed and become empty, not cached, on release. A commit
  // cut at a sequence's end names only the blocks it holds.
  PrefixCache cache(10);
  ASSERT_TRUE(cache.Admit(1, Runs{}, 3));
  ASSERT_TRUE(cache.Admit(2, Runs{}, 4));
  cache.CommitRange(1, 0, Runs{{7, 0, 3}});
  cache.CommitRange(2, 0, Runs{{7, 0, 3}, {9, 0, 5}});  // (9, 0) named, 9:1.. beyond
  cache.Release(2);
  EXPECT_EQ(CountsOf(cache), (Counts{7, 1, 3}));  // 9:0 cached, 3 blocks empty
  EXPECT_EQ(cache.LongestPrefix(Runs{{9, 0, 2}}), 1);
  cache.Release(1);
  EXPECT_EQ(CountsOf(cache), (Counts{10, 4, 0}));
  EXPECT_EQ(cache.LongestPrefix(Runs{{7, 0, 3}}), 3);
}

TEST(PrefixCacheRunTest, ReleaseFrontDropsTheFirstBlocksNewestFirst) {
  // Sequence 1 holds (7, 0..5). Dropping its first 4 caches 7:3, 7:2, 7:1,
  // 7:0 in that order; it keeps (7, 4..5) as its blocks 0 and 1.
  PrefixCache cache(6);
  cache.TrackEvictions(true);
  ASSERT_TRUE(cache.Admit(1, Runs{}, 6));
  cache.CommitRange(1, 0, Runs{{7, 0, 6}});
  cache.ReleaseFront(1, 4);
  EXPECT_EQ(cache.BlocksOf(1), 2);
  EXPECT_EQ(CountsOf(cache), (Counts{4, 4, 2}));
  ASSERT_TRUE(cache.Grow(2, 3));
  EXPECT_EQ(cache.TakeEvicted(), (Runs{{7, 3, 1}, {7, 2, 1}, {7, 1, 1}}));
  cache.Release(1);  // 7:5, 7:4 cached after 7:0
  ASSERT_TRUE(cache.Grow(2, 3));
  EXPECT_EQ(cache.TakeEvicted(), (Runs{{7, 0, 1}, {7, 5, 1}, {7, 4, 1}}));
}

// A deliberately naive pool to check PrefixCache against: blocks in a vector,
// the LRU in a std::list (front = least recently released), hashes in a
// std::map, counts by scanning. Admit is tried on a copy of the whole model
// and the copy is kept only when every fresh block could be found.
class NaiveCache {
 public:
  NaiveCache(std::int64_t capacity, bool caching) : capacity_(capacity), caching_(caching) {}

  std::int64_t LongestPrefix(const Hashes& hashes) const {
    std::int64_t n = 0;
    while (caching_ && n < static_cast<std::int64_t>(hashes.size()) &&
           by_hash_.contains(hashes[static_cast<std::size_t>(n)])) {
      ++n;
    }
    return n;
  }

  std::optional<std::int64_t> Admit(SeqId id, const Hashes& hashes, std::int64_t needed,
                                    std::int64_t max_hits) {
    if (seqs_.contains(id)) return std::nullopt;
    NaiveCache trial = *this;
    Seq& seq = trial.seqs_[id];
    std::int64_t hits = 0;
    for (const std::uint64_t h : hashes) {
      if (!caching_ || hits >= max_hits || hits >= needed) break;
      const auto it = trial.by_hash_.find(h);
      if (it == trial.by_hash_.end()) break;
      const int b = it->second;
      if (trial.blocks_[static_cast<std::size_t>(b)].refs == 0) trial.lru_.remove(b);
      ++trial.blocks_[static_cast<std::size_t>(b)].refs;
      seq.blocks.push_back(b);
      ++hits;
    }
    for (std::int64_t i = hits; i < needed; ++i) {
      const std::optional<int> b = trial.TakeFresh();
      if (!b) return std::nullopt;
      seq.blocks.push_back(*b);
    }
    ++trial.stats_.lookups;
    trial.stats_.hit_blocks += hits;
    *this = std::move(trial);
    return hits;
  }

  bool Grow(SeqId id, std::int64_t n) {
    NaiveCache trial = *this;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::optional<int> b = trial.TakeFresh();
      if (!b) return false;
      trial.seqs_[id].blocks.push_back(*b);
    }
    *this = std::move(trial);
    return true;
  }

  void Commit(SeqId id, std::int64_t index, std::uint64_t hash) {
    const auto it = seqs_.find(id);
    if (!caching_ || it == seqs_.end() ||
        index >= static_cast<std::int64_t>(it->second.blocks.size())) {
      return;
    }
    const int b = it->second.blocks[static_cast<std::size_t>(index)];
    Block& block = blocks_[static_cast<std::size_t>(b)];
    if (block.hash || by_hash_.contains(hash)) return;
    block.hash = hash;
    by_hash_[hash] = b;
  }

  void Release(SeqId id) {
    const auto it = seqs_.find(id);
    if (it == seqs_.end()) return;
    const std::vector<int> held = it->second.blocks;
    seqs_.erase(it);
    for (std::size_t i = held.size(); i-- > 0;) Unreference(held[i]);
  }
  void Unreference(int b) {
    Block& block = blocks_[static_cast<std::size_t>(b)];
    if (--block.refs > 0) return;
    if (block.hash) {
      lru_.push_back(b);
    } else {
      empty_.push_back(b);
    }
  }
  // PrefixCache::ReleaseFront: the first n blocks, the last of them first.
  void ReleaseFront(SeqId id, std::int64_t n) {
    const auto it = seqs_.find(id);
    if (it == seqs_.end() || n <= 0) return;
    std::vector<int>& held = it->second.blocks;
    const std::size_t count = std::min<std::size_t>(static_cast<std::size_t>(n), held.size());
    for (std::size_t i = count; i-- > 0;) Unreference(held[i]);
    held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(count));
  }
  // Blocks of `hashes` that are cached (unreferenced, findable).
  std::int64_t CachedIn(const Hashes& hashes) const {
    std::int64_t n = 0;
    for (const std::uint64_t h : hashes) {
      const auto it = by_hash_.find(h);
      if (caching_ && it != by_hash_.end() &&
          blocks_[static_cast<std::size_t>(it->second)].refs == 0)
        ++n;
    }
    return n;
  }
  // The position of the last block of `hashes` not found, or -1.
  std::int64_t LastMissing(const Hashes& hashes) const {
    for (std::size_t i = hashes.size(); i-- > 0;) {
      if (!caching_ || !by_hash_.contains(hashes[i])) return static_cast<std::int64_t>(i);
    }
    return -1;
  }
  // Hashes of evicted blocks, in eviction order, since the last call.
  Hashes TakeEvicted() { return std::exchange(evicted_, {}); }
  void ReleasePinned(SeqId id) {
    if (seqs_.contains(id)) seqs_[id].pinned = true;
  }
  void Unpin(SeqId id) {
    if (seqs_.contains(id) && seqs_[id].pinned) Release(id);
  }

  bool Holds(SeqId id) const { return seqs_.contains(id); }
  std::int64_t BlocksOf(SeqId id) const {
    const auto it = seqs_.find(id);
    return it == seqs_.end() ? 0 : static_cast<std::int64_t>(it->second.blocks.size());
  }
  std::int64_t Referenced() const {
    std::int64_t n = 0;
    for (const Block& block : blocks_) n += block.refs > 0 ? 1 : 0;
    return n;
  }
  Counts CountsNow() const {
    return {capacity_ - Referenced(), static_cast<std::int64_t>(lru_.size()), Referenced()};
  }
  const PrefixCacheStats& stats() const { return stats_; }

 private:
  struct Block {
    std::optional<std::uint64_t> hash;
    int refs = 0;
  };
  struct Seq {
    std::vector<int> blocks;
    bool pinned = false;
  };

  std::optional<int> TakeFresh() {
    int b = 0;
    if (!empty_.empty()) {
      b = empty_.back();
      empty_.pop_back();
    } else if (static_cast<std::int64_t>(blocks_.size()) < capacity_) {
      b = static_cast<int>(blocks_.size());
      blocks_.emplace_back();
    } else if (!lru_.empty()) {
      b = lru_.front();
      lru_.pop_front();
      by_hash_.erase(*blocks_[static_cast<std::size_t>(b)].hash);
      evicted_.push_back(*blocks_[static_cast<std::size_t>(b)].hash);
      blocks_[static_cast<std::size_t>(b)].hash.reset();
      ++stats_.evicted_blocks;
    } else {
      return std::nullopt;
    }
    blocks_[static_cast<std::size_t>(b)].refs = 1;
    return b;
  }

  std::int64_t capacity_;
  bool caching_;
  std::vector<Block> blocks_;
  std::list<int> lru_;
  std::vector<int> empty_;
  std::map<std::uint64_t, int> by_hash_;
  std::map<SeqId, Seq> seqs_;
  PrefixCacheStats stats_;
  Hashes evicted_;
};

struct RandomCase {
  std::int64_t capacity;
  bool caching;
};

void PrintTo(const RandomCase& c, std::ostream* out) {
  *out << "{capacity " << c.capacity << ", caching " << c.caching << "}";
}

class PrefixCacheModelTest : public ::testing::TestWithParam<RandomCase> {};

// Random prompts walk a small tree (3 symbols, depth <= 6) so that they share
// prefixes; 16 sequence ids; Admit, Commit, Grow, Release, ReleasePinned and
// Unpin in random order. After every step every observable must agree.
TEST_P(PrefixCacheModelTest, AgreesWithNaiveModelOnRandomOperations) {
  const RandomCase c = GetParam();
  PrefixCache cache(c.capacity, c.caching);
  NaiveCache model(c.capacity, c.caching);
  std::mt19937_64 rng(20240611);
  auto below = [&rng](std::uint64_t n) { return static_cast<std::int64_t>(rng() % n); };
  auto random_prompt = [&] {
    Hashes hashes;
    std::uint64_t h = kChainSeed;
    for (std::int64_t depth = below(7); depth > 0; --depth) {
      h = HashCombine(h, static_cast<std::uint64_t>(below(3)));
      hashes.push_back(h);
    }
    return hashes;
  };
  constexpr SeqId kIds = 16;
  std::map<SeqId, Hashes> prompts;
  std::int64_t admitted = 0;
  std::int64_t refused = 0;
  for (int step = 0; step < 4000; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    const SeqId id = below(kIds);
    const std::int64_t op = below(100);
    if (op < 35) {
      const Hashes prompt = random_prompt();
      const std::int64_t needed = static_cast<std::int64_t>(prompt.size()) + below(3);
      const std::int64_t max_hits = below(4) == 0 ? below(4) : kUnlimitedBlocks;
      const bool held = model.Holds(id);
      const bool can = cache.CanAdmit(prompt, needed, max_hits);
      const auto got = cache.Admit(id, prompt, needed, max_hits);
      if (!held) {
        ASSERT_EQ(can, got.has_value());
      }
      ASSERT_EQ(got, model.Admit(id, prompt, needed, max_hits));
      if (got) {
        prompts[id] = prompt;
        ++admitted;
      } else {
        ++refused;
      }
    } else if (op < 60) {
      const std::int64_t blocks = cache.BlocksOf(id);
      if (blocks > 0) {
        const std::int64_t index = below(static_cast<std::uint64_t>(blocks));
        const Hashes& prompt = prompts[id];
        // Mostly the prompt's own hash; sometimes one from another prompt.
        const Hashes other = random_prompt();
        std::uint64_t hash = other.empty() ? 1 : other.back();
        if (index < static_cast<std::int64_t>(prompt.size()) && below(5) > 0) {
          hash = prompt[static_cast<std::size_t>(index)];
        }
        cache.Commit(id, index, hash);
        model.Commit(id, index, hash);
      }
    } else if (op < 70) {
      const std::int64_t n = below(3);
      ASSERT_EQ(cache.Grow(id, n), model.Grow(id, n));
    } else if (op < 85) {
      cache.Release(id);
      model.Release(id);
    } else if (op < 93) {
      cache.ReleasePinned(id);
      model.ReleasePinned(id);
    } else {
      cache.Unpin(id);
      model.Unpin(id);
    }
    ASSERT_EQ(CountsOf(cache), model.CountsNow());
    const Hashes probe = random_prompt();
    ASSERT_EQ(cache.LongestPrefix(probe), model.LongestPrefix(probe));
    for (SeqId other = 0; other < kIds; ++other) {
      ASSERT_EQ(cache.BlocksOf(other), model.BlocksOf(other)) << "sequence " << other;
    }
    ASSERT_EQ(cache.stats().lookups, model.stats().lookups);
    ASSERT_EQ(cache.stats().hit_blocks, model.stats().hit_blocks);
    ASSERT_EQ(cache.stats().evicted_blocks, model.stats().evicted_blocks);
  }
  // The run must have exercised both outcomes and, when finite, eviction.
  EXPECT_GT(admitted, 100);
  if (c.capacity < 1000) {
    EXPECT_GT(refused, 10);
  }
  if (c.caching) {
    EXPECT_GT(cache.stats().hit_blocks, 100);
  }
  if (c.caching && c.capacity < 1000) {
    EXPECT_GT(cache.stats().evicted_blocks, 100);
  }
}

// The run cache against the block-level model, with prompts as runs: runs of
// 1 to 6 blocks of a few keys (so prompts share whole runs, parts of runs,
// and blocks at other indices), committed in random ranges, released whole
// or from the front, pinned. The model sees block (key, i) as the hash
// BlockRunHash(key, i). After every step the counts, hits, cached counts,
// last misses, blocks held, statistics and the evicted blocks in order must
// agree.
TEST_P(PrefixCacheModelTest, RunsAgreeWithTheBlockModelOnRandomOperations) {
  const RandomCase c = GetParam();
  // Prompts of runs are longer than those of the test above: a pool of 12
  // would refuse most of them, so it is doubled.
  const std::int64_t capacity = c.capacity < 20 ? 2 * c.capacity : c.capacity;
  PrefixCache cache(capacity, c.caching);
  cache.TrackEvictions(true);
  NaiveCache model(capacity, c.caching);
  std::mt19937_64 rng(20261201);
  auto below = [&rng](std::uint64_t n) { return static_cast<std::int64_t>(rng() % n); };
  // A prompt: a few runs of distinct keys among 6 (keys within a prompt are
  // distinct, as a run's key chains its prefix), often starting with a
  // prefix of the first runs of a fixed order, so that prompts share it.
  auto random_runs = [&] {
    Runs runs;
    std::uint64_t used = 0;  // keys taken
    if (below(2) == 0) {
      for (std::uint64_t k = 0, n = static_cast<std::uint64_t>(below(3)); k < n; ++k) {
        runs.push_back(BlockRun{1000 + k, 0, 2 + static_cast<std::int64_t>(k)});
        used |= 1u << k;
      }
      if (!runs.empty()) runs.back().count -= below(2);  // a shorter last run
    }
    for (std::int64_t n = below(3); n > 0; --n) {
      const std::uint64_t key = static_cast<std::uint64_t>(below(6));
      if (used & (1u << key)) continue;
      used |= 1u << key;
      runs.push_back(BlockRun{1000 + key, below(4), 1 + below(5)});
    }
    return runs;
  };
  auto expand = [](const Runs& runs) {
    Hashes hashes;
    for (const BlockRun& r : runs) {
      for (std::int64_t i = 0; i < r.count; ++i) hashes.push_back(BlockRunHash(r.key, r.first + i));
    }
    return hashes;
  };
  auto slice = [](const Runs& runs, std::int64_t from, std::int64_t to) {
    std::vector<std::int64_t> ends;
    for (const BlockRun& r : runs) ends.push_back((ends.empty() ? 0 : ends.back()) + r.count);
    Runs out;
    BlockRunList{runs, ends}.Slice(from, to, &out);
    return out;
  };
  constexpr SeqId kIds = 12;
  std::map<SeqId, Runs> prompts;
  std::int64_t admitted = 0, refused = 0, fronts = 0;
  for (int step = 0; step < 5000; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    const SeqId id = below(kIds);
    const std::int64_t op = below(100);
    if (op < 30) {
      const Runs prompt = random_runs();
      const Hashes hashes = expand(prompt);
      const std::int64_t needed = static_cast<std::int64_t>(hashes.size()) + below(3);
      const std::int64_t max_hits = below(4) == 0 ? below(6) : kUnlimitedBlocks;
      const bool held = model.Holds(id);
      const bool can = cache.CanAdmit(prompt, needed, max_hits);
      const auto got = cache.Admit(id, prompt, needed, max_hits);
      if (!held) {
        ASSERT_EQ(can, got.has_value());
      }
      ASSERT_EQ(got, model.Admit(id, hashes, needed, max_hits));
      if (got) {
        prompts[id] = prompt;
        ++admitted;
      } else {
        ++refused;
      }
    } else if (op < 58) {
      // Commit blocks [from, to) of the sequence's prompt (mostly), or of
      // another prompt, at the same or a shifted position.
      const Runs own = prompts.contains(id) ? prompts[id] : Runs{};
      const Runs source = below(5) > 0 ? own : random_runs();
      const std::int64_t total = static_cast<std::int64_t>(expand(source).size());
      const std::int64_t from = below(static_cast<std::uint64_t>(total + 1));
      const std::int64_t to = from + below(static_cast<std::uint64_t>(total - from + 1));
      const std::int64_t at = from + (below(6) == 0 ? below(5) - 2 : 0);
      const Runs runs = slice(source, from, to);
      cache.CommitRange(id, at, runs);
      const Hashes hashes = expand(runs);
      for (std::size_t i = 0; i < hashes.size(); ++i) {
        if (at + static_cast<std::int64_t>(i) >= 0) {
          model.Commit(id, at + static_cast<std::int64_t>(i), hashes[i]);
        }
      }
    } else if (op < 66) {
      const std::int64_t n = below(4);
      ASSERT_EQ(cache.Grow(id, n), model.Grow(id, n));
    } else if (op < 74) {
      const std::int64_t n = below(5);
      cache.ReleaseFront(id, n);
      model.ReleaseFront(id, n);
      if (prompts.contains(id)) {
        prompts[id] = slice(prompts[id], n, kUnlimitedBlocks);
      }
      ++fronts;
    } else if (op < 86) {
      cache.Release(id);
      model.Release(id);
    } else if (op < 93) {
      cache.ReleasePinned(id);
      model.ReleasePinned(id);
    } else {
      cache.Unpin(id);
      model.Unpin(id);
    }
    ASSERT_EQ(CountsOf(cache), model.CountsNow());
    const Runs probe = random_runs();
    const Hashes probe_hashes = expand(probe);
    const std::int64_t limit = below(8);
    ASSERT_EQ(cache.LongestPrefix(probe), model.LongestPrefix(probe_hashes));
    ASSERT_EQ(cache.LongestPrefix(probe, limit),
              std::min(limit, model.LongestPrefix(probe_hashes)));
    ASSERT_EQ(cache.CachedBlocksIn(probe), model.CachedIn(probe_hashes));
    ASSERT_EQ(cache.LastMissing(probe), model.LastMissing(probe_hashes));
    for (SeqId other = 0; other < kIds; ++other) {
      ASSERT_EQ(cache.BlocksOf(other), model.BlocksOf(other)) << "sequence " << other;
    }
    ASSERT_EQ(cache.stats().lookups, model.stats().lookups);
    ASSERT_EQ(cache.stats().hit_blocks, model.stats().hit_blocks);
    ASSERT_EQ(cache.stats().evicted_blocks, model.stats().evicted_blocks);
    Hashes evicted;
    for (const BlockRun& b : cache.TakeEvicted()) evicted.push_back(BlockRunHash(b.key, b.first));
    ASSERT_EQ(evicted, model.TakeEvicted());
  }
  EXPECT_GT(admitted, 100);
  EXPECT_GT(fronts, 100);
  if (c.capacity < 1000) {
    EXPECT_GT(refused, 10);
  }
  if (c.caching) {
    EXPECT_GT(cache.stats().hit_blocks, 100);
  }
  if (c.caching && c.capacity < 1000) {
    EXPECT_GT(cache.stats().evicted_blocks, 100);
  }
}

INSTANTIATE_TEST_SUITE_P(PrefixCachePools, PrefixCacheModelTest,
                         ::testing::Values(RandomCase{12, true}, RandomCase{40, true},
                                           RandomCase{12, false},
                                           RandomCase{kUnlimitedBlocks, true}),
                         [](const auto& param_info) {
                           const RandomCase& c = param_info.param;
                           return (c.capacity == kUnlimitedBlocks
                                       ? std::string("Unlimited")
                                       : "Capacity" + std::to_string(c.capacity)) +
                                  (c.caching ? "Caching" : "NoCaching");
                         });

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
