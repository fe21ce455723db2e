#include "report/label_layout.h"

#include <algorithm>
#include <cassert>

namespace kvbill {
namespace {

// Average advance of a character in DejaVu Sans, in ems. Measured text of
// digits and lower case runs at 0.49 to 0.53 em; the margin keeps labels in.
constexpr double kCharWidthEm = 0.56;
constexpr double kAscentEm = 0.8;
constexpr double kDescentEm = 0.2;

}  // namespace

bool Overlaps(const PixelBox& a, const PixelBox& b) {
  return a.left_px < b.right_px && b.left_px < a.right_px && a.top_px < b.bottom_px &&
         b.top_px < a.bottom_px;
}

bool Contains(const PixelBox& outer, const PixelBox& inner) {
  return inner.left_px >= outer.left_px && inner.right_px <= outer.right_px &&
         inner.top_px >= outer.top_px && inner.bottom_px <= outer.bottom_px;
}

double EstimateTextWidthPx(std::string_view text, double font_px) {
  // Count code points: every byte that is not a UTF-8 continuation byte.
  const auto code_points = std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  });
  return static_cast<double>(code_points) * kCharWidthEm * font_px;
}

PixelBox LabelBox(const LabelPosition& at, double width_px, double font_px) {
  double left = at.x_px;
  if (at.anchor == TextAnchor::kMiddle) left -= width_px / 2.0;
  if (at.anchor == TextAnchor::kEnd) left -= width_px;
  return {.left_px = left,
          .top_px = at.baseline_px - kAscentEm * font_px,
          .right_px = left + width_px,
          .bottom_px = at.baseline_px + kDescentEm * font_px};
}

LabelPosition LabelLayout::Place(const std::vector<LabelPosition>& candidates, double width_px,
                                 double font_px) {
  assert(!candidates.empty());
  const LabelPosition* first_inside = nullptr;
  const LabelPosition* chosen = nullptr;
  for (const LabelPosition& candidate : candidates) {
    const PixelBox box = LabelBox(candidate, width_px, font_px);
    if (!Contains(bounds_, box)) continue;
    if (first_inside == nullptr) first_inside = &candidate;
    const bool free = std::none_of(taken_.begin(), taken_.end(),
                                   [&](const PixelBox& taken) { return Overlaps(box, taken); });
    if (free) {
      chosen = &candidate;
      break;
    }
  }
  if (chosen == nullptr) chosen = first_inside != nullptr ? first_inside : &candidates.front();
  taken_.push_back(LabelBox(*chosen, width_px, font_px));
  return *chosen;
}

}  // namespace kvbill
