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
#include "kvbill/cost/engine_profile.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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

// The table of a `simulate` run of `scenario` shows `code` above its totals.
void ExpectTableWarning(const std::string& scenario, const std::string& code) {
  const auto table = RunKvbill("simulate --scenario " + scenario);
  ASSERT_EQ(table.exit_status, 0) << table.err;
  const auto at = table.out.find("warning [" + code + "]: ");
  ASSERT_NE(at, std::string::npos) << table.out;
  EXPECT_LT(at, table.out.find(" tasks, "));  // above the totals
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

// A profile's validation by regime decides: the bundled vLLM profile with
// its regimes replaced by one, dense models on one H100 missed by a median
// of 40% leaving the model out, warns a Qwen3-8B run on one H100 with that
// figure; on two H100s (a regime the file does not list) it warns that no
// run was replayed; with 10% it is quiet.
TEST(WarningsCliTest, WeaklyValidatedByTheProfilesRegimes) {
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/scenarios/profiles/vllm.json");
  nlohmann::json profile = nlohmann::json::parse(in);
  profile["validation"]["regimes"] = nlohmann::json::array({{{"gpu", "h100-sxm"},
                                                             {"moe", false},
                                                             {"several_gpus", false},
                                                             {"points", 12},
                                                             {"median_error", 0.1},
                                                             {"lomo_points", 11},
                                                             {"lomo_median_error", 0.4}}});
  const std::string weak = Write("weak_profile.json", profile.dump());
  profile["validation"]["regimes"][0]["lomo_median_error"] = 0.1;
  const std::string fine = Write("fine_profile.json", profile.dump());
  const auto scenario = [&](const std::string& p, int gpus) {
    return Write("weak_" + std::to_string(gpus) + (p == weak ? "w" : "f") + ".json",
                 R"({"model": "qwen3-8b", "deployment": {"gpu": "h100-sxm", "gpus_per_replica": )" +
                     std::to_string(gpus) + R"(, "profile": ")" + p +
                     R"("}, "trace": {"generator": "chat", "tasks": 2}})");
  };
  const auto r = RunKvbill("simulate --format json --scenario " + scenario(weak, 1));
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // The message of `code` among a run's warnings (two requests on a GPU
  // for hours are also idle_dominant).
  const auto message = [](const nlohmann::json& warnings, const std::string& code) {
    for (const auto& w : warnings) {
      if (w["code"] == code) return w["message"].get<std::string>();
    }
    return std::string();
  };
  const auto warnings = nlohmann::json::parse(r.out)["summary"]["warnings"];
  EXPECT_EQ(message(warnings, "weakly_validated"),
            "published runs in this regime (h100-sxm, dense models, one GPU a replica) were "
            "missed by a median of 40% when their model was left out of the fit (10% in sample; "
            "11 points): latency and cost here are about that uncertain "
            "(docs/validation.md#by-regime)");
  ExpectTableWarning(scenario(weak, 1), "weakly_validated");
  const auto two = RunKvbill("simulate --format json --scenario " + scenario(fine, 2));
  ASSERT_EQ(two.exit_status, 0) << two.err;
  const auto two_json = nlohmann::json::parse(two.out)["summary"];
  EXPECT_EQ(two_json["cost_model"]["validation_regime"]["validated"], false);
  EXPECT_NE(message(two_json["warnings"], "weakly_validated")
                .find("no published run of the \"vllm\" profile's engine in this regime (h100-sxm, "
                      "dense models, several GPUs a replica) was replayed"),
            std::string::npos);
  EXPECT_FALSE(Has(Codes(scenario(fine, 1)), "weakly_validated"));
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
  ExpectTableWarning(a100, "unsupported_format");
  EXPECT_EQ(RunKvbill("simulate --scenario " + h100).out.find("[unsupported_format]"),
            std::string::npos);
}

