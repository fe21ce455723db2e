// `kvbill sweep --shard auto` end to end: the binary reads the job-array
// variables from its own environment (the parsing cases are in
// sweep_shard_test.cc; a real Slurm array runs in tests/slurm/).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunCommand;
using testing::RunKvbill;

const std::string kScenario = "tests/data/scenarios/small_sweep.json";

// `kvbill ARGS` with only the given job-array variables set (`env -u` drops
// any the test itself runs under, e.g. inside a Slurm job).
testing::RunResult RunInArray(const std::string& variables, const std::string& args) {
  return RunCommand(
      "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_MIN -u SLURM_ARRAY_TASK_MAX "
      "-u SLURM_ARRAY_TASK_STEP -u SLURM_ARRAY_TASK_COUNT -u JOB_COMPLETION_INDEX " +
      variables + " " + KVBILL_BINARY + " " + args);
}

TEST(SweepCliTest, ShardAutoRunsTheSliceOfTheSlurmTask) {
  // --array=1-4, task 3: slice (3 - 1) / 1 = 2 of 4.
  const auto expected =
      RunKvbill("sweep --jobs 1 --scenario " + kScenario + " --shard 2/4 --format json");
  ASSERT_EQ(expected.exit_status, 0) << expected.err;
  const auto slurm = RunInArray(
      "SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=4 "
      "SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=4",
      "sweep --jobs 1 --scenario " + kScenario + " --shard auto --format json");
  ASSERT_EQ(slurm.exit_status, 0) << slurm.err;
  EXPECT_EQ(slurm.out, expected.out);
  // An Indexed Job pod of index 2 with --shard auto/4: the same slice.
  const auto indexed =
      RunInArray("JOB_COMPLETION_INDEX=2",
                 "sweep --jobs 1 --scenario " + kScenario + " --shard auto/4 --format json");
  ASSERT_EQ(indexed.exit_status, 0) << indexed.err;
  EXPECT_EQ(indexed.out, expected.out);
}

TEST(SweepCliTest, ShardAutoOutsideAnArrayIsExitTwoWithoutOutput) {
  const std::string out = ::testing::TempDir() + "/shard_auto_none.json";
  std::filesystem::remove(out);
  const auto r = RunInArray("", "sweep --scenario " + kScenario + " --shard auto -o " + out);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill sweep: --shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor "
            "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto bad = RunInArray(
      "SLURM_ARRAY_TASK_ID=8 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=8 "
      "SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=3",
      "sweep --scenario " + kScenario + " --shard auto -o " + out);
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_NE(bad.err.find("--shard auto: the job array is not evenly spaced"), std::string::npos)
      << bad.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
