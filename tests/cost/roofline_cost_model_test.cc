#include "kvbill/cost/roofline_cost_model.h"

#include <gtest/gtest.h>

#include <vector>

#include "kvbill/hardware/gpu.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

RooflineCostModel Model(const std::string& name, RooflineParams params) {
  auto gpu = LookupGpu("h100-sxm");
  EXPECT_TRUE(gpu.ok());
  auto r = Roofline::Make(Catalog(name), Fmt("bf16"), "auto", *gpu, params);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return RooflineCostModel(*r);
}

TEST(RooflineCostModelTest, DecodeIterationIsWeightsPlusKvAtBandwidthPlusOverhead) {
  // Llama-3.1-8B, BF16: 8,030,261,248 parameters x 2 B = 16,060,522,496 B
  // of weights, of which a step reads all but the input embedding table
  // (128,256 x 4,096 x 2 B = 1,050,673,152 B, separate from the lm_head: only
  // the batch's rows are gathered), 15,009,849,344 B; KV 32 layers x 8 heads
  // x 128 x 2 (K, V) x 2 B = 131,072 B per token. Two decodes at contexts
  // 1,000 and 3,000 read 4,000 tokens of KV and write one token each:
  // 15,009,849,344 + 524,288,000 + 262,144 = 15,534,399,488 B at 3.35 TB/s
  // = 4.637134... ms; FLOPs are ~3.2e10,
  // 32 us at 989 TFLOP/s, so the step is memory-bound. Plus 1 ms overhead.
  const RooflineCostModel m = Model("llama-3.1-8b", RooflineParams{1, 1.0, 1.0, 0.001});
  const std::vector<ScheduledWork> work = {{1000, 1, false}, {3000, 1, false}};
  std::vector<long double> own(2);
  const double t = m.IterationSeconds(work, own);
  EXPECT_NEAR(t, 15534399488.0 / 3.35e12 + 0.001, 1e-12);
  // Own time: each sequence's KV read and write at the bandwidth.
  EXPECT_NEAR(static_cast<double>(own[0]), (1000 + 1) * 131072.0 / 3.35e12, 1e-15);
  EXPECT_NEAR(static_cast<double>(own[1]), (3000 + 1) * 131072.0 / 3.35e12, 1e-15);
}

// The lines DecodeLinesFor returns must equal IterationSeconds step by step:
// the contract that makes the engine's event skipping exact.
void ExpectLinesMatchSteps(const RooflineCostModel& m, std::vector<Tokens> contexts, Tokens steps) {
  Tokens done = 0;
  DecodeLines lines;
  std::vector<ScheduledWork> work(contexts.size());
  std::vector<long double> own(contexts.size());
  int queries = 0;
  while (done < steps) {
    std::vector<Tokens> now(contexts.size());
    for (std::size_t i = 0; i < contexts.size(); ++i) now[i] = contexts[i] + done;
    m.DecodeLinesFor(now, steps - done, &lines);
    ++queries;
    ASSERT_FALSE(lines.lines.empty());
    ASSERT_EQ(lines.lines.front().begin, 0);
    Tokens covered = 0;
    for (std::size_t p = 0; p < lines.lines.size(); ++p) {
      const StepLine& line = lines.lines[p];
      ASSERT_EQ(line.begin, covered);
      ASSERT_GT(line.end, line.begin);
      for (Tokens j = line.begin; j < line.end; ++j) {
        for (std::size_t i = 0; i < contexts.size(); ++i) {
          work[i] = ScheduledWork{now[i] + j, 1, false};
        }
        const double t = m.IterationSeconds(work, own);
        const long double line_t = line.t0 + line.t1 * static_cast<long double>(j);
        ASSERT_NEAR(static_cast<double>(line_t), t, 1e-12 * t) << "step " << done + j;
        for (std::size_t i = 0; i < contexts.size(); ++i) {
          const std::size_t k = p * contexts.size() + i;
          const long double o = lines.own0[k] + lines.own1[k] * static_cast<long double>(j);
          ASSERT_NEAR(static_cast<double>(o), static_cast<double>(own[i]), 1e-12 * t);
        }
      }
      covered = line.end;
    }
    done += covered;
  }
  EXPECT_GE(queries, 1);
}

