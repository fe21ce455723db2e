#include "kvbill/scenario/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/trace/generator.h"
#include "kvbill/trace/importers.h"
#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::string SourcePath(const std::string& relative) {
  return std::string(KVBILL_SOURCE_DIR) + "/" + relative;
}

Scenario Parse(const std::string& text, const std::string& source = "s.json") {
  auto s = ParseScenario(text, source);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  return s.ok() ? *s : Scenario{};
}

std::string ErrorOf(const std::string& text, const std::string& source = "s.json") {
  auto s = ParseScenario(text, source);
  if (s.ok()) return "(parsed)";
  EXPECT_EQ(s.error().exit_status(), Error::kInputExitStatus);
  return s.error().message();
}

// A fresh directory under the system temporary directory, removed at the end.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("kvbill-scenario-test-" +
             std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Write(const std::string& relative, const std::string& contents) const {
    const std::filesystem::path file = path_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << contents;
    return file.string();
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(ScenarioTest, BundledDefaultParsesFromFileAndEmbeddedCopy) {
  auto file = LoadScenario(SourcePath("scenarios/default.json"));
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(file->name, "default");
  EXPECT_EQ(file->model.name, "qwen3-8b");
  EXPECT_EQ(file->deployment.gpu, "h100-sxm");
  EXPECT_EQ(file->kv_format, "bf16");
  EXPECT_TRUE(file->prefix_cache.enabled);
  EXPECT_EQ(file->context_policy.kind, "keep_all");
  EXPECT_EQ(file->trace.generator, "coding-agent");
  EXPECT_EQ(file->trace.tasks, 20);
  EXPECT_TRUE(file->trace.file.empty());
  EXPECT_EQ(file->seed, 1u);

  auto text = EmbeddedFile("default.json");
  ASSERT_TRUE(text.has_value());
  auto embedded = ParseScenario(std::string(*text), "default.json");
  ASSERT_TRUE(embedded.ok()) << embedded.error().message();
  EXPECT_EQ(embedded->name, "default");
  EXPECT_EQ(embedded->trace.tasks, 20);
}

// Every bundled file is compiled in byte for byte, the kernel curves too
// (320 KiB: cut into literals of at most 60,000 characters at line ends by
// cmake/embed_files.cmake and joined again).
TEST(ScenarioTest, EmbeddedFilesEqualTheFilesOnDisk) {
  int long_files = 0;
  for (const EmbeddedFileEntry& e : EmbeddedFileTable()) {
    auto disk = ReadFile(SourcePath("scenarios/" + std::string(e.path)));
    ASSERT_TRUE(disk.ok()) << disk.error().message();
    EXPECT_EQ(*disk, e.contents) << e.path;
    if (e.contents.size() > 65536) ++long_files;
  }
  EXPECT_GE(long_files, 1);  // kernels/curves.json
}

TEST(ScenarioTest, ExamplesParse) {
  auto fp8 = LoadScenario(SourcePath("scenarios/examples/fp8-kv.json"));
  ASSERT_TRUE(fp8.ok()) << fp8.error().message();
  EXPECT_EQ(fp8->kv_format, "fp8");

  auto summarise = LoadScenario(SourcePath("scenarios/examples/summarise.json"));
  ASSERT_TRUE(summarise.ok()) << summarise.error().message();
  EXPECT_EQ(summarise->context_policy.kind, "summarise");
  EXPECT_EQ(summarise->context_policy.threshold_tokens, 65536);  // "64k"
  EXPECT_EQ(summarise->context_policy.summary_tokens, 2000);
  EXPECT_EQ(summarise->context_policy.keep_recent_tokens, 8192);  // "8k"

  auto mooncake = LoadScenario(SourcePath("scenarios/examples/mooncake-replay.json"));
  ASSERT_TRUE(mooncake.ok()) << mooncake.error().message();
  // "../../tests/data/traces/..." from scenarios/examples/, normalised.
  EXPECT_EQ(mooncake->trace.file, SourcePath("tests/data/traces/mooncake_small.jsonl"));
  EXPECT_TRUE(std::filesystem::is_regular_file(mooncake->trace.file));
  EXPECT_EQ(mooncake->trace.format, "mooncake");
  EXPECT_EQ(mooncake->trace.release, "recorded");
  EXPECT_EQ(mooncake->prefix_cache.block_size, 512);
  // The pool from memory, and Mooncake's host-memory store as the offload
  // tier: 3M tokens x 327,680 B (Llama-3.1-70B: 80 x 8 x 128 x 2 x 2) =
  // 960 GiB per replica.
  EXPECT_FALSE(mooncake->prefix_cache.capacity_tokens.has_value());
  EXPECT_EQ(mooncake->prefix_cache.offload_capacity_gib, 960);
}

TEST(ScenarioTest, AbsentSectionsTakeTheHeaderDefaults) {
  const Scenario s = Parse("{}", "dir/my-run.json");
  EXPECT_EQ(s.name, "my-run");  // the file stem
  EXPECT_EQ(s.source, "dir/my-run.json");
  EXPECT_EQ(s.model.name, "qwen3-8b");
  EXPECT_TRUE(s.model.set.empty());
  EXPECT_EQ(s.kv_format, "bf16");
  EXPECT_EQ(s.weight_format, "auto");
  EXPECT_EQ(s.deployment.gpu, "h100-sxm");
  EXPECT_EQ(s.deployment.gpus_per_replica, 1);
  EXPECT_EQ(s.deployment.replicas, 1);
  EXPECT_FALSE(s.deployment.memory_fraction.has_value());  // 0.9 on vLLM, SGLang its own
  // Absent: the engine's calibrated profile decides them (docs/engine.md).
  EXPECT_EQ(s.deployment.engine, "vllm");
  EXPECT_TRUE(s.deployment.profile.empty());
  EXPECT_FALSE(s.deployment.activation_reserve_gib.has_value());
  EXPECT_FALSE(s.deployment.usd_per_gpu_hour.has_value());
  EXPECT_FALSE(s.deployment.bandwidth_efficiency.has_value());
  EXPECT_FALSE(s.deployment.compute_efficiency.has_value());
  EXPECT_FALSE(s.deployment.iteration_overhead_s.has_value());
  // Absent: vLLM's defaults for the GPU (8192 / 1024 on an H100).
  EXPECT_FALSE(s.engine.max_num_batched_tokens.has_value());
  EXPECT_FALSE(s.engine.max_num_seqs.has_value());
  EXPECT_EQ(s.engine.router, "round_robin");
  EXPECT_EQ(s.engine.mode, "event");
  EXPECT_TRUE(s.prefix_cache.enabled);
  EXPECT_EQ(s.prefix_cache.block_size, 16);
  EXPECT_FALSE(s.prefix_cache.capacity_tokens.has_value());
  EXPECT_EQ(s.prefix_cache.pin_during_tool_s, 0);
  EXPECT_EQ(s.prefix_cache.offload_capacity_gib, 0);
  EXPECT_EQ(s.prefix_cache.offload_link_gb_s, 50);
  EXPECT_EQ(s.context_policy.kind, "keep_all");
  EXPECT_TRUE(s.trace.file.empty());
  EXPECT_TRUE(s.trace.generator.empty());
  EXPECT_EQ(s.trace.format, "auto");
  EXPECT_EQ(s.trace.release, "after_finish");
  EXPECT_EQ(s.seed, 1u);

  // Empty sections are the same as absent ones.
  const Scenario empty = Parse(
      R"({"deployment": {}, "engine": {}, "prefix_cache": {"offload": {}}, "context_policy": {}})");
  EXPECT_EQ(empty.deployment.gpu, "h100-sxm");
  EXPECT_FALSE(empty.engine.max_num_seqs.has_value());
  EXPECT_EQ(empty.prefix_cache.offload_link_gb_s, 50);
  EXPECT_EQ(empty.context_policy.kind, "keep_all");
}

TEST(ScenarioTest, ALinearStateModelParsesWithCachingOffOrUnderAnApiPrice) {
  EXPECT_FALSE(Parse(R"({"model": "jamba-1.5-mini", "prefix_cache": {"enabled": false}})")
                   .prefix_cache.enabled);
  EXPECT_TRUE(Parse(R"({"model": "jamba-1.5-mini",
                        "pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"}})")
                  .pricing.has_value());
}

