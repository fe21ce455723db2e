#include "kvbill/cost/operator_cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "cost/hand_curves.h"
#include "kvbill/cost/kernel_curves.h"
#include "kvbill/hardware/gpu.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::shared_ptr<const OperatorCostModel> Make(const std::string& model,
                                              const GpuKernelCurves& curves,
                                              EngineProfile profile = {},
                                              OperatorModelOptions options = {}) {
  auto gpu = LookupGpu("h100-sxm");
  EXPECT_TRUE(gpu.ok());
  auto m =
      OperatorCostModel::Make(Catalog(model), Fmt("bf16"), "auto", *gpu, &curves, profile, options);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : nullptr;
}

// The model priced with the hand curves by the default profile and by
// `changed`, to see what a parameter adds.
std::pair<std::shared_ptr<const OperatorCostModel>, std::shared_ptr<const OperatorCostModel>>
PlainAnd(const std::string& model, const EngineProfile& changed) {
  return {Make(model, HandCurves(), EngineProfile{}), Make(model, HandCurves(), changed)};
}

TEST(OperatorCostModelTest, DecodeIterationIsTheSumOfItsOperatorsWorkedByHand) {
  const auto m = Make("llama-3.1-8b", HandCurves());
  ASSERT_NE(m, nullptr);
  // Llama-3.1-8B, one decode at context 1,000. GEMM bytes at m = 1 (weights
  // n x k x 2, input k x 2, output n x 2) per layer:
  //   QKV    n = 32 x 128 + 8 x 256 = 6,144, k = 4,096:  50,352,128
  //   output n = 4,096, k = 4,096:                         33,570,816
  //   gate+up n = 2 x 14,336, k = 4,096:                   234,946,560
  //   down   n = 4,096, k = 14,336:                        117,477,376
  // = 436,346,880 x 32 layers = 13,963,100,160; lm_head n = 128,256,
  // k = 4,096: 1,050,937,856. 15,014,038,016 B at 1 TB/s = 15.014038016 ms.
  // Attention: 32 x 10 us + 1,000 tokens x 131,072 B at 1 TB/s = 0.451072 ms.
  const std::vector<ScheduledWork> work = {{1000, 1, false}};
  std::vector<long double> own(1);
  const double t = m->IterationSeconds(work, own);
  EXPECT_NEAR(t, 15.014038016e-3 + 0.451072e-3, 1e-9);
  // The sequence's own time: its KV read (the fixed 10 us per layer is shared).
  EXPECT_NEAR(static_cast<double>(own[0]), 0.131072e-3, 1e-12);
}

// The same decode step by part (`calibrate --detail` prints them): with the
// default profile (no CPU, launch or streaming time) the GPU parts are the
// hand-worked 15.014038016 ms of GEMMs and lm_head and 0.451072 ms of
// attention. A CPU time per iteration and per sequence shows as "cpu",
// 2 x 0.1 ms + 0.3 ms for two sequences, added before the GPU time.
TEST(OperatorCostModelTest, DecodePartsAreTheHandWorkedOperators) {
  const auto m = Make("llama-3.1-8b", HandCurves());
  ASSERT_NE(m, nullptr);
  double gpu = 0, attention = -1, head = -1;
  for (const auto& [part, s] : m->DecodeParts(1, 1000)) {
    if (part == "cpu" || part == "eager_launch" || part == "output") {
      EXPECT_EQ(s, 0) << part;
      continue;
    }
    gpu += s;
    if (part == "attention") attention = s;
    if (part == "lm_head") head = s;
  }
  EXPECT_NEAR(gpu, 15.014038016e-3 + 0.451072e-3, 1e-9);
  EXPECT_NEAR(attention, 0.451072e-3, 1e-12);
  EXPECT_NEAR(head, 1.050937856e-3, 1e-12);  // lm_head bytes at 1 TB/s
  EngineProfile cpu;
  cpu.params.cpu_iteration_s = 0.3e-3;
  cpu.params.cpu_per_sequence_s = 0.1e-3;
  const auto c = Make("llama-3.1-8b", HandCurves(), cpu);
  ASSERT_NE(c, nullptr);
  double cpu_s = -1, sum = 0;
  for (const auto& [part, s] : c->DecodeParts(2, 1000)) {
    if (part == "cpu") cpu_s = s;
    if (part != "eager_launch" && part != "output") sum += s;
  }
  EXPECT_NEAR(cpu_s, 0.5e-3, 1e-15);
  const std::vector<ScheduledWork> work = {{1000, 1, false}, {1000, 1, false}};
  std::vector<long double> own(2);
  EXPECT_NEAR(c->IterationSeconds(work, own), sum, 1e-12);
}

// Any iteration by part (`calibrate --detail` prints a mixed one): a
// decode-only iteration's parts are DecodeParts'; in an iteration mixing a
// prompt chunk with a decode, the parts add up to IterationSeconds, and a
// mixed_attention_factor of 2 adds the decode's own attention once more:
// its KV read, 1,000 tokens x 131,072 B at 1 TB/s = 0.131072 ms (above).
TEST(OperatorCostModelTest, IterationPartsAddUpAndCarryTheMixedAttentionFactor) {
  const auto m = Make("llama-3.1-8b", HandCurves());
  ASSERT_NE(m, nullptr);
  const std::vector<ScheduledWork> decode = {{1000, 1, false}};
  const auto by_decode = m->DecodeParts(1, 1000);
  const auto by_work = m->IterationParts(decode);
  ASSERT_EQ(by_decode.size(), by_work.size());
  for (std::size_t i = 0; i < by_decode.size(); ++i) {
    EXPECT_EQ(by_decode[i].first, by_work[i].first);
    EXPECT_NEAR(by_decode[i].second, by_work[i].second, 1e-15) << by_decode[i].first;
  }
  const std::vector<ScheduledWork> mixed = {{0, 100, true}, {1000, 1, false}};
  auto parts = [](const std::shared_ptr<const OperatorCostModel>& model,
                  const std::vector<ScheduledWork>& work, double* attention) {
    double sum = 0;
    for (const auto& [part, s] : model->IterationParts(work)) {
      if (part == "attention") *attention = s;
      if (part != "eager_launch" && part != "output") sum += s;
    }
    return sum;
  };
  double plain_attention = -1, doubled_attention = -1;
  std::vector<long double> own(2);
  EXPECT_NEAR(parts(m, mixed, &plain_attention), m->IterationSeconds(mixed, own), 1e-12);
  EngineProfile doubled;
  doubled.params.mixed_attention_factor = 2;
  const auto d = Make("llama-3.1-8b", HandCurves(), doubled);
  ASSERT_NE(d, nullptr);
  EXPECT_NEAR(parts(d, mixed, &doubled_attention), d->IterationSeconds(mixed, own), 1e-12);
  EXPECT_NEAR(doubled_attention - plain_attention, 0.131072e-3, 1e-12);
}