// A turn flagged "out_placeholder" (as the Claude Code importer flags
// streaming stubs) raises placeholder_outputs; the same trace unflagged does not.
TEST(WarningsCliTest, PlaceholderOutputsWhenATurnIsFlagged) {
  const std::string flagged =
      Write("placeholder.jsonl", OneTaskTrace("\"out\":5,\"out_placeholder\":true"));
  const std::string plain = Write("plain.jsonl", OneTaskTrace("\"out\":5"));
  // On one A100 (a regime of validated published runs): nothing else warns.
  const std::string with = Write("placeholder.json", R"({"model": "llama-3.1-8b",
        "deployment": {"gpu": "a100-80gb"}, "trace": {"file": ")" +
                                                         flagged + R"("}})");
  const std::string without = Write("plain.json", R"({"model": "llama-3.1-8b",
        "deployment": {"gpu": "a100-80gb"}, "trace": {"file": ")" +
                                                      plain + R"("}})");
  EXPECT_TRUE(Has(Codes(with), "placeholder_outputs"));
  // The clean run raises nothing at all.
  EXPECT_EQ(Codes(without), std::vector<std::string>{});
  ExpectTableWarning(with, "placeholder_outputs");
  EXPECT_EQ(RunKvbill("simulate --scenario " + without).out.find("warning ["), std::string::npos);
}

// API mode prices the recorded usage, so a placeholder's few output tokens
// understate its bill as they do an engine run's: the bill says so, and a
// budget can gate on it (it was refused as "not measured" in API mode).
TEST(WarningsCliTest, PlaceholderOutputsInApiModeTooAndABudgetGatesOnIt) {
  const std::string flagged =
      Write("api_placeholder.jsonl", OneTaskTrace("\"out\":5,\"out_placeholder\":true"));
  const std::string plain = Write("api_plain.jsonl", OneTaskTrace("\"out\":5"));
  const std::string pricing =
      R"("pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"})";
  const std::string with = Write("api_placeholder.json",
                                 R"({"trace": {"file": ")" + flagged + R"("}, )" + pricing + "}");
  const std::string without =
      Write("api_plain.json", R"({"trace": {"file": ")" + plain + R"("}, )" + pricing + "}");
  const auto j = nlohmann::json::parse(RunKvbill("simulate --format json --scenario " + with).out);
  ASSERT_EQ(j["summary"]["warnings"].size(), 1u) << j["summary"]["warnings"].dump();
  EXPECT_EQ(j["summary"]["warnings"][0]["code"], "placeholder_outputs");
  EXPECT_EQ(j["summary"]["warnings"][0]["message"],
            "1 turn of the trace has a placeholder output (a streaming stub the transcript kept "
            "instead of the reply, as usage-only Claude Code logs hold): their output tokens and "
            "their cost are understated");
  EXPECT_EQ(Codes(without), std::vector<std::string>{});
  ExpectTableWarning(with, "placeholder_outputs");
  // A budget of no placeholders breaks on the flagged trace (exit 1) and
  // holds on the clean one.
  const std::string budget = R"(, "budgets": {"warnings.placeholder_outputs": {"max": 0}}})";
  const std::string gated_with =
      Write("api_gated.json", R"({"trace": {"file": ")" + flagged + R"("}, )" + pricing + budget);
  const std::string gated_without = Write(
      "api_gated_plain.json", R"({"trace": {"file": ")" + plain + R"("}, )" + pricing + budget);
  EXPECT_EQ(RunKvbill("check --scenario " + gated_with).exit_status, 1);
  EXPECT_EQ(RunKvbill("check --scenario " + gated_without).exit_status, 0);
}

