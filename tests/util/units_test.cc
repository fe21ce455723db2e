#include "kvbill/util/units.h"

#include <gtest/gtest.h>

#include <limits>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Rounding up without an intermediate sum: 17 tokens in blocks of 16 take
// 2; the largest bit count, 2^63 - 1 = 8 x 1,152,921,504,606,846,975 + 7,
// takes 1,152,921,504,606,846,976 bytes (a + b - 1 overflowed there, which
// the sanitizer job caught in KvFootprintTest).
TEST(UnitsTest, CeilDivRoundsUpWithoutOverflow) {
  EXPECT_EQ(CeilDiv(0, 16), 0);
  EXPECT_EQ(CeilDiv(1, 16), 1);
  EXPECT_EQ(CeilDiv(16, 16), 1);
  EXPECT_EQ(CeilDiv(17, 16), 2);
  EXPECT_EQ(BitsToBytes(9'223'372'036'854'775'800), 1'152'921'504'606'846'975);
  EXPECT_EQ(BitsToBytes(std::numeric_limits<std::int64_t>::max()), 1'152'921'504'606'846'976);
}

TEST(UnitsTest, SuffixesAreBinaryAndPlainNumbersExact) {
  EXPECT_EQ(*ParseTokenCount("32k"), 32768);
  EXPECT_EQ(*ParseTokenCount("32K"), 32768);
  EXPECT_EQ(*ParseTokenCount("8Ki"), 8192);
  EXPECT_EQ(*ParseTokenCount("1M"), 1048576);
  EXPECT_EQ(*ParseTokenCount("1Mi"), 1048576);
  EXPECT_EQ(*ParseTokenCount("1000000"), 1000000);
  EXPECT_EQ(*ParseTokenCount("1.5k"), 1536);
}

TEST(UnitsTest, BadTokenCountsAreErrors) {
  EXPECT_FALSE(ParseTokenCount("").ok());
  EXPECT_FALSE(ParseTokenCount("-5").ok());
  EXPECT_FALSE(ParseTokenCount("0").ok());
  EXPECT_FALSE(ParseTokenCount("abc").ok());
  EXPECT_FALSE(ParseTokenCount("1.0001k").ok());   // 1024.1024 tokens
  EXPECT_FALSE(ParseTokenCount("2000000M").ok());  // above 2^40
  EXPECT_EQ(ParseTokenCount("12x").error().message(),
            "bad token count \"12x\" (expected e.g. 8192, 32k or 1M)");
}

TEST(UnitsTest, ParsesLists) {
  auto list = ParseTokenCountList("32k,128k,1M");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (std::vector<Tokens>{32768, 131072, 1048576}));
  EXPECT_FALSE(ParseTokenCountList("32k,,1M").ok());
}

TEST(UnitsTest, PositiveNumbersAreWholeFiniteAndAboveZero) {
  EXPECT_EQ(ParsePositiveNumber("0.25"), 0.25);
  EXPECT_EQ(ParsePositiveNumber("1e-3"), 0.001);
  // Hexadecimal, blanks and a '+' are not decimal numbers (std::stod read
  // " 0x2" as 2).
  for (const char* bad : {"", "0", "-1", "2s", "inf", "nan", "1e999", "x", "0x2", " 2", "+2"}) {
    EXPECT_EQ(ParsePositiveNumber(bad), std::nullopt) << bad;
  }
}

