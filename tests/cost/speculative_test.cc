// Speculative decoding's arithmetic: the expected advance of a verification
// step, the methods' defaults, the draft head's shape and the cost of a
// step with its draft, worked out by hand.
#include "kvbill/cost/speculative.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/engine_test_util.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(SpeculativeTest, ExpectedTokensPerStepByHand) {
  // One α: (1 - α^(k+1)) / (1 - α). α 0.5, k 2: (1 - 0.125) / 0.5 = 1.75.
  const std::vector<double> half = {0.5};
  EXPECT_EQ(ExpectedTokensPerStep(half, 2), 1.75L);
  // α 0: no draft token accepted, the step's own token only.
  const std::vector<double> zero = {0.0};
  EXPECT_EQ(ExpectedTokensPerStep(zero, 4), 1.0L);
  // k 0: no draft at all.
  EXPECT_EQ(ExpectedTokensPerStep(half, 0), 1.0L);
  // Per position (product form): 1 + 0.75 + 0.75 x 0.5 + 0.75 x 0.5 x 0.25
  // = 1 + 0.75 + 0.375 + 0.09375 = 2.21875.
  const std::vector<double> positions = {0.75, 0.5, 0.25};
  EXPECT_EQ(ExpectedTokensPerStep(positions, 3), 2.21875L);
  // α -> 1: k + 1 in the limit; α = 1 - 2^-20, k 3: 4 - (0 + 1 + 2 + 3) x 2^-20
  // to first order, within 1e-10.
  const std::vector<double> near_one = {1.0 - 1.0 / 1048576.0};
  EXPECT_NEAR(static_cast<double>(ExpectedTokensPerStep(near_one, 3)), 4.0 - 6.0 / 1048576.0,
              1e-10);
}

TEST(SpeculativeTest, TreeOfTopkOneIsTheChain) {
  // Depth 3, top-k 1, 4 tokens verified: the chain's (1 - 0.8^4) / 0.2 =
  // 2.952, the same number to the bit.
  const std::vector<double> rates = {0.8};
  EXPECT_EQ(ExpectedTokensPerTreeStep(rates, 0.25, 3, 1, 4), ExpectedTokensPerStep(rates, 3));
  EXPECT_NEAR(static_cast<double>(ExpectedTokensPerTreeStep(rates, 0.25, 3, 1, 4)), 2.952, 1e-15);
  // Per-position rates too: 1 + 0.75 + 0.375 + 0.09375.
  const std::vector<double> positions = {0.75, 0.5, 0.25};
  EXPECT_EQ(ExpectedTokensPerTreeStep(positions, 0.9, 3, 1, 4), 2.21875L);
  EXPECT_EQ(TreeDraftNodes(3, 1), 3);
}

TEST(SpeculativeTest, SmallTreeByHand) {
  // α 0.5, β 0.5: the draft's first candidate is the model's token with
  // chance 0.5, its second with 0.25 (top-2 coverage 0.75).
  // Depth 1: A 0.5, B 0.25. Depth 2 (both expanded, top-k 2): A's children
  // 0.25, 0.125; B's 0.125, 0.0625. 2 + 1 x 4 = 6 candidates.
  const std::vector<double> half = {0.5};
  EXPECT_EQ(TreeDraftNodes(2, 2), 6);
  // All six verified (7 tokens): 1 + 0.75 + 0.5625 = 2.3125, which is also
  // 1 + c + c² with c = 0.75, the chance a depth holds the model's token.
  EXPECT_EQ(ExpectedTokensPerTreeStep(half, 0.5, 2, 2, 7), 2.3125L);
  // The best three (4 tokens): 0.5, 0.25, 0.25: 2.0; the best four: 2.125.
  EXPECT_EQ(ExpectedTokensPerTreeStep(half, 0.5, 2, 2, 4), 2.0L);
  EXPECT_EQ(ExpectedTokensPerTreeStep(half, 0.5, 2, 2, 5), 2.125L);
  // Depth 3: only the two best of depth 2 are expanded, A's children 0.25
  // and 0.125 (B's first child ties at 0.125; the earlier drafted wins). Depth
  // 3: 0.125, 0.0625, 0.0625, 0.03125. 2 + 2 x 4 = 10 candidates; all of
  // them: 1 + 0.75 + 0.5625 + (0.5 x 0.75) x 0.75 = 2.59375.
  EXPECT_EQ(TreeDraftNodes(3, 2), 10);
  EXPECT_EQ(ExpectedTokensPerTreeStep(half, 0.5, 3, 2, 11), 2.59375L);
  // Coverage capped at all: α 0.8, β 0.5 would give the second candidate
  // 0.4, but only 0.2 is left: depth 1, top-k 2 accepts a draft token always.
  const std::vector<double> high = {0.8};
  EXPECT_EQ(ExpectedTokensPerTreeStep(high, 0.5, 1, 2, 3), 2.0L);
}

