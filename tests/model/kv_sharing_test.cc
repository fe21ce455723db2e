// KV-shared layers and per-layer input embeddings: Gemma 3n and Gemma 4's
// E2B / E4B shapes, read as vLLM builds them (gemma3n.py, gemma4.py). Every
// expected number is worked by hand in the comments.
#include <gtest/gtest.h>

#include <string>

#include "kvbill/cache/kv_groups.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Four sliding layers then a full one, `n` times.
std::string Pattern(int n) {
  std::string out = "[";
  for (int i = 0; i < 5 * n; ++i) {
    out += std::string(i > 0 ? ", " : "") +
           ((i + 1) % 5 == 0 ? "\"full_attention\"" : "\"sliding_attention\"");
  }
  return out + "]";
}

// Gemma 4 E2B's text config (google/gemma-4-E2B: 35 layers of hidden 1,536,
// 8 query heads and one KV head, head_dim 256 on sliding layers and 512 on
// full ones, the last 20 layers sharing KV, per-layer inputs of 256, the
// shared layers' MLPs double-wide).
std::string Gemma4E2b() {
  return R"({"model_type": "gemma4_text", "hidden_size": 1536, "num_hidden_layers": 35,
      "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256,
      "global_head_dim": 512, "attention_k_eq_v": false, "sliding_window": 512,
      "vocab_size": 262144, "vocab_size_per_layer_input": 262144,
      "hidden_size_per_layer_input": 256, "num_kv_shared_layers": 20,
      "use_double_wide_mlp": true, "intermediate_size": 6144, "enable_moe_block": false,
      "max_position_embeddings": 131072, "tie_word_embeddings": true, "layer_types": )" +
         Pattern(7) + "}";
}

// Gemma 3n E2B's text config (google/gemma-3n-E2B: 30 layers of hidden
// 2,048, 8 query and 2 KV heads of 256, MLPs of 8,192, the last 10 layers
// sharing KV, AltUp over 4 streams, LAuReL of rank 64, per-layer inputs of
// 256).
std::string Gemma3nE2b() {
  std::string inter = "[";
  for (int i = 0; i < 30; ++i) inter += std::string(i > 0 ? ", " : "") + "8192";
  return R"({"model_type": "gemma3n_text", "hidden_size": 2048, "num_hidden_layers": 30,
      "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256,
      "sliding_window": 512, "vocab_size": 262400, "vocab_size_per_layer_input": 262144,
      "hidden_size_per_layer_input": 256, "num_kv_shared_layers": 10, "altup_num_inputs": 4,
      "laurel_rank": 64, "max_position_embeddings": 32768, "intermediate_size": )" +
         inter + "], \"layer_types\": " + Pattern(6) + "}";
}

ModelShape Parse(const std::string& text) {
  auto m = ParseHfConfig(text, "c.json", "c");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

// Gemma 4 E2B. Layers 15..34 share: the sliding ones read layer 13 (the last
// sliding layer before 15), the full ones (19, 24, 29, 34) layer 14.
// KV kept: layers 0..14, 12 sliding of 1 x 256 x 2 (K, V) x 2 B = 1,024 B a
// token and 3 full of 1 x 512 x 2 x 2 B = 2,048 B: 12,288 + 6,144 = 18,432 B
// a token. At 32,768 tokens the sliding layers hold their 512-token window:
// 12 x 1,024 x 512 + 6,144 x 32,768 = 6,291,456 + 201,326,592 = 207,618,048 B
// (all 35 layers keeping their own would be 28 x 1,024 x 512 + 7 x 2,048 x
// 32,768 = 484,442,112 B).
TEST(KvSharingTest, Gemma4E2bKeepsFifteenLayersOfKv) {
  const ModelShape m = Parse(Gemma4E2b());
  ASSERT_EQ(m.layers.size(), 35u);
  EXPECT_EQ(m.layers[14].kv_source, -1);
  EXPECT_EQ(m.layers[15].kv_source, 13);
  EXPECT_EQ(m.layers[19].kv_source, 14);
  EXPECT_EQ(m.layers[34].kv_source, 14);
  EXPECT_EQ(m.layers[33].kv_source, 13);
  EXPECT_EQ(m.layers[19].qk_head_dim, 512);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 18432.0);
  EXPECT_EQ(Footprint(m, Fmt("bf16"), k32k, 16).kv_bytes, 207618048);

  // Parameters. Sliding attention: q 2,048 x 1,536 + k and v 256 x 1,536
  // each + o 1,536 x 2,048 = 7,077,888, q and k norms 512: 7,078,400 (x 28).
  // Full: q 4,096 x 1,536 + k, v 512 x 1,536 + o 1,536 x 4,096 = 14,155,776,
  // norms 1,024: 14,156,800 (x 7). Together 297,292,800.
  // MLPs: 15 x 3 x 1,536 x 6,144 + 20 x 3 x 1,536 x 12,288 = 424,673,280 +
  // 1,132,462,080 = 1,557,135,360. Norms and layer scalars: 35 x (4 x 1,536
  // + 1) = 215,075. Per-layer gate and projection 2 x 256 x 1,536 and a norm
  // of 1,536: 35 x 787,968 = 27,578,880.
  // Model: embedding 262,144 x 1,536 = 402,653,184; per-layer table 262,144 x
  // (35 x 256) = 2,348,810,240; its projection 8,960 x 1,536 = 13,762,560;
  // norms 256 + 1,536. Sum: 4,647,449,891, of which all but the per-layer
  // table is 2,298,639,651 (Google's "2.3B effective" for E2B).
  EXPECT_EQ(m.params.Total(), 4647449891);
  EXPECT_EQ(m.params.embedding, 402653184 + 2348810240);
  // The per-layer table is gathered, not streamed, each step (it is not the
  // tied lm_head): 2,348,810,240 x 2 B.
  auto w = ComputeWeightBytes(m, "auto");
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->gathered_embedding, 4697620480);
}

