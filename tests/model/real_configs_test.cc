// Every config.json of tests/data/configs/ (manifest.json names its
// repository, path and commit): the KV bytes per token and the state bytes
// per sequence its modeling code implies, worked out by hand below, the
// layer inventory's kinds, and parameters against the published checkpoint
// (safetensors index total_size / bytes per parameter) or model card.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "kvbill/hardware/fit.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const std::string kDir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/";

ModelShape Load(const std::string& file) {
  auto m = LoadModel(kDir + file);
  EXPECT_TRUE(m.ok()) << file << ": " << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

// What a published figure counts.
enum class Count {
  kCheckpoint,          // every tensor of the checkpoint (MTP modules too)
  kTotal,               // what a server loads (no MTP modules)
  kText,                // the language model alone (no towers, no MTP)
  kActive,              // per token, input embedding included
  kActiveNoEmbedding,   // per token, input embedding left out
  kActiveNoEmbeddings,  // per token, input embedding and lm_head left out
  kNoEmbedding,         // total without the input embedding
};

std::int64_t CountOf(const ParamCounts& p, Count c) {
  switch (c) {
    case Count::kCheckpoint:
      return p.Checkpoint();
    case Count::kTotal:
      return p.Total();
    case Count::kText:
      return p.Total() - p.vision - p.audio;
    case Count::kActive:
      return p.Active();
    case Count::kActiveNoEmbedding:
      return p.Active() - p.embedding;
    case Count::kActiveNoEmbeddings:
      return p.Active() - p.embedding - p.lm_head;
    case Count::kNoEmbedding:
      return p.Total() - p.embedding;
  }
  return 0;
}

struct Published {
  double value = 0;      // parameters; 0: no figure
  double tolerance = 0;  // relative: 1% against a checkpoint, 3% against a rounded card figure
  Count count = Count::kTotal;
};

struct Expected {
  const char* file;
  std::int64_t bytes_per_token;  // bf16 KV, every per-token layer at its per-token rate
  std::int64_t state_bytes;      // per sequence, the model dtype (and the SSM dtype it names)
  const char* kinds;             // inventory entries by kind
  Published total;
  Published active;
};

// KV bytes per token, worked from each config and its family's modeling
// code (bf16: 2 bytes; K and V: x 2; per layer: KV heads x head dim):
//
// bloom: MHA, 112 heads of 14336 / 112 = 128: 70 x 112 x 128 x 2 x 2 = 4,014,080.
// deepseek-v3, kimi-k2*: MLA latent kv_lora_rank 512 + rope 64: 61 x 576 x 2 = 70,272.
// deepseek-v3.2: the latent plus the indexer key (index_head_dim 128 in fp8
//   with one fp32 scale per 128: 132 bytes): 61 x (1,152 + 132) = 78,324.
// devstral (mistral, sliding_window null: full): 40 x 8 x 128 x 4 = 163,840.
// exaone-4.0-1.2b: 30 x 8 x 64 x 4 = 61,440.
// falcon-180b (new_decoder_architecture: num_kv_heads 8; 14848 / 232 = 64):
//   80 x 8 x 64 x 4 = 163,840.
// gemma-2-9b: 42 x 8 x 256 x 4 = 344,064 (21 sliding of 4,096).
// glm-4.7-flash: MLA 47 x 576 x 2 = 54,144.   glm-4.7: 92 x 8 x 128 x 4 = 376,832.
// glm-5: MLA + indexer (128): 78 x (1,152 + 132) = 100,152.
// glm-5.2: 78 x 1,152 + 21 indexer layers x 132 = 92,628 (57 layers reuse the previous top-k).
// gpt-oss-120b: 36 x 8 x 64 x 4 = 73,728 (18 sliding of 128).
// granite-3.1-1b-a400m: 24 x 8 x 64 x 4 = 49,152.
// hunyuan-a13b: 32 x 8 x 128 x 4 = 131,072 (use_cla false: every layer its own KV).
// jamba-1.5-mini: attention at layers 4, 12, 20, 28: 4 x 8 x 128 x 4 = 16,384.
//   Mamba-1 state (vLLM): (d_conv - 1) x d_inner + d_inner x d_state with
//   d_inner = 2 x 4096: 28 x (3 x 8192 + 8192 x 16) x 2 = 8,716,288.
// lfm2-1.2b: attention at full_attn_idxs (6 layers), 2048 / 32 = 64:
//   6 x 8 x 64 x 4 = 12,288. Conv state (vLLM short conv): (L_cache - 1) x
//   hidden per conv layer: 10 x 2 x 2048 x 2 = 81,920.
// llama-3.1-8b, mixtral: 32 x 8 x 128 x 4 = 131,072.
// llama-3.3-nemotron-super-49b: 49 attention blocks with n_heads_in_group 8
//   (64 / 8 = 8 KV heads), 31 no-op: 49 x 8 x 128 x 4 = 200,704.
// llama-4-scout: 48 x 8 x 128 x 4 = 196,608 (36 chunked of 8,192).
// medgemma-27b (Gemma 3): 62 x 16 x 128 x 4 = 507,904 (52 sliding of 1,024).
// gemma-4-26b-a4b: 5 full x 2 x 512 x 4 + 25 sliding x 8 x 256 x 4 = 20,480 + 204,800 = 225,280.
// mimo-7b: 36 x 8 x 128 x 4 = 147,456.
// mimo-v2-flash: pattern 0 (full) at 9 layers with 4 KV heads of K 192 + V
//   128; 39 sliding (128) layers with swa_num_key_value_heads 8 of 192 + 128:
//   9 x 4 x 320 x 2 + 39 x 8 x 320 x 2 = 23,040 + 199,680 = 222,720.
// minimax-m1: softmax at every 8th layer: 10 x 8 x 128 x 4 = 40,960; 70
//   lightning layers keep heads x head_dim x head_dim: 70 x 64 x 128 x 128 x 2
//   = 146,800,640.
// minimax-m2.5: 62 x 8 x 128 x 4 = 253,952.
// minimax-m3: 60 x 4 x 128 x 4 = 122,880, and the 57 layers sparse_attention_freq
//   marks keep one bf16 indexer key of sparse_index_dim 128 (vLLM
//   minimax_m3/common/indexer.py: num_kv_heads 1, key only): 57 x 256 =
//   14,592; 137,472.
// deepseek-v4-flash (and its sgl-project FP8 copy): compress_ratios [0, 0,
//   then 4, 128 alternating, 4] over 43 layers: 2 window-only, 21 ratio 4, 20
//   ratio 128. In bf16 the 512-wide latent is 1,024 B, the indexer key fp8
//   with an fp32 scale 132 B (vLLM's indexer cache whatever the KV format):
//   21 x (1,024 + 132) / 4 + 20 x 1,024 / 128 = 6,069 + 160 = 6,229 a token;
//   the 128-token windows are a constant of the footprint. fp32 compressor
//   state per sequence (vLLM CompressorStateCache): ratio 4: 2 x 8 x 1,024 x
//   4 + its indexer's 2 x 8 x 256 x 4 = 81,920; ratio 128: 2 x 128 x 512 x 4
//   = 524,288: 21 x 81,920 + 20 x 524,288 = 12,206,080.
// mistral-small-3.1-24b: 40 x 8 x 128 x 4 = 163,840.   muse-glimmer-30b:
//   52 x 2 x 128 x 4 = 53,248 (39 sliding of 2,048).
// laguna-xs.2: 40 x 8 x 128 x 4 = 163,840 (30 sliding of 512; the 48 / 64
//   query heads per layer do not touch the KV).  laguna-s-2.1: 48 x 8 x 128
//   x 4 = 196,608 (36 sliding).
// kimi-k3: MLA on the 24 layers kda_layers (1-based) leaves out: 24 x 576 x
//   2 = 27,648; 69 Kimi Delta Attention layers of 96 heads of 128 (vLLM
//   kda_state_shape / kda_state_dtype): conv 3 x 12,288 x (4 - 1) x 2 +
//   recurrent 96 x 128 x 128 x 4 (always fp32) = 221,184 + 6,291,456 =
//   6,512,640 each: 449,372,160.
// nemotron-3-nano: 6 '*' layers of 2 KV heads: 6 x 2 x 128 x 4 = 6,144; 23 'M'
//   Mamba-2 layers: conv (4 - 1) x (64 x 64 + 2 x 8 x 128) in bf16 and SSM
//   64 x 64 x 128 in fp32 (mamba_ssm_cache_dtype): 23 x (3 x 6,144 x 2 +
//   524,288 x 4) = 49,082,368. The 23 'E' layers keep nothing.
// nemotron-3-super: 8 '*' layers of 2 KV heads: 8 x 2 x 128 x 4 = 8,192; 40
//   'M' layers: conv 3 x (128 x 64 + 2 x 8 x 128) x 2 B = 61,440 and SSM
//   128 x 64 x 128 x 4 B (fp32) = 4,194,304: 40 x 4,255,744 = 170,229,760.
// nemotron-h-56b: 10 '*' layers: 10 x 8 x 128 x 4 = 40,960; 54 'M' layers:
//   conv 3 x (256 x 64 + 2 x 8 x 256) x 2 + SSM 256 x 64 x 256 x 4 (the
//   class default fp32) = 16,900,096 each: 912,605,184.
// olmocr (Qwen2-VL-7B), qwen2.5-7b: 28 x 4 x 128 x 4 = 57,344.
// openpangu-embedded-7b: 34 x 8 x 128 x 4 = 139,264.
// qwen-72b (Qwen v1, MHA, kv_channels 128): 80 x 64 x 128 x 4 = 2,621,440.
// phi-4: 40 x 10 x 128 x 4 = 204,800 (every layer slides, window 16,384).
// phi-tiny-moe: 32 x 4 x 128 x 4 = 65,536 (every layer slides, window 2,047).
// qwen3-30b-a3b, qwen3-vl-30b: 48 x 4 x 128 x 4 = 98,304.
// qwen3-32b: 64 x 8 x 128 x 4 = 262,144.   qwen3-8b, qwen3-vl-8b: 36 x 8 x 128 x 4 = 147,456.
// qwen3-next: full every 4th layer: 12 x 2 x 256 x 4 = 24,576; 36 gated
//   DeltaNet layers: conv 3 x (2 x 16 x 128 + 32 x 128) + 32 x 128 x 128 in
//   bf16: 36 x 548,864 x 2 = 39,518,208.
// qwen3.5-27b: 16 x 4 x 256 x 4 = 65,536; 48 DeltaNet layers: conv 3 x
//   (2 x 16 x 128 + 48 x 128) x 2 + 48 x 128 x 128 x 4 (mamba_ssm_dtype
//   float32) = 3,207,168 each: 153,944,064.
// qwen3.6-35b-a3b (NVFP4): 10 x 2 x 256 x 4 = 20,480; 30 DeltaNet layers:
//   conv 3 x (2 x 16 x 128 + 32 x 128) x 2 + 32 x 128 x 128 x 4 = 2,146,304
//   each: 64,389,120.
// qwen3.5-397b (and NVFP4): 15 x 2 x 256 x 4 = 30,720; 45 DeltaNet layers:
//   conv 3 x (4,096 + 8,192) x 2 + 64 x 128 x 128 x 4 = 4,268,032 each:
//   192,061,440.
// smollm3-3b: 36 x 4 x 128 x 4 = 73,728.
// chatglm3-6b: multi_query_group_num 2 KV heads of kv_channels 128 (vLLM's
//   get_total_num_kv_heads reads it "for ChatGLM"): 28 x 2 x 128 x 4 = 28,672.
// phi-2 (phi-msft, MHA, 2560 / 32 = 80): 32 x 32 x 80 x 4 = 327,680.
// redpajama-incite-3b (gpt_neox): the same shape, 327,680.
// starcoder2-7b: 32 x 4 x 128 x 4 = 65,536 (every layer slides, window 4,096).
// santacoder (gpt_bigcode, multi_query: one KV head of 2048 / 16 = 128):
//   24 x 1 x 128 x 4 = 12,288.
// gemma-2b: 18 x 1 x 256 x 4 = 18,432.
// aya-23-8b: 32 x 8 x 128 x 4 = 131,072.   command-r-v01: 40 x 64 x 128 x 4 = 1,310,720.
//
// Parameters: "index" figures are total_size / 2 of the checkpoint's
// model.safetensors.index.json (bf16), kept beside the config in the same
// repository; the others are the model cards' (huggingface.co/<model>).
const std::vector<Expected>& Table() {
  static const std::vector<Expected> t = {
      // bigscience/bloom index: 352,494,542,848 / 2.
      {"bloom.json", 4014080, 0, "full=70", {176247271424.0, 0.01, Count::kCheckpoint}, {}},
      // Worked by hand (ExactCountsOfFamiliesWithTheirOwnBlocks): 6,243,584,000
      // (Hugging Face's figure for THUDM/chatglm3-6b: 6.24B).
      {"chatglm3-6b.json", 28672, 0, "full=28", {6243584000.0, 0.001, Count::kTotal}, {}},
      {"phi-2.json", 327680, 0, "full=32", {2779683840.0, 0.001, Count::kTotal}, {}},
      {"redpajama-incite-3b.json", 327680, 0, "full=32", {2775864320.0, 0.001, Count::kTotal}, {}},
      {"starcoder2-7b.json", 65536, 0, "sliding=32", {7173923840.0, 0.001, Count::kTotal}, {}},
      {"santacoder.json", 12288, 0, "full=24", {1124886528.0, 0.001, Count::kTotal}, {}},
      {"gemma-2b.json", 18432, 0, "full=18", {2506172416.0, 0.001, Count::kTotal}, {}},
      {"aya-23-8b.json", 131072, 0, "full=32", {8028033024.0, 0.001, Count::kTotal}, {}},
      // Card: 35B.
      {"command-r-v01.json", 1310720, 0, "full=40", {35e9, 0.01, Count::kTotal}, {}},
      // Card: 671B main model + 14B MTP module = 685B; 37B activated.
      {"deepseek-v3.json",
       70272,
       0,
       "mla=61",
       {685e9, 0.03, Count::kCheckpoint},
       {37e9, 0.03, Count::kActive}},
      // Card: 685B (the V3 shape plus indexers).
      {"deepseek-v3.2.json", 78324, 0, "mla_indexer=61", {685e9, 0.03, Count::kCheckpoint}, {}},
      // Card: 284B total, 13B activated (ExactCountsOfDeepSeekV4).
      {"deepseek-v4-flash.json",
       6229,
       12206080,
       "compressed=43",
       {284e9, 0.01, Count::kTotal},
       {13e9, 0.03, Count::kActiveNoEmbedding}},
      {"deepseek-v4-flash-fp8-sgl.json",
       6229,
       12206080,
       "compressed=43",
       {284e9, 0.01, Count::kTotal},
       {13e9, 0.03, Count::kActiveNoEmbedding}},
      {"deepseek-v4-flash-nvfp4.json",
       6229,
       12206080,
       "compressed=43",
       {284e9, 0.01, Count::kTotal},
       {13e9, 0.03, Count::kActiveNoEmbedding}},
      {"deepseek-v4-flash-nvfp4-fp8-redhat.json",
       6229,
       12206080,
       "compressed=43",
       {284e9, 0.01, Count::kTotal},
       {13e9, 0.03, Count::kActiveNoEmbedding}},
      // fetchwiki/mistralai-Devstral-Small-2507 index: total_parameters 23,572,403,200.
      {"devstral-small-2507.json",
       163840,
       0,
       "full=40",
       {23572403200.0, 0.01, Count::kCheckpoint},
       {}},
      // EXAONE 4.0 card: 1.07B parameters without embeddings (the quantized
      // derivative has the same shape).
      {"exaone-4.0-1.2b-w4a16.json", 61440, 0, "full=30", {1.07e9, 0.03, Count::kNoEmbedding}, {}},
      // falcon-180B-chat index: 359,045,130,240 / 2 = 179,522,565,120. It
      // stores a separate lm_head copy that FalconConfig's tie_word_embeddings
      // default (true) does not load: 965,476,352 fewer, 0.54%.
      {"falcon-180b-chat.json", 163840, 0, "full=80", {179522565120.0, 0.01, Count::kTotal}, {}},
      // Gemma 2 report: 9,241,705,984.
      {"gemma-2-9b.json", 344064, 0, "full=21 sliding=21", {9241705984.0, 0.01, Count::kTotal}, {}},
      // Card: 30B-A3B.
      {"glm-4.7-flash.json", 54144, 0, "mla=47", {30e9, 0.03, Count::kTotal}, {}},
      // GLM-4.5 card (the same architecture): 355B total, 32B active; GLM
      // counts activated parameters without the embedding and the output
      // layer (so does GLM-4.5-Air's 12B, hf_config_test.cc).
      {"glm-4.7-fp8.json",
       376832,
       0,
       "full=92",
       {355e9, 0.03, Count::kTotal},
       {32e9, 0.03, Count::kActiveNoEmbeddings}},
      // Card: 744B total, 40B active.
      {"glm-5.json",
       100152,
       0,
       "mla_indexer=78",
       {744e9, 0.03, Count::kTotal},
       {40e9, 0.03, Count::kActiveNoEmbedding}},
      // GLM-5's architecture (card: 744B total, 40B active) less the indexers of the 57
      // layers indexer_types marks "shared": 57 x (2,048 x 4,096 + 6,144 x 128 + 128 + 128
      // + 6,144 x 32) = 0.53B (wq_b, wk, k_norm, weights_proj).
      {"glm-5.2.json",
       92628,
       0,
       "mla=57 mla_indexer=21",
       {744e9, 0.03, Count::kTotal},
       {40e9, 0.03, Count::kActiveNoEmbedding}},
      // OpenAI model card: 116.83B total, 5.13B active (without the input embedding).
      {"gpt-oss-120b.json",
       73728,
       0,
       "full=18 sliding=18",
       {116.83e9, 0.01, Count::kTotal},
       {5.13e9, 0.01, Count::kActiveNoEmbedding}},
      // Card: 1.3B total.
      {"granite-3.1-1b-a400m-instruct.json", 49152, 0, "full=24", {1.3e9, 0.03, Count::kTotal}, {}},
      // Card: 80B total, 13B active.
      {"hunyuan-a13b-instruct.json",
       131072,
       0,
       "full=32",
       {80e9, 0.03, Count::kTotal},
       {13e9, 0.03, Count::kActive}},
      // AI21: 52B total, 12B active.
      {"jamba-1.5-mini.json",
       16384,
       8716288,
       "full=4 mamba=28",
       {52e9, 0.01, Count::kTotal},
       {12e9, 0.01, Count::kActive}},
      // Card: 1T total, 32B activated.
      {"kimi-k2-instruct.json",
       70272,
       0,
       "mla=61",
       {1e12, 0.03, Count::kTotal},
       {32e9, 0.03, Count::kActive}},
      {"kimi-k2.5.json",
       70272,
       0,
       "mla=61",
       {1e12, 0.03, Count::kTotal},
       {32e9, 0.03, Count::kActive}},
      // Hugging Face's collection lists Kimi-K3 at 2.8T (vision tower
      // included); no activated count is published.
      {"kimi-k3.json", 27648, 449372160, "mla=24 linear=69", {2.8e12, 0.01, Count::kTotal}, {}},
      // No published figure for Laguna-S-2.1: the count worked by hand
      // (ExactCountsOfRecentFamilies).
      {"laguna-s-2.1-fp8.json",
       196608,
       0,
       "full=12 sliding=36",
       {117561977600.0, 1e-12, Count::kTotal},
       {8449256192.0, 1e-12, Count::kActive}},
      // SGLang's cookbook: 33.4B total, 3.0B active per token.
      {"laguna-xs.2-fp8.json",
       163840,
       0,
       "full=10 sliding=30",
       {33.4e9, 0.01, Count::kTotal},
       {3.0e9, 0.01, Count::kActive}},
      // keras-hub's mistral3 preset mistral_small_3.1_24b: 24,011,361,280
      // (ExactCountsOfRecentTowers).
      {"mistral-small-3.1-24b.json",
       163840,
       0,
       "full=40",
       {24011361280.0, 1e-12, Count::kTotal},
       {}},
      // keras-hub's preset and Hugging Face: 29,776,626,688 (ExactCountsOfRecentTowers).
      {"muse-glimmer-30b.json",
       53248,
       0,
       "full=13 sliding=39",
       {29776626688.0, 1e-12, Count::kTotal},
       {}},
      // Card: 1,170,340,608 parameters.
      {"lfm2-1.2b.json", 12288, 81920, "full=6 conv=10", {1170340608.0, 0.01, Count::kTotal}, {}},
      // meta-llama index: 16,060,522,496 / 2.
      {"llama-3.1-8b.json", 131072, 0, "full=32", {8030261248.0, 0.01, Count::kTotal}, {}},
      // Card: 49B.
      {"llama-3.3-nemotron-super-49b-v1.json",
       200704,
       0,
       "full=49 none=31",
       {49e9, 0.03, Count::kTotal},
       {}},
      // Card: 25.2B total (the text model; the vision encoder "about 550M" beside it),
      // 3.8B active. Worked: embedding 262,144 x 2,816 = 738.2M (tied); attention 25 sliding
      // layers x (2 x 16 + 2 x 8) x 256 x 2,816 = 865.0M and 5 full x (2 x 16 + 2 x 2) x 512
      // x 2,816 = 259.5M; dense MLPs 30 x 3 x 2,816 x 2,112 = 535.3M; experts 30 x 128 x 3 x
      // 2,816 x 704 = 22.84B, 8 of 128 active (1.43B); routers 30 x 128 x 2,816 = 10.8M:
      // 25.25B, 3.84B active. KV: 5 full x 2 x 2 x 512 x 2 B + 25 sliding x 2 x 8 x 256 x 2 B.
      {"gemma-4-26b-a4b.json",
       225280,
       0,
       "full=5 sliding=25",
       {25.2e9, 0.01, Count::kText},
       {3.8e9, 0.02, Count::kActive}},
      // Card: 109B total with the vision encoder, 17B active.
      {"llama-4-scout-17b-16e-instruct.json",
       196608,
       0,
       "full=12 chunked=36",
       {109e9, 0.03, Count::kTotal},
       {17e9, 0.03, Count::kActive}},
      // Ibtasam-98/medgemma-27b-it index: 54,864,813,280 / 2 (SigLIP tower included).
      {"medgemma-27b-it.json",
       507904,
       0,
       "full=10 sliding=52",
       {27432406640.0, 0.01, Count::kTotal},
       {}},
      // Hugging Face's safetensors metadata for XiaomiMiMo/MiMo-7B-Base: 7.83B (MTP layer
      // included).
      {"mimo-7b-base.json", 147456, 0, "full=36", {7.83e9, 0.01, Count::kCheckpoint}, {}},
      // Card: 309B total, 15B active.
      {"mimo-v2-flash.json",
       222720,
       0,
       "full=9 sliding=39",
       {309e9, 0.03, Count::kTotal},
       {15e9, 0.03, Count::kActive}},
      // Card: 456B total, 45.9B activated (embedding and lm_head left out).
      {"minimax-m1.json",
       40960,
       146800640,
       "full=10 linear=70",
       {456e9, 0.03, Count::kTotal},
       {45.9e9, 0.03, Count::kActiveNoEmbeddings}},
      // MiniMax-M2 card: 230B total, 10B active (embedding and lm_head left out).
      {"minimax-m2.5.json",
       253952,
       0,
       "full=62",
       {230e9, 0.03, Count::kTotal},
       {10e9, 0.03, Count::kActiveNoEmbeddings}},
      // Card: ~428B total (the vision tower of the VL release, ~0.6B, is
      // not in this text config), ~23B activated (embedding and lm_head
      // left out).
      {"minimax-m3.json",
       137472,
       0,
       "full=60",
       {428e9, 0.01, Count::kTotal},
       {23e9, 0.03, Count::kActiveNoEmbeddings}},
      // Mistral AI: 46.7B total, 12.9B active.
      {"mixtral-8x7b-v0.1.json",
       131072,
       0,
       "full=32",
       {46.7e9, 0.01, Count::kTotal},
       {12.9e9, 0.01, Count::kActive}},
      // Card: 31.6B total, 3.6B active with embeddings.
      {"nemotron-3-nano-30b-a3b.json",
       6144,
       49082368,
       "full=6 mamba=23 none=23",
       {31.6e9, 0.01, Count::kTotal},
       {3.6e9, 0.03, Count::kActive}},
      // Card: 120B total (its 12B active is rounded past 3%).
      {"nemotron-3-super-120b-a12b-fp8.json",
       8192,
       170229760,
       "full=8 mamba=40 none=40",
       {120e9, 0.03, Count::kTotal},
       {}},
      // Card: 56B.
      {"nemotron-h-56b-base-8k.json",
       40960,
       912605184,
       "full=10 mamba=54 none=54",
       {56e9, 0.03, Count::kTotal},
       {}},
      // IDLEOAK/openpangu-lightweight-methods index: 16,061,784,576 / 2 =
      // 8,030,892,288; it also stores each layer's rotary inv_freq buffer
      // (64 fp32 = 128 bf16-sized units x 34 = 4,352), which is no parameter.
      {"openpangu-embedded-7b.json", 139264, 0, "full=34", {8030892288.0, 0.01, Count::kTotal}, {}},
      // BrianYAU-NTEC/olmOCR index: 16,582,751,232 / 2 (vision tower included).
      {"olmocr-qwen2-vl-7b.json", 57344, 0, "full=28", {8291375616.0, 0.01, Count::kTotal}, {}},
      // Hugging Face's safetensors metadata for microsoft/phi-4: 14.7B.
      {"phi-4.json", 204800, 0, "sliding=40", {14.7e9, 0.01, Count::kTotal}, {}},
      // Card: 3.8B total.
      {"phi-tiny-moe-instruct.json", 65536, 0, "sliding=32", {3.8e9, 0.03, Count::kTotal}, {}},
      // mapengAdam/qianwen-72B index: 144,575,840,256 / 2.
      {"qwen-72b.json", 2621440, 0, "full=80", {72287920128.0, 0.01, Count::kTotal}, {}},
      // Card: 7.61B.
      {"qwen2.5-7b.json", 57344, 0, "full=28", {7.61e9, 0.01, Count::kTotal}, {}},
      // Card: 30.5B total, 3.3B activated.
      {"qwen3-30b-a3b.json",
       98304,
       0,
       "full=48",
       {30.5e9, 0.01, Count::kTotal},
       {3.3e9, 0.03, Count::kActive}},
      // Card: 32.8B.
      {"qwen3-32b-fp8.json", 262144, 0, "full=64", {32.8e9, 0.01, Count::kTotal}, {}},
      // Card: 8.2B.
      {"qwen3-8b.json", 147456, 0, "full=36", {8.2e9, 0.01, Count::kTotal}, {}},
      // Card: 80B total.
      {"qwen3-next-80b-a3b-thinking.json",
       24576,
       39518208,
       "full=12 linear=36",
       {80e9, 0.01, Count::kTotal},
       {}},
      // Hugging Face's safetensors metadata: 31.1B (vision tower included).
      {"qwen3-vl-30b-a3b-instruct.json", 98304, 0, "full=48", {31.1e9, 0.01, Count::kTotal}, {}},
      // Hugging Face's safetensors metadata: 8.77B (vision tower included).
      {"qwen3-vl-8b-instruct.json", 147456, 0, "full=36", {8.77e9, 0.01, Count::kTotal}, {}},
      // Card: the language model has 27B parameters.
      {"qwen3.5-27b.json", 65536, 153944064, "full=16 linear=48", {27e9, 0.03, Count::kText}, {}},
      // Card: 35B total.
      {"qwen3.6-35b-a3b-nvfp4.json",
       20480,
       64389120,
       "full=10 linear=30",
       {35e9, 0.03, Count::kTotal},
       {}},
      // Card: 397B total, 17B activated.
      {"qwen3.5-397b-a17b.json",
       30720,
       192061440,
       "full=15 linear=45",
       {397e9, 0.03, Count::kTotal},
       {17e9, 0.03, Count::kActive}},
      {"qwen3.5-397b-a17b-nvfp4.json",
       30720,
       192061440,
       "full=15 linear=45",
       {397e9, 0.03, Count::kTotal},
       {17e9, 0.03, Count::kActive}},
      // fetchwiki/HuggingFaceTB-SmolLM3-3B index: total_parameters 3,075,098,624
      // (the tied lm_head is not stored).
      {"smollm3-3b.json", 73728, 0, "full=36", {3075098624.0, 0.01, Count::kTotal}, {}},
  };
  return t;
}

std::map<std::string, int> ParseKinds(const std::string& text) {
  std::map<std::string, int> out;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    const auto eq = item.find('=');
    out[item.substr(0, eq)] = std::stoi(item.substr(eq + 1));
  }
  return out;
}