TEST(SpeculativeTest, TreeLimits) {
  // α 0: no candidate is ever the model's token, one token a step.
  const std::vector<double> zero = {0.0};
  EXPECT_EQ(ExpectedTokensPerTreeStep(zero, 0.5, 4, 4, 16), 1.0L);
  // α -> 1: depth + 1. α = 1 - ε, ε = 2^-20, β 0.5, depth 3, top-k 2, all
  // 10 candidates: the second candidate takes min(αβ, ε) = ε, so a depth's
  // two candidates cover 1. Depth 1 sums to α + ε = 1, depth 2 (both
  // expanded) to (α + ε)² = 1, depth 3 (children of α² and αε, the two best)
  // to α (α + ε)² = α: E = 1 + 1 + 1 + α = 4 - 2^-20.
  const std::vector<double> near_one = {1.0 - 1.0 / 1048576.0};
  EXPECT_NEAR(static_cast<double>(ExpectedTokensPerTreeStep(near_one, 0.5, 3, 2, 11)),
              4.0 - 1.0 / 1048576.0, 1e-12);
  // More verified tokens never lose: a tree of 8 verified tokens beats the
  // chain of the same depth (4 + 1 = 5 tokens), and 16 beat 8.
  const std::vector<double> eagle = {0.8};
  const long double chain = ExpectedTokensPerStep(eagle, 4);
  const long double eight = ExpectedTokensPerTreeStep(eagle, 0.25, 4, 4, 8);
  const long double sixteen = ExpectedTokensPerTreeStep(eagle, 0.25, 4, 4, 16);
  EXPECT_GT(eight, chain);
  EXPECT_GT(sixteen, eight);
  EXPECT_LT(sixteen, 5.0L);
}

TEST(SpeculativeTest, MethodsHaveTheirDocumentedDefaults) {
  ASSERT_NE(FindSpeculativeMethod("eagle"), nullptr);
  EXPECT_EQ(FindSpeculativeMethod("eagle")->num_speculative_tokens, 3);
  EXPECT_EQ(FindSpeculativeMethod("mtp")->num_speculative_tokens, 1);
  EXPECT_DOUBLE_EQ(FindSpeculativeMethod("mtp")->acceptance_rate, 0.85);
  EXPECT_TRUE(FindSpeculativeMethod("draft_model")->own_model);
  EXPECT_FALSE(FindSpeculativeMethod("ngram")->draft_layer);
  EXPECT_EQ(FindSpeculativeMethod("medusa"), nullptr);
  EXPECT_DOUBLE_EQ(FindSpeculativeMethod("eagle3")->rank_decay, 0.1);
  // eagle3's α 0.8, β 0.1 as a full tree of depth 2, top-k 2: a depth holds
  // the model's token with 0.8 + 0.08 = 0.88, E = 1 + 0.88 + 0.88² = 2.6544.
  const std::vector<double> rates = {0.8};
  EXPECT_NEAR(static_cast<double>(ExpectedTokensPerTreeStep(rates, 0.1, 2, 2, 7)), 2.6544, 1e-15);
}

// Every method drafts on the GPU but n-gram lookup, which runs on the CPU;
// an unknown name drafts nowhere.
TEST(SpeculativeTest, OnlyNgramDraftsOffTheGpu) {
  for (const char* m : {"draft_model", "eagle", "eagle3", "mtp"}) EXPECT_TRUE(DraftsOnGpu(m)) << m;
  EXPECT_FALSE(DraftsOnGpu("ngram"));
  EXPECT_FALSE(DraftsOnGpu("medusa"));
}