TEST(RooflineCostModelTest, DecodeLinesEqualStepsForFullAttention) {
  ExpectLinesMatchSteps(Model("llama-3.1-8b", RooflineParams{1, 0.7, 0.6, 0.002}), {10, 500, 4000},
                        300);
}

TEST(RooflineCostModelTest, DecodeLinesSplitWhereComputeOvertakesMemory) {
  // A batch of 64 at 10% compute efficiency (98.9 TFLOP/s), all at
  // context 1: step 0 computes 64 x 15.0098 GFLOP = 0.9606 TFLOP, 9.713 ms,
  // and reads 15.0098 GB of weights (the input embedding table aside) and
  // 64 x 2 tokens of KV, 4.486 ms at 3.35 TB/s: compute-bound. Each step
  // adds 64 x 131,072 B of reads (+2.504 us) but only 64 x 524,288 attention
  // FLOPs (+0.339 us), so memory overtakes compute after (9.713 - 4.486) ms
  // / (2.504 - 0.339) us = 2,415 steps; the lines must split there and still
  // equal every step.
  const RooflineCostModel m = Model("llama-3.1-8b", RooflineParams{1, 1.0, 0.1, 0});
  std::vector<Tokens> contexts(64, 1);
  DecodeLines lines;
  m.DecodeLinesFor(contexts, 100000, &lines);
  ASSERT_EQ(lines.lines.size(), 2u);
  EXPECT_NEAR(static_cast<double>(lines.lines[0].end), 2415, 2);
  ExpectLinesMatchSteps(m, contexts, 5000);
}

TEST(RooflineCostModelTest, DecodeLinesStopWhereASlidingWindowFills) {
  // Mistral-7B: every layer has a 4,096-token window. A sequence at 4,000
  // fills its window after 96 more tokens, so the first stretch ends there.
  const RooflineCostModel m = Model("mistral-7b", RooflineParams{1, 0.7, 0.6, 0.001});
  DecodeLines lines;
  m.DecodeLinesFor(std::vector<Tokens>{4000, 100}, 1000, &lines);
  EXPECT_EQ(lines.lines.back().end, 97);
  ExpectLinesMatchSteps(m, {4000, 100}, 1000);
}

// Sparse attention reads every cached token's indexer key but attends only
// its top-k. DeepSeek-V3.2 (61 MLA layers, latent 576 x 2 B = 1,152 B, an
// fp8 indexer key with its fp32 scale 132 B, index_topk 2,048): at context
// 1,000 every token is attended, 61 x 1,284 x 1,000 = 78,324,000 B; at
// 100,000, 61 x (1,152 x 2,048 + 132 x 100,000) = 949,117,056 B, where
// dense MLA would read 61 x 1,284 x 100,000 = 7,832,400,000 B.
// MiniMax-M3 (3 dense GQA layers of 2,048 B a token; 57 sparse ones of
// 2,048 B of K and V plus a 256 B bf16 index key, attending 16 top blocks
// and 1 local block of 128 tokens = 2,176): at 10,000, 3 x 2,048 x 10,000
// + 57 x (2,048 x 2,176 + 256 x 10,000) = 61,440,000 + 399,937,536 =
// 461,377,536 B.
TEST(RooflineCostModelTest, SparseAttentionReadsItsTopKAndEveryIndexerKey) {
  auto gpu = LookupGpu("h200");
  ASSERT_TRUE(gpu.ok());
  const std::string dir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/";
  auto dsa = LoadModel(dir + "deepseek-v3.2.json");
  ASSERT_TRUE(dsa.ok()) << dsa.error().message();
  auto r = Roofline::Make(*dsa, Fmt("bf16"), "auto", *gpu, RooflineParams{8, 0.7, 0.6, 0.001});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_DOUBLE_EQ(r->KvReadBytes(1000), 78324000.0);
  EXPECT_DOUBLE_EQ(r->KvReadBytes(100000), 949117056.0);
  // The decode lines break where the top-k fills, and still equal the steps.
  const RooflineCostModel m(*r);
  DecodeLines lines;
  m.DecodeLinesFor(std::vector<Tokens>{2000, 50000}, 1000, &lines);
  EXPECT_EQ(lines.lines.back().end, 49);
  ExpectLinesMatchSteps(m, {2000, 50000}, 1000);
  auto m3 = LoadModel(dir + "minimax-m3.json");
  ASSERT_TRUE(m3.ok()) << m3.error().message();
  auto r3 = Roofline::Make(*m3, Fmt("bf16"), "auto", *gpu, RooflineParams{1, 0.7, 0.6, 0.001});
  ASSERT_TRUE(r3.ok()) << r3.error().message();
  EXPECT_DOUBLE_EQ(r3->KvReadBytes(10000), 461377536.0);
}

