// Where outputs go (docs/robustness.md#atomic-outputs): a regular file or a
// new path through a temporary file and a rename, keeping an existing file's
// mode; a device or FIFO written in place with write errors reported; a
// symbolic link refused; a bad path refused before any work.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::Slurp;

namespace fs = std::filesystem;

class OutputPathsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kvbill_output_paths_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(OutputPathsCliTest, AnExistingFileKeepsItsMode) {
  const fs::path out = dir_ / "kv.txt";
  { std::ofstream(out) << "old"; }
  ASSERT_EQ(chmod(out.c_str(), 0600), 0);
  const auto r = testing::RunKvbill("kv --model qwen3-8b -o " + out.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);  // was 0644 (the umask's) before
  EXPECT_NE(Slurp(out), "old");
}

TEST_F(OutputPathsCliTest, ADeviceIsWrittenInPlaceAndItsErrorsReported) {
  // /dev/full takes no bytes (ENOSPC): an error, and the node stays a device.
  const auto full = testing::RunKvbill("kv --model qwen3-8b -o /dev/full");
  EXPECT_EQ(full.exit_status, 2);
  EXPECT_EQ(full.err, "kvbill kv: /dev/full: write failed: No space left on device\n");
  struct stat st {};
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const auto null = testing::RunKvbill("kv --model qwen3-8b -o /dev/null");
  EXPECT_EQ(null.exit_status, 0) << null.err;
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

// Standard output that takes no bytes (`> /dev/full`, ENOSPC) is a failed
// run whatever the command: exit 2 and one line with the system's reason,
// in place of the 0 most commands exited with (and the 1 of a broken
// budget: tight_budget.json breaks one, so check exits 1 to /dev/null).
// trace gen's 2,000 tasks (far beyond one 64 KiB buffer) fail at the first
// buffer, whose reason the C library's buffering forgot by the end.
TEST_F(OutputPathsCliTest, AFailedWriteToStandardOutputIsExitTwoInEveryCommand) {
  const std::string full = ": standard output: write failed: No space left on device\n";
  const std::string sweep = "--scenario tests/data/scenarios/small_sweep.json --jobs 1";
  const std::string shards = (dir_ / "0.json").string() + " " + (dir_ / "1.json").string();
  for (const char* shard : {"0", "1"}) {
    const auto made =
        testing::RunKvbillInSourceDir("sweep " + sweep + " --format json --shard " + shard +
                                      "/2 -o " + (dir_ / shard).string() + ".json");
    ASSERT_EQ(made.exit_status, 0) << made.err;
  }
  const struct {
    std::string command, args;
    int to_null;  // the exit status when standard output takes every byte
  } cases[] = {
      {"bill", "tests/data/bill/views.jsonl --by call", 0},
      {"bill", "tests/data/bill/views.jsonl -o -", 0},
      {"trace convert", "tests/data/traces/native_small.jsonl --to native -o -", 0},
      {"trace stats", "tests/data/traces/mooncake_small.jsonl", 0},
      {"trace gen", "--preset coding-agent --tasks 2000 -o -", 0},
      {"simulate", "--scenario tests/data/scenarios/tight_budget.json", 0},
      {"simulate", "--scenario tests/data/scenarios/tight_budget.json --format json", 0},
      {"check", "--scenario tests/data/scenarios/tight_budget.json", 1},
      {"compare", "--scenario tests/data/scenarios/tight_budget.json", 0},
      {"sweep", sweep + " --format json", 0},
      {"merge", shards, 0},
      {"whatif", "tests/data/traces/api_whatif.jsonl", 0},
      {"models", "", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.command + " " + c.args);
    const auto to_null = testing::RunKvbillInSourceDir(c.command + " " + c.args + " > /dev/null");
    EXPECT_EQ(to_null.exit_status, c.to_null) << to_null.err;
    const auto to_full = testing::RunKvbillInSourceDir(c.command + " " + c.args + " > /dev/full");
    EXPECT_EQ(to_full.exit_status, 2);
    EXPECT_EQ(to_full.err, "kvbill " + c.command + full);
  }
}

TEST_F(OutputPathsCliTest, AFifoIsWrittenInPlace) {
  const fs::path fifo = dir_ / "out.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const fs::path copy = dir_ / "copy.txt";
  const fs::path direct = dir_ / "direct.txt";
  // A reader drains the FIFO into a file while kvbill writes into it.
  const auto r =
      testing::RunCommand("cat '" + fifo.string() + "' > '" + copy.string() + "' & '" +
                          KVBILL_BINARY + "' kv --model qwen3-8b -o '" + fifo.string() + "'; wait");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto d = testing::RunKvbill("kv --model qwen3-8b -o " + direct.string());
  ASSERT_EQ(d.exit_status, 0) << d.err;
  EXPECT_EQ(Slurp(copy), Slurp(direct));
  EXPECT_FALSE(Slurp(copy).empty());
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // not replaced by a regular file
}

TEST_F(OutputPathsCliTest, ASymbolicLinkIsRefusedAndLeftAlone) {
  const fs::path target = dir_ / "target.txt";
  const fs::path link = dir_ / "link.txt";
  { std::ofstream(target) << "kept"; }
  fs::create_symlink(target, link);
  const auto r = testing::RunKvbill("kv --model qwen3-8b -o " + link.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill kv: " + link.string() +
                       ": is a symbolic link; kvbill does not write through links (give the "
                       "file it points to)\n");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(Slurp(target), "kept");
}

// /dev/stdout is a link to the process's standard output (here a pipe):
// written in place as docs/robustness.md says, like "-o -"; a link to a
// FIFO too. Only links to files (or directories) are refused.
TEST_F(OutputPathsCliTest, ALinkToADeviceOrPipeIsWritten) {
  const auto dash = testing::RunKvbill("kv --model qwen3-8b -o -");
  ASSERT_EQ(dash.exit_status, 0) << dash.err;
  const auto dev = testing::RunKvbill("kv --model qwen3-8b -o /dev/stdout");
  ASSERT_EQ(dev.exit_status, 0) << dev.err;
  EXPECT_EQ(dev.out, dash.out);
  EXPECT_FALSE(dev.out.empty());
  // Standard output redirected to a file (the link then points to a regular
  // file): written through the process's own descriptor, after what the
  // shell wrote before it.
  const fs::path file = dir_ / "redirected.txt";
  const auto r =
      testing::RunCommand("(echo first; '" + std::string(KVBILL_BINARY) +
                          "' kv --model qwen3-8b -o /dev/stdout) > '" + file.string() + "'");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(Slurp(file), "first\n" + dash.out);
}

TEST_F(OutputPathsCliTest, ABadOutputPathFailsBeforeTheWork) {
  // The trace does not exist either: the output path is checked first, so
  // the message is about it (before, the trace's error came first, and a
  // good trace was read and summarised before the write failed).
  const fs::path file = dir_ / "file";
  { std::ofstream(file) << "x"; }
  const std::string bad = (file / "out.json").string();
  const auto r =
      testing::RunKvbill("trace stats " + (dir_ / "missing.jsonl").string() + " -o " + bad);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill trace stats: " + bad + ": cannot create: Not a directory\n");
  const auto s = testing::RunKvbill("simulate -s " + (dir_ / "missing.json").string() + " --out " +
                                    (file / "sub").string());
  EXPECT_EQ(s.exit_status, 2);
  EXPECT_EQ(s.err, "kvbill simulate: " + (file / "sub").string() +
                       ": cannot create: " + file.string() + " is not a directory\n");
}

// An output path that names a file the run reads (by any name: a hard
// link too) would replace the input with the output: exit 2 naming it, the
// input byte for byte as it was. A file read to be rewritten stays
// writable: `scenario docs FILE --write`.
TEST_F(OutputPathsCliTest, AnOutputOverAnInputIsRefusedAndTheInputKept) {
  const std::string source = KVBILL_SOURCE_DIR;
  const auto copy = [&](const std::string& from, const std::string& name) {
    const fs::path to = dir_ / name;
    fs::copy_file(source + "/" + from, to, fs::copy_options::overwrite_existing);
    return to.string();
  };
  const std::string trace = copy("tests/data/traces/native_small.jsonl", "t.jsonl");
  const std::string config = copy("tests/data/configs/gemma-2-9b.json", "c.json");
  const std::string log = copy("tests/data/bill/views.jsonl", "log.jsonl");
  const fs::path linked = dir_ / "linked.jsonl";
  fs::create_hard_link(trace, linked);
  for (const auto& [command, input] : std::vector<std::pair<std::string, std::string>>{
           {"trace stats " + trace + " -o " + trace, trace},
           {"trace convert " + trace + " --to native -o " + linked.string(), trace},
           {"kv --model " + config + " -o " + config, config},
           {"bill " + log + " -o " + log, log}}) {
    SCOPED_TRACE(command);
    const std::string before = Slurp(input);
    const auto r = testing::RunKvbill(command);
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_NE(r.err.find(": is an input of this run; kvbill does not write its output over a "
                         "file it reads (give another output path)"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(Slurp(input), before);
  }
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    left.push_back(entry.path().filename().string());
  }
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"c.json", "linked.jsonl", "log.jsonl", "t.jsonl"}));
  const std::string doc = copy("docs/scenario-format.md", "format.md");
  const auto docs = testing::RunKvbill("scenario docs " + doc + " --write");
  EXPECT_EQ(docs.exit_status, 0) << docs.err;
}

TEST_F(OutputPathsCliTest, SimulateOutRenamesNothingWhenOneOfItsFilesCannotBeWritten) {
  // tasks.csv is a directory: neither file may appear (before, simulate.json
  // was renamed in first and tasks.csv failed after it).
  const fs::path out = dir_ / "run";
  fs::create_directories(out / "tasks.csv");
  const auto r = testing::RunKvbill("simulate -s " + std::string(KVBILL_SOURCE_DIR) +
                                    "/tests/data/scenarios/tight_budget.json --format csv --out " +
                                    out.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill simulate: " + (out / "tasks.csv").string() + ": is a directory\n");
  EXPECT_FALSE(fs::exists(out / "simulate.json"));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
