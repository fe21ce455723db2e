// Every config of tests/data/configs/ through `kv`, `fit` and `simulate`
// end to end: the real binary on the real file, a tiny trace
// (tests/data/traces/native_small.jsonl, two tasks) for simulate.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

const std::string kDir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/";

std::vector<std::string> ConfigFiles() {
  std::ifstream in(kDir + "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  std::vector<std::string> out;
  for (const auto& c : manifest["configs"]) out.push_back(c["file"].get<std::string>());
  return out;
}

class RealConfigCliTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RealConfigCliTest, GoesThroughKvFitAndSimulate) {
  const std::string config = kDir + GetParam();

  const auto kv = RunKvbill("kv --model '" + config + "' --layers --format json");
  ASSERT_EQ(kv.exit_status, 0) << kv.err;
  const auto k = nlohmann::json::parse(kv.out);
  int entries = 0;
  for (const auto& [kind, n] : k["layers"].items()) entries += n.get<int>();
  EXPECT_EQ(k["inventory"].size(), static_cast<std::size_t>(entries));
  double per_token = 0;
  for (const auto& e : k["inventory"]) per_token += e["bytes_per_token"].get<double>();
  EXPECT_EQ(per_token, k["bytes_per_token"].get<double>());
  EXPECT_GT(k["parameters"]["total"].get<double>(), 0);

  const auto fit = RunKvbill("fit --model '" + config + "' --gpu b200 --context 8k --format json");
  ASSERT_EQ(fit.exit_status, 0) << fit.err;
  const auto f = nlohmann::json::parse(fit.out);
  EXPECT_GT(f["weights_bytes"].get<double>(), 0);