// Gemma 3n E2B. Layers 20..29 share: sliding ones read layer 18, full ones
// (24, 29) layer 19 (vLLM gemma3n.py: first shared - 2 and - 1). KV kept:
// layers 0..19, 16 sliding and 4 full, each 2 x 256 x 2 x 2 B = 2,048 B a
// token: 40,960 B. At 32,768 tokens: 16 x 2,048 x 512 + 4 x 2,048 x 32,768 =
// 16,777,216 + 268,435,456 = 285,212,672 B.
TEST(KvSharingTest, Gemma3nE2bKeepsTwentyLayersOfKv) {
  const ModelShape m = Parse(Gemma3nE2b());
  ASSERT_EQ(m.layers.size(), 30u);
  EXPECT_FALSE(m.generic_rule);
  EXPECT_EQ(m.layers[20].kv_source, 18);
  EXPECT_EQ(m.layers[24].kv_source, 19);
  EXPECT_EQ(m.layers[19].kv_source, -1);
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingWindow), 24);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 40960.0);
  EXPECT_EQ(Footprint(m, Fmt("bf16"), k32k, 16).kv_bytes, 285212672);

  // Parameters, per layer: attention q 2,048 x 2,048 + k, v 512 x 2,048 + o
  // 2,048 x 2,048 = 10,485,760 and q, k norms 512; MLP 3 x 2,048 x 8,192 =
  // 50,331,648; AltUp router 2,048 x 4 + coefficients 64 + 16, its norm and
  // output scale 2 x 2,048; LAuReL 2 x 2,048 x 64 = 262,144 and its norm
  // 2,048; per-layer gate and projection 2 x 2,048 x 256 = 1,048,576 and
  // norm 2,048; four norms 8,192: 62,153,296, x 30 = 1,864,598,880.
  // Model: embedding 262,400 x 2,048 = 537,395,200; per-layer table 262,144
  // x 7,680 = 2,013,265,920; its projection 2,048 x 7,680 = 15,728,640 and
  // norm 256; AltUp projections in and out 2 x 3 x 2,048^2 = 25,165,824;
  // final norm 2,048: 2,591,557,888. Total 4,456,156,768.
  EXPECT_EQ(m.params.Total(), 4456156768);
}

// A sharing layer still reads its source's cache every step: the roofline's
// reads count all 35 layers of Gemma 4 E2B, its writes the 15 that keep
// KV. At 32,768 tokens: 484,442,112 B read (worked above); 18,432 B written
// a token.
TEST(KvSharingTest, SharingLayersReadTheirSourcesCache) {
  const ModelShape m = Parse(Gemma4E2b());
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  auto r = Roofline::Make(m, Fmt("bf16"), "auto", *gpu, RooflineParams{1, 0.7, 0.6, 0});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_DOUBLE_EQ(r->KvReadBytes(k32k), 484442112.0);
  EXPECT_DOUBLE_EQ(r->KvWriteBytesPerToken(), 18432.0);
  // vLLM's cache groups leave the sharing layers out: 12 sliding and 3 full
  // layers, groups of 3 (4 sliding groups, 1 full).
  const KvGroupLayout layout = MakeKvGroupLayout(m, Fmt("bf16"), 1, 16);
  EXPECT_EQ(layout.layers_per_group, 3);
  int layers = 0;
  for (const KvCacheGroup& g : layout.groups) layers += g.layers;
  EXPECT_EQ(layers, 15);
  EXPECT_EQ(layout.groups.size(), 5u);
}

