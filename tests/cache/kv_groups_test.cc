#include "kvbill/cache/kv_groups.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// One-block runs {h, 0, 1}: block i named by hashes[i] alone.
std::vector<BlockRun> Blocks(const std::vector<std::uint64_t>& hashes) {
  std::vector<BlockRun> runs;
  for (const std::uint64_t h : hashes) runs.push_back(BlockRun{h, 0, 1});
  return runs;
}

// A gpt-oss-like toy: layer 0 full attention, layer 1 sliding window of 32
// tokens; 2 KV heads of 64 + 64 elements: 2 x 128 x 16 bits = 512 bytes per
// token per layer in bf16.
ModelShape Toy() {
  ModelShape m;
  m.name = "toy";
  m.hidden_size = 256;
  m.vocab_size = 1000;
  LayerShape full;
  full.kind = LayerKind::kFullAttention;
  full.query_heads = 4;
  full.qk_head_dim = 64;
  full.v_head_dim = 64;
  full.kv_heads = 2;
  LayerShape sliding = full;
  sliding.kind = LayerKind::kSlidingWindow;
  sliding.window = 32;
  m.layers = {full, sliding};
  return m;
}

TEST(KvGroupsTest, SplitsLayersIntoGroupsOfEqualPages) {
  const KvGroupLayout layout = MakeKvGroupLayout(Toy(), Fmt("bf16"), 1, 16);
  ASSERT_EQ(layout.groups.size(), 2u);
  EXPECT_EQ(layout.groups[0].kind, KvGroupKind::kFull);
  EXPECT_EQ(layout.groups[1].kind, KvGroupKind::kSliding);
  EXPECT_EQ(layout.groups[1].window, 32);
  EXPECT_EQ(layout.layers_per_group, 1);
  // A page: 16 tokens x 1 layer x 512 bytes.
  EXPECT_EQ(layout.page_bytes, 8192);
  EXPECT_FALSE(layout.Single());
  EXPECT_TRUE(layout.Windowed());
}

TEST(KvGroupsTest, GroupsAsVllmDoesForAFiveToOneModel) {
  // Gemma-3 style: 42 layers, every sixth full: 7 full, 35 sliding. vLLM's
  // group size is the fewest layers of a kind (7): one full group and five
  // sliding groups of 7 layers.
  const ModelShape m =
      Catalog("gemma-2-9b", {{"model_type", "gemma3_text"}, {"sliding_window", "1024"}});
  const KvGroupLayout layout = MakeKvGroupLayout(m, Fmt("bf16"), 1, 16);
  EXPECT_EQ(layout.layers_per_group, 7);
  ASSERT_EQ(layout.groups.size(), 6u);
  int full = 0, sliding = 0;
  for (const KvCacheGroup& g : layout.groups) {
    (g.kind == KvGroupKind::kFull ? full : sliding) += 1;
    EXPECT_EQ(g.layers, 7);
  }
  EXPECT_EQ(full, 1);
  EXPECT_EQ(sliding, 5);
  // Gemma-2-9B: 8 KV heads x (256 + 256) elements x 2 bytes = 8192 bytes per
  // token per layer; a page is 16 x 7 x 8192.
  EXPECT_EQ(layout.page_bytes, 16 * 7 * 8192);
}

// vLLM groups by the most layers of a kind when none has 1.25 times the
// fewest: 20 full beside 24 sliding (24 < 25) makes groups of 24, one of
// each kind, the full one padded; beside 25 sliding (25 = 1.25 x 20) it
// groups by the fewest, 20: one full and two sliding groups (20 and 5).
TEST(KvGroupsTest, NearlyEqualKindsGroupByTheMost) {
  auto layout = [](int full, int sliding) {
    ModelShape m = Toy();
    m.layers.clear();
    for (int i = 0; i < full + sliding; ++i) m.layers.push_back(Toy().layers[i < full ? 0 : 1]);
    return MakeKvGroupLayout(m, Fmt("bf16"), 1, 16);
  };
  const KvGroupLayout most = layout(20, 24);
  EXPECT_EQ(most.layers_per_group, 24);
  ASSERT_EQ(most.groups.size(), 2u);
  EXPECT_EQ(most.groups[0].layers, 20);  // padded to 24 in the page
  EXPECT_EQ(most.page_bytes, 16 * 24 * 512);
  const KvGroupLayout fewest = layout(20, 25);
  EXPECT_EQ(fewest.layers_per_group, 20);
  ASSERT_EQ(fewest.groups.size(), 3u);
  EXPECT_EQ(fewest.groups[2].layers, 5);
  EXPECT_EQ(fewest.page_bytes, 16 * 20 * 512);
}