// What every GPU holds whole it reads whole and computes whole. DeepSeek-V3
// keeps 1,138,603,872 B on every GPU (docs/fit.md): per layer (61) the fp8
// q_a_proj (7,168 x 1,536 = 11,010,048) and kv_a_proj_with_mqa (7,168 x 576
// = 4,128,768) with their 128 x 128 block scales, four bf16 norms (1,536 +
// 512 + 7,168 + 7,168 = 16,384), and per MoE layer (58) the bf16 router
// (256 x 7,168 = 1,835,008) and its 256 correction biases; plus the final
// norm (7,168). Parameters: 61 x (15,138,816 + 16,384) + 58 x (1,835,008 +
// 256) + 7,168 = 1,030,919,680. Over 8 GPUs each reads them whole, not an
// eighth: 7/8 x 1,138,603,872 = 996,278,388 B more a step than an even
// split, and 2 x 7/8 x 1,030,919,680 FLOPs more a token.
TEST(RooflineCostModelTest, ReplicatedWeightsAreReadAndAppliedWholeOnEveryGpu) {
  auto gpu = LookupGpu("h200");
  ASSERT_TRUE(gpu.ok());
  const ModelShape model = Catalog("deepseek-v3");
  auto one = Roofline::Make(model, Fmt("bf16"), "auto", *gpu, RooflineParams{1, 1, 1, 0});
  auto eight = Roofline::Make(model, Fmt("bf16"), "auto", *gpu, RooflineParams{8, 1, 1, 0});
  ASSERT_TRUE(one.ok() && eight.ok());
  EXPECT_NEAR(eight->WeightBytes(0) - one->WeightBytes(0) / 8, 996278388.0, 1.0);
  EXPECT_NEAR(eight->MatmulFlopsPerToken() - one->MatmulFlopsPerToken() / 8,
              2.0 * 7.0 / 8.0 * 1030919680.0, 1.0);
}

// DeepSeek-V4-Flash in fp8 (584-byte latents, 132-byte indexer keys): every
// one of the 43 layers reads its 128-token window; the 21 ratio-4 layers
// read their top 512 compressed latents (2,048 tokens' worth at 146 B a
// token) and every indexer key (33 B a token); the 20 ratio-128 layers read
// every compressed latent (4.5625 B a token). At 10,000: 43 x 128 x 584 +
// 21 x 146 x 2,048 + 21 x 33 x 10,000 + 20 x 4.5625 x 10,000 = 3,214,336 +
// 6,279,168 + 6,930,000 + 912,500 = 17,336,004 B. At 1,000 (top-k not
// full): 3,214,336 + 21 x 179 x 1,000 + 91,250 = 7,064,586 B.
TEST(RooflineCostModelTest, CompressedLayersReadWindowTopKAndEveryCompressedKey) {
  auto gpu = LookupGpu("h200");
  ASSERT_TRUE(gpu.ok());
  const std::string dir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/";
  auto v4 = LoadModel(dir + "deepseek-v4-flash.json");
  ASSERT_TRUE(v4.ok()) << v4.error().message();
  auto r = Roofline::Make(*v4, Fmt("fp8"), "auto", *gpu, RooflineParams{4, 0.7, 0.6, 0.001});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_DOUBLE_EQ(r->KvReadBytes(10000), 17336004.0);
  EXPECT_DOUBLE_EQ(r->KvReadBytes(1000), 7064586.0);
  // Writes per token: a window latent on every layer, and the compressed
  // share: 43 x 584 + 21 x 179 + 20 x 4.5625 = 25,112 + 3,759 + 91.25.
  EXPECT_DOUBLE_EQ(r->KvWriteBytesPerToken(), 28962.25);
  const RooflineCostModel m(*r);
  ExpectLinesMatchSteps(m, {100, 1500, 20000}, 1000);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
