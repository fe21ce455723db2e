// Fatal conditions (docs/robustness.md#fatal-conditions) and the sizes
// checked before allocating (docs/robustness.md#sizes).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

namespace fs = std::filesystem;

fs::path Scenario(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() /
                        ("kvbill_fatal_" + std::to_string(getpid()) + "_" + name + ".json");
  std::ofstream(path) << text;
  return path;
}

TEST(FatalCliTest, ReplicasBeyondTheirBoundAreAnInputError) {
  // 10^8 replicas ended in bad_alloc and an abort (status 134).
  const fs::path s =
      Scenario("replicas", R"({"model": "qwen3-8b", "deployment": {"replicas": 100000000},
 "trace": {"generator": "coding-agent", "tasks": 2}})");
  const auto r = testing::RunKvbill("simulate -s " + s.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find(s.string() + "#/deployment/replicas: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("65536"), std::string::npos) << r.err;
  fs::remove(s);
}

TEST(FatalCliTest, OutOfMemoryEndsWithAKvbillLineAndStatusThree) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: no ulimit -v";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: no ulimit -v";
#endif
#endif
  // 65,536 replicas (the bound) hold about 3.6 KB each before the run
  // (240 MB; 4,096 measured 23 MB peak): more than a 200 MB address space.
  const fs::path s = Scenario("oom", R"({"model": "qwen3-8b", "deployment": {"replicas": 65536},
 "trace": {"generator": "coding-agent", "tasks": 2}})");
  const auto r = testing::RunCommand("ulimit -v 200000 && '" + std::string(KVBILL_BINARY) +
                                     "' simulate -s " + s.string());
  EXPECT_EQ(r.exit_status, 3);
  EXPECT_EQ(r.err,
            "kvbill simulate: out of memory (the input needs more memory than the system gives; "
            "see docs/robustness.md#fatal-conditions)\n");
  fs::remove(s);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