// The engines' scheduling defaults: vLLM (v0.14+) schedules asynchronously
// unless it drafts by n-gram; SGLang's overlap scheduler is off whenever it
// speculates.
TEST(SpeculativeTest, AsyncSchedulingByDefaultFollowsEachEngine) {
  EXPECT_TRUE(AsyncSchedulingByDefault(false, ""));
  EXPECT_TRUE(AsyncSchedulingByDefault(false, "mtp"));
  EXPECT_FALSE(AsyncSchedulingByDefault(false, "ngram"));
  EXPECT_TRUE(AsyncSchedulingByDefault(true, ""));
  EXPECT_FALSE(AsyncSchedulingByDefault(true, "eagle3"));
}

TEST(SpeculativeTest, DraftHeadIsOneDecoderLayerOfTheModel) {
  // Llama-3.1-8B: per layer attention 4096 x 4096 x 2 (q, o) + 4096 x 1024 x 2
  // (k, v) = 41,943,040; MLP 3 x 4096 x 14336 = 176,160,768; one layer that
  // keeps KV (8 KV heads of 128).
  const ModelShape head = DraftLayerShape(Catalog("llama-3.1-8b"));
  ASSERT_EQ(head.layers.size(), 1u);
  EXPECT_EQ(head.DecoderLayers(), 1);
  EXPECT_EQ(head.layers[0].kv_heads, 8);
  EXPECT_EQ(head.params.attention, 41943040);
  EXPECT_EQ(head.params.dense_mlp, 176160768);
  EXPECT_EQ(head.params.lm_head, Catalog("llama-3.1-8b").params.lm_head);
}

// An EAGLE-3 head of Qwen3-8B (hidden 4,096; 32 query heads and 8 KV heads
// of 128; MLP 12,288): attention 4,096 x 4,096 x 2 (q, o) + 4,096 x 1,024
// x 2 (k, v) + 256 (q and k norms) = 41,943,296, its q, k and v reading 2h:
// + (32 x 128 + 8 x 256) x 4,096 = 25,165,824, so 67,109,120; MLP 3 x
// 4,096 x 12,288 = 150,994,944, plus in the first step the fc 3 x 4,096 x
// 4,096 = 50,331,648; lm_head 32,000 x 4,096 = 131,072,000 over 32,000
// draft tokens. An EAGLE-1 head: fc 2 x 4,096 x 4,096 = 33,554,432 every
// step, the model's attention and lm_head (151,936 x 4,096).
TEST(SpeculativeTest, EagleHeadsAreLlamaLayersWithTheirProjections) {
  const ModelShape qwen = Catalog("qwen3-8b");
  const ModelShape first = EagleHeadShape(qwen, /*eagle3=*/true, /*first_step=*/true);
  const ModelShape later = EagleHeadShape(qwen, /*eagle3=*/true, /*first_step=*/false);
  ASSERT_EQ(first.layers.size(), 1u);
  EXPECT_EQ(first.layers[0].input_dim, 8192);
  EXPECT_EQ(first.params.attention, 67109120);
  EXPECT_EQ(first.params.dense_mlp, 150994944 + 50331648);
  EXPECT_EQ(later.params.dense_mlp, 150994944);
  EXPECT_EQ(first.params.lm_head, 131072000);
  EXPECT_EQ(first.vocab_size, 32000);
  const ModelShape eagle = EagleHeadShape(qwen, /*eagle3=*/false, /*first_step=*/false);
  EXPECT_EQ(eagle.params.attention, 41943296);
  EXPECT_EQ(eagle.params.dense_mlp, 150994944 + 33554432);
  EXPECT_EQ(eagle.params.lm_head, 151936LL * 4096);
  EXPECT_EQ(eagle.vocab_size, 151936);
  // Qwen3-235B-A22B has no dense layer: the head's MLP is what a token runs
  // in an MoE layer, 8 experts of 3 x 4,096 x 1,536 = 150,994,944, dense;
  // not a layer of 128 experts.
  const ModelShape moe = EagleHeadShape(Catalog("qwen3-235b-a22b"), true, false);
  EXPECT_EQ(moe.params.dense_mlp, 150994944);
  EXPECT_EQ(moe.params.routed_experts, 0);
  EXPECT_EQ(moe.moe.layers, 0);
  // Timed as one of the model's layers and its lm_head: Qwen3-8B's attention
  // 41,943,296, MLP 150,994,944 (no fc), lm_head 151,936 x 4,096.
  const ModelShape timed = EagleTimedShape(qwen);
  EXPECT_EQ(timed.params.attention, 41943296);
  EXPECT_EQ(timed.params.dense_mlp, 150994944);
  EXPECT_EQ(timed.params.lm_head, 151936LL * 4096);
  EXPECT_EQ(timed.vocab_size, 151936);
}

