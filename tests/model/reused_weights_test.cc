// Weights a forward pass applies more than once: Ouro's loops over its
// layers and Zamba2's shared transformer blocks. Held once (parameters,
// memory), applied at every use (FLOPs, weight reads), each use with a KV
// cache of its own. Every number is worked by hand in the comments.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cost/hand_curves.h"
#include "kvbill/cost/kernel_curves.h"
#include "kvbill/cost/operator_cost_model.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

ModelShape Parse(const std::string& text) {
  auto m = ParseHfConfig(text, "c.json", "c");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

// Ouro, 2 layers of hidden 64, 4 heads and 2 KV heads (head_dim 64 / 4 =
// 16), MLP 128, vocabulary 100, untied, 3 loops.
constexpr char kOuro[] = R"({"model_type": "ouro", "num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
    "vocab_size": 100, "tie_word_embeddings": false, "total_ut_steps": 3})";

// Per layer: q 64 x 64 = 4,096, k and v 32 x 64 = 2,048 each, o 4,096
// (12,288); MLP 3 x 64 x 128 = 24,576; four norms 256: 37,120, x 2 =
// 74,240. Embedding and lm_head 12,800, final norm 64, early-exit gate 64 +
// 1: 87,169. KV: 2 layers x 3 loops x 2 heads x 16 x (K, V) x 2 B = 768 B a
// token. Applied twice more than held: 2 layers x (12,288 + 24,576) x 2 =
// 147,456 parameters, 49,152 of them attention.
TEST(ReusedWeightsTest, OuroHoldsItsLayersOnceAndCachesEveryLoop) {
  const ModelShape m = Parse(kOuro);
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 87169);
  EXPECT_EQ(m.layers.size(), 6u);
  EXPECT_EQ(m.DecoderLayers(), 2);
  EXPECT_EQ(m.blocks_per_layer, 3);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 768.0);
  EXPECT_EQ(m.ReappliedParams(), 147456);
  EXPECT_EQ(m.ReappliedParams(/*attention_only=*/true), 49152);
  // The roofline: matmul FLOPs 2 x (87,169 - 6,400 embedding + 147,456) =
  // 456,450 a token; weights read a step (bf16) 87,169 x 2 - 12,800 (the
  // untied embedding, gathered) + 147,456 x 2 = 456,450 bytes.
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  auto r = Roofline::Make(m, Fmt("bf16"), "auto", *gpu, RooflineParams{1, 0.7, 0.6, 0});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_DOUBLE_EQ(r->MatmulFlopsPerToken(), 456450.0);
  EXPECT_DOUBLE_EQ(r->WeightBytes(1), 456450.0);
}

// The operator model with hand curves (1 TB/s for GEMM bytes; decode
// attention 10 us a layer plus its KV bytes at 1 TB/s), one decode at
// context 1,000. GEMM bytes at m = 1 (weights n x k x 2, input k x 2,
// output n x 2):
//   per attention entry (6: 2 layers x 3 loops): QKV n = 4 x 16 + 2 x 32 =
//   128, k = 64: 16,768; output n = 64, k = 64: 8,448; 6 x 25,216 =
//   151,296
//   MLPs once (2 layers): gate+up n = 256, k = 64: 33,408; down n = 64,
//   k = 128: 16,768; 2 x 50,176 = 100,352
//   the MLPs applied again: 147,456 - 49,152 = 98,304 parameters, n =
//   1,536, k = 64: 196,608 + 128 + 3,072 = 199,808
//   lm_head n = 100, k = 64: 12,800 + 128 + 200 = 13,128
// = 464,584 B: 0.464584 us. Attention: 6 x 10 us + 1,000 x 768 B = 0.768
// us. Total 61.232584 us.
TEST(ReusedWeightsTest, OuroLoopsArePricedInTheOperatorModel) {
  const GpuKernelCurves c = HandCurves();
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  auto m = OperatorCostModel::Make(Parse(kOuro), Fmt("bf16"), "auto", *gpu, &c, EngineProfile{},
                                   OperatorModelOptions{});
  ASSERT_TRUE(m.ok()) << m.error().message();
  const std::vector<ScheduledWork> work = {{1000, 1, false}};
  std::vector<long double> own(1);
  EXPECT_NEAR((*m)->IterationSeconds(work, own), 61.232584e-6, 1e-12);
}

