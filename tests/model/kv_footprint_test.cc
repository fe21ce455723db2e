#include "kvbill/model/kv_footprint.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

double GiBAt(const ModelShape& m, const std::string& format, Tokens ctx) {
  return static_cast<double>(Footprint(m, Fmt(format), ctx, 16).kv_bytes) / kGiB;
}

// Past 2^63 bits (2^60 bytes) the sum saturates and says so instead of
// wrapping. Qwen3-32B in bf16: 262,144 B per token; 2^40 tokens hold 2^58
// bytes (fits); in fp32, 2^59; with blocks of 2^40 tokens a context of
// 2^40 + 1 tokens rounds to two blocks: 2 x 2^40 x 2^19 B = 2^60 B, past it.
TEST(KvFootprintTest, SumsPastTwoToTheSixtyBytesSaturate) {
  const ModelShape m = Catalog("qwen3-32b");
  const Tokens t40 = Tokens{1} << 40;
  const SequenceFootprint fits = Footprint(m, Fmt("bf16"), t40, 16);
  EXPECT_FALSE(fits.saturated);
  EXPECT_EQ(fits.kv_bytes, Bytes{1} << 58);
  const SequenceFootprint rounded = Footprint(m, Fmt("fp32"), t40 + 1, t40);
  EXPECT_TRUE(rounded.saturated);
  EXPECT_GT(rounded.block_rounded_bytes, Bytes{1} << 59);  // never wrapped below
}

// First source table. Qwen3-32B: 64 layers x 8 KV heads x 128 dims x 2 (K,V)
// x 2 bytes = 262,144 B = 256 KiB per token; x 32,768 = 8 GiB, x 131,072 =
// 32 GiB, x 1,048,576 = 256 GiB.
TEST(KvFootprintTest, Qwen3_32bBf16MatchesFirstSourceTable) {
  const ModelShape m = Catalog("qwen3-32b");
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 262144.0);
  EXPECT_EQ(GiBAt(m, "bf16", k32k), 8.0);
  EXPECT_EQ(GiBAt(m, "bf16", k128k), 32.0);
  EXPECT_EQ(GiBAt(m, "bf16", k1M), 256.0);
}

// FP8 halves it: 131,072 B = 128 KiB per token -> 4 / 16 / 128 GiB.
TEST(KvFootprintTest, Qwen3_32bFp8HalvesTheTable) {
  const ModelShape m = Catalog("qwen3-32b");
  EXPECT_EQ(BytesPerToken(m, Fmt("fp8")), 131072.0);
  EXPECT_EQ(GiBAt(m, "fp8", k32k), 4.0);
  EXPECT_EQ(GiBAt(m, "fp8", k128k), 16.0);
  EXPECT_EQ(GiBAt(m, "fp8", k1M), 128.0);
}

// "If it had used full MHA": 64 KV heads -> 64 x 64 x 128 x 2 x 2 = 2 MiB per
// token -> 64 / 256 / 2048 GiB.
TEST(KvFootprintTest, Qwen3_32bWithSixtyFourKvHeads) {
  const ModelShape m = Catalog("qwen3-32b", {{"num_key_value_heads", "64"}});
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 2.0 * 1024 * 1024);
  EXPECT_EQ(GiBAt(m, "bf16", k32k), 64.0);
  EXPECT_EQ(GiBAt(m, "bf16", k128k), 256.0);
  EXPECT_EQ(GiBAt(m, "bf16", k1M), 2048.0);
}

// DeepSeek-V3 MLA: 61 layers x (512 latent + 64 rope) x 2 bytes = 70,272 B
// (68.625 KiB). x 32,768 = 2.1445 GiB; x 131,072 = 8.578 GiB; x 2^20 = 68.625 GiB.
TEST(KvFootprintTest, DeepSeekV3LatentMatchesFirstSource) {
  const ModelShape m = Catalog("deepseek-v3");
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 70272.0);
  EXPECT_DOUBLE_EQ(GiBAt(m, "bf16", k32k), 70272.0 * 32768 / kGiB);
  EXPECT_NEAR(GiBAt(m, "bf16", k32k), 2.1, 0.05);
  EXPECT_NEAR(GiBAt(m, "bf16", k128k), 8.6, 0.05);
  EXPECT_DOUBLE_EQ(GiBAt(m, "bf16", k1M), 68.625);
}

