// End-to-end runs of `kvbill trace gen`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace {

using testing::Slurp;

using testing::RunKvbill;
using testing::RunResult;

std::string TempPath(const std::string& name) { return ::testing::TempDir() + name; }

TEST(TraceGenCliTest, WritesANativeTraceThatStatsReads) {
  const std::string out = TempPath("trace_gen_cli_a.jsonl");
  std::filesystem::remove(out);
  RunResult run = RunKvbill("trace gen --preset coding-agent --tasks 20 --seed 3 -o '" + out + "'");
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(Slurp(out).substr(0, 19), "{\"kvbill_trace\":1}\n");
  run = RunKvbill("trace stats '" + out + "'");
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_NE(run.out.find("tasks      20\n"), std::string::npos) << run.out;
  std::filesystem::remove(out);
}

TEST(TraceGenCliTest, SameSeedGivesTheSameBytesInAFileOrOnStdout) {
  const std::string out = TempPath("trace_gen_cli_b.jsonl");
  std::filesystem::remove(out);
  ASSERT_EQ(RunKvbill("trace gen --preset chat --tasks 30 --seed 11 -o '" + out + "'").exit_status,
            0);
  const RunResult same = RunKvbill("trace gen --preset chat --tasks 30 --seed 11 -o -");
  ASSERT_EQ(same.exit_status, 0) << same.err;
  EXPECT_EQ(same.out, Slurp(out));
  const RunResult other = RunKvbill("trace gen --preset chat --tasks 30 --seed 12 -o -");
  EXPECT_NE(other.out, same.out);
  std::filesystem::remove(out);
}

TEST(TraceGenCliTest, BadFlagsGiveExactMessagesExit2AndNoFile) {
  const std::string out = TempPath("trace_gen_cli_bad.jsonl");
  std::filesystem::remove(out);
  RunResult run = RunKvbill("trace gen --preset agent --tasks 5 -o '" + out + "'");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "kvbill trace gen: --preset: unknown preset \"agent\" (one of coding-agent|chat)\n");

  run = RunKvbill("trace gen --preset chat --tasks 0 -o '" + out + "'");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "kvbill trace gen: --tasks: must be a positive integer, got 0\n");

  run = RunKvbill("trace gen --preset chat --tasks 5");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "kvbill trace gen: the option '--output' is required but missing\n"
            "run `kvbill trace gen --help` for the options\n");
  EXPECT_EQ(run.out, "");
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace kvbill
