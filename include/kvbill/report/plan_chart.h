// The plan chart of `kvbill report --plan`: the feasible candidates of a
// `kvbill plan` run as points of $/task against TTFT p90, the Pareto front
// drawn through its points, the cheapest feasible labelled
// (docs/report.md, section 7; docs/plan.md).
#ifndef KVBILL_REPORT_PLAN_CHART_H_
#define KVBILL_REPORT_PLAN_CHART_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/report/svg_chart.h"
#include "kvbill/util/result.h"

namespace kvbill {

// One feasible candidate of a plan: self-hosted, or an API model (no
// replicas or GPUs, and a TTFT only when `plan --api-latency` gave one).
struct PlanChartPoint {
  std::int64_t index = 0;  // the candidate's number in the plan
  std::string label;       // e.g. "h100-sxm tp=2 w=auto kv=fp8", "api gpt-5 (openai)"
  bool api = false;
  int replicas = 0;  // 0 for an API candidate
  int gpus = 0;      // 0 for an API candidate
  double usd_per_task = 0;
  std::optional<double> ttft_p90_s;  // none: an API candidate without --api-latency
  bool pareto = false;               // on the Pareto front of $/task against TTFT p90
  // What its figures assume rather than measure ("uncalibrated", "weakly
  // validated", "warns timing_assumed", ...); empty when they rest on the
  // calibration and its validation alone (docs/plan.md).
  std::vector<std::string> assumed;
};

// What the report shows of a plan: its feasible candidates, cheapest first
// (the plan's ranking: the first is the cheapest feasible), and its counts.
struct PlanChartData {
  std::string source;    // the plan file, for the text
  std::string scenario;  // the plan's scenario name
  std::vector<PlanChartPoint> feasible;
  std::int64_t enumerated = 0;
  std::int64_t pruned = 0;
  std::int64_t simulated = 0;
  // The plan's whole space; above `enumerated` when the file is one shard
  // of a plan (plan --shard i/n) rather than the merged whole.
  std::int64_t total_candidates = 0;
};

// The chart: x TTFT p90 (s), y $/task, both linear from 0; every feasible
// candidate with a TTFT a grey marker, those on the front blue and joined by
// a line in TTFT order, the cheapest of them a vermillion marker labelled
// with its candidate and $/task. Error: no feasible candidate with a TTFT,
// or a point that is not finite and non-negative.
Result<LineChart> BuildPlanChart(const PlanChartData& plan);

}  // namespace kvbill

#endif  // KVBILL_REPORT_PLAN_CHART_H_
