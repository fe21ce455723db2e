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
namespace KVBILL_TEST_FILE_ID {
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
  // The baseline's requests count from 1, and so do their turns, as
  // simulate's messages count them (the turn column counted from 0).
  EXPECT_NE(page.find("<tbody>\n<tr><td>1</td><td class=\"num\">1</td>"), std::string::npos);
  // Nothing but report.html is left in the directory (no temporary files).
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1u);
}

// A baseline that served no request (Gemma-2-9B's 8,192-token limit under
// coding agents' first prompts): the lever and capacity sections say
// nothing was measured, where they showed a $0.0000 baseline at 0.0%.
TEST(ReportCliTest, NothingServedShowsNoFigures) {
  const fs::path dir = FreshDir("none");
  fs::create_directories(dir);
  std::ofstream(dir / "none.json")
      << R"({"model": "gemma-2-9b", "trace": {"generator": "coding-agent", "tasks": 2}})";
  const auto r = RunKvbill("report --scenario " + (dir / "none.json").string() + " --out " +
                           (dir / "out").string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string page = Slurp(dir / "out" / "report.html");
  EXPECT_EQ(Count(page, "Not measured: the baseline served no request"), 2u);
  EXPECT_EQ(page.find("$0.0000"), std::string::npos);
}

// Qwen3-8B serves 40,960 tokens. Task "long" sends 10,000 + 100, then
// 10,100 + 10,000 = 20,100 + 100, then 30,200 + 100, then 30,300 + 20,000 =
// 50,300: refused, its fifth request never sent, 3 of 5 served. Task "a"
// is served whole, 2 requests. The turn-by-turn section takes the task of
// the most requests served whole, "a", not "long" (3 requests, cut short);
// the growth table marks "long" and its fit leaves it out.
TEST(ReportCliTest, TasksCutShortAreMarkedAndNotTakenForWholeOnes) {
  const fs::path dir = FreshDir("cut");
  fs::create_directories(dir);
  auto turn = [](int tokens) {
    return R"({"spans":[{"kind":"user","tokens":)" + std::to_string(tokens) + R"(}],"out":100})";
  };
  std::ofstream(dir / "t.jsonl") << "{\"kvbill_trace\":1}\n"
                                 << R"({"id":"long","turns":[)" << turn(10000) << "," << turn(10000)
                                 << "," << turn(10000) << "," << turn(20000) << "," << turn(10)
                                 << "]}\n"
                                 << R"({"id":"a","turns":[)" << turn(1000) << "," << turn(1000)
                                 << "]}\n";
  std::ofstream(dir / "s.json") << R"({"model": "qwen3-8b", "trace": {"file": "t.jsonl"}})";
  const auto r = RunKvbill("report --scenario " + (dir / "s.json").string() + " --out " +
                           (dir / "out").string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string page = Slurp(dir / "out" / "report.html");
  EXPECT_NE(page.find("Task a has the most requests the baseline served whole (2)."),
            std::string::npos);
  EXPECT_NE(page.find("<td>long</td><td>3 of 5 (cut short)</td>"), std::string::npos);
  EXPECT_NE(page.find("1 task cut short at the model&apos;s context left out"), std::string::npos);
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

// "-o -" is no directory (a directory named "-" was made); a price whose
// chart axis is not finite is refused before the runs, as breakeven
// refuses it.
TEST(ReportCliTest, StandardOutputAndAnInfinitePriceAreRefused) {
  const std::string base = "report --scenario tests/data/scenarios/small_sweep.json";
  const auto dash = RunKvbill(base + " --out -");
  EXPECT_EQ(dash.exit_status, 2);
  EXPECT_NE(dash.err.find("--out: - is standard output"), std::string::npos) << dash.err;
  EXPECT_FALSE(fs::exists("-"));
  for (const char* price : {"inf", "1e308"}) {
    const fs::path dir = FreshDir(std::string("price_") + price);
    const auto r = RunKvbill(base + " --price " + price + " --out " + dir.string());
    EXPECT_EQ(r.exit_status, 2) << price;
    EXPECT_EQ(r.err,
              "kvbill report: --price: must be a positive number of dollars per million tokens, "
              "at most 100,000,000\n");
    EXPECT_FALSE(fs::exists(dir)) << price;
  }
}

// A max_model_len below the 4,096 tokens the cost-per-token chart starts at
// leaves it no curve: the page is written, the section says why (the
// report once failed, exit 2, "no context fits the deployment").
TEST(ReportCliTest, AContextLimitBelowTheChartsStartIsSaid) {
  const fs::path dir = FreshDir("short_context");
  fs::create_directories(dir);
  const std::string scenario = (dir / "s.json").string();
  std::ofstream(scenario) << R"({"model": "qwen3-8b", "engine": {"max_model_len": 2048},
      "trace": {"generator": "chat", "tasks": 2}})";
  const auto r = RunKvbill("report --scenario " + scenario + " --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string page = Slurp(dir / "out" / "report.html");
  EXPECT_NE(page.find("No context from 4,096 tokens up, where the chart starts, fits the "
                      "deployment (its max_model_len is 2,048 tokens), so no curve is drawn."),
            std::string::npos);
  // With a price line too (it drew an empty chart, without the sentence).
  const auto priced =
      RunKvbill("report --scenario " + scenario + " --price 10 --out " + (dir / "priced").string());
  ASSERT_EQ(priced.exit_status, 0) << priced.err;
  EXPECT_NE(Slurp(dir / "priced" / "report.html").find("so no curve is drawn."), std::string::npos);
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
  // Without --load the plan is the seventh numbered section: no gap.
  EXPECT_NE(page.find("<h2>7. Plan: the cheapest deployment"), std::string::npos);
  EXPECT_EQ(page.find("<h2>8. "), std::string::npos);
  EXPECT_NE(page.find("cheapest: "), std::string::npos);
  // One table row per feasible candidate, ranked as the plan ranks them.
  EXPECT_EQ(Count(page.substr(page.find("<section id=\"plan\">")), "<tr>"),
            doc["ranking"].size() + 1);
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  // The plan of another scenario is charted too, with a warning naming both.
  const std::string other = (dir / "other.json").string();
  std::ofstream(other) << R"({"name": "other", "model": "qwen3-8b",
      "trace": {"generator": "chat", "tasks": 2}})";
  const auto o = RunKvbill("report --scenario " + other + " --plan " + plan + " --out " +
                           (dir / "other").string());
  ASSERT_EQ(o.exit_status, 0) << o.err;
  EXPECT_NE(o.err.find("kvbill report: warning: --plan " + plan +
                       " was made for scenario \"plan-small\", not \"other\""),
            std::string::npos)
      << o.err;
  // The same name over other inputs (the plan's fingerprint differs): a
  // copy of the scenario with another seed warns too.
  auto edited = nlohmann::json::parse(Slurp("tests/data/scenarios/plan_small.json"));
  edited["seed"] = 99;
  const std::string same_name = (dir / "same_name.json").string();
  std::ofstream(same_name) << edited.dump();
  const auto n = RunKvbill("report --scenario " + same_name + " --plan " + plan + " --out " +
                           (dir / "same").string());
  ASSERT_EQ(n.exit_status, 0) << n.err;
  EXPECT_NE(n.err.find("kvbill report: warning: --plan " + plan + " was made from other inputs"),
            std::string::npos)
      << n.err;
}

