// Checks, in the browser that renders them, that the labels of every kvbill
// chart on the page leave the data visible. Appended by
// tests/cli/chromium_render_test.cc to a copy of a page; writes its findings
// into <pre id="kvbill-geometry"> for `chromium --dump-dom` to print:
//
//   checked S charts, L labels, G legend rows, K line segments
//   <one line per problem>
//
// In each <svg>, in the document's own coordinates:
// - the lines are the <path>s of the group whose id ends in "series" (their
//   "M x y L x y ..." data) and the <line>s of the "reference-lines" group;
// - the labels are the <text>s of the "annotations" group, measured with the
//   fonts the browser really uses (getBBox), and the <rect>s drawn under them.
// A problem is a line through a label's text or its box, two labels whose
// texts overlap, a label's text sticking out of its box, or a legend text that
// runs past the right edge of the chart.
(function () {
  'use strict';
  const problems = [];
  let charts = 0, labels = 0, legendRows = 0, segmentCount = 0;

  // Whether segment (x0, y0)-(x1, y1) passes through the interior of box b.
  function crosses(s, b) {
    const dx = s.x1 - s.x0, dy = s.y1 - s.y0;
    const p = [-dx, dx, -dy, dy];
    const q = [s.x0 - b.left, b.right - s.x0, s.y0 - b.top, b.bottom - s.y0];
    let t0 = 0, t1 = 1;
    for (let i = 0; i < 4; i++) {
      if (p[i] === 0) {
        if (q[i] <= 0) return false;
        continue;
      }
      const r = q[i] / p[i];
      if (p[i] < 0) t0 = Math.max(t0, r); else t1 = Math.min(t1, r);
    }
    return t0 < t1;
  }

  function group(svg, suffix) {
    for (const g of svg.querySelectorAll('g[id]')) {
      if (g.id === suffix || g.id.endsWith('-' + suffix)) return g;
    }
    return null;
  }

  function segmentsOf(svg) {
    const out = [];
    const series = group(svg, 'series');
    if (series) {
      for (const path of series.querySelectorAll('path')) {
        const tokens = path.getAttribute('d').match(/[ML]|-?[0-9.]+/g) || [];
        let x = 0, y = 0;
        for (let i = 0; i < tokens.length; i += 3) {
          const nx = parseFloat(tokens[i + 1]), ny = parseFloat(tokens[i + 2]);
          if (tokens[i] === 'L') out.push({x0: x, y0: y, x1: nx, y1: ny});
          x = nx;
          y = ny;
        }
      }
    }
    const lines = group(svg, 'reference-lines');
    if (lines) {
      for (const l of lines.querySelectorAll('line')) {
        const a = (n) => parseFloat(l.getAttribute(n));
        out.push({x0: a('x1'), y0: a('y1'), x1: a('x2'), y1: a('y2')});
      }
    }
    return out;
  }

  function box(r) {
    return {left: r.x, top: r.y, right: r.x + r.width, bottom: r.y + r.height};
  }

  function show(b) {
    return '[' + [b.left, b.top, b.right, b.bottom].map((v) => v.toFixed(1)).join(', ') + ']';
  }

  for (const svg of document.querySelectorAll('svg')) {
    charts++;
    const title = (svg.querySelector('text[font-weight="bold"]') || {}).textContent || '';
    const where = 'chart "' + title + '": ';
    const segments = segmentsOf(svg);
    segmentCount += segments.length;
    const notes = group(svg, 'annotations');
    const texts = [];
    if (notes) {
      for (const text of notes.querySelectorAll('text')) {
        labels++;
        const t = box(text.getBBox());
        texts.push({text: text.textContent, box: t});
        const rect = text.previousElementSibling;
        const r = rect && rect.tagName === 'rect' ? box(rect.getBBox()) : null;
        if (r && (t.left < r.left - 0.5 || t.right > r.right + 0.5 || t.top < r.top - 0.5 ||
                  t.bottom > r.bottom + 0.5)) {
          problems.push(where + 'label "' + text.textContent + '" text ' + show(t) +
                        ' sticks out of its box ' + show(r));
        }
        for (const s of segments) {
          if (crosses(s, t) || (r && crosses(s, r))) {
            problems.push(where + 'label "' + text.textContent + '" ' + show(r || t) +
                          ' is crossed by the line (' + s.x0.toFixed(1) + ', ' +
                          s.y0.toFixed(1) + ')-(' + s.x1.toFixed(1) + ', ' + s.y1.toFixed(1) + ')');
            break;
          }
        }
      }
    }
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i].box, b = texts[j].box;
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
          problems.push(where + 'labels "' + texts[i].text + '" and "' + texts[j].text +
                        '" overlap');
        }
      }
    }
    const width = svg.viewBox.baseVal.width;
    const legend = group(svg, 'legend');
    if (legend) {
      for (const text of legend.querySelectorAll('text')) {
        legendRows++;
        const t = box(text.getBBox());
        if (t.right > width) {
          problems.push(where + 'legend text "' + text.textContent + '" ends at ' +
                        t.right.toFixed(1) + ', past the chart\'s width ' + width);
        }
      }
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'kvbill-geometry';
  pre.textContent = 'checked ' + charts + ' charts, ' + labels + ' labels, ' + legendRows +
                    ' legend rows, ' + segmentCount + ' line segments\n' +
                    problems.map((p) => p + '\n').join('');
  document.body.appendChild(pre);
})();
