// Labels never hide the data: on rendered memory charts, no label box is
// crossed by a data polyline, the GPU capacity line or a model's
// capacity-minus-weights line, and no two labels overlap. The geometry is read
// back from the SVG text (svg_geometry.h), in the document's coordinates.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvbill/report/memory_chart.h"
#include "kvbill/report/plan_chart.h"
#include "kvbill/report/report_page.h"
#include "model/model_test_util.h"
#include "report/svg_geometry.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::DrawnSegments;
using testing::LabelBoxes;
using testing::LabelsOverLines;
using testing::OverlappingLabels;

std::string MemoryChartSvg(const std::vector<std::string>& names, const std::string& gpu) {
  std::vector<ModelShape> models;
  for (const std::string& name : names) models.push_back(Catalog(name));
  MemoryChartOptions o;
  o.deployment.gpu = *LookupGpu(gpu);
  o.kv_format = Fmt("bf16");
  auto chart = BuildMemoryChart(models, o);
  EXPECT_TRUE(chart.ok()) << chart.error().message();
  if (!chart.ok()) return "";
  auto svg = RenderSvg(*chart);
  EXPECT_TRUE(svg.ok()) << svg.error().message();
  return svg.ok() ? *svg : "";
}

std::string Lines(const std::vector<std::string>& problems) {
  std::string out;
  for (const std::string& p : problems) out += p + "\n";
  return out;
}

// The reader itself: a label box crossed by a line, and one that is not.
TEST(ChartGeometryTest, FindsALineThroughALabelBox) {
  const std::string svg =
      "<g id=\"series\">\n<path d=\"M0.00 50.00L100.00 50.00\"/>\n</g>\n"
      "<g id=\"reference-lines\">\n<line x1=\"0\" y1=\"80\" x2=\"100\" y2=\"80\"/>\n</g>\n"
      "<g id=\"annotations\">\n"
      "<rect x=\"10\" y=\"40\" width=\"20\" height=\"20\"/>\n<text x=\"1\">a</text>\n"
      "<rect x=\"10\" y=\"61\" width=\"20\" height=\"10\"/>\n<text x=\"1\">b</text>\n"
      "<rect x=\"40\" y=\"75\" width=\"20\" height=\"10\"/>\n<text x=\"1\">c</text>\n</g>\n";
  ASSERT_EQ(DrawnSegments(svg).size(), 2u);
  ASSERT_EQ(LabelBoxes(svg).size(), 3u);
  // y = 50 runs through a's box (40..60); y = 80 through c's (75..85); b's
  // box (61..71) lies between the two lines.
  const std::vector<std::string> hits = LabelsOverLines(svg);
  ASSERT_EQ(hits.size(), 2u) << Lines(hits);
  EXPECT_EQ(hits[0].rfind("label \"a\"", 0), 0u);
  EXPECT_EQ(hits[1].rfind("label \"c\"", 0), 0u);
}

// `kvbill plot memory`'s default models: the label of Llama-3.1-8B's longest
// context once covered the GPU's capacity line.
TEST(ChartGeometryTest, DefaultMemoryChartLabelsCoverNoLine) {
  const std::string svg = MemoryChartSvg({"qwen3-32b", "llama-3.1-8b", "gpt-oss-20b"}, "h100-sxm");
  ASSERT_FALSE(LabelBoxes(svg).empty());
  EXPECT_EQ(Lines(LabelsOverLines(svg)), "");
  EXPECT_EQ(Lines(OverlappingLabels(svg)), "");
}

// Four and more models: labels once overwrote each other.
TEST(ChartGeometryTest, ManyModelsLabelsCoverNoLineNorEachOther) {
  for (const char* gpu : {"h100-sxm", "a100-80gb", "h200", "l40s"}) {
    const std::string svg = MemoryChartSvg(
        {"qwen3-8b", "llama-3.1-8b", "mistral-7b", "gpt-oss-20b", "qwen3-32b", "gemma-2-9b"}, gpu);
    ASSERT_FALSE(svg.empty());
    EXPECT_EQ(Lines(LabelsOverLines(svg)), "") << gpu;
    EXPECT_EQ(Lines(OverlappingLabels(svg)), "") << gpu;
  }
}

// The report's saving-against-load chart (report --load): one line per
// lever and the "no saving" line; no label on a line or on another label.
TEST(ChartGeometryTest, ReportLoadChartLabelsCoverNoLine) {
  auto runs = RunReport(R"({"model": "qwen3-8b", "trace": {"generator": "coding-agent",
                             "tasks": 2}})",
                        "tiny.json", 2, {0.5, 4});
  ASSERT_TRUE(runs.ok()) << runs.error().message();
  auto page = BuildReportPage(*runs);
  ASSERT_TRUE(page.ok()) << page.error().message();
  const std::size_t section = page->find("<section id=\"load\">");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = page->find("<svg ", section);
  const std::size_t end = page->find("</svg>", begin);
  ASSERT_NE(end, std::string::npos);
  const std::string svg = page->substr(begin, end + 6 - begin);
  EXPECT_FALSE(DrawnSegments(svg).empty());
  ASSERT_FALSE(LabelBoxes(svg).empty());  // the "no saving" label at least
  EXPECT_EQ(Lines(LabelsOverLines(svg)), "");
  EXPECT_EQ(Lines(OverlappingLabels(svg)), "");
}