// The small kernels of a forward pass, counted by hand from each model's
// config: 2 per pass (embedding gather, final norm), 3 per layer (two
// residual-add norms, activation), 2 more per attention layer (rotary, KV
// write) and 2 more again for MLA (compressed q and kv norms), 3 more per
// linear-state layer (convolution, gates, gated norm), 2 per MoE layer
// (top-k, expert sort).
TEST(OperatorCostModelTest, SmallKernelsCountedByHandFromTheLayers) {
  // Qwen3-8B: 36 attention layers, dense: 2 + 36 x 5 = 182.
  EXPECT_EQ(SmallKernelCount(Catalog("qwen3-8b")), 182);
  // DeepSeek-V3: 61 MLA layers, 58 of them MoE (first_k_dense_replace 3):
  // 2 + 61 x 7 + 58 x 2 = 545.
  const auto ds = Catalog("deepseek-v3");
  ASSERT_EQ(ds.DecoderLayers(), 61);
  ASSERT_EQ(ds.moe.layers, 58);
  EXPECT_EQ(SmallKernelCount(ds), 545);
  // Qwen3-Next-80B-A3B: 48 layers, every 4th full attention (12), the other
  // 36 Gated DeltaNet, all 48 MoE: 2 + 12 x 5 + 36 x 6 + 48 x 2 = 374.
  const auto next = Catalog("qwen3-next-80b-a3b");
  ASSERT_EQ(next.moe.layers, 48);
  EXPECT_EQ(SmallKernelCount(next), 374);
}

// A decode step pays the small kernels once, whatever its batch: the hand
// curves' GEMM t0 of 5 us x Qwen3-8B's 182 kernels = 0.91 ms on top of the
// same step without it.
TEST(OperatorCostModelTest, SmallKernelsAreAFixedTimePerForwardPass) {
  GpuKernelCurves with = HandCurves();
  with.gemm["bf16"].t0_s = 5e-6;
  GpuKernelCurves without = with;
  without.gemm["bf16"].t0_s = 0;
  const auto a = Make("qwen3-8b", with), b = Make("qwen3-8b", without);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  for (Tokens t : {1, 8, 4096}) {
    double small = -1;
    for (const auto& [name, s] : a->DenseParts(t)) {
      if (name == "small_kernels") small = s;
    }
    EXPECT_NEAR(small, 182 * 5e-6, 1e-15) << t;
  }
  const std::vector<ScheduledWork> work = {{1000, 1, false}, {2000, 1, false}};
  std::vector<long double> own(2);
  const double ta = a->IterationSeconds(work, own), tb = b->IterationSeconds(work, own);
  // Besides the 182 kernels, every GEMM's own t0: Qwen3-8B's 4 per layer
  // and the lm_head, 36 x 4 + 1 = 145 at 5 us.
  EXPECT_NEAR(ta - tb, (182 + 145) * 5e-6, 1e-12);
}

// The dense and lm_head times are remembered per count the first time one is
// asked for. Whatever the order and however many threads ask, each count
// gets the value of its own sum of parts; a count past the token budget
// (not remembered) the same. Worked by hand at 1 token: the GEMMs of the
// The CPU against a draft that runs after the sampling (tail), worked by
// hand on the decode above: its GPU time G = 15.014038016 + 0.451072 ms,
// the profile's CPU C = 2 ms an iteration (no time per sequence).
// - synchronous: C + G + tail;
// - async: max(G, C) + tail = G + tail (G > C);
// - async with the CPU waiting for the sampling (vLLM speculating with a
//   draft on the GPU): G + max(tail, C): G + 2 ms with a 1 ms draft,
//   G + 3 ms with a 3 ms one, G + C with none (every iteration waits).
TEST(OperatorCostModelTest, CpuWaitingForTheSamplingOverlapsOnlyTheTail) {
  EngineProfile profile;
  profile.params.cpu_iteration_s = 2e-3;
  const double g = 15.014038016e-3 + 0.451072e-3;
  const std::vector<ScheduledWork> work = {{1000, 1, false}};
  std::vector<long double> own(1);
  OperatorModelOptions sync_options;
  OperatorModelOptions async_options;
  async_options.async_scheduling = true;
  OperatorModelOptions waits = async_options;
  waits.cpu_waits_for_sampling = true;
  const auto sync = Make("llama-3.1-8b", HandCurves(), profile, sync_options);
  const auto async = Make("llama-3.1-8b", HandCurves(), profile, async_options);
  const auto waiting = Make("llama-3.1-8b", HandCurves(), profile, waits);
  ASSERT_NE(sync, nullptr);
  ASSERT_NE(async, nullptr);
  ASSERT_NE(waiting, nullptr);
  EXPECT_NEAR(sync->IterationSecondsWithTail(work, own, 1e-3), 2e-3 + g + 1e-3, 1e-12);
  EXPECT_NEAR(async->IterationSecondsWithTail(work, own, 1e-3), g + 1e-3, 1e-12);
  EXPECT_NEAR(waiting->IterationSecondsWithTail(work, own, 1e-3), g + 2e-3, 1e-12);
  EXPECT_NEAR(waiting->IterationSecondsWithTail(work, own, 3e-3), g + 3e-3, 1e-12);
  EXPECT_NEAR(waiting->IterationSeconds(work, own), g + 2e-3, 1e-12);
  EXPECT_NEAR(async->IterationSeconds(work, own), g, 1e-12);
  // Without async scheduling the option changes nothing.
  OperatorModelOptions sync_waits = sync_options;
  sync_waits.cpu_waits_for_sampling = true;
  const auto sync_waiting = Make("llama-3.1-8b", HandCurves(), profile, sync_waits);
  ASSERT_NE(sync_waiting, nullptr);
  EXPECT_NEAR(sync_waiting->IterationSecondsWithTail(work, own, 1e-3), 2e-3 + g + 1e-3, 1e-12);
}

// test above without the lm_head, 13,963,100,160 B at 1 TB/s, plus
// Llama-3.1-8B's elementwise passes (none in an empty profile).
TEST(OperatorCostModelTest, RememberedTimesAreTheSumOfPartsInAnyOrderAndThread) {
  OperatorModelOptions options;
  options.max_batch_tokens = 512;
  options.max_batch_seqs = 64;
  const auto m = Make("llama-3.1-8b", HandCurves(), {}, options);
  ASSERT_NE(m, nullptr);
  EXPECT_NEAR(m->DenseSeconds(1), 13.963100160e-3, 1e-12);
  std::vector<double> dense(1030), head(130);
  std::thread down([&] {
    for (int t = 1029; t >= 0; --t) dense[static_cast<std::size_t>(t)] = m->DenseSeconds(t);
  });
  std::thread up([&] {
    for (int s = 0; s < 130; ++s) head[static_cast<std::size_t>(s)] = m->HeadSeconds(s);
  });
  for (int t = 0; t < 1030; t += 7) m->DenseSeconds(t);  // a third asker, in its own order
  down.join();
  up.join();
  for (int t = 0; t < 1030; ++t) {
    double sum = 0;
    for (const auto& part : m->DenseParts(t)) sum += part.second;
    ASSERT_EQ(dense[static_cast<std::size_t>(t)], sum) << t;
  }
  EXPECT_EQ(head[0], 0.0);
  // lm_head at s sequences: (n x k + s x k + s x n) x 2 B with n = 128,256,
  // k = 4,096 at 1 TB/s, plus (smoothness 1: the terms add) 2 s n k FLOPs
  // at 1 PFLOP/s x 1e9.
  for (int s : {1, 64, 65, 129}) {
    const double bytes = (128256.0 * 4096 + s * 4096.0 + s * 128256.0) * 2;
    const double flops = 2.0 * s * 128256 * 4096;
    EXPECT_NEAR(head[static_cast<std::size_t>(s)], bytes / 1e12 + flops / 1e24, 1e-17) << s;
  }
}