TEST(RealConfigsTest, TheTableCoversEveryFileOfTheManifest) {
  std::ifstream in(kDir + "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  std::set<std::string> listed, tested, families, on_disk;
  for (const auto& c : manifest["configs"]) {
    listed.insert(c["file"].get<std::string>());
    families.insert(c["model_type"].get<std::string>());
    // Where it came from: a repository and a path (and a commit for those
    // outside this project).
    EXPECT_FALSE(c["repository"].get<std::string>().empty());
    EXPECT_FALSE(c["path"].get<std::string>().empty());
    if (!c["repository"].get<std::string>().starts_with("(kvbill")) {
      EXPECT_EQ(c["commit"].get<std::string>().size(), 40u) << c["file"];
    }
  }
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    if (e.path().extension() == ".json" && e.path().filename() != "manifest.json") {
      on_disk.insert(e.path().filename().string());
    }
  }
  for (const Expected& e : Table()) tested.insert(e.file);
  EXPECT_EQ(listed, on_disk);
  EXPECT_EQ(tested, on_disk);
  EXPECT_GE(families.size(), 48u);
}

TEST(RealConfigsTest, KvBytesAndStateAsTheModelingCodeImplies) {
  for (const Expected& e : Table()) {
    SCOPED_TRACE(e.file);
    const ModelShape m = Load(e.file);
    EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), static_cast<double>(e.bytes_per_token));
    EXPECT_EQ(StateBytesPerSequence(m), e.state_bytes);
    std::map<std::string, int> kinds;
    for (LayerKind k : AllLayerKinds()) {
      if (m.CountLayers(k) > 0) kinds[LayerKindName(k)] = m.CountLayers(k);
    }
    EXPECT_EQ(kinds, ParseKinds(e.kinds));
  }
}

