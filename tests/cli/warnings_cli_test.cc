// End-to-end runs of `kvbill simulate` for warning codes (docs/engine.md#warnings):
// a run that should raise a code shows it in the table above the totals and in
// JSON `summary.warnings`, and the same run without its cause does not.
// WarningsTest covers every code on the warnings' own function.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace {

using testing::RunKvbill;

// The warning codes of a `simulate --format json` run of `scenario`.
std::vector<std::string> Codes(const std::string& scenario) {
  const auto r = RunKvbill("simulate --format json --scenario " + scenario);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  std::vector<std::string> codes;
  if (r.exit_status != 0) return codes;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& w : j["summary"]["warnings"]) {
    codes.push_back(w["code"]);
    EXPECT_FALSE(w["message"].get<std::string>().empty()) << w.dump();
  }
  return codes;
}

bool Has(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

// Writes `text` to a file in the test's temporary directory; its path.
std::string Write(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/warnings_cli_" + name;
  std::ofstream(path) << text;
  return path;
}

// One agent task of two turns: a 2,000-token system prompt, then a tool
// result; `second_turn` is the second turn's fields after "spans".
std::string OneTaskTrace(const std::string& second_turn) {
  return "{\"kvbill_trace\":1}\n"
         "{\"id\":\"a\",\"arrival_s\":0,\"turns\":["
         "{\"t\":0,\"spans\":[{\"kind\":\"system\",\"tokens\":2000}],\"out\":200,\"tool_s\":1},"
         "{\"spans\":[{\"kind\":\"tool_result\",\"tokens\":500}]," +
         second_turn + "}]}\n";
}

// FP8 weights (W8A8 on Hopper) run on the A100 only through Marlin's FP8
// weight-only kernel (W8A16): memory is saved, compute is not
// (docs/hardware.md#formats).
TEST(WarningsCliTest, UnsupportedFormatWhenFp8WeightsRunOnAnA100) {
  const std::string trace = Write("fp8.jsonl", OneTaskTrace("\"out\":100"));
  const std::string a100 =
      Write("fp8_a100.json", R"({"model": "llama-3.1-8b", "weight_format": "fp8",
        "deployment": {"gpu": "a100-80gb"}, "trace": {"file": ")" +
                                 trace + R"("}})");
  const std::string h100 =
      Write("fp8_h100.json", R"({"model": "llama-3.1-8b", "weight_format": "fp8",
        "deployment": {"gpu": "h100-sxm"}, "trace": {"file": ")" +
                                 trace + R"("}})");
  EXPECT_TRUE(Has(Codes(a100), "unsupported_format"));
  EXPECT_FALSE(Has(Codes(h100), "unsupported_format"));
  const auto table = RunKvbill("simulate --scenario " + a100);
  ASSERT_EQ(table.exit_status, 0) << table.err;
  const auto at = table.out.find("warning [unsupported_format]: ");
  ASSERT_NE(at, std::string::npos) << table.out;
  EXPECT_LT(at, table.out.find(" tasks, "));  // above the totals
  EXPECT_EQ(RunKvbill("simulate --scenario " + h100).out.find("[unsupported_format]"),
            std::string::npos);
}

// A turn flagged "out_placeholder" (as the Claude Code importer flags
// streaming stubs) raises placeholder_outputs; the same trace unflagged does not.
TEST(WarningsCliTest, PlaceholderOutputsWhenATurnIsFlagged) {
  const std::string flagged =
      Write("placeholder.jsonl", OneTaskTrace("\"out\":5,\"out_placeholder\":true"));
  const std::string plain = Write("plain.jsonl", OneTaskTrace("\"out\":5"));
  const std::string with = Write("placeholder.json", R"({"model": "llama-3.1-8b",
        "deployment": {"gpu": "h100-sxm"}, "trace": {"file": ")" +
                                                         flagged + R"("}})");
  const std::string without = Write("plain.json", R"({"model": "llama-3.1-8b",
        "deployment": {"gpu": "h100-sxm"}, "trace": {"file": ")" +
                                                      plain + R"("}})");
  EXPECT_TRUE(Has(Codes(with), "placeholder_outputs"));
  // The clean run raises nothing at all.
  EXPECT_EQ(Codes(without), std::vector<std::string>{});
  const auto table = RunKvbill("simulate --scenario " + with);
  ASSERT_EQ(table.exit_status, 0) << table.err;
  const auto at = table.out.find("warning [placeholder_outputs]: ");
  ASSERT_NE(at, std::string::npos) << table.out;
  EXPECT_LT(at, table.out.find(" tasks, "));
  EXPECT_EQ(RunKvbill("simulate --scenario " + without).out.find("warning ["), std::string::npos);
}

// drop_tool_results on a trace whose only tool result is in the current turn
// (never older than a turn) edits no prompt: policy_no_effect. A third turn
// makes the result old enough to drop.
TEST(WarningsCliTest, PolicyNoEffectWhenNothingIsDropped) {
  const std::string two_turns = Write("two_turns.jsonl", OneTaskTrace("\"out\":100,\"tool_s\":1"));
  const std::string three_turns =
      Write("three_turns.jsonl",
            "{\"kvbill_trace\":1}\n"
            "{\"id\":\"a\",\"arrival_s\":0,\"turns\":["
            "{\"t\":0,\"spans\":[{\"kind\":\"system\",\"tokens\":2000}],\"out\":200,\"tool_s\":1},"
            "{\"spans\":[{\"kind\":\"tool_result\",\"tokens\":500}],\"out\":100,\"tool_s\":1},"
            "{\"spans\":[{\"kind\":\"user\",\"tokens\":50}],\"out\":100},"
            "{\"spans\":[{\"kind\":\"user\",\"tokens\":50}],\"out\":100}]}\n");
  const auto scenario = [](const std::string& name, const std::string& trace) {
    return Write(name, R"({"model": "llama-3.1-8b", "deployment": {"gpu": "h100-sxm"},
        "context_policy": {"kind": "drop_tool_results", "older_than_turns": 1, "stub_tokens": 50},
        "trace": {"file": ")" +
                           trace + R"("}})");
  };
  EXPECT_TRUE(Has(Codes(scenario("two_turns.json", two_turns)), "policy_no_effect"));
  EXPECT_FALSE(Has(Codes(scenario("three_turns.json", three_turns)), "policy_no_effect"));
}

}  // namespace
}  // namespace kvbill
