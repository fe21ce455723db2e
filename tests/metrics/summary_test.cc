#include "kvbill/metrics/summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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

// The percentiles are selected, not sorted for: they must still be the
// sorted values at the nearest ranks, with ties, for every count (ranks
// that coincide at small counts, 99th and 90th apart at large ones), and
// stay right when values come after a first Build.
TEST(SummaryTest, SelectedPercentilesAreTheSortedValuesAtTheirRanks) {
  for (int count : {1, 2, 3, 7, 10, 11, 99, 100, 101, 1000, 1234}) {
    SummaryBuilder builder;
    std::vector<double> values;
    unsigned x = 12345u + static_cast<unsigned>(count);
    for (int i = 0; i < count; ++i) {
      x = x * 1103515245u + 12345u;                          // a fixed LCG: a shuffled order
      const double v = static_cast<double>((x >> 16) % 50);  // many ties
      builder.Add(v);
      values.push_back(v);
      if (i == count / 2) builder.Build();  // a Build in between reorders
    }
    std::sort(values.begin(), values.end());
    const auto at = [&](int p) {  // ceil(p/100 × count), 1-based
      return values[static_cast<std::size_t>((p * count + 99) / 100 - 1)];
    };
    const Summary s = builder.Build();
    EXPECT_EQ(s.p50, at(50)) << count;
    EXPECT_EQ(s.p90, at(90)) << count;
    EXPECT_EQ(s.p99, at(99)) << count;
    EXPECT_EQ(s.max, values.back()) << count;
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
