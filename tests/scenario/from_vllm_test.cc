#include "kvbill/scenario/from_vllm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kvbill/scenario/scenario.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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

// With data parallelism vLLM's expert parallelism spans tp x dp GPUs, which
// a scenario cannot express (replicas are independent): it was once
// dropped, or became EP 4 where vLLM runs EP 8, without a word.
TEST(FromVllmTest, ExpertParallelismOverDataParallelRanksIsNamed) {
  const Converted dp =
      Convert("vllm serve Qwen/Qwen3-235B-A22B -dp 8 --enable-expert-parallel", "h100-sxm");
  EXPECT_EQ(dp.doc["deployment"], json::parse(R"({"gpu": "h100-sxm", "replicas": 8})"));
  EXPECT_TRUE(HasNote(
      dp,
      "--enable-expert-parallel with -tp 1 -dp 8: vLLM splits the routed experts over all 8 GPUs "
      "(expert parallel 8 = tp x dp), each data-parallel rank running its own attention, and "
      "sends tokens to their experts all-to-all; a scenario cannot split experts across "
      "replicas, so it runs 8 independent replicas of 1 GPU, each holding all the experts on its "
      "GPU (expert_parallel 1)"))
      << json(dp.notes).dump();
  const Converted both =
      Convert("vllm serve Qwen/Qwen3-235B-A22B -tp 4 -dp 2 --enable-expert-parallel", "h100-sxm");
  EXPECT_EQ(both.doc["deployment"], json::parse(R"({"gpu": "h100-sxm", "gpus_per_replica": 4,
                                                    "replicas": 2, "expert_parallel": 4})"));
  EXPECT_TRUE(HasNote(
      both,
      "--enable-expert-parallel with -tp 4 -dp 2: vLLM splits the routed experts over all 8 GPUs "
      "(expert parallel 8 = tp x dp), each data-parallel rank running its own attention, and "
      "sends tokens to their experts all-to-all; a scenario cannot split experts across "
      "replicas, so it runs 2 independent replicas of 4 GPUs, each holding all the experts, "
      "whole experts spread over its 4 GPUs (expert_parallel 4, expert_dispatch all_reduce)"))
      << json(both.notes).dump();
  const Converted one =
      Convert("vllm serve Qwen/Qwen3-235B-A22B --enable-expert-parallel", "h100-sxm");
  EXPECT_EQ(one.doc["deployment"], json::parse(R"({"gpu": "h100-sxm"})"));
  EXPECT_TRUE(HasNote(one,
                      "--enable-expert-parallel on one GPU (-tp 1, no -dp): nothing to split, as "
                      "in vLLM; expert_parallel stays 1"));
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
  // The flag said it: no note about caching.
  EXPECT_TRUE(std::none_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
    return n.find("prefix_cache.enabled is false") != std::string::npos;
  }));
}