// Each warning an API run raises (docs/ci.md's list) is a budget check
// accepts for a scenario with "pricing", and `check --help` lists it: the
// help named only pricing_model_unused and policy_no_effect.
TEST(WarningsCliTest, CheckHelpListsEveryWarningAnApiBudgetMayName) {
  const std::string trace = Write("api_help.jsonl", OneTaskTrace("\"out\":5"));
  const auto help = RunKvbill("check --help");
  ASSERT_EQ(help.exit_status, 0) << help.err;
  for (const std::string code :
       {"context_limit", "pricing_model_unused", "policy_no_effect", "placeholder_outputs"}) {
    SCOPED_TRACE(code);
    EXPECT_NE(help.out.find("warnings." + code), std::string::npos) << help.out;
    const std::string scenario =
        Write("api_help_" + code + ".json",
              R"({"trace": {"file": ")" + trace +
                  R"("}, "pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"}, )"
                  R"("budgets": {"warnings.)" +
                  code + R"(": {"max": 0}}})");
    const auto run = RunKvbill("check --scenario " + scenario);
    EXPECT_EQ(run.exit_status, 0) << run.err;
  }
  // An engine-only metric is not listed.
  EXPECT_EQ(help.out.find("warnings.overloaded"), std::string::npos) << help.out;
}

// Tensor parallelism over 16 H100s: the all-reduce tables stop at 8 GPUs,
// so the collective is modelled (a ring over the link), and the run says so,
// in the warning and in summary.cost_model.assumed_collectives. 16 H100s are
// two nodes of 8 (the catalog's NVLink domain), so the ring's slowest hop is
// each GPU's network link.
TEST(WarningsCliTest, TimingAssumedForAnAllReduceNoTableMeasures) {
  const std::string tp16 = Write("tp16.json", R"({"model": "qwen3-8b",
      "deployment": {"gpu": "h100-sxm", "gpus_per_replica": 16},
      "trace": {"generator": "chat", "tasks": 2}})");
  EXPECT_TRUE(Has(Codes(tp16), "timing_assumed"));
  const auto r16 = RunKvbill("simulate --format json --scenario " + tp16);
  ASSERT_EQ(r16.exit_status, 0) << r16.err;
  const auto assumed =
      nlohmann::json::parse(r16.out)["summary"]["cost_model"]["assumed_collectives"];
  ASSERT_EQ(assumed.size(), 1u) << assumed;
  EXPECT_EQ(assumed[0].get<std::string>().rfind(
                "all_reduce over 16 GPUs of h100-sxm not measured: across 2 nodes of 8 GPUs", 0),
            0u)
      << assumed;
  const std::string tp8 = Write("tp8.json", R"({"model": "qwen3-8b",
      "deployment": {"gpu": "h100-sxm", "gpus_per_replica": 8},
      "trace": {"generator": "chat", "tasks": 2}})");
  EXPECT_FALSE(Has(Codes(tp8), "timing_assumed"));
  const auto r8 = RunKvbill("simulate --format json --scenario " + tp8);
  ASSERT_EQ(r8.exit_status, 0) << r8.err;
  EXPECT_EQ(nlohmann::json::parse(r8.out)["summary"]["cost_model"]["assumed_collectives"],
            nlohmann::json::array());
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
  // Billed through an API the same holds: the bill is the keep_all bill.
  const auto api = [](const std::string& name, const std::string& trace) {
    return Write(name, R"({"model": "llama-3.1-8b",
        "pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
        "context_policy": {"kind": "drop_tool_results", "older_than_turns": 1, "stub_tokens": 50},
        "trace": {"file": ")" +
                           trace + R"("}})");
  };
  EXPECT_TRUE(Has(Codes(api("api_two_turns.json", two_turns)), "policy_no_effect"));
  EXPECT_FALSE(Has(Codes(api("api_three_turns.json", three_turns)), "policy_no_effect"));
}

// A sliding window keeps the system and tools spans whole, so a first
// prompt of 9,100 tokens stays over gemma-2-9b's max_model_len of 8,192:
// the only task is refused at its first request, nothing is served and the
// window edits nothing that ran. The run still says so.
TEST(WarningsCliTest, PolicyNoEffectWhenNoRequestWasServed) {
  const std::string trace =
      Write("refused_first.jsonl",
            "{\"kvbill_trace\":1}\n"
            "{\"id\":\"a\",\"arrival_s\":0,\"turns\":["
            "{\"spans\":[{\"kind\":\"system\",\"tokens\":3000},"
            "{\"kind\":\"tools\",\"tokens\":6000},{\"kind\":\"user\",\"tokens\":100}],"
            "\"out\":100,\"tool_s\":1},"
            "{\"spans\":[{\"kind\":\"tool_result\",\"tokens\":5000}],\"out\":100}]}\n");
  const std::string scenario = Write("refused_first.json", R"({"model": "gemma-2-9b",
      "context_policy": {"kind": "sliding_window", "window_tokens": 4000},
      "trace": {"file": ")" + trace + R"("}})");
  const auto codes = Codes(scenario);
  EXPECT_TRUE(Has(codes, "context_limit"));
  EXPECT_TRUE(Has(codes, "policy_no_effect"));
}