TEST(UnitsTest, FormatsNumbers) {
  EXPECT_EQ(FormatWithSeparators(70272), "70,272");
  EXPECT_EQ(FormatWithSeparators(-1234567), "-1,234,567");
  EXPECT_EQ(FormatWithSeparators(999), "999");
  EXPECT_EQ(FormatFixed(1234.5, 2), "1,234.50");
  // A share as a percentage with the decimals it needs, at most two.
  EXPECT_EQ(FormatPercentOf(0.9), "90");
  EXPECT_EQ(FormatPercentOf(0.835), "83.5");
  EXPECT_EQ(FormatPercentOf(0.8125), "81.25");
  EXPECT_EQ(FormatPercentOf(1.0 / 3.0), "33.33");
  // Four decimals from a cent up; below it three significant digits:
  // 0.0000312 = 3.12e-5, first digit in the 5th place, so 7 decimals.
  EXPECT_EQ(FormatUsdAmount(0.22), "$0.2200");
  EXPECT_EQ(FormatUsdAmount(-0.01), "$0.0100");
  EXPECT_EQ(FormatUsdAmount(0.0000312), "$0.0000312");
  EXPECT_EQ(FormatUsdAmount(0.005), "$0.00500");
  EXPECT_EQ(FormatUsdAmount(0), "$0.0000");
  EXPECT_EQ(FormatTokenCount(131072), "128k");
  EXPECT_EQ(FormatTokenCount(1048576), "1M");
  EXPECT_EQ(FormatTokenCount(1000000), "1,000,000");
  // 10^12 = 976,562,500 x 1,024: too many k to be short.
  EXPECT_EQ(FormatTokenCount(1000000000000), "1,000,000,000,000");
  EXPECT_EQ(FormatTokenCount(9999LL * 1024), "9999k");        // the last short k
  EXPECT_EQ(FormatTokenCount(10000LL * 1024), "10,240,000");  // 10,000 k is not
  EXPECT_EQ(FormatTokenCount(9999LL << 20), "9999M");
  EXPECT_EQ(FormatBinaryBytes(262144), "256.00 KiB");
  EXPECT_EQ(FormatBinaryBytes(8.0 * 1024 * 1024 * 1024), "8.00 GiB");
  EXPECT_EQ(FormatBinaryBytes(512), "512 B");
}

TEST(UnitsTest, BytesScaleUpToPebibytesAndBeyond) {
  const double kib = 1024.0, tib = kib * kib * kib * kib, pib = tib * kib;
  EXPECT_EQ(FormatBinaryBytes(1023), "1,023 B");
  EXPECT_EQ(FormatBinaryBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBinaryBytes(3 * tib), "3.00 TiB");
  // The simulate summary of 2,008,848.3 GiB: / 1,024^2 = 1.9158 PiB.
  EXPECT_EQ(FormatBinaryBytes(2008848.3 * kib * kib * kib), "1.92 PiB");
  EXPECT_EQ(FormatBinaryBytes(2 * pib * kib), "2.00 EiB");
  EXPECT_EQ(FormatBinaryBytes(3000 * pib * kib), "3,000.00 EiB");
  // 1,023.999 GiB would print as "1,024.00 GiB": it is 1.00 TiB.
  EXPECT_EQ(FormatBinaryBytes(1023.999 * kib * kib * kib), "1.00 TiB");
  EXPECT_EQ(FormatBinaryBytes(1023.99 * kib * kib * kib), "1,023.99 GiB");
}

TEST(UnitsTest, DurationsScaleFromSecondsToDays) {
  EXPECT_EQ(FormatDuration(0.354), "0.35 s");
  EXPECT_EQ(FormatDuration(9.99), "9.99 s");
  EXPECT_EQ(FormatDuration(9.996), "10.0 s");  // not "10.00 s"
  EXPECT_EQ(FormatDuration(42.0), "42.0 s");
  EXPECT_EQ(FormatDuration(59.96), "1.0 min");  // not "60.0 s"
  EXPECT_EQ(FormatDuration(210.0), "3.5 min");
  EXPECT_EQ(FormatDuration(3597.0), "1.0 h");  // 59.95 min would read 60.0 min
  EXPECT_EQ(FormatDuration(7560.0), "2.1 h");
  // The simulate summary of 16,896,479.0 s: / 86,400 = 195.561 days.
  EXPECT_EQ(FormatDuration(16896479.0), "195.6 days");
  EXPECT_EQ(FormatDuration(1e8), "1,157.4 days");  // 1e8 / 86,400 = 1,157.407
}

// Rates keep three significant digits below 10 (3 sessions over 43 days,
// 0.0465 tasks a day, once printed "0"), whole with separators above.
TEST(UnitsTest, FormatRateKeepsTheDigitsOfSmallRates) {
  EXPECT_EQ(FormatRate(2134.4), "2,134");
  EXPECT_EQ(FormatRate(10), "10");
  EXPECT_EQ(FormatRate(3.5), "3.50");
  EXPECT_EQ(FormatRate(0.0465), "0.0465");
  EXPECT_EQ(FormatRate(0.00012345), "0.000123");
  EXPECT_EQ(FormatRate(0), "0");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
