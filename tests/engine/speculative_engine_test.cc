// Speculative decoding in the engine: how far a verification step advances,
// what the draft adds, the KV pool it takes, and event mode against step
// mode, worked out by hand.
#include <gtest/gtest.h>

#include <memory>

#include "engine/engine_test_util.h"
#include "kvbill/cost/speculative.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// One request: a 1,000-token prompt and 101 output tokens (one from the
// prefill, 100 from decode steps), on a model whose iterations take 1 ms.
SimulationConfig OneRequestConfig(double acceptance, int k, bool draft) {
  SimulationConfig c = Config("llama-3.1-8b");
  auto target = std::make_shared<ContextCost>(0.001, 0.0);
  c.cost_model = target;
  if (k > 0) {
    const std::vector<double> rates = {acceptance};
    c.speculative.num_speculative_tokens = k;
    c.speculative.expected_tokens = ExpectedTokensPerStep(rates, k);
    std::shared_ptr<const CostModel> d;
    if (draft) d = std::make_shared<ContextCost>(0.0001, 1e-9);
    c.cost_model = std::make_shared<SpeculativeCostModel>(target, d, k, "test");
  }
  return c;
}

std::vector<Task> OneRequest() { return {LoopTask("a", 1, 1000, 0, 101, 0)}; }

TEST(SpeculativeEngineTest, AcceptanceZeroOnlyAddsTheDraftsTime) {
  // Off: 1 prefill iteration and 100 decode steps of 1 ms: 0.101 s.
  const SimulationResult off = RunSim(OneRequestConfig(0, 0, false), OneRequest());
  ASSERT_EQ(off.requests.size(), 1u);
  EXPECT_NEAR(off.requests[0].finish_s, 0.101, 1e-12);
  // α 0, k 3: E = 1, so still 100 verification steps, at contexts
  // c = 1000 .. 1099, each adding 3 draft steps at c, c + 1, c + 2:
  // 3 x 1e-4 + 1e-9 x (3c + 3). Summed: 100 x 3e-4 + 1e-9 x (3 x 104,950 + 300)
  // = 0.03 + 0.00031515 = 0.03031515 s more than off; and the prefill
  // iteration runs the draft over the prompt once (its own KV of the
  // prompt): 1e-4 + 1e-9 x 0 (the chunk starts at context 0). Nothing else.
  const SimulationResult on = RunSim(OneRequestConfig(0, 3, true), OneRequest());
  ASSERT_EQ(on.requests.size(), 1u);
  EXPECT_NEAR(on.requests[0].finish_s, 0.101 + 0.03031515 + 1e-4, 1e-12);
  EXPECT_NEAR(on.requests[0].first_token_s, 0.001 + 1e-4, 1e-12);
  EXPECT_EQ(on.iterations, off.iterations);
  EXPECT_EQ(on.requests[0].output_tokens, 101);
}

TEST(SpeculativeEngineTest, StepsAdvanceByTheExpectedTokensRounded) {
  // α 0.5, k 2: E = 1.75. After j steps round(1.75 j) tokens; 100 need
  // 1.75 j >= 99.5, j = 57 steps: 1 + 57 iterations of 1 ms.
  const SimulationResult r = RunSim(OneRequestConfig(0.5, 2, false), OneRequest());
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.iterations, 58);
  EXPECT_NEAR(r.requests[0].finish_s, 0.058, 1e-12);
  // The first token comes from the prefill: TTFT is unchanged, 1 ms.
  EXPECT_NEAR(r.requests[0].first_token_s, 0.001, 1e-12);
}

TEST(SpeculativeEngineTest, AcceptanceNearOneAdvancesKPlusOneTokensPerStep) {
  // α = 1 - 2^-30, k 3: E = 4 - 6 x 2^-30 (to first order); after j <= 25
  // steps round(j E) = 4 j, so the 100 decode tokens take 25 steps.
  const SimulationResult r =
      RunSim(OneRequestConfig(1.0 - 1.0 / 1073741824.0, 3, false), OneRequest());
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_EQ(r.iterations, 26);
  EXPECT_NEAR(r.requests[0].finish_s, 0.026, 1e-12);
}