TEST(SpeculativeTest, VerificationStepAddsKDraftStepsOverTheVerifyingSequences) {
  auto target = std::make_shared<ContextCost>(0.001, 0.0);
  auto draft = std::make_shared<ContextCost>(0.0001, 1e-9);
  SpeculativeCostModel spec(target, draft, 3, "test");
  // Two verifying sequences at contexts 1,000 and 2,000, and one prompt
  // chunk at context 0, which the draft runs in its first step only (its
  // own KV of the prompt). Draft step j (0..2) costs
  // 1e-4 + 1e-9 x ((1000 + j) + (2000 + j)) (the chunk at context 0 adds
  // 1e-9 x 0): in all 3e-4 + 1e-9 x (9000 + 6) = 0.000309006 s; the
  // iteration 0.001 + 0.000309006 = 0.001309006 s.
  const std::vector<ScheduledWork> work = {
      {1000, 4, false, true}, {2000, 4, false, true}, {0, 100, true, false}};
  std::vector<long double> own(3, 0);
  const Seconds t = spec.IterationSeconds(work, own);
  EXPECT_NEAR(t, 0.001309006, 1e-15);
  // Sequence 0's share of the draft: its own 1e-9 x (1000 + 1001 + 1002) =
  // 3.003e-6, a third of step 0's fixed 1e-4 and half of steps 1 and 2's:
  // 3.003e-6 + 1e-4 / 3 + 1e-4 = 0.000136336333...; sequence 1 the same
  // with 6.003e-6; the chunk a third of step 0's fixed time, 3.3333e-5.
  EXPECT_NEAR(static_cast<double>(own[0]), 3.003e-6 + 1e-4 / 3 + 1e-4, 1e-15);
  EXPECT_NEAR(static_cast<double>(own[1]), 6.003e-6 + 1e-4 / 3 + 1e-4, 1e-15);
  EXPECT_NEAR(static_cast<double>(own[2]), 1e-4 / 3, 1e-15);
  // No draft (n-gram): the model's time alone.
  SpeculativeCostModel ngram(target, nullptr, 3, "test");
  EXPECT_NEAR(ngram.IterationSeconds(work, own), 0.001, 1e-15);
}

// A model whose engine prepares the next iteration on the CPU (2 ms) once
// the tokens are sampled: its iteration is 1 ms of GPU time plus the larger
// of the CPU and what follows the sampling.
class CpuWaitsCost final : public CostModel {
 public:
  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override {
    return IterationSecondsWithTail(work, own_s, 0);
  }
  Seconds IterationSecondsWithTail(std::span<const ScheduledWork> work,
                                   std::span<long double> own_s, long double tail) const override {
    for (std::size_t i = 0; i < work.size(); ++i) own_s[i] = 0;
    return static_cast<Seconds>(0.001L + std::max(tail, 0.002L));
  }
  void DecodeLinesFor(std::span<const Tokens>, Tokens, DecodeLines*) const override {}
  Seconds RecomputeSeconds(Tokens, Tokens) const override { return 0; }
  std::string name() const override { return "cpu-waits"; }
  CostModelInfo Describe() const override { return {}; }
};

