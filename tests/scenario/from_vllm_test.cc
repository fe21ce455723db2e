#include "kvbill/scenario/from_vllm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kvbill/scenario/scenario.h"

namespace kvbill {
namespace {

using nlohmann::json;

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

struct Converted {
  json doc;  // without "notes"
  std::vector<std::string> notes;
  Scenario scenario;  // the doc read back
};

Converted Convert(const std::string& command, const std::string& gpu = "") {
  Converted c;
  auto s = ScenarioFromVllm(Words(command), FromVllmOptions{gpu});
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  if (!s) return c;
  c.doc = json::parse(s->json_text);
  EXPECT_EQ(c.doc["notes"], json(s->notes));
  c.notes = s->notes;
  c.doc.erase("notes");
  auto parsed = ParseScenario(s->json_text, "from-vllm.json");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message());
  if (parsed) c.scenario = *parsed;
  return c;
}

bool HasNote(const Converted& c, const std::string& note) {
  return std::find(c.notes.begin(), c.notes.end(), note) != c.notes.end();
}

const char kNoTrace[] = "no trace: give one with --trace or a \"trace\" section";

// Five serve command lines as they are written in deployment guides.

TEST(FromVllmTest, ExpertParallelismSpansTheTensorParallelGpus) {
  const Converted c =
      Convert("vllm serve Qwen/Qwen3-235B-A22B -tp 4 --enable-expert-parallel", "a100-80gb");
  EXPECT_EQ(c.doc["deployment"], json::parse(R"({"gpu": "a100-80gb", "gpus_per_replica": 4,
                                                 "expert_parallel": 4})"));
  EXPECT_EQ(c.scenario.deployment.expert_parallel, 4);
}

TEST(FromVllmTest, TensorParallel70BOnFourGpus) {
  const Converted c = Convert(
      "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --host 0.0.0.0 "
      "--port 8000",
      "h100-sxm");
  EXPECT_EQ(c.doc, json::parse(R"({"name": "vllm-llama-3.1-70b", "model": "llama-3.1-70b",
                                   "kv_format": "auto",
                                   "deployment": {"gpu": "h100-sxm", "gpus_per_replica": 4}})"));
  EXPECT_TRUE(HasNote(c, "not expressed in the scenario: --host 0.0.0.0, --port 8000"));
  EXPECT_TRUE(HasNote(c, kNoTrace));
  // vLLM's KV "auto" is the model dtype: Llama 3.1's config says bfloat16.
  EXPECT_EQ(c.scenario.kv_format, "bf16");
  EXPECT_EQ(c.scenario.deployment.gpus_per_replica, 4);
}

TEST(FromVllmTest, Fp8KvCache) {
  const Converted c =
      Convert("vllm serve Qwen/Qwen3-8B --kv-cache-dtype fp8_e5m2 --gpu-memory-utilization 0.85");
  EXPECT_EQ(c.doc, json::parse(R"({"name": "vllm-qwen3-8b", "model": "qwen3-8b",
                                   "kv_format": "fp8-e5m2",
                                   "deployment": {"memory_fraction": 0.85}})"));
  EXPECT_TRUE(HasNote(c,
                      "the command line does not name the GPU: deployment.gpu is kvbill's "
                      "default, h100-sxm (give --gpu to from-vllm)"));
  EXPECT_EQ(c.scenario.deployment.memory_fraction, 0.85);
}

TEST(FromVllmTest, PrefixCachingOffForAHybridModel) {
  // Jamba's Mamba layers need caching off in kvbill; 16K is vLLM's binary K: 16,384.
  const Converted c = Convert(
      "vllm serve ai21labs/AI21-Jamba-1.5-Mini --no-enable-prefix-caching "
      "--max-num-batched-tokens 16K -tp 2",
      "h200");
  EXPECT_EQ(c.doc, json::parse(R"({"name": "vllm-jamba-1.5-mini", "model": "jamba-1.5-mini",
                                   "kv_format": "auto",
                                   "deployment": {"gpu": "h200", "gpus_per_replica": 2},
                                   "engine": {"max_num_batched_tokens": 16384},
                                   "prefix_cache": {"enabled": false}})"));
  EXPECT_FALSE(c.scenario.prefix_cache.enabled);
  // Without the flag vLLM caches prefixes, and kvbill refuses that for Jamba.
  auto on = ScenarioFromVllm(Words("vllm serve ai21labs/AI21-Jamba-1.5-Mini"));
  ASSERT_FALSE(on.ok());
  EXPECT_NE(on.error().message().find("#/prefix_cache/enabled: model \"jamba-1.5-mini\" has "
                                      "constant-state"),
            std::string::npos)
      << on.error().message();
}

TEST(FromVllmTest, LanguageModelOnlyLeavesTheTowersOut) {
  // --language-model-only: vLLM loads no multimodal module (Qwen3.5-9B's
  // vision tower); the scenario says so with model.text_only.
  const Converted c = Convert(
      "vllm serve Qwen/Qwen3.5-9B --language-model-only --no-enable-prefix-caching", "h100-sxm");
  EXPECT_EQ(c.doc, json::parse(R"({"name": "vllm-qwen3.5-9b",
                                   "model": {"name": "qwen3.5-9b", "text_only": true},
                                   "kv_format": "auto",
                                   "deployment": {"gpu": "h100-sxm"},
                                   "prefix_cache": {"enabled": false}})"));
  EXPECT_TRUE(c.scenario.model.text_only);
  EXPECT_FALSE(Convert("vllm serve Qwen/Qwen3.5-9B --no-enable-prefix-caching", "h100-sxm")
                   .scenario.model.text_only);
}

TEST(FromVllmTest, AsyncSchedulingFlagsSetIt) {
  // Without either flag the scenario leaves it to the engine's default (on
  // from vLLM v0.14); --no-async-scheduling models a server that turned it off.
  EXPECT_FALSE(Convert("vllm serve Qwen/Qwen3-8B").scenario.deployment.async_scheduling);
  EXPECT_EQ(Convert("vllm serve Qwen/Qwen3-8B --no-async-scheduling")
                .scenario.deployment.async_scheduling,
            std::optional<bool>(false));
  EXPECT_EQ(
      Convert("vllm serve Qwen/Qwen3-8B --async-scheduling").scenario.deployment.async_scheduling,
      std::optional<bool>(true));
}

TEST(FromVllmTest, MaxModelLenAndDtype) {
  // vLLM's lowercase k is decimal: 32k = 32,000 tokens.
  const Converted c = Convert(
      "vllm serve Qwen/Qwen3-32B --max-model-len 32k --dtype bfloat16 -tp 2 "
      "--enable-prefix-caching");
  EXPECT_EQ(c.doc, json::parse(R"({"name": "vllm-qwen3-32b", "model": "qwen3-32b",
                                   "kv_format": "bf16", "weight_format": "bf16",
                                   "deployment": {"gpus_per_replica": 2},
                                   "engine": {"max_model_len": 32000},
                                   "prefix_cache": {"enabled": true}})"));
  EXPECT_EQ(c.scenario.engine.max_model_len, 32000);
}

// Qwen3-8B's config serves 40,960 tokens; vLLM extends it with YaRN
// (factor 4 over the original 32,768: 131,072), written as --rope-scaling or
// as --hf-overrides. Both become the config edit, so 131,072 reads back.
TEST(FromVllmTest, RopeScalingAndHfOverridesEditTheConfig) {
  const json yarn = json::parse(
      R"({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})");
  for (const std::string& flag :
       {std::string("--rope-scaling ") + yarn.dump(),
        std::string("--hf-overrides ") + json{{"rope_scaling", yarn}}.dump()}) {
    SCOPED_TRACE(flag);
    const Converted c = Convert("vllm serve Qwen/Qwen3-8B " + flag + " --max-model-len 131072");
    EXPECT_EQ(c.doc["model"], (json{{"name", "qwen3-8b"}, {"set", {{"rope_scaling", yarn}}}}));
    EXPECT_EQ(c.scenario.engine.max_model_len, 131072);
    EXPECT_TRUE(std::none_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
      return n.find("not expressed") != std::string::npos ||
             n.find("is above the model's") != std::string::npos;
    }));
  }
  // Without the scaling, 131,072 is past the config's 40,960: vLLM refuses
  // to start unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and the note says so
  // when the command is converted (the run warns context_limit later).
  const Converted plain = Convert("vllm serve Qwen/Qwen3-8B --max-model-len 131072");
  EXPECT_EQ(plain.scenario.engine.max_model_len, 131072);
  EXPECT_TRUE(std::any_of(plain.notes.begin(), plain.notes.end(), [](const std::string& n) {
    return n.rfind(
               "--max-model-len 131,072 is above the model's 40,960: vLLM refuses to start "
               "unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
               0) == 0;
  })) << json(plain.notes).dump();
  auto bad =
      ScenarioFromVllm(Words("vllm serve Qwen/Qwen3-8B --rope-scaling yarn"), FromVllmOptions{""});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "--rope-scaling: not valid JSON: yarn");
}

