#include "cli/json_number.h"

#include <gtest/gtest.h>

namespace kvbill::cli {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Whole numbers of bytes past 9e15 stay integers, digit for digit: doubles
// hold integers exactly only up to 2^53 = 9,007,199,254,740,992.
TEST(JsonNumberTest, WholeNumbersUpToTheInt64RangeAreExactIntegers) {
  // 2^53 + 1 = 9,007,199,254,740,993: a double would read ...992.
  EXPECT_EQ(JsonNumber(9007199254740993.0L).dump(), "9007199254740993");
  // 2^60 + 1 = 1,152,921,504,606,846,977 (1.15e18).
  EXPECT_EQ(JsonNumber(1152921504606846977.0L).dump(), "1152921504606846977");
  // The int64 ends: 2^63 - 1 and -2^63.
  EXPECT_EQ(JsonNumber(9223372036854775807.0L).dump(), "9223372036854775807");
  EXPECT_EQ(JsonNumber(-9223372036854775808.0L).dump(), "-9223372036854775808");
  EXPECT_TRUE(JsonNumber(12.0L).is_number_integer());
}

// Past int64, and any fraction: the double, at full precision.
TEST(JsonNumberTest, FractionsAndValuesPastInt64AreDoubles) {
  // 2^63 = 9,223,372,036,854,775,808: the shortest double text.
  EXPECT_EQ(JsonNumber(9223372036854775808.0L).dump(), "9.223372036854776e+18");
  EXPECT_EQ(JsonNumber(2.5L).dump(), "2.5");
  EXPECT_TRUE(JsonNumber(0.1L).is_number_float());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill::cli