TEST(OperatorCostModelTest, MixedBatchFactorScalesOnlyTheDecodesAttention) {
  // A 100-token prefill chunk beside one decode at context 1,000. The
  // decode's own attention is its KV read: 1,000 tokens x 131,072 B at
  // 1 TB/s = 0.131072 ms (worked in the test above). A factor of 3 adds
  // twice that and nothing else: the chunk's attention and the shared
  // per-layer time stay as they are.
  EngineProfile mixed;
  mixed.params.mixed_attention_factor = 3;
  const auto [a, b] = PlainAnd("llama-3.1-8b", mixed);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const std::vector<ScheduledWork> work = {{0, 100, true}, {1000, 1, false}};
  std::vector<long double> own_a(2), own_b(2);
  const double ta = a->IterationSeconds(work, own_a);
  const double tb = b->IterationSeconds(work, own_b);
  EXPECT_NEAR(tb - ta, 2 * 0.131072e-3, 1e-12);
  EXPECT_NEAR(static_cast<double>(own_b[1]), 3 * 0.131072e-3, 1e-12);
  EXPECT_EQ(own_b[0], own_a[0]);
  // Without a prefill in the batch the factor does not apply.
  const std::vector<ScheduledWork> decode_only = {{1000, 1, false}};
  EXPECT_EQ(a->IterationSeconds(decode_only, own_a), b->IterationSeconds(decode_only, own_b));
}

TEST(OperatorCostModelTest, RecurrentStateFactorScalesOnlyTheLinearLayersStateWork) {
  // Qwen3.5-9B: 24 Gated DeltaNet layers, each holding per sequence a
  // convolution state of 3 x (2 x 16 x 128 + 32 x 128) = 24,576 bf16
  // elements (49,152 B) and a recurrent state of 32 x 128 x 128 = 524,288
  // fp32 elements (2,097,152 B): 2,146,304 B and 548,864 elements a layer.
  // A decode reads and writes it: 24 x 2 x 2,146,304 B at 1 TB/s =
  // 103.022592 us. A 100-token prompt chunk also scans it at 4 FLOPs per
  // element per token: 24 x 4 x 100 x 548,864 = 5,269,094,400 FLOPs at
  // 1 PFLOP/s = 5.2690944 us, plus the same state traffic. A factor of 3
  // adds twice each; the 8 attention layers' own time stays as it is.
  EngineProfile slow;
  slow.params.recurrent_state_factor = 3;
  const auto [a, b] = PlainAnd("qwen3.5-9b", slow);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<long double> own_a(1), own_b(1);
  const std::vector<ScheduledWork> decode = {{1000, 1, false}};
  const double da = a->IterationSeconds(decode, own_a);
  const double db = b->IterationSeconds(decode, own_b);
  EXPECT_NEAR(db - da, 2 * 103.022592e-6, 1e-12);
  EXPECT_NEAR(static_cast<double>(own_b[0] - own_a[0]), 2 * 103.022592e-6, 1e-12);
  const std::vector<ScheduledWork> chunk = {{0, 100, true}};
  const double pa = a->IterationSeconds(chunk, own_a);
  const double pb = b->IterationSeconds(chunk, own_b);
  EXPECT_NEAR(pb - pa, 2 * (103.022592e-6 + 5.2690944e-6), 1e-12);
  // A verification of 2 tokens keeps the state after each (to roll back to
  // the last accepted one): it reads one state and writes two, one more
  // than a 2-token prompt chunk writes: 24 x 2,146,304 B at 1 TB/s =
  // 51.511296 us of its own time, times the factor.
  const std::vector<ScheduledWork> verify = {{1000, 2, false, true}};
  const std::vector<ScheduledWork> extend = {{1000, 2, true, false}};
  std::vector<long double> own_v(1), own_e(1);
  b->IterationSeconds(verify, own_v);
  b->IterationSeconds(extend, own_e);
  EXPECT_NEAR(static_cast<double>(own_v[0] - own_e[0]), 3 * 51.511296e-6, 1e-12);
  // A model without recurrent-state layers does not see the factor.
  const auto [c, d] = PlainAnd("llama-3.1-8b", slow);
  ASSERT_NE(c, nullptr);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(c->IterationSeconds(decode, own_a), d->IterationSeconds(decode, own_b));
  EXPECT_EQ(c->IterationSeconds(chunk, own_a), d->IterationSeconds(chunk, own_b));
}

TEST(OperatorCostModelTest, PrefillChunkAddsCausalAttentionFlopsAndTheCachedPrefixRead) {
  const auto m = Make("llama-3.1-8b", HandCurves());
  ASSERT_NE(m, nullptr);
  // 100 new tokens after 900 cached: each attends 901..1000 tokens, 95,050
  // pairs x 2 x 32 heads x (128 + 128) x 32 layers = 49,833,574,400 FLOPs at
  // 1 PFLOP/s = 49.834 us; the prefix read is 900 x 131,072 B at 1 TB/s =
  // 117.965 us (decode rate).
  const std::vector<ScheduledWork> work = {{900, 100, true}};
  std::vector<long double> own(1);
  m->IterationSeconds(work, own);
  EXPECT_NEAR(static_cast<double>(own[0]), 49.8335744e-6 + 117.9648e-6, 1e-12);
}

TEST(OperatorCostModelTest, EagerlyTimedBlockFp8GemmsAddTheirLaunchesOutsideCudaGraphs) {
  // Llama-3.1-8B, FP8 weights from a block-scaled checkpoint: 32 layers of
  // four dense GEMMs (QKV, O, gate-up, down) on the fp8_block curve, whose
  // eager rows' fixed time is 75 us against the graph-timed per-tensor 7 us.
  // Outside a CUDA graph each call adds 68 us: 128 x 68 us = 8.704 ms on
  // top of the profile's 2 ms a layer (64 ms), which bounds the iteration
  // (its GPU time is about 10 ms at 1 TB/s). The lm_head stays bf16.
  GpuKernelCurves curves = HandCurves();
  GemmCurve fp8 = curves.gemm.at("bf16");
  fp8.fp8_rate = true;
  fp8.weight_bytes = 1;
  fp8.activation_bytes = 1;
  fp8.t0_s = 7e-6;
  curves.gemm["fp8"] = fp8;
  fp8.t0_s = 75e-6;
  curves.gemm["fp8_block"] = fp8;
  EngineProfile profile;
  profile.engine = "sglang";  // prompt batches run outside CUDA graphs
  profile.params.eager_launch_per_layer_s = 2e-3;
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  auto price = [&](bool checkpoint, bool prompt) {
    OperatorModelOptions options;
    options.fp8_checkpoint = checkpoint;
    auto m = OperatorCostModel::Make(Catalog("llama-3.1-8b"), Fmt("bf16"), "fp8", *gpu, &curves,
                                     profile, options);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
    const std::vector<ScheduledWork> work = {{0, 100, prompt}};
    std::vector<long double> own(1);
    return (*m)->IterationSeconds(work, own);
  };
  EXPECT_NEAR(price(true, true), 64e-3 + 8.704e-3, 1e-9);
  EXPECT_NEAR(price(false, true), 64e-3, 1e-9);  // per-tensor rows were graph-timed
  // A decode step runs in a graph: no launches, and the block curve's
  // fixed time is the graph-timed one, so both checkpoints price it alike.
  EXPECT_NEAR(price(true, false), price(false, false), 1e-12);
  EXPECT_LT(price(true, false), 20e-3);
}

