// Engine profile files: every number within its documented range
// (docs/engine.md#engine-profile-ranges), errors naming the file and the
// JSON pointer, and the docs' table made of the reader's.
#include "kvbill/cost/engine_profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using nlohmann::json;

json BundledProfileJson() {
  auto p = LoadEngineProfile("vllm");
  EXPECT_TRUE(p.ok());
  return json::parse(EngineProfileToJson(*p));
}

std::string ErrorOf(const json& doc) {
  auto p = ParseEngineProfile(doc.dump(), "p.json");
  EXPECT_FALSE(p.ok()) << doc.dump();
  return p.ok() ? "" : p.error().message();
}

// A fitted profile reads back: its values lie within the ranges.
TEST(EngineProfileTest, TheBundledProfileReadsBackAsWritten) {
  auto p = ParseEngineProfile(BundledProfileJson().dump(), "p.json");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(EngineProfileToJson(*p), BundledProfileJson().dump(2) + "\n");
}

// An overhead of 1e300 s, a negative or 1e-300 efficiency, a count beyond
// its bound, a string for a number, an unknown key: each an error naming
// the file and the pointer, with the range.
TEST(EngineProfileTest, AbsurdValuesAreRefusedNamingFileAndPointer) {
  const std::string doc = " (docs/engine.md#engine-profile-ranges), got ";
  const struct {
    const char* pointer;
    json value;
    std::string error;
  } cases[] = {
      {"/parameters/cpu_iteration_s", 1e300,
       "p.json#/parameters/cpu_iteration_s: must be in [0, 0.01]" + doc + "1e+300"},
      {"/parameters/request_latency_s", -1e-9,
       "p.json#/parameters/request_latency_s: must be in [0, 0.2]" + doc + "-1e-09"},
      {"/parameters/weight_only_4bit_rate", -0.5,
       "p.json#/parameters/weight_only_4bit_rate: must be in [0.1, 1]" + doc + "-0.5"},
      {"/parameters/weight_only_8bit_rate", 1e-300,
       "p.json#/parameters/weight_only_8bit_rate: must be in [0.1, 1]" + doc + "1e-300"},
      {"/parameters/mixed_attention_factor", "NaN",
       "p.json#/parameters/mixed_attention_factor: must be a number in [1, 8], got \"NaN\""},
      {"/cuda_graph_max_tokens", 1000000000000,
       "p.json#/cuda_graph_max_tokens: must be in [0, 65536]" + doc + "1000000000000"},
      {"/cuda_graph_max_tokens", 512.5,
       "p.json#/cuda_graph_max_tokens: must be an integer in [0, 65536], got 512.5"},
      {"/moe_routing_alpha", 5.5, "p.json#/moe_routing_alpha: must be in [0, 5]" + doc + "5.5"},
      {"/validation/points", 1e300,
       "p.json#/validation/points: must be an integer in [0, 1e+09], got 1e+300"},
      {"/validation/median_error", -1,
       "p.json#/validation/median_error: must be in [0, 100]" + doc + "-1"},
      {"/validation/bogus", 1, "p.json#/validation/bogus: unknown key"},
      {"/validation/regimes/0/lomo_median_error", 101,
       "p.json#/validation/regimes/0/lomo_median_error: must be in [0, 100]" + doc + "101"},
      {"/validation/regimes/0/points", 2.5,
       "p.json#/validation/regimes/0/points: must be an integer in [0, 1e+09], got 2.5"},
      {"/validation/regimes/0/gpu", "",
       "p.json#/validation/regimes/0/gpu: must be a GPU's catalog id"},
      {"/validation/regimes/0/moe", "yes",
       "p.json#/validation/regimes/0/moe: must be true or false"},
      {"/validation/regimes/0/bogus", 1, "p.json#/validation/regimes/0/bogus: unknown key"},
      {"/validation/regimes", 1, "p.json#/validation/regimes: not an array"},
      {"/bogus", 1, "p.json#/bogus: unknown key"},
      {"/parameters/cpu_iteration", 0.001, "p.json#/parameters/cpu_iteration: unknown parameter"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    json profile = BundledProfileJson();
    profile[json::json_pointer(c.pointer)] = c.value;
    EXPECT_EQ(ErrorOf(profile), c.error);
  }
  // JSON has no NaN: the bare word is a syntax error.
  const std::string nan = "{\"moe_routing_alpha\": NaN}";
  auto p = ParseEngineProfile(nan, "p.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message().rfind("p.json:1:", 0), 0u) << p.error().message();
  EXPECT_NE(p.error().message().find(": not valid JSON: "), std::string::npos);
}

// The validation by regime reads back as written, is found by its three
// keys only, and a regime listed twice is an error.
TEST(EngineProfileTest, ValidationRegimesReadBackAndAreFoundByTheirKeys) {
  json profile = BundledProfileJson();
  ASSERT_TRUE(profile["validation"].contains("regimes"));  // the shipped profile has them
  profile["validation"]["regimes"] = json::array({{{"gpu", "a100-80gb"},
                                                   {"moe", false},
                                                   {"several_gpus", false},
                                                   {"points", 30},
                                                   {"median_error", 0.04},
                                                   {"lomo_points", 30},
                                                   {"lomo_median_error", 0.05}},
                                                  {{"gpu", "h100-sxm"},
                                                   {"moe", true},
                                                   {"several_gpus", true},
                                                   {"points", 61},
                                                   {"median_error", 0.2},
                                                   {"lomo_points", 0},
                                                   {"lomo_median_error", 0.0}}});
  auto p = ParseEngineProfile(profile.dump(), "p.json");
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(EngineProfileToJson(*p), profile.dump(2) + "\n");
  const ValidationRegime* r = FindValidationRegime(*p, "h100-sxm", true, true);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->points, 61);
  EXPECT_DOUBLE_EQ(r->median_error, 0.2);
  EXPECT_EQ(FindValidationRegime(*p, "h100-sxm", true, false), nullptr);
  EXPECT_EQ(FindValidationRegime(*p, "h100-sxm", false, true), nullptr);
  EXPECT_EQ(FindValidationRegime(*p, "a100-80gb", true, true), nullptr);
  ASSERT_NE(FindValidationRegime(*p, "a100-80gb", false, false), nullptr);
  profile["validation"]["regimes"].push_back(profile["validation"]["regimes"][0]);
  EXPECT_EQ(ErrorOf(profile),
            "p.json#/validation/regimes/2: repeats the regime of an earlier entry");
}

// docs/engine.md's table has one row per range, as the reader has it.
TEST(EngineProfileTest, DocsListEveryRange) {
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/docs/engine.md");
  std::stringstream docs;
  docs << in.rdbuf();
  const auto g = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return std::string(buf);
  };
  ASSERT_EQ(ProfileNumberRanges().size(), kProfileParameterCount + 9u);
  for (const ProfileNumberRange& r : ProfileNumberRanges()) {
    std::string meaning;
    for (char c : r.meaning) meaning += c == '|' ? std::string("\\|") : std::string(1, c);
    const std::string row = "| `" + r.pointer + "` | [" + g(r.least) + ", " + g(r.most) + "] | " +
                            (r.integer ? "integer" : "number") + " | " + meaning + " |\n";
    EXPECT_NE(docs.str().find(row), std::string::npos) << row;
  }
}

// A scenario naming such a profile stops before any work, with the
// scenario's pointer, the profile file and its pointer; exit 2.
TEST(EngineProfileTest, ASimulationWithAnAbsurdProfileStopsBeforeAnyWork) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string pid = std::to_string(::getpid());
  const std::string profile = (dir / ("absurd_profile_" + pid + ".json")).string();
  const std::string scenario = (dir / ("absurd_scenario_" + pid + ".json")).string();
  json p = BundledProfileJson();
  p["parameters"]["cpu_iteration_s"] = 1e300;
  std::ofstream(profile) << p.dump(2);
  std::ofstream(scenario) << json{{"deployment", {{"profile", profile}}},
                                  {"trace", {{"generator", "chat"}, {"tasks", 2}}}}
                                 .dump();
  const auto r = testing::RunKvbill("simulate --scenario " + scenario);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "kvbill simulate: " + scenario + "#/deployment/profile: " + profile +
                       "#/parameters/cpu_iteration_s: must be in [0, 0.01] "
                       "(docs/engine.md#engine-profile-ranges), got 1e+300\n");
  std::remove(profile.c_str());
  std::remove(scenario.c_str());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
