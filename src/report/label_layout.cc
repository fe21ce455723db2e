#include "report/label_layout.h"

#include <algorithm>
#include <array>
#include <cassert>

namespace kvbill {
namespace {

// Advance widths of the printable ASCII characters U+0020 (space) to U+007E
// ('~') in DejaVu Sans, the charts' first font, in 1/2048 em: the hmtx entries
// of the glyphs DejaVuSans.ttf 2.37 (Debian's fonts-dejavu-core) maps them to.
// Headless Chromium measures "98.0%" at 12 px as 38.125 px; the table gives
// (3 x 1,303 + 651 + 1,946) / 2,048 x 12 = 38.12.
constexpr std::array<int, 95> kDejaVuSansAdvance = {
    651,  821,  942,  1716, 1303, 1946, 1597, 563,  799,  799,  1024, 1716, 651,  739,  651,  690,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690,  690,  1716, 1716, 1716, 1087,
    2048, 1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604,  604,  1343, 1141, 1767, 1532, 1612,
    1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799,  690,  799,  1716, 1024,
    1024, 1255, 1300, 1126, 1300, 1260, 721,  1300, 1298, 569,  569,  1186, 569,  1995, 1298, 1253,
    1300, 1300, 842,  1067, 803,  1298, 1212, 1675, 1212, 1212, 1075, 1303, 690,  1303, 1716,
};
constexpr double kUnitsPerEm = 2048.0;
// Any other code point counts as a whole em, wider than most glyphs.
constexpr double kOtherCharEm = 1.0;
// Browsers round glyph positions and may scale a chart: 3% more, so that a
// label stays inside its box.
constexpr double kWidthMargin = 1.03;
// DejaVu Sans's ascender and descender are 1,901 and 483 units (0.93 and
// 0.24 em); Chromium rounds each to whole pixels of the scaled font, so a
// label's box takes 1.0 and 0.3 em.
constexpr double kAscentEm = 1.0;
constexpr double kDescentEm = 0.3;

}  // namespace

bool Overlaps(const PixelBox& a, const PixelBox& b) {
  return a.left_px < b.right_px && b.left_px < a.right_px && a.top_px < b.bottom_px &&
         b.top_px < a.bottom_px;
}

bool Contains(const PixelBox& outer, const PixelBox& inner) {
  return inner.left_px >= outer.left_px && inner.right_px <= outer.right_px &&
         inner.top_px >= outer.top_px && inner.bottom_px <= outer.bottom_px;
}

bool Crosses(const PixelSegment& segment, const PixelBox& box) {
  // Liang-Barsky: the part of the segment inside the box's closed slabs is
  // t in [t0, t1]; it crosses the interior when that part has length and
  // lies strictly inside in the directions it does not move along.
  const double dx = segment.x1_px - segment.x0_px;
  const double dy = segment.y1_px - segment.y0_px;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {segment.x0_px - box.left_px, box.right_px - segment.x0_px,
                       segment.y0_px - box.top_px, box.bottom_px - segment.y0_px};
  double t0 = 0.0;
  double t1 = 1.0;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0.0) {
      if (q[i] <= 0.0) return false;  // parallel to this edge, outside or on it
      continue;
    }
    const double r = q[i] / p[i];
    if (p[i] < 0.0) {
      t0 = std::max(t0, r);
    } else {
      t1 = std::min(t1, r);
    }
  }
  return t0 < t1;
}

double EstimateTextWidthPx(std::string_view text, double font_px) {
  double ems = 0.0;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte <= 0x7E) {
      ems += kDejaVuSansAdvance[byte - 0x20] / kUnitsPerEm;
    } else if ((byte & 0xC0) != 0x80) {  // the first byte of any other code point
      ems += kOtherCharEm;
    }
  }
  return ems * font_px * kWidthMargin;
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

PixelBox Grown(const PixelBox& box, double px) {
  return {box.left_px - px, box.top_px - px, box.right_px + px, box.bottom_px + px};
}

bool LabelLayout::IsFree(const PixelBox& box) const {
  if (!Contains(bounds_, box)) return false;
  const PixelBox padded = Grown(box, kLabelPadPx);
  if (std::any_of(taken_.begin(), taken_.end(),
                  [&](const PixelBox& taken) { return Overlaps(padded, taken); })) {
    return false;
  }
  const PixelBox clear = Grown(box, kLineClearancePx);
  return std::none_of(lines_.begin(), lines_.end(),
                      [&](const PixelSegment& line) { return Crosses(line, clear); });
}

std::optional<LabelPosition> LabelLayout::PlaceFree(const std::vector<LabelPosition>& candidates,
                                                    double width_px, double font_px) {
  for (const LabelPosition& candidate : candidates) {
    const PixelBox box = LabelBox(candidate, width_px, font_px);
    if (IsFree(box)) {
      taken_.push_back(Grown(box, kLabelPadPx));
      return candidate;
    }
  }
  return std::nullopt;
}

LabelPosition LabelLayout::Place(const std::vector<LabelPosition>& candidates, double width_px,
                                 double font_px) {
  assert(!candidates.empty());
  if (std::optional<LabelPosition> free = PlaceFree(candidates, width_px, font_px)) return *free;
  const LabelPosition* chosen = &candidates.front();
  for (const LabelPosition& candidate : candidates) {
    if (Contains(bounds_, LabelBox(candidate, width_px, font_px))) {
      chosen = &candidate;
      break;
    }
  }
  taken_.push_back(Grown(LabelBox(*chosen, width_px, font_px), kLabelPadPx));
  return *chosen;
}

}  // namespace kvbill