TEST(OperatorCostModelTest, CpuTimeAddsSynchronouslyAndOverlapsWithAsyncScheduling) {
  EngineProfile profile;
  profile.params.cpu_iteration_s = 0.020;  // longer than the 15.5 ms GPU step
  const auto sync = Make("llama-3.1-8b", HandCurves(), profile);
  OperatorModelOptions async_options;
  async_options.async_scheduling = true;
  const auto async = Make("llama-3.1-8b", HandCurves(), profile, async_options);
  const std::vector<ScheduledWork> work = {{1000, 1, false}};
  std::vector<long double> own(1);
  EXPECT_NEAR(sync->IterationSeconds(work, own), 0.020 + 15.46511e-3, 1e-9);
  EXPECT_NEAR(async->IterationSeconds(work, own), 0.020, 1e-12);  // CPU-bound
}

// DecodeLinesFor must equal IterationSeconds step by step (the contract
// event skipping rests on).
void ExpectLinesMatchSteps(const OperatorCostModel& m, std::vector<Tokens> contexts, Tokens steps) {
  Tokens done = 0;
  DecodeLines lines;
  std::vector<ScheduledWork> work(contexts.size());
  std::vector<long double> own(contexts.size());
  while (done < steps) {
    std::vector<Tokens> now(contexts.size());
    for (std::size_t i = 0; i < contexts.size(); ++i) now[i] = contexts[i] + done;
    m.DecodeLinesFor(now, steps - done, &lines);
    ASSERT_FALSE(lines.lines.empty());
    Tokens covered = 0;
    for (std::size_t p = 0; p < lines.lines.size(); ++p) {
      const StepLine& line = lines.lines[p];
      ASSERT_EQ(line.begin, covered);
      for (Tokens j = line.begin; j < line.end; ++j) {
        for (std::size_t i = 0; i < contexts.size(); ++i)
          work[i] = ScheduledWork{now[i] + j, 1, false};
        const double t = m.IterationSeconds(work, own);
        ASSERT_NEAR(static_cast<double>(line.t0 + line.t1 * static_cast<long double>(j)), t,
                    1e-12 * t)
            << "step " << done + j;
        for (std::size_t i = 0; i < contexts.size(); ++i) {
          const std::size_t k = p * contexts.size() + i;
          ASSERT_NEAR(
              static_cast<double>(lines.own0[k] + lines.own1[k] * static_cast<long double>(j)),
              static_cast<double>(own[i]), 1e-12 * t);
        }
      }
      covered = line.end;
    }
    done += covered;
  }
}

TEST(OperatorCostModelTest, DecodeLinesEqualStepsWithTheBundledCurves) {
  auto gpu = LookupGpu("h100-sxm");
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  for (const char* model : {"llama-3.1-8b", "gpt-oss-20b", "mistral-7b", "qwen3-235b-a22b"}) {
    SCOPED_TRACE(model);
    OperatorModelOptions options;
    options.tensor_parallel = std::string(model) == "qwen3-235b-a22b" ? 8 : 1;
    auto m = OperatorCostModel::Make(Catalog(model), Fmt("bf16"), "auto", *gpu, nullptr, *profile,
                                     options);
    ASSERT_TRUE(m.ok()) << m.error().message();
    ExpectLinesMatchSteps(**m, {5, 120, 4090, 9000}, 400);
  }
}

TEST(OperatorCostModelTest, AsyncDecodeLinesSplitWhereTheGpuOvertakesTheCpu) {
  // 12 ms of CPU per step: a batch of one at short context is CPU-bound and
  // turns GPU-bound once its KV read grows enough; the lines split there.
  EngineProfile profile;
  profile.params.cpu_iteration_s = 0.0155;
  OperatorModelOptions options;
  options.async_scheduling = true;
  const auto m = Make("llama-3.1-8b", HandCurves(), profile, options);
  DecodeLines lines;
  // GPU step at context c: 15.014038 ms + 0.32 ms + c x 0.131072 us; it
  // reaches 15.5 ms at c = (15.5 - 15.334038) / 0.000131072 = 1,266.2.
  m->DecodeLinesFor(std::vector<Tokens>{1000}, 1000, &lines);
  ASSERT_EQ(lines.lines.size(), 2u);
  EXPECT_EQ(lines.lines[0].end, 267);
  ExpectLinesMatchSteps(*m, {1000}, 1000);
}

TEST(OperatorCostModelTest, AGpuWithoutKernelCurvesIsUncalibratedAndSaysSo) {
  auto gpu = LookupGpu("l40s");
  ASSERT_TRUE(gpu.ok());
  EngineProfile profile;
  profile.calibrated = true;
  auto m = OperatorCostModel::Make(Catalog("llama-3.1-8b"), Fmt("bf16"), "auto", *gpu, nullptr,
                                   profile, OperatorModelOptions{});
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE((*m)->calibrated());
  ASSERT_FALSE((*m)->notes().empty());
  EXPECT_EQ((*m)->notes()[0],
            "no kernel measurements for l40s: the operator efficiencies fitted on H100 are applied "
            "to its spec sheet");
}