  // A pool of 65,536 tokens on one GPU, whatever the weights: the run
  // exercises the engine on the model's layer inventory.
  const std::string scenario = ::testing::TempDir() + "real_config_" + GetParam();
  {
    std::ofstream s(scenario);
    s << nlohmann::json{
        {"name", "e2e"},
        {"model", config},
        {"deployment", {{"gpu", "h100-sxm"}, {"gpus_per_replica", 1}}},
        {"prefix_cache", {{"enabled", false}, {"capacity_tokens", 65536}}},
        {"trace",
         {{"file", std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/native_small.jsonl"}}},
        {"seed",
         1}}.dump();
  }
  const auto sim = RunKvbill("simulate -s '" + scenario + "' --format json");
  ASSERT_EQ(sim.exit_status, 0) << sim.err;
  const auto j = nlohmann::json::parse(sim.out);
  EXPECT_EQ(j["tasks"].size(), 2u);
  EXPECT_GT(j["summary"]["prompt_tokens"].get<double>(), 0);
  std::filesystem::remove(scenario);
}

INSTANTIATE_TEST_SUITE_P(Manifest, RealConfigCliTest, ::testing::ValuesIn(ConfigFiles()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string name = p.param.substr(0, p.param.size() - 5);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// DeepSeek-V4 without --kv-format / --block-size: vLLM's fp8 cache in
// 256-token blocks; the summary's bits per element are its 584-byte entry
// over 512 elements (9.125).
TEST(RealConfigCliTest, DeepSeekV4DefaultsToVllmsFp8CacheAnd256TokenBlocks) {
  const std::string v4 = kDir + "deepseek-v4-flash.json";
  const auto json = RunKvbill("kv --model '" + v4 + "' --context 8k --format json");
  ASSERT_EQ(json.exit_status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["kv_format"], "fp8-e4m3");
  EXPECT_EQ(j["block_size"], 256);
  EXPECT_EQ(j["bytes_per_token"].get<double>(), 3850.25);
  const auto table = RunKvbill("kv --model '" + v4 + "' --context 8k");
  ASSERT_EQ(table.exit_status, 0) << table.err;
  EXPECT_NE(table.out.find("fp8-e4m3 (9.125 bits/element incl. scales)"), std::string::npos)
      << table.out;
  // Asked for, bf16 stays available as arithmetic.
  const auto bf16 = RunKvbill("kv --model '" + v4 + "' --kv-format bf16 --format json");
  ASSERT_EQ(bf16.exit_status, 0) << bf16.err;
  EXPECT_EQ(nlohmann::json::parse(bf16.out)["bytes_per_token"].get<double>(), 6229.0);
}

// fit pages DeepSeek-V3 as vLLM does on the GPU asked for (kv_blocks.h):
// FlashMLA's 64-token blocks on H200s, Triton MLA's 16 on A100s, SGLang
// kept at 16; --block-size, when given, stays.
TEST(RealConfigCliTest, FitTakesTheMlaBackendsBlockSize) {
  const std::string v3 = kDir + "deepseek-v3.json";
  auto block = [&](const std::string& flags) {
    const auto r =
        RunKvbill("fit --model '" + v3 + "' --gpus 8 --context 32k --format json " + flags);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    return r.exit_status == 0 ? nlohmann::json::parse(r.out)["block_size"].get<int>() : -1;
  };
  EXPECT_EQ(block("--gpu h200"), 64);
  EXPECT_EQ(block("--gpu b200"), 64);
  EXPECT_EQ(block("--gpu a100-80gb"), 16);
  EXPECT_EQ(block("--gpu h200 --engine sglang"), 16);
  EXPECT_EQ(block("--gpu b200 --engine sglang"), 64);
  EXPECT_EQ(block("--gpu h200 --block-size 16"), 16);
  // The table names the block the KV is rounded to.
  const auto text = RunKvbill("fit --model '" + v3 + "' --gpus 8 --context 32k --gpu h200");
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find("KV (64-token blocks)"), std::string::npos) << text.out;
  // simulate says the block size it ran (summary.kv_block_tokens); the
  // bundled default (Qwen3-8B on an H100) keeps vLLM's 16.
  const std::string dir = ::testing::TempDir();
  const std::string scenario = dir + "/r1.json";
  {
    std::ofstream out(scenario);
    out << R"({"model": ")" << v3 << R"(", "deployment": {"gpu": "h200", "gpus_per_replica": 8},
              "trace": {"generator": "coding-agent", "tasks": 1}})";
  }
  const auto r1 = RunKvbill("simulate --scenario '" + scenario + "' --format json");
  ASSERT_EQ(r1.exit_status, 0) << r1.err;
  EXPECT_EQ(nlohmann::json::parse(r1.out)["summary"]["kv_block_tokens"], 64);
  const auto plain = RunKvbill("simulate --format json");
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  EXPECT_EQ(nlohmann::json::parse(plain.out)["summary"]["kv_block_tokens"], 16);
}

// The table with each run of spaces collapsed to one.
std::string Collapsed(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  return out;
}

// `kv --layers` as a table: one row per inventory entry, no-op layers named.
TEST(KvLayersCliTest, TablePrintsTheInventory) {
  const auto r = RunKvbill("kv --model '" + kDir + "nemotron-3-nano-30b-a3b.json' --layers");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string table = Collapsed(r.out);
  EXPECT_NE(table.find("layer kind KV heads K dim V dim latent indexer window bytes/token state "
                       "bytes\n"),
            std::string::npos)
      << r.out;
  // Layer 0 is Mamba-2: conv (4 - 1) x (64 x 64 + 2 x 8 x 128) x 2 bytes =
  // 36,864 plus SSM 64 x 64 x 128 x 4 bytes = 2,097,152: 2,134,016.
  EXPECT_NE(table.find("\n0 mamba - - - - - - 0 2134016\n"), std::string::npos) << r.out;
  EXPECT_NE(table.find("\n1 none - - - - - - 0 0\n"), std::string::npos) << r.out;
  // Layer 5 is attention: 2 KV heads of 128 + 128 in bf16: 1,024 bytes a token.
  EXPECT_NE(table.find("\n5 full 2 128 128 - - - 1024 0\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