// Gemma 4 E2B's audio tower (gemma4_audio at Gemma4AudioConfig's defaults:
// hidden 1,024, 12 layers of 8 heads, kernel 5, subsampling channels 128
// and 32, output 1,536, clipped linears), worked from transformers'
// Gemma4AudioModel:
//   subsampling 9 x 128 + 128 + 9 x 128 x 32 + 32 + 1,024 x (128 / 4) x 32 =
//   1,152 + 128 + 36,864 + 32 + 1,048,576 = 1,086,752;
//   a layer: feed-forwards 2 x 2 x 4 x 1,024^2 = 16,777,216; q, k, v, out and
//   relative-key 5 x 1,024^2 = 5,242,880; light conv 3 x 1,024^2 =
//   3,145,728, kernel 5 x 1,024 = 5,120; nine norms 9,216; per-dim scale
//   128; 40 clipping bounds: 25,180,328, x 12 = 302,163,936;
//   output projection 1,536 x 1,024 + 1,536 = 1,574,400;
//   into the text model 1,536 x 1,536 = 2,359,296.
// Sum 307,184,384 (Google's card: "~300M" audio encoder).
TEST(KvSharingTest, Gemma4AudioTowerIsCounted) {
  const std::string text = Gemma4E2b();
  auto m = ParseHfConfig(R"({"model_type": "gemma4", "audio_config": {"model_type":
      "gemma4_audio", "hidden_size": 1024, "num_hidden_layers": 12, "num_attention_heads": 8,
      "subsampling_conv_channels": [128, 32], "conv_kernel_size": 5, "output_proj_dims": 1536,
      "use_clipped_linears": true}, "text_config": )" +
                             text + "}",
                         "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.audio, 307184384);
  EXPECT_EQ(m->params.Total(), 4647449891 + 307184384);
  auto bad = ParseHfConfig(R"({"model_type": "gemma4", "audio_config": {"model_type":
      "gemma4_audio", "subsampling_conv_channels": [128]}, "text_config": )" +
                               text + "}",
                           "c.json", "c");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "c.json: audio_config.subsampling_conv_channels: must be two positive channel counts");
}

// Sharing nothing can be read is refused, naming the key.
TEST(KvSharingTest, SharingWithoutASourceIsRefused) {
  const std::string base = R"({"model_type": "gemma4_text", "num_hidden_layers": 6,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16,
      "global_head_dim": 32, "vocab_size": 100, "intermediate_size": 128,
      "hidden_size_per_layer_input": 0, )";
  // Layers 0..4 sliding, 5 full (the default pattern): sharing the last
  // layer leaves no full layer before it.
  auto no_full = ParseHfConfig(base + R"("num_kv_shared_layers": 1})", "c.json", "c");
  ASSERT_FALSE(no_full.ok());
  EXPECT_EQ(no_full.error().message(),
            "c.json: num_kv_shared_layers: is 1: layer 5 is full attention and reads the cache "
            "of the last full layer before layer 5, but there is none (vLLM cannot build this "
            "model)");
  auto all = ParseHfConfig(base + R"("num_kv_shared_layers": 6})", "c.json", "c");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().message(),
            "c.json: num_kv_shared_layers: is 6, but the model has 6 layers: no layer would keep "
            "a cache to share");
  auto bad = ParseHfConfig(base + R"("num_kv_shared_layers": -1})", "c.json", "c");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message().rfind("c.json: num_kv_shared_layers: ", 0), 0u);
  // Gemma 3n's per-layer MLP sizes must cover every layer.
  auto short_list = ParseHfConfig(R"({"model_type": "gemma3n_text", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16,
      "vocab_size": 100, "num_kv_shared_layers": 0, "intermediate_size": [128]})",
                                  "c.json", "c");
  ASSERT_FALSE(short_list.ok());
  EXPECT_EQ(short_list.error().message(),
            "c.json: intermediate_size: has 1 entries, num_hidden_layers is 2");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
