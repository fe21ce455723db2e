#include "kvbill/model/hf_config.h"

#include <gtest/gtest.h>

#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

struct Expected {
  const char* name;
  double bytes_per_token;  // bf16, every layer with per-token KV
  Bytes at_128k;           // one sequence at 131,072 tokens, state excluded
};

// Worked by hand from each config (bf16 = 2 bytes; x2 for K and V):
//   llama-3.1-8b    32 x 8 x 128 x 4 = 131,072;  x 131,072 = 16 GiB
//   llama-3.1-70b   80 x 8 x 128 x 4 = 327,680;  40 GiB
//   llama-3.1-405b 126 x 8 x 128 x 4 = 516,096;  63 GiB
//   qwen3-8b        36 x 8 x 128 x 4 = 147,456;  18 GiB
//   qwen3-32b       64 x 8 x 128 x 4 = 262,144;  32 GiB
//   qwen3-235b-a22b 94 x 4 x 128 x 4 = 192,512;  23.5 GiB
//   qwen2.5-7b      28 x 4 x 128 x 4 =  57,344;  7 GiB (use_sliding_window false)
//   mixtral-8x7b    32 x 8 x 128 x 4 = 131,072;  16 GiB (sliding_window null)
//   deepseek-v3     61 x 576 x 2     =  70,272;  8.578 GiB
//   mistral-7b      131,072/token, window 4,096 -> 4,096 x 131,072 = 512 MiB
//   gemma-2-9b      42 x 8 x 256 x 4 = 344,064; 21 full x 8,192 x 131,072 + 21 x 8,192 x 4,096
//   gpt-oss-20b     24 x 8 x 64 x 4  =  49,152; 12 full x 2,048 x 131,072 + 12 x 2,048 x 128
//   jamba-1.5-mini  4 attention x 8 x 128 x 4 = 16,384; 2 GiB
//   qwen3-next      12 full x 2 x 256 x 4 = 24,576; 3 GiB
//   llama-4-scout   48 x 8 x 128 x 4 = 196,608; 12 x 4,096 x 131,072 + 36 x 4,096 x 8,192
//   glm-4.5-air     46 x 8 x 128 x 4 = 188,416; 23 GiB (the MTP layer keeps no KV
//                   without speculative decoding)
//   qwen3.5-9b      8 full (every 4th) x 4 x 256 x 4 = 32,768; 4 GiB
constexpr Expected kCatalog[] = {
    {"llama-3.1-8b", 131072, 17179869184LL},
    {"llama-3.1-70b", 327680, 42949672960LL},
    {"llama-3.1-405b", 516096, 67645734912LL},
    {"qwen3-8b", 147456, 19327352832LL},
    {"qwen3-32b", 262144, 34359738368LL},
    {"qwen3-235b-a22b", 192512, 25232932864LL},
    {"qwen2.5-7b", 57344, 7516192768LL},
    {"mixtral-8x7b", 131072, 17179869184LL},
    {"deepseek-v3", 70272, 9210691584LL},
    {"mistral-7b", 131072, 536870912LL},
    {"gemma-2-9b", 344064, 22548578304LL + 704643072LL},
    {"gpt-oss-20b", 49152, 3221225472LL + 3145728LL},
    {"jamba-1.5-mini", 16384, 2147483648LL},
    {"qwen3-next-80b-a3b", 24576, 3221225472LL},
    {"llama-4-scout", 196608, 6442450944LL + 1207959552LL},
    {"glm-4.5-air", 188416, 24696061952LL},
    {"qwen3.5-9b", 32768, 4294967296LL},
};

TEST(HfConfigTest, EveryCatalogModelLoadsWithHandComputedSizes) {
  for (const Expected& e : kCatalog) {
    SCOPED_TRACE(e.name);
    const ModelShape m = Catalog(e.name);
    EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), e.bytes_per_token);
    EXPECT_EQ(Footprint(m, Fmt("bf16"), k128k, 16).kv_bytes, e.at_128k);
  }
}