// `overloaded`: 48 tasks of one 30,000-token prompt arrive together at one
// H100. An iteration takes at most 8,192 prompt tokens (the default
// max_num_batched_tokens), and 8,192 tokens of Llama-3.1-8B (7.5e9
// parameters without the embeddings, 2 FLOPs each per token) are at least
// 2 x 7.5e9 x 8,192 / 989e12 = 0.124 s at the H100's dense BF16 peak. A
// prompt fills the budget of 30,000 / 8,192 = 3.66 iterations, so the 24th
// request cannot be admitted before about 23 x 3.66 x 0.124 = 10 s: the
// median queueing delay is far above the 1-s bound. One such task alone is
// admitted at once.
TEST(WarningsCliTest, OverloadedWhenPromptsArriveFasterThanOneGpuPrefillsThem) {
  std::string many = "{\"kvbill_trace\":1}\n";
  for (int i = 0; i < 48; ++i) {
    many += "{\"id\":\"t" + std::to_string(i) +
            "\",\"arrival_s\":0,\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":30000}],"
            "\"out\":10}]}\n";
  }
  const std::string one_task =
      "{\"kvbill_trace\":1}\n{\"id\":\"t0\",\"arrival_s\":0,\"turns\":[{\"spans\":[{\"kind\":"
      "\"user\",\"tokens\":30000}],\"out\":10}]}\n";
  auto scenario = [](const std::string& name, const std::string& trace) {
    return Write(name, R"({"model": "llama-3.1-8b", "deployment": {"gpu": "h100-sxm"},
        "trace": {"file": ")" +
                           trace + R"("}})");
  };
  const std::string busy = scenario("overloaded.json", Write("overloaded.jsonl", many));
  const std::string calm = scenario("calm.json", Write("calm.jsonl", one_task));
  EXPECT_TRUE(Has(Codes(busy), "overloaded"));
  EXPECT_FALSE(Has(Codes(calm), "overloaded"));
  ExpectTableWarning(busy, "overloaded");
}

// `idle_dominant`: two one-turn tasks an hour apart on a dedicated H100.
// Each is a 1,000-token prompt and 100 output tokens, well under a second of
// GPU time, while the GPU is rented for the hour between them: idle is
// nearly all of the bill. Billed "busy" (only busy GPU time), the same run
// has no idle cost and no warning.
TEST(WarningsCliTest, IdleDominantWhenTheGpuWaitsAnHourBetweenTasks) {
  const std::string trace = Write(
      "idle.jsonl",
      "{\"kvbill_trace\":1}\n"
      "{\"id\":\"a\",\"arrival_s\":0,\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":1000}],"
      "\"out\":100}]}\n"
      "{\"id\":\"b\",\"arrival_s\":3600,\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":"
      "1000}],\"out\":100}]}\n");
  auto scenario = [&trace](const std::string& name, const std::string& billing) {
    return Write(name, R"({"model": "llama-3.1-8b", "deployment": {"gpu": "h100-sxm",
        "billing": ")" + billing +
                           R"("}, "trace": {"file": ")" + trace + R"("}})");
  };
  const std::string dedicated = scenario("idle_dedicated.json", "dedicated");
  EXPECT_TRUE(Has(Codes(dedicated), "idle_dominant"));
  EXPECT_FALSE(Has(Codes(scenario("idle_busy.json", "busy")), "idle_dominant"));
  ExpectTableWarning(dedicated, "idle_dominant");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// gpt-oss's MXFP4 experts on Hopper: the published runs of the regime (one