TEST(KvGroupsTest, Llama4ScoutHasOneFullAndThreeChunkedGroups) {
  // 48 layers, every fourth global: 12 full, 36 chunked of 8,192 tokens;
  // groups of 12 layers. 8 KV heads x (128 + 128) x 2 bytes = 4,096 bytes per
  // token per layer: a page is 16 x 12 x 4,096 = 786,432 bytes.
  const KvGroupLayout layout = MakeKvGroupLayout(Catalog("llama-4-scout"), Fmt("bf16"), 1, 16);
  EXPECT_EQ(layout.layers_per_group, 12);
  ASSERT_EQ(layout.groups.size(), 4u);
  int chunked = 0;
  for (const KvCacheGroup& g : layout.groups) {
    if (g.kind == KvGroupKind::kChunked) {
      ++chunked;
      EXPECT_EQ(g.window, 8192);
    }
  }
  EXPECT_EQ(chunked, 3);
  EXPECT_EQ(layout.page_bytes, 786432);
}

// SGLang's pool keeps every token of gpt-oss's and Gemma's sliding layers
// (disable_hybrid_swa_memory) and of any model outside its hybrid
// sliding-window list: one group of all 24 gpt-oss-20b layers, a page of
// 16 x 24 x 8 KV heads x (64 + 64) x 2 bytes = 786,432 bytes. Llama 4, one
// of its hybrid architectures, keeps its groups.
TEST(KvGroupsTest, SglangPoolKeepsEveryTokenOfSlidingLayersOutsideItsHybridModels) {
  const ModelShape gpt_oss = Catalog("gpt-oss-20b");
  ASSERT_EQ(gpt_oss.architecture, "GptOssForCausalLM");
  EXPECT_FALSE(SglangHybridSlidingPool(gpt_oss));
  EXPECT_EQ(MakeKvGroupLayout(gpt_oss, Fmt("bf16"), 1, 16).groups.size(), 2u);
  const ModelShape pool = SglangPoolModel(gpt_oss);
  const KvGroupLayout layout = MakeKvGroupLayout(pool, Fmt("bf16"), 1, 16);
  EXPECT_TRUE(layout.Single());
  EXPECT_EQ(layout.page_bytes, 786432);
  // Only the pool changes: the layers keep their heads.
  ASSERT_EQ(pool.layers.size(), gpt_oss.layers.size());
  EXPECT_EQ(pool.layers[0].kv_heads, gpt_oss.layers[0].kv_heads);

  EXPECT_TRUE(SglangPoolModel(Toy()).layers[1].kind == LayerKind::kFullAttention);
  EXPECT_EQ(SglangPoolModel(Toy()).layers[1].window, 0);

  const ModelShape scout = Catalog("llama-4-scout");
  EXPECT_TRUE(SglangHybridSlidingPool(scout)) << scout.architecture;
  EXPECT_EQ(MakeKvGroupLayout(SglangPoolModel(scout), Fmt("bf16"), 1, 16).groups.size(), 4u);
}

TEST(KvGroupsTest, FullAttentionModelsKeepOneGroupOfEveryLayer) {
  const ModelShape m = Catalog("llama-3.1-8b");
  const KvGroupLayout layout = MakeKvGroupLayout(m, Fmt("bf16"), 1, 16);
  EXPECT_TRUE(layout.Single());
  // 32 layers x 8 KV heads x 256 elements x 2 bytes x 16 tokens.
  EXPECT_EQ(layout.page_bytes, 32 * 8 * 256 * 2 * 16);
}

