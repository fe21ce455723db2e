// LabelLayout: places text labels inside a rectangle so that they overlap
// neither each other nor regions marked as taken, choosing for each label the
// best of a few positions its caller ranks. Private to the SVG chart code.
//
// Pixel coordinates throughout, y growing downwards. Text extents are
// estimates (no font metrics are available): an average advance per
// character for DejaVu Sans, ascent 0.8 em and descent 0.2 em.
#ifndef KVBILL_REPORT_LABEL_LAYOUT_H_
#define KVBILL_REPORT_LABEL_LAYOUT_H_

#include <string_view>
#include <vector>

namespace kvbill {

struct PixelBox {
  double left_px = 0.0;
  double top_px = 0.0;
  double right_px = 0.0;
  double bottom_px = 0.0;
};

// True when the interiors of `a` and `b` intersect (touching edges do not).
bool Overlaps(const PixelBox& a, const PixelBox& b);

// True when `inner` lies within `outer`.
bool Contains(const PixelBox& outer, const PixelBox& inner);

// Where the anchor point sits on the text, as SVG's text-anchor.
enum class TextAnchor { kStart, kMiddle, kEnd };

struct LabelPosition {
  double x_px = 0.0;         // the anchor point
  double baseline_px = 0.0;  // y of the text's baseline
  TextAnchor anchor = TextAnchor::kStart;
};

// Estimated advance width of `text` (UTF-8) at `font_px`, erring wide.
double EstimateTextWidthPx(std::string_view text, double font_px);

// The box that `width_px` of text at `font_px` covers when drawn at `at`.
PixelBox LabelBox(const LabelPosition& at, double width_px, double font_px);

class LabelLayout {
 public:
  // Labels must stay within `bounds`.
  explicit LabelLayout(const PixelBox& bounds) : bounds_(bounds) {}

  // Marks `box` as taken: no later label is placed over it.
  void Block(const PixelBox& box) { taken_.push_back(box); }

  // Chooses among `candidates` (best first) the first that lies within the
  // bounds and overlaps nothing taken; when none does, the first within the
  // bounds; when none is, candidates[0]. Marks the chosen box as taken.
  // Precondition: `candidates` is not empty.
  LabelPosition Place(const std::vector<LabelPosition>& candidates, double width_px,
                      double font_px);

 private:
  PixelBox bounds_;
  std::vector<PixelBox> taken_;
};

}  // namespace kvbill

#endif  // KVBILL_REPORT_LABEL_LAYOUT_H_