// H100, MoE) ran vLLM v0.11.0's Marlin path, so a run on the Triton path
// (vLLM's default now) warns that none vouches for it even where the regime
// is validated; the Marlin path runs quietly.
TEST(WarningsCliTest, TheTritonMxfp4PathIsWeaklyValidated) {
  const auto scenario = [](const std::string& kernel) {
    return Write("mxfp4_" + kernel + ".json",
                 R"({"model": "gpt-oss-20b", "deployment": {"gpu": "h100-sxm",
                     "mxfp4_moe_kernel": ")" +
                     kernel + R"("}, "trace": {"generator": "chat", "tasks": 2}})");
  };
  const auto r = RunKvbill("simulate --format json --scenario " + scenario("auto"));
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out)["summary"];
  std::string text;
  for (const auto& w : summary["warnings"]) {
    if (w["code"] == "weakly_validated") text = w["message"].get<std::string>();
  }
  EXPECT_EQ(text,
            "no published run replayed in this regime (h100-sxm, mixture-of-experts models, one "
            "GPU a replica) took MXFP4 experts on the OpenAI Triton MoE kernels (vLLM's published "
            "runs of MXFP4 experts on Hopper ran Marlin: vLLM v0.11.0): the kernel's own "
            "measured table times it, but no end-to-end run checks it, so treat latency and cost "
            "as unvalidated (docs/engine.md#mxfp4-experts-on-hopper-triton-or-marlin)");
  // On two H100s the regime's own miss is said too when the profile's
  // figure for it is above kWeaklyValidatedError leaving the model out.
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/scenarios/profiles/vllm.json");
  const nlohmann::json profile = nlohmann::json::parse(in);
  bool regime_weak = true;  // a regime the profile does not list
  for (const auto& regime : profile["validation"]["regimes"]) {
    if (regime["gpu"] == "h100-sxm" && regime["moe"] == true && regime["several_gpus"] == true) {
      regime_weak = regime["lomo_median_error"].get<double>() > kWeaklyValidatedError;
    }
  }
  const auto two = RunKvbill(
      "simulate --format json --scenario " +
      Write("mxfp4_tp2.json", R"({"model": "gpt-oss-20b", "deployment": {"gpu": "h100-sxm",
             "gpus_per_replica": 2}, "trace": {"generator": "chat", "tasks": 2}})"));
  ASSERT_EQ(two.exit_status, 0) << two.err;
  std::string both;
  const nlohmann::json two_json = nlohmann::json::parse(two.out);
  for (const auto& w : two_json["summary"]["warnings"]) {
    if (w["code"] == "weakly_validated") both = w["message"].get<std::string>();
  }
  EXPECT_NE(both.find("took MXFP4 experts on the OpenAI Triton MoE kernels"), std::string::npos);
  EXPECT_EQ(both.find("; and published runs in this regime (h100-sxm, mixture-of-experts models, "
                      "several GPUs a replica) were missed by a median of") != std::string::npos,
            regime_weak)
      << both;
  EXPECT_EQ(summary["cost_model"]["validation_regime"]["unreplayed_path"],
            "MXFP4 experts on the OpenAI Triton MoE kernels (vLLM's published runs of MXFP4 "
            "experts on Hopper ran Marlin: vLLM v0.11.0)");
  const auto marlin = RunKvbill("simulate --format json --scenario " + scenario("marlin"));
  ASSERT_EQ(marlin.exit_status, 0) << marlin.err;
  const nlohmann::json marlin_json = nlohmann::json::parse(marlin.out);
  EXPECT_TRUE(
      marlin_json["summary"]["cost_model"]["validation_regime"]["unreplayed_path"].is_null());
  EXPECT_TRUE(Has(Codes(scenario("triton")), "weakly_validated"));
  EXPECT_FALSE(Has(Codes(scenario("marlin")), "weakly_validated"));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