TEST(KvGroupsTest, LinearStateTakesWholePagesPerSequence) {
  // Jamba-1.5-Mini: 4 attention layers of 8 KV heads x 128 + 128 elements
  // (4 x 8 x 256 x 2 = 16,384 bytes per token), so a 16-token page is
  // 262,144 bytes; 28 Mamba layers of 8,192 x 16 SSM state + 3 x 8,192 conv
  // state elements in bf16 = 28 x 155,648 x 2 = 8,716,288 bytes: 34 pages.
  const ModelShape m = Catalog("jamba-1.5-mini");
  const KvGroupLayout layout = MakeKvGroupLayout(m, Fmt("bf16"), 1, 16);
  EXPECT_EQ(layout.groups.size(), 1u);
  EXPECT_EQ(layout.page_bytes, 262144);
  EXPECT_EQ(layout.state_bytes, 8716288);
  EXPECT_EQ(layout.state_pages, 34);
  EXPECT_FALSE(layout.Single());
}

// The longest sequence a pool holds alone: Jamba's 1,000 pages less its 34
// state pages leave 966 pages of 16 tokens, 15,456 tokens (capacity_tokens
// says 16,000: the pages, not a sequence). The toy's full group grows a
// block per 16 tokens and its sliding group holds at most ceil(32 / 16) +
// ceil(16 / 16) (a 16-token chunk) + 1 = 4 blocks, so 1,000 pages hold a
// sequence of 996 x 16 = 15,936 tokens, where capacity_tokens (pages over
// both groups) says 8,000.
TEST(KvGroupsTest, LongestSequenceCountsStatePagesAndWindows) {
  KvPool jamba(MakeKvGroupLayout(Catalog("jamba-1.5-mini"), Fmt("bf16"), 1, 16), 1000);
  EXPECT_EQ(jamba.capacity_tokens(), 16000);
  EXPECT_EQ(jamba.LongestSequence(8192), 966 * 16);
  EXPECT_EQ(jamba.PeakPages(966 * 16, 8192), 1000);
  EXPECT_GT(jamba.PeakPages(966 * 16 + 1, 8192), 1000);
  KvPool toy(MakeKvGroupLayout(Toy(), Fmt("bf16"), 1, 16), 1000);
  EXPECT_EQ(toy.capacity_tokens(), 8000);
  EXPECT_EQ(toy.LongestSequence(16), 996 * 16);
  // Mistral-7B slides every layer (4,096 tokens): a sequence holds at most
  // ceil(4,096 / 16) + 16 (a 256-token chunk) + 1 = 273 blocks, whatever
  // its length, so 1,000 pages hold any length: unlimited, as an unlimited
  // pool (it read 16,001, the bound of the search, as the pool's).
  KvPool sliding(MakeKvGroupLayout(Catalog("mistral-7b"), Fmt("bf16"), 1, 16), 1000);
  EXPECT_EQ(sliding.LongestSequence(256), kUnlimitedBlocks);
  EXPECT_LE(sliding.PeakPages(1'000'000, 256), 1000);
}

TEST(KvGroupsTest, SlidingGroupHoldsOnlyItsWindow) {
  KvPool pool(MakeKvGroupLayout(Toy(), Fmt("bf16"), 1, 16), 1000);
  ASSERT_TRUE(pool.Admit(0, {}, 0, 1).has_value());  // token 0
  // After the Reserve for token c (c tokens computed): the full group holds
  // ceil((c + 1) / 16) blocks; the sliding group blocks from
  // floor(max(0, c - 31) / 16) to the same end.
  struct Point {
    Tokens c;
    std::int64_t pages;
  };
  const std::vector<Point> points = {
      {15, 1 + 1},     // full [0, 1), sliding [0, 1)
      {31, 2 + 2},     // 32 tokens: two blocks each
      {32, 3 + 3},     // token 32 opens block 2; the window starts at token 1
      {47, 3 + 2},     // window starts at token 16: block 0 freed
      {48, 4 + 3},     // block 3 opens; window [17, 48] spans blocks 1..3
      {100, 7 + 3},    // full ceil(101 / 16) = 7; sliding from floor(69 / 16) = 4
      {1000, 63 + 3},  // full ceil(1001 / 16) = 63; sliding from floor(969 / 16) = 60
  };
  Tokens c = 1;
  for (const Point& p : points) {
    for (; c <= p.c; ++c) ASSERT_TRUE(pool.Reserve(0, c, c + 1));
    EXPECT_EQ(pool.PagesOf(0), p.pages) << "at " << p.c;
    EXPECT_EQ(pool.free_blocks(), 1000 - p.pages) << "at " << p.c;
  }
  pool.Release(0);
  EXPECT_EQ(pool.free_blocks(), 1000);
}