// FP8 halves every K, V and latent element; the indexer key stays fp8 with
// its scale (132 bytes per layer whatever the format). NVFP4 adds an 8-bit
// scale per 16 elements: a 128-element head is 64 + 8 = 72 bytes.
TEST(RealConfigsTest, Fp8HalvesBf16AndNvfp4CarriesItsScales) {
  for (const Expected& e : Table()) {
    SCOPED_TRACE(e.file);
    const ModelShape m = Load(e.file);
    if (m.model_type == "deepseek_v32" || m.model_type == "glm_moe_dsa" ||
        m.HasCompressedLayers()) {
      continue;  // below, and ExactCountsOfDeepSeekV4
    }
    double indexer_bytes = 0;  // fp8 + scale beside MLA, indexer_bits beside GQA
    for (const LayerShape& l : m.layers) {
      if (l.indexer_dim <= 0) continue;
      indexer_bytes +=
          l.IsLatent() ? 132.0 : static_cast<double>(l.indexer_dim * l.indexer_bits) / 8.0;
    }
    EXPECT_EQ(BytesPerToken(m, Fmt("fp8")),
              (static_cast<double>(e.bytes_per_token) - indexer_bytes) / 2 + indexer_bytes);
  }
  // llama-3.1-8b: 32 layers x 8 heads x (K + V) x 72 bytes = 36,864.
  EXPECT_EQ(BytesPerToken(Load("llama-3.1-8b.json"), Fmt("nvfp4")), 36864.0);
  // mimo-v2-flash: K 192 -> 96 + 12 x 1 = 108 bytes, V 128 -> 64 + 8 = 72:
  // 9 x 4 x 180 + 39 x 8 x 180 = 6,480 + 56,160 = 62,640.
  EXPECT_EQ(BytesPerToken(Load("mimo-v2-flash.json"), Fmt("nvfp4")), 62640.0);
  // deepseek-v3.2: latent 576 -> 288 + 36 x 1 = 324 bytes, indexer 132: 61 x 456 = 27,816.
  EXPECT_EQ(BytesPerToken(Load("deepseek-v3.2.json"), Fmt("nvfp4")), 27816.0);
  // DeepSeek Sparse Attention in fp8 is FlashMLA's fp8_ds_mla layout, which
  // vLLM switches any fp8 cache of these models to: the 512 compressed
  // elements in fp8 with 4 fp32 scales, the 64-element rotary key in bf16,
  // 512 + 16 + 128 = 656 bytes, plus the 132-byte indexer key.
  // deepseek-v3.2: 61 x 788 = 48,068; glm-5: 78 x 788 = 61,464; glm-5.2:
  // 78 x 656 + 21 x 132 = 53,940.
  EXPECT_EQ(BytesPerToken(Load("deepseek-v3.2.json"), Fmt("fp8")), 48068.0);
  EXPECT_EQ(BytesPerToken(Load("glm-5.json"), Fmt("fp8")), 61464.0);
  EXPECT_EQ(BytesPerToken(Load("glm-5.2.json"), Fmt("fp8")), 53940.0);
  // Dense MLA (DeepSeek-V3) keeps plain fp8: 61 x 576 = 35,136.
  EXPECT_EQ(BytesPerToken(Load("deepseek-v3.json"), Fmt("fp8")), 35136.0);
}

