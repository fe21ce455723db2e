// deployment.speculative in a scenario: what it reads, its defaults, and
// bad input named by its JSON pointer.
#include <gtest/gtest.h>

#include "kvbill/scenario/run.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::string ErrorOf(const std::string& text) {
  auto s = ParseScenario(text, "s.json");
  return s.ok() ? "(parsed)" : s.error().message();
}

TEST(SpeculativeScenarioTest, OneValueTurnsItOnWithTheMethodsDefaults) {
  auto s = ParseScenario(R"({"deployment": {"speculative": {"method": "eagle"}}})", "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  ASSERT_TRUE(s->deployment.speculative.has_value());
  EXPECT_EQ(s->deployment.speculative->method, "eagle");
  auto c = BuildSimulationConfig(*s);
  ASSERT_TRUE(c.ok()) << c.error().message();
  // eagle: k 3, α 0.8: E = 1 + 0.8 + 0.64 + 0.512 = 2.952.
  EXPECT_EQ(c->speculative.num_speculative_tokens, 3);
  EXPECT_NEAR(static_cast<double>(c->speculative.expected_tokens), 2.952, 1e-12);
  // Qwen3-8B's head: one layer's KV, 8 KV heads x 128 x 2 x 2 bytes = 4,096 a token.
  EXPECT_EQ(c->speculative.draft_kv_bytes_per_token, 4096);
  // The shorthand, and no section: off.
  auto short_form = ParseScenario(R"({"deployment": {"speculative": "ngram"}})", "s.json");
  ASSERT_TRUE(short_form.ok());
  EXPECT_EQ(short_form->deployment.speculative->method, "ngram");
  auto off = ParseScenario(R"({})", "s.json");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->deployment.speculative.has_value());
  EXPECT_EQ(BuildSimulationConfig(*off)->speculative.num_speculative_tokens, 0);
}

TEST(SpeculativeScenarioTest, PerPositionRatesAndADraftModel) {
  auto s = ParseScenario(R"({"model": "llama-3.1-70b", "deployment": {"gpus_per_replica": 1,
      "speculative": {"method": "draft_model", "model": "llama-3.1-8b",
      "num_speculative_tokens": 2, "acceptance_rate": [0.5, 0.5]}}})",
                         "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto c = BuildSimulationConfig(*s);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->speculative.expected_tokens, 1.75L);  // 1 + 0.5 + 0.25
  // Llama-3.1-8B as the draft: KV 32 layers x 8 KV heads x 128 x 2 x 2 bytes
  // = 131,072 a token; weights 8,030,261,248 parameters x 2 bytes.
  EXPECT_EQ(c->speculative.draft_kv_bytes_per_token, 131072);
  EXPECT_EQ(c->speculative.draft_weight_bytes, 16060522496.0L);
}

// What summary.speculation compares with is the deployment without
// speculation as its engine would schedule it then: vLLM overlapping its CPU
// with the GPU again (speculating, it waits for each step's sampled tokens),
// SGLang with its overlap scheduler back on. Priced the same as the same
// scenario without deployment.speculative, batch for batch.
TEST(SpeculativeScenarioTest, WithoutSpeculationIsTheDeploymentWithoutIt) {
  for (const char* engine : {"vllm", "sglang"}) {
    SCOPED_TRACE(engine);
    const std::string base = std::string(R"({"deployment": {"engine": ")") + engine + R"(")";
    auto on = ParseScenario(base + R"(, "speculative": "eagle3"}})", "s.json");
    auto off = ParseScenario(base + "}}", "s.json");
    ASSERT_TRUE(on.ok() && off.ok());
    auto c_on = BuildSimulationConfig(*on);
    auto c_off = BuildSimulationConfig(*off);
    ASSERT_TRUE(c_on.ok()) << c_on.error().message();
    ASSERT_TRUE(c_off.ok()) << c_off.error().message();
    for (int batch : {1, 8, 64}) {
      std::vector<ScheduledWork> work(static_cast<std::size_t>(batch),
                                      ScheduledWork{4000, 1, false, false});
      std::vector<long double> own_on(work.size()), own_off(work.size());
      const Seconds plain = c_on->cost_model->WithoutSpeculation().IterationSeconds(work, own_on);
      EXPECT_EQ(plain, c_off->cost_model->IterationSeconds(work, own_off)) << batch;
      // ... and not what the speculating engine's CPU schedule gives the
      // same plain step (it serialises CPU and GPU work).
      if (batch == 1) {
        EXPECT_LT(plain, c_on->cost_model->IterationSeconds(work, own_on));
      }
    }
  }
}

TEST(SpeculativeScenarioTest, BadInputNamesTheJsonPointer) {
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle",
      "num_speculative_tokens": 0}}})"),
            "s.json#/deployment/speculative/num_speculative_tokens: must be a positive integer, "
            "got 0");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle",
      "acceptance_rate": 1}}})"),
            "s.json#/deployment/speculative/acceptance_rate: must be a number in [0, 1) or a "
            "non-empty list of them, got 1");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle",
      "acceptance_rate": [0.5, -0.1, 0.5]}}})"),
            "s.json#/deployment/speculative/acceptance_rate/1: must be a number in [0, 1), got "
            "-0.1");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle",
      "acceptance_rate": [0.5, 0.5]}}})"),
            "s.json#/deployment/speculative/acceptance_rate: must be one rate or 3 (one per "
            "drafted position, num_speculative_tokens 3), got 2");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "medusa"}}})"),
            "s.json#/deployment/speculative/method: unknown speculative method \"medusa\" (one of "
            "draft_model|eagle|eagle3|mtp|ngram)");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"num_speculative_tokens": 2}}})"),
            "s.json#/deployment/speculative/method: missing");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "draft_model"}}})"),
            "s.json#/deployment/speculative/model: missing (required by method \"draft_model\")");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "draft_model",
      "model": "no-such-model"}}})")
                .rfind("s.json#/deployment/speculative/model: unknown model \"no-such-model\"", 0),
            0u);
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle",
      "model": "llama-3.1-8b"}}})"),
            "s.json#/deployment/speculative/model: only with method \"draft_model\" (\"eagle\" "
            "drafts without a model of its own)");
}