TEST(HfConfigTest, CatalogHoldsEverySharedConfig) {
  // The 12 configs of shared/data/hf-configs plus the three extra shapes.
  EXPECT_GE(ModelCatalog().size(), std::size(kCatalog));
  for (const Expected& e : kCatalog) {
    bool found = false;
    for (const CatalogModel& c : ModelCatalog()) found = found || c.name == e.name;
    EXPECT_TRUE(found) << e.name;
  }
}

TEST(HfConfigTest, LayerKindsFollowEachFamilysRule) {
  // Gemma-2: even layers slide -> 21 + 21; layer 0 slides, layer 1 is global.
  const ModelShape gemma = Catalog("gemma-2-9b");
  EXPECT_EQ(gemma.CountLayers(LayerKind::kSlidingWindow), 21);
  EXPECT_EQ(gemma.layers[0].kind, LayerKind::kSlidingWindow);
  EXPECT_EQ(gemma.layers[1].kind, LayerKind::kFullAttention);
  EXPECT_EQ(gemma.layers[0].window, 4096);
  // gpt-oss: layer_types alternate sliding (128) / full.
  const ModelShape oss = Catalog("gpt-oss-20b");
  EXPECT_EQ(oss.CountLayers(LayerKind::kSlidingWindow), 12);
  EXPECT_EQ(oss.layers[0].window, 128);
  // Jamba: attention where i % 8 == 4 -> layers 4, 12, 20, 28.
  const ModelShape jamba = Catalog("jamba-1.5-mini");
  EXPECT_EQ(jamba.CountLayers(LayerKind::kFullAttention), 4);
  EXPECT_EQ(jamba.layers[4].kind, LayerKind::kFullAttention);
  EXPECT_EQ(jamba.CountLayers(LayerKind::kMambaState), 28);
  // Qwen3-Next: full every 4th layer (3, 7, ...) -> 12 full, 36 linear.
  const ModelShape next = Catalog("qwen3-next-80b-a3b");
  EXPECT_EQ(next.CountLayers(LayerKind::kFullAttention), 12);
  EXPECT_EQ(next.layers[3].kind, LayerKind::kFullAttention);
  EXPECT_EQ(next.layers[0].kind, LayerKind::kLinearState);
  // Llama-4 without no_rope_layers: every 4th layer (3, 7, ...) global NoPE.
  const ModelShape scout = Catalog("llama-4-scout");
  EXPECT_EQ(scout.CountLayers(LayerKind::kChunkedAttention), 36);
  EXPECT_EQ(scout.layers[3].kind, LayerKind::kFullAttention);
  EXPECT_EQ(scout.layers[0].window, 8192);
  // DeepSeek-V3: MLA everywhere.
  EXPECT_EQ(Catalog("deepseek-v3").CountLayers(LayerKind::kLatentAttention), 61);
}