TEST(KvGroupsTest, SlidingOnlyModelFreesBlocksOutsideItsWindow) {
  // Mistral-7B-v0.1: every layer slides over 4,096 tokens, so its one group
  // is a sliding group. 10,000 tokens computed, token 10,000 reserved:
  // blocks from floor((10,000 - 4,095) / 16) = 369 to ceil(10,001 / 16) = 626.
  const KvGroupLayout layout = MakeKvGroupLayout(Catalog("mistral-7b"), Fmt("bf16"), 1, 16);
  ASSERT_EQ(layout.groups.size(), 1u);
  EXPECT_EQ(layout.groups[0].kind, KvGroupKind::kSliding);
  EXPECT_FALSE(layout.Single());
  KvPool pool(layout, 1000);
  ASSERT_TRUE(pool.Admit(0, {}, 0, 625).has_value());  // tokens 0..9,999
  ASSERT_TRUE(pool.Reserve(0, 10000, 10001));
  EXPECT_EQ(pool.PagesOf(0), 626 - 369);
  EXPECT_EQ(pool.free_blocks(), 1000 - 257);
}

TEST(KvGroupsTest, HitShortensToWhereTheSlidingWindowIsCached) {
  // 14 pages. Sequence 0: a 96-token prompt (blocks 0..5) in one chunk.
  KvPool pool(MakeKvGroupLayout(Toy(), Fmt("bf16"), 1, 16), 14);
  const std::vector<std::uint64_t> h = {101, 102, 103, 104, 105, 106};
  ASSERT_TRUE(pool.Admit(0, {}, 0, 6).has_value());  // 6 full + 6 sliding pages
  for (std::int64_t b = 0; b < 6; ++b) {
    pool.CommitRange(0, b, Blocks({h[static_cast<std::size_t>(b)]}));
  }
  // Decoding token 96: the window needs tokens 65..96, so sliding blocks 0..3
  // are freed (newest first: 3, 2, 1, 0 join the LRU list) and block 6 of
  // each group is allocated.
  ASSERT_TRUE(pool.Reserve(0, 96, 97));
  EXPECT_EQ(pool.PagesOf(0), 7 + 3);
  EXPECT_EQ(pool.free_blocks(), 4);
  // Every block of the full group is cached; so are sliding blocks 0..5.
  EXPECT_EQ(pool.LongestPrefix(Blocks(h)), 6);
  // Release: full blocks tail first (6 unhashed, empty; 5..0 cached), then
  // sliding (6 empty; 5, 4 cached). LRU: s3 s2 s1 s0 f5 .. f0 s5 s4.
  pool.Release(0);
  // A new sequence takes 2 blocks per group: the two empty pages, then it
  // evicts s3 and s2.
  ASSERT_TRUE(pool.Admit(1, {}, 0, 2).has_value());
  EXPECT_EQ(pool.stats().evicted_blocks, 2);
  // Six blocks still hit: the next token (96) needs sliding blocks 4, 5.
  EXPECT_EQ(pool.LongestPrefix(Blocks(h)), 6);
  // Five blocks: the full group has them, but the window of token 80 needs
  // sliding blocks 3, 4 (s3 gone); n = 3 needs blocks 1, 2 (s2 gone);
  // n = 2 needs blocks 0, 1, both cached.
  const std::vector<std::uint64_t> five(h.begin(), h.begin() + 5);
  EXPECT_EQ(pool.LongestPrefix(Blocks(five)), 2);
  // Admitting those 2 hits with a third block: full [0, 3) and sliding
  // [0, 3), of which 4 pages are reused cached blocks and 2 are fresh.
  const std::vector<std::uint64_t> two(h.begin(), h.begin() + 2);
  ASSERT_EQ(pool.Admit(2, Blocks(two), 2, 3), 2);
  EXPECT_EQ(pool.PagesOf(2), 6);
  EXPECT_EQ(pool.free_blocks(), 14 - 4 - 6);
}