// A GPU file that keeps a catalog id but halves its bandwidth is not that
// GPU: the id's measured kernels must not time it (they did, and the run
// said "calibrated" at the catalog H100's cost). It runs as the same specs
// under another id do; a copy that changes only memory or price stays the
// catalog's GPU.
TEST(OperatorCostModelTest, AGpuFileKeepingACatalogIdWithOtherSpeedsIsNotThatGpu) {
  auto catalog = LookupGpu("h100-sxm");
  ASSERT_TRUE(catalog.ok());
  GpuSpec slow = *catalog;
  slow.hbm_bandwidth_bytes_per_s /= 2;
  GpuSpec renamed = slow;
  renamed.id = "my-slow-h100";
  GpuSpec priced = *catalog;
  priced.usd_per_gpu_hour = 9.99;
  priced.usable_memory_bytes /= 2;
  EXPECT_EQ(CatalogTwin(*catalog), &GpuCatalog()[0]);
  EXPECT_EQ(CatalogTwin(slow), nullptr);
  EXPECT_EQ(CatalogTwin(renamed), nullptr);
  EXPECT_NE(CatalogTwin(priced), nullptr);

  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  auto make = [&](const GpuSpec& gpu) {
    auto m = OperatorCostModel::Make(Catalog("llama-3.1-8b"), Fmt("bf16"), "auto", gpu, nullptr,
                                     *profile, OperatorModelOptions{});
    EXPECT_TRUE(m.ok());
    return *m;
  };
  const auto as_catalog = make(*catalog), as_slow = make(slow), as_renamed = make(renamed),
             as_priced = make(priced);
  EXPECT_TRUE(as_catalog->calibrated());
  EXPECT_TRUE(as_priced->calibrated());
  EXPECT_FALSE(as_slow->calibrated());
  ASSERT_FALSE(as_slow->notes().empty());
  EXPECT_EQ(as_slow->notes()[0],
            "the GPU file keeps the catalog id \"h100-sxm\" but not its speeds (bandwidth, "
            "FLOP/s, architecture or link), so the kernels measured on the catalog's h100-sxm "
            "do not time it");
  // One decode step of a 2,048-token context: the file's GPU times as its
  // renamed twin (the same spec sheet), and the catalog's copy as the catalog.
  const ScheduledWork one{.context = 2048, .tokens = 1};
  std::vector<long double> own(1);
  const Seconds slow_s = as_slow->IterationSeconds({&one, 1}, own);
  EXPECT_EQ(slow_s, as_renamed->IterationSeconds({&one, 1}, own));
  EXPECT_EQ(as_priced->IterationSeconds({&one, 1}, own),
            as_catalog->IterationSeconds({&one, 1}, own));
  // Half the bandwidth: the 16 GB of weights a step streams take longer
  // (at the spec-sheet roofline, at least 16.06e9 / 1.675e12 = 9.6 ms).
  EXPECT_GT(slow_s, 9.5e-3);
}

TEST(OperatorCostModelTest, AFormatNoEngineRunsOnTheGpuIsRefusedWithTheReason) {
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  auto m = OperatorCostModel::Make(Catalog("llama-3.1-8b"), Fmt("nvfp4"), "auto", *gpu, nullptr,
                                   EngineProfile{}, OperatorModelOptions{});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message().rfind("nvfp4 KV cache on h100-sxm (NVIDIA Hopper): no engine runs "
                                      "it: vLLM stores an NVFP4 KV cache only on Blackwell",
                                      0),
            0u);
}

TEST(OperatorCostModelTest, RunsSayHowEachPartIsStoredComputedAndTimed) {
  auto gpu = LookupGpu("a100-80gb");
  ASSERT_TRUE(gpu.ok());
  auto m = OperatorCostModel::Make(Catalog("qwen3-32b"), Fmt("fp8"), "fp8", *gpu, nullptr,
                                   EngineProfile{}, OperatorModelOptions{});
  ASSERT_TRUE(m.ok()) << m.error().message();
  const CostModelInfo info = (*m)->Describe();
  ASSERT_GE(info.formats.size(), 2u);
  EXPECT_EQ(info.formats[0].part, "weights");
  EXPECT_EQ(info.formats[0].stored, "fp8-e4m3");
  EXPECT_EQ(info.formats[0].computed, "W8A16");
  EXPECT_EQ(info.formats[0].kernel, "Marlin (FP8 weight-only)");
  EXPECT_EQ(info.formats.back().part, "kv_cache");
  EXPECT_EQ(info.formats.back().computed, "16-bit attention");
  EXPECT_EQ(info.formats.back().timing.rfind("assumed: the bf16 KV attention curves", 0), 0u);
}

// A head size without a prefill table (96; the H100 tables hold 64, 128,
// 192 and 256) is timed with the nearest one's curve, and the KV cache's
// timing says it is assumed; 128 is measured.
TEST(OperatorCostModelTest, AHeadSizeWithoutATableIsTimedByTheNearestAsAnAssumption) {
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  for (const std::int64_t head : {std::int64_t{96}, std::int64_t{128}}) {
    ModelShape model = Catalog("qwen3-8b");
    for (LayerShape& l : model.layers) {
      l.qk_head_dim = head;
      l.v_head_dim = head;
    }
    auto m = OperatorCostModel::Make(model, Fmt("bf16"), "auto", *gpu, nullptr, EngineProfile{},
                                     OperatorModelOptions{});
    ASSERT_TRUE(m.ok()) << m.error().message();
    const std::string timing = (*m)->Describe().formats.back().timing;
    if (head == 96) {
      EXPECT_EQ(timing.rfind("assumed: prefill attention of 96-element heads timed with the "
                             "128-element heads' curve (no table of this head size); decode "
                             "measured: attention bf16 KV tables",
                             0),
                0u)
          << timing;
    } else {
      EXPECT_EQ(timing, "measured: attention bf16 KV tables");
    }
  }
}

// fp32 KV is twice the bf16 bytes through kernels no table timed (the
// tables measured 16-bit KV): its timing is an assumption, which the
// timing_assumed warning then reports; bf16 is measured.
TEST(OperatorCostModelTest, Fp32KvTimingIsAnAssumption) {
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  for (const char* kv : {"fp32", "bf16"}) {
    auto m = OperatorCostModel::Make(Catalog("qwen3-8b"), Fmt(kv), "auto", *gpu, nullptr,
                                     EngineProfile{}, OperatorModelOptions{});
    ASSERT_TRUE(m.ok()) << m.error().message();
    const std::string timing = (*m)->Describe().formats.back().timing;
    if (std::string(kv) == "fp32") {
      EXPECT_EQ(timing,
                "assumed: the bf16 KV attention curves at fp32's byte count (no table of this "
                "format)");
    } else {
      EXPECT_EQ(timing, "measured: attention bf16 KV tables");
    }
  }
}

// MXFP4 experts on an A100: vLLM runs Marlin's FP4 MoE, SGLang the OpenAI
// triton_kernels it ships (FP4 unpacked in software below Hopper), which no
// table measures: SGLang's timing says so, with its published 18x miss.
TEST(OperatorCostModelTest, SglangNamesItsMxfp4ExpertKernelBelowHopper) {
  auto gpu = LookupGpu("a100-80gb");
  ASSERT_TRUE(gpu.ok());
  for (const std::string engine : {"vllm", "sglang"}) {
    EngineProfile profile;
    profile.engine = engine;
    auto m = OperatorCostModel::Make(Catalog("gpt-oss-20b"), Fmt("bf16"), "auto", *gpu, nullptr,
                                     profile, OperatorModelOptions{});
    ASSERT_TRUE(m.ok()) << m.error().message();
    const CostModelInfo info = (*m)->Describe();
    const FormatUse* experts = nullptr;
    for (const FormatUse& f : info.formats) {
      if (f.part == "experts") experts = &f;
    }
    ASSERT_NE(experts, nullptr) << engine;
    if (engine == "vllm") {
      EXPECT_EQ(experts->kernel, "Marlin FP4 (dense and MoE)");
      EXPECT_EQ(experts->timing.find("SGLang"), std::string::npos);
    } else {
      EXPECT_EQ(experts->kernel.rfind("OpenAI triton_kernels MoE (SGLang's", 0), 0u)
          << experts->kernel;
      EXPECT_NE(experts->timing.find("took 18x the time kvbill gives it"), std::string::npos)
          << experts->timing;
    }
  }
}