TEST(RealConfigsTest, ParametersMatchThePublishedCheckpoint) {
  for (const Expected& e : Table()) {
    SCOPED_TRACE(e.file);
    const ModelShape m = Load(e.file);
    for (const Published& p : {e.total, e.active}) {
      if (p.value <= 0) continue;
      const double have = static_cast<double>(CountOf(m.params, p.count));
      EXPECT_NEAR(have / p.value, 1.0, p.tolerance) << have << " vs " << p.value;
    }
  }
}

// Families whose blocks differ from Llama's, worked by hand from their
// modeling code (bf16 units; L = layers, h = hidden, f = MLP width, V = vocab):
// - chatglm3-6b: h 4096, 28 layers, QKV 4096 x (4096 + 2 x 2 x 128) + its
//   bias 4,608 (add_qkv_bias) = 18,878,976; dense 16,777,216 (no bias:
//   add_bias_linear false); SwiGLU h_to_4h 4096 x 2 x 13,696 = 112,197,632,
//   4h_to_h 56,098,816; 2 RMSNorms 8,192: 203,960,832 a layer, x 28 =
//   5,710,903,296; embedding and the separate output_layer 2 x 65,024 x 4096 =
//   532,676,608; final norm 4,096: 6,243,584,000.
// - phi-2: h 2560, f 4 x 2560 (n_inner null), QKV 2560 x 7680 + 7,680,
//   dense 2560 x 2560 + 2,560, fc1 2560 x 10,240 + 10,240, fc2 10,240 x 2560
//   + 2,560, one LayerNorm with bias 5,120: 78,671,360 a layer, x 32 =
//   2,517,483,520; embedding and lm_head 2 x 51,200 x 2560 = 262,144,000,
//   lm_head bias 51,200, final LayerNorm 5,120: 2,779,683,840.
// - redpajama-incite-3b (gpt_neox): the same blocks with two LayerNorms
//   (10,240 a layer): 78,676,480 x 32 = 2,517,647,360; embed_in and embed_out
//   2 x 50,432 x 2560 = 258,211,840; final 5,120: 2,775,864,320.
// - starcoder2-7b: h 4608, q and o 4608 x 4608 + 4,608 each, k and v 4608 x
//   512 + 512 each, c_fc 4608 x 18,432 + 18,432, c_proj 18,432 x 4608 +
//   4,608, two LayerNorms 18,432: 217,106,944 a layer, x 32 = 6,947,422,208;
//   tied embedding 49,152 x 4608 = 226,492,416; final 9,216: 7,173,923,840.
// - santacoder (gpt_bigcode): h 2048, c_attn 2048 x (2048 + 2 x 128) + 2,304,
//   c_proj 2048 x 2048 + 2,048, c_fc 2048 x 8192 + 8,192, mlp c_proj 8192 x
//   2048 + 2,048, two LayerNorms 8,192: 42,490,112 a layer, x 24 =
//   1,019,762,688; tied wte 49,280 x 2048 = 100,925,440; learned positions wpe
//   2048 x 2048 = 4,194,304; ln_f 4,096: 1,124,886,528.
// - gemma-2b: q and o 2048 x 2048, k and v 2048 x 256, gated MLP 3 x 2048 x
//   16,384 = 100,663,296, two RMSNorms 4,096: 110,104,576 a layer, x 18 =
//   1,981,882,368; tied embedding 256,000 x 2048 = 524,288,000; final 2,048:
//   2,506,172,416.
// - aya-23-8b (cohere): q and o 4096 x 4096, k and v 4096 x 1024, gated MLP
//   3 x 4096 x 14,336 = 176,160,768, one LayerNorm 4,096: 218,107,904 a
//   layer, x 32 = 6,979,452,928; tied embedding 256,000 x 4096 =
//   1,048,576,000; final 4,096: 8,028,033,024.
TEST(RealConfigsTest, ExactCountsOfFamiliesWithTheirOwnBlocks) {
  EXPECT_EQ(Load("chatglm3-6b.json").params.Total(), 6243584000LL);
  EXPECT_EQ(Load("phi-2.json").params.Total(), 2779683840LL);
  EXPECT_EQ(Load("redpajama-incite-3b.json").params.Total(), 2775864320LL);
  EXPECT_EQ(Load("starcoder2-7b.json").params.Total(), 7173923840LL);
  EXPECT_EQ(Load("santacoder.json").params.Total(), 1124886528LL);
  EXPECT_EQ(Load("gemma-2b.json").params.Total(), 2506172416LL);
  EXPECT_EQ(Load("aya-23-8b.json").params.Total(), 8028033024LL);
}