TEST(KvGroupsTest, ChunkedGroupFreesBlocksBeforeTheCurrentChunk) {
  ModelShape m = Toy();
  m.layers[1].kind = LayerKind::kChunkedAttention;
  m.layers[1].window = 64;
  KvPool pool(MakeKvGroupLayout(m, Fmt("bf16"), 1, 16), 1000);
  ASSERT_TRUE(pool.Admit(0, {}, 0, 4).has_value());  // tokens 0..63
  // 64 computed: token 64 starts chunk 1, so blocks 0..3 go; block 4 opens.
  ASSERT_TRUE(pool.Reserve(0, 64, 65));
  EXPECT_EQ(pool.PagesOf(0), 5 + 1);
  // 127 computed (token 127, chunk 1 = blocks 4..7): full 8, chunked 4.
  for (Tokens c = 65; c <= 127; ++c) ASSERT_TRUE(pool.Reserve(0, c, c + 1));
  EXPECT_EQ(pool.PagesOf(0), 8 + 4);
}

TEST(KvGroupsTest, DecodeDemandBoundsEveryStep) {
  KvPool pool(MakeKvGroupLayout(Toy(), Fmt("bf16"), 1, 16), 1000);
  ASSERT_TRUE(pool.Admit(0, {}, 0, 4).has_value());  // 64 tokens computed
  ASSERT_TRUE(pool.Reserve(0, 64, 65));              // full [0, 5), sliding [2, 5)
  EXPECT_EQ(pool.PagesOf(0), 8);
  // Past its window, with c = 16 q + r computed, the sliding group holds
  // blocks [q - 2, q + 1) for r <= 14 and [q - 1, q + 1) for r = 15: at
  // most 3, what it holds now. So only the full group adds demand.
  EXPECT_EQ(pool.DecodeDemand(0, 65, 1), 0);   // c = 65: nothing opens
  EXPECT_EQ(pool.DecodeDemand(0, 65, 16), 1);  // c = 80 opens full block 5
  EXPECT_EQ(pool.DecodeDemand(0, 65, 48), 3);  // up to c = 112: full 8 blocks
  // Before the window fills, the sliding group grows like the full one.
  ASSERT_TRUE(pool.Admit(1, {}, 0, 1).has_value());  // token 0: 1 page per group
  EXPECT_EQ(pool.DecodeDemand(1, 1, 31), 1 + 1);     // up to c = 31: 2 blocks each
  EXPECT_EQ(pool.DecodeDemand(1, 1, 32), 2 + 2);     // c = 32: block 2, window from token 1
}

TEST(KvGroupsTest, CommitRangeHashesOnlyTheBlocksEachGroupHolds) {
  KvPool pool(MakeKvGroupLayout(Toy(), Fmt("bf16"), 1, 16), 100);
  ASSERT_TRUE(pool.Admit(0, {}, 0, 6).has_value());  // tokens 0..95, unhashed
  // Token 96: the window needs tokens 65..96, so sliding blocks 0..3 are
  // freed unhashed; the sliding group holds [4, 7), the full group [0, 7).
  ASSERT_TRUE(pool.Reserve(0, 96, 97));
  // Blocks 0..6 as one run of 7 blocks of key 100.
  const std::vector<BlockRun> h = {{100, 0, 7}};
  pool.CommitRange(0, 0, h);  // full: blocks 0..6; sliding: only 4..6
  // 7 blocks: full [0, 7) and the window of token 112 (tokens 81..111,
  // sliding blocks 5, 6) are named. 6: blocks 4, 5 for tokens 65..95.
  EXPECT_EQ(pool.LongestPrefix(h), 7);
  EXPECT_EQ(pool.LongestPrefix(h, 6), 6);
  // 3 blocks: the window of token 48 needs sliding blocks 1, 2, never
  // named: n = 2 needs blocks 0, 1, n = 1 block 0: no hit.
  EXPECT_EQ(pool.LongestPrefix(h, 3), 0);
  pool.Release(0);
  EXPECT_EQ(pool.LongestPrefix(h), 7);  // released blocks stay cached
  EXPECT_EQ(pool.free_blocks(), 100);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
