#include "kvbill/hardware/kv_blocks.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

ModelShape Config(const std::string& file) {
  return Catalog(std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/" + file);
}

VllmKvBlocks Rule(const ModelShape& model, const std::string& gpu_id) {
  auto gpu = LookupGpu(gpu_id);
  EXPECT_TRUE(gpu.ok()) << gpu_id;
  return gpu.ok() ? VllmKvBlockRule(model, *gpu) : VllmKvBlocks{};
}

// vllm/platforms/cuda.py forces FlashMLA's 64-token blocks for MLA on Hopper
// ("Forcing kv cache block size to 64 for FlashMLA backend"): a block size
// that is a multiple of 64 stays, any other becomes 64.
TEST(KvBlocksTest, MlaOnHopperRunsFlashMlasSixtyFourTokenBlocks) {
  const ModelShape v3 = Config("deepseek-v3.json");
  for (const char* gpu : {"h100-sxm", "h200"}) {
    const VllmKvBlocks r = Rule(v3, gpu);
    EXPECT_EQ(r.size, 64) << gpu;
    EXPECT_EQ(r.backend, "FlashMLA (Hopper)");
    EXPECT_TRUE(r.Keeps(64));
    EXPECT_TRUE(r.Keeps(128));
    EXPECT_FALSE(r.Keeps(16));
    EXPECT_FALSE(r.Keeps(32));
    EXPECT_FALSE(r.Keeps(96));
  }
  // FlashMLA's dense kernels are Hopper-only; an A100, an L40S, an RTX PRO
  // 6000 (sm_120) and an MI300X run Triton MLA at vLLM's default 16.
  for (const char* gpu : {"a100-80gb", "l40s", "rtx-pro-6000", "mi300x"}) {
    const VllmKvBlocks r = Rule(v3, gpu);
    EXPECT_EQ(r.size, 16) << gpu;
    EXPECT_TRUE(r.backend.empty()) << gpu;
    EXPECT_TRUE(r.Keeps(16));
    EXPECT_FALSE(r.Keeps(8));
  }
}

// On Blackwell (sm_100 family) vLLM picks FlashInfer MLA when
// qk_nope_head_dim is 128 (DeepSeek-V3: 128 + 64 rope) and keeps 32 or a
// multiple of 64; GLM-4.7-Flash's qk_nope_head_dim 192 falls to CUTLASS
// MLA, whose blocks are multiples of 128.
TEST(KvBlocksTest, MlaOnBlackwellDependsOnTheNopeHeadDim) {
  const VllmKvBlocks flashinfer = Rule(Config("deepseek-v3.json"), "b200");
  EXPECT_EQ(flashinfer.size, 64);
  EXPECT_EQ(flashinfer.backend, "FlashInfer MLA (Blackwell)");
  EXPECT_TRUE(flashinfer.Keeps(32));
  EXPECT_TRUE(flashinfer.Keeps(192));
  EXPECT_FALSE(flashinfer.Keeps(16));
  EXPECT_FALSE(flashinfer.Keeps(96));
  const VllmKvBlocks cutlass = Rule(Config("glm-4.7-flash.json"), "b200");
  EXPECT_EQ(cutlass.size, 128);
  EXPECT_EQ(cutlass.backend, "CUTLASS MLA (Blackwell)");
  EXPECT_TRUE(cutlass.Keeps(256));
  EXPECT_FALSE(cutlass.Keeps(64));
  // On Hopper the same model takes FlashMLA's 64.
  EXPECT_EQ(Rule(Config("glm-4.7-flash.json"), "h100-sxm").size, 64);
}

// MLA with DeepSeek Sparse Attention's indexer (DeepSeek-V3.2, GLM-5):
// exactly 64 on any NVIDIA GPU ("Forcing kv cache block size to 64 for
// FlashMLASparse backend"); DeepSeek-V4: exactly 256; a GQA model: vLLM's
// general rule.
TEST(KvBlocksTest, SparseCompressedAndPlainModels) {
  for (const char* file : {"deepseek-v3.2.json", "glm-5.json"}) {
    for (const char* gpu : {"h200", "b200"}) {
      const VllmKvBlocks r = Rule(Config(file), gpu);
      EXPECT_EQ(r.size, 64) << file << " " << gpu;
      EXPECT_TRUE(r.Keeps(64));
      EXPECT_FALSE(r.Keeps(128)) << file << " " << gpu;
    }
  }
  const VllmKvBlocks v4 = Rule(Config("deepseek-v4-flash.json"), "h200");
  EXPECT_EQ(v4.size, 256);
  EXPECT_TRUE(v4.Keeps(256));
  EXPECT_FALSE(v4.Keeps(512));
  for (const char* gpu : {"h100-sxm", "b200", "a100-80gb"}) {
    const VllmKvBlocks r = Rule(Catalog("llama-3.1-8b"), gpu);
    EXPECT_EQ(r.size, 16) << gpu;
    EXPECT_TRUE(r.Keeps(32));
    EXPECT_FALSE(r.Keeps(24));
    EXPECT_FALSE(r.Keeps(0));
  }
}

// SGLang pages token by token unless its default backend needs pages
// (server_args.py): DeepSeek Sparse Attention's nsa backend ("Setting page
// size to 64 for DeepSeek NSA") on any NVIDIA GPU, and trtllm_mla for
// DeepseekV3ForCausalLM on Blackwell (64). FA3 on Hopper and Triton pages
// of one token; GLM-4.7-Flash (Glm4MoeLiteForCausalLM) does not take
// trtllm_mla by default.
TEST(KvBlocksTest, SglangForcesPagesForNsaAndDeepSeekOnBlackwell) {
  auto page = [](const ModelShape& m, const std::string& gpu_id) {
    auto gpu = LookupGpu(gpu_id);
    EXPECT_TRUE(gpu.ok()) << gpu_id;
    return gpu.ok() ? SglangForcedPage(m, *gpu) : Tokens{-1};
  };
  const ModelShape v3 = Config("deepseek-v3.json");
  EXPECT_EQ(page(v3, "b200"), 64);
  EXPECT_EQ(page(v3, "h200"), 0);
  EXPECT_EQ(page(v3, "a100-80gb"), 0);
  EXPECT_EQ(page(Config("kimi-k2-instruct.json"), "gb200"), 64);
  EXPECT_EQ(page(Config("glm-4.7-flash.json"), "b200"), 0);
  EXPECT_EQ(page(Config("deepseek-v3.2.json"), "h200"), 64);
  EXPECT_EQ(page(Config("glm-5.json"), "h100-sxm"), 64);
  EXPECT_EQ(page(Catalog("llama-3.1-8b"), "b200"), 0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