TEST(ScenarioTest, FullScenarioReadsEveryValue) {
  const Scenario s = Parse(R"({
    "name": "everything",
    "model": {"name": "qwen3-32b", "set": {"num_key_value_heads": 64, "text_config.rope_theta": 1e6}},
    "kv_format": "int4-g128",
    "weight_format": "fp8",
    "deployment": {"gpu": "h200", "gpus_per_replica": 2, "replicas": 3, "memory_fraction": 0.85,
                   "activation_reserve_gib": 4.5, "usd_per_gpu_hour": 3.1,
                   "bandwidth_efficiency": 0.7, "compute_efficiency": 0.5,
                   "iteration_overhead_s": 0.002},
    "engine": {"max_num_batched_tokens": "16k", "max_num_seqs": 128, "router": "prefix_affinity",
               "mode": "step"},
    "prefix_cache": {"enabled": true, "block_size": 32, "capacity_tokens": 3000000,
                     "pin_during_tool_s": 12.5, "offload": {"capacity_gib": 256, "link_gb_s": 25}},
    "context_policy": {"kind": "sinks_recent", "sink_tokens": 4096, "recent_tokens": "32k"},
    "trace": {"file": "traces/x.jsonl", "format": "claude-code", "release": "recorded"},
    "seed": 18446744073709551615
  })",
                           "runs/full.json");
  EXPECT_EQ(s.name, "everything");
  EXPECT_EQ(s.model.name, "qwen3-32b");
  ASSERT_EQ(s.model.set.size(), 2u);
  EXPECT_EQ(s.model.set.at("num_key_value_heads"), "64");
  EXPECT_EQ(s.model.set.at("text_config.rope_theta"), "1000000.0");
  EXPECT_EQ(s.kv_format, "int4-g128");
  EXPECT_EQ(s.weight_format, "fp8");
  EXPECT_EQ(s.deployment.gpu, "h200");
  EXPECT_EQ(s.deployment.gpus_per_replica, 2);
  EXPECT_EQ(s.deployment.replicas, 3);
  EXPECT_EQ(s.deployment.memory_fraction, 0.85);
  EXPECT_EQ(s.deployment.activation_reserve_gib, 4.5);
  EXPECT_EQ(s.deployment.usd_per_gpu_hour, 3.1);
  EXPECT_EQ(s.deployment.bandwidth_efficiency, 0.7);
  EXPECT_EQ(s.deployment.compute_efficiency, 0.5);
  EXPECT_EQ(s.deployment.iteration_overhead_s, 0.002);
  EXPECT_EQ(s.engine.max_num_batched_tokens, 16384);
  EXPECT_EQ(s.engine.max_num_seqs, 128);
  EXPECT_EQ(s.engine.router, "prefix_affinity");
  EXPECT_EQ(s.engine.mode, "step");
  EXPECT_TRUE(s.prefix_cache.enabled);  // false with an offload tier is refused (below)
  EXPECT_EQ(s.prefix_cache.block_size, 32);
  EXPECT_EQ(s.prefix_cache.capacity_tokens, 3000000);
  EXPECT_EQ(s.prefix_cache.pin_during_tool_s, 12.5);
  EXPECT_EQ(s.prefix_cache.offload_capacity_gib, 256);
  EXPECT_EQ(s.prefix_cache.offload_link_gb_s, 25);
  EXPECT_EQ(s.context_policy.kind, "sinks_recent");
  EXPECT_EQ(s.context_policy.sink_tokens, 4096);
  EXPECT_EQ(s.context_policy.recent_tokens, 32768);
  EXPECT_EQ(s.trace.file, "runs/traces/x.jsonl");
  EXPECT_EQ(s.trace.format, "claude-code");
  EXPECT_EQ(s.trace.release, "recorded");
  EXPECT_EQ(s.seed, 18446744073709551615u);
}

