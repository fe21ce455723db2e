// Every bundled scenario runs without warnings, but for the ones listed
// here with the reason they are expected (docs/engine.md#warnings).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "kvbill/scenario/run.h"
#include "kvbill/scenario/warnings.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// The warning of the regime of dense models on one H100, whose published
// runs a fit without their model misses by a median of 25% (the profile's
// validation.regimes).
constexpr const char* kH100Dense = "weakly_validated";

// scenario file (relative to the source tree) -> warning codes it may raise.
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> allowed = {
      // A what-if past the model on purpose: the 200-turn loop reaches 440k
      // tokens (engine.max_model_len 512k over Llama-3.1-8B's 131,072), and
      // tasks arrive 20,000 s apart so each has the GPU to itself (idle is
      // the bill; the claim is about per-task cost). Past 131,072 tokens
      // the kernel tables stop, so its decode attention is extrapolated
      // (timing_assumed).
      {"scenarios/claims/agent-loop.json",
       {"context_limit", "idle_dominant", "timing_assumed", kH100Dense}},
      // Two single requests an hour apart, each alone on the replica: the
      // claim compares their per-task cost; idle is most of the bill. And
      // Llama-3.1-70B over 4 H100s: no published vLLM V1 run of a dense
      // model on several GPUs was replayed (the 4 x H100 Llama-3.1-70B runs
      // of the calibration data ran vLLM v0.6.0's V0 scheduler).
      {"scenarios/claims/8k-vs-128k.json", {"idle_dominant", "weakly_validated"}},
      // Llama-3.1-70B over 4 H100s, as above.
      {"scenarios/examples/mooncake-replay.json", {"weakly_validated"}},
      // Dense models on one H100: replayed within 4% in sample, but each
      // model's runs left out of the fit were missed by a median just over
      // 25% (docs/validation.md, "By regime"), which the run says.
      {"scenarios/default.json", {kH100Dense}},
      {"scenarios/coding-agent.json", {kH100Dense}},
      {"scenarios/examples/fp8-kv.json", {kH100Dense}},
      {"scenarios/examples/summarise.json", {kH100Dense}},
      {"scenarios/claims/fp8-vs-bf16.json", {kH100Dense}},
  };
  return allowed;
}

TEST(BundledScenariosTest, EachRunsWithoutWarningsBeyondItsAllowList) {
  const std::filesystem::path root(KVBILL_SOURCE_DIR);
  int engine_runs = 0;
  for (const char* dir : {"scenarios", "scenarios/examples", "scenarios/claims"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root / dir)) {
      if (entry.path().extension() != ".json") continue;
      const std::string name = std::filesystem::relative(entry.path(), root).string();
      if (name == "scenarios/gpus.json" || name == "scenarios/prices.json") continue;  // catalogs
      SCOPED_TRACE(name);
      auto scenario = LoadScenario(entry.path().string());
      ASSERT_TRUE(scenario.ok()) << scenario.error().message();
      if (scenario->pricing) continue;  // API mode: no engine run, no engine warnings
      auto outcome = RunScenario(*scenario);
      ASSERT_TRUE(outcome.ok()) << outcome.error().message();
      ++engine_runs;
      const auto it = Allowed().find(name);
      for (const RunWarning& w : EngineRunWarnings(*scenario, outcome->result, outcome->summary)) {
        const bool allowed = it != Allowed().end() && it->second.count(w.code) > 0;
        EXPECT_TRUE(allowed) << "warning [" << w.code << "]: " << w.message;
      }
    }
  }
  EXPECT_GE(engine_runs, 7);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