TEST(SpeculativeEngineTest, EventModeEqualsStepModeAndIsDeterministic) {
  // Agent loops on two replicas with preemptions possible: speculation is
  // never fused, so both modes take the same steps.
  SimulationConfig c = OneRequestConfig(0.7, 3, true);
  c.replicas = 2;
  c.router = RouterKind::kSessionAffinity;
  std::vector<Task> tasks;
  for (int i = 0; i < 6; ++i) {
    tasks.push_back(
        LoopTask("t" + std::to_string(i), 4, 2000 + 100 * i, 300, 90 + 7 * i, 0.5, 0.01 * i));
  }
  const SimulationResult event = RunSim(c, tasks);
  c.step_mode = true;
  const SimulationResult step = RunSim(c, tasks);
  ExpectSameRuns(event, step);
  c.step_mode = false;
  const SimulationResult again = RunSim(c, tasks);
  ExpectSameRuns(event, again);
  for (const RequestRecord& rec : event.requests) EXPECT_GT(rec.output_tokens, 0);
}

// Every iteration takes 1 ms plus 10 µs a token it computes.
class TokenCost final : public CostModel {
 public:
  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override {
    long double t = 0.001L;
    for (std::size_t i = 0; i < work.size(); ++i) {
      own_s[i] = 1e-5L * static_cast<long double>(work[i].tokens);
      t += own_s[i];
    }
    return static_cast<Seconds>(t);
  }
  void DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                      DecodeLines* out) const override {
    out->own0.assign(contexts.size(), 1e-5L);
    out->own1.assign(contexts.size(), 0);
    out->lines.assign(
        1, StepLine{0, max_steps, 0.001L + 1e-5L * static_cast<long double>(contexts.size()), 0});
  }
  Seconds RecomputeSeconds(Tokens, Tokens) const override { return 0; }
  std::string name() const override { return "token"; }
  CostModelInfo Describe() const override { return {}; }
};

TEST(SpeculativeEngineTest, ATreeVerifiesItsDraftTokens) {
  // Depth 3, α 0 (E = 1): 100 verification steps. The prefill of 1,000
  // tokens takes 1 ms + 10 ms; a chain's step verifies 3 + 1 = 4 tokens,
  // 1.04 ms, a tree's of num_draft_tokens 8 verifies 8, 1.08 ms:
  // 0.011 + 100 x 0.00104 = 0.115 s and 0.011 + 100 x 0.00108 = 0.119 s.
  SimulationConfig c = Config("llama-3.1-8b");
  c.cost_model = std::make_shared<TokenCost>();
  c.speculative.num_speculative_tokens = 3;
  c.speculative.expected_tokens = 1;
  const SimulationResult chain = RunSim(c, OneRequest());
  ASSERT_EQ(chain.requests.size(), 1u);
  EXPECT_NEAR(chain.requests[0].finish_s, 0.115, 1e-12);
  c.speculative.verify_tokens = 8;
  const SimulationResult tree = RunSim(c, OneRequest());
  ASSERT_EQ(tree.requests.size(), 1u);
  EXPECT_NEAR(tree.requests[0].finish_s, 0.119, 1e-12);
  EXPECT_EQ(tree.requests[0].output_tokens, 101);
  // Not fused: step mode takes the same steps.
  c.step_mode = true;
  ExpectSameRuns(tree, RunSim(c, OneRequest()));
}

TEST(SpeculativeEngineTest, SpeculationTotalsCompareWithThePlainDecodeSteps) {
  // α 0, k 3, the 1 ms model and its draft of the first test: 100
  // verification steps advancing one token each, costing 0.1 + 0.03031515 s
  // (the prefill iteration verifies nothing and is not counted); without
  // speculation the same 100 tokens take 100 decode steps of 1 ms, 0.1 s:
  // decode 0.1 / 0.13031515 = 0.767370... as fast.
  const SimulationResult zero = RunSim(OneRequestConfig(0, 3, true), OneRequest());
  EXPECT_EQ(zero.speculation.verification_steps, 100);
  EXPECT_EQ(zero.speculation.verified_sequences, 100);
  EXPECT_EQ(zero.speculation.advanced_tokens, 100);
  EXPECT_NEAR(static_cast<double>(zero.speculation.speculative_s), 0.13031515, 1e-12);
  EXPECT_NEAR(static_cast<double>(zero.speculation.plain_s), 0.1, 1e-12);
  EXPECT_NEAR(static_cast<double>(zero.speculation.DecodeSpeedup()), 0.1 / 0.13031515, 1e-9);
  // α 0.5, k 2, no draft: 57 steps of 1 ms advance the 100 tokens (E 1.75,
  // rounded), which take 100 plain steps: 0.1 / 0.057 = 1.754386 as fast,
  // 100 / 57 = 1.754 tokens a step.
  const SimulationResult half = RunSim(OneRequestConfig(0.5, 2, false), OneRequest());
  EXPECT_EQ(half.speculation.verification_steps, 57);
  EXPECT_EQ(half.speculation.advanced_tokens, 100);
  EXPECT_NEAR(static_cast<double>(half.speculation.TokensPerStep()), 100.0 / 57.0, 1e-12);
  EXPECT_NEAR(static_cast<double>(half.speculation.DecodeSpeedup()), 0.1 / 0.057, 1e-9);
  // Off: nothing counted.
  const SimulationResult off = RunSim(OneRequestConfig(0, 0, false), OneRequest());
  EXPECT_EQ(off.speculation.verification_steps, 0);
  EXPECT_EQ(off.speculation.DecodeSpeedup(), 1);
}