// MiniMax-M3 (vLLM minimax_m3/nvidia/model.py), h 6144, 64 heads and 4 KV
// heads of 128, V 200,064: attention q and o 2 x 6144 x 8192 + k and v 2 x
// 6144 x 512 + per-head q/k norms 256 = 106,955,008; the indexer of a
// sparse layer index_q 4 x 128 x 6144 + index_k 128 x 6144 + two norms 256 =
// 3,932,416; an expert 3 x 6144 x 3072 = 56,623,104 (the shared one is
// intermediate_size x n_shared_experts wide, the same); router 128 x 6144 +
// e_score_correction_bias 128; two norms 12,288. The 3 dense layers (MLP of
// dense_intermediate_size 12,288: 226,492,416) are 333,459,712 each; the 57
// MoE layers 106,955,008 + 3,932,416 + 129 x 56,623,104 + 786,560 + 12,288 =
// 7,416,066,688 each. Embedding and lm_head 2 x 200,064 x 6144 =
// 2,458,386,432, final norm 6,144: 426,174,572,928. Its 7 MTP modules
// (num_mtp_modules; vLLM's drafter builds that many, each eh_proj 2 x 6144
// x 6144 + a sparse MoE layer + 3 norms) are 7 x 7,491,582,592.
// With fp8 KV: 3 x 1,024 + 57 x (1,024 + 256) = 76,032 (the indexer key
// stays bf16); over 4 GPUs one KV head each, the key whole: 3 x 512 + 57 x
// (512 + 256) = 45,312.
// Laguna (vLLM laguna.py): per layer q 2 x h x heads x 128 (q and o),
// k and v 2 x h x 8 x 128, the per-head gate h x heads, q/k norms 256 and
// two norms 2h; MoE layers 256 experts x 3 x h x moe + the shared expert
// 3 x h x moe + router h x 256 + bias 256; the dense first layer 3 x h x
// intermediate. XS.2 (h 2048, heads 48 / 64, moe 512, intermediate 8192):
// 33,442,617,088, 3,017,135,872 active; S-2.1 (h 3072, heads 48 / 72, moe
// 1024, top-10, intermediate 12,288): 117,561,977,600 and 8,449,256,192.
// 16 GPUs split its 48 full-layer heads but not the 72 of its sliding ones.
// Kimi-K3 (vLLM kimi_k3/nvidia/*): h 7168. A KDA layer: q, k, v, the
// full-rank output gate g_proj and o_proj 5 x 7168 x 12,288, convolutions
// 3 x 12,288 x 4, A_log 96, the forget gate f_a 128 x 7168 + f_b 12,288 x
// 128, dt_bias 12,288, b_proj 96 x 7168, o_norm 128: 443,740,384. A gated
// MLA layer: q_a 1536 x 7168 + its norm 1536 + q_b 96 x 192 x 1536 + kv_a
// 576 x 7168 + its norm 512 + kv_b 96 x 256 x 512 + o_proj and g_proj 2 x
// 7168 x 12,288 = 232,196,096. A MoE layer: 896 experts of 3 x 3072 x 3584
// (routed_expert_hidden_size) = 33,030,144 each, the shared experts 3 x
// 7168 x 6144, the latent down and up projections 2 x 7168 x 3584 and their
// norm 3584, router 896 x 7168 + 896. The dense first layer 3 x 7168 x
// 33,792. Norms 2 x 7168 a layer, attention residuals 4 x 7168 a layer and
// 2 x 7168 at the end, final norm. Embedding and lm_head 2 x 163,840 x
// 7168. Text: 2,779,484,476,000. The MoonViT3d tower (27 blocks of two
// RMSNorms 2 x 1024, wqkv 3 x 1536 x 1024, wo 1024 x 1536, MLP 2 x 1024 x
// 4096 = 14,682,112; patches 3 x 14 x 14 x 1024; a 64 x 64 x 1024 position
// grid; final norm 1024) is 401,214,464 and its projector (4096 x 4096 +
// 4096 x 7168 + a norm of 7168) 46,144,512: 2,779,931,834,976. The routed
// experts are MXFP4 (0.53125 bytes a parameter): 92 x 896 x 33,030,144 x
// 0.53125 = 1,446,456,066,048 bytes. A low-rank output gate instead (Kimi
// Linear's) is g_a 128 x 7168 + g_b 12,288 x 128, 85,590,016 fewer a KDA
// layer.
TEST(RealConfigsTest, ExactCountsOfRecentFamilies) {
  const ModelShape m3 = Load("minimax-m3.json");
  EXPECT_EQ(m3.params.Total(), 426174572928LL);
  EXPECT_EQ(m3.params.mtp, 7 * 7491582592LL);
  EXPECT_EQ(BytesPerToken(m3, Fmt("fp8")), 76032.0);
  EXPECT_EQ(BytesPerToken(m3, Fmt("bf16"), 4), 45312.0);
  const ModelShape xs = Load("laguna-xs.2-fp8.json");
  // Its kv_cache_scheme (8-bit float) is the fp8 cache vLLM's "auto" keeps:
  // 40 x 8 x 128 x 2 x 1 B = 81,920 a token over every layer.
  EXPECT_EQ(xs.checkpoint_kv_format, "fp8-e4m3");
  EXPECT_EQ(BytesPerToken(xs, Fmt(xs.checkpoint_kv_format)), 81920.0);
  EXPECT_EQ(m3.checkpoint_kv_format, "");
  EXPECT_EQ(xs.params.Total(), 33442617088LL);
  EXPECT_EQ(xs.params.Active(), 3017135872LL);
  const ModelShape s21 = Load("laguna-s-2.1-fp8.json");
  EXPECT_TRUE(ValidTensorParallel(s21, 8));
  EXPECT_FALSE(ValidTensorParallel(s21, 16));
  EXPECT_NE(TensorParallelProblem(s21, 16).find("72 query heads"), std::string::npos)
      << TensorParallelProblem(s21, 16);
  const ModelShape k3 = Load("kimi-k3.json");
  EXPECT_EQ(k3.params.Total() - k3.params.vision, 2779484476000LL);
  EXPECT_EQ(k3.params.vision, 401214464LL + 46144512LL);
  auto k3_bytes = ComputeWeightBytes(k3, "auto");
  ASSERT_TRUE(k3_bytes.ok());
  EXPECT_EQ(k3_bytes->routed_experts, 1446456066048LL);
  // The same layers with Kimi Linear's low-rank output gate.
  std::ifstream in(kDir + "kimi-k3.json");
  auto lin = nlohmann::json::parse(in)["text_config"]["linear_attn_config"];
  lin["use_full_rank_gate"] = false;
  auto low_rank = LoadModel(kDir + "kimi-k3.json", {{"linear_attn_config", lin.dump()}});
  ASSERT_TRUE(low_rank.ok()) << low_rank.error().message();
  EXPECT_EQ(k3.params.Total() - low_rank->params.Total(), 69 * 85590016LL);
  EXPECT_EQ(StateBytesPerSequence(*low_rank), 449372160);
}