// --max-model-len auto (or -1): vLLM fits the longest context its pool
// holds; the scenario cannot say that, so it keeps the model's limit and a
// note says so (it once vanished without one).
TEST(FromVllmTest, MaxModelLenAutoIsNotedNotDropped) {
  for (const char* value : {"auto", "-1"}) {
    SCOPED_TRACE(value);
    const Converted c =
        Convert(std::string("vllm serve Qwen/Qwen3-32B --max-model-len ") + value, "h100-sxm");
    EXPECT_FALSE(c.doc.contains("engine") && c.doc["engine"].contains("max_model_len"));
    const std::string want = std::string("--max-model-len ") + value + ": not expressed;";
    EXPECT_TRUE(std::any_of(c.notes.begin(), c.notes.end(), [&](const std::string& n) {
      return n.rfind(want, 0) == 0;
    })) << c.doc["notes"].dump();
  }
}

TEST(FromVllmTest, MaxNumSeqsWithUnderscoresEqualsAndDataParallel) {
  const Converted c = Convert(
      "vllm serve openai/gpt-oss-20b --max-num-seqs 64 --max_num_batched_tokens=4096 "
      "--block-size 32 -dp 4 --quantization mxfp4 --trust-remote-code --served-model-name gpt",
      "h100-sxm");
  EXPECT_EQ(c.doc, json::parse(R"({"name": "vllm-gpt-oss-20b", "model": "gpt-oss-20b",
                                   "kv_format": "auto", "weight_format": "mxfp4",
                                   "deployment": {"gpu": "h100-sxm", "replicas": 4},
                                   "engine": {"max_num_seqs": 64, "max_num_batched_tokens": 4096},
                                   "prefix_cache": {"block_size": 32}})"));
  EXPECT_TRUE(
      HasNote(c, "not expressed in the scenario: --trust-remote-code, --served-model-name gpt"));
  // Both scheduler limits given: no note about vLLM's defaults.
  for (const std::string& note : c.notes) EXPECT_EQ(note.find("not given"), std::string::npos);
  EXPECT_EQ(c.scenario.engine.max_num_seqs, 64);
  EXPECT_EQ(c.scenario.deployment.replicas, 4);
}