// Zamba2, 4 layers of hidden 64 (mamba, hybrid, mamba, hybrid), one shared
// block run at both hybrid layers, 4 heads over 2 x 64 = 128 (head_dim 32,
// as many KV heads), MLP 128, adapters of rank 8 (attention adapters on),
// Mamba-2 of expand 2 (128 wide), 4 heads, 1 group, state 16, kernel 4.
//   block: q, k, v 3 x 128 x 128 = 49,152; o 64 x 128 = 8,192; gate_up 256 x
//   64 = 16,384; down 64 x 128 = 8,192; norms 128 + 64: 82,112
//   per hybrid layer: MLP adapter 8 x 64 + 256 x 8 = 2,560; q, k, v
//   adapters 3 x (8 x 128 + 128 x 8) = 6,144; projection 64 x 64 = 4,096:
//   12,800, x 2 = 25,600
//   Mamba-2 per layer: in_proj (2 x 128 + 2 x 16 + 4 = 292) x 64 = 18,688;
//   conv (128 + 32 = 160) x 4 + 160 = 800; dt bias, A, D 12; gated norm
//   128; out_proj 64 x 128 = 8,192; its layer norm 64: 27,884, x 4 =
//   111,536
//   embedding 6,400 (tied), final norm 64
// Total 225,712. KV: 2 hybrid layers x 4 heads x 32 x (K, V) x 2 B = 1,024
// B a token. State: per Mamba layer conv 3 x 160 = 480 and SSM 4 x 32 x 16
// = 2,048 elements, bf16: 5,056 B, x 4 = 20,224 B. The block runs twice,
// held once: 81,920 parameters applied again, 57,344 of them attention.
TEST(ReusedWeightsTest, Zamba2SharesItsBlockAcrossHybridLayers) {
  const std::string base = R"({"model_type": "zamba2", "num_hidden_layers": 4, "hidden_size": 64,
      "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "adapter_rank": 8,
      "use_shared_attention_adapter": true, "num_mem_blocks": 1, "n_mamba_heads": 4,
      "mamba_expand": 2, "mamba_ngroups": 1, "mamba_d_state": 16, "mamba_d_conv": 4, )";
  const ModelShape m =
      Parse(base + R"("layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"]})");
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 225712);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 2);
  EXPECT_EQ(m.CountLayers(LayerKind::kMambaState), 4);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 1024.0);
  EXPECT_EQ(StateBytesPerSequence(m, 1), 20224);
  EXPECT_EQ(m.ReappliedParams(), 81920);
  EXPECT_EQ(m.ReappliedParams(/*attention_only=*/true), 57344);
  EXPECT_EQ(m.layers[1].input_dim, 128);
  auto missing = ParseHfConfig(base + R"("max_position_embeddings": 4096})", "c.json", "c");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "c.json: layers_block_type: missing: kvbill cannot tell which layers are hybrid");
  auto bad = ParseHfConfig(base + R"("layers_block_type": ["mamba", "attention", "mamba",
      "hybrid"]})",
                           "c.json", "c");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "c.json: layers_block_type[1]: must be \"mamba\" or \"hybrid\", got \"attention\"");
  // Zyphra's pre-transformers Zamba2-7B config names no n_mamba_heads (the
  // class default is 8) beside mamba_headdim 64: vLLM would build 8 heads of
  // 7,168 / 8 and fail to load the checkpoint's 112. Refused, not misread.
  auto old = ParseHfConfig(base + R"("mamba_headdim": 64, "layers_block_type": ["mamba",
      "hybrid", "mamba", "hybrid"]})",
                           "c.json", "c");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().message(),
            "c.json: mamba_headdim: 64 x n_mamba_heads 4 is not the Mamba width "
            "(mamba_expand x hidden_size) 128");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
