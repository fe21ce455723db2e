// Reads a chart's geometry back from the SVG text RenderSvg wrote, in the
// document's own pixel coordinates: the polylines drawn for the data (the
// <path>s of the "series" group), the reference lines (the <line>s of the
// "reference-lines" group) and the boxes behind the point and line labels
// (the <rect>s of the "annotations" group). Tests use it to check that no
// label covers a line, independently of how the renderer placed them.
#ifndef KVBILL_TESTS_REPORT_SVG_GEOMETRY_H_
#define KVBILL_TESTS_REPORT_SVG_GEOMETRY_H_

#include <cstdlib>
#include <string>
#include <vector>

namespace kvbill::testing {

struct SvgSegment {
  double x0, y0, x1, y1;
};

struct SvgBox {
  double left, top, right, bottom;
  std::string text;  // the label drawn on it
};

// The text between `<g id="...ID">` and its `</g>` (groups here do not
// nest); "" when there is none. A suffix match, so that the ids a page
// prefixes ("memory-series") are found too.
inline std::string SvgGroup(const std::string& svg, const std::string& id) {
  const std::string open = id + "\">";
  for (std::size_t at = svg.find("<g id=\""); at != std::string::npos;
       at = svg.find("<g id=\"", at + 1)) {
    const std::size_t end_of_tag = svg.find("\">", at);
    if (end_of_tag == std::string::npos) break;
    const std::string tag = svg.substr(at, end_of_tag + 2 - at);
    if (tag.size() >= open.size() &&
        tag.compare(tag.size() - open.size(), open.size(), open) == 0) {
      const std::size_t close = svg.find("</g>", end_of_tag);
      return svg.substr(end_of_tag + 2, close - end_of_tag - 2);
    }
  }
  return "";
}

// The value of attribute `name` in the tag starting at `tag_start`.
inline double SvgAttribute(const std::string& text, std::size_t tag_start,
                           const std::string& name) {
  const std::size_t tag_end = text.find('>', tag_start);
  const std::size_t at = text.find(" " + name + "=\"", tag_start);
  if (at == std::string::npos || at > tag_end) return 0.0;
  return std::strtod(text.c_str() + at + name.size() + 3, nullptr);
}

// Every straight segment of the data polylines and reference lines.
inline std::vector<SvgSegment> DrawnSegments(const std::string& svg) {
  std::vector<SvgSegment> out;
  const std::string series = SvgGroup(svg, "series");
  for (std::size_t at = series.find("<path d=\""); at != std::string::npos;
       at = series.find("<path d=\"", at + 1)) {
    const char* p = series.c_str() + at + 9;
    double x = 0, y = 0;
    while (*p == 'M' || *p == 'L') {
      const char command = *p;
      char* end = nullptr;
      const double nx = std::strtod(p + 1, &end);
      const double ny = std::strtod(end, &end);
      if (command == 'L') out.push_back({x, y, nx, ny});
      x = nx;
      y = ny;
      p = end;
    }
  }
  const std::string lines = SvgGroup(svg, "reference-lines");
  for (std::size_t at = lines.find("<line "); at != std::string::npos;
       at = lines.find("<line ", at + 1)) {
    out.push_back({SvgAttribute(lines, at, "x1"), SvgAttribute(lines, at, "y1"),
                   SvgAttribute(lines, at, "x2"), SvgAttribute(lines, at, "y2")});
  }
  return out;
}

// The label boxes (the white <rect> under each label) and their texts.
inline std::vector<SvgBox> LabelBoxes(const std::string& svg) {
  std::vector<SvgBox> out;
  const std::string notes = SvgGroup(svg, "annotations");
  for (std::size_t at = notes.find("<rect "); at != std::string::npos;
       at = notes.find("<rect ", at + 1)) {
    const double x = SvgAttribute(notes, at, "x"), y = SvgAttribute(notes, at, "y");
    SvgBox box{x, y, x + SvgAttribute(notes, at, "width"), y + SvgAttribute(notes, at, "height"),
               ""};
    const std::size_t text = notes.find("<text ", at);
    if (text != std::string::npos) {
      const std::size_t begin = notes.find('>', text) + 1;
      box.text = notes.substr(begin, notes.find("</text>", begin) - begin);
    }
    out.push_back(box);
  }
  return out;
}

// Whether segment `s` passes through the interior of `b` (Liang-Barsky).
inline bool Crosses(const SvgSegment& s, const SvgBox& b) {
  const double dx = s.x1 - s.x0, dy = s.y1 - s.y0;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {s.x0 - b.left, b.right - s.x0, s.y0 - b.top, b.bottom - s.y0};
  double t0 = 0.0, t1 = 1.0;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0.0) {
      if (q[i] <= 0.0) return false;  // parallel and outside (or on the edge)
      continue;
    }
    const double r = q[i] / p[i];
    if (p[i] < 0.0) {
      t0 = r > t0 ? r : t0;
    } else {
      t1 = r < t1 ? r : t1;
    }
  }
  return t0 < t1;
}

// "label "T" [l, t, r, b] covers segment (x0, y0)-(x1, y1)" for every label
// box a drawn line passes through; empty when none does.
inline std::vector<std::string> LabelsOverLines(const std::string& svg) {
  std::vector<std::string> out;
  const std::vector<SvgSegment> segments = DrawnSegments(svg);
  for (const SvgBox& b : LabelBoxes(svg)) {
    for (const SvgSegment& s : segments) {
      if (Crosses(s, b)) {
        out.push_back("label \"" + b.text + "\" [" + std::to_string(b.left) + ", " +
                      std::to_string(b.top) + ", " + std::to_string(b.right) + ", " +
                      std::to_string(b.bottom) + "] covers the segment (" + std::to_string(s.x0) +
                      ", " + std::to_string(s.y0) + ")-(" + std::to_string(s.x1) + ", " +
                      std::to_string(s.y1) + ")");
        break;
      }
    }
  }
  return out;
}

// Pairs of label boxes that overlap.
inline std::vector<std::string> OverlappingLabels(const std::string& svg) {
  std::vector<std::string> out;
  const std::vector<SvgBox> boxes = LabelBoxes(svg);
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      const SvgBox &a = boxes[i], &b = boxes[j];
      if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
        out.push_back("\"" + a.text + "\" overlaps \"" + b.text + "\"");
      }
    }
  }
  return out;
}

}  // namespace kvbill::testing

#endif  // KVBILL_TESTS_REPORT_SVG_GEOMETRY_H_
