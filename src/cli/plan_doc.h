// The document of `kvbill plan`: one row per decided candidate, rendered as
// a table, JSON or CSV with the counts, the ranking and the Pareto front
// computed from the rows alone, so that `kvbill merge` renders the union of
// shards exactly as one run renders all its rows.
#ifndef KVBILL_CLI_PLAN_DOC_H_
#define KVBILL_CLI_PLAN_DOC_H_

#include <nlohmann/json.hpp>
#include <string>

#include "kvbill/report/plan_chart.h"
#include "kvbill/scenario/plan.h"
#include "kvbill/util/result.h"

namespace kvbill::cli {

// One candidate's row.
nlohmann::ordered_json OutcomeJson(const CandidateOutcome& outcome);

// `doc` is {"scenario", "window", "slo", "space", "workload",
// "total_candidates", "candidates": [rows in index order]}; the output adds
// "counts", "cheapest" and "pareto" (JSON), or shows them (table, CSV).
std::string RenderPlan(const nlohmann::ordered_json& doc, const std::string& format);

// True when `doc` is the JSON output of kvbill plan (it has "candidates").
bool IsPlanDocument(const nlohmann::ordered_json& doc);

// Empty when one of the plan's candidates is feasible; else why none is,
// one line for stderr beside plan's and merge's exit status 1 (a plan with
// no answer is a failed check, as `fit` saying it does not fit).
std::string NoFeasibleCandidate(const nlohmann::ordered_json& doc);

// Joins plan shards (their JSON outputs, read from `paths`) into the
// document of the single run: every candidate present once, the same plan.
Result<nlohmann::ordered_json> MergePlanShards(const std::vector<nlohmann::ordered_json>& docs,
                                               const std::vector<std::string>& paths);

// What `kvbill report --plan` draws of the JSON output of kvbill plan (or of
// kvbill merge --format json) read from `path`: its feasible candidates in
// its "ranking" order, marked when in its "pareto", and its counts. Errors
// name the path and the JSON pointer of the field at fault.
Result<PlanChartData> PlanChartFromDocument(const nlohmann::ordered_json& doc,
                                            const std::string& path);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_PLAN_DOC_H_
