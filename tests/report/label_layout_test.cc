#include "report/label_layout.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvbill {
namespace {

TEST(LabelLayoutTest, BoxesThatOnlyTouchDoNotOverlap) {
  const PixelBox a{0, 0, 10, 10};
  EXPECT_FALSE(Overlaps(a, {10, 0, 20, 10}));
  EXPECT_FALSE(Overlaps(a, {0, 10, 10, 20}));
  EXPECT_TRUE(Overlaps(a, {9, 9, 20, 20}));
}

TEST(LabelLayoutTest, EstimatesWidthPerCodePoint) {
  // 0.56 em per character: 4 x 0.56 x 10 = 22.4. "−" (U+2212) is 3 bytes but
  // one character: "a−b" is 3 x 5.6 = 16.8.
  EXPECT_DOUBLE_EQ(EstimateTextWidthPx("abcd", 10.0), 22.4);
  EXPECT_DOUBLE_EQ(EstimateTextWidthPx("a\u2212b", 10.0), 16.8);
}

TEST(LabelLayoutTest, LabelBoxFollowsTheAnchor) {
  // 50 px of 10 px text ending at x 100: 50..100; ascent 8, descent 2.
  const PixelBox box = LabelBox({100.0, 40.0, TextAnchor::kEnd}, 50.0, 10.0);
  EXPECT_DOUBLE_EQ(box.left_px, 50.0);
  EXPECT_DOUBLE_EQ(box.right_px, 100.0);
  EXPECT_DOUBLE_EQ(box.top_px, 32.0);
  EXPECT_DOUBLE_EQ(box.bottom_px, 42.0);
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
}  // namespace kvbill