// A plan whose cheapest is uncalibrated (an L40S at $0.50 an hour, no
// kernel tables) says so under the chart and names the cheapest on
// calibrated and validated figures: the A100 TP 1 (dense models on one
// A100, validated), rank 2.
TEST(ReportCliTest, PlanSaysWhenTheCheapestRestsOnAssumedFigures) {
  const fs::path dir = FreshDir("plan_assumed");
  fs::create_directories(dir);
  const std::string plan = (dir / "plan.json").string();
  const auto p = RunKvbill(
      "plan --scenario tests/data/scenarios/plan_small.json --gpus a100-80gb,l40s --max-gpus 1 "
      "--allow-uncalibrated --gpu-price l40s=0.5 --format json -o " +
      plan);
  ASSERT_EQ(p.exit_status, 0) << p.err;
  const auto r = RunKvbill("report --scenario tests/data/scenarios/plan_small.json --plan " + plan +
                           " --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string page = Slurp(dir / "out" / "report.html");
  EXPECT_NE(page.find("The cheapest feasible is l40s tp=1 w=auto kv=bf16 (uncalibrated)"),
            std::string::npos);
  EXPECT_NE(page.find(" a task. It rests on assumed figures (uncalibrated); the cheapest on "
                      "calibrated and validated figures alone is rank 2, a100-80gb tp=1 w=auto "
                      "kv=bf16"),
            std::string::npos)
      << page.substr(page.find("<section id=\"plan\">"), 1200);
}

// A plan with an API candidate (plan --api): the API row has no replicas
// or GPUs, and no TTFT without --api-latency. gpt-5-nano's list prices
// are a 25th of gpt-5's ($0.05 against $1.25 a million input tokens, $0.40
// against $10 output), and gpt-5 already costs the same order as an H100
// replica on these chat tasks, so the nano model ranks first; without a TTFT it is in the table
// ("-" for replicas, GPUs and TTFT) and not on the chart, whose labelled cheapest is then the
// cheapest self-hosted candidate.
TEST(ReportCliTest, PlanWithAnApiCandidate) {
  const fs::path dir = FreshDir("plan_api");
  fs::create_directories(dir);
  const std::string scenario = (dir / "no_slo.json").string();
  std::ofstream(scenario) << R"({"name": "plan-small", "model": "qwen3-8b",
      "trace": {"generator": "chat", "tasks": 12}})";
  const std::string plan = (dir / "plan.json").string();
  const auto p =
      RunKvbill("plan --scenario " + scenario +
                " --gpus h100-sxm --max-gpus 1 --api gpt-5-nano --format json -o " + plan);
  ASSERT_EQ(p.exit_status, 0) << p.err;
  const auto doc = nlohmann::json::parse(Slurp(plan));
  ASSERT_EQ(doc["ranking"].size(), 2u);
  const auto& first = doc["candidates"][doc["ranking"][0].get<int>()];
  ASSERT_EQ(first["kind"], "api");
  ASSERT_FALSE(first.contains("ttft_s.p90"));
  const auto r =
      RunKvbill("report --scenario " + scenario + " --plan " + plan + " --out " + dir.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string page = Slurp(dir / "report.html");
  const std::string section = page.substr(page.find("<section id=\"plan\">"));
  EXPECT_NE(section.find("The cheapest feasible is api gpt-5-nano (openai) (an API model) at $"),
            std::string::npos)
      << section.substr(0, 800);
  EXPECT_NE(section.find("1 API candidate has no TTFT"), std::string::npos);
  EXPECT_NE(section.find(
                "<td>api gpt-5-nano (openai)</td><td class=\"num\">-</td><td class=\"num\">-</td>"),
            std::string::npos)
      << section;
  EXPECT_EQ(Count(section, "<svg "), 1u);
  EXPECT_NE(section.find("cheapest: h100-sxm"), std::string::npos);

  // With --api-latency the API model has a TTFT and is the chart's cheapest.
  const auto q = RunKvbill("plan --scenario " + scenario +
                           " --gpus h100-sxm --max-gpus 1 --api gpt-5-nano "
                           "--api-latency gpt-5-nano:ttft_s=0.5 --format json -o " +
                           plan);
  ASSERT_EQ(q.exit_status, 0) << q.err;
  const auto again =
      RunKvbill("report --scenario " + scenario + " --plan " + plan + " --out " + dir.string());
  ASSERT_EQ(again.exit_status, 0) << again.err;
  const std::string page2 = Slurp(dir / "report.html");
  EXPECT_NE(page2.find("cheapest: api gpt-5-nano (openai)"), std::string::npos);
  EXPECT_EQ(page2.find("has no TTFT"), std::string::npos);
}