TEST(ScenarioTest, DocumentedFullExampleParses) {
  auto doc = ReadFile(SourcePath("docs/scenario-format.md"));
  ASSERT_TRUE(doc.ok()) << doc.error().message();
  const std::size_t section = doc->find("## Full example");
  ASSERT_NE(section, std::string::npos);
  const std::size_t start = doc->find("```json\n", section) + 8;
  const std::size_t end = doc->find("\n```", start);
  const Scenario s = Parse(doc->substr(start, end - start), "docs/example.json");
  EXPECT_EQ(s.name, "everything");
  EXPECT_EQ(s.prefix_cache.capacity_tokens, ScenarioPrefixCache::kUnlimited);
  EXPECT_EQ(s.context_policy.threshold_tokens, 98304);  // "96k"
  EXPECT_EQ(s.trace.file, "docs/traces/agents.jsonl");
  EXPECT_EQ(s.seed, 7u);
}

TEST(ScenarioTest, EveryContextPolicyReadsItsParameters) {
  const ContextPolicyParams window =
      Parse(R"({"context_policy": {"kind": "sliding_window", "window_tokens": 32768}})")
          .context_policy;
  EXPECT_EQ(window.kind, "sliding_window");
  EXPECT_EQ(window.window_tokens, 32768);

  const ContextPolicyParams drop =
      Parse(R"({"context_policy": {"kind": "drop_tool_results", "older_than_turns": 3,
                                   "stub_tokens": 0}})")
          .context_policy;
  EXPECT_EQ(drop.kind, "drop_tool_results");
  EXPECT_EQ(drop.older_than_turns, 3);
  EXPECT_EQ(drop.stub_tokens, 0);  // a stub may be empty

  const ContextPolicyParams summarise =
      Parse(R"({"context_policy": {"kind": "summarise", "threshold_tokens": 100000,
                                   "summary_tokens": 2000, "keep_recent_tokens": 8000}})")
          .context_policy;
  EXPECT_EQ(summarise.threshold_tokens, 100000);
  EXPECT_EQ(summarise.summary_tokens, 2000);
  EXPECT_EQ(summarise.keep_recent_tokens, 8000);

  const ContextPolicyParams sinks =
      Parse(R"({"context_policy": {"kind": "sinks_recent", "sink_tokens": 0,
                                   "recent_tokens": "4k"}})")
          .context_policy;
  EXPECT_EQ(sinks.kind, "sinks_recent");
  EXPECT_EQ(sinks.sink_tokens, 0);  // no sinks: a plain recent window
  EXPECT_EQ(sinks.recent_tokens, 4096);
}