// DeepSeek-V4-Flash worked by hand (DeepSeek's inference/model.py; d 4,096,
// 64 heads of 512, q_lora 1,024, o_groups 8 of o_lora 1,024, indexer 64
// heads of 128, 256 experts of 2,048, top 6, vocab 129,280, 43 layers, 3
// hash-routed, hc_mult 4 so mix = (2 + 4) x 4 = 24):
//   attention 4,096 x 1,024 + 1,024 + 1,024 x 32,768 + 4,096 x 512 + 512 +
//     32,768 x 1,024 (wo_a) + 8,192 x 4,096 (wo_b) + 64 sinks = 106,956,352;
//   compressor ratio 4: 4 x 2 x 512 (ape) + 2 x 4,096 x 1,024 + 512 =
//     8,393,216; ratio 128: 128 x 512 + 2 x 4,096 x 512 + 512 = 4,260,352;
//   indexer: 1,024 x 8,192 + 4,096 x 64 + its compressor 4 x 2 x 128 + 2 x
//     4,096 x 256 + 128 = 10,749,056;
//   a layer without compressor: attention + gate 256 x 4,096 + 256 experts x
//     3 x 4,096 x 2,048 + shared 25,165,824 + hyper-connections 2 x 24 x 4 x
//     4,096 + 2 x 24 + 6 = 786,486 + norms 8,192 = 6,576,416,374;
//   43 of them + 40 gate biases x 256 + 21 x (8,393,216 + 10,749,056) + 20 x
//     4,260,352 + embedding and head 2 x 529,530,880 + final norm 4,096 + the
//     head's mixer 4 x 16,384 + 4 + 1 = 284,332,240,471 (card: 284B).
//   The prediction layer: a window-only block with a gate bias, 2 x 4,096^2
//   (e_proj, h_proj), 3 norms and a head mixer: 6,610,048,891.
//   Active without the input embedding: 6 of 256 experts: 13,270,101,591
//   (card: 13B).
// Weights (expert_dtype fp4): routed experts 277,025,390,592 in MXFP4 (4.25
// bits) = 147,169,738,752 B; fp8 linear layers with one UE8M0 byte per
// 128 x 128 block (vLLM: FP4 checkpoints store them as E8M0); compressor
// and indexer weights_proj, routers, embedding, head and norms bf16; mixers,
// ape, sinks and gate biases fp32: 155,997,081,820 B in all. The
// sgl-project copy (no expert_dtype: experts in fp8 blocks with fp32
// scales): 285,869,641,948 B with one-byte scales, plus 3 B for each of its
// 17,265,792 blocks (a layer: wq_a 8 x 32 + wq_b 256 x 8 + wkv 4 x 32 + wo_a
// 64 x 32 + wo_b 32 x 64 = 6,528, shared and 256 routed experts 257 x 3 x
// 512 = 394,752; x 43, + 21 indexer wq_b of 64 x 8) = 285,921,439,324 B.
TEST(RealConfigsTest, ExactCountsOfDeepSeekV4) {
  const ModelShape v4 = Load("deepseek-v4-flash.json");
  EXPECT_EQ(v4.params.Total(), 284332240471LL);
  EXPECT_EQ(v4.params.mtp, 6610048891LL);
  EXPECT_EQ(v4.params.Active() - v4.params.embedding, 13270101591LL);
  auto bytes = ComputeWeightBytes(v4, "auto");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->total, 155997081820LL);
  EXPECT_EQ(bytes->routed_experts, 147169738752LL);
  auto sgl_bytes = ComputeWeightBytes(Load("deepseek-v4-flash-fp8-sgl.json"), "auto");
  ASSERT_TRUE(sgl_bytes.ok());
  EXPECT_EQ(sgl_bytes->total, 285921439324LL);
  // NVFP4 experts (nvidia's MIXED_PRECISION map over the fp8 config;
  // RedHatAI's compressed-tensors targets in transformers' names): 4 bits
  // and an fp8 scale per 16 (0.5625 B a weight) plus two fp32 scales per
  // tensor: 277,025,390,592 x 0.5625 + 43 x 256 x 3 x 8 = 155,826,782,208 +
  // 264,192 = 155,827,046,400. RedHatAI's attention (fused_wqa_wkv, wq_b,
  // wo_a, wo_b and the indexer's wq_b) in fp8 blocks: 43 x (4,194,304 +
  // 33,554,432 + 2,097,152 + 2 x 33,554,432) + 21 x 8,388,608 =
  // 4,599,054,336 + 176,160,768 = 4,775,215,104 weights; its shared experts
  // in NVFP4 too.
  for (const char* file :
       {"deepseek-v4-flash-nvfp4.json", "deepseek-v4-flash-nvfp4-fp8-redhat.json"}) {
    SCOPED_TRACE(file);
    auto nvfp4 = ComputeWeightBytes(Load(file), "auto");
    ASSERT_TRUE(nvfp4.ok());
    EXPECT_EQ(nvfp4->routed_experts, 155827046400LL);
  }
  const ModelShape redhat = Load("deepseek-v4-flash-nvfp4-fp8-redhat.json");
  std::int64_t fp8_attention = 0;
  for (const WeightGroup& g : redhat.weights) {
    if (g.role == ParamRole::kAttention && g.format.element_bits == 8) fp8_attention += g.Params();
    if (g.role == ParamRole::kSharedExperts) {
      EXPECT_EQ(g.format.element_bits, 4) << g.name;
    }
  }
  EXPECT_EQ(fp8_attention, 4775215104LL);
  // fp8: vLLM's fp8_ds_mla entry for V4: 448 fp8 + 7 UE8M0 scale bytes + 1
  // pad + 64 x 2 rope = 584 B: 21 x (584 + 132) / 4 + 20 x 584 / 128 =
  // 3,759 + 91.25 = 3,850.25 a token.
  EXPECT_EQ(BytesPerToken(v4, Fmt("fp8")), 3850.25);
  // Whole on every GPU (one latent, like MLA).
  EXPECT_EQ(BytesPerToken(v4, Fmt("fp8"), 8), 3850.25);
  EXPECT_EQ(StateBytesPerSequence(v4, 8), 12206080);
  // At 1,048,576 tokens: 21 x 262,144 x 716 + 20 x 8,192 x 584 + 43 x 128 x
  // 584 = 3,941,597,184 + 95,682,560 + 3,214,336 = 4,040,494,080.
  EXPECT_EQ(Footprint(v4, Fmt("fp8"), 1048576, 256).kv_bytes, 4040494080LL);
  // At 129 tokens in 16-token blocks: exact 43 x 128 x 584 + 21 x 32 x 716 +
  // 20 x 1 x 584 = 3,214,336 + 481,152 + 11,680 = 3,707,168; rounded as the
  // pool pages them, the window whole (the pool holds it per sequence), 9
  // blocks of 16 with ceil(16 / 4) = 4 entries on a ratio-4 layer and one on
  // a ratio-128 layer: 3,214,336 + 21 x 36 x 716 + 20 x 9 x 584 = 3,214,336 +
  // 541,296 + 105,120 = 3,860,752.
  const SequenceFootprint at129 = Footprint(v4, Fmt("fp8"), 129, 16);
  EXPECT_EQ(at129.kv_bytes, 3707168);
  EXPECT_EQ(at129.block_rounded_bytes, 3860752);
  // In vLLM's 256-token blocks the rounding is whole entries: at 1,000
  // tokens 4 blocks of 64 and 2 entries, 21 x 256 x 716 + 20 x 8 x 584 +
  // 3,214,336 = 3,849,216 + 93,440 + 3,214,336 = 7,156,992 (exact 7,055,096).
  EXPECT_EQ(Footprint(v4, Fmt("fp8"), 1000, 256).block_rounded_bytes, 7156992);
  EXPECT_EQ(Footprint(v4, Fmt("fp8"), 1000, 256).kv_bytes, 7055096);
  // A block size the ratio does not divide still rounds up (6 tokens: 2
  // entries of a ratio-4 layer a block, never below the exact bytes).
  for (const Tokens bs : {6, 10, 100}) {
    const SequenceFootprint f = Footprint(v4, Fmt("fp8"), 8192, bs);
    EXPECT_GE(f.block_rounded_bytes, f.kv_bytes) << bs;
  }
  // Tensor parallelism must split o_groups (8): 16 GPUs cannot.
  EXPECT_TRUE(ValidTensorParallel(v4, 8));
  EXPECT_FALSE(ValidTensorParallel(v4, 16));
  EXPECT_NE(TensorParallelProblem(v4, 16).find("8 output-projection groups (o_groups)"),
            std::string::npos)
      << TensorParallelProblem(v4, 16);
  // vLLM's auto KV format for it is fp8 (the only one it runs).
  EXPECT_EQ(VllmAutoKvFormat(v4), "fp8-e4m3");
  // Below the window and the first compressed entry: 3 latents a layer.
  EXPECT_EQ(Footprint(v4, Fmt("fp8"), 3, 16).kv_bytes, 43 * 3 * 584);
  // transformers' layer_types spelling gives the same layers.
  std::ifstream in(kDir + "deepseek-v4-flash.json");
  auto cfg = nlohmann::json::parse(in);
  nlohmann::json types = nlohmann::json::array();
  for (int i = 0; i < 43; ++i) {
    const int r = cfg["compress_ratios"][static_cast<std::size_t>(i)].get<int>();
    types.push_back(r == 0   ? "sliding_attention"
                    : r == 4 ? "compressed_sparse_attention"
                             : "heavily_compressed_attention");
  }
  cfg.erase("compress_ratios");
  cfg["layer_types"] = types;
  auto hf = ParseHfConfig(cfg.dump(), "hf.json", "hf");
  ASSERT_TRUE(hf.ok()) << hf.error().message();
  EXPECT_EQ(BytesPerToken(*hf, Fmt("fp8")), 3850.25);
  EXPECT_EQ(hf->params.Total(), 284332240471LL);
}