// What vLLM's draft-model proposer refuses at start-up is refused here, not
// priced: a target with a vision tower, a draft with multimodal RoPE,
// vocabularies of different sizes (Qwen3-32B's 151,936 against
// Llama-3.1-8B's 128,256), and a draft that cannot run at the target's
// degree (Qwen2.5-7B's 28 query heads over 8 GPUs).
TEST(SpeculativeScenarioTest, ADraftModelVllmRefusesIsAnError) {
  auto error_of = [](const std::string& target, const std::string& draft, int gpus) {
    auto s = ParseScenario(R"({"model": ")" + target + R"(", "deployment": {"gpus_per_replica": )" +
                               std::to_string(gpus) +
                               R"(, "speculative": {"method": "draft_model", "model": ")" + draft +
                               R"("}}})",
                           "s.json");
    EXPECT_TRUE(s.ok()) << s.error().message();
    auto c = BuildSimulationConfig(*s);
    return c.ok() ? std::string("(built)") : c.error().message();
  };
  const std::string configs = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/";
  EXPECT_EQ(error_of("qwen3-32b", "llama-3.1-8b", 1),
            "s.json#/deployment/speculative: draft model \"llama-3.1-8b\" has a vocabulary of "
            "128,256 tokens and the target \"qwen3-32b\" 151,936: the draft proposes the target's "
            "token ids, and vLLM requires equal vocabulary sizes (padded ones too)");
  EXPECT_NE(error_of(configs + "qwen3-vl-8b-instruct.json", "qwen3-8b", 1)
                .find("is multimodal (a vision tower): vLLM's draft-model speculation refuses it"),
            std::string::npos);
  EXPECT_NE(error_of(configs + "qwen-72b.json", configs + "olmocr-qwen2-vl-7b.json", 8)
                .find("uses multimodal RoPE (mrope_section): vLLM's draft-model speculation "
                      "refuses it"),
            std::string::npos);
  EXPECT_NE(error_of(configs + "qwen-72b.json", "qwen2.5-7b", 8)
                .find("draft model \"qwen2.5-7b\" cannot run at the target's tensor parallel "
                      "degree 8, which vLLM runs it at: 8 GPUs cannot split model "
                      "\"qwen2.5-7b\"'s 28 query heads"),
            std::string::npos);
  // The same draft at a degree that splits its heads, and a matching pair.
  EXPECT_EQ(error_of(configs + "qwen-72b.json", "qwen2.5-7b", 4), "(built)");
  EXPECT_EQ(error_of("qwen3-32b", "qwen3-8b", 1), "(built)");
}

