// End-to-end runs of `kvbill report`, and a look at its page in headless
// Chromium (which must be installed: chromium.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/chromium.h"
#include "cli/cli_test_util.h"

namespace kvbill {
namespace {

using testing::Slurp;

namespace fs = std::filesystem;
using testing::RunChromium;
using testing::RunKvbill;

// A fresh, empty directory under the test temp dir.
fs::path FreshDir(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("kvbill_report_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  testing::RemoveAtExitIfPassed(dir);
  return dir;
}

std::size_t Count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

TEST(ReportCliTest, WritesOneSelfContainedPage) {
  const fs::path dir = FreshDir("ok") / "nested";
  const auto r =
      RunKvbill("report --scenario tests/data/scenarios/small_sweep.json --out " + dir.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string page = Slurp(dir / "report.html");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<title>kvbill report: small-sweep</title>"), std::string::npos);
  EXPECT_EQ(Count(page, "<svg "), 7u);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  // Nothing but report.html is left in the directory (no temporary files).
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(ReportCliTest, SameInputsGiveTheSameBytes) {
  const fs::path a = FreshDir("same_a"), b = FreshDir("same_b");
  const std::string s = "tests/data/scenarios/small_sweep.json";
  ASSERT_EQ(RunKvbill("report --jobs 1 --scenario " + s + " --out " + a.string()).exit_status, 0);
  ASSERT_EQ(RunKvbill("report --jobs 3 --scenario " + s + " --out " + b.string()).exit_status, 0);
  EXPECT_EQ(Slurp(a / "report.html"), Slurp(b / "report.html"));
}

TEST(ReportCliTest, MissingScenarioIsExitTwoAndWritesNothing) {
  const fs::path dir = FreshDir("bad");
  const auto r =
      RunKvbill("report --scenario tests/data/scenarios/no_such.json --out " + dir.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err.rfind("kvbill report: --scenario: tests/data/scenarios/no_such.json: ", 0), 0u)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "report.html"));
}

// --load adds the savings-against-load chart (docs/report.md, section 7);
// a bad factor is an error naming the flag, and no page is written.
TEST(ReportCliTest, LoadAddsTheSavingAgainstLoadChart) {
  const fs::path dir = FreshDir("load");
  const auto r = RunKvbill(
      "report --load 0.5,2 --scenario tests/data/scenarios/small_sweep.json "
      "--out " +
      dir.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string page = Slurp(dir / "report.html");
  EXPECT_EQ(Count(page, "<svg "), 8u);
  EXPECT_NE(page.find("<h2>7. Saving per task against load</h2>"), std::string::npos);
  EXPECT_NE(page.find("<th>load 0.5</th><th>load 2</th>"), std::string::npos);
  const fs::path bad = FreshDir("bad_load");
  const auto b = RunKvbill(
      "report --load 1,0 --scenario tests/data/scenarios/small_sweep.json "
      "--out " +
      bad.string());
  EXPECT_EQ(b.exit_status, 2);
  EXPECT_EQ(b.err,
            "kvbill report: --load: \"0\" is not a positive number (a list like 0.25,1,4)\n");
  EXPECT_FALSE(fs::exists(bad / "report.html"));
}

TEST(ReportCliTest, MissingOutIsExitTwo) {
  const auto r = RunKvbill("report --scenario tests/data/scenarios/small_sweep.json");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
}

// --plan: a plan's JSON output adds the plan section, its Pareto chart the
// eighth <svg>, with the cheapest feasible candidate labelled.
TEST(ReportCliTest, PlanAddsItsParetoChart) {
  const fs::path dir = FreshDir("plan");
  fs::create_directories(dir);
  const std::string plan = (dir / "plan.json").string();
  const auto p = RunKvbill(
      "plan --scenario tests/data/scenarios/plan_small.json --gpus h100-sxm,a100-80gb "
      "--max-gpus 2 --kv-formats bf16,fp8 --format json -o " +
      plan);
  ASSERT_EQ(p.exit_status, 0) << p.err;
  const auto doc = nlohmann::json::parse(Slurp(plan));
  ASSERT_FALSE(doc["ranking"].empty());
  const auto r = RunKvbill("report --scenario tests/data/scenarios/plan_small.json --plan " + plan +
                           " --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string page = Slurp(dir / "out" / "report.html");
  EXPECT_EQ(Count(page, "<svg "), 8u);
  EXPECT_NE(page.find("<section id=\"plan\">"), std::string::npos);
  EXPECT_NE(page.find("cheapest: "), std::string::npos);
  // One table row per feasible candidate, ranked as the plan ranks them.
  EXPECT_EQ(Count(page.substr(page.find("<section id=\"plan\">")), "<tr>"),
            doc["ranking"].size() + 1);
}

TEST(ReportCliTest, NotAPlanIsExitTwoAndWritesNothing) {
  const fs::path dir = FreshDir("bad_plan");
  const std::string s = "tests/data/scenarios/plan_small.json";
  const auto r = RunKvbill("report --scenario " + s + " --plan " + s + " --out " + dir.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err.rfind("kvbill report: --plan: " + s + ": not the JSON output of kvbill plan", 0),
            0u)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "report.html"));
  const auto missing = RunKvbill("report --scenario " + s + " --plan " +
                                 (dir / "no.json").string() + " --out " + dir.string());
  EXPECT_EQ(missing.exit_status, 2);
  EXPECT_EQ(missing.err.rfind("kvbill report: --plan: ", 0), 0u) << missing.err;
  EXPECT_FALSE(fs::exists(dir / "report.html"));
}

TEST(ReportCliTest, RendersInHeadlessChromiumWithoutConsoleErrors) {
  KVBILL_REQUIRE_CHROMIUM();
  const fs::path dir = FreshDir("chromium");
  // With --load: every chart the page can have.
  const auto r = RunKvbill(
      "report --load 0.5,2 --scenario tests/data/scenarios/small_sweep.json "
      "--out " +
      dir.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const fs::path html = dir / "report.html";

  const fs::path png = dir / "report.png";
  ASSERT_EQ(
      RunChromium(dir / "profile-shot",
                  "--screenshot=" + png.string() + " --window-size=1280,3000 --hide-scrollbars",
                  html, dir / "shot.out", dir / "shot.err"),
      0)
      << Slurp(dir / "shot.err");
  ASSERT_TRUE(fs::exists(png));
  // A blank 1280 x 3000 PNG compresses to a few kB; charts and tables do not.
  EXPECT_GT(fs::file_size(png), 50'000u);

  // The DOM as chromium parsed it holds every chart, and the page logged
  // nothing to the console.
  ASSERT_EQ(RunChromium(dir / "profile-dom", "--dump-dom --enable-logging=stderr --v=0", html,
                        dir / "dom.html", dir / "dom.err"),
            0)
      << Slurp(dir / "dom.err");
  const std::string dom = Slurp(dir / "dom.html");
  EXPECT_EQ(Count(dom, "<svg "), 8u);
  // A console message is logged as "[...:INFO:CONSOLE:1] "message", source: ...".
  const std::string log = Slurp(dir / "dom.err");
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
  // The page and the screenshot stay for a look (RunChromium removes the
  // browser profiles).
}

}  // namespace
}  // namespace kvbill