TEST(ScenarioTest, TokenCountsAcceptIntegersAndSuffixedStrings) {
  // k = 2^10, M = 2^20; a decimal mantissa is allowed when the count is whole.
  const Scenario s = Parse(R"({"engine": {"max_num_batched_tokens": "1.5k"},
                              "prefix_cache": {"block_size": "1k", "capacity_tokens": "1M"},
                              "context_policy": {"kind": "sliding_window", "window_tokens": "32k"}})");
  EXPECT_EQ(s.engine.max_num_batched_tokens, 1536);
  EXPECT_EQ(s.prefix_cache.block_size, 1024);
  EXPECT_EQ(s.prefix_cache.capacity_tokens, 1048576);
  EXPECT_EQ(s.context_policy.window_tokens, 32768);
}

// A number with no fractional part is an integer, as the scenario schema's
// JSON Schema "integer" accepts it: 2.0 is 2, 1e3 is 1,000; 1.5 stays an
// error, and the bounds still apply (trace.tasks at most 1,000,000).
TEST(ScenarioTest, WholeNumbersWrittenAsFloatsAreIntegers) {
  const Scenario s = Parse(R"({"seed": 7.0, "deployment": {"replicas": 2.0},
                              "trace": {"generator": "chat", "tasks": 1e3}})");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.deployment.replicas, 2);
  EXPECT_EQ(s.trace.tasks, 1000);
  EXPECT_EQ(ErrorOf(R"({"trace": {"generator": "chat", "tasks": 1e9}})"),
            "s.json#/trace/tasks: must be at most 1000000, got 1000000000.0");
  EXPECT_EQ(ErrorOf(R"({"seed": 1.5})"), "s.json#/seed: must be a non-negative integer, got 1.5");
}

TEST(ScenarioTest, CacheCapacityIsPoolSizedUnlimitedOrACount) {
  EXPECT_FALSE(Parse(R"({"prefix_cache": {"capacity_tokens": null}})")
                   .prefix_cache.capacity_tokens.has_value());
  EXPECT_EQ(
      Parse(R"({"prefix_cache": {"capacity_tokens": "unlimited"}})").prefix_cache.capacity_tokens,
      ScenarioPrefixCache::kUnlimited);
  EXPECT_EQ(
      Parse(R"({"prefix_cache": {"capacity_tokens": 50000000}})").prefix_cache.capacity_tokens,
      50000000);
}

TEST(ScenarioTest, PathsResolveAgainstTheScenarioDirectory) {
  TempDir dir;
  const std::string gpu = R"({"id": "my-gpu", "memory_gb": 80, "hbm_bandwidth_tb_s": 3.35,
                              "dense_tflops": {"bf16": 989}, "usd_per_gpu_hour": 2})";
  dir.Write("hw/my-gpu.json", gpu);
  std::string config;
  for (const CatalogModel& m : ModelCatalog()) {
    if (m.name == "qwen3-8b") config = std::string(m.config);
  }
  dir.Write("configs/my-model/config.json", config);
  const std::string path = dir.Write("runs/s.json", R"({
    "model": "../configs/my-model/config.json",
    "deployment": {"gpu": "../hw/my-gpu.json"},
    "trace": {"file": "../traces/t.jsonl"}
  })");

  auto s = LoadScenario(path);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->model.name, (dir.path() / "configs/my-model/config.json").string());
  EXPECT_EQ(s->deployment.gpu, (dir.path() / "hw/my-gpu.json").string());
  // The trace file need not exist yet: it is opened when the simulation runs.
  EXPECT_EQ(s->trace.file, (dir.path() / "traces/t.jsonl").string());

  // Absolute paths stay as they are; catalog names win over files.
  const Scenario absolute =
      Parse(R"({"deployment": {"gpu": ")" + (dir.path() / "hw/my-gpu.json").string() + R"("}})");
  EXPECT_EQ(absolute.deployment.gpu, (dir.path() / "hw/my-gpu.json").string());
  // A scenario in the working directory keeps relative paths as written.
  EXPECT_EQ(Parse(R"({"trace": {"file": "./t.jsonl"}})").trace.file, "t.jsonl");
}

