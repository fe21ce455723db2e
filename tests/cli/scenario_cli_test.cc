// End-to-end runs of `kvbill scenario`: the committed docs and schema are
// what the key table makes, the schema accepts every bundled scenario under
// an independent validator, and from-vllm prints its notes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "kvbill/util/file.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunCommand;
using testing::RunKvbill;
using testing::RunKvbillInSourceDir;

// CI fails here when src/scenario/keys.cc changed and the doc was not
// regenerated (`kvbill scenario docs docs/scenario-format.md --write`).
TEST(ScenarioCliTest, CommittedDocTablesAreTheKeyTables) {
  const auto r = RunKvbillInSourceDir("scenario docs docs/scenario-format.md --check");
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(ScenarioCliTest, CommittedSchemaIsWhatTheCommandPrints) {
  const auto r = RunKvbill("scenario schema");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto committed = ReadFile(std::string(KVBILL_SOURCE_DIR) + "/docs/scenario.schema.json");
  ASSERT_TRUE(committed.ok()) << committed.error().message();
  EXPECT_EQ(r.out, *committed)
      << "run `kvbill scenario schema -o docs/scenario.schema.json` and commit it";
  const auto schema = nlohmann::json::parse(r.out);
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema["properties"]["deployment"]["properties"]["gpus_per_replica"]["minimum"], 1);
}

// The independent validator: Debian's python3-jsonschema (Draft 2020-12),
// run by /usr/bin/python3 (a python3 earlier on PATH may lack it). A
// missing package fails this test; it never skips.
TEST(ScenarioCliTest, BundledScenariosPassTheSchemaAndInvalidOnesFail) {
  const std::string src = KVBILL_SOURCE_DIR;
  const auto r = RunCommand("/usr/bin/python3 '" + src + "/tests/scenario/check_schema.py' '" +
                            src + "/docs/scenario.schema.json' '" + src + "'");
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" failures"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("ok   scenarios/default.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   rejected: both file and generator"), std::string::npos) << r.out;
}

TEST(ScenarioCliTest, FromVllmWritesTheScenarioAndPrintsItsNotes) {
  const std::string out = std::filesystem::temp_directory_path() /
                          ("kvbill-from-vllm-test-" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(out);
  const auto r = RunKvbill("scenario from-vllm --gpu h100-sxm -o '" + out +
                           "' -- vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8 --port 8000");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("kvbill scenario from-vllm: note: not expressed in the scenario: "
                       "--port 8000\n"),
            std::string::npos)
      << r.err;
  auto text = ReadFile(out);
  ASSERT_TRUE(text.ok());
  const auto doc = nlohmann::json::parse(*text);
  EXPECT_EQ(doc["model"], "qwen3-8b");
  EXPECT_EQ(doc["kv_format"], "fp8");
  // The file it wrote is a scenario kvbill runs.
  const auto sim =
      RunKvbill("simulate --scenario '" + out + "' --trace '" + std::string(KVBILL_SOURCE_DIR) +
                "/tests/data/traces/mooncake_small.jsonl' --format json");
  EXPECT_EQ(sim.exit_status, 0) << sim.err;
  std::filesystem::remove(out);
}

TEST(ScenarioCliTest, BadInputExitsTwoAndWritesNothing) {
  const std::string out = std::filesystem::temp_directory_path() /
                          ("kvbill-from-vllm-bad-" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(out);
  const auto r = RunKvbill("scenario from-vllm -o '" + out +
                           "' -- vllm serve Qwen/Qwen3-8B --tensor-parallel-size 0");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill scenario from-vllm: the scenario made from the command line does not read: "
            "from-vllm.json#/deployment/gpus_per_replica: must be a positive integer, got 0\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(RunKvbill("scenario from-vllm vllm serve x").exit_status, 2);  // no "--"
  EXPECT_EQ(RunKvbill("scenario nope").exit_status, 2);
  EXPECT_EQ(RunKvbill("scenario").exit_status, 2);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
