// simulate under deployment.billing and trace.load, end to end.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

// tests/data/scenarios/small_sweep.json's workload with `extra` keys added.
std::string Scenario(const std::string& name, const std::string& extra) {
  const std::string path = ::testing::TempDir() + "/" + name + ".json";
  std::ofstream(path) << R"({"name": ")" << name
                      << R"(", "model": "qwen3-8b", "trace": {"generator": "coding-agent",
                         "tasks": 4)"
                      << (extra.empty() ? "}" : "}, " + extra) << "}";
  return path;
}

nlohmann::json Simulate(const std::string& scenario) {
  const auto r = RunKvbill("simulate --format json --scenario " + scenario);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  return r.exit_status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

TEST(BillingCliTest, BusyAndAmortizedRebillTheDedicatedRun) {
  const auto d = Simulate(Scenario("dedicated", ""));
  const auto b = Simulate(Scenario("busy", R"("deployment": {"billing": "busy"})"));
  const auto a = Simulate(Scenario("amortized", R"("deployment": {"billing": "amortized"})"));
  ASSERT_FALSE(d.is_null() || b.is_null() || a.is_null());
  const auto& ds = d["summary"];
  EXPECT_EQ(ds["billing"], "dedicated");
  EXPECT_EQ(b["summary"]["billing"], "busy");
  EXPECT_EQ(a["summary"]["billing"], "amortized");
  const double bill = ds["cost_usd"].get<double>();
  const double idle = ds["idle_cost_usd"].get<double>();
  ASSERT_GT(idle, 0);  // tool waits leave the GPU idle
  EXPECT_DOUBLE_EQ(ds["idle_gpu_usd"].get<double>(), idle);
  // busy: the bill is what the tasks paid; the idle time is said, not billed.
  EXPECT_DOUBLE_EQ(b["summary"]["cost_usd"].get<double>(), ds["task_cost_usd"].get<double>());
  EXPECT_EQ(b["summary"]["idle_cost_usd"], 0);
  EXPECT_DOUBLE_EQ(b["summary"]["idle_gpu_usd"].get<double>(), idle);
  // amortized: the same bill, all of it in the tasks.
  EXPECT_DOUBLE_EQ(a["summary"]["cost_usd"].get<double>(), bill);
  EXPECT_NEAR(a["summary"]["task_cost_usd"].get<double>(), bill, bill * 1e-12);
  double tasks = 0, shares = 0;
  ASSERT_EQ(a["tasks"].size(), d["tasks"].size());
  for (std::size_t i = 0; i < a["tasks"].size(); ++i) {
    const auto& t = a["tasks"][i];
    tasks += t["cost_usd"].get<double>();
    shares += t["idle_share_usd"].get<double>();
    EXPECT_NEAR(t["cost_usd"].get<double>(),
                d["tasks"][i]["cost_usd"].get<double>() + t["idle_share_usd"].get<double>(), 1e-15);
    EXPECT_FALSE(d["tasks"][i].contains("idle_share_usd"));
  }
  EXPECT_NEAR(tasks, bill, bill * 1e-12);
  EXPECT_NEAR(shares, idle, idle * 1e-12);
  const auto table =
      RunKvbill("simulate --scenario " +
                Scenario("amortized_t", R"("deployment": {"billing": "amortized"})"));
  EXPECT_NE(table.out.find("billing amortized: idle GPU time"), std::string::npos) << table.out;
  const auto bad = RunKvbill("simulate --scenario " +
                             Scenario("bad_billing", R"("deployment": {"billing": "shared"})"));
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_NE(bad.err.find("#/deployment/billing: "), std::string::npos) << bad.err;
}

TEST(BillingCliTest, DedicatedIsTheDefaultToTheByte) {
  const auto absent = RunKvbill("simulate --format csv --scenario " + Scenario("same", ""));
  const auto given = RunKvbill("simulate --format csv --scenario " +
                               Scenario("same", R"("deployment": {"billing": "dedicated"})"));
  ASSERT_EQ(absent.exit_status, 0) << absent.err;
  EXPECT_EQ(absent.out, given.out);
}

// A generated trace's task starts at load 4 are a quarter of load 1's (the
// division by 4 is exact in binary), and a load of 0 is an error.
TEST(LoadCliTest, LoadFourStartsTasksFourTimesAsOften) {
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& load) {
    const std::string path = dir + "/" + name + ".json";
    std::ofstream(path) << R"({"model": "qwen3-8b", "trace": {"generator": "coding-agent",
                               "tasks": 4)"
                        << load << "}}";
    return path;
  };
  auto starts = [&](const std::string& path) {
    const auto r = RunKvbill("simulate --format json --requests --scenario " + path);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    std::map<std::string, double> out;
    if (r.exit_status != 0) return out;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& q : doc["requests"]) {
      if (q["index"] == 0) out[q["task"].get<std::string>()] = q["release_s"].get<double>();
    }
    return out;
  };
  const auto one = starts(write("load_one", ""));
  const auto four = starts(write("load_four", R"(, "load": 4)"));
  ASSERT_EQ(one.size(), 4u);
  ASSERT_EQ(four.size(), 4u);
  double latest = 0;
  for (const auto& [task, start] : one) {
    EXPECT_DOUBLE_EQ(four.at(task), start / 4) << task;
    latest = std::max(latest, start);
  }
  EXPECT_GT(latest, 0);  // the generator spreads the starts
  const std::string bad = write("bad_load", R"(, "load": 0)");
  const auto r = RunKvbill("simulate --scenario " + bad);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find(bad + "#/trace/load: "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
