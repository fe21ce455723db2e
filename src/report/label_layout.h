// LabelLayout: places text labels inside a rectangle so that they overlap
// neither each other, nor regions marked as taken, nor the lines drawn in it,
// choosing for each label the best of a few positions its caller ranks.
// Private to the SVG chart code.
//
// Pixel coordinates throughout, y growing downwards. Text extents are
// estimates from DejaVu Sans's metrics (the charts' first font): each ASCII
// character's advance width, an em for any other character, 3% more for
// rounding, and 1.0 em above the baseline, 0.3 em below it.
#ifndef KVBILL_REPORT_LABEL_LAYOUT_H_
#define KVBILL_REPORT_LABEL_LAYOUT_H_

#include <optional>
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

// `box` with `px` added on every side.
PixelBox Grown(const PixelBox& box, double px);

// A straight piece of a drawn line.
struct PixelSegment {
  double x0_px = 0.0;
  double y0_px = 0.0;
  double x1_px = 0.0;
  double y1_px = 0.0;
};

// True when `segment` passes through the interior of `box` (a segment along
// an edge or ending on it does not).
bool Crosses(const PixelSegment& segment, const PixelBox& box);

// Where the anchor point sits on the text, as SVG's text-anchor.
enum class TextAnchor { kStart, kMiddle, kEnd };

struct LabelPosition {
  double x_px = 0.0;         // the anchor point
  double baseline_px = 0.0;  // y of the text's baseline
  TextAnchor anchor = TextAnchor::kStart;
};

// Estimated advance width of `text` (UTF-8) at `font_px`, erring wide: the
// DejaVu Sans advances of its ASCII characters, an em for any other, plus 3%.
double EstimateTextWidthPx(std::string_view text, double font_px);

// The box that `width_px` of text at `font_px` covers when drawn at `at`.
PixelBox LabelBox(const LabelPosition& at, double width_px, double font_px);

class LabelLayout {
 public:
  // Labels must stay within `bounds`.
  explicit LabelLayout(const PixelBox& bounds) : bounds_(bounds) {}

  // Marks `box` as taken: no later label is placed over it.
  void Block(const PixelBox& box) { taken_.push_back(box); }

  // Marks a drawn line: no later label box, grown by kLineClearancePx on
  // every side, is crossed by it.
  void BlockLine(const PixelSegment& segment) { lines_.push_back(segment); }

  // A label's background extends this far beyond its text box on every
  // side; two labels' backgrounds never overlap.
  static constexpr double kLabelPadPx = 1.0;

  // The room kept between a label's text box and a line: its background, and
  // half of a 1 px stroke.
  static constexpr double kLineClearancePx = kLabelPadPx + 0.5;

  // The first of `candidates` (best first) that lies within the bounds,
  // whose box grown by kLabelPadPx overlaps nothing taken, and that no line
  // crosses within kLineClearancePx; nullopt when there is none. Marks the
  // chosen box, grown by kLabelPadPx, as taken.
  std::optional<LabelPosition> PlaceFree(const std::vector<LabelPosition>& candidates,
                                         double width_px, double font_px);

  // PlaceFree's choice; when there is none, the first candidate within the
  // bounds; when none is, candidates[0]. Marks the chosen box (grown by
  // kLabelPadPx) as taken.
  // Precondition: `candidates` is not empty.
  LabelPosition Place(const std::vector<LabelPosition>& candidates, double width_px,
                      double font_px);

 private:
  bool IsFree(const PixelBox& box) const;

  PixelBox bounds_;
  std::vector<PixelBox> taken_;
  std::vector<PixelSegment> lines_;
};

}  // namespace kvbill

#endif  // KVBILL_REPORT_LABEL_LAYOUT_H_
