// End-to-end runs of `kvbill trace gen`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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
  // A run holds every task: at most a million (5e9 ran for minutes, silent).
  run = RunKvbill("trace gen --preset chat --tasks 5000000000 -o '" + out + "'");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "kvbill trace gen: --tasks: at most 1,000,000, got 5,000,000,000\n");
  EXPECT_FALSE(std::filesystem::exists(out));

  // A negative seed once wrapped to 2^64 - 1; an infinite rate put every
  // arrival at 0.
  run = RunKvbill("trace gen --preset chat --tasks 5 --seed -1 -o '" + out + "'");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "kvbill trace gen: --seed: must be an integer in [0, 2^64), got \"-1\"\n");
  run = RunKvbill("trace gen --preset chat --tasks 5 --arrivals-per-s inf -o '" + out + "'");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "kvbill trace gen: --arrivals-per-s: must be a positive finite rate, got inf\n");
  // A rate so low the first gap is beyond any simulated time (1e-300 a
  // second: a mean gap of 1e300 s) once overflowed the millisecond clock
  // and wrote arrivals at -9.2e15 s; 1e-16 wrote them going backwards.
  for (const char* rate : {"1e-300", "1e-16"}) {
    run = RunKvbill(std::string("trace gen --preset chat --tasks 3 --arrivals-per-s ") + rate +
                    " -o '" + out + "'");
    EXPECT_EQ(run.exit_status, 2) << rate;
    EXPECT_EQ(run.err, "kvbill trace gen: " + out +
                           ": --arrivals-per-s: task 1 would arrive beyond the 1e9 s (31.7 "
                           "years) a simulation can time: a higher rate\n")
        << rate;
    EXPECT_FALSE(std::filesystem::exists(out)) << rate;
  }
  // To standard output nothing is written either: at 1.5e-6 tasks a second
  // (a mean gap of 666,667 s) task 1,500 or so passes 1e9 s; the 1,551
  // before it were printed, then the error came.
  run = RunKvbill("trace gen --preset chat --tasks 2000 --arrivals-per-s 1.5e-6 -o -");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("would arrive beyond the 1e9 s"), std::string::npos) << run.err;
  // An empty output path is refused before any work (it wrote a temporary
  // file in the working directory, then failed to rename it).
  run = RunKvbill("trace gen --preset chat --tasks 5 -o ''");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err, "kvbill trace gen: --output: an empty value (give one, or leave it out)\n");

  run = RunKvbill("trace gen --preset chat --tasks 5");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "kvbill trace gen: the option '--output' is required but missing\n"
            "run `kvbill trace gen --help` for the options\n");
  EXPECT_EQ(run.out, "");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// SIGINT or SIGTERM while trace gen writes: the partial PATH.tmp.XXXXXX is
// removed (it grows to gigabytes for a big trace), no PATH appears, and the
// process dies of the signal (re-raised, not an exit status).
TEST(TraceGenCliTest, KilledGenerationLeavesNoTemporaryFile) {
  namespace fs = std::filesystem;
  for (const int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig == SIGTERM ? "SIGTERM" : "SIGINT");
    const fs::path dir =
        fs::path(::testing::TempDir()) / ("trace_gen_signal_" + std::to_string(sig));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string out = (dir / "big.jsonl").string();
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (std::freopen("/dev/null", "w", stderr) == nullptr) ::_exit(121);
      // A million tasks (the most it writes): seconds of writing, signalled
      // as soon as the first bytes land.
      ::execl(KVBILL_BINARY, KVBILL_BINARY, "trace", "gen", "--preset", "chat", "--tasks",
              "1000000", "-o", out.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Wait until the temporary file has bytes in it, then signal.
    bool writing = false;
    for (int i = 0; i < 3000 && !writing; ++i) {
      for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().filename().string().rfind("big.jsonl.tmp.", 0) == 0 &&
            fs::file_size(e.path()) > 0) {
          writing = true;
        }
      }
      if (!writing) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(writing) << "trace gen never wrote its temporary file in " << dir;
    ::kill(pid, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "trace gen ended before the signal (status " << status << ")";
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(fs::is_empty(dir)) << fs::begin(fs::directory_iterator(dir))->path();
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