// The plan chart: 40 feasible candidates on a grid of prices and latencies,
// five of them on the front; the cheapest's label covers no line, marker
// label or other label, and the front is drawn through its five points.
TEST(ChartGeometryTest, PlanChartLabelCoversNoLine) {
  PlanChartData plan;
  plan.scenario = "s";
  // The front: $/task 0.01, 0.02, ... 0.05 at TTFT 2.0, 1.5, 1.0, 0.6, 0.3 s.
  const double front_usd[] = {0.01, 0.02, 0.03, 0.04, 0.05};
  const double front_ttft[] = {2.0, 1.5, 1.0, 0.6, 0.3};
  for (int i = 0; i < 5; ++i) {
    plan.feasible.push_back({i,
                             "gpu" + std::to_string(i) + " tp=1 w=auto kv=bf16",
                             false,
                             1,
                             1,
                             front_usd[i],
                             front_ttft[i],
                             true,
                             {}});
  }
  // Dominated: each dearer and slower than a front point.
  for (int i = 5; i < 40; ++i) {
    plan.feasible.push_back(
        {i, "other", false, 1, 2, 0.012 + 0.001 * i, 2.1 + 0.02 * (i % 7), false, {}});
  }
  auto chart = BuildPlanChart(plan);
  ASSERT_TRUE(chart.ok()) << chart.error().message();
  ASSERT_EQ(chart->series.size(), 1u);
  ASSERT_EQ(chart->series[0].points.size(), 5u);
  // In TTFT order: the fastest (dearest) first.
  EXPECT_EQ(chart->series[0].points.front().x, 0.3);
  EXPECT_EQ(chart->series[0].points.back().y, 0.01);
  auto svg = RenderSvg(*chart);
  ASSERT_TRUE(svg.ok()) << svg.error().message();
  const auto boxes = LabelBoxes(*svg);
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].text.rfind("cheapest: gpu0 tp=1 w=auto kv=bf16, $0.0100/task", 0), 0u)
      << boxes[0].text;
  EXPECT_EQ(Lines(LabelsOverLines(*svg)), "");
  EXPECT_EQ(Lines(OverlappingLabels(*svg)), "");
  // 40 markers: one circle each (and none elsewhere in the plot).
  std::size_t circles = 0;
  for (std::size_t at = svg->find("<circle"); at != std::string::npos;
       at = svg->find("<circle", at + 1)) {
    ++circles;
  }
  EXPECT_EQ(circles, 40u);
}

TEST(ChartGeometryTest, PlanChartNeedsAFeasibleCandidate) {
  EXPECT_FALSE(BuildPlanChart(PlanChartData{}).ok());
  // An API candidate without a TTFT (plan without --api-latency) has no
  // place on the TTFT axis: alone it leaves nothing to draw.
  PlanChartData api_only;
  api_only.feasible.push_back(
      {0, "api gpt-5 (openai)", true, 0, 0, 0.004, std::nullopt, false, {}});
  EXPECT_FALSE(BuildPlanChart(api_only).ok());
}

// The cheapest feasible is an API model without a TTFT: the chart draws the
// two self-hosted points and labels the cheaper of them ($0.02 at 1.0 s).
TEST(ChartGeometryTest, PlanChartSkipsCandidatesWithoutTtft) {
  PlanChartData plan;
  plan.feasible.push_back({2, "api gpt-5 (openai)", true, 0, 0, 0.004, std::nullopt, false, {}});
  plan.feasible.push_back({0, "h100-sxm tp=1 w=auto kv=bf16", false, 1, 1, 0.02, 1.0, true, {}});
  plan.feasible.push_back({1, "h100-sxm tp=2 w=auto kv=bf16", false, 1, 2, 0.03, 0.5, true, {}});
  auto chart = BuildPlanChart(plan);
  ASSERT_TRUE(chart.ok()) << chart.error().message();
  ASSERT_EQ(chart->series[0].points.size(), 2u);
  EXPECT_EQ(chart->series[0].points.front().x, 0.5);
  EXPECT_NE(chart->subtitle.find("2 feasible candidates"), std::string::npos) << chart->subtitle;
  ASSERT_FALSE(chart->annotations.empty());
  EXPECT_EQ(
      chart->annotations.back().text.rfind("cheapest: h100-sxm tp=1 w=auto kv=bf16, $0.0200", 0),
      0u)
      << chart->annotations.back().text;
  EXPECT_EQ(chart->annotations.back().x, 1.0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
