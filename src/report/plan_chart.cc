#include "kvbill/report/plan_chart.h"

#include <algorithm>
#include <cmath>

#include "kvbill/util/units.h"

namespace kvbill {
namespace {

constexpr std::string_view kOtherColor = "#999999";

// An axis from 0 to a little above `most`, so that no point sits on the edge.
Axis FromZero(const std::string& label, double most) {
  Axis a;
  a.label = label;
  a.min = 0;
  a.max = most > 0 ? most * 1.15 : 1.0;
  return a;
}

}  // namespace

Result<LineChart> BuildPlanChart(const PlanChartData& plan) {
  // The points: feasible candidates with a TTFT, cheapest first as ranked.
  std::vector<const PlanChartPoint*> drawn;
  for (const PlanChartPoint& p : plan.feasible) {
    if (p.ttft_p90_s) drawn.push_back(&p);
  }
  if (drawn.empty()) return Error("the plan has no feasible candidate with a TTFT p90 to draw");
  double most_usd = 0, most_ttft = 0;
  for (const PlanChartPoint* p : drawn) {
    if (!std::isfinite(p->usd_per_task) || p->usd_per_task < 0 || !std::isfinite(*p->ttft_p90_s) ||
        *p->ttft_p90_s < 0) {
      return Error("candidate " + std::to_string(p->index) +
                   ": $/task and TTFT p90 must be finite and non-negative");
    }
    most_usd = std::max(most_usd, p->usd_per_task);
    most_ttft = std::max(most_ttft, *p->ttft_p90_s);
  }
  LineChart chart;
  chart.title = "Plan: dollars per task against TTFT p90";
  chart.subtitle = std::to_string(drawn.size()) +
                   " feasible candidates; the Pareto front in blue, the cheapest labelled";
  chart.x_axis = FromZero("TTFT p90 (s)", most_ttft);
  chart.y_axis = FromZero("dollars per task", most_usd);
  chart.height_px = 460;
  chart.legend = LegendPlacement::kTopLeftInside;
  Series front;
  front.name = "Pareto front";
  front.color = std::string(kChartPalette[0]);
  std::vector<const PlanChartPoint*> on_front;
  for (const PlanChartPoint* p : drawn) {
    if (p->pareto) on_front.push_back(p);
  }
  std::stable_sort(on_front.begin(), on_front.end(),
                   [](const PlanChartPoint* a, const PlanChartPoint* b) {
                     return *a->ttft_p90_s < *b->ttft_p90_s;
                   });
  for (const PlanChartPoint* p : on_front)
    front.points.push_back({*p->ttft_p90_s, p->usd_per_task});
  chart.series = {front};
  // Markers: the others first, then the front's, then the cheapest, labelled.
  const PlanChartPoint* cheapest_drawn = drawn.front();
  for (const PlanChartPoint* p : drawn) {
    if (!p->pareto && p != cheapest_drawn) {
      chart.annotations.push_back({*p->ttft_p90_s, p->usd_per_task, "", std::string(kOtherColor)});
    }
  }
  for (const PlanChartPoint* p : on_front) {
    if (p != cheapest_drawn) {
      chart.annotations.push_back({*p->ttft_p90_s, p->usd_per_task, "", front.color});
    }
  }
  const PlanChartPoint& cheapest = *cheapest_drawn;
  chart.annotations.push_back(
      {*cheapest.ttft_p90_s, cheapest.usd_per_task,
       "cheapest: " + cheapest.label + ", $" + FormatFixed(cheapest.usd_per_task, 4) + "/task",
       std::string(kChartPalette[1])});
  return chart;
}

}  // namespace kvbill