// A latent cache names the MLA backend vLLM runs it on (FlashMLA on an
// H200, Triton MLA on an A100), not the per-head FlashAttention of the
// format matrix; SGLang's is named as its own.
TEST(OperatorCostModelTest, ALatentCacheNamesTheMlaBackend) {
  for (const auto& [gpu_id, engine, kernel] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"h200", "vllm", "FlashMLA (Hopper)"},
           {"a100-80gb", "vllm", "Triton MLA"},
           {"h200", "sglang", "SGLang's MLA attention backend"}}) {
    SCOPED_TRACE(gpu_id + " " + engine);
    auto gpu = LookupGpu(gpu_id);
    ASSERT_TRUE(gpu.ok());
    EngineProfile profile;
    profile.engine = engine;
    OperatorModelOptions options;
    options.tensor_parallel = 8;
    auto m = OperatorCostModel::Make(Catalog("deepseek-v3"), Fmt("bf16"), "auto", *gpu, nullptr,
                                     profile, options);
    ASSERT_TRUE(m.ok()) << m.error().message();
    const CostModelInfo info = (*m)->Describe();
    EXPECT_EQ(info.formats.back().part, "kv_cache");
    EXPECT_EQ(info.formats.back().kernel, kernel);
  }
  // An fp8 latent cache's note names the same backend (it named the format
  // matrix's "FlashAttention 3 FP8").
  auto h200 = LookupGpu("h200");
  ASSERT_TRUE(h200.ok());
  EngineProfile vllm;
  vllm.engine = "vllm";
  OperatorModelOptions options;
  options.tensor_parallel = 8;
  auto fp8 = OperatorCostModel::Make(Catalog("deepseek-v3"), Fmt("fp8"), "auto", *h200, nullptr,
                                     vllm, options);
  ASSERT_TRUE(fp8.ok()) << fp8.error().message();
  bool named = false;
  for (const std::string& note : (*fp8)->Describe().notes) {
    if (note.rfind("fp8-e4m3 KV cache on h200", 0) != 0) continue;
    named = true;
    EXPECT_NE(note.find("computed as FP8 attention (FlashMLA (Hopper))"), std::string::npos)
        << note;
    EXPECT_EQ(note.find("FlashAttention"), std::string::npos) << note;
  }
  EXPECT_TRUE(named);
}

// vLLM runs MLA's down projections (q_a_proj, kv_a_proj_with_mqa) as
// ReplicatedLinear: over 8 GPUs each runs them whole. DeepSeek-V3 in bf16,
// one decode (m = 1), hand curves (bytes n x k x 2 + k x 2 + n x 2 at 1
// TB/s), per layer (61): q_a 7,168 x 1,536 and kv_a 7,168 x 576 whole, n =
// 2,112: 30,296,192 B; q_b (1,536 x 128 x 192) and kv_b (512 x 128 x 256),
// 54,525,952 parameters split 8 ways, n = 950.857: 13,647,725.71 B. Priced
// as one chain split 8 ways (the same model with the down projections
// renamed, so nothing marks them whole), 69,664,768 parameters, n =
// 1,214.857: 17,432,957.71 B. 61 x 26,510,960 B = 1.61716856 ms more.
TEST(OperatorCostModelTest, MlaDownProjectionsRunWholeOnEveryGpu) {
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  GpuKernelCurves curves = HandCurves();
  curves.mla_decode = curves.decode_attention.at("bf16");  // attention is not compared
  curves.mla_prefill = curves.prefill_attention.at("bf16").at(128);
  OperatorModelOptions options;
  options.tensor_parallel = 8;
  auto gemm = [&](const ModelShape& model) {
    auto m = OperatorCostModel::Make(model, Fmt("bf16"), "bf16", *gpu, &curves, EngineProfile{},
                                     options);
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
    double s = -1;
    for (const auto& [name, t] : (*m)->DenseParts(1)) {
      if (name == "gemm") s = t;
    }
    return s;
  };
  const ModelShape whole = Catalog("deepseek-v3");
  ModelShape split = whole;
  int renamed = 0;
  for (WeightGroup& w : split.weights) {
    if (w.role != ParamRole::kAttention) continue;
    for (const char* tail : {".q_a_proj", ".kv_a_proj_with_mqa"}) {
      if (w.name.ends_with(tail)) {
        w.name += "_renamed";
        ++renamed;
      }
    }
  }
  ASSERT_GT(renamed, 0);
  EXPECT_NEAR(gemm(whole) - gemm(split), 1.61716856e-3, 1e-9);
}

// Expert parallelism keeps experts whole: at a token count where every
// expert is touched, the weight bytes a GPU reads are the same as under
// tensor parallelism (32 whole experts = 128 quarters), while the busiest
// GPU's routed pairs grow from 1/4 of them to its expected share.
TEST(OperatorCostModelTest, ExpertParallelismReadsWholeExpertsAndTheBusiestGpuSetsTheTime) {
  const auto qwen = Catalog("qwen3-235b-a22b");  // 128 experts, top-8, 94 MoE layers
  ASSERT_EQ(qwen.moe.experts, 128);
  auto part = [&](const GpuKernelCurves& curves, int ep, const char* which) {
    OperatorModelOptions options;
    options.tensor_parallel = 4;
    options.expert_parallel = ep;
    const auto m = Make("qwen3-235b-a22b", curves, EngineProfile{}, options);
    double s = 0;
    for (const auto& [name, t] : m->DenseParts(16384)) {
      if (name == which) s = t;
    }
    return s;
  };
  GpuKernelCurves bytes = HandCurves();
  bytes.moe["bf16"] = LinearCurve{"weights touched", {0, 1, 0, 0, 0}, {}};
  const double tp_bytes = part(bytes, 1, "moe"), ep_bytes = part(bytes, 4, "moe");
  EXPECT_NEAR(ep_bytes / tp_bytes, 1.0, 1e-6);
  GpuKernelCurves pairs = HandCurves();
  pairs.moe["bf16"] = LinearCurve{"useful flops", {0, 0, 1, 0, 0}, {}};
  const std::vector<double> q = RoutingProbabilities(128, 8, EngineProfile{}.moe_routing_alpha);
  // FLOPs per pair are 4x (whole experts) on the busiest GPU's share of the
  // pairs instead of every pair at a quarter: ratio 4 x share / 8.
  EXPECT_NEAR(part(pairs, 4, "moe") / part(pairs, 1, "moe"), 4 * ExpectedBusiestShare(q, 4) / 8,
              1e-9);
}

