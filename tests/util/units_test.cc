#include "kvbill/util/units.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace {

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

TEST(UnitsTest, FormatsNumbers) {
  EXPECT_EQ(FormatWithSeparators(70272), "70,272");
  EXPECT_EQ(FormatWithSeparators(-1234567), "-1,234,567");
  EXPECT_EQ(FormatWithSeparators(999), "999");
  EXPECT_EQ(FormatFixed(1234.5, 2), "1,234.50");
  EXPECT_EQ(FormatTokenCount(131072), "128k");
  EXPECT_EQ(FormatTokenCount(1048576), "1M");
  EXPECT_EQ(FormatTokenCount(1000000), "1,000,000");
  EXPECT_EQ(FormatBinaryBytes(262144), "256.00 KiB");
  EXPECT_EQ(FormatBinaryBytes(8.0 * 1024 * 1024 * 1024), "8.00 GiB");
  EXPECT_EQ(FormatBinaryBytes(512), "512 B");
}

}  // namespace
}  // namespace kvbill