// Towers worked by hand from their modeling code (transformers
// minimax_m3_vl and muse_glimmer; NeMo Automodel and vLLM agree):
// - MiniMax-M3-VL (hidden 1,280, MLP 5,120, 32 layers, patch 14, 2 frames,
//   merge 2, projector 6,144, text 6,144): Conv3d 3 x 2 x 14 x 14 x 1,280 =
//   1,505,280, pre-LayerNorm 2,560, a block 4 x (1,280^2 + 1,280) + 2 x
//   1,280 x 5,120 + 5,120 + 1,280 + 4 x 1,280 = 19,677,440 (x 32 =
//   629,678,080); projector 1,280 x 6,144 + 6,144 + 6,144^2 + 6,144 =
//   45,625,344; merge (6,144 x 4) x 6,144 + 6,144 + 6,144^2 + 6,144 =
//   188,755,968: 865,567,232, and with the 426,174,572,928 of the text model
//   427,040,140,160.
// - Muse-Glimmer (hidden 1,536, MLP 8,960, 50 layers, patch 14, 2 frames,
//   a 32 x 32 grid, out 6,144, projector 4,096, text 6,656): patches 1,176 x
//   1,536 = 1,806,336, grid 1,572,864, four LayerNorm vectors 6,144, a block
//   36,985,088 (x 50 = 1,849,254,400); adapter and projection 6,144 x 4,096
//   + 4,096^2 + 4,096 x 6,656 = 69,206,016. Its text layers add to Llama's a
//   gate 6,656 x 4,096 and two more norms of 6,656: a layer 27,262,976 x 4
//   (q, o, gate and k + v) + 3 x 6,656 x 19,968 + 4 x 6,656 = 483,944,448;
//   52 of them, embedding and head 2 x 202,048 x 6,656, final norm 6,656:
//   27,854,780,928 of text.
// - Mistral Small 3.1 (Pixtral: hidden 1,024, MLP 4,096, 24 layers, patch
//   14; merge 2, text 5,120, unbiased projector): patches 3 x 14^2 x 1,024
//   = 602,112, ln_pre 1,024, a block 4 x 1,024^2 + 3 x 1,024 x 4,096 + 2 x
//   1,024 = 16,779,264 (x 24 = 402,702,336); projector norm 1,024, merger 4 x
//   1,024^2 = 4,194,304, linear_1 1,024 x 5,120 = 5,242,880, linear_2
//   5,120^2 = 26,214,400: 438,958,080 in all; with the text
//   model's 23,572,403,200, 24,011,361,280.
// MiniMax-M3-VL: minimax-m3.json as the text model under the top-level keys
// and vision_config of nvidia/MiniMax-M3-NVFP4's config.json
// (ai-dynamo/aiconfigurator aic-core/src/aiconfigurator_core/model_configs/
// nvidia--MiniMax-M3-NVFP4_config.json @ 90f7fc0f; its 3 MB of
// quantized_layers left out), as published.
ModelShape MiniMaxM3Vl() {
  std::ifstream in(kDir + "minimax-m3.json");
  nlohmann::json cfg = nlohmann::json::parse(R"({
    "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
    "model_type": "minimax_m3_vl",
    "img_token_compression_config": {"image_token_compression_method": "patch_merge",
                                     "spatial_merge_size": 2, "temporal_patch_size": 2},
    "multimodal_projector_bias": true, "projector_hidden_act": "gelu",
    "projector_hidden_size": 6144, "torch_dtype": "bfloat16",
    "vision_config": {"hidden_size": 1280, "num_attention_heads": 16, "num_hidden_layers": 32,
      "intermediate_size": 5120, "patch_size": 14, "image_size": 2016, "projection_dim": 6144,
      "position_embedding_type": "rope", "rope_mode": "3d", "rope_theta": 10000.0,
      "attention_dropout": 0.0, "hidden_act": "gelu", "initializer_factor": 1.0,
      "initializer_range": 0.02, "layer_norm_eps": 1e-05, "model_type": "clip_vision_model",
      "num_channels": 3, "vocab_size": 32000,
      "img_token_compression_config": {"image_token_compression_method": "patch_merge",
                                       "spatial_merge_size": 2, "temporal_patch_size": 2},
      "vision_segment_max_frames": 4}})");
  cfg["text_config"] = nlohmann::json::parse(in);
  auto m = ParseHfConfig(cfg.dump(), "minimax-m3-vl.json", "minimax-m3-vl");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

TEST(RealConfigsTest, ExactCountsOfRecentTowers) {
  const ModelShape small = Load("mistral-small-3.1-24b.json");
  EXPECT_EQ(small.params.vision, 438958080LL);
  EXPECT_EQ(small.params.Total(), 24011361280LL);
  // Hugging Face's num_parameters for MiniMaxAI/MiniMax-M3: 427,040,140,160.
  const ModelShape m3 = MiniMaxM3Vl();
  EXPECT_EQ(m3.params.vision, 865567232LL);
  EXPECT_EQ(m3.params.Total(), 427040140160LL);
  EXPECT_EQ(BytesPerToken(m3, Fmt("bf16")), 137472.0);
  const ModelShape muse = Load("muse-glimmer-30b.json");
  EXPECT_EQ(muse.params.vision, 1852639744LL + 69206016LL);
  EXPECT_EQ(muse.params.Total() - muse.params.vision, 27854780928LL);
}

// What these families' modeling code does not define is refused, naming
// the key, not guessed.
TEST(RealConfigsTest, RecentFamiliesRefuseWhatTheyCannotSize) {
  // The rule's message, without the " (overridden)" the loader adds to a key
  // --set gave (KvCliTest.SetValueErrorsSayTheKeyWasOverridden checks it).
  auto error = [](const std::string& file, const std::string& key, const std::string& value) {
    auto m = LoadModel(kDir + file, {{key, value}});
    if (m.ok()) return std::string("(loaded)");
    std::string message = m.error().message();
    const std::string marker = " (overridden)";
    if (const auto at = message.find(marker); at != std::string::npos)
      message.erase(at, marker.size());
    return message;
  };
  std::ifstream in(kDir + "minimax-m3.json");
  auto sparse = nlohmann::json::parse(in)["sparse_attention_config"];
  sparse["sparse_disable_index_value"][5] = 0;
  EXPECT_NE(error("minimax-m3.json", "sparse_attention_config", sparse.dump())
                .find("sparse_attention_config.sparse_disable_index_value[5]: is 0 on a sparse "
                      "layer: an index value head, which kvbill cannot size"),
            std::string::npos);
  // Numbers past the config bounds (docs/models.md#bounds) are refused.
  auto huge =
      nlohmann::json::parse(std::ifstream(kDir + "minimax-m3.json"))["sparse_attention_config"];
  huge["sparse_block_size"] = std::int64_t{1} << 40;
  EXPECT_NE(error("minimax-m3.json", "sparse_attention_config", huge.dump())
                .find("sparse_attention_config.sparse_block_size: must be a whole number in [1, "
                      "1048576]"),
            std::string::npos);
  // Without sparse attention the 57 indexer keys go: 122,880 bytes a token.
  auto off = LoadModel(kDir + "minimax-m3.json",
                       {{"sparse_attention_config", R"({"use_sparse_attention": false})"}});
  ASSERT_TRUE(off.ok()) << off.error().message();
  EXPECT_EQ(BytesPerToken(*off, Fmt("bf16")), 122880.0);
  EXPECT_NE(error("minimax-m3.json", "attention_output_gate", "true")
                .find("attention_output_gate: is true"),
            std::string::npos);
  EXPECT_NE(error("laguna-xs.2-fp8.json", "gating", "\"per-element\"")
                .find("gating: must be true, false or \"per-head\""),
            std::string::npos);
  EXPECT_NE(error("kimi-k3.json", "linear_attn_config",
                  R"({"kda_layers": [0], "num_heads": 96, "head_dim": 128})")
                .find("text_config.linear_attn_config.kda_layers[0]: must be a layer number in "
                      "[1, 93] (1-based), got 0"),
            std::string::npos)
      << error("kimi-k3.json", "linear_attn_config",
               R"({"kda_layers": [0], "num_heads": 96, "head_dim": 128})");
  // DeepSeek-V4: a ratio it does not define, a list of the wrong length.
  EXPECT_NE(error("deepseek-v4-flash.json", "compress_ratios", "[0, 2]")
                .find("compress_ratios: must list one ratio per decoder layer (43)"),
            std::string::npos);
  std::string ratios = "[0";
  for (int i = 1; i < 43; ++i) ratios += i == 5 ? ", 2" : ", 4";
  EXPECT_NE(error("deepseek-v4-flash.json", "compress_ratios", ratios + "]")
                .find("compress_ratios[5]: must be 0 (window only), 4"),
            std::string::npos)
      << error("deepseek-v4-flash.json", "compress_ratios", ratios + "]");
  EXPECT_NE(error("deepseek-v4-flash.json", "o_groups", "7").find("o_groups: 7 does not divide"),
            std::string::npos);
  EXPECT_NE(error("deepseek-v4-flash.json", "expert_dtype", "\"int4\"")
                .find("expert_dtype: must be \"fp4\" or \"fp8\""),
            std::string::npos);
}