// A model whose expert shape the GPU's table measured at its tensor-parallel
// degree takes the table's times (interpolated by tokens) instead of the
// curve; under expert parallelism, or at a degree the table lacks, the curve.
// The hand curves with a table of Qwen3-235B's expert shape (94 MoE layers,
// 4,096 x 1,536, top-8 of 128) at tensor parallel `tp`.
GpuKernelCurves HandCurvesWithQwenExperts(int tp, std::vector<double> tokens,
                                          std::vector<double> seconds) {
  GpuKernelCurves curves = HandCurves();
  MoeShapeTable t;
  t.dtype = "bf16";
  t.hidden = 4096;
  t.inter = 1536;
  t.top_k = 8;
  t.experts = 128;
  t.tensor_parallel = tp;
  t.alpha = EngineProfile{}.moe_routing_alpha;
  t.tokens = std::move(tokens);
  t.seconds = std::move(seconds);
  curves.moe_tables.push_back(t);
  return curves;
}

TEST(OperatorCostModelTest, ExpertsOfAMeasuredShapeTakeTheTablesTimes) {
  const GpuKernelCurves curves =
      HandCurvesWithQwenExperts(4, {1, 1024, 4096}, {5e-5, 6e-4, 1.5e-3});
  auto moe = [&](int tp, int ep, Tokens tokens) {
    OperatorModelOptions options;
    options.tensor_parallel = tp;
    options.expert_parallel = ep;
    const auto m = Make("qwen3-235b-a22b", curves, EngineProfile{}, options);
    double s = 0;
    for (const auto& [name, v] : m->DenseParts(tokens)) {
      if (name == "moe") s = v;
    }
    return s;
  };
  // 2,048 tokens: halfway in log between 1,024 and 4,096, so
  // sqrt(6e-4 x 1.5e-3) = 9.487e-4 s a layer, x 94 layers.
  EXPECT_NEAR(moe(4, 1, 2048), 94 * std::sqrt(6e-4 * 1.5e-3), 1e-12);
  // 8,192 tokens: the last segment's 9e-4 s per 3,072 tokens, 4,096 more.
  EXPECT_NEAR(moe(4, 1, 8192), 94 * (1.5e-3 + 4096 * 9e-4 / 3072), 1e-12);
  // The hand curve prices weight bytes touched at 1 TB/s: at 4,096 tokens
  // every expert is touched, 128 quarters of 3 x 4,096 x 1,536 x 2 bytes a
  // layer = 0.805 ms, not the table's 1.5 ms.
  const double curve_s = 94 * 128 * 3.0 * 4096 * 1536 * 2 / 4 / 1e12;
  EXPECT_NEAR(moe(8, 1, 4096), curve_s / 2, curve_s * 1e-3);  // no table at TP 8
  EXPECT_NEAR(moe(4, 4, 4096), curve_s, curve_s * 1e-3);      // experts whole, 32 per GPU
}

// Expert parallelism keeps experts whole, as the table's rows at tensor
// parallel 1 run them: the curve is scaled by the table's time over the
// curve's own for all the model's whole experts at the same tokens. The
// hand curve prices weight bytes touched alone, so at 4,096 tokens (every
// expert touched) a GPU's 32 whole experts cost a quarter of the 128 the
// table row holds: the layer takes a quarter of the row's 8 ms.
TEST(OperatorCostModelTest, ExpertParallelismScalesTheCurveByTheWholeExpertsTable) {
  const GpuKernelCurves curves = HandCurvesWithQwenExperts(1, {1, 4096}, {1e-4, 8e-3});
  OperatorModelOptions options;
  options.tensor_parallel = 4;
  options.expert_parallel = 4;
  const auto m = Make("qwen3-235b-a22b", curves, EngineProfile{}, options);
  double moe = 0;
  for (const auto& [name, v] : m->DenseParts(4096)) {
    if (name == "moe") moe = v;
  }
  EXPECT_NEAR(moe, 94 * 8e-3 / 4, 94 * 8e-3 / 4 * 1e-6);
}

