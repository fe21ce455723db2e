// compare ranks levers by their value (dollars per task saved against the
// scenario without them), marks those that cannot apply, and runs at
// several loads (--load).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

// A generated trace with no shared prefix: 16 single-turn tasks, each one
// user span of 12,000 tokens without a content id (so no two prompts share
// a block), 1,000 output tokens, a task every 0.25 s; at most 16 x 13,000
// tokens x 144 KiB = about 29 GiB of bf16 KV at once, inside the H100's pool, so nothing is
// preempted and recomputed. Prefix caching has nothing to hit; fp8 KV still
// halves the KV bytes every decode step reads.
// Files named after the running test: ctest runs the tests of this file as
// separate processes at once, and one rewriting a shared file under
// another's read made that one's trace empty.
std::string NoSharedPrefixScenario() {
  const std::string dir = ::testing::TempDir();
  const std::string name = std::string("no_shared_prefix_") +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string trace = dir + "/" + name + ".jsonl";
  std::ofstream out(trace);
  out << "{\"kvbill_trace\":1}\n";
  for (int i = 0; i < 16; ++i) {
    out << "{\"id\":\"t" << i << "\",\"arrival_s\":" << 0.25 * i
        << ",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":12000}],\"out\":1000}]}\n";
  }
  out.close();
  const std::string scenario = dir + "/" + name + ".json";
  std::ofstream(scenario)
      << R"({"name": "no-shared-prefix", "model": "qwen3-8b", "trace": {"file": ")" << trace
      << R"("}})";
  return scenario;
}

// Over a baseline with a policy of its own, a policy lever replaces it. On
// the 12,000-token prompts above, sliding_window over 8,000 tokens edits
// every prompt, while dropping tool results (there are none) and
// summarising past 64k (no prompt gets there) would plan exactly what
// keep_all plans: such a lever would only take the baseline's policy out,
// so it is not applicable rather than ranked as a saving.
TEST(CompareValueCliTest, APolicyLeverThatOnlyRemovesTheBaselinesPolicyIsNotApplicable) {
  const std::string base = NoSharedPrefixScenario();
  std::ifstream in(base);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto doc = nlohmann::json::parse(text);
  doc["context_policy"] = {{"kind", "sliding_window"}, {"window_tokens", 8000}};
  const std::string path = base + ".sliding.json";
  std::ofstream(path) << doc.dump();
  const auto r = RunKvbill("compare --jobs 2 --format json --scenario " + path);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, std::string> not_applicable;
  for (const auto& x : j["variants"]) {
    if (x.contains("not_applicable")) not_applicable[x["lever"]] = x["not_applicable"];
  }
  EXPECT_EQ(not_applicable["drop tool results older than 3 turns (50-token stub) instead of "
                           "sliding_window"],
            "no tool results older than 3 turns to drop (the trace has no tool_result spans "
            "there) (it would only take out sliding_window)");
  // Qwen3-8B serves 40,960 tokens: the lever summarises past half of that,
  // 20,480 (levers_test.cc), and the 12,000-token prompts stay under it.
  EXPECT_EQ(not_applicable["summarise past 20k tokens (2k summary, keep 5k) instead of "
                           "sliding_window"],
            "no prompt passes 20,480 tokens (it would only take out sliding_window)");
}

// A lever that costs more says what changed with it. One task of two
// turns on Llama-3.1-8B: 70,000 tokens, then 1,000 more; the second prompt,
// 70,000 + 100 + 1,000 = 71,100 tokens, passes 65,536, so summarising adds
// one summary request (2 -> 3), a 2,000-token generation that costs more
// than the prefill it saves.
TEST(CompareValueCliTest, ALeverThatCostsMoreSaysWhatChanged) {
  const std::string dir = ::testing::TempDir();
  const std::string trace = dir + "/one_long_task.jsonl";
  std::ofstream(trace) << "{\"kvbill_trace\":1}\n"
                       << R"({"id":"a","arrival_s":0,"turns":[{"spans":[{"kind":"user",)"
                       << R"("tokens":70000}],"out":100,"tool_s":1},{"spans":[{"kind":)"
                       << R"("tool_result","tokens":1000}],"out":100}]})"
                       << "\n";
  const std::string scenario = dir + "/one_long_task.json";
  std::ofstream(scenario) << R"({"name": "one-long", "model": "llama-3.1-8b", "trace": {"file": ")"
                          << trace << R"("}})";
  const auto r = RunKvbill("compare --jobs 2 --scenario " + scenario);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::size_t at = r.out.find("summarise past 64k tokens (2k summary, keep 16k): costs ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find(" more per task, "), std::string::npos) << line;
  EXPECT_NE(line.find("; with it: requests 2 -> 3, mean TTFT "), std::string::npos) << line;
  EXPECT_NE(line.find(" s, mean TPOT "), std::string::npos) << line;
  // A lever that saves says nothing more.
  const std::size_t fp8 = r.out.find("fp8 KV cache: saves ");
  ASSERT_NE(fp8, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(fp8, r.out.find('\n', fp8) - fp8).find("with it"), std::string::npos);
}