TEST(FromVllmTest, AModelOutsideTheCatalogIsKeptWithANote) {
  auto s = ScenarioFromVllm(Words("vllm serve someone/Some-Model-7B"));
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(json::parse(s->json_text)["model"], "someone/Some-Model-7B");
  EXPECT_NE(std::find(s->notes.begin(), s->notes.end(),
                      "model \"someone/Some-Model-7B\" is not in kvbill's catalog (kvbill "
                      "models): save its config.json and set \"model\" to that path"),
            s->notes.end());
}

TEST(FromVllmTest, ValuesKvbillRefusesAreErrors) {
  auto tp0 = ScenarioFromVllm(Words("vllm serve Qwen/Qwen3-8B -tp 0"));
  ASSERT_FALSE(tp0.ok());
  EXPECT_EQ(tp0.error().message(),
            "the scenario made from the command line does not read: "
            "from-vllm.json#/deployment/gpus_per_replica: must be a positive integer, got 0");
  auto mla =
      ScenarioFromVllm(Words("vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype fp8_ds_mla"));
  ASSERT_FALSE(mla.ok());
  EXPECT_EQ(mla.error().message(),
            "--kv-cache-dtype: vLLM's \"fp8_ds_mla\" has no kvbill KV format (docs/formats.md "
            "lists kvbill's)");
  auto seqs = ScenarioFromVllm(Words("vllm serve Qwen/Qwen3-8B --max-num-seqs many"));
  ASSERT_FALSE(seqs.ok());
  EXPECT_EQ(seqs.error().message(), "--max-num-seqs: expected an integer, got \"many\"");
  EXPECT_FALSE(ScenarioFromVllm(Words("vllm serve")).ok());
  EXPECT_FALSE(ScenarioFromVllm(Words("vllm serve Qwen/Qwen3-8B --max-num-seqs")).ok());
}

TEST(FromVllmTest, HumanReadableIntegersAsVllmReadsThem) {
  // arg_utils.py human_readable_int: k m g t decimal, K M G T binary.
  EXPECT_EQ(*ParseVllmInt("32768"), 32768);
  EXPECT_EQ(*ParseVllmInt("1k"), 1000);
  EXPECT_EQ(*ParseVllmInt("1K"), 1024);
  EXPECT_EQ(*ParseVllmInt("25.6k"), 25600);
  EXPECT_EQ(*ParseVllmInt("2M"), 2097152);  // 2 * 2^20
  EXPECT_EQ(*ParseVllmInt("1m"), 1000000);
  EXPECT_FALSE(ParseVllmInt("1.5K").ok());  // no decimals with a binary suffix
  EXPECT_FALSE(ParseVllmInt("k").ok());
  EXPECT_FALSE(ParseVllmInt("12x").ok());
  EXPECT_FALSE(ParseVllmInt("-5K").ok());
  EXPECT_FALSE(ParseVllmInt("1.5").ok());
  EXPECT_FALSE(ParseVllmInt("99999999T").ok());  // above 2^40, not an overflow
}

}  // namespace
}  // namespace kvbill