// Qwen3-Next's configs declare no MTP layers, yet its checkpoints ship one
// module and vLLM builds it (qwen3_next_mtp.py: num_nextn_predict_layers
// defaults to 1), so `mtp` speculation runs; it was refused. One module
// (hidden 2,048; 16 query heads and 2 KV heads of 256; 512 experts of 512):
//   gated q_proj 16 x 256 x 2 x 2,048 = 16,777,216; k, v 2 x 256 x 2,048
//   each = 2,097,152; o_proj 2,048 x 4,096 = 8,388,608; q, k norms 512:
//   attention 27,263,488
//   experts 512 x 3 x 2,048 x 512 = 1,610,612,736; router 512 x 2,048 =
//   1,048,576; shared expert 3 x 2,048 x 512 = 3,145,728 and its gate
//   2,048; the layer's two norms 4,096
//   fc 2 x 2,048 x 2,048 = 8,388,608 and three norms 6,144
//   = 1,650,471,424 parameters, none of them in what a server loads to decode.
TEST(HfConfigTest, QwenNextCountsTheMtpModuleItsCheckpointShips) {
  const ModelShape next = Catalog("qwen3-next-80b-a3b");
  EXPECT_EQ(next.params.mtp, 1'650'471'424);
  EXPECT_EQ(next.params.Checkpoint() - next.params.Total(), 1'650'471'424);
}

// Qwen3-Next state: per linear layer, conv (4 - 1) x (2 x 16 x 128 + 32 x 128)
// = 24,576 and recurrent 32 x 128 x 128 = 524,288 elements; 36 layers x
// 548,864 x 2 B = 39,518,208 B.
TEST(HfConfigTest, GatedDeltaNetStateFromLinearDims) {
  EXPECT_EQ(StateBytesPerSequence(Catalog("qwen3-next-80b-a3b")), 39518208);
  // Qwen3.5-9B: the same conv and recurrent shapes (16 key heads, 32 value
  // heads of 128), but mamba_ssm_dtype float32 keeps the recurrent state in
  // 4 bytes: 24 layers x (24,576 x 2 + 524,288 x 4) = 24 x 2,146,304 =
  // 51,511,296 B.
  EXPECT_EQ(StateBytesPerSequence(Catalog("qwen3.5-9b")), 51511296);
}

// Exact parameter totals, worked from the configs and matching published figures:
//   Llama-3.1-8B 8,030,261,248 (HF safetensors total): embeddings 2 x 128,256 x
//   4,096 = 1,050,673,152; per layer attention 41,943,040 + MLP 176,160,768 +
//   norms 8,192 = 218,112,000 x 32; final norm 4,096.
//   Mistral-7B 7,241,732,096: the same layers with a 32,000 vocabulary.
//   Gemma-2-9B 9,241,705,984 (Gemma 2 report): tied embedding 917,504,000 +
//   42 x 198,195,200 + 3,584.
TEST(HfConfigTest, ExactParameterCountsOfDenseModels) {
  EXPECT_EQ(Catalog("llama-3.1-8b").params.Total(), 8030261248LL);
  EXPECT_EQ(Catalog("mistral-7b").params.Total(), 7241732096LL);
  EXPECT_EQ(Catalog("gemma-2-9b").params.Total(), 9241705984LL);
  // Qwen3-32B: 64 x (94,372,096 attention incl. q/k norms + 393,216,000 MLP
  // + 10,240 norms) + 2 x 151,936 x 5,120 + 5,120 = 32,762,123,264 ("32.8B").
  EXPECT_EQ(Catalog("qwen3-32b").params.Total(), 32762123264LL);
}

struct Published {
  const char* name;
  double total_b;
  double active_b;   // 0: dense
  double tolerance;  // relative
};

// Published totals (model cards and papers; docs/models.md lists the sources).
constexpr Published kPublished[] = {
    {"mixtral-8x7b", 46.7, 12.9, 0.01},
    {"deepseek-v3", 671, 37, 0.02},
    {"qwen3-235b-a22b", 235, 22, 0.01},
    {"llama-3.1-70b", 70.6, 0, 0.01},
    {"llama-3.1-405b", 405.9, 0, 0.01},
    {"qwen3-8b", 8.2, 0, 0.01},
    {"qwen2.5-7b", 7.61, 0, 0.01},
    {"jamba-1.5-mini", 52, 12, 0.01},
    {"gpt-oss-20b", 20.91, 0, 0.01},
    {"qwen3-next-80b-a3b", 80, 0, 0.01},
    {"llama-4-scout", 0, 17, 0.02},
    // GLM-4.5 card and report: GLM-4.5-Air has 106B total parameters (the
    // MTP layer aside), 12B activated (embedding and output layer aside:
    // checked below).
    {"glm-4.5-air", 106, 0, 0.03},
};

TEST(HfConfigTest, ParameterCountsMatchPublishedTotals) {
  for (const Published& p : kPublished) {
    SCOPED_TRACE(p.name);
    const ModelShape m = Catalog(p.name);
    if (p.total_b > 0) {
      EXPECT_NEAR(static_cast<double>(m.params.Total()) / 1e9, p.total_b, p.total_b * p.tolerance);
    }
    if (p.active_b > 0) {
      EXPECT_NEAR(static_cast<double>(m.params.Active()) / 1e9, p.active_b,
                  p.active_b * p.tolerance);
    }
  }
  // gpt-oss-20b's card counts 3.61B active without the input embedding
  // (201,088 x 2,880 = 579,133,440): a lookup, not a matmul.
  const ModelShape oss = Catalog("gpt-oss-20b");
  EXPECT_NEAR(static_cast<double>(oss.params.Active() - oss.params.embedding) / 1e9, 3.61, 0.02);
  const ModelShape air = Catalog("glm-4.5-air");
  EXPECT_NEAR(
      static_cast<double>(air.params.Active() - air.params.embedding - air.params.lm_head) / 1e9,
      12, 12 * 0.03);
}

// Qwen3.5-9B's bf16 checkpoint: its four safetensors shards are 5,276,436,216
// + 5,335,161,512 + 5,368,717,440 + 3,325,995,712 = 19,306,310,880 bytes
// (shard sizes as a public artifact manifest lists them beside the
// config.json's SHA-256 this catalog file matches), headers included:
// at most 9,653,155,440 parameters of 2 bytes, and within 0.01% of that
// (the headers are ~100 kB). Vision tower and MTP module are in the checkpoint.
TEST(HfConfigTest, Qwen35CheckpointSizeFromItsShards) {
  const ModelShape m = Catalog("qwen3.5-9b");
  const double shard_bytes = 5276436216.0 + 5335161512.0 + 5368717440.0 + 3325995712.0;
  const double stored = static_cast<double>(m.params.Checkpoint()) * 2;
  EXPECT_LE(stored, shard_bytes);
  EXPECT_NEAR(stored, shard_bytes, shard_bytes * 1e-4);
  EXPECT_GT(m.params.vision, 0);
  EXPECT_GT(m.params.mtp, 0);
}

ModelShape Inline(const std::string& json, std::vector<ConfigOverride> overrides = {}) {
  auto m = ParseHfConfig(json, "inline.json", "inline", overrides);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

std::string ErrorOf(const std::string& json) {
  auto m = ParseHfConfig(json, "bad.json", "bad");
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : m.error().message();
}

constexpr char kSmall[] =
    R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
        "vocab_size": 100)";

TEST(HfConfigTest, HeadDimDefaultsToHiddenOverHeadsAndKvHeadsToHeads) {
  const ModelShape m = Inline(std::string(kSmall) + "}");
  EXPECT_EQ(m.layers[0].qk_head_dim, 16);
  EXPECT_EQ(m.layers[0].kv_heads, 4);
  // 2 layers x 4 heads x 16 x 2 x 2 B = 512 B.
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 512.0);
}

TEST(HfConfigTest, FalconMultiQueryMeansOneKvHead) {
  const ModelShape mq = Inline(
      R"({"model_type": "falcon", "n_layer": 32, "hidden_size": 4544, "n_head": 71,
          "multi_query": true, "vocab_size": 65024})");
  EXPECT_EQ(mq.layers[0].kv_heads, 1);
  EXPECT_EQ(mq.layers[0].qk_head_dim, 64);
  // new_decoder_architecture reads num_kv_heads.
  const ModelShape na = Inline(
      R"({"model_type": "falcon", "num_hidden_layers": 60, "hidden_size": 8192,
          "num_attention_heads": 128, "num_kv_heads": 8, "new_decoder_architecture": true,
          "vocab_size": 65024})");
  EXPECT_EQ(na.layers[0].kv_heads, 8);
  // 60 x 8 x 64 x 2 x 2 = 122,880 B per token.
  EXPECT_EQ(BytesPerToken(na, Fmt("bf16")), 122880.0);
}

