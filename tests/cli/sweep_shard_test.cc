// --shard parsing: i/n, and auto / auto/N from a Slurm job array or a
// Kubernetes Indexed Job. The environments below are the variables Slurm
// 22.05 (Debian 12's slurm-wlm) set in a single-node test cluster for
// `sbatch --array=...` with the spec named in each test (printed with
// `env | grep SLURM_ARRAY` from the job); the expected index is worked out by
// hand from index = (ID - MIN) / STEP.
#include "cli/sweep_shard.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace kvbill::cli {
namespace KVBILL_TEST_FILE_ID {
namespace {

using Environment = std::map<std::string, std::string>;

EnvironmentLookup Lookup(const Environment& environment) {
  return [environment](const std::string& name) -> std::optional<std::string> {
    auto it = environment.find(name);
    if (it == environment.end()) return std::nullopt;
    return it->second;
  };
}

// A Slurm array task's environment.
Environment Slurm(const std::string& id, const std::string& min, const std::string& max,
                  const std::string& step, const std::string& count) {
  return {{"SLURM_ARRAY_TASK_ID", id},
          {"SLURM_ARRAY_TASK_MIN", min},
          {"SLURM_ARRAY_TASK_MAX", max},
          {"SLURM_ARRAY_TASK_STEP", step},
          {"SLURM_ARRAY_TASK_COUNT", count}};
}

void ExpectShard(const std::string& text, const Environment& environment, int index, int count) {
  const auto shard = ParseShard(text, Lookup(environment));
  ASSERT_TRUE(shard) << shard.error().message();
  EXPECT_EQ(shard->index, index) << text;
  EXPECT_EQ(shard->count, count) << text;
}

void ExpectError(const std::string& text, const Environment& environment,
                 const std::string& message) {
  const auto shard = ParseShard(text, Lookup(environment));
  ASSERT_FALSE(shard) << text << " -> " << shard->index << "/" << shard->count;
  EXPECT_EQ(shard.error().message(), message);
  EXPECT_EQ(shard.error().exit_status(), 2);
}

TEST(ParseShardTest, ReadsIOverN) {
  ExpectShard("0/1", {}, 0, 1);
  ExpectShard("3/4", {}, 3, 4);
  ExpectShard("15/16", {}, 15, 16);
}

TEST(ParseShardTest, RejectsMalformedIOverN) {
  for (const char* text : {"4/4", "1/0", "-1/4", "+1/4", " 1/4", "1/4 ", "1", "a/4", "1/b", "", "/",
                           "1//4", "99999999999/4"}) {
    ExpectError(text, {},
                std::string("--shard: expected i/n with 0 <= i < n, got \"") + text + "\"");
  }
}

TEST(ParseShardTest, IOverNIgnoresTheEnvironment) {
  ExpectShard("1/2", Slurm("3", "0", "3", "1", "4"), 1, 2);
}

TEST(ParseShardTest, AutoInSlurmArrayFromZero) {
  // --array=0-3: IDs 0..3, index = ID.
  for (int id = 0; id < 4; ++id) {
    ExpectShard("auto", Slurm(std::to_string(id), "0", "3", "1", "4"), id, 4);
  }
}

TEST(ParseShardTest, AutoInSlurmArrayFromOne) {
  // --array=1-4: ID 1 is index 0, ID 4 is index 3.
  ExpectShard("auto", Slurm("1", "1", "4", "1", "4"), 0, 4);
  ExpectShard("auto", Slurm("4", "1", "4", "1", "4"), 3, 4);
}

TEST(ParseShardTest, AutoInSlurmArrayWithStep) {
  // --array=0-7:2: IDs 0, 2, 4, 6 (MAX=6, COUNT=4); ID 6 is (6 - 0) / 2 = 3.
  ExpectShard("auto", Slurm("0", "0", "6", "2", "4"), 0, 4);
  ExpectShard("auto", Slurm("4", "0", "6", "2", "4"), 2, 4);
  ExpectShard("auto", Slurm("6", "0", "6", "2", "4"), 3, 4);
  // --array=3-15:4: IDs 3, 7, 11, 15; ID 11 is (11 - 3) / 4 = 2.
  ExpectShard("auto", Slurm("11", "3", "15", "4", "4"), 2, 4);
}

TEST(ParseShardTest, AutoInSlurmArrayWithThrottle) {
  // --array=2-3%1 runs one task at a time; the variables are those of 2-3.
  ExpectShard("auto", Slurm("3", "2", "3", "1", "2"), 1, 2);
}

TEST(ParseShardTest, AutoInOneTaskSlurmArray) {
  // --array=5: one task, ID 5.
  ExpectShard("auto", Slurm("5", "5", "5", "1", "1"), 0, 1);
}

TEST(ParseShardTest, AutoDerivesAMissingStep) {
  // --array=0-7:2 without SLURM_ARRAY_TASK_STEP: (6 - 0) / (4 - 1) = 2.
  Environment e = Slurm("4", "0", "6", "2", "4");
  e.erase("SLURM_ARRAY_TASK_STEP");
  ExpectShard("auto", e, 2, 4);
  // One task: no step needed.
  Environment one = Slurm("5", "5", "5", "1", "1");
  one.erase("SLURM_ARRAY_TASK_STEP");
  ExpectShard("auto", one, 0, 1);
  // MIN=0, MAX=4 cannot space 4 tasks evenly: 4 / 3 = 1 (integer), 0 + 1 * 3 != 4.
  Environment uneven = Slurm("4", "0", "4", "1", "4");
  uneven.erase("SLURM_ARRAY_TASK_STEP");
  ExpectError("auto", uneven,
              "--shard auto: the job array is not evenly spaced: SLURM_ARRAY_TASK_MIN=0, "
              "SLURM_ARRAY_TASK_MAX=4, SLURM_ARRAY_TASK_STEP=1 (derived), "
              "SLURM_ARRAY_TASK_COUNT=4 (MAX must be MIN + STEP * (COUNT - 1)); submit "
              "--array=A-B or A-B:S");
}

TEST(ParseShardTest, AutoRejectsAnUnevenSlurmArray) {
  // --array=1,3,8: Slurm 22.05 sets STEP=1 and COUNT=3 but MAX=8; (8 - 1) / 1
  // = 7 would be an index past the count, so it is an error, not a guess.
  ExpectError("auto", Slurm("8", "1", "8", "1", "3"),
              "--shard auto: the job array is not evenly spaced: SLURM_ARRAY_TASK_MIN=1, "
              "SLURM_ARRAY_TASK_MAX=8, SLURM_ARRAY_TASK_STEP=1, SLURM_ARRAY_TASK_COUNT=3 (MAX "
              "must be MIN + STEP * (COUNT - 1)); submit --array=A-B or A-B:S");
}

TEST(ParseShardTest, AutoRejectsAnIdOffTheArray) {
  ExpectError("auto", Slurm("3", "0", "6", "2", "4"),
              "--shard auto: SLURM_ARRAY_TASK_ID=3 is not in the array 0-6:2");
  ExpectError("auto", Slurm("7", "0", "3", "1", "4"),
              "--shard auto: SLURM_ARRAY_TASK_ID=7 is not in the array 0-3:1");
  ExpectError("auto", Slurm("0", "1", "4", "1", "4"),
              "--shard auto: SLURM_ARRAY_TASK_ID=0 is not in the array 1-4:1");
}

TEST(ParseShardTest, AutoNamesAMissingSlurmVariable) {
  for (const char* name :
       {"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX"}) {
    Environment e = Slurm("1", "0", "3", "1", "4");
    e.erase(name);
    ExpectError("auto", e, std::string("--shard auto: ") + name + " is not set");
  }
}

TEST(ParseShardTest, AutoNamesABadSlurmValue) {
  ExpectError("auto", Slurm("x1", "0", "3", "1", "4"),
              "--shard auto: SLURM_ARRAY_TASK_ID=\"x1\" is not a non-negative integer");
  ExpectError("auto", Slurm("1", "0", "3", "1", "-4"),
              "--shard auto: SLURM_ARRAY_TASK_COUNT=\"-4\" is not a non-negative integer");
  ExpectError("auto", Slurm("1", "0", "3", "", "4"),
              "--shard auto: SLURM_ARRAY_TASK_STEP=\"\" is not a non-negative integer");
  ExpectError("auto", Slurm("1", "0", "3", "0", "4"),
              "--shard auto: SLURM_ARRAY_TASK_STEP=0 must be at least 1");
  ExpectError("auto", Slurm("1", "0", "3", "1", "0"),
              "--shard auto: SLURM_ARRAY_TASK_COUNT=0 must be at least 1");
  ExpectError("auto", Slurm("1", "3", "0", "1", "4"),
              "--shard auto: SLURM_ARRAY_TASK_MAX=0 is below SLURM_ARRAY_TASK_MIN=3");
}

TEST(ParseShardTest, AutoOverNChecksTheSlurmCount) {
  ExpectShard("auto/4", Slurm("2", "1", "4", "1", "4"), 1, 4);
  ExpectError("auto/8", Slurm("2", "1", "4", "1", "4"),
              "--shard auto/8: SLURM_ARRAY_TASK_COUNT=4 differs from the N=8 of auto/N");
}

TEST(ParseShardTest, AutoOverNInIndexedJob) {
  // An Indexed Job of 4 completions: pods see JOB_COMPLETION_INDEX 0..3.
  ExpectShard("auto/4", {{"JOB_COMPLETION_INDEX", "0"}}, 0, 4);
  ExpectShard("auto/4", {{"JOB_COMPLETION_INDEX", "3"}}, 3, 4);
  ExpectError("auto/4", {{"JOB_COMPLETION_INDEX", "4"}},
              "--shard auto/4: JOB_COMPLETION_INDEX=4 is not below the N=4 of auto/N");
  ExpectError("auto/4", {{"JOB_COMPLETION_INDEX", "one"}},
              "--shard auto/4: JOB_COMPLETION_INDEX=\"one\" is not a non-negative integer");
}

TEST(ParseShardTest, AutoInIndexedJobNeedsTheCount) {
  ExpectError("auto", {{"JOB_COMPLETION_INDEX", "2"}},
              "--shard auto: JOB_COMPLETION_INDEX=2 is set but not the Job's number of "
              "completions: give it as --shard auto/N");
}

TEST(ParseShardTest, AutoOutsideAnyArrayIsAnError) {
  const std::string message =
      ": neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a "
      "Kubernetes Indexed Job) is set";
  ExpectError("auto", {}, "--shard auto" + message);
  ExpectError("auto/4", {{"SLURM_JOB_ID", "7"}}, "--shard auto/4" + message);
}

TEST(ParseShardTest, AutoRefusesTwoSources) {
  Environment e = Slurm("1", "0", "3", "1", "4");
  e["JOB_COMPLETION_INDEX"] = "2";
  ExpectError("auto/4", e,
              "--shard auto/4: both SLURM_ARRAY_TASK_ID=1 and JOB_COMPLETION_INDEX=2 are set; "
              "give --shard i/n");
}

TEST(ParseShardTest, RejectsMalformedAutoOverN) {
  for (const char* text : {"auto/0", "auto/", "auto/x", "auto/-2", "auto/4/1"}) {
    ExpectError(text, Slurm("1", "0", "3", "1", "4"),
                std::string("--shard: expected auto/N with N >= 1, got \"") + text + "\"");
  }
  // Anything else, "Auto" or "auto4" included, is read as i/n.
  ExpectError("Auto", {}, "--shard: expected i/n with 0 <= i < n, got \"Auto\"");
  ExpectError("auto4", {}, "--shard: expected i/n with 0 <= i < n, got \"auto4\"");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill::cli
