#include "kvbill/cache/offload_tier.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(OffloadTierTest, KeepsTheMostRecentBlocksUpToCapacity) {
  OffloadTier tier(2);
  tier.Insert(1);
  tier.Insert(2);
  tier.Insert(1);  // refreshes 1: 2 is now the least recent
  tier.Insert(3);  // drops 2
  const std::vector<std::uint64_t> h = {1, 2, 3};
  EXPECT_EQ(tier.RunFrom(h, 0, 3), 1);  // 1 held, 2 not
  EXPECT_EQ(tier.RunFrom(h, 2, 3), 1);  // 3 held
  EXPECT_EQ(tier.size(), 2);
}

TEST(OffloadTierTest, RunStopsAtTheFirstMissingBlockAndTouchRefreshes) {
  OffloadTier tier(3);
  for (std::uint64_t x : {10, 11, 12}) tier.Insert(x);
  const std::vector<std::uint64_t> h = {9, 10, 11, 13, 12};
  EXPECT_EQ(tier.RunFrom(h, 1, 5), 2);  // 10, 11, then 13 is missing
  EXPECT_EQ(tier.RunFrom(h, 0, 5), 0);
  tier.Touch(h, 1, 1);  // 10 becomes the most recent: 11 is now the oldest
  tier.Insert(14);      // drops 11
  EXPECT_EQ(tier.RunFrom(h, 1, 5), 1);
}

TEST(OffloadTierTest, ZeroCapacityHoldsNothing) {
  OffloadTier tier(0);
  tier.Insert(1);
  EXPECT_EQ(tier.size(), 0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
