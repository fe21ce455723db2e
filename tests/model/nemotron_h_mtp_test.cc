// Nemotron-H's MTP module as vLLM's nemotron_h_mtp.py builds it: the blocks
// of mtp_hybrid_override_pattern (or mtp_layers_block_type), counted in the
// checkpoint, not in the served model's totals.
#include <gtest/gtest.h>

#include <string>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Two layers "*E", H 64, 4 heads of 16, 2 KV heads, no biases; 4 experts of
// 32 (top 2), ungated; one shared expert of 48, ungated; vocabulary 100,
// untied. (The Mamba keys are required but no layer is Mamba.)
const std::string kLayout = R"("model_type": "nemotron_h", "hidden_size": 64,
    "num_hidden_layers": 2, "hybrid_override_pattern": "*E", "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 96, "vocab_size": 100,
    "tie_word_embeddings": false, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 32, "moe_shared_expert_intermediate_size": 48,
    "n_shared_experts": 1, "mamba_num_heads": 4, "mamba_head_dim": 32, "n_groups": 1,
    "ssm_state_size": 16, "conv_kernel": 4, "expand": 2)";

// The main model:
//   layer 0 (*): q 64 x 64 = 4,096, k and v 2 x 64 x 32 = 4,096, o 4,096:
//     12,288, its norm 64: 12,352;
//   layer 1 (E): experts 4 x (up 64 x 32 + down 32 x 64) = 16,384; router
//     64 x 4 = 256 and its correction bias 4; shared expert up and down
//     2 x 64 x 48 = 6,144: 22,788, its norm 64: 22,852;
//   embedding and lm_head 2 x 100 x 64 = 12,800; final norm 64.
//   Total 12,352 + 22,852 + 12,800 + 64 = 48,068; active: 2 of 4 experts,
//   48,068 - 2 x 4,096 = 39,876.
// The MTP module ("*E"): enorm and hnorm 2 x 64 = 128, eh_proj 128 x 64 =
// 8,192, the attention block 12,288 and its norm 64, the MoE block 22,788
// and its norm 64, the final norm 64: 43,588. The checkpoint: 48,068 +
// 43,588 = 91,656.
// KV: one attention layer, 2 heads x 16 x (K, V) x 2 B = 128 B a token (the
// MTP block's attention is the drafter's, not the served model's).
TEST(NemotronHMtpTest, TheMtpBlocksAreCountedInTheCheckpointOnly) {
  const ModelShape plain = InlineConfig("{" + kLayout + "}");
  EXPECT_EQ(plain.params.Total(), 48068);
  EXPECT_EQ(plain.params.mtp, 0);
  const ModelShape pattern = InlineConfig("{" + kLayout + R"(, "num_nextn_predict_layers": 1,
      "mtp_hybrid_override_pattern": "*E"})");
  const ModelShape list = InlineConfig("{" + kLayout + R"(, "num_nextn_predict_layers": 1,
      "mtp_layers_block_type": ["attention", "moe"]})");
  for (const ModelShape* m : {&pattern, &list}) {
    EXPECT_EQ(m->params.Total(), 48068);
    EXPECT_EQ(m->params.Active(), 39876);
    EXPECT_EQ(m->params.mtp, 43588);
    EXPECT_EQ(m->params.Checkpoint(), 91656);
    EXPECT_EQ(m->layers.size(), 2u);
    EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 128.0);
  }
}

// NVIDIA-Nemotron-3-Super-120B-A12B's config (tests/data/configs; one MTP
// module, mtp_hybrid_override_pattern "*E"), H 4,096:
//   enorm and hnorm 2 x 4,096 = 8,192; eh_proj 8,192 x 4,096 = 33,554,432;
//   attention: q 4,096 x 32 x 128 = 16,777,216, k and v 2 x 4,096 x 2 x 128
//     = 2,097,152, o 16,777,216: 35,651,584, its norm 4,096;
//   MoE over the latent 1,024: 512 experts x (up 1,024 x 2,688 + down 2,688
//     x 1,024 = 5,505,024) = 2,818,572,288; fc1 and fc2 latent projections
//     2 x 4,096 x 1,024 = 8,388,608; router 4,096 x 512 = 2,097,152 and its
//     bias 512; the shared expert 2 x 4,096 x 5,376 = 44,040,192:
//     2,873,098,752, its norm 4,096;
//   the final norm 4,096.
//   8,192 + 33,554,432 + 35,651,584 + 4,096 + 2,873,098,752 + 4,096 + 4,096
//   = 2,942,325,248 (the served model's totals are unchanged).
TEST(NemotronHMtpTest, Nemotron3SuperCarriesOneAttentionAndMoeStep) {
  auto m = LoadModel(std::string(KVBILL_SOURCE_DIR) +
                     "/tests/data/configs/nemotron-3-super-120b-a12b-fp8.json");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.mtp, 2942325248);
  EXPECT_EQ(m->params.Checkpoint() - m->params.Total(), 2942325248);
}

TEST(NemotronHMtpTest, RefusesWhatVllmDoesNotBuild) {
  EXPECT_EQ(InlineError("{" + kLayout + R"(, "num_nextn_predict_layers": 1})"),
            "c.json: mtp_hybrid_override_pattern: missing (nor mtp_layers_block_type), where "
            "num_nextn_predict_layers is 1: kvbill cannot tell the MTP module's blocks");
  EXPECT_EQ(InlineError("{" + kLayout + R"(, "num_nextn_predict_layers": 2,
      "mtp_hybrid_override_pattern": "*E"})"),
            "c.json: num_nextn_predict_layers: is 2: vLLM's nemotron_h_mtp.py builds one MTP "
            "module only");
  EXPECT_EQ(InlineError("{" + kLayout + R"(, "num_nextn_predict_layers": 1,
      "mtp_hybrid_override_pattern": "*M"})"),
            "c.json: mtp_hybrid_override_pattern: character 1 is 'M': vLLM's "
            "nemotron_h_mtp.py builds only * attention and E MoE");
  EXPECT_EQ(InlineError("{" + kLayout + R"(, "num_nextn_predict_layers": 1,
      "mtp_layers_block_type": ["attention", "mamba"]})"),
            "c.json: mtp_layers_block_type[1]: is \"mamba\": vLLM's nemotron_h_mtp.py builds "
            "only attention and moe blocks");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