// Second source: Llama-3.1-70B 80 x 8 x 128 x 2 x 2 = 327,680 B per token:
// 2.5 GiB at 8Ki, 10 at 32Ki, 40 at 128Ki, 320 at 1Mi. At 1,000,000 tokens it
// is 327,680,000,000 B = 305.18 GiB (the source prints 312.5).
TEST(KvFootprintTest, Llama31_70bMatchesSecondSource) {
  const ModelShape m = Catalog("llama-3.1-70b");
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 327680.0);
  EXPECT_EQ(GiBAt(m, "bf16", 8192), 2.5);
  EXPECT_EQ(GiBAt(m, "bf16", k32k), 10.0);
  EXPECT_EQ(GiBAt(m, "bf16", k128k), 40.0);
  EXPECT_EQ(GiBAt(m, "bf16", k1M), 320.0);
  EXPECT_EQ(Footprint(m, Fmt("bf16"), 1000000, 16).kv_bytes, 327680000000);
  EXPECT_NEAR(GiBAt(m, "bf16", 1000000), 305.18, 0.005);
}

// Llama-3.1-8B: 32 x 8 x 128 x 4 = 131,072 B = 128 KiB. A 70B with 64 KV
// heads: 80 x 64 x 128 x 4 = 2,621,440 B = 2.5 MiB.
TEST(KvFootprintTest, SecondSourcePerTokenFigures) {
  EXPECT_EQ(BytesPerToken(Catalog("llama-3.1-8b"), Fmt("bf16")), 128.0 * 1024);
  EXPECT_EQ(BytesPerToken(Catalog("llama-3.1-70b", {{"num_key_value_heads", "64"}}), Fmt("bf16")),
            2.5 * 1024 * 1024);
}

// NVFP4: per head vector of 128: 512 + 8 x 8 = 576 bits = 72 B; Qwen3-32B:
// 64 x 8 x 2 x 72 = 73,728 B per token (0.28125 of bf16).
TEST(KvFootprintTest, Nvfp4IncludesItsScales) {
  EXPECT_EQ(BytesPerToken(Catalog("qwen3-32b"), Fmt("nvfp4")), 73728.0);
}

// Mistral-7B slides every layer over 4,096 tokens: 131,072 B/token x 4,096 =
// 512 MiB at any context beyond the window.
TEST(KvFootprintTest, SlidingWindowCapsTheFootprint) {
  const ModelShape m = Catalog("mistral-7b");
  EXPECT_EQ(Footprint(m, Fmt("bf16"), k128k, 16).kv_bytes, 131072LL * 4096);
  EXPECT_EQ(Footprint(m, Fmt("bf16"), 1000, 16).kv_bytes, 131072LL * 1000);
}

// Block rounding of a window: at ctx 4,100 the window holds positions
// [4, 4100); with 16-token blocks aligned to 0 that is blocks 0..256 = 257
// blocks = 4,112 token slots, 16 more than the 4,096 exact.
TEST(KvFootprintTest, SlidingWindowBlocksStraddleTheWindowEdges) {
  const ModelShape m = Catalog("mistral-7b");
  const SequenceFootprint f = Footprint(m, Fmt("bf16"), 4100, 16);
  EXPECT_EQ(f.kv_bytes, 131072LL * 4096);
  EXPECT_EQ(f.block_rounded_bytes, 131072LL * 4112);
}

// A full layer at ctx 100 takes ceil(100/16) = 7 blocks = 112 token slots.
TEST(KvFootprintTest, FullLayersRoundUpToWholeBlocks) {
  const ModelShape m = Catalog("llama-3.1-8b");
  const SequenceFootprint f = Footprint(m, Fmt("bf16"), 100, 16);
  EXPECT_EQ(f.kv_bytes, 131072LL * 100);
  EXPECT_EQ(f.block_rounded_bytes, 131072LL * 112);
}

// Gemma-2-9B: 42 layers, 8 KV heads x 256 dims x 2 x 2 B = 8,192 B per layer
// per token; 21 sliding (4,096) + 21 full. At 128k:
// 21 x 8192 x 131072 + 21 x 8192 x 4096 = 22,548,578,304 + 704,643,072.
TEST(KvFootprintTest, AlternatingSlidingLayersOfGemma2) {
  const ModelShape m = Catalog("gemma-2-9b");
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 344064.0);
  EXPECT_EQ(Footprint(m, Fmt("bf16"), k128k, 16).kv_bytes, 22548578304LL + 704643072LL);
}

