// Relative paths (docs/robustness.md#paths): a path given on the command
// line is the working directory's in every command; a path written inside
// a scenario is the scenario's directory's. `compare` and `report` used to
// resolve --trace against the scenario's directory and silently simulated a
// same-named file there.
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

TEST(RelativePathsCliTest, CommandLineTracesAreTheWorkingDirectorysInEveryCommand) {
  const fs::path dir = fs::temp_directory_path() / ("kvbill_relative_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "scen");
  const std::string trace =
      "{\"kvbill_trace\":1}\n"
      "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":1000}],\"out\":10}]}\n";
  // The good trace in the working directory; a broken one of the same name
  // beside the scenario, which must not be read.
  { std::ofstream(dir / "t.jsonl") << trace; }
  { std::ofstream(dir / "scen" / "t.jsonl") << "not a trace\n"; }
  // The scenario names its own trace relative to itself: found from any cwd.
  { std::ofstream(dir / "scen" / "own.jsonl") << trace; }
  {
    std::ofstream(dir / "scen" / "s.json")
        << R"({"model": "qwen3-8b", "trace": {"file": "own.jsonl"},
                        "budgets": {"hit_rate": {"min": 0}}})";
  }
  const fs::path out = dir / "report";
  for (const std::string& command : {std::string("simulate -s scen/s.json -t t.jsonl --format csv"),
                                     std::string("check -s scen/s.json -t t.jsonl"),
                                     std::string("compare -s scen/s.json -t t.jsonl --format json"),
                                     "report -s scen/s.json -t t.jsonl --out " + out.string()}) {
    SCOPED_TRACE(command);
    const auto r =
        testing::RunCommand("cd '" + dir.string() + "' && '" + KVBILL_BINARY + "' " + command);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.err.find("not a trace"), std::string::npos) << r.err;
  }
  // The scenario's own relative path, from another working directory.
  const auto own =
      testing::RunCommand("cd / && '" + std::string(KVBILL_BINARY) + "' simulate -s '" +
                          (dir / "scen" / "s.json").string() + "' --format csv");
  EXPECT_EQ(own.exit_status, 0) << own.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
