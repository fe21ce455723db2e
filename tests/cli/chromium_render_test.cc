// The charts of `kvbill plot memory` and `kvbill report`, rendered in headless
// Chromium, with their label geometry measured by the browser itself
// (chart_geometry.js, real fonts): no label is crossed by a drawn line, no
// two labels overlap, no text sticks out of its box, no legend runs off the
// chart. These tests fail when Chromium cannot start (chromium.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/chromium.h"
#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

namespace fs = std::filesystem;
using testing::DumpDom;
using testing::ReadWhole;
using testing::RunKvbillInSourceDir;

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("kvbill_chromium_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  testing::RemoveAtExitIfPassed(dir);
  return dir;
}

std::string Unescape(std::string text) {
  for (const auto& [entity, c] : {std::pair<std::string, std::string>{"&lt;", "<"},
                                  {"&gt;", ">"},
                                  {"&quot;", "\""},
                                  {"&#39;", "'"},
                                  {"&amp;", "&"}}) {
    for (std::size_t at = text.find(entity); at != std::string::npos;
         at = text.find(entity, at + c.size())) {
      text.replace(at, entity.size(), c);
    }
  }
  return text;
}

// What chart_geometry.js reports for `html` in Chromium: its first line
// ("checked N charts, ...") and its problems, one per line.
struct Geometry {
  std::string summary;
  std::string problems;
};

Geometry CheckInChromium(std::string html, const fs::path& dir) {
  const std::string script =
      "<script>\n" + ReadWhole(fs::path(KVBILL_SOURCE_DIR) / "tests/cli/chart_geometry.js") +
      "</script>\n";
  const std::size_t body_end = html.rfind("</body>");
  if (body_end == std::string::npos) {
    html += script;
  } else {
    html.insert(body_end, script);
  }
  const fs::path page = dir / "checked.html";
  std::ofstream(page, std::ios::binary) << html;
  const std::string dom = DumpDom(page, dir);
  // The last one: the script's own comment names the element too.
  const std::string open = "<pre id=\"kvbill-geometry\">";
  const std::size_t begin = dom.rfind(open);
  if (begin == std::string::npos) return {"no report from chart_geometry.js", ""};
  const std::size_t end = dom.find("</pre>", begin);
  const std::string report = Unescape(dom.substr(begin + open.size(), end - begin - open.size()));
  const std::size_t newline = report.find('\n');
  return {report.substr(0, newline), report.substr(newline + 1)};
}

// A page holding the SVG files `svgs` inline, as a browser shows them.
std::string PageWith(const std::vector<fs::path>& svgs) {
  std::string page =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>charts</title></head>"
      "<body>\n";
  for (const fs::path& svg : svgs) page += ReadWhole(svg);
  return page + "</body></html>\n";
}

// The chart, `kvbill plot memory` with its default models on an H100
// (where "llama-3.1-8b fits up to 453.5k tokens" once sat on a line), and six
// models on three GPUs (where labels once overwrote each other); one page,
// one browser start.
TEST(ChromiumRenderTest, MemoryChartLabelsLeaveTheLinesVisible) {
  KVBILL_REQUIRE_CHROMIUM();
  const fs::path dir = FreshDir("memory");
  std::vector<fs::path> svgs = {dir / "default.svg"};
  const auto r = RunKvbillInSourceDir("plot memory --out " + svgs[0].string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  for (const char* gpu : {"h100", "a100", "l40s"}) {
    svgs.push_back(dir / (std::string("six_") + gpu + ".svg"));
    const auto six = RunKvbillInSourceDir(
        "plot memory --model qwen3-8b,llama-3.1-8b,mistral-7b,gpt-oss-20b,qwen3-32b,gemma-2-9b "
        "--gpu " +
        std::string(gpu) + " --out " + svgs.back().string());
    ASSERT_EQ(six.exit_status, 0) << six.err;
  }
  const Geometry g = CheckInChromium(PageWith(svgs), dir);
  // Four charts; each has labels (a capacity line at least) on the plot.
  EXPECT_EQ(g.summary.rfind("checked 4 charts, ", 0), 0u) << g.summary;
  EXPECT_EQ(g.summary.find(" 0 labels"), std::string::npos) << g.summary;
  EXPECT_EQ(g.problems, "");
}

// Every chart of the report, as the browser lays out the page.
TEST(ChromiumRenderTest, ReportChartsLabelsLeaveTheLinesVisible) {
  KVBILL_REQUIRE_CHROMIUM();
  const fs::path dir = FreshDir("report");
  const auto r = RunKvbillInSourceDir(
      "report --load 0.5,2 --scenario tests/data/scenarios/small_sweep.json --out " + dir.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const Geometry g = CheckInChromium(ReadWhole(dir / "report.html"), dir);
  // The report's seven charts and, with --load, the savings against load
  // (report_cli_test.cc counts the <svg>s).
  EXPECT_EQ(g.summary.rfind("checked 8 charts, ", 0), 0u) << g.summary;
  EXPECT_EQ(g.problems, "");
}

// The report's plan chart (kvbill report --plan): the cheapest candidate's
// label and the Pareto front's line, as the browser lays them out.
TEST(ChromiumRenderTest, PlanChartLabelsLeaveTheLinesVisible) {
  KVBILL_REQUIRE_CHROMIUM();
  const fs::path dir = FreshDir("plan");
  fs::create_directories(dir);
  const std::string plan = (dir / "plan.json").string();
  const auto p = RunKvbillInSourceDir(
      "plan --scenario tests/data/scenarios/plan_small.json --gpus h100-sxm,a100-80gb "
      "--max-gpus 2 --kv-formats bf16,fp8 --format json -o " +
      plan);
  ASSERT_EQ(p.exit_status, 0) << p.err;
  const auto r =
      RunKvbillInSourceDir("report --scenario tests/data/scenarios/plan_small.json --plan " + plan +
                           " --out " + dir.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const Geometry g = CheckInChromium(ReadWhole(dir / "report.html"), dir);
  // The seven charts of the scenario and the plan's.
  EXPECT_EQ(g.summary.rfind("checked 8 charts, ", 0), 0u) << g.summary;
  EXPECT_EQ(g.problems, "");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
