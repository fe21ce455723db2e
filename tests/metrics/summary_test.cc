#include "kvbill/metrics/summary.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace {

TEST(SummaryTest, EmptyIsAllZeros) {
  SummaryBuilder builder;
  EXPECT_EQ(builder.Build(), Summary{});
}

TEST(SummaryTest, NearestRankPercentilesOfOneToTen) {
  SummaryBuilder builder;
  for (int v : {7, 3, 10, 1, 9, 2, 8, 4, 6, 5}) builder.Add(v);
  const Summary s = builder.Build();
  EXPECT_EQ(s.count, 10);
  EXPECT_EQ(s.mean, 5.5);
  EXPECT_EQ(s.p50, 5);   // ceil(0.5 × 10) = 5th value
  EXPECT_EQ(s.p90, 9);   // ceil(0.9 × 10) = 9th, not 10th
  EXPECT_EQ(s.p99, 10);  // ceil(9.9) = 10th
  EXPECT_EQ(s.max, 10);
  EXPECT_EQ(s.sum, 55);
}

TEST(SummaryTest, PercentileOfHundredValuesIsTheRankedValue) {
  SummaryBuilder builder;
  for (int v = 100; v >= 1; --v) builder.Add(v * 2);
  const Summary s = builder.Build();
  EXPECT_EQ(s.p50, 100);  // 50th of 2, 4, ..., 200
  EXPECT_EQ(s.p90, 180);
  EXPECT_EQ(s.p99, 198);
}

TEST(SummaryTest, FractionalPercentileRoundsTheRankUp) {
  const double sorted[] = {1, 2, 3, 4};
  EXPECT_EQ(NearestRankPercentile(sorted, 4, 37.5), 2);  // ceil(1.5) = 2nd
  EXPECT_EQ(NearestRankPercentile(sorted, 4, 0.1), 1);
}

}  // namespace
}  // namespace kvbill