// The draft follows the model's sampling, so it reaches the model as the
// iteration's tail: draft steps of 0.5 ms (ContextCost with no per-token
// time) behind a 2 ms CPU. k 1: 1 + max(0.5, 2) = 3 ms; k 6: 1 + max(3, 2)
// = 4 ms; a prompt chunk alone, which the draft runs once (0.5 ms): 1 +
// max(0.5, 2) = 3 ms.
TEST(SpeculativeTest, TheDraftIsTheTailTheNextIterationsCpuMayOverlap) {
  auto target = std::make_shared<CpuWaitsCost>();
  auto draft = std::make_shared<ContextCost>(0.0005, 0.0);
  const std::vector<ScheduledWork> verify = {{1000, 2, false, true}, {500, 2, false, true}};
  std::vector<long double> own(2, 0);
  EXPECT_NEAR(SpeculativeCostModel(target, draft, 1, "k1").IterationSeconds(verify, own), 0.003,
              1e-15);
  EXPECT_NEAR(SpeculativeCostModel(target, draft, 6, "k6").IterationSeconds(verify, own), 0.004,
              1e-15);
  const std::vector<ScheduledWork> prefill = {{0, 100, true, false}};
  std::vector<long double> own1(1, 0);
  EXPECT_NEAR(SpeculativeCostModel(target, draft, 6, "k6").IterationSeconds(prefill, own1), 0.003,
              1e-15);
}

// A cost model that keeps what it is asked to price: 1 ms a token.
class RecordingCost final : public CostModel {
 public:
  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override {
    long double t = 0;
    for (std::size_t i = 0; i < work.size(); ++i) {
      seen.push_back(work[i]);
      own_s[i] = 0.001L * static_cast<long double>(work[i].tokens);
      t += own_s[i];
    }
    return static_cast<Seconds>(t);
  }
  void DecodeLinesFor(std::span<const Tokens>, Tokens, DecodeLines*) const override {}
  Seconds RecomputeSeconds(Tokens, Tokens) const override { return 0; }
  std::string name() const override { return "recording"; }
  CostModelInfo Describe() const override { return {}; }
  mutable std::vector<ScheduledWork> seen;
};

TEST(SpeculativeTest, TreeDraftStepsRunTopkTokensAfterTheFirst) {
  auto target = std::make_shared<RecordingCost>();
  auto draft = std::make_shared<RecordingCost>();
  // Depth 3, top-k 4, two sequences verifying 8 tokens each at contexts 100
  // and 200: draft step 0 runs 1 token a sequence (a decode), steps 1 and 2
  // run 4 a sequence at contexts c + 1 and c + 2 (extends with logits at
  // each): 2 + 8 + 8 = 18 draft tokens, 18 ms; the model's 16 tokens 16 ms.
  SpeculativeCostModel tree(target, draft, 3, "test", 4);
  const std::vector<ScheduledWork> work = {{100, 8, false, true}, {200, 8, false, true}};
  std::vector<long double> own(2, 0);
  EXPECT_NEAR(tree.IterationSeconds(work, own), 0.034, 1e-12);
  ASSERT_EQ(draft->seen.size(), 6u);
  EXPECT_EQ(draft->seen[0].tokens, 1);
  EXPECT_FALSE(draft->seen[0].verify);
  EXPECT_EQ(draft->seen[2].tokens, 4);
  EXPECT_EQ(draft->seen[2].context, 101);
  EXPECT_TRUE(draft->seen[2].verify);
  EXPECT_EQ(draft->seen[5].context, 202);
  // Each sequence's share: its 8 model tokens and its 1 + 4 + 4 draft tokens.
  EXPECT_NEAR(static_cast<double>(own[0]), 0.017, 1e-12);
  // The chain (top-k 1) runs decodes only: 3 steps of 1 token a sequence.
  auto chain_draft = std::make_shared<RecordingCost>();
  SpeculativeCostModel chain(target, chain_draft, 3, "test");
  EXPECT_NEAR(chain.IterationSeconds(work, own), 0.022, 1e-12);
  for (const ScheduledWork& w : chain_draft->seen) {
    EXPECT_EQ(w.tokens, 1);
    EXPECT_FALSE(w.verify);
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