TEST(ScenarioTest, ReadsPricing) {
  const Scenario s = Parse(
      R"({"pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5-20250929",
                      "cache": {"ttl_s": 3600, "min_cacheable_tokens": 2048, "warm_start": "none"}}})");
  ASSERT_TRUE(s.pricing.has_value());
  EXPECT_EQ(s.pricing->provider, "anthropic");
  EXPECT_EQ(s.pricing->model, "claude-sonnet-4-5-20250929");
  EXPECT_EQ(s.pricing->ttl_s, 3600);
  EXPECT_EQ(s.pricing->min_cacheable_tokens, 2048);
  EXPECT_FALSE(s.pricing->warm_start_from_recorded);
  EXPECT_FALSE(Parse("{}").pricing.has_value());
}

TEST(ScenarioTest, LoadScenarioNamesAMissingFile) {
  auto s = LoadScenario("/nonexistent/kvbill/s.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(), "/nonexistent/kvbill/s.json: file not found")
      << s.error().message();
}

struct ErrorCase {
  const char* json;
  const char* message;
};

// Each error class, with the exact text the user sees.
TEST(ScenarioTest, InvalidScenariosNameTheJsonPointer) {
  const ErrorCase kCases[] = {
      // Unknown keys, at the top and in a section.
      {R"({"prices": {}})", "s.json#/prices: unknown key"},
      // "pricing": required keys, choices, the price sheet, the provider's rules.
      {R"({"pricing": {}})", "s.json#/pricing/provider: missing"},
      {R"({"pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5", "cache": {"ttl": 1}}})",
       "s.json#/pricing/cache/ttl: unknown key"},
      {R"({"pricing": {"provider": "mistral", "model": "claude-sonnet-4-5"}})",
       R"(s.json#/pricing/provider: unknown provider "mistral" (one of anthropic|openai|deepseek|gemini))"},
      {R"({"pricing": {"provider": "gemini", "model": "gemini-2.5-pro", "cache": {"mode": "explicit", "prefix_tokens": 100}}})",
       "s.json#/pricing/cache: gemini: prefix_tokens 100 is below the model's minimum of 2048"},
      {R"({"pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5", "cache": {"write_fee": true}}})",
       "s.json#/pricing/cache: anthropic: write_fee is an openai option"},
      {R"({"pricing": {"provider": "gemini", "model": "gemini-2.5-pro", "cache": {"prefix_tokens": "first"}}})",
       R"(s.json#/pricing/cache/prefix_tokens: bad token count "first" (expected e.g. 8192, 32k or 1M))"},
      {R"({"pricing": {"provider": "anthropic", "model": "nope"}})",
       R"(s.json#/pricing/model: no price for model "nope" in the bundled price sheet)"},
      // A format only a checkpoint declares is not one to convert to.
      {R"({"weight_format": "w8a8-int8"})",
       R"(s.json#/weight_format: "w8a8-int8" is a checkpoint's format, which kvbill reads from its quantization_config (give that checkpoint's config.json as the model, weight_format "auto"), not one it converts a model's weights to; weight_format converts to: bf16, fp16, fp32, fp8, fp8-e4m3, fp8-e5m2, fp8-per-token-head, nvfp4, mxfp4, int4, int2, int4-gN, int2-gN)"},
      // A model under another provider's rules (it once cached nothing).
      {R"({"pricing": {"provider": "gemini", "model": "claude-sonnet-4-5"}})",
       R"(s.json#/pricing/provider: is "gemini", but the price sheet lists claude-sonnet-4-5 under "anthropic": a model's calls follow its own provider's caching rules (set provider "anthropic", or a gemini model))"},
      {R"({"pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5", "cache": {"ttl_s": 60}}})",
       "s.json#/pricing/cache: anthropic: ttl_s must be 300 or 3600, got 60"},
      // The value as given, not rounded to "300".
      {R"({"pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5", "cache": {"ttl_s": 300.0000001}}})",
       "s.json#/pricing/cache: anthropic: ttl_s must be 300 or 3600, got 300.0000001"},
      {R"({"deployment": {"gpu_count": 8}})", "s.json#/deployment/gpu_count: unknown key"},
      {R"({"prefix_cache": {"offload": {"capacity": 1}}})",
       "s.json#/prefix_cache/offload/capacity: unknown key"},
      // Wrong types.
      {R"([1, 2])", "s.json#: must be an object, got [1,2]"},
      {R"({"deployment": 4})", "s.json#/deployment: must be an object, got 4"},
      {R"({"prefix_cache": {"enabled": "yes"}})",
       R"(s.json#/prefix_cache/enabled: must be true or false, got "yes")"},
      {R"({"deployment": {"replicas": 1.5}})",
       "s.json#/deployment/replicas: must be a positive integer, got 1.5"},
      {R"({"model": 7})",
       R"(s.json#/model: must be a model name or {"name": ..., "set": {...}}, got 7)"},
      {R"({"seed": -1})", "s.json#/seed: must be a non-negative integer, got -1"},
      // 2^64, one past the largest seed: the JSON reader holds it as a double.
      {R"({"seed": 18446744073709551616})",
       "s.json#/seed: must be at most 18446744073709551615 (2^64 - 1), got 1.8446744073709552e+19"},
      // Zero or negative where positive is required.
      {R"({"deployment": {"gpus_per_replica": 0}})",
       "s.json#/deployment/gpus_per_replica: must be a positive integer, got 0"},
      {R"({"prefix_cache": {"capacity_tokens": -5}})",
       "s.json#/prefix_cache/capacity_tokens: must be a positive integer, got -5"},
      {R"({"prefix_cache": {"capacity_tokens": true}})",
       "s.json#/prefix_cache/capacity_tokens: must be a positive integer, a token count like "
       R"("3M", "unlimited" or null, got true)"},
      {R"({"deployment": {"usd_per_gpu_hour": 0}})",
       "s.json#/deployment/usd_per_gpu_hour: must be a positive number, got 0"},
      {R"({"deployment": {"activation_reserve_gib": -1}})",
       "s.json#/deployment/activation_reserve_gib: must be a non-negative number, got -1"},
      {R"({"prefix_cache": {"offload": {"link_gb_s": 0}}})",
       "s.json#/prefix_cache/offload/link_gb_s: must be a positive number, got 0"},
      // Fractions and efficiencies in (0, 1].
      {R"({"deployment": {"memory_fraction": 1.5}})",
       "s.json#/deployment/memory_fraction: must be a number in (0, 1], got 1.5"},
      {R"({"deployment": {"bandwidth_efficiency": 0}})",
       "s.json#/deployment/bandwidth_efficiency: must be a number in (0, 1], got 0"},
      // Documented bounds stop absurd values before any work.
      {R"({"deployment": {"usd_per_gpu_hour": 1e300}})",
       "s.json#/deployment/usd_per_gpu_hour: must be at most 1e+06 (docs/scenario-format.md), "
       "got 1e+300"},
      {R"({"deployment": {"iteration_overhead_s": 61}})",
       "s.json#/deployment/iteration_overhead_s: must be at most 60 (docs/scenario-format.md), "
       "got 61"},
      {R"({"deployment": {"compute_efficiency": 1e-300}})",
       "s.json#/deployment/compute_efficiency: must be at least 0.01 (docs/scenario-format.md), "
       "got 1e-300"},
      {R"({"prefix_cache": {"offload": {"link_gb_s": 1e-300}}})",
       "s.json#/prefix_cache/offload/link_gb_s: must be in [0.001, 1e+06] "
       "(docs/scenario-format.md), got 1e-300"},
      // Enumerations list what is allowed.
      {R"({"engine": {"router": "random"}})",
       R"(s.json#/engine/router: unknown router "random" (one of round_robin|prefix_affinity|)"
       R"(least_loaded|session_affinity))"},
      {R"({"engine": {"mode": 1}})", "s.json#/engine/mode: must be one of event|step, got 1"},
      {R"({"trace": {"generator": "coding-agent", "tasks": 5, "release": "now"}})",
       R"(s.json#/trace/release: unknown release "now" (one of after_finish|recorded))"},
      // Token counts.
      {R"({"engine": {"max_num_batched_tokens": "8q"}})",
       R"(s.json#/engine/max_num_batched_tokens: bad token count "8q" (expected e.g. 8192, 32k or 1M))"},
      {R"({"engine": {"max_num_batched_tokens": false}})",
       "s.json#/engine/max_num_batched_tokens: must be a positive integer or a token count like "
       R"("32k", got false)"},
      // Jamba's Mamba layers keep a state a block prefix cache cannot reuse;
      // caching is on by default, and an API scenario has no engine.
      {R"({"model": "jamba-1.5-mini"})",
       R"(s.json#/prefix_cache/enabled: model "jamba-1.5-mini" has constant-state (SSM / linear )"
       "attention / short convolution) layers, whose state a block prefix cache cannot reuse: "
       "set it to false"},
      // The host tier holds blocks the cache evicts: none with caching off;
      // and it is not modelled for sliding-window layers (Gemma-2).
      {R"({"prefix_cache": {"enabled": false, "offload": {"capacity_gib": 10}}})",
       "s.json#/prefix_cache/offload: holds the blocks the prefix cache evicts, and "
       "prefix_cache.enabled is false: nothing would reach it; turn the cache on or drop the "
       "tier"},
      // A pin keeps cached blocks for the task's next request: none would
      // hit them with caching off.
      {R"({"prefix_cache": {"enabled": false, "pin_during_tool_s": 20}})",
       "s.json#/prefix_cache/pin_during_tool_s: keeps a task's cached blocks for its next "
       "request, and prefix_cache.enabled is false: nothing would hit them; turn the cache on or "
       "set it to 0"},
      {R"({"model": "gemma-2-9b", "prefix_cache": {"offload": {"capacity_gib": 10}}})",
       "s.json#/prefix_cache/offload: the host offload tier is not modelled for models with "
       R"(sliding-window, chunked or compressed attention layers, as "gemma-2-9b" has)"},
      // Context policies.
      {R"({"context_policy": {"kind": "forget_everything"}})",
       R"(s.json#/context_policy/kind: unknown context policy "forget_everything" (one of )"
       "keep_all|sliding_window|drop_tool_results|summarise|sinks_recent)"},
      {R"({"context_policy": {"kind": "sliding_window", "window_tokens": 0}})",
       "s.json#/context_policy/window_tokens: must be a positive integer, got 0"},
      {R"({"context_policy": {"kind": "sliding_window"}})",
       "s.json#/context_policy/window_tokens: missing (required by sliding_window)"},
      {R"({"context_policy": {"kind": "sliding_window", "window_tokens": 8, "recent_tokens": 8}})",
       "s.json#/context_policy/recent_tokens: not a parameter of sliding_window "
       "(its parameters: window_tokens)"},
      {R"({"context_policy": {"window_tokens": 8}})",
       "s.json#/context_policy/window_tokens: not a parameter of keep_all (it has none)"},
      {R"({"context_policy": {"kind": "keep_all", "window": 8}})",
       "s.json#/context_policy/window: unknown key"},
      {R"({"context_policy": {"kind": "drop_tool_results", "older_than_turns": "3",
                              "stub_tokens": 50}})",
       R"(s.json#/context_policy/older_than_turns: must be a non-negative integer, got "3")"},
      {R"({"context_policy": {"kind": "drop_tool_results", "older_than_turns": 3,
                              "stub_tokens": -1}})",
       "s.json#/context_policy/stub_tokens: must be a non-negative integer, got -1"},
      {R"({"context_policy": {"kind": "summarise", "threshold_tokens": 8000,
                              "summary_tokens": 2000, "keep_recent_tokens": 6000}})",
       "s.json#/context_policy: summary_tokens + keep_recent_tokens (8000) must be below "
       "threshold_tokens (8000)"},
      // The trace block.
      {R"({"trace": {"file": "t.jsonl", "generator": "chat"}})",
       R"(s.json#/trace: has both "file" and "generator" (give one))"},
      {R"({"trace": {"format": "mooncake"}})", R"(s.json#/trace: needs "file" or "generator")"},
      {R"({"trace": {"generator": "chat"}})",
       "s.json#/trace/tasks: missing (the number of tasks to generate)"},
      {R"({"trace": {"file": "t.jsonl", "tasks": 3}})",
       R"(s.json#/trace/tasks: only with "generator")"},
      {R"({"trace": {"generator": "chat", "tasks": 3, "format": "native"}})",
       R"(s.json#/trace/format: only with "file")"},
      // Model overrides: keys are escaped in the pointer.
      {R"({"model": {"name": "qwen3-8b", "set": {"rope/scaling.factor": 2}}})",
       "s.json#/model/set/rope~1scaling.factor: expected a top-level key of the text config"},
      // Syntax errors give line and column; repeated keys their pointer.
      {"{\n  \"seed\": 1,\n  \"name\": }",
       "s.json:3:11: not valid JSON: syntax error while parsing value - unexpected '}'; "
       "expected '[', '{', or a literal"},
      {R"({"engine": {"max_num_seqs": 8, "max_num_seqs": 16}})",
       "s.json#/engine/max_num_seqs: repeated key"},
  };
  for (const ErrorCase& c : kCases) {
    SCOPED_TRACE(c.json);
    EXPECT_EQ(ErrorOf(c.json), c.message);
  }
}