TEST(SpeculativeScenarioTest, TreeDraftReadsItsShape) {
  // Depth 2, top-k 2, α 0.5, β 0.5: the best three nodes of the tree are
  // 0.5, 0.25 and 0.25 (worked in tests/cost/speculative_test.cc), E = 2.0;
  // the step verifies 4 tokens.
  auto s = ParseScenario(R"({"deployment": {"engine": "sglang", "speculative": {
      "method": "eagle3", "num_speculative_tokens": 2, "topk": 2, "num_draft_tokens": 4,
      "acceptance_rate": 0.5, "rank_decay": 0.5}}})",
                         "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto c = BuildSimulationConfig(*s);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->speculative.num_speculative_tokens, 2);
  EXPECT_EQ(c->speculative.verify_tokens, 4);
  EXPECT_EQ(c->speculative.expected_tokens, 2.0L);
  // A chain: 4 tokens verified for k 3 (stated or not).
  auto chain = ParseScenario(
      R"({"deployment": {"speculative": {"method": "eagle", "topk": 1, "num_draft_tokens": 4}}})",
      "s.json");
  ASSERT_TRUE(chain.ok()) << chain.error().message();
  EXPECT_EQ(BuildSimulationConfig(*chain)->speculative.verify_tokens, 4);
  EXPECT_NEAR(static_cast<double>(BuildSimulationConfig(*chain)->speculative.expected_tokens),
              2.952, 1e-12);
}

// SGLang's EAGLE tree is not one vLLM runs (it drafts a chain; its own
// static speculative_token_tree is experimental and another shape): a tree
// on vLLM, the default engine, is refused by name; the same tree on SGLang
// and a chain on vLLM are read.
TEST(SpeculativeScenarioTest, ATreeDraftOnVllmNamesTheKey) {
  const std::string tree =
      R"("speculative": {"method": "eagle3", "num_speculative_tokens": 2, "topk": 2,
          "num_draft_tokens": 4})";
  EXPECT_EQ(ErrorOf(R"({"deployment": {)" + tree + "}}"),
            "s.json#/deployment/speculative/topk: a tree draft (topk 2) is SGLang's EAGLE tree "
            "(--speculative-eagle-topk), which vLLM does not run: vLLM drafts a chain, and its "
            "own tree drafting (speculative_token_tree on the experimental TREE_ATTN backend) "
            "verifies a fixed tree kvbill does not model; set deployment.engine \"sglang\", or "
            "topk 1 for vLLM's chain");
  EXPECT_TRUE(
      ParseScenario(R"({"deployment": {"engine": "sglang", )" + tree + "}}", "s.json").ok());
  EXPECT_TRUE(
      ParseScenario(R"({"deployment": {"speculative": {"method": "eagle3", "topk": 1}}})", "s.json")
          .ok());
}

TEST(SpeculativeScenarioTest, BadTreeNamesTheKey) {
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle3", "topk": 2}}})"),
            "s.json#/deployment/speculative/num_draft_tokens: missing (required when topk is above "
            "1: the tree's nodes the model verifies, the step's own token included)");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle3",
      "num_draft_tokens": 5}}})"),
            "s.json#/deployment/speculative/num_draft_tokens: must be num_speculative_tokens + 1 "
            "= 4 with topk 1 (a chain), got 5");
  // Depth 2, top-k 2: 2 + 1 x 4 = 6 candidates, 7 tokens at most.
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle3",
      "num_speculative_tokens": 2, "topk": 2, "num_draft_tokens": 8}}})"),
            "s.json#/deployment/speculative/num_draft_tokens: must be at most 7 (the step's own "
            "token and the 6 candidates of a tree of depth 2 and topk 2: topk + (depth - 1) x "
            "topk²), got 8");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "ngram", "topk": 2,
      "num_draft_tokens": 4}}})"),
            "s.json#/deployment/speculative/topk: must be 1 with method \"ngram\" (prompt lookup "
            "proposes one continuation, not ranked candidates), got 2");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle3", "topk": 0}}})"),
            "s.json#/deployment/speculative/topk: must be a positive integer, got 0");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle3",
      "rank_decay": 1.5}}})")
                .rfind("s.json#/deployment/speculative/rank_decay: must be a number in (0, 1]", 0),
            0u);
}

// β ranks the candidates of a tree; a chain (topk 1, stated or not) would
// accept it and price nothing differently, so it is refused by name.
TEST(SpeculativeScenarioTest, RankDecayOnAChainNamesTheKey) {
  const std::string why =
      ": only with topk above 1 (β ranks the candidates of a tree draft; a chain drafts one "
      "token per position and never uses it)";
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle3", "topk": 1,
      "rank_decay": 0.3}}})"),
            "s.json#/deployment/speculative/rank_decay" + why);
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "eagle",
      "rank_decay": 0.3}}})"),
            "s.json#/deployment/speculative/rank_decay" + why);
  EXPECT_TRUE(ParseScenario(R"({"deployment": {"engine": "sglang", "speculative": {
      "method": "eagle3", "topk": 2, "num_draft_tokens": 4, "rank_decay": 0.3}}})",
                            "s.json")
                  .ok());
}

