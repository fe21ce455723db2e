#include "kvbill/model/kv_format.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

ElementFormat Format(const std::string& name) {
  auto f = ParseElementFormat(name);
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().message());
  return f.ok() ? *f : ElementFormat{};
}

TEST(KvFormatTest, PlainFormatsHaveNoMetadata) {
  EXPECT_EQ(Format("bf16").VectorBits(128), 128 * 16);
  EXPECT_EQ(Format("fp16").VectorBits(128), 128 * 16);
  EXPECT_EQ(Format("fp32").VectorBits(128), 128 * 32);
  // fp8 with one scale per tensor: 8 bits per element, nothing per token.
  EXPECT_EQ(Format("fp8").VectorBits(128), 128 * 8);
  EXPECT_EQ(Format("fp8").name, "fp8-e4m3");
  EXPECT_EQ(Format("fp8-e5m2").VectorBits(128), 128 * 8);
}

TEST(KvFormatTest, Nvfp4AddsOneByteScalePerSixteenElements) {
  // 128 elements: 128 * 4 = 512 bits + 8 groups * 8 bits = 576 bits = 4.5 bits/element.
  EXPECT_EQ(Format("nvfp4").VectorBits(128), 576);
  EXPECT_DOUBLE_EQ(Format("nvfp4").BitsPerElement(128), 4.5);
}

TEST(KvFormatTest, Mxfp4AddsOneByteScalePerThirtyTwoElements) {
  // 128 * 4 + 4 * 8 = 544 bits = 4.25 bits/element.
  EXPECT_EQ(Format("mxfp4").VectorBits(128), 544);
  EXPECT_DOUBLE_EQ(Format("mxfp4").BitsPerElement(128), 4.25);
}

TEST(KvFormatTest, GroupIntegersCarryFp16ScaleAndZeroPerGroup) {
  // int4, group 32: 4 + 32/32 = 5 bits/element; int2: 2 + 1 = 3.
  EXPECT_DOUBLE_EQ(Format("int4").BitsPerElement(128), 5.0);
  EXPECT_DOUBLE_EQ(Format("int2").BitsPerElement(128), 3.0);
  EXPECT_EQ(Format("int4").name, "int4-g32");
  // int4, group 128: 4 + 32/128 = 4.25.
  EXPECT_DOUBLE_EQ(Format("int4-g128").BitsPerElement(128), 4.25);
  // A 576-element MLA latent in int2-g64: 1152 + 9 * 32 = 1440 bits.
  EXPECT_EQ(Format("int2-g64").VectorBits(576), 1440);
}

TEST(KvFormatTest, PerTokenHeadFp8HasOneFp32ScalePerVector) {
  // 128 * 8 + 32 = 1056 bits = 8.25 bits/element; 64-element heads: 8.5.
  EXPECT_EQ(Format("fp8-per-token-head").VectorBits(128), 1056);
  EXPECT_DOUBLE_EQ(Format("fp8-per-token-head").BitsPerElement(64), 8.5);
}

TEST(KvFormatTest, GroupsNeverStraddleVectors) {
  // 72 elements in nvfp4: ceil(72/16) = 5 groups -> 288 + 40 = 328 bits.
  EXPECT_EQ(Format("nvfp4").VectorBits(72), 328);
}

TEST(KvFormatTest, UnknownFormatIsAnErrorListingTheKnownOnes) {
  auto f = ParseElementFormat("fp6");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message().rfind("unknown format \"fp6\" (known: bf16, fp16, fp32, fp8,", 0),
            0u)
      << f.error().message();
  EXPECT_EQ(f.error().exit_status(), 2);
}

TEST(KvFormatTest, BadGroupSizeIsAnError) {
  EXPECT_FALSE(ParseElementFormat("int4-g3").ok());
  EXPECT_FALSE(ParseElementFormat("int4-g").ok());
  EXPECT_FALSE(ParseElementFormat("int4-g4096").ok());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
