// The same inputs and seed give byte-identical output, run after run and
// with 1 or N jobs (docs/robustness.md#determinism). Each test runs a command
// twice (or with different --jobs) and compares every byte it wrote: stdout
// and the files of -o/--out. The only documented exception is simulate's
// "wall_s", the measured run time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::Slurp;

using testing::RunKvbill;
namespace fs = std::filesystem;

const std::string kSource = KVBILL_SOURCE_DIR;
const std::string kSweep = kSource + "/tests/data/scenarios/small_sweep.json";
const std::string kMooncake = kSource + "/scenarios/examples/mooncake-replay.json";

fs::path FreshDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("kvbill_determinism_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs `args` and returns its stdout, failing the test on a non-zero exit.
std::string Out(const std::string& args) {
  const auto r = RunKvbill(args);
  EXPECT_EQ(r.exit_status, 0) << args << "\n" << r.err;
  EXPECT_FALSE(r.out.empty()) << args;
  return r.out;
}

// simulate's JSON with "wall_s" (the measured run time) removed, re-serialised
// in the same key order, so everything else must match byte for byte.
std::string WithoutWallClock(const std::string& json_text) {
  auto j = nlohmann::ordered_json::parse(json_text);
  EXPECT_TRUE(j["summary"].contains("wall_s"));
  j["summary"].erase("wall_s");
  return j.dump(2);
}

TEST(DeterminismCliTest, SimulateTwiceGivesTheSameBytesInEveryFormat) {
  for (const std::string& scenario : {std::string("default"), kMooncake}) {
    SCOPED_TRACE(scenario);
    const std::string base = "simulate --scenario " + scenario;
    EXPECT_EQ(Out(base), Out(base));
    EXPECT_EQ(Out(base + " --format csv"), Out(base + " --format csv"));
    EXPECT_EQ(WithoutWallClock(Out(base + " --format json --requests")),
              WithoutWallClock(Out(base + " --format json --requests")));
  }
}

TEST(DeterminismCliTest, SimulateOutDirTwiceGivesTheSameFiles) {
  const fs::path a = FreshDir("sim_a"), b = FreshDir("sim_b");
  const std::string base = "simulate --scenario " + kMooncake + " --out ";
  const std::string table_a = Out(base + a.string()), table_b = Out(base + b.string());
  EXPECT_EQ(table_a, table_b);
  EXPECT_EQ(Slurp(a / "tasks.csv"), Slurp(b / "tasks.csv"));
  EXPECT_EQ(WithoutWallClock(Slurp(a / "simulate.json")),
            WithoutWallClock(Slurp(b / "simulate.json")));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(DeterminismCliTest, SweepWithOneAndTwoJobsWritesTheSameFile) {
  const fs::path dir = FreshDir("sweep");
  for (const char* format : {"csv", "json"}) {
    SCOPED_TRACE(format);
    const fs::path one = dir / (std::string("one.") + format);
    const fs::path two = dir / (std::string("two.") + format);
    const std::string base = "sweep --scenario " + kSweep + " --format " + format;
    ASSERT_EQ(RunKvbill(base + " --jobs 1 -o " + one.string()).exit_status, 0);
    ASSERT_EQ(RunKvbill(base + " --jobs 2 -o " + two.string()).exit_status, 0);
    const std::string bytes = Slurp(one);
    EXPECT_FALSE(bytes.empty());
    EXPECT_EQ(bytes, Slurp(two));
    // Shards run with different job counts merge into the same bytes.
    const fs::path s0 = dir / "s0.json", s1 = dir / "s1.json", merged = dir / "merged";
    ASSERT_EQ(RunKvbill("sweep --scenario " + kSweep + " --format json --jobs 2 --shard 0/2 -o " +
                        s0.string())
                  .exit_status,
              0);
    ASSERT_EQ(RunKvbill("sweep --scenario " + kSweep + " --format json --jobs 1 --shard 1/2 -o " +
                        s1.string())
                  .exit_status,
              0);
    ASSERT_EQ(RunKvbill("merge " + s1.string() + " " + s0.string() + " --format " + format +
                        " -o " + merged.string())
                  .exit_status,
              0);
    EXPECT_EQ(Slurp(merged), bytes);
  }
  fs::remove_all(dir);
}

TEST(DeterminismCliTest, CompareTwiceGivesTheSameBytes) {
  const std::string base = "compare --scenario " + kSweep;
  EXPECT_EQ(Out(base), Out(base));
  EXPECT_EQ(Out(base + " --format json"), Out(base + " --format json"));
}

TEST(DeterminismCliTest, ReportTwiceWithDifferentJobsGivesTheSamePage) {
  const fs::path a = FreshDir("report_a"), b = FreshDir("report_b");
  const std::string base = "report --scenario " + kSweep;
  ASSERT_EQ(RunKvbill(base + " --jobs 2 --out " + a.string()).exit_status, 0);
  ASSERT_EQ(RunKvbill(base + " --jobs 1 --out " + b.string()).exit_status, 0);
  const std::string page = Slurp(a / "report.html");
  EXPECT_GT(page.size(), 1000u);
  EXPECT_EQ(page, Slurp(b / "report.html"));
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(DeterminismCliTest, TraceGenConvertAndStatsTwiceGiveTheSameBytes) {
  const fs::path dir = FreshDir("trace");
  const fs::path a = dir / "a.jsonl", b = dir / "b.jsonl";
  const std::string gen = "trace gen --preset coding-agent --tasks 200 --seed 7 -o ";
  ASSERT_EQ(RunKvbill(gen + a.string()).exit_status, 0);
  ASSERT_EQ(RunKvbill(gen + b.string()).exit_status, 0);
  EXPECT_EQ(Slurp(a), Slurp(b));
  // Converting a foreign trace twice, and converting the native file back.
  const std::string mooncake = kSource + "/tests/data/traces/mooncake_small.jsonl";
  const fs::path c = dir / "c.jsonl", d = dir / "d.jsonl", e = dir / "e.jsonl";
  ASSERT_EQ(RunKvbill("trace convert " + mooncake + " --to native -o " + c.string()).exit_status,
            0);
  ASSERT_EQ(RunKvbill("trace convert " + mooncake + " --to native -o " + d.string()).exit_status,
            0);
  EXPECT_EQ(Slurp(c), Slurp(d));
  ASSERT_EQ(RunKvbill("trace convert " + a.string() + " --to native -o " + e.string()).exit_status,
            0);
  EXPECT_EQ(Slurp(e), Slurp(a));  // native -> native is the identity
  EXPECT_EQ(Out("trace stats " + a.string() + " --format json"),
            Out("trace stats " + b.string() + " --format json"));
  fs::remove_all(dir);
}

TEST(DeterminismCliTest, BillTwiceGivesTheSameBytes) {
  const std::string logs = kSource + "/tests/data/bill/headless_two_runs.jsonl " + kSource +
                           "/tests/data/traces/claude_code_small.jsonl";
  for (const char* format : {"table", "json", "csv"}) {
    SCOPED_TRACE(format);
    const std::string base = "bill " + logs + " --format " + format;
    EXPECT_EQ(Out(base), Out(base));
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