// A shard of a plan (plan --shard i/n) ranks its slice only: the page says
// so, with the plan's whole count; the merged plan's page does not.
TEST(ReportCliTest, PlanShardIsSaidToBeOne) {
  const fs::path dir = FreshDir("plan_shard");
  fs::create_directories(dir);
  const std::string base =
      "plan --scenario tests/data/scenarios/plan_small.json --gpus h100-sxm,a100-80gb "
      "--max-gpus 2 --kv-formats bf16,fp8 --format json";
  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const std::string shard = (dir / ("shard" + std::to_string(i) + ".json")).string();
    ASSERT_EQ(RunKvbill(base + " --shard " + std::to_string(i) + "/2 -o " + shard).exit_status, 0);
    shards += " " + shard;
    const auto doc = nlohmann::json::parse(Slurp(shard));
    if (doc["ranking"].empty()) continue;  // a slice with nothing feasible has no chart
    ASSERT_LT(doc["candidates"].size(), doc["total_candidates"].get<std::size_t>());
    const auto r = RunKvbill("report --scenario tests/data/scenarios/plan_small.json --plan " +
                             shard + " --out " + (dir / "out").string());
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_NE(Slurp(dir / "out" / "report.html")
                  .find("This file is one shard of a plan of " + doc["total_candidates"].dump() +
                        " candidates"),
              std::string::npos);
  }
  const std::string merged = (dir / "merged.json").string();
  ASSERT_EQ(RunKvbill("merge" + shards + " --format json -o " + merged).exit_status, 0);
  const auto r = RunKvbill("report --scenario tests/data/scenarios/plan_small.json --plan " +
                           merged + " --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(Slurp(dir / "out" / "report.html").find("one shard of a plan"), std::string::npos);
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
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
