#include "kvbill/scenario/levers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// The summarise lever (past 65,536 tokens, a 2,048-token summary, keeping
// 16,384) run alone over a native trace of `tasks` lines; its outcome.
LeverOutcome SummariseOver(const std::string& name, const std::string& tasks) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) /
                            (name + "_" + std::to_string(::getpid()) + ".jsonl"))
                               .lexically_normal()
                               .string();
  std::ofstream(path) << "{\"kvbill_trace\":1}\n" << tasks;
  // max_model_len 131,072: the lever summarises past 64k (half of it, at
  // most 64k) and the 70,000-token prompts below are served.
  const std::string text = R"({"model": "qwen3-8b", "engine": {"max_model_len": 131072},
      "trace": {"file": ")" +
                           path + R"("}})";
  auto s = ParseScenario(text, "inline.json");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  std::vector<Lever> summarise;
  for (const Lever& l : Levers(*s)) {
    if (l.name.starts_with("summarise")) summarise.push_back(l);
  }
  EXPECT_EQ(summarise.size(), 1u);
  auto outcomes = RunLevers(text, "inline.json", summarise, 1);
  std::filesystem::remove(path);
  return outcomes.at(0);
}

// The settings of the latent-cache (MLA) lever of a Qwen3-8B scenario.
std::vector<std::pair<std::string, std::string>> MlaSettings(const std::string& gpu,
                                                             int block_size) {
  auto s = ParseScenario(R"({"model": "qwen3-8b", "deployment": {"gpu": ")" + gpu +
                             R"("}, "prefix_cache": {"block_size": )" + std::to_string(block_size) +
                             "}}",
                         "inline.json");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  for (const Lever& l : Levers(*s)) {
    if (l.name.starts_with("architecture: latent KV cache")) return l.settings;
  }
  ADD_FAILURE() << "no MLA lever";
  return {};
}

// vLLM runs a latent cache on Hopper in FlashMLA's blocks, multiples of 64:
// the lever's variant of a deployment in 16-token blocks runs in 64 (it
// kept 16 and warned block_size_unserved); 128 is a multiple and stays, and
// an A100 (Triton MLA, any multiple of 16) keeps 16.
// A baseline in fp8 KV has no fp8 lever to add; its format is weighed by
// turning it off, to bf16, as prefix caching is (Lever::removes), so the
// value of fp8 is bf16's cost minus the baseline's. A bf16 baseline has the
// fp8 lever and none turning a format off.
TEST(LeversTest, AQuantizedBaselineKvIsWeighedByTurningItOff) {
  auto names = [](const std::string& kv) {
    auto s = ParseScenario(R"({"model": "qwen3-8b", "kv_format": ")" + kv + R"("})", "inline.json");
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
    std::vector<Lever> out;
    for (const Lever& l : Levers(*s)) {
      if (l.name.find("KV cache") != std::string::npos && !l.name.starts_with("architecture")) {
        out.push_back(l);
      }
    }
    return out;
  };
  const std::vector<Lever> fp8 = names("fp8");
  ASSERT_EQ(fp8.size(), 2u);  // nvfp4 (not applicable on an H100), and fp8 off
  EXPECT_EQ(fp8[0].name, "nvfp4 KV cache");
  EXPECT_FALSE(fp8[0].not_applicable.empty());
  EXPECT_EQ(fp8[1].name, "bf16 KV cache (the baseline's fp8 off)");
  EXPECT_EQ(fp8[1].removes, "fp8 KV cache");
  EXPECT_EQ(fp8[1].settings,
            (std::vector<std::pair<std::string, std::string>>{{"/kv_format", "\"bf16\""}}));
  // The value is the variant's cost minus the baseline's: $3 against $1.
  const LeverValue v = ValueOf(fp8[1], 1.0, 3.0);
  EXPECT_EQ(v.lever, "fp8 KV cache");
  EXPECT_DOUBLE_EQ(v.saves_usd_per_task, 2.0);
  const std::vector<Lever> bf16 = names("bf16");
  ASSERT_EQ(bf16.size(), 2u);
  EXPECT_EQ(bf16[0].name, "fp8 KV cache");
  EXPECT_TRUE(bf16[0].removes.empty());
  EXPECT_EQ(bf16[1].name, "nvfp4 KV cache");
}