// Exact where the published figure is exact: every tensor counted.
TEST(RealConfigsTest, ExactCountsWhereTheIndexIsExact) {
  EXPECT_EQ(Load("bloom.json").params.Checkpoint(), 176247271424LL);
  EXPECT_EQ(Load("devstral-small-2507.json").params.Checkpoint(), 23572403200LL);
  EXPECT_EQ(Load("lfm2-1.2b.json").params.Checkpoint(), 1170340608LL);
  EXPECT_EQ(Load("medgemma-27b-it.json").params.Checkpoint(), 27432406640LL);
  EXPECT_EQ(Load("olmocr-qwen2-vl-7b.json").params.Checkpoint(), 8291375616LL);
  EXPECT_EQ(Load("smollm3-3b.json").params.Checkpoint(), 3075098624LL);
  EXPECT_EQ(Load("qwen-72b.json").params.Checkpoint(), 72287920128LL);
  // openPangu: the index less its 34 rotary buffers (4,352 units).
  EXPECT_EQ(Load("openpangu-embedded-7b.json").params.Checkpoint(), 8030892288LL - 4352LL);
  // falcon-180b: the index's 179,522,565,120 less the stored lm_head copy
  // (65,024 x 14,848 = 965,476,352) the tied model does not load.
  EXPECT_EQ(Load("falcon-180b-chat.json").params.Checkpoint(), 179522565120LL - 965476352LL);
}

// The weights as stored: bf16 checkpoints are 2 bytes a parameter (their
// index total_size); quantized ones are far smaller than bf16.
TEST(RealConfigsTest, WeightBytesFollowTheQuantizationConfig) {
  auto bytes = [](const std::string& file) {
    auto w = ComputeWeightBytes(Load(file), "auto");
    EXPECT_TRUE(w.ok());
    return w.ok() ? *w : WeightBytes{};
  };
  EXPECT_EQ(bytes("medgemma-27b-it.json").total, 54864813280LL);  // the index's total_size
  EXPECT_EQ(bytes("bloom.json").total, 352494542848LL);
  // Kimi K2.5: int4 experts with a bf16 scale per 32 (4.5 bits a weight)
  // against bf16's 16: the weights are 3.4x smaller than bf16's 2 bytes a
  // parameter, not bf16-sized.
  const ModelShape kimi = Load("kimi-k2.5.json");
  const double bf16 = 2.0 * static_cast<double>(kimi.params.Total());
  EXPECT_LT(static_cast<double>(bytes("kimi-k2.5.json").total), bf16 / 3.0);
  // NVFP4 (modelopt) Qwen3.5-397B: experts at 4.5 bits, the ignored
  // attention, DeltaNet, shared experts and towers at 16.
  EXPECT_LT(static_cast<double>(bytes("qwen3.5-397b-a17b-nvfp4.json").total),
            static_cast<double>(bytes("qwen3.5-397b-a17b.json").total) / 3.0);
}

// ModelOpt MIXED_PRECISION (nvidia/Qwen3.6-35B-A3B-NVFP4): quantized_layers
// names FP8 for attention and the DeltaNet's in_proj_qkv, in_proj_z and
// out_proj, W4A16_NVFP4 (group 16) for each layer's experts (one key), shared
// expert and lm_head. kvbill's fused in_proj_qkvz takes its siblings' FP8,
// and so does its fused in_proj_ba, which vLLM loads in bf16 (in_proj_b and
// in_proj_a are not in the map): 2 x 32 x 2048 bytes a layer too few, 3.9
// MB over 30 layers. The embedding and the routers stay bf16. An NVFP4 expert projection of 512 x
// 2048 is 512 x 2048 x 4 bits + an 8-bit scale per 16 + 64 bits of per-tensor scales = 4,718,656
// bits; the 256 experts' three projections of a layer, x 40 layers:
// 40 x 3 x 256 x 4,718,656 / 8 = 18,119,639,040 bytes.
TEST(RealConfigsTest, ModelOptMixedPrecisionFollowsItsModuleMap) {
  const ModelShape m = Load("qwen3.6-35b-a3b-nvfp4.json");
  EXPECT_EQ(m.checkpoint_kv_format, "");  // kv_cache_quant_algo null: the dtype
  std::map<std::string, std::string> format;
  for (const WeightGroup& g : m.weights) format[g.name] = g.format.name;
  EXPECT_EQ(format["model.layers.3.self_attn.q_proj"], "fp8-e4m3");
  EXPECT_EQ(format["model.layers.0.linear_attn.in_proj_qkvz"], "fp8-e4m3");
  EXPECT_EQ(format["model.layers.0.linear_attn.out_proj"], "fp8-e4m3");
  EXPECT_EQ(format["model.layers.0.linear_attn.in_proj_ba"], "fp8-e4m3");
  EXPECT_EQ(format["model.layers.0.mlp.experts.0.gate_proj"], "nvfp4-w4a16");
  EXPECT_EQ(format["model.layers.0.mlp.shared_expert.up_proj"], "nvfp4-w4a16");
  EXPECT_EQ(format["lm_head"], "nvfp4-w4a16");
  EXPECT_EQ(format["model.embed_tokens"], "bf16");
  auto bytes = ComputeWeightBytes(m, "auto");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->routed_experts, 18119639040LL);
  // An algorithm ModelOpt writes that kvbill does not know is named.
  auto bad = LoadModel(kDir + "qwen3.6-35b-a3b-nvfp4.json",
                       {{"quantization_config",
                         R"({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION",
                             "quantized_layers": {"lm_head": {"quant_algo": "W4A8_AWQ"}}})"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find(
                "quantization_config.quantized_layers.lm_head.quant_algo (overridden): unknown "
                "algorithm \"W4A8_AWQ\""),
            std::string::npos)
      << bad.error().message();
}

// One format per part, for the operator cost model: the one holding most of
// the part's parameters, read off each quantization_config.
TEST(RealConfigsTest, PartFormatsNameWhatHoldsMostOfEachPart) {
  auto parts = [](const std::string& file) {
    auto p = NativePartFormats(Load(file));
    EXPECT_TRUE(p.ok());
    return p.ok() ? *p : PartFormats{};
  };
  // bf16 throughout.
  const PartFormats llama = parts("llama-3.1-8b.json");
  EXPECT_EQ(llama.dense.name, "bf16");
  EXPECT_EQ(llama.experts.name, "bf16");  // no experts: the dtype
  EXPECT_EQ(llama.other.name, "bf16");
  // DeepSeek-V3: fp8 linear layers with 128 x 128 block scales (not an
  // ElementFormat: 8 bits, no per-group scale), embeddings and lm_head bf16.
  const PartFormats ds = parts("deepseek-v3.json");
  EXPECT_EQ(ds.dense.element_bits, 8);
  EXPECT_EQ(ds.dense.group_size, 0);
  EXPECT_EQ(ds.experts.element_bits, 8);
  EXPECT_EQ(ds.other.name, "bf16");
  // gpt-oss: MXFP4 experts, the rest bf16.
  const PartFormats oss = parts("gpt-oss-120b.json");
  EXPECT_EQ(oss.experts.name, "mxfp4");
  EXPECT_EQ(oss.dense.name, "bf16");
  // Kimi K2.5: int4 experts with a bf16 scale per 32 inputs (4.5 bits a
  // weight); attention, shared experts and dense MLPs are ignored (bf16).
  const PartFormats kimi = parts("kimi-k2.5.json");
  EXPECT_EQ(kimi.experts.element_bits, 4);
  EXPECT_EQ(kimi.experts.group_size, 32);
  EXPECT_EQ(kimi.experts.metadata_bits_per_group, 16);
  EXPECT_DOUBLE_EQ(kimi.experts.BitsPerElement(4096), 4.5);
  EXPECT_EQ(kimi.dense.name, "bf16");
  // Qwen3.5 NVFP4: the experts in NVFP4 (an fp8 scale per 16), attention
  // and DeltaNet ignored.
  const PartFormats nv = parts("qwen3.5-397b-a17b-nvfp4.json");
  EXPECT_EQ(nv.experts.name, "nvfp4");
  EXPECT_EQ(nv.dense.name, "bf16");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