TEST(HfConfigTest, QwenSlidingWindowAppliesFromMaxWindowLayers) {
  // Qwen2Config's num_key_value_heads defaults to 32: a toy says its own.
  const std::string base = std::string(kSmall) + R"(, "model_type": "qwen2",
      "num_key_value_heads": 4, "num_hidden_layers": 4, "sliding_window": 32,
      "max_window_layers": 2)";
  EXPECT_EQ(
      Inline(base + R"(, "use_sliding_window": false})").CountLayers(LayerKind::kSlidingWindow), 0);
  const ModelShape on = Inline(base + R"(, "use_sliding_window": true})");
  EXPECT_EQ(on.layers[1].kind, LayerKind::kFullAttention);
  EXPECT_EQ(on.layers[2].kind, LayerKind::kSlidingWindow);
  EXPECT_EQ(on.layers[3].kind, LayerKind::kSlidingWindow);
}

TEST(HfConfigTest, Gemma3DefaultsToOneGlobalLayerInSix) {
  const ModelShape m = Inline(
      R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text",
          "num_hidden_layers": 12, "hidden_size": 64, "num_attention_heads": 4, "head_dim": 32,
          "num_key_value_heads": 2, "sliding_window": 1024, "vocab_size": 100}})");
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingWindow), 10);
  EXPECT_EQ(m.layers[5].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.layers[11].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.layers[0].qk_head_dim, 32);
  EXPECT_EQ(m.params.lm_head, 0);  // Gemma ties the output projection
}

