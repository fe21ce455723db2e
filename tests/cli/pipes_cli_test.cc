// Inputs read once, as streams (docs/robustness.md#pipes): a trace given as
// a FIFO, as /dev/stdin or as `-` gives exactly what the file gives. Before,
// the trace was opened twice and format detection ate the first 8 KiB of a
// pipe: small traces read as 0 tasks with exit 0, and `whatif` hung on a
// FIFO it tried to read a second time.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

namespace fs = std::filesystem;

class PipesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kvbill_pipes_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fifo_ = (dir_ / "in.fifo").string();
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `kvbill ARGS` with {IN} standing for the input, run four ways: the file,
  // a FIFO a writer fills, /dev/stdin and `-` (both redirected from the
  // file). Every run gives the file's output; the command must not wait
  // for input a second time (a 60 s timeout ends a hang as a failure).
  void ExpectSameFromEveryKindOfInput(const std::string& args, const std::string& file) {
    // The input's name, where an output repeats it (whatif lists its logs),
    // reads {IN}.
    auto run = [&](const std::string& in, const std::string& redirect) {
      std::string a = args;
      a.replace(a.find("{IN}"), 4, in);
      auto r = testing::RunCommand("cd '" + std::string(KVBILL_SOURCE_DIR) + "' && " + redirect +
                                   "timeout 60 '" + KVBILL_BINARY + "' " + a);
      for (std::size_t at = r.out.find("\"" + in + "\""); at != std::string::npos;
           at = r.out.find("\"" + in + "\"", at)) {
        r.out.replace(at + 1, in.size(), "{IN}");
      }
      return r;
    };
    const auto direct = run(file, "");
    ASSERT_EQ(direct.exit_status, 0) << direct.err;
    ASSERT_FALSE(direct.out.empty());
    const auto fifo = run(fifo_, "cat '" + file + "' > '" + fifo_ + "' & ");
    EXPECT_EQ(fifo.exit_status, 0) << fifo.err;
    EXPECT_EQ(fifo.out, direct.out);
    for (const std::string stdin_name : {"/dev/stdin", "-"}) {
      SCOPED_TRACE(stdin_name);
      const auto piped = run(stdin_name, "cat '" + file + "' | ");
      EXPECT_EQ(piped.exit_status, 0) << piped.err;
      EXPECT_EQ(piped.out, direct.out);
    }
  }

  fs::path dir_;
  std::string fifo_;
};

TEST_F(PipesCliTest, TraceStatsDetectsTheFormatOfAPipeWithoutLosingLines) {
  ExpectSameFromEveryKindOfInput("trace stats {IN} --format json",
                                 "tests/data/traces/native_small.jsonl");
  ExpectSameFromEveryKindOfInput("trace stats {IN} --format json",
                                 "tests/data/traces/claude_code_small.jsonl");
}

TEST_F(PipesCliTest, SimulateReadsATraceFromAPipe) {
  ExpectSameFromEveryKindOfInput("simulate -t {IN} --format csv",
                                 "tests/data/traces/native_small.jsonl");
}

TEST_F(PipesCliTest, WhatifReadsALogFromAFifoOnce) {
  ExpectSameFromEveryKindOfInput("whatif {IN} --format json", "tests/data/traces/api_whatif.jsonl");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
