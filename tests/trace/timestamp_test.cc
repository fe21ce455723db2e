#include "trace/timestamp.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(TraceTimestampTest, ParsesIsoAndSpaceSeparatedForms) {
  auto epoch = ParseTimestamp("1970-01-01T00:00:00Z");
  ASSERT_TRUE(epoch.ok());
  EXPECT_EQ(epoch->ns, 0);
  // 2025-08-07 is day 20307 after the epoch.
  auto t = ParseTimestamp("2025-08-07T03:32:45.541Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ns, (20307LL * 86400 + 3 * 3600 + 32 * 60 + 45) * 1'000'000'000 + 541'000'000);
  auto azure = ParseTimestamp("2023-11-16 18:15:46.6805900");
  ASSERT_TRUE(azure.ok());
  auto later = ParseTimestamp("2023-11-16 18:15:50.9951690");
  EXPECT_EQ(later->Since(*azure), 4.314579);
  auto zoned = ParseTimestamp("2025-08-07T05:32:45.541+02:00");
  EXPECT_EQ(zoned->ns, t->ns);
}

TEST(TraceTimestampTest, RejectsMalformedText) {
  EXPECT_EQ(ParseTimestamp("2025-8-07T03:32:45Z").error().message(),
            "bad timestamp \"2025-8-07T03:32:45Z\"");
  EXPECT_FALSE(ParseTimestamp("2025-08-07T03:32:45Zjunk").ok());
  EXPECT_FALSE(ParseTimestamp("").ok());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