TEST(CompareValueCliTest, PrefixCachingDoesNotComeFirstWithoutSharedPrefixes) {
  const auto r = RunKvbill("compare --format json --jobs 2 --scenario " + NoSharedPrefixScenario());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& v = j["variants"];
  ASSERT_FALSE(v.empty());
  EXPECT_NE(v[0]["lever"], "prefix caching off");
  EXPECT_EQ(v[0]["rank"], 1);
  double previous = 1e300;
  bool saw_cache = false, saw_fp8 = false;
  std::size_t ran = 0;
  for (const auto& x : v) {
    if (!x.contains("saves_usd_per_task")) continue;
    ++ran;
    EXPECT_EQ(x["rank"], ran);
    EXPECT_LE(x["saves_usd_per_task"].get<double>(), previous);  // largest saving first
    previous = x["saves_usd_per_task"].get<double>();
    if (x["lever"] == "prefix caching off") {
      saw_cache = true;
      EXPECT_EQ(x["value_of"], "prefix caching");
      // Nothing to hit either way: the same cost with and without it.
      EXPECT_NEAR(x["saves_usd_per_task"].get<double>(), 0, 1e-12);
      EXPECT_GT(x["rank"].get<int>(), 1);
    }
    if (x["lever"] == "fp8 KV cache") {
      saw_fp8 = true;
      EXPECT_GT(x["saves_usd_per_task"].get<double>(), 0);
      // The saving against the baseline's cost (fp8 weighs adding fp8).
      EXPECT_NEAR(
          x["saves_fraction"].get<double>(),
          x["saves_usd_per_task"].get<double>() / j["baseline"]["cost_per_task_usd"].get<double>(),
          1e-12);
    }
  }
  EXPECT_TRUE(saw_cache);
  EXPECT_TRUE(saw_fp8);
  // The levers that cannot apply come last, with their reason, never 0%.
  std::map<std::string, std::string> not_applicable;
  for (const auto& x : v) {
    if (x.contains("not_applicable")) {
      EXPECT_FALSE(x.contains("saves_usd_per_task")) << x["lever"];
      not_applicable[x["lever"]] = x["not_applicable"];
    }
  }
  EXPECT_EQ(not_applicable["drop tool results older than 3 turns (50-token stub)"],
            "no tool results older than 3 turns to drop (the trace has no tool_result spans "
            "there)");
  EXPECT_EQ(not_applicable["summarise past 20k tokens (2k summary, keep 5k)"],
            "no prompt passes 20,480 tokens");
  // Speculative decoding runs as a lever (Qwen3-8B has no MTP layer: an
  // EAGLE-3 head with its defaults) and is weighed like the others.
  EXPECT_EQ(not_applicable.count("speculative decoding (eagle3, k 3, acceptance 0.80)"), 0u);
  bool saw_speculative = false;
  for (const auto& x : v) {
    if (x["lever"] != "speculative decoding (eagle3, k 3, acceptance 0.80)") continue;
    saw_speculative = true;
    EXPECT_TRUE(x.contains("saves_usd_per_task")) << x;
  }
  EXPECT_TRUE(saw_speculative);
  const auto table = RunKvbill("compare --jobs 2 --scenario " + NoSharedPrefixScenario());
  ASSERT_EQ(table.exit_status, 0) << table.err;
  EXPECT_EQ(table.out.find("1. prefix caching"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("prefix caching: saves $0.0000 per task, 0.0%"), std::string::npos)
      << table.out;
}

// On the default scenario's generated coding-agent trace the shared system
// prompt and the growing contexts make prefix caching the largest saving:
// it is in the baseline, so its value is the cost with it off minus the
// cost with it on, as a fraction of the cost with it off.
TEST(CompareValueCliTest, PrefixCachingInTheBaselineIsWeighedByTurningItOff) {
  const auto r =
      RunKvbill("compare --format json --jobs 2 --scenario tests/data/scenarios/small_sweep.json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double base = j["baseline"]["cost_per_task_usd"].get<double>();
  bool saw = false;
  for (const auto& x : j["variants"]) {
    if (x["lever"] != "prefix caching off") continue;
    saw = true;
    const double off = x["cost_per_task_usd"].get<double>();
    EXPECT_DOUBLE_EQ(x["saves_usd_per_task"].get<double>(), off - base);
    EXPECT_DOUBLE_EQ(x["saves_fraction"].get<double>(), (off - base) / off);
    EXPECT_GT(x["saves_fraction"].get<double>(), 0);
    EXPECT_LT(x["saves_fraction"].get<double>(), 1);
  }
  EXPECT_TRUE(saw);
}

TEST(CompareValueCliTest, LoadTableHasEveryLeverAtEveryLoad) {
  const auto r = RunKvbill("compare --format json --jobs 2 --load 0.5,4 --scenario " +
                           NoSharedPrefixScenario());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["loads"].size(), 2u);
  EXPECT_EQ(j["loads"][0]["load"], 0.5);
  EXPECT_EQ(j["loads"][1]["load"], 4);
  EXPECT_EQ(j["loads"][0]["levers"].size(), j["loads"][1]["levers"].size());
  // Eight times the load (4 / 0.5): tasks overlap more, so decode steps
  // batch more sequences and share each read of the weights; a task's own
  // share (dedicated billing: idle is not in it) costs no more.
  EXPECT_LE(j["loads"][1]["baseline_cost_per_task_usd"].get<double>(),
            j["loads"][0]["baseline_cost_per_task_usd"].get<double>());
  const auto table =
      RunKvbill("compare --jobs 2 --load 0.5,4 --scenario " + NoSharedPrefixScenario());
  ASSERT_EQ(table.exit_status, 0) << table.err;
  EXPECT_NE(table.out.find("load 0.5"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("load 4"), std::string::npos) << table.out;
  const auto bad = RunKvbill("compare --load 1,x --scenario " + NoSharedPrefixScenario());
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_EQ(bad.err,
            "kvbill compare: --load: \"x\" is not a positive number (a list like 0.25,1,4)\n");
  // Out of trace.load's range [1e-6, 1e6]: the flag is named, not the scenario.
  const auto far = RunKvbill("compare --load 1,1e9 --scenario " + NoSharedPrefixScenario());
  EXPECT_EQ(far.exit_status, 2);
  EXPECT_EQ(far.err,
            "kvbill compare: --load: \"1e9\" is outside trace.load's range [1e-06, 1e+06]\n");
  // The same load twice ran the same comparison twice; no threads ran none.
  const auto twice = RunKvbill("compare --load 1,1.0 --scenario " + NoSharedPrefixScenario());
  EXPECT_EQ(twice.exit_status, 2);
  EXPECT_EQ(twice.err, "kvbill compare: --load: \"1.0\" is given twice\n");
  const auto none = RunKvbill("compare --jobs 0 --scenario " + NoSharedPrefixScenario());
  EXPECT_EQ(none.exit_status, 2);
  EXPECT_EQ(none.err, "kvbill compare: --jobs: must be at least 1\n");
}

// compare shows warnings: every 12,000-token prompt of the no-shared-prefix
// trace is above a max_model_len of 10,000, so the baseline and every lever
// that keeps the prompts are refused over the model's limit (context_limit).
// The table prints the baseline's warning in full and does not repeat it per
// lever; JSON has each run's warnings.
TEST(CompareValueCliTest, WarningsOfTheBaselineAndTheVariantsAreShown) {
  const std::string base = NoSharedPrefixScenario();
  std::ifstream in(base);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.insert(text.size() - 1, R"(, "engine": {"max_model_len": 10000})");
  const std::string scenario = ::testing::TempDir() + "/compare_over_limit.json";
  std::ofstream(scenario) << text;
  const auto r = RunKvbill("compare --format json --jobs 2 --scenario " + scenario);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["baseline"]["warnings"].empty());
  EXPECT_EQ(j["baseline"]["warnings"][0]["code"], "context_limit");
  for (const auto& x : j["variants"]) {
    if (!x.contains("cost_per_task_usd")) continue;  // not run
    ASSERT_TRUE(x["warnings"].is_array()) << x["lever"];
  }
  const auto table = RunKvbill("compare --jobs 2 --scenario " + scenario);
  ASSERT_EQ(table.exit_status, 0) << table.err;
  EXPECT_NE(table.out.find("warnings:\n  baseline: warning [context_limit]: "), std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("raises context_limit"), std::string::npos) << table.out;
  // --load too: each load's baseline warnings (JSON baseline_warnings) and
  // each lever's run's; the table lists them under each load.
  const auto loads = RunKvbill("compare --format json --jobs 2 --load 1,2 --scenario " + scenario);
  ASSERT_EQ(loads.exit_status, 0) << loads.err;
  const auto lj = nlohmann::json::parse(loads.out);
  ASSERT_EQ(lj["loads"].size(), 2u);
  for (const auto& at : lj["loads"]) {
    ASSERT_FALSE(at["baseline_warnings"].empty()) << at.dump();
    EXPECT_EQ(at["baseline_warnings"][0]["code"], "context_limit");
    for (const auto& x : at["levers"]) {
      if (x.contains("cost_per_task_usd")) {
        EXPECT_TRUE(x["warnings"].is_array()) << x["lever"];
      }
    }
  }
  const auto load_table = RunKvbill("compare --jobs 2 --load 1,2 --scenario " + scenario);
  ASSERT_EQ(load_table.exit_status, 0) << load_table.err;
  EXPECT_NE(load_table.out.find("load 2, warnings:\n  baseline: warning [context_limit]: "),
            std::string::npos)
      << load_table.out;
}

// Issue 16, item 8: an API run once fitted a growth exponent of -0.70 on
// three tasks. small_sweep.json has two tasks (30 and 34 requests, as
// `simulate` lists them): two sizes, fewer than five, so no exponent.
TEST(CompareValueCliTest, GrowthExponentIsNotFittedOnFewerThanFiveTaskSizes) {
  const std::string scenario = "tests/data/scenarios/small_sweep.json";
  const auto tasks = RunKvbill("simulate --format json --scenario " + scenario);
  ASSERT_EQ(tasks.exit_status, 0) << tasks.err;
  // The fit takes the tasks served whole; those cut short at the model's
  // context (Qwen3-8B's 40,960 tokens) are left out and counted.
  std::set<int> sizes;
  int cut = 0;
  const auto listed = nlohmann::json::parse(tasks.out);
  for (const auto& t : listed["tasks"]) {
    if (t["cut_short"].get<bool>()) {
      ++cut;
    } else {
      sizes.insert(t["requests"].get<int>());
    }
  }
  ASSERT_LT(sizes.size(), 5u);
  ASSERT_EQ(listed["tasks"].size(), 2u);
  const std::string why =
      "a growth exponent needs tasks of at least 5 distinct sizes; these "
      "tasks have " +
      std::to_string(sizes.size());
  const std::string left_out = cut == 0
                                   ? std::string()
                                   : "; " + std::to_string(cut) + (cut == 1 ? " task" : " tasks") +
                                         " cut short at the model's context left out";
  const auto r = RunKvbill("compare --format json --jobs 2 --scenario " + scenario);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto growth = nlohmann::json::parse(r.out)["growth"];
  EXPECT_FALSE(growth.contains("exponent"));
  EXPECT_EQ(growth["not_fitted"], why);
  EXPECT_EQ(growth["cut_tasks_left_out"], cut);
  const auto table = RunKvbill("compare --jobs 2 --scenario " + scenario);
  EXPECT_NE(table.out.find("\ngrowth exponent not fitted: " + why + left_out + "\n"),
            std::string::npos)
      << table.out;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Every lever of the bundled default scenario runs, but NVFP4 KV (no engine
// runs it on an H100): a lever that fails reads "n/a" in the ranking, which
// once hid the MLA lever behind a --set check that took its keys for typos.
TEST(CompareValueCliTest, EveryLeverOfTheDefaultScenarioRuns) {
  const auto r = testing::RunKvbill("compare --format json --jobs 2");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool mla = false;
  for (const auto& v : j["variants"]) {
    const std::string lever = v["lever"];
    if (lever.find("latent KV cache") != std::string::npos) mla = v.contains("rank");
    if (lever == "nvfp4 KV cache") continue;
    EXPECT_FALSE(v.contains("error")) << lever << ": " << v.value("error", "");
  }
  EXPECT_TRUE(mla);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
