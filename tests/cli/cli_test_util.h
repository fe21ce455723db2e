// Runs the real kvbill binary for end-to-end tests.
#ifndef KVBILL_TESTS_CLI_CLI_TEST_UTIL_H_
#define KVBILL_TESTS_CLI_CLI_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace kvbill::testing {

// The directories RemoveAtExitIfPassed was given in this process.
inline std::vector<std::filesystem::path>& DirectoriesToRemove() {
  static std::vector<std::filesystem::path> dirs;
  return dirs;
}

// Removes `dir` when the test process exits if its tests passed; a
// failure keeps the files to look at.
inline void RemoveAtExitIfPassed(const std::filesystem::path& dir) {
  // The list first: statics are destroyed after the exit handlers
  // registered after them have run.
  std::vector<std::filesystem::path>& dirs = DirectoriesToRemove();
  static const bool registered = [] {
    std::atexit([] {
      if (!::testing::UnitTest::GetInstance()->Passed()) return;
      std::error_code ec;
      for (const auto& d : DirectoriesToRemove()) std::filesystem::remove_all(d, ec);
    });
    return true;
  }();
  (void)registered;
  dirs.push_back(dir);
}

struct RunResult {
  int exit_status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `command` through the shell: its stdout, exit status and stderr.
inline RunResult RunCommand(const std::string& command) {
  // Per process and call: other builds of this suite may run at the same time.
  static int counter = 0;
  const std::string err_path =
      "/tmp/kvbill_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string cmd = command + " 2>'" + err_path + "'";
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* f = std::fopen(err_path.c_str(), "r")) {
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) r.err.append(buf.data(), n);
    std::fclose(f);
  }
  std::remove(err_path.c_str());
  return r;
}

// The whole file at `path`, byte for byte (empty when it cannot be read).
inline std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `kvbill ARGS` through the shell (args are passed verbatim).
inline RunResult RunKvbill(const std::string& args) {
  return RunCommand(std::string(KVBILL_BINARY) + " " + args);
}

// Runs `PREFIX kvbill ARGS` from the source root, so fixture paths are
// relative; `prefix` goes before the command in the shell (e.g. a ulimit).
inline RunResult RunKvbillInSourceDir(const std::string& args, const std::string& prefix = "") {
  return RunCommand(std::string("cd '") + KVBILL_SOURCE_DIR + "' && " + prefix + "'" +
                    KVBILL_BINARY + "' " + args);
}

}  // namespace kvbill::testing

#endif  // KVBILL_TESTS_CLI_CLI_TEST_UTIL_H_