TEST(ScenarioTest, CatalogErrorsCarryTheLoadersMessage) {
  // The format and model loaders own their lists; the scenario prefixes the pointer.
  // Lists owned by other components are spelled the way they spell them.
  EXPECT_EQ(ErrorOf(R"({"trace": {"file": "t.jsonl", "format": "parquet"}})"),
            "s.json#/trace/format: unknown trace format \"parquet\" (one of auto|" +
                TraceFormatChoices() + ")");
  EXPECT_EQ(ErrorOf(R"({"trace": {"generator": "web-agent", "tasks": 3}})"),
            "s.json#/trace/generator: unknown preset \"web-agent\" (one of " +
                GeneratorPresetChoices() + ")");
  // A name the list holds more of is suggested, as keys are.
  EXPECT_EQ(ErrorOf(R"({"trace": {"generator": "coding", "tasks": 3}})"),
            "s.json#/trace/generator: unknown preset \"coding\"; did you mean coding-agent? (one "
            "of " +
                GeneratorPresetChoices() + ")");
  EXPECT_EQ(ErrorOf(R"({"budgets": {"hitrate": {"min": 0.5}}})"),
            "s.json#/budgets/hitrate: unknown metric; did you mean hit_rate? (one of " +
                BudgetMetricChoices() + ")");
  // A warning code: the codes listed, the near one suggested.
  const std::string overload = ErrorOf(R"({"budgets": {"warnings.overload": {"max": 0}}})");
  EXPECT_EQ(overload.rfind("s.json#/budgets/warnings.overload: unknown warning code \"overload\"; "
                           "did you mean warnings.overloaded? (warnings.<code>, the codes: ",
                           0),
            0u)
      << overload;
  EXPECT_NE(overload.find(", overloaded, "), std::string::npos) << overload;
  std::string gpus;
  for (const GpuSpec& g : GpuCatalog()) gpus += (gpus.empty() ? "" : ", ") + g.id;
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpu": "h900"}})"),
            "s.json#/deployment/gpu: unknown GPU \"h900\"; did you mean h200 or h100? (catalog: " +
                gpus + "; or a path to a GPU JSON file)");
  // The names the command line takes: aliases, nvidia-smi's, any case, a
  // bundled model's repo id.
  for (const char* gpu : {"h100", "NVIDIA H100 80GB HBM3", "H100-SXM"}) {
    auto s = ParseScenario(std::string(R"({"deployment": {"gpu": ")") + gpu + R"("}})", "s.json");
    ASSERT_TRUE(s.ok()) << gpu << ": " << s.error().message();
    EXPECT_EQ(s->deployment.gpu, "h100-sxm") << gpu;
  }
  for (const char* model : {"Qwen/Qwen3-8B", "QWEN3-8B", "Qwen3-8B"}) {
    auto s = ParseScenario(std::string(R"({"model": ")") + model + R"("})", "s.json");
    ASSERT_TRUE(s.ok()) << model << ": " << s.error().message();
    EXPECT_EQ(s->model.name, "qwen3-8b") << model;
  }
  EXPECT_EQ(ErrorOf(R"({"kv_format": "fp7"})"),
            "s.json#/kv_format: " + ParseElementFormat("fp7").error().message());
  EXPECT_EQ(
      ErrorOf(R"({"weight_format": "fp7"})"),
      "s.json#/weight_format: " + ParseElementFormat("fp7").error().message() + "; or \"auto\"");
  std::string names;
  for (const CatalogModel& m : ModelCatalog()) names += (names.empty() ? "" : ", ") + m.name;
  EXPECT_EQ(ErrorOf(R"({"model": "qwen9"})"), "s.json#/model: unknown model \"qwen9\" (catalog: " +
                                                  names + "; or a path to a config.json)");
  EXPECT_EQ(ErrorOf(R"({"model": {"name": "qwen9"}})"),
            "s.json#/model/name: unknown model \"qwen9\" (catalog: " + names +
                "; or a path to a config.json)");
  // A config.json that is not there is said to be missing, not unknown.
  EXPECT_EQ(ErrorOf(R"({"model": "no-such-dir/config.json"})"),
            "s.json#/model: no such file \"no-such-dir/config.json\" (a model's config.json)");
  // An override that breaks a model that loads without it is blamed on "set".
  EXPECT_EQ(ErrorOf(R"({"model": {"name": "qwen3-8b", "set": {"num_key_value_heads": -8}}})"),
            "s.json#/model/set: " +
                LoadModel("qwen3-8b", {{"num_key_value_heads", "-8"}}).error().message());
}

TEST(ScenarioTest, ABrokenModelOrGpuFileIsReportedUnderItsPointer) {
  TempDir dir;
  dir.Write("bad-config.json", R"({"hidden_size": 4096})");
  dir.Write("bad-gpu.json", R"({"id": "x", "memory_gb": 80})");
  const std::string model_path = (dir.path() / "bad-config.json").string();
  const std::string gpu_path = (dir.path() / "bad-gpu.json").string();
  const std::string source = (dir.path() / "s.json").string();
  EXPECT_EQ(ErrorOf(R"({"model": "bad-config.json"})", source),
            source + "#/model: " + LoadModel(model_path).error().message());
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpu": "bad-gpu.json"}})", source),
            source + "#/deployment/gpu: " + gpu_path + "#/hbm_bandwidth_tb_s: missing");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