TEST(HfConfigTest, MiniMaxAttnTypeListMarksSoftmaxLayers) {
  const ModelShape m = Inline(std::string(kSmall) +
                              R"(, "num_hidden_layers": 8, "head_dim": 16,
                                   "attn_type_list": [0,0,0,0,0,0,0,1]})");
  EXPECT_EQ(m.CountLayers(LayerKind::kLinearState), 7);
  EXPECT_EQ(m.layers[7].kind, LayerKind::kFullAttention);
  // Lightning state: 4 heads x 16 x 16 = 1,024 elements x 2 B x 7 layers.
  EXPECT_EQ(StateBytesPerSequence(m), 14336);
}

TEST(HfConfigTest, OverridesEditTheTextConfigBeforeSizing) {
  const ModelShape m = Inline(std::string(kSmall) + "}", {{"num_key_value_heads", "2"},
                                                          {"text_config.num_hidden_layers", "3"}});
  EXPECT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[0].kv_heads, 2);
  auto bad = ParseConfigOverride("num_key_value_heads");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "--set \"num_key_value_heads\": expected key=value");
}

TEST(HfConfigTest, BadConfigsNameTheFileAndField) {
  EXPECT_EQ(ErrorOf(R"({"hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10})"),
            "bad.json: num_hidden_layers: missing");
  EXPECT_EQ(ErrorOf(std::string(kSmall) + R"(, "num_key_value_heads": -8})"),
            "bad.json: num_key_value_heads: must be a positive integer, got -8");
  EXPECT_EQ(ErrorOf(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 6,
                        "vocab_size": 10})"),
            "bad.json: head_dim: missing, and hidden_size 64 is not divisible by "
            "num_attention_heads 6");
  EXPECT_EQ(ErrorOf("{\"num_hidden_layers\": 2,\n \"hidden_size\": }"),
            "bad.json:2:17: not valid JSON: syntax error while parsing value - unexpected '}'; "
            "expected '[', '{', or a literal");
  EXPECT_EQ(ErrorOf(std::string(kSmall) + R"(, "num_key_value_heads": 3})"),
            "bad.json: num_key_value_heads: 3 does not divide num_attention_heads 4");
  EXPECT_EQ(ErrorOf(std::string(kSmall) + R"(, "layer_types": ["full_attention", "banana"]})"),
            "bad.json: layer_types[1]: unknown layer type \"banana\" for model_type \"\" (known: "
            "full_attention, sliding_attention, chunked_attention, linear_attention, mamba, conv)");
  EXPECT_EQ(ErrorOf(std::string(kSmall) + R"(, "layer_types": ["sliding_attention",
                                               "full_attention"]})"),
            "bad.json: sliding_window: missing, but some layers use sliding attention");
  EXPECT_EQ(ErrorOf(R"({"text_config": {"num_hidden_layers": "two"}})"),
            "bad.json: text_config.num_hidden_layers: must be a positive integer, got \"two\"");
}

TEST(HfConfigTest, UnknownModelNameListsTheCatalog) {
  auto m = LoadModel("no-such-model");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("--model \"no-such-model\": neither a catalog name nor a "
                                     "config.json file (catalog: deepseek-v3,"),
            std::string::npos)
      << m.error().message();
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
