// The key table: vLLM synonyms, "did you mean", engine.max_model_len, and
// the table's own consistency. (Every other key's reading and error texts:
// scenario_test.cc and the recorded corpus of scenario_golden_test.cc.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "kvbill/model/hf_config.h"
#include "kvbill/scenario/scenario.h"
#include "scenario/keys.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using scenario_keys::Key;
using scenario_keys::ScenarioKeys;
using scenario_keys::Type;

Scenario Parse(const std::string& text) {
  auto s = ParseScenario(text, "s.json");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  return s.ok() ? *s : Scenario{};
}

std::string ErrorOf(const std::string& text) {
  auto s = ParseScenario(text, "s.json");
  return s.ok() ? "(parsed)" : s.error().message();
}

TEST(ScenarioKeysTest, VllmNamesReadAsTheKeysOfTheSameMeaning) {
  const Scenario s = Parse(R"({
    "kv_cache_dtype": "fp8_e5m2",
    "deployment": {"tensor_parallel_size": 2, "gpu_memory_utilization": 0.8},
    "engine": {"max_num_seqs": 64, "max_num_batched_tokens": 4096, "max_model_len": 4096},
    "prefix_cache": {"enable_prefix_caching": false, "block_size": 32}})");
  EXPECT_EQ(s.kv_format, "fp8-e5m2");
  EXPECT_EQ(s.deployment.gpus_per_replica, 2);
  EXPECT_EQ(s.deployment.memory_fraction, 0.8);
  EXPECT_EQ(s.engine.max_num_seqs, 64);
  EXPECT_EQ(s.engine.max_num_batched_tokens, 4096);
  EXPECT_EQ(s.engine.max_model_len, 4096);
  EXPECT_FALSE(s.prefix_cache.enabled);
  EXPECT_EQ(s.prefix_cache.block_size, 32);
}

TEST(ScenarioKeysTest, KvCacheDtypeValuesMapOntoKvFormats) {
  // vllm/config/cache.py CacheDType: fp8 is E4M3; "auto" is the model's dtype.
  EXPECT_EQ(Parse(R"({"kv_cache_dtype": "fp8"})").kv_format, "fp8");
  EXPECT_EQ(Parse(R"({"kv_cache_dtype": "fp8_e4m3"})").kv_format, "fp8-e4m3");
  EXPECT_EQ(Parse(R"({"kv_cache_dtype": "bfloat16"})").kv_format, "bf16");
  EXPECT_EQ(Parse(R"({"kv_cache_dtype": "float16"})").kv_format, "fp16");
  // vLLM's int4 KV cache: kvbill's "int4", which on vLLM is int4-g<head_dim>
  // (docs/formats.md).
  EXPECT_EQ(Parse(R"({"kv_cache_dtype": "int4_per_token_head"})").kv_format, "int4");
  // NVFP4 KV runs on Blackwell only (the format matrix, docs/hardware.md#formats).
  EXPECT_EQ(Parse(R"({"kv_cache_dtype": "nvfp4", "deployment": {"gpu": "b200"}})").kv_format,
            "nvfp4");
  // qwen3-8b's config says "torch_dtype": "bfloat16".
  EXPECT_EQ(Parse(R"({"kv_cache_dtype": "auto"})").kv_format, "bf16");
  EXPECT_EQ(Parse(R"({"kv_format": "auto"})").kv_format, "bf16");
  // A float16 checkpoint: qwen3-8b's config with "torch_dtype": "float16".
  std::string config;
  for (const CatalogModel& m : ModelCatalog()) {
    if (m.name == "qwen3-8b") config = std::string(m.config);
  }
  const std::size_t at = config.find("\"bfloat16\"");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, 10, "\"float16\"");
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvbill-fp16-config-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << config;
  EXPECT_EQ(Parse(R"({"model": ")" + path.string() + R"(", "kv_cache_dtype": "auto"})").kv_format,
            "fp16");
  std::filesystem::remove(path);
  EXPECT_EQ(ErrorOf(R"({"kv_cache_dtype": "fp8_ds_mla"})"),
            R"(s.json#/kv_cache_dtype: vLLM's "fp8_ds_mla" has no kvbill equivalent; give )"
            "kv_format instead (one of its values: docs/scenario-format.md)");
  EXPECT_EQ(
      ErrorOf(R"({"kv_cache_dtype": "fp4"})")
          .rfind(R"(s.json#/kv_cache_dtype: unknown kv_cache_dtype "fp4" (one of auto|float16|)",
                 0),
      0u);
  // A kvbill format name is not a vLLM value.
  EXPECT_EQ(ErrorOf(R"({"kv_cache_dtype": "fp8-e5m2"})")
                .rfind(R"(s.json#/kv_cache_dtype: unknown kv_cache_dtype "fp8-e5m2")", 0),
            0u);
}

TEST(ScenarioKeysTest, AKeyAndItsVllmNameTogetherAreAnError) {
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpus_per_replica": 2, "tensor_parallel_size": 2}})"),
            R"(s.json#/deployment: has both "gpus_per_replica" and its vLLM name )"
            R"("tensor_parallel_size" (give one))");
  EXPECT_EQ(ErrorOf(R"({"kv_format": "fp8", "kv_cache_dtype": "fp8"})"),
            R"(s.json#: has both "kv_format" and its vLLM name "kv_cache_dtype" (give one))");
  EXPECT_EQ(ErrorOf(R"({"prefix_cache": {"enabled": true, "enable_prefix_caching": true}})"),
            R"(s.json#/prefix_cache: has both "enabled" and its vLLM name )"
            R"("enable_prefix_caching" (give one))");
}