// vLLM refuses async scheduling with n-gram speculation, and other drafts
// run with it. SGLang turns its overlap scheduler off to speculate at all
// (docs/engine.md): a scenario asking for both is refused, not priced as
// overlapped.
TEST(SpeculativeScenarioTest, NgramWithAsyncSchedulingOnVllmIsRefused) {
  EXPECT_EQ(ErrorOf(R"({"deployment": {"engine": "sglang", "async_scheduling": true,
      "speculative": {"method": "eagle3", "acceptance_rate": 0.7}}})"),
            "s.json#/deployment/async_scheduling: SGLang turns its overlap scheduler off when it "
            "speculates (server_args.py, v0.5): set it to false or leave it unset");
  for (
      const char* ok :
      {R"({"deployment": {"engine": "sglang", "async_scheduling": false, "speculative": "eagle3"}})",
       R"({"deployment": {"engine": "sglang", "speculative": "eagle3"}})",
       R"({"deployment": {"engine": "sglang", "async_scheduling": true}})"}) {
    const auto s = ParseScenario(ok, "s.json");
    EXPECT_TRUE(s.ok()) << ok << ": " << (s.ok() ? "" : s.error().message());
  }
  EXPECT_EQ(ErrorOf(R"({"deployment": {"async_scheduling": true,
      "speculative": {"method": "ngram"}}})"),
            "s.json#/deployment/async_scheduling: vLLM refuses async scheduling with n-gram "
            "speculation (vllm/config/vllm.py); set it to false or draft another way");
  for (const char* ok : {R"({"deployment": {"async_scheduling": true, "speculative": "eagle3"}})",
                         R"({"deployment": {"speculative": {"method": "ngram"}}})"}) {
    const auto s = ParseScenario(ok, "s.json");
    EXPECT_TRUE(s.ok()) << ok << ": " << (s.ok() ? "" : s.error().message());
  }
}

// The engines draft "mtp" with the checkpoint's own multi-token-prediction
// layers: Qwen3-8B's config has none (no num_nextn_predict_layers or
// mtp_num_hidden_layers); Qwen3.5-9B's has one (mtp_num_hidden_layers 1).
TEST(SpeculativeScenarioTest, MtpNeedsTheModelsOwnPredictionLayers) {
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": {"method": "mtp"}}})"),
            "s.json#/deployment/speculative/method: model \"qwen3-8b\" has no "
            "multi-token-prediction layers (num_nextn_predict_layers or mtp_num_hidden_layers in "
            "its config) to draft with; use \"eagle3\", \"ngram\" or \"draft_model\"");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"speculative": "mtp"}})"),
            "s.json#/deployment/speculative: model \"qwen3-8b\" has no "
            "multi-token-prediction layers (num_nextn_predict_layers or mtp_num_hidden_layers in "
            "its config) to draft with; use \"eagle3\", \"ngram\" or \"draft_model\"");
  const auto s = ParseScenario(
      R"({"model": "qwen3.5-9b", "prefix_cache": {"enabled": false},
          "deployment": {"speculative": "mtp"}})",
      "s.json");
  EXPECT_TRUE(s.ok()) << s.error().message();
}