// Llama-4-Scout: 36 chunked layers (chunk 8,192) + 12 global, 4,096 B per
// layer per token. The current chunk at ctx 131,072 holds 131072 - 8192 x 15
// = 8,192 tokens; at ctx 131,073 it holds 1.
TEST(KvFootprintTest, ChunkedLayersHoldTheCurrentChunk) {
  const ModelShape m = Catalog("llama-4-scout");
  EXPECT_EQ(Footprint(m, Fmt("bf16"), k128k, 16).kv_bytes,
            12LL * 4096 * 131072 + 36LL * 4096 * 8192);
  EXPECT_EQ(Footprint(m, Fmt("bf16"), k128k + 1, 16).kv_bytes,
            12LL * 4096 * 131073 + 36LL * 4096 * 1);
  // The peak up to 131,073 still counts a full chunk.
  EXPECT_EQ(PeakFootprint(m, Fmt("bf16"), k128k + 1, 16).kv_bytes,
            12LL * 4096 * 131073 + 36LL * 4096 * 8192);
}

// Computing a prefill chunk of 8,192 tokens an iteration, each chunked
// layer of Llama-4-Scout holds up to 8,192 - 1 + 8,192 = 16,383 tokens at
// 131,073: in 16-token blocks ceil(8,192 / 16) + ceil(8,192 / 16) + 1 =
// 512 + 512 + 1 = 1,025 of them; the 12 global layers hold 131,073 tokens,
// ceil(131,073 / 16) = 8,193 blocks. Below a chunk and a window the
// sequence's own blocks bound it: 100 tokens, 7 blocks.
TEST(KvFootprintTest, PeakWithAPrefillChunkCountsItBesideTheWindow) {
  const ModelShape m = Catalog("llama-4-scout");
  const SequenceFootprint f = PeakFootprint(m, Fmt("bf16"), k128k + 1, 16, 1, 8192);
  EXPECT_EQ(f.kv_bytes, 12LL * 4096 * 131073 + 36LL * 4096 * 16383);
  EXPECT_EQ(f.block_rounded_bytes, 12LL * 4096 * 16 * 8193 + 36LL * 4096 * 16 * 1025);
  const SequenceFootprint short_one = PeakFootprint(m, Fmt("bf16"), 100, 16, 1, 8192);
  EXPECT_EQ(short_one.kv_bytes, 48LL * 4096 * 100);
  EXPECT_EQ(short_one.block_rounded_bytes, 48LL * 4096 * 16 * 7);
  // The shared count: window 128 and a 2,048-token chunk in 16-token
  // blocks, 8 + 128 + 1 = 137; window 100 and chunk 48, 7 + 3 + 1 = 11.
  EXPECT_EQ(WindowedPeakBlocks(128, 1 << 20, 2048, 16), 137);
  EXPECT_EQ(WindowedPeakBlocks(100, 10000, 48, 16), 11);
  EXPECT_EQ(WindowedPeakBlocks(100, 50, 48, 16), 4);  // ceil(50 / 16)
}

// Jamba-1.5-Mini: 28 Mamba layers, d_inner = 2 x 4096 = 8,192; conv state
// (4 - 1) x 8192 = 24,576 and SSM state 8192 x 16 = 131,072 elements, bf16:
// 28 x 155,648 x 2 = 8,716,288 B per sequence, outside the KV columns.
TEST(KvFootprintTest, MambaStateIsConstantAndSeparate) {
  const ModelShape m = Catalog("jamba-1.5-mini");
  EXPECT_EQ(StateBytesPerSequence(m), 8716288);
  const SequenceFootprint f = Footprint(m, Fmt("bf16"), k128k, 16);
  EXPECT_EQ(f.state_bytes, 8716288);
  EXPECT_EQ(f.kv_bytes, 4LL * 8 * 128 * 2 * 2 * 131072);  // 4 attention layers
}

// Tensor parallel: 8 KV heads over 2 GPUs is 4 per GPU (half); over 16 GPUs
// each GPU keeps one head (replicated). An MLA latent is replicated.
TEST(KvFootprintTest, TensorParallelSplitsOrReplicatesHeads) {
  const ModelShape q = Catalog("qwen3-32b");
  EXPECT_EQ(BytesPerToken(q, Fmt("bf16"), 2), 131072.0);
  EXPECT_EQ(BytesPerToken(q, Fmt("bf16"), 16), 32768.0);
  EXPECT_EQ(BytesPerToken(Catalog("deepseek-v3"), Fmt("bf16"), 8), 70272.0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