TEST(ScenarioKeysTest, AVllmNameOutsideItsSectionIsUnknownThere) {
  // gpu_memory_utilization is kept in deployment, where kvbill keeps memory_fraction.
  EXPECT_EQ(ErrorOf(R"({"engine": {"gpu_memory_utilization": 0.9}})"),
            R"(s.json#/engine/gpu_memory_utilization: unknown key here; did you mean )"
            R"("/deployment/memory_fraction"?)");
  EXPECT_EQ(ErrorOf(R"({"engine": {"block_size": 16}})"),
            R"(s.json#/engine/block_size: unknown key here; did you mean )"
            R"("/prefix_cache/block_size"?)");
}

TEST(ScenarioKeysTest, BadValuesUnderAVllmNameNameThatPointer) {
  EXPECT_EQ(ErrorOf(R"({"deployment": {"tensor_parallel_size": 0}})"),
            "s.json#/deployment/tensor_parallel_size: must be a positive integer, got 0");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpu_memory_utilization": 1.2}})"),
            "s.json#/deployment/gpu_memory_utilization: must be a number in (0, 1], got 1.2");
}

TEST(ScenarioKeysTest, UnknownKeysSuggestAKeyATypoAway) {
  // One edit per three characters at most: a swap, a change, a missing letter.
  EXPECT_EQ(ErrorOf(R"({"deployment": {"memory_fractoin": 0.9}})"),
            R"(s.json#/deployment/memory_fractoin: unknown key; did you mean "memory_fraction"?)");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpu_memory_utilisation": 0.9}})"),
            R"(s.json#/deployment/gpu_memory_utilisation: unknown key; did you mean )"
            R"("gpu_memory_utilization"?)");
  EXPECT_EQ(ErrorOf(R"({"sed": 3})"), R"(s.json#/sed: unknown key; did you mean "seed"?)");
  EXPECT_EQ(ErrorOf(R"({"engine": {"max_num_seq": 8}})"),
            R"(s.json#/engine/max_num_seq: unknown key; did you mean "max_num_seqs"?)");
  // Too far from every key: no guess. ("gpu_count" is 6 edits from "gpu".)
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpu_count": 8}})"),
            "s.json#/deployment/gpu_count: unknown key");
  EXPECT_EQ(ErrorOf(R"({"pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5",
                                     "cache": {"ttl": 1}}})"),
            "s.json#/pricing/cache/ttl: unknown key");
}

TEST(ScenarioKeysTest, MaxModelLenIsReadAndRangeChecked) {
  EXPECT_FALSE(Parse("{}").engine.max_model_len.has_value());
  EXPECT_EQ(Parse(R"({"engine": {"max_model_len": "32k"}})").engine.max_model_len, 32768);
  EXPECT_FALSE(Parse(R"({"engine": {"max_model_len": null}})").engine.max_model_len.has_value());
  EXPECT_EQ(ErrorOf(R"({"engine": {"max_model_len": 0}})"),
            "s.json#/engine/max_model_len: must be a positive integer, got 0");
  EXPECT_EQ(ErrorOf(R"({"engine": {"max_model_len": 1.5}})"),
            "s.json#/engine/max_model_len: must be a positive integer or a token count like "
            R"("32k", got 1.5)");
}

TEST(ScenarioKeysTest, SchemaAndNotesAreAcceptedAndIgnored) {
  const Scenario s = Parse(R"({"$schema": "../docs/scenario.schema.json",
                              "notes": ["from vllm serve", "no trace"]})");
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(ErrorOf(R"({"notes": 5})"),
            "s.json#/notes: must be a string or a list of strings, got 5");
}

// Each row is reachable and complete: the reader, docs and schema rely on it.
TEST(ScenarioKeysTest, EveryRowIsUnderASectionAndHasWhatItsTypeNeeds) {
  std::set<std::string> pointers;
  for (const Key& k : ScenarioKeys()) {
    SCOPED_TRACE(k.pointer);
    EXPECT_TRUE(pointers.insert(k.pointer).second) << "repeated";
    EXPECT_NE(std::string(k.meaning), "");
    const std::string parent = k.Parent();
    if (!parent.empty()) {
      const Key* section = scenario_keys::FindKey(parent);
      ASSERT_NE(section, nullptr);
      EXPECT_EQ(section->type, Type::kSection);
      // Sections come before their members (the reader's order).
      EXPECT_LT(section, &k);
    }
    if (k.type == Type::kChoice) {
      EXPECT_TRUE(!k.choices.empty() || k.choice_names != nullptr);
      EXPECT_NE(k.what, nullptr);
    }
    if (k.type == Type::kMap) {
      EXPECT_NE(k.entry, nullptr);
    }
    const bool stored = k.type != Type::kSection && k.type != Type::kMap && k.type != Type::kText &&
                        k.pointer != std::string("/$schema");
    if (stored) {
      EXPECT_NE(k.field.store, nullptr);
      // The docs show a default for every stored value.
      EXPECT_TRUE(k.default_text != nullptr || k.field.load != nullptr);
    }
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