// A hybrid model's plain command line (vLLM's default caching on, or
// --enable-prefix-caching as published) once failed to read back; the
// scenario now writes caching off and says why.
TEST(FromVllmTest, PrefixCachingIsWrittenOffForAHybridModelWithANote) {
  const std::string why =
      " has constant-state (SSM / linear attention / short convolution) layers, and kvbill does "
      "not model a prefix cache over their state. vLLM turned prefix caching off for such models "
      "(\"Hybrid or mamba-based model detected: disabling prefix caching\", MambaModelConfig in "
      "vllm/model_executor/models/config.py); newer versions have an experimental Mamba prefix "
      "cache (--mamba-cache-mode), which kvbill does not model";
  struct Case {
    const char* command;
    const char* catalog;
    const char* flag;  // what the note blames
  };
  for (const Case& k : {
           Case{"vllm serve Qwen/Qwen3.5-9B --max-model-len=32768", "qwen3.5-9b",
                "prefix caching (on by default in vLLM)"},
           Case{"vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct -tp 4", "qwen3-next-80b-a3b",
                "prefix caching (on by default in vLLM)"},
           Case{"vllm serve ai21labs/AI21-Jamba-1.5-Mini -tp 2", "jamba-1.5-mini",
                "prefix caching (on by default in vLLM)"},
           Case{"vllm serve Qwen/Qwen3.5-9B --reasoning-parser=qwen3 --max-model-len=32768 "
                "--enable-prefix-caching",
                "qwen3.5-9b", "--enable-prefix-caching"},
       }) {
    SCOPED_TRACE(k.command);
    const Converted c = Convert(k.command, "h100-sxm");
    EXPECT_EQ(c.doc["prefix_cache"], json::parse(R"({"enabled": false})"));
    EXPECT_FALSE(c.scenario.prefix_cache.enabled);
    EXPECT_TRUE(HasNote(c, std::string(k.flag) + ": prefix_cache.enabled is false; model \"" +
                               k.catalog + "\"" + why))
        << json(c.notes).dump();
  }
  // A model without such layers keeps vLLM's default: caching on, no note.
  const Converted dense = Convert("vllm serve Qwen/Qwen3-8B", "h100-sxm");
  EXPECT_FALSE(dense.doc.contains("prefix_cache"));
  EXPECT_TRUE(dense.scenario.prefix_cache.enabled);
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

// A checkpoint whose config.json is a catalog model's but for its context
// length runs as that model with its own length: Qwen2.5-7B-Instruct's
// 32,768 (the catalog's base, 131,072), Llama-4-Scout's base 262,144 (the
// catalog's Instruct, 10,485,760). The base Qwen2.5-7B is the catalog's as
// it is; --hf-overrides of the length is vLLM's edit of the config read,
// and wins.
TEST(FromVllmTest, ACheckpointWithItsOwnContextLengthKeepsIt) {
  const Converted instruct = Convert("vllm serve Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(instruct.doc["model"],
            (json{{"name", "qwen2.5-7b"}, {"set", {{"max_position_embeddings", 32768}}}}));
  EXPECT_TRUE(HasNote(instruct,
                      "model \"Qwen/Qwen2.5-7B-Instruct\" is the catalog's \"qwen2.5-7b\" with its "
                      "own config.json's context length, max_position_embeddings 32768 "
                      "(model.set)"))
      << json(instruct.notes).dump();
  const Converted scout = Convert("vllm serve meta-llama/Llama-4-Scout-17B-16E -tp 8");
  EXPECT_EQ(scout.doc["model"],
            (json{{"name", "llama-4-scout"}, {"set", {{"max_position_embeddings", 262144}}}}));
  const Converted base = Convert("vllm serve Qwen/Qwen2.5-7B");
  EXPECT_EQ(base.doc["model"], "qwen2.5-7b");
  const Converted overridden = Convert(
      R"(vllm serve Qwen/Qwen2.5-7B-Instruct --hf-overrides {"max_position_embeddings":65536})");
  EXPECT_EQ(overridden.doc["model"],
            (json{{"name", "qwen2.5-7b"}, {"set", {{"max_position_embeddings", 65536}}}}));
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

const char kNotRecognised[] =
    "\" is not recognised (not in kvbill's catalog, kvbill models, nor a copy of a catalog "
    "architecture): save its config.json and set \"model\" to that path; until then the "
    "scenario does not load, and the checks that need the model (-tp against its heads, "
    "--enable-expert-parallel against its experts, an mtp draft against its layers) were not "
    "made";

TEST(FromVllmTest, AModelOutsideTheCatalogIsKeptWithANote) {
  auto s = ScenarioFromVllm(Words("vllm serve someone/Some-Model-7B"));
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(json::parse(s->json_text)["model"], "someone/Some-Model-7B");
  EXPECT_NE(std::find(s->notes.begin(), s->notes.end(),
                      std::string("model \"someone/Some-Model-7B") + kNotRecognised),
            s->notes.end());
}

// An unknown model's settings were once checked against kvbill's default
// model (qwen3-8b: 32 query heads, 8 KV heads, no experts): expert
// parallelism failed with "no routed experts", -tp 64 on its heads. They
// are kept as given, for the model the user will name.
TEST(FromVllmTest, AnUnknownModelIsNotCheckedAgainstTheDefaultModel) {
  auto s = ScenarioFromVllm(Words("vllm serve someone/Some-MoE-1T -tp 64 --enable-expert-parallel"),
                            {"h100-sxm"});
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(json::parse(s->json_text)["deployment"],
            json::parse(R"({"gpu": "h100-sxm", "gpus_per_replica": 64, "expert_parallel": 64})"));
  EXPECT_NE(std::find(s->notes.begin(), s->notes.end(),
                      std::string("model \"someone/Some-MoE-1T") + kNotRecognised),
            s->notes.end());
  // What needs no model is still checked.
  auto tp0 = ScenarioFromVllm(Words("vllm serve someone/Some-MoE-1T -tp 0"));
  ASSERT_FALSE(tp0.ok());
  EXPECT_EQ(tp0.error().message(),
            "the scenario made from the command line does not read: "
            "from-vllm.json#/deployment/gpus_per_replica: must be a positive integer, got 0");
}

// A tuned or quantised copy of a catalog architecture is that architecture
// (the rule kvbill calibrate's replays use, CatalogModelFromHfId); an -FP8
// copy carries its fp8 weights, with a note on what the scenario prices.
TEST(FromVllmTest, ACopyOfACatalogModelIsThatModel) {
  const Converted c =
      Convert("vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 -tp 8 --enable-expert-parallel",
              "h100-sxm");
  EXPECT_EQ(c.doc, json::parse(R"({"name": "vllm-qwen3-235b-a22b-instruct-2507-fp8",
                                   "model": "qwen3-235b-a22b", "kv_format": "auto",
                                   "weight_format": "fp8",
                                   "deployment": {"gpu": "h100-sxm", "gpus_per_replica": 8,
                                                  "expert_parallel": 8}})"));
  EXPECT_TRUE(HasNote(c,
                      "model \"Qwen/Qwen3-235B-A22B-Instruct-2507-FP8\" is taken as the catalog's "
                      "\"qwen3-235b-a22b\", the architecture it is a tuned or quantised copy of "
                      "(kvbill models)"));
  EXPECT_TRUE(HasNote(
      c,
      "weight_format fp8: \"Qwen/Qwen3-235B-A22B-Instruct-2507-FP8\" is an fp8 checkpoint with "
      "128x128 block scales; the scenario prices fp8 weights as vLLM runs weights quantised when "
      "loaded (CUTLASS scaled_mm), not the checkpoint's block-scaled kernels: for those, save its "
      "config.json and set \"model\" to that path (weight_format \"auto\")"));
  EXPECT_EQ(c.scenario.deployment.expert_parallel, 8);
  EXPECT_EQ(c.scenario.weight_format, "fp8");
  // A dated release of DeepSeek-R1 is DeepSeek-V3's architecture (its
  // weights are the catalog model's own: no weight note).
  const Converted r1 = Convert("vllm serve deepseek-ai/DeepSeek-R1-0528 -tp 8", "h200");
  EXPECT_EQ(r1.doc["model"], "deepseek-v3");
  EXPECT_FALSE(r1.doc.contains("weight_format"));
  // An AWQ copy: 4-bit weights in groups of 128, by its name or by -q (AWQ's
  // and GPTQ's usual group, 4 + 32/128 = 4.25 bits; int4 alone is groups of
  // 32, 5 bits, which overstated Qwen3-32B's weights by 2.9 GB).
  const Converted awq = Convert("vllm serve Qwen/Qwen3-32B-AWQ", "h100-sxm");
  EXPECT_EQ(awq.doc["model"], "qwen3-32b");
  EXPECT_EQ(awq.doc["weight_format"], "int4-g128");
  for (const char* q : {"awq", "awq_marlin", "gptq", "gptq_marlin"}) {
    EXPECT_EQ(Convert(std::string("vllm serve Qwen/Qwen3-32B-AWQ -q ") + q, "h100-sxm")
                  .doc["weight_format"],
              "int4-g128")
        << q;
  }
}

// vLLM's argparse takes `serve`'s model after flags too. A boolean flag
// kvbill does not express (--trust-remote-code) takes no value: the word
// after it is the model, not its value.
TEST(FromVllmTest, TheModelMayFollowTheFlags) {
  for (const char* command : {"vllm serve --trust-remote-code Qwen/Qwen3-8B --max-model-len 32K",
                              "vllm serve --max-model-len 32K Qwen/Qwen3-8B --trust-remote-code",
                              "vllm serve Qwen/Qwen3-8B --trust-remote-code --max-model-len 32K"}) {
    SCOPED_TRACE(command);
    const Converted c = Convert(command);
    EXPECT_EQ(c.doc["model"], "qwen3-8b");
    EXPECT_EQ(c.doc["engine"]["max_model_len"], 32768);  // 32K = 32 x 1,024
    bool noted = false;
    for (const std::string& note : c.notes) {
      noted = noted || note.find("--trust-remote-code") != std::string::npos;
      EXPECT_EQ(note.find("Qwen/Qwen3-8B"), std::string::npos) << note;
    }
    EXPECT_TRUE(noted);
  }
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
  // Pipeline stages are GPUs a scenario has no key for: refused, where a
  // note once left 1 GPU a replica priced for vLLM's 2.
  auto pp = ScenarioFromVllm(Words("vllm serve meta-llama/Llama-3.1-8B-Instruct -pp 2"));
  ASSERT_FALSE(pp.ok());
  EXPECT_EQ(pp.error().message().rfind(
                "--pipeline-parallel-size 2: kvbill does not model pipeline parallelism", 0),
            0u)
      << pp.error().message();
  EXPECT_TRUE(ScenarioFromVllm(Words("vllm serve meta-llama/Llama-3.1-8B-Instruct -pp 1")).ok());
  auto seqs = ScenarioFromVllm(Words("vllm serve Qwen/Qwen3-8B --max-num-seqs many"));
  ASSERT_FALSE(seqs.ok());
  EXPECT_EQ(seqs.error().message(), "--max-num-seqs: expected an integer, got \"many\"");
  EXPECT_FALSE(ScenarioFromVllm(Words("vllm serve")).ok());
  EXPECT_FALSE(ScenarioFromVllm(Words("vllm serve Qwen/Qwen3-8B --max-num-seqs")).ok());
}

// --speculative-config was once only listed as not expressed; its JSON is
// now deployment.speculative, read as vLLM reads it.
TEST(FromVllmTest, SpeculativeConfigBecomesTheScenariosSpeculation) {
  const Converted eagle = Convert(
      R"(vllm serve Qwen/Qwen3-8B --speculative-config {"method":"eagle3","model":"AngelSlim/Qwen3-8B_eagle3","num_speculative_tokens":3})",
      "h100-sxm");
  EXPECT_EQ(eagle.doc["deployment"]["speculative"],
            json::parse(R"({"method": "eagle3", "num_speculative_tokens": 3})"));
  EXPECT_TRUE(HasNote(eagle,
                      "--speculative-config keys not expressed: model AngelSlim/Qwen3-8B_eagle3 "
                      "(kvbill prices eagle3's draft from the method and the model, not this "
                      "checkpoint)"))
      << json(eagle.notes).dump();
  EXPECT_TRUE(HasNote(eagle,
                      "--speculative-config: the acceptance rate is kvbill's default for eagle3 "
                      "(vLLM measures it as it runs; simulate warns "
                      "speculative_acceptance_assumed): set "
                      "deployment.speculative.acceptance_rate to a measured one"));
  ASSERT_TRUE(eagle.scenario.deployment.speculative.has_value());
  EXPECT_EQ(eagle.scenario.deployment.speculative->method, "eagle3");
  EXPECT_TRUE(std::none_of(eagle.notes.begin(), eagle.notes.end(), [](const std::string& n) {
    return n.rfind("not expressed in the scenario", 0) == 0;
  }));

  const Converted ngram = Convert(
      R"(vllm serve Qwen/Qwen3-8B --speculative-config={"method":"ngram","num_speculative_tokens":5,"prompt_lookup_max":4})",
      "h100-sxm");
  EXPECT_EQ(ngram.doc["deployment"]["speculative"],
            json::parse(R"({"method": "ngram", "num_speculative_tokens": 5})"));
  EXPECT_TRUE(HasNote(ngram, "--speculative-config keys not expressed: prompt_lookup_max 4"));

  // A draft model: a repo id becomes its catalog name; no method is a draft model.
  const Converted draft = Convert(
      R"(vllm serve Qwen/Qwen3-32B -tp 2 --speculative-config {"model":"Qwen/Qwen3-8B","num_speculative_tokens":4})",
      "h100-sxm");
  EXPECT_EQ(draft.doc["deployment"]["speculative"],
            json::parse(
                R"({"method": "draft_model", "model": "qwen3-8b", "num_speculative_tokens": 4})"));

  // The deprecated per-model MTP names are mtp, as vLLM reads them
  // (Qwen3.5-9B's config has one MTP layer, DeepSeek-V3's one).
  for (const char* name : {"qwen3_5_mtp", "qwen3_next_mtp"}) {
    const Converted mtp =
        Convert(std::string("vllm serve Qwen/Qwen3.5-9B --speculative-config {\"method\":\"") +
                    name + "\",\"num_speculative_tokens\":2}",
                "h100-sxm");
    EXPECT_EQ(mtp.doc["deployment"]["speculative"],
              json::parse(R"({"method": "mtp", "num_speculative_tokens": 2})"));
    EXPECT_TRUE(HasNote(mtp, std::string("--speculative-config method ") + name +
                                 ": vLLM reads this deprecated name as \"mtp\" (MTPModelTypes, "
                                 "vllm/config/speculative.py); so does the scenario"));
  }
  const Converted ds = Convert(
      R"(vllm serve deepseek-ai/DeepSeek-V3 -tp 8 --speculative-config {"method":"deepseek_mtp","num_speculative_tokens":1})",
      "h200");
  EXPECT_EQ(ds.scenario.deployment.speculative->method, "mtp");

  // A method kvbill does not model: listed, no speculation.
  const Converted medusa = Convert(
      R"(vllm serve Qwen/Qwen3-8B --speculative-config {"method":"medusa","model":"x/medusa","num_speculative_tokens":3})",
      "h100-sxm");
  EXPECT_FALSE(medusa.doc["deployment"].contains("speculative"));
  EXPECT_TRUE(HasNote(
      medusa,
      R"(not expressed in the scenario: --speculative-config {"method":"medusa","model":"x/medusa","num_speculative_tokens":3} (method "medusa": kvbill models draft_model, eagle, eagle3, mtp and ngram))"))
      << json(medusa.notes).dump();
}

// What vLLM refuses, the read-back refuses, as simulate would.
TEST(FromVllmTest, SpeculationVllmRefusesIsAnError) {
  auto async = ScenarioFromVllm(Words(
      R"(vllm serve Qwen/Qwen3-8B --async-scheduling --speculative-config {"method":"ngram","num_speculative_tokens":3})"));
  ASSERT_FALSE(async.ok());
  EXPECT_EQ(async.error().message(),
            "the scenario made from the command line does not read: "
            "from-vllm.json#/deployment/async_scheduling: vLLM refuses async scheduling with "
            "n-gram speculation (vllm/config/vllm.py); set it to false or draft another way");
  // Qwen3-8B's config has no multi-token-prediction layers.
  auto mtp = ScenarioFromVllm(Words(
      R"(vllm serve Qwen/Qwen3-8B --speculative-config {"method":"deepseek_mtp","num_speculative_tokens":1})"));
  ASSERT_FALSE(mtp.ok());
  EXPECT_EQ(mtp.error().message(),
            "the scenario made from the command line does not read: "
            "from-vllm.json#/deployment/speculative/method: model \"qwen3-8b\" has no "
            "multi-token-prediction layers (num_nextn_predict_layers or mtp_num_hidden_layers in "
            "its config) to draft with; use \"eagle3\", \"ngram\" or \"draft_model\"");
  auto json_bad = ScenarioFromVllm(Words("vllm serve Qwen/Qwen3-8B --speculative-config ngram"));
  ASSERT_FALSE(json_bad.ok());
  EXPECT_EQ(json_bad.error().message(), "--speculative-config: not valid JSON: ngram");
  auto empty = ScenarioFromVllm(
      Words(R"(vllm serve Qwen/Qwen3-8B --speculative-config {"num_speculative_tokens":3})"));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message(),
            "--speculative-config: names neither a \"method\" nor a draft \"model\" (vLLM "
            "refuses it)");
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
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Environment assignments before the command, as a shell takes them:
// VLLM_MXFP4_USE_MARLIN=1 is where vLLM has a choice (Hopper) the key, and
// elsewhere a note; any other variable is listed as not expressed.
TEST(FromVllmTest, EnvironmentAssignmentsBeforeTheCommand) {
  Converted c = Convert(
      "VLLM_MXFP4_USE_MARLIN=1 CUDA_VISIBLE_DEVICES=0,1 vllm serve openai/gpt-oss-20b", "h100-sxm");
  EXPECT_EQ(c.doc["deployment"]["mxfp4_moe_kernel"], "marlin");
  EXPECT_EQ(c.scenario.deployment.mxfp4_moe_kernel, "marlin");
  EXPECT_EQ(c.doc["model"], "gpt-oss-20b");
  EXPECT_TRUE(HasNote(c, "not expressed in the scenario: CUDA_VISIBLE_DEVICES=0,1 (environment)"));

  c = Convert("env VLLM_MXFP4_USE_MARLIN=0 vllm serve openai/gpt-oss-20b", "h100-sxm");
  EXPECT_FALSE(c.doc["deployment"].contains("mxfp4_moe_kernel"));
  EXPECT_EQ(c.scenario.deployment.mxfp4_moe_kernel, "auto");

  c = Convert("VLLM_MXFP4_USE_MARLIN=1 vllm serve openai/gpt-oss-20b", "a100-80gb");
  EXPECT_FALSE(c.doc["deployment"].contains("mxfp4_moe_kernel"));
  EXPECT_TRUE(HasNote(c,
                      "VLLM_MXFP4_USE_MARLIN=1: on a100-80gb (ampere) vLLM runs MXFP4 experts on "
                      "one kernel whatever it says (Marlin on Ampere, Ada and RTX Blackwell, "
                      "FlashInfer on Blackwell, Triton on AMD); nothing to set"));

  auto bad = ScenarioFromVllm(Words("VLLM_MXFP4_USE_MARLIN=yes vllm serve openai/gpt-oss-20b"),
                              FromVllmOptions{});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.error().message(),
      "VLLM_MXFP4_USE_MARLIN=yes: vLLM reads VLLM_MXFP4_USE_MARLIN with int() (0 off, another "
      "integer on), and this is not an integer");
  // As Python's int(): a sign, surrounding spaces and underscores between
  // digits; a variable given twice takes its last value, as a shell passes.
  std::vector<std::string> words = {"VLLM_MXFP4_USE_MARLIN= +1_0 ", "vllm", "serve",
                                    "openai/gpt-oss-20b"};
  auto spaced = ScenarioFromVllm(words, FromVllmOptions{"h100-sxm"});
  ASSERT_TRUE(spaced.ok()) << spaced.error().message();
  EXPECT_NE(spaced->json_text.find("\"mxfp4_moe_kernel\": \"marlin\""), std::string::npos);
  for (const char* v : {"1__0", "_1", "1.0", ""}) {
    words[0] = std::string("VLLM_MXFP4_USE_MARLIN=") + v;
    EXPECT_FALSE(ScenarioFromVllm(words, FromVllmOptions{"h100-sxm"}).ok()) << v;
  }
  c = Convert("VLLM_MXFP4_USE_MARLIN=1 VLLM_MXFP4_USE_MARLIN=0 vllm serve openai/gpt-oss-20b",
              "h100-sxm");
  EXPECT_FALSE(c.doc["deployment"].contains("mxfp4_moe_kernel"));

  // Qwen3-8B's config gives 40,960 tokens: vLLM starts with 131,072 only
  // with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and the note says which it is.
  // vLLM takes it on when stripped and lower-cased it is "1" or "true",
  // off otherwise (never an error).
  for (const std::string v : {"1", "true", "TRUE"}) {
    c = Convert("VLLM_ALLOW_LONG_MAX_MODEL_LEN=" + v +
                " vllm serve Qwen/Qwen3-8B --max-model-len 131072");
    EXPECT_TRUE(HasNote(c,
                        "--max-model-len 131,072 is above the model's 40,960: vLLM starts only "
                        "because VLLM_ALLOW_LONG_MAX_MODEL_LEN=" +
                            v +
                            ", and the model was not trained that long (simulate warns "
                            "context_limit)"))
        << v;
  }
  c = Convert("VLLM_ALLOW_LONG_MAX_MODEL_LEN=2 vllm serve Qwen/Qwen3-8B --max-model-len 131072");
  EXPECT_FALSE(HasNote(c,
                       "--max-model-len 131,072 is above the model's 40,960: vLLM starts only "
                       "because VLLM_ALLOW_LONG_MAX_MODEL_LEN=2, and the model was not trained "
                       "that long (simulate warns context_limit)"));
  EXPECT_NE(std::find_if(c.notes.begin(), c.notes.end(),
                         [](const std::string& n) {
                           return n.find(
                                      "vLLM refuses to start unless "
                                      "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1") != std::string::npos;
                         }),
            c.notes.end());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