TEST(LeversTest, TheLatentCacheLeverTakesTheBlocksVllmRunsItIn) {
  const std::pair<std::string, std::string> block{"/prefix_cache/block_size", "64"};
  const auto has_block = [](const auto& settings) {
    for (const auto& [pointer, value] : settings) {
      if (pointer == "/prefix_cache/block_size") return true;
    }
    return false;
  };
  const auto h100 = MlaSettings("h100-sxm", 16);
  EXPECT_NE(std::find(h100.begin(), h100.end(), block), h100.end());
  EXPECT_FALSE(has_block(MlaSettings("h100-sxm", 128)));
  EXPECT_FALSE(has_block(MlaSettings("a100-80gb", 16)));
}

// vLLM's MLA backends store no NVFP4 cache (VllmKvProblem): on a B200, where
// Llama's NVFP4 lever runs, DeepSeek-V3's is not applicable and says why;
// its fp8 lever applies.
TEST(LeversTest, AnNvfp4LeverForALatentCacheOnVllmIsNotApplicable) {
  const auto lever = [](const std::string& model, const std::string& name) {
    auto s = ParseScenario(
        R"({"model": ")" + model + R"(", "deployment": {"gpu": "b200", "gpus_per_replica": 8}})",
        "inline.json");
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
    for (const Lever& l : Levers(*s)) {
      if (l.name == name) return l;
    }
    ADD_FAILURE() << "no lever " << name << " for " << model;
    return Lever{};
  };
  EXPECT_EQ(lever("deepseek-v3", "nvfp4 KV cache")
                .not_applicable.rfind("vLLM stores no nvfp4 KV cache for deepseek-v3's latent", 0),
            0u);
  EXPECT_EQ(lever("deepseek-v3", "fp8 KV cache").not_applicable, "");
  EXPECT_EQ(lever("llama-3.1-70b", "nvfp4 KV cache").not_applicable, "");
}

// Llama-3.1-70B has 8 KV heads: over 4 GPUs each keeps 2, and with 4 heads
// one, so halving them halves what a GPU holds; over 8 GPUs each keeps one
// either way (replicated), so the lever is listed not applicable, with why
// (it was left out without a word).
TEST(LeversTest, HalfTheKvHeadsIsNotApplicableWhereEachGpuKeepsOne) {
  const auto half = [](int gpus) {
    auto s = ParseScenario(R"({"model": "llama-3.1-70b", "deployment": {"gpu": "h100-sxm",
                               "gpus_per_replica": )" +
                               std::to_string(gpus) + "}}",
                           "inline.json");
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
    for (const Lever& l : Levers(*s)) {
      if (l.name == "architecture: 4 KV heads instead of 8") return l;
    }
    ADD_FAILURE() << "no half-heads lever at " << gpus << " GPUs";
    return Lever{};
  };
  EXPECT_EQ(half(4).not_applicable, "");
  EXPECT_EQ(half(8).not_applicable,
            "with 8 GPUs a replica and 8 KV heads each GPU keeps one KV head, and with half of "
            "them it still keeps one (a head replicated on two GPUs): nothing a GPU holds or "
            "reads changes");
}

// The latent-cache rewrite of a Qwen3-8B scenario in vLLM's int4 cache would
// run on an MLA backend, which stores no int4: not applicable, saying so
// (it failed at the variant's scenario check); in bf16 it applies.
TEST(LeversTest, TheLatentCacheLeverNeedsAKvFormatVllmsMlaBackendsStore) {
  for (const auto& [kv, reason] : std::vector<std::pair<std::string, std::string>>{
           {"int4", "vLLM stores no int4 KV cache for qwen3-8b's latent (MLA) attention"},
           {"bf16", ""}}) {
    auto s = ParseScenario(R"({"model": "qwen3-8b", "kv_format": ")" + kv + R"("})", "inline.json");
    ASSERT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
    bool found = false;
    for (const Lever& l : Levers(*s)) {
      if (!l.name.starts_with("architecture: latent KV cache")) continue;
      found = true;
      EXPECT_EQ(l.not_applicable.substr(0, reason.size()), reason) << kv;
      EXPECT_EQ(l.not_applicable.empty(), reason.empty()) << kv << ": " << l.not_applicable;
    }
    EXPECT_TRUE(found) << kv;
  }
}

