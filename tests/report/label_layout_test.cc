#include "report/label_layout.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(LabelLayoutTest, BoxesThatOnlyTouchDoNotOverlap) {
  const PixelBox a{0, 0, 10, 10};
  EXPECT_FALSE(Overlaps(a, {10, 0, 20, 10}));
  EXPECT_FALSE(Overlaps(a, {0, 10, 10, 20}));
  EXPECT_TRUE(Overlaps(a, {9, 9, 20, 20}));
}

TEST(LabelLayoutTest, EstimatesWidthFromDejaVuSansAdvances) {
  // DejaVu Sans advances in 1/2048 em: a 1,255, b 1,300, c 1,126, d 1,300;
  // "abcd" is 4,981 units = 2.4321 em, x 10 px x 1.03 = 25.0510 px.
  EXPECT_NEAR(EstimateTextWidthPx("abcd", 10.0), 4981.0 / 2048.0 * 10.0 * 1.03, 1e-9);
  EXPECT_NEAR(EstimateTextWidthPx("abcd", 10.0), 25.051, 1e-3);
  // Headless Chromium draws "98.0%" at 12 px 38.125 px wide (9, 8 and 0 are
  // 1,303 units, '.' 651, '%' 1,946): the estimate is 3% wider.
  EXPECT_NEAR(EstimateTextWidthPx("98.0%", 12.0), 38.125 * 1.03, 0.01);
  // "−" (U+2212) is 3 bytes but one character, counted as an em: "a−b" is
  // (1,255 + 2,048 + 1,300) / 2,048 em.
  EXPECT_NEAR(EstimateTextWidthPx("a\u2212b", 10.0), 4603.0 / 2048.0 * 10.0 * 1.03, 1e-9);
}

TEST(LabelLayoutTest, LabelBoxFollowsTheAnchor) {
  // 50 px of 10 px text ending at x 100: 50..100; ascent 10, descent 3.
  const PixelBox box = LabelBox({100.0, 40.0, TextAnchor::kEnd}, 50.0, 10.0);
  EXPECT_DOUBLE_EQ(box.left_px, 50.0);
  EXPECT_DOUBLE_EQ(box.right_px, 100.0);
  EXPECT_DOUBLE_EQ(box.top_px, 30.0);
  EXPECT_DOUBLE_EQ(box.bottom_px, 43.0);
  EXPECT_DOUBLE_EQ(LabelBox({100.0, 40.0, TextAnchor::kMiddle}, 50.0, 10.0).left_px, 75.0);
}

TEST(LabelLayoutTest, PlacesEachLabelAtTheFirstFreeCandidate) {
  // Both labels prefer (10, 20); the second finds it taken and moves to (10, 50).
  LabelLayout layout({0, 0, 200, 100});
  const std::vector<LabelPosition> candidates = {{10, 20, TextAnchor::kStart},
                                                 {10, 50, TextAnchor::kStart}};
  EXPECT_EQ(layout.Place(candidates, 40, 10).baseline_px, 20.0);
  EXPECT_EQ(layout.Place(candidates, 40, 10).baseline_px, 50.0);
}

TEST(LabelLayoutTest, SkipsCandidatesOutsideTheBoundsAndBlockedBoxes) {
  // (190, 20) would run past x 200; (10, 20) is blocked; (10, 80) is free.
  LabelLayout layout({0, 0, 200, 100});
  layout.Block({0, 0, 100, 30});
  const LabelPosition at = layout.Place(
      {{190, 20, TextAnchor::kStart}, {10, 20, TextAnchor::kStart}, {10, 80, TextAnchor::kStart}},
      40, 10);
  EXPECT_EQ(at.baseline_px, 80.0);
}

TEST(LabelLayoutTest, FallsBackToTheFirstCandidateInsideWhenAllOverlap) {
  LabelLayout layout({0, 0, 200, 100});
  layout.Block({0, 0, 200, 100});
  const LabelPosition at = layout.Place(
      {{190, 20, TextAnchor::kStart}, {10, 20, TextAnchor::kStart}, {10, 80, TextAnchor::kStart}},
      40, 10);
  EXPECT_EQ(at.x_px, 10.0);
  EXPECT_EQ(at.baseline_px, 20.0);
}

TEST(LabelLayoutTest, FallsBackToTheFirstCandidateWhenNoneFits) {
  LabelLayout layout({0, 0, 20, 20});
  const LabelPosition at =
      layout.Place({{5, 10, TextAnchor::kEnd}, {15, 10, TextAnchor::kStart}}, 40, 10);
  EXPECT_EQ(at.x_px, 5.0);
  EXPECT_EQ(at.anchor, TextAnchor::kEnd);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