// vLLM v0.11 with --enable-expert-parallel and one data-parallel rank: every
// GPU routes every token and masks other GPUs' experts (expert_map -> -1),
// so its kernel passes over all T x top-k rows, its own at the whole
// expert's width and the masked ones writing zeros; with all-to-all
// dispatch a GPU sees its own pairs only. Curve: the row term alone, row
// bytes at 1 TB/s.
TEST(OperatorCostModelTest, ExpertParallelMaskingKeepsEveryRowsTraffic) {
  const auto qwen = Catalog("qwen3-235b-a22b");  // hidden 4,096, top-8, 94 MoE layers
  ASSERT_EQ(qwen.hidden_size, 4096);
  ASSERT_EQ(qwen.moe.layers, 94);
  ASSERT_EQ(qwen.moe.params_per_expert, 3 * 4096 * 1536);  // expert width 1,536
  GpuKernelCurves rows = HandCurves();
  rows.moe["bf16"] = LinearCurve{"rows", {0, 0, 0, 0, 1}, {}};
  auto model = [&](int ep, bool all_to_all) {
    OperatorModelOptions options;
    options.tensor_parallel = 4;
    options.expert_parallel = ep;
    options.expert_all_to_all = all_to_all;
    return Make("qwen3-235b-a22b", rows, EngineProfile{}, options);
  };
  auto moe = [](const std::shared_ptr<const OperatorCostModel>& m, Tokens t) {
    double s = 0;
    for (const auto& part : m->DenseParts(t)) {
      if (part.first == "moe") s = part.second;
    }
    return s;
  };
  // Tensor parallel over 4: all 1,024 x 8 = 8,192 rows at width 384,
  // 2 x (3 x 4,096 + 6 x 384) = 29,184 B each: 94 x 8,192 x 29,184 B
  // = 22,473,080,832 B = 22.473080832 ms at 1 TB/s.
  EXPECT_NEAR(moe(model(1, false), 1024), 22.473080832e-3, 1e-12);
  // Expert parallel over 4: the busiest GPU's p = 1,024 x share own rows at
  // width 1,536 (43,008 B), the other 8,192 - p masked (31,744 B).
  const std::vector<double> q = RoutingProbabilities(128, 8, EngineProfile{}.moe_routing_alpha);
  const double p = 1024 * ExpectedBusiestShare(q, 4);
  const auto masked = model(4, false);
  EXPECT_NEAR(moe(masked, 1024), 94 * (p * 43008 + (8192 - p) * 31744) / 1e12, 1e-12);
  EXPECT_GT(moe(masked, 1024), moe(model(1, false), 1024));
  // All-to-all: the busiest GPU's own rows only; so SGLang's expert
  // parallelism too, which gathers a GPU's own rows (masking not modelled).
  EXPECT_NEAR(moe(model(4, true), 1024), 94 * p * 43008 / 1e12, 1e-12);
  EngineProfile sglang;
  sglang.engine = "sglang";
  OperatorModelOptions ep4;
  ep4.tensor_parallel = 4;
  ep4.expert_parallel = 4;
  EXPECT_NEAR(moe(Make("qwen3-235b-a22b", rows, sglang, ep4), 1024), 94 * p * 43008 / 1e12, 1e-12);
  bool said = false;
  for (const std::string& note : masked->notes()) {
    said = said || note.find("masking other GPUs' experts") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(OperatorCostModelTest, ExpertParallelismNeedsExpertsAndTheTensorParallelDegree) {
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  OperatorModelOptions options;
  options.tensor_parallel = 4;
  options.expert_parallel = 2;
  auto m = OperatorCostModel::Make(Catalog("qwen3-235b-a22b"), Fmt("bf16"), "auto", *gpu, nullptr,
                                   EngineProfile{}, options);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message(),
            "expert_parallel must be 1 or the tensor-parallel degree (4), got 2");
  options.expert_parallel = 4;
  auto dense = OperatorCostModel::Make(Catalog("qwen3-32b"), Fmt("bf16"), "auto", *gpu, nullptr,
                                       EngineProfile{}, options);
  ASSERT_FALSE(dense.ok());
  EXPECT_EQ(dense.error().message(),
            "expert parallelism needs routed experts; model \"qwen3-32b\" has none");
}

// All-to-all dispatch: per MoE layer two all-to-alls of the GPU's quarter of
// the tokens' (token, expert) pairs and an all-gather of the layer output
// replace the MLP all-reduce (94 of qwen3-235b's 2 x 94 all-reduces).
TEST(OperatorCostModelTest, AllToAllDispatchReplacesTheMoeAllReduce) {
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  OperatorModelOptions options;
  options.tensor_parallel = 4;
  options.expert_parallel = 4;
  options.expert_all_to_all = true;
  auto m = OperatorCostModel::Make(Catalog("qwen3-235b-a22b"), Fmt("bf16"), "auto", *gpu, nullptr,
                                   *profile, options);
  ASSERT_TRUE(m.ok()) << m.error().message();
  const GpuKernelCurves* h100 = BundledKernelCurves().For("h100-sxm");
  const Tokens t = 2048;
  const double hidden = 4096, layers = 94;
  const double all_reduce = layers * h100->AllReduceFor(4)->Seconds(t * hidden * 2);
  const double sent = 512 * 8 * hidden * 2;  // 2,048 / 4 tokens x top-8 x hidden x bf16
  const double a2a = layers * (2 * h100->AllToAllFor(4)->Seconds(sent) +
                               h100->AllGatherFor(4)->Seconds(t * hidden * 2));
  for (const auto& [name, s] : (*m)->DenseParts(t)) {
    if (name == "all_reduce") {
      EXPECT_NEAR(s, all_reduce, 1e-12);
    } else if (name == "all_to_all") {
      EXPECT_NEAR(s, a2a, 1e-12);
    }
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// gpt-oss's layers carry attention sinks, which FlashAttention 2 cannot run:
// vLLM v0.11 serves them on an A100 with its Triton attention, whose prompt
// chunks stream the attended K/V once per BLOCK_Q = 16 / (64 / 8) = 2 query
// tokens. Worked by hand for one 1,000-token chunk from an empty cache, the
// hand curves (1 TB/s, prefill FLOPs at 1 PFLOP/s, no other prefill term):
//   K/V bytes per token per layer: 8 KV heads x (64 + 64) x 2 B = 2,048;
//   12 full layers: 24,576 B per attended key; 12 sliding (window 128) the same.
//   Full layers attend 1 + 2 + ... + 1,000 = 500,500 keys; sliding layers
//   1 + ... + 128 + 128 x 872 = 8,256 + 111,616 = 119,872.
//   Streamed: 24,576 x 620,372 / 2 = 7,623,131,136 B = 7.623131136 ms.
//   FLOPs: 2 x 64 heads x (64 + 64) = 16,384 per layer per key, x 12 layers
//   x 620,372 keys = 121,970,098,176 = 0.121970098176 ms at 1 PFLOP/s.
// The chunk's own time is the larger, the stream; with another engine, or on
// Hopper (FlashAttention 3 runs sinks), it is the FLOP time.
TEST(OperatorCostModelTest, SinksOnAmpereRunTritonAttentionThatStreamsKvPerQueryBlock) {
  const ModelShape oss = Catalog("gpt-oss-20b");
  int with_sinks = 0;
  for (const LayerShape& l : oss.layers) with_sinks += l.attention_sinks ? 1 : 0;
  EXPECT_EQ(with_sinks, 24);
  for (const LayerShape& l : Catalog("llama-3.1-8b").layers) EXPECT_FALSE(l.attention_sinks);
  GpuKernelCurves curves = HandCurves();
  curves.prefill_attention["bf16"][64] = LinearCurve{"hand", {1.2e-5, 0, 1, 0}, {}};
  auto own = [&](const char* gpu_id, const char* engine) {
    auto gpu = LookupGpu(gpu_id);
    EXPECT_TRUE(gpu.ok());
    EngineProfile profile;
    profile.engine = engine;
    auto m = OperatorCostModel::Make(oss, Fmt("bf16"), "bf16", *gpu, &curves, profile, {});
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
    const std::vector<ScheduledWork> work = {{0, 1000, true}};
    std::vector<long double> s(1);
    (*m)->IterationSeconds(work, s);
    bool noted = false;
    for (const std::string& n : (*m)->notes()) {
      noted = noted || n.find("Triton attention") != std::string::npos;
    }
    return std::make_pair(static_cast<double>(s[0]), noted);
  };
  const auto triton = own("a100-80gb", "vllm");
  EXPECT_NEAR(triton.first, 7.623131136e-3, 1e-12);
  EXPECT_TRUE(triton.second);
  const auto sglang = own("a100-80gb", "sglang");
  EXPECT_NEAR(sglang.first, 0.121970098176e-3, 1e-12);
  EXPECT_FALSE(sglang.second);
  const auto hopper = own("h100-sxm", "vllm");
  EXPECT_NEAR(hopper.first, 0.121970098176e-3, 1e-12);
  EXPECT_FALSE(hopper.second);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(OperatorCostModelTest, PerLayerWorkRunsOncePerTransformerBlock) {
  // Llama-3.1-8B's 32 layers at the hand curves, its prompt iteration
  // bound by eager launches of 2 ms a layer: 64 ms (the GPU time is about
  // 16 ms of bf16 weights at 1 TB/s). Declared as two blocks a layer (as
  // LongCat-Flash's layers are), the launches are 64 x 2 ms = 128 ms.
  EngineProfile profile;
  profile.engine = "sglang";  // prompt batches run outside CUDA graphs
  profile.params.eager_launch_per_layer_s = 2e-3;
  auto gpu = LookupGpu("h100-sxm");
  ASSERT_TRUE(gpu.ok());
  const GpuKernelCurves curves = HandCurves();
  auto price = [&](int blocks) {
    ModelShape shape = Catalog("llama-3.1-8b");
    shape.blocks_per_layer = blocks;
    auto m = OperatorCostModel::Make(shape, Fmt("bf16"), "auto", *gpu, &curves, profile, {});
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
    const std::vector<ScheduledWork> work = {{0, 100, true}};
    std::vector<long double> own(1);
    return (*m)->IterationSeconds(work, own);
  };
  EXPECT_NEAR(price(1), 64e-3, 1e-9);
  EXPECT_NEAR(price(2), 128e-3, 1e-9);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