// The summarise lever acts under the deployment's max_model_len: Qwen3-8B
// serves 40,960 tokens, so a 64k threshold could never act; half of it,
// 20,480 (20k), keeping a quarter of that, 5,120 (5k). With YaRN to 131,072
// it is the usual 64k, keeping 16k (the most it keeps).
TEST(LeversTest, TheSummariseLeverFitsUnderTheModelsLength) {
  for (const auto& [text, name, threshold, keep] :
       std::vector<std::tuple<std::string, std::string, int, int>>{
           {R"({"model": "qwen3-8b"})", "summarise past 20k tokens (2k summary, keep 5k)", 20480,
            5120},
           {R"({"model": "qwen3-8b", "engine": {"max_model_len": 131072}})",
            "summarise past 64k tokens (2k summary, keep 16k)", 65536, 16384}}) {
    auto s = ParseScenario(text, "inline.json");
    ASSERT_TRUE(s.ok()) << s.error().message();
    bool found = false;
    for (const Lever& l : Levers(*s)) {
      if (!l.name.starts_with("summarise")) continue;
      found = true;
      EXPECT_EQ(l.name, name);
      ASSERT_EQ(l.settings.size(), 1u);
      const auto policy = nlohmann::json::parse(l.settings[0].second);
      EXPECT_EQ(policy["threshold_tokens"], threshold);
      EXPECT_EQ(policy["keep_recent_tokens"], keep);
      EXPECT_EQ(policy["summary_tokens"], 2048);
    }
    EXPECT_TRUE(found) << text;
  }
}

// Two one-turn tasks of 70,000 tokens: both prompts pass 65,536, but
// summarise acts only before a later turn, and there is none. The reason
// says that, not that no prompt passes.
TEST(LeversTest, SummariseOverSingleTurnTasksSaysThereIsNoLaterTurn) {
  const LeverOutcome o = SummariseOver(
      "single_turn",
      "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":70000}],\"out\":5}]}\n"
      "{\"id\":\"b\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":70000}],\"out\":5}]}\n");
  EXPECT_FALSE(o.run.has_value());
  EXPECT_EQ(o.lever.not_applicable,
            "every task has a single turn, and summarise acts only before a later turn (2 "
            "prompts pass 65,536 tokens)");
}

// Later turns exist, but the one prompt over 65,536 (70,000) is a first
// turn: the second keeps nothing and sends 100 tokens.
TEST(LeversTest, SummariseSaysWhenOnlyFirstTurnsPassTheThreshold) {
  const LeverOutcome o = SummariseOver(
      "first_turn",
      "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":70000}],\"out\":5},"
      "{\"keep\":0,\"spans\":[{\"kind\":\"user\",\"tokens\":100}],\"out\":5}]}\n");
  EXPECT_EQ(o.lever.not_applicable,
            "no prompt after a task's first turn passes 65,536 tokens, and summarise acts only "
            "before a later turn (1 first-turn prompt passes 65,536 tokens)");
}

// Multi-turn tasks whose prompts all stay at 1,000 + 1,000 tokens: no
// prompt passes at all.
TEST(LeversTest, SummariseSaysWhenNoPromptPassesTheThreshold) {
  const LeverOutcome o = SummariseOver(
      "short",
      "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":1000}],\"out\":5},"
      "{\"spans\":[{\"kind\":\"user\",\"tokens\":1000}],\"out\":5}]}\n");
  EXPECT_EQ(o.lever.not_applicable, "no prompt passes 65,536 tokens");
}

// Turn 2's prompt is 60,000 system + 6,000 user + 100 = 66,100 tokens, past
// 65,536, but only 6,100 follow the system span: no more than the 16,384
// kept + the 2,048-token summary = 18,432, so nothing is summarised.
TEST(LeversTest, SummariseSaysWhenTooLittleFollowsTheSystemSpans) {
  const LeverOutcome o =
      SummariseOver("system_heavy",
                    "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"system\",\"tokens\":60000},"
                    "{\"kind\":\"user\",\"tokens\":6000}],\"out\":5},"
                    "{\"spans\":[{\"kind\":\"user\",\"tokens\":100}],\"out\":5}]}\n");
  EXPECT_EQ(o.lever.not_applicable,
            "no prompt past 65,536 tokens has more than 18,432 tokens after its leading system "
            "and tools spans (the 16,384 it keeps and the 2,048-token summary): it shortens none");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
