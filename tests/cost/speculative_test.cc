// Speculative decoding's arithmetic: the expected advance of a verification
// step, the methods' defaults, the draft head's shape and the cost of a
// step with its draft, worked out by hand.
#include "kvbill/cost/speculative.h"

#include <gtest/gtest.h>

#include <vector>

#include "model/model_test_util.h"

namespace kvbill {
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

TEST(SpeculativeTest, MethodsHaveTheirDocumentedDefaults) {
  ASSERT_NE(FindSpeculativeMethod("eagle"), nullptr);
  EXPECT_EQ(FindSpeculativeMethod("eagle")->num_speculative_tokens, 3);
  EXPECT_EQ(FindSpeculativeMethod("mtp")->num_speculative_tokens, 1);
  EXPECT_DOUBLE_EQ(FindSpeculativeMethod("mtp")->acceptance_rate, 0.85);
  EXPECT_TRUE(FindSpeculativeMethod("draft_model")->own_model);
  EXPECT_FALSE(FindSpeculativeMethod("ngram")->draft_layer);
  EXPECT_EQ(FindSpeculativeMethod("medusa"), nullptr);
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

// A cost model whose iteration takes a + b x (sum of contexts) seconds, each
// sequence's own part being b x its context.
class LinearCost final : public CostModel {
 public:
  LinearCost(double a, double b) : a_(a), b_(b) {}
  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override {
    long double t = a_;
    for (std::size_t i = 0; i < work.size(); ++i) {
      own_s[i] = b_ * static_cast<long double>(work[i].context);
      t += own_s[i];
    }
    return static_cast<Seconds>(t);
  }
  void DecodeLinesFor(std::span<const Tokens>, Tokens, DecodeLines*) const override {}
  Seconds RecomputeSeconds(Tokens, Tokens) const override { return 0; }
  std::string name() const override { return "linear"; }
  CostModelInfo Describe() const override { return {}; }

 private:
  double a_, b_;
};

TEST(SpeculativeTest, VerificationStepAddsKDraftStepsOverTheVerifyingSequences) {
  auto target = std::make_shared<LinearCost>(0.001, 0.0);
  auto draft = std::make_shared<LinearCost>(0.0001, 1e-9);
  SpeculativeCostModel spec(target, draft, 3, "test");
  // Two verifying sequences at contexts 1,000 and 2,000, and one prefill
  // chunk (no draft for it). Draft step j (0..2) costs
  // 1e-4 + 1e-9 x ((1000 + j) + (2000 + j)): in all 3e-4 + 1e-9 x (9000 + 6)
  // = 0.000309006 s; the iteration 0.001 + 0.000309006 = 0.001309006 s.
  const std::vector<ScheduledWork> work = {
      {1000, 4, false, true}, {2000, 4, false, true}, {0, 100, true, false}};
  std::vector<long double> own(3, 0);
  const Seconds t = spec.IterationSeconds(work, own);
  EXPECT_NEAR(t, 0.001309006, 1e-15);
  // Sequence 0's share of the draft: its own 1e-9 x (1000 + 1001 + 1002) =
  // 3.003e-6 plus half of the draft's fixed 3e-4: 0.000153003; the prefill
  // chunk pays nothing of it.
  EXPECT_NEAR(static_cast<double>(own[0]), 0.000153003, 1e-15);
  EXPECT_NEAR(static_cast<double>(own[1]), 0.000156003, 1e-15);
  EXPECT_EQ(own[2], 0.0L);
  // No draft (n-gram): the model's time alone.
  SpeculativeCostModel ngram(target, nullptr, 3, "test");
  EXPECT_NEAR(ngram.IterationSeconds(work, own), 0.001, 1e-15);
}

}  // namespace
}  // namespace kvbill
