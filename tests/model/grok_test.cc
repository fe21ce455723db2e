// Grok-1 and Grok-2 as vLLM builds them (vllm/model_executor/models/grok1.py,
// GrokForCausalLM, registered for Grok1ForCausalLM and
// Grok1ModelForCausalLM). Every number is worked by hand in the comments.
#include <gtest/gtest.h>

#include <string>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const std::string kDir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/reconstructed/";

// xai-org/grok-2's config.json (tests/data/reconstructed/README.md gives the
// sources of every key). vLLM's grok1.py: every layer full attention (no
// window is read), head_dim = hidden / heads = 8,192 / 64 = 128, 8 KV heads.
// Parameters (hidden H 8,192, 64 layers, vocabulary 131,072):
//   attention: q 8,192 x 8,192 = 67,108,864; k and v 2 x 8,192 x 1,024 =
//     16,777,216; o 67,108,864: 150,994,944 (no biases);
//   experts: 8 x 3 x 8,192 x 16,384 (moe_intermediate_size) = 3,221,225,472;
//   router 8,192 x 8 = 65,536;
//   residual_moe's gated MLP: 3 x 8,192 x 32,768 (intermediate_size) =
//     805,306,368;
//   norms: pre/post attention, pre/post MoE 4 x 8,192 = 32,768;
//   a layer: 4,177,625,088; x 64 = 267,368,005,632.
//   Embedding and lm_head (untied: GitConfig's tie_word_embeddings default
//   is false) 2 x 131,072 x 8,192 = 2,147,483,648; final norm 8,192.
//   Total 269,515,497,472 (~270B).
//   Active: 2 of 8 experts, 805,306,368 a layer instead of 3,221,225,472:
//   269,515,497,472 - 64 x 2,415,919,104 = 114,896,674,816.
// KV: 64 layers x 8 heads x 128 x (K, V) x 2 B = 262,144 B a token.
TEST(GrokTest, Grok2AsPublished) {
  auto loaded = LoadModel(kDir + "grok-2.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  const ModelShape& m = *loaded;
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 269515497472);
  EXPECT_EQ(m.params.Active(), 114896674816);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 64);
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingWindow), 0);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 262144.0);
  EXPECT_EQ(m.max_model_len, 131072);
}

// Grok-1 under hpcai-tech's remote Grok1Config, every key its class default:
// hidden 6,144, 64 layers, 48 heads (head_dim 6,144 / 48 = 128), 8 KV heads,
// 8 experts (num_experts) of intermediate_size 32,768, top 2, tied
// embeddings, 8,192 positions. A layer: attention 2 x 6,144 x 6,144 +
// 2 x 6,144 x 1,024 = 88,080,384; experts 8 x 3 x 6,144 x 32,768 =
// 4,831,838,208; router 49,152; four norms 24,576: 4,919,992,320; x 64 =
// 314,879,508,480. Embedding (tied) 131,072 x 6,144 = 805,306,368, final
// norm 6,144: 315,684,820,992 (xAI's "314B").
// KV: 64 x 8 x 128 x 2 x 2 B = 262,144 B a token.
TEST(GrokTest, Grok1FromItsClassDefaults) {
  const ModelShape m =
      InlineConfig(R"({"model_type": "grok-1", "architectures": ["Grok1ModelForCausalLM"]})");
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.params.Total(), 315684820992);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 262144.0);
  EXPECT_EQ(m.max_model_len, 8192);
}

// A small Grok-2: H 256, 2 layers, 4 heads (head_dim 64 whatever head_dim
// says), 2 KV heads, no expert keys (vLLM: 8 experts, top 2), intermediate
// 512, moe_intermediate_size 128, vocabulary 1,000, untied.
//   attention 2 x 256 x 256 + 2 x 256 x 128 = 196,608; experts 8 x 3 x 256
//   x 128 = 786,432; router 2,048; residual MLP 3 x 256 x 512 = 393,216;
//   norms 1,024: 1,379,328 a layer, x 2 = 2,758,656; embedding and head
//   2 x 256,000, final norm 256: 3,270,912. Without residual_moe: 2 x
//   393,216 less, 2,484,480.
// KV: 2 x 2 x 64 x 2 x 2 B = 1,024 B a token.
TEST(GrokTest, VllmDefaultsAndTheResidualMlp) {
  const std::string base = R"({"model_type": "git", "architectures": ["Grok1ForCausalLM"],
      "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 32, "intermediate_size": 512,
      "moe_intermediate_size": 128, "vocab_size": 1000, )";
  const ModelShape with = InlineConfig(base + R"("residual_moe": true})");
  EXPECT_EQ(with.params.Total(), 3270912);
  EXPECT_EQ(BytesPerToken(with, Fmt("bf16")), 1024.0);
  const ModelShape without = InlineConfig(base + R"("residual_moe": false})");
  EXPECT_EQ(without.params.Total(), 2484480);
}

TEST(GrokTest, RefusesWhatVllmDoesNotBuild) {
  // model_type git without a Grok architecture is Microsoft's GIT.
  EXPECT_EQ(InlineError(R"({"model_type": "git", "architectures": ["GitForCausalLM"],
      "hidden_size": 768, "num_hidden_layers": 6, "num_attention_heads": 12,
      "vocab_size": 30522})"),
            "c.json: model_type: is \"git\" without a Grok architecture (Grok1ForCausalLM): "
            "Microsoft's GIT, which vLLM does not serve; kvbill reads model_type git only as "
            "Grok-2");
  // A window vLLM's grok1.py would not build.
  const std::string grok = R"({"model_type": "git", "architectures": ["Grok1ForCausalLM"],
      "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 1000, )";
  EXPECT_EQ(InlineError(grok + R"("sliding_window_size": 4096})"),
            "c.json: sliding_window_size: is 4096: vLLM's grok1.py builds every layer as full "
            "attention and reads no window, so kvbill reads only -1 (every layer global)");
  EXPECT_EQ(InlineError(grok + R"("global_attn_every_n": 4})"),
            "c.json: global_attn_every_n: is 4: vLLM's grok1.py builds every layer as full "
            "attention and reads no window, so kvbill reads only 1 (every layer global)");
  // residual_moe under a model type without the Grok rule is not dropped.
  const std::string other = InlineError(R"({"model_type": "my_moe", "hidden_size": 256,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000,
      "num_local_experts": 8, "num_experts_per_tok": 2, "residual_moe": true})");
  EXPECT_EQ(other.rfind("c.json: residual_moe: kvbill cannot tell which layers keep KV", 0), 0u)
      << other;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