TEST(SpeculativeEngineTest, AMixedIterationChargesSpeculationOnlyItsOwnPart) {
  // Every iteration 1 ms plus 10 µs a token computed, α 0, k 3, no prefix
  // cache. Request a (1,000-token prompt, 101 out) decodes alone but once:
  // at 50 ms b's 1,000-token prompt (one token out, from its prefill) joins
  // a's verification step. Alone, a step verifying 4 tokens takes 1.04 ms
  // where a plain decode step takes 1.01 ms. The mixed one takes
  // 1 + 0.01 x 1,004 = 11.04 ms, 11.01 ms plain: speculation's part is still
  // 11.04 - 11.01 + 1.01 (the decode step a takes either way) = 1.04 ms,
  // so the run's 100 steps cost 100 x 1.04 ms against 100 x 1.01 ms:
  // 1.01 / 1.04 = 0.971154 (pricing the mixed step whole would make it
  // (99 x 1.01 + 11.01) / (99 x 1.04 + 11.04) = 0.97345).
  SimulationConfig c = Config("llama-3.1-8b");
  c.prefix_caching = false;
  c.cost_model =
      std::make_shared<SpeculativeCostModel>(std::make_shared<TokenCost>(), nullptr, 3, "test");
  c.speculative.num_speculative_tokens = 3;
  c.speculative.expected_tokens = 1;
  const std::vector<Task> tasks = {LoopTask("a", 1, 1000, 0, 101, 0),
                                   LoopTask("b", 1, 1000, 0, 1, 0, 0.05)};
  const SimulationResult r = RunSim(c, tasks);
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_EQ(r.speculation.verification_steps, 100);
  EXPECT_NEAR(static_cast<double>(r.speculation.speculative_s), 0.104, 1e-12);
  EXPECT_NEAR(static_cast<double>(r.speculation.plain_s), 0.101, 1e-12);
  EXPECT_NEAR(static_cast<double>(r.speculation.DecodeSpeedup()), 1.01 / 1.04, 1e-9);
}

TEST(SpeculativeEngineTest, DraftWeightsAndKvShrinkThePool) {
  // Llama-3.1-8B in bf16 on one H100 at memory fraction 0.9, no reserve:
  // weights 8,030,261,248 x 2 = 16,060,522,496 bytes; a block of 16 tokens
  // 16 x 131,072 = 2,097,152 bytes. An EAGLE head (EagleHeadShape): weights
  // (41,943,040 + 176,160,768 + fc 2 x 4,096 x 4,096 = 33,554,432 + 8,320
  // norm) x 2 = 503,333,120 bytes and 4,096 bytes of KV a token, so a block
  // takes 16 x 135,168 = 2,162,688.
  SimulationConfig c = Config("llama-3.1-8b");
  const long double capacity =
      std::floor(static_cast<long double>(c.gpu.usable_memory_bytes) * 0.9L);
  const auto off = std::int64_t((capacity - 16060522496.0L) / 2097152.0L);
  c.speculative.num_speculative_tokens = 3;
  c.speculative.draft_weight_bytes = 503333120;
  c.speculative.draft_kv_bytes_per_token = 4096;
  const auto on = std::int64_t((capacity - 16060522496.0L - 503333120.0L) / 2162688.0L);
  EXPECT_LT(on, off);
  const SimulationResult r = RunSim(c, OneRequest());
  EXPECT_EQ(r.kv_pool_blocks, on);
  c.speculative = SpeculativeDecoding{};
  EXPECT_EQ(RunSim(c, OneRequest()).kv_pool_blocks, off);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