// An EAGLE-3 head's weights: all it holds but the embedding it shares with
// the model. Qwen3-8B (bf16): attention 67,109,120 (its q, k and v reading
// 2h), MLP 150,994,944 and fc 50,331,648, its own lm_head 131,072,000, the
// layer's share of the norms (36 x 8,192 + 4,096) / 36 = 8,305 (rounded
// down): 399,516,017 parameters x 2 = 799,032,034 bytes. Its KV: one layer
// of 8 KV heads x 128 x 2 x 2 = 4,096 bytes a token.
TEST(SpeculativeScenarioTest, Eagle3HeadWeighsItsLayerFcAndLmHead) {
  auto s =
      ParseScenario(R"({"model": "qwen3-8b", "deployment": {"speculative": "eagle3"}})", "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto c = BuildSimulationConfig(*s);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(static_cast<std::int64_t>(c->speculative.draft_weight_bytes), 799032034);
  EXPECT_EQ(c->speculative.draft_kv_bytes_per_token, 4096);
  // An EAGLE-1 head of Llama-3.1-8B shares the lm_head: attention
  // 41,943,040, MLP 176,160,768, fc 2 x 4,096 x 4,096 = 33,554,432, norms
  // (32 x 8,192 + 4,096) / 32 = 8,320: 251,666,560 x 2 = 503,333,120 bytes.
  auto e = ParseScenario(R"({"model": "llama-3.1-8b", "deployment": {"speculative": "eagle"}})",
                         "s.json");
  ASSERT_TRUE(e.ok()) << e.error().message();
  auto ec = BuildSimulationConfig(*e);
  ASSERT_TRUE(ec.ok()) << ec.error().message();
  EXPECT_EQ(static_cast<std::int64_t>(ec->speculative.draft_weight_bytes), 503333120);
  // Over 2 GPUs the EAGLE-3 fc (3 x 4,096 x 4,096 x 2 = 100,663,296 bytes)
  // stays whole on each, the rest splits: (799,032,034 - 100,663,296 + 1)
  // / 2 = 349,184,369, + 100,663,296 = 449,847,665 bytes a GPU.
  auto two = ParseScenario(
      R"({"model": "qwen3-8b", "deployment": {"gpus_per_replica": 2, "speculative": "eagle3"}})",
      "s.json");
  ASSERT_TRUE(two.ok()) << two.error().message();
  auto tc = BuildSimulationConfig(*two);
  ASSERT_TRUE(tc.ok()) << tc.error().message();
  EXPECT_EQ(static_cast<std::int64_t>(tc->speculative.draft_weight_bytes), 449847665);
}

// An MTP draft's weights are the checkpoint's prediction module as stored,
// without its embedding and lm_head copies (vLLM's proposer shares the
// target's).
TEST(SpeculativeScenarioTest, MtpDraftWeighsTheStoredPredictionModule) {
  // DeepSeek-V3 (fp8, 128 x 128 blocks with an fp32 scale each: a matrix of
  // r x c takes r x c bytes + ceil(r/128) x ceil(c/128) x 4), layer 61 at
  // tensor parallel 8 on H200s.
  // Replicated whole on each GPU:
  //   q_a_proj 1536 x 7168: 11,010,048 + 12 x 56 x 4 = 11,012,736
  //   kv_a_proj_with_mqa 576 x 7168: 4,128,768 + 5 x 56 x 4 = 4,129,888
  //   q_a / kv_a norms (1536 + 512) x 2 = 4,096
  //   router 256 x 7168 x 2 = 3,670,016, its correction bias 256 x 2 = 512
  //   (in the dtype, as the target's layers count it)
  //   input, post-attention, enorm, hnorm and head norms 5 x 7168 x 2 = 71,680
  //   eh_proj 7168 x 14336 in bf16 (vLLM's plain nn.Linear) = 205,520,896
  //   = 224,409,824
  // Split 8 ways:
  //   q_b_proj 24576 x 1536: 37,748,736 + 192 x 12 x 4 = 37,757,952
  //   kv_b_proj 32768 x 512: 16,777,216 + 256 x 4 x 4 = 16,781,312
  //   o_proj 7168 x 16384: 117,440,512 + 56 x 128 x 4 = 117,469,184
  //   257 experts (256 routed + 1 shared) x 3 x (2048 x 7168: 14,680,064
  //   + 16 x 56 x 4 = 14,683,648) = 11,321,092,608
  //   = 11,493,101,056, / 8 = 1,436,637,632
  // Per GPU: 1,661,047,456 bytes (counted in bf16 before: 3.3 GB of the pool).
  auto s = ParseScenario(R"({"model": "deepseek-v3",
      "deployment": {"gpu": "h200", "gpus_per_replica": 8, "speculative": "mtp"}})",
                         "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto c = BuildSimulationConfig(*s);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(static_cast<std::int64_t>(c->speculative.draft_weight_bytes), 1661047456);

  // Qwen3.5-9B (bf16) at one GPU: fc 4096 x 8192 = 33,554,432; three norms
  // (embedding, hidden, final) 12,288; a gated attention layer: q (with its
  // gate) 8192 x 4096 = 33,554,432, k and v 2 x 1024 x 4096 = 8,388,608, o
  // 4096 x 4096 = 16,777,216, q and k norms 512; MLP 3 x 4096 x 12288 =
  // 150,994,944; the layer's two norms 8,192: 243,290,624 parameters x 2.
  auto q = ParseScenario(R"({"model": "qwen3.5-9b", "prefix_cache": {"enabled": false},
      "deployment": {"speculative": "mtp"}})",
                         "s.json");
  ASSERT_TRUE(q.ok()) << q.error().message();
  auto qc = BuildSimulationConfig(*q);
  ASSERT_TRUE(qc.ok()) << qc.error().message();
  EXPECT_EQ(static_cast<std::int64_t>(qc->speculative.draft_weight_bytes), 486581248);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
