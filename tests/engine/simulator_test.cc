#include "kvbill/engine/simulator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine_test_util.h"
#include "kvbill/metrics/growth.h"
#include "kvbill/trace/generator.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// One request alone: a 1,000-token prompt and 101 output tokens on
// Llama-3.1-8B (131,072 B of KV per token). Prefill reads no KV; the first
// token comes with it; the 100 decode steps run at contexts 1,000..1,099 and
// each reads the whole cache: 131,072 x (100 x 1,000 + 0 + 1 + ... + 99)
// = 131,072 x 104,950 = 13,756,006,400 bytes.
TEST(SimulatorTest, BatchOneDecodeReadsTheClosedFormSum) {
  for (bool step : {false, true}) {
    SCOPED_TRACE(step ? "step" : "event");
    SimulationConfig c = Config("llama-3.1-8b");
    c.step_mode = step;
    const SimulationResult r = RunSim(c, {LoopTask("t", 1, 1000, 0, 101, 0)});
    ASSERT_EQ(r.requests.size(), 1u);
    const RequestRecord& rec = r.requests[0];
    EXPECT_EQ(static_cast<double>(rec.kv_read_bytes), 13756006400.0);
    // Written: 1,000 prompt + 100 decoded tokens x 131,072 B.
    EXPECT_EQ(static_cast<double>(rec.kv_written_bytes), 1100.0 * 131072);
    EXPECT_EQ(rec.prefill_tokens, 1000);
    EXPECT_EQ(rec.cached_tokens, 0);
    // Memory-bound decode: step at context c takes (W + 131,072 (c + 1)) / bw
    // with W = 8,030,261,248 x 2 bytes of weights less the input embedding
    // table (128,256 x 4,096 x 2 bytes: a step gathers only its rows) and
    // bw = 3.35e12 x 0.65.
    const double w = 8030261248.0 * 2 - 128256.0 * 4096 * 2, bw = 3.35e12 * 0.65;
    double decode = 0;
    for (int ctx = 1000; ctx < 1100; ++ctx) decode += (w + 131072.0 * (ctx + 1)) / bw;
    // Prefill is compute-bound: 1,000 x 2 x (active params - input embedding)
    // + attention 32 layers x 2 x 32 heads x 256 x (1 + ... + 1,000), at
    // 989e12 x 0.6 FLOP/s.
    const double flops =
        1000.0 * 2 * (8030261248.0 - 128256.0 * 4096) + 32.0 * 2 * 32 * 256 * (1000.0 * 1001 / 2);
    const double prefill = flops / (989e12 * 0.6);
    EXPECT_NEAR(rec.first_token_s, prefill, prefill * 1e-12);
    EXPECT_NEAR(rec.finish_s, prefill + decode, (prefill + decode) * 1e-12);
  }
}

// An imported log knows when calls were made, not when their answers came:
// its tool_s is the gap between call starts (Task::tool_s_from_start). The
// next request is then sent that long after this one was, or when this one
// finishes if that is later, never finish + gap (which would count the
// generation twice). One task, two turns of 1,000 prompt / 101 output
// tokens (its first request alone takes F = the closed form above, about
// 0.72 s on Llama-3.1-8B at the roofline):
//   gap 5 s:  after_finish sends the second at F + 5; from start, at 5.
//   gap 0.1 s (< F): from start, at F (it waits for the answer).
TEST(SimulatorTest, AGapBetweenCallStartsCountsFromTheFirstCallsStart) {
  for (bool step : {false, true}) {
    SCOPED_TRACE(step ? "step" : "event");
    SimulationConfig c = Config("llama-3.1-8b");
    c.step_mode = step;
    for (double gap : {5.0, 0.1}) {
      Task task = LoopTask("t", 2, 1000, 0, 101, gap);
      const SimulationResult after = RunSim(c, {task});
      task.tool_s_from_start = true;
      const SimulationResult from_start = RunSim(c, {task});
      ASSERT_EQ(after.requests.size(), 2u);
      ASSERT_EQ(from_start.requests.size(), 2u);
      const double f = after.requests[0].finish_s;
      EXPECT_GT(f, 0.5);
      EXPECT_LT(f, 1.0);
      EXPECT_DOUBLE_EQ(from_start.requests[0].finish_s, f);
      EXPECT_DOUBLE_EQ(after.requests[1].release_s, f + gap);
      EXPECT_DOUBLE_EQ(from_start.requests[1].release_s, std::max(f, gap)) << gap;
    }
  }
}

// The bill splits exactly: what the requests paid is the busy time, and the
// idle rest makes up replicas x GPUs x price x simulated time.
TEST(SimulatorTest, TasksPlusIdleEqualTheRentalBill) {
  SimulationConfig c = Config("qwen3-8b");
  c.replicas = 2;
  std::vector<Task> tasks;
  for (int i = 0; i < 6; ++i) {
    tasks.push_back(LoopTask("t" + std::to_string(i), 5, 3000, 400, 60, 2.0, i * 1.5));
  }
  const SimulationResult r = RunSim(c, tasks);
  long double paid = 0, gpu_s = 0;
  for (const RequestRecord& rec : r.requests) {
    paid += rec.cost_usd;
    gpu_s += rec.gpu_seconds;
  }
  const long double price = 3.6L / 3600;
  EXPECT_NEAR(static_cast<double>(gpu_s), static_cast<double>(r.busy_gpu_seconds),
              static_cast<double>(r.busy_gpu_seconds) * 1e-12);
  EXPECT_NEAR(static_cast<double>(paid), static_cast<double>(r.busy_gpu_seconds * price), 1e-12);
  EXPECT_NEAR(static_cast<double>(paid + r.idle_usd),
              static_cast<double>(2 * r.simulated_s * price), 1e-12);
  EXPECT_GT(r.idle_usd, 0);  // two replicas, tool waits: some idle time
}

struct Workload {
  const char* name;
  const char* model;
  int replicas;
  const char* router;
  Tokens capacity_tokens;  // 0: what memory holds
  std::uint64_t seed;
  int tasks;
  const char* preset = "coding-agent";
  Seconds pin_s = 0;
  Tokens offload_tokens = 0;
};

TEST(SimulatorTest, EventSkippingAgreesWithStepMode) {
  const Workload workloads[] = {
      {"one replica", "qwen3-8b", 1, "round_robin", 0, 1, 6},
      {"two replicas, round robin", "llama-3.1-8b", 2, "round_robin", 0, 2, 8},
      {"prefix affinity", "qwen3-8b", 2, "prefix_affinity", 0, 3, 8},
      {"tight pool, preemption", "llama-3.1-8b", 1, "round_robin", 120000, 4, 6},
      {"sliding window layers", "gpt-oss-20b", 1, "round_robin", 0, 5, 6},
      {"MLA and MoE", "deepseek-v3", 1, "round_robin", 400000, 6, 4},
      {"three replicas, chat", "qwen3-8b", 3, "round_robin", 0, 7, 30, "chat"},
      {"pinning during tool waits", "qwen3-8b", 2, "prefix_affinity", 200000, 8, 8, "coding-agent",
       4.0},
      {"host offload tier", "qwen3-8b", 1, "round_robin", 150000, 9, 6, "coding-agent", 0, 2000000},
      {"least loaded", "qwen3-8b", 3, "least_loaded", 200000, 10, 12},
      {"session affinity, pinning", "qwen3-8b", 2, "session_affinity", 200000, 11, 10,
       "coding-agent", 4.0},
  };
  for (const Workload& w : workloads) {
    SCOPED_TRACE(w.name);
    auto preset = FindGeneratorPreset(w.preset);
    ASSERT_TRUE(preset.ok());
    preset->arrivals_per_s = 0.5;  // crowd the replicas
    TraceGenerator gen(*preset, w.seed);
    std::vector<Task> tasks;
    for (int i = 0; i < w.tasks; ++i) tasks.push_back(gen.Next());
    SimulationConfig c = Config(w.model);
    c.replicas = w.replicas;
    c.router = *ParseRouterKind(w.router);
    c.capacity_tokens = w.capacity_tokens;
    c.pin_during_tool_s = w.pin_s;
    c.offload_capacity_tokens = w.offload_tokens;
    const SimulationResult event = RunSim(c, tasks);
    c.step_mode = true;
    const SimulationResult step = RunSim(c, tasks);
    ExpectSameRuns(event, step);
    EXPECT_LT(event.steps_advanced * 5, step.steps_advanced);  // it did skip
    if (w.capacity_tokens == 120000) {
      std::int64_t preemptions = 0;
      for (const RequestRecord& r : event.requests) preemptions += r.preemptions;
      EXPECT_GT(preemptions, 0);  // the tight pool did force recomputation
    }
  }
}

// An agent loop appending a constant amount per turn: turn t decodes at a
// context of about 2,200 t tokens, so the KV bytes a task reads grow with the
// square of its number of turns (sum over t of 2,200 t x 200 output tokens x
// 131,072 B), while the weights each decode step reads grow only linearly.
// The cost is the sum of the two: its exponent lies between 1 and 2 and rises
// towards 2 as the loop gets longer and KV traffic dominates.
TEST(SimulatorTest, AgentLoopCostGrowsTowardsQuadratic) {
  std::vector<double> turns, cost, kv;
  for (int n : {25, 50, 100, 200}) {
    SimulationConfig c = Config("llama-3.1-8b");
    const SimulationResult r = RunSim(c, {LoopTask("loop", n, 2000, 2000, 200, 1.0)});
    long double paid = 0, read = 0;
    for (const RequestRecord& rec : r.requests) {
      paid += rec.cost_usd;
      read += rec.kv_read_bytes;
    }
    turns.push_back(n);
    cost.push_back(static_cast<double>(paid));
    kv.push_back(static_cast<double>(read));
  }
  auto kv_fit = FitPowerLaw(turns, kv);
  auto cost_fit = FitPowerLaw(turns, cost);
  ASSERT_TRUE(kv_fit.ok() && cost_fit.ok());
  // KV read: sum_{t<n} (2,200 t + 2,000 ...) x 200 is n^2 up to lower-order terms.
  EXPECT_NEAR(kv_fit->exponent, 2.0, 0.05);
  EXPECT_GT(cost_fit->exponent, 1.2);
  EXPECT_LT(cost_fit->exponent, 2.0);
  // The local exponent rises: log(c200/c100)/log 2 > log(c50/c25)/log 2.
  EXPECT_GT(std::log2(cost[3] / cost[2]), std::log2(cost[1] / cost[0]));
  std::cout << "[ measured ] KV-read exponent " << kv_fit->exponent << ", cost exponent "
            << cost_fit->exponent << " (local " << std::log2(cost[1] / cost[0]) << " -> "
            << std::log2(cost[3] / cost[2]) << ")\n";
}

TEST(SimulatorTest, PrefixCacheHitsTheRepeatedContext) {
  SimulationConfig c = Config("qwen3-8b");
  // 3 turns: 4,000 system tokens, then +50 output +950 tool tokens per turn.
  const SimulationResult r = RunSim(c, {LoopTask("t", 3, 4000, 950, 50, 0.5)});
  ASSERT_EQ(r.requests.size(), 3u);
  // Turn 2's prompt is 5,000 tokens; the first 4,000 (prompt of turn 1) plus
  // 49 of the 50 output tokens were computed by turn 1: 4,049 tokens are
  // cached, of which the whole 16-token blocks are 253 x 16 = 4,048.
  EXPECT_EQ(r.requests[1].cached_tokens, 4048);
  EXPECT_EQ(r.requests[1].prefill_tokens, 5000 - 4048);
  // Turn 3: prompt 6,000; turn 2 computed 5,000 + 49 = 5,049 -> 315 blocks = 5,040.
  EXPECT_EQ(r.requests[2].cached_tokens, 5040);
  c.prefix_caching = false;
  const SimulationResult off = RunSim(c, {LoopTask("t", 3, 4000, 950, 50, 0.5)});
  EXPECT_EQ(off.requests[1].cached_tokens, 0);
}

// A pool too small for six concurrent agents evicts their prefixes during
// tool waits; a host tier keeps the evicted blocks and reloads them (64 GB/s
// per GPU against ~0.6 PFLOP/s of recompute: reloading wins), so more of each
// prompt is a hit and less is prefilled again.
TEST(SimulatorTest, HostOffloadTierTurnsEvictionsIntoHits) {
  auto preset = FindGeneratorPreset("coding-agent");
  ASSERT_TRUE(preset.ok());
  preset->arrivals_per_s = 0.5;
  TraceGenerator gen(*preset, 9);
  std::vector<Task> tasks;
  for (int i = 0; i < 6; ++i) tasks.push_back(gen.Next());
  SimulationConfig c = Config("qwen3-8b");
  c.capacity_tokens = 150000;
  const SimulationResult without = RunSim(c, tasks);
  c.offload_capacity_tokens = 2000000;
  c.offload_link_bytes_per_s = 64e9;
  const SimulationResult with = RunSim(c, tasks);
  Tokens cached_without = 0, cached_with = 0, offload = 0, prefill_without = 0, prefill_with = 0;
  for (const RequestRecord& r : without.requests) {
    cached_without += r.cached_tokens;
    prefill_without += r.prefill_tokens;
    EXPECT_EQ(r.offload_hit_tokens, 0);
  }
  for (const RequestRecord& r : with.requests) {
    cached_with += r.cached_tokens;
    prefill_with += r.prefill_tokens;
    offload += r.offload_hit_tokens;
  }
  EXPECT_GT(offload, 0);
  EXPECT_GT(cached_with, cached_without);
  EXPECT_LT(prefill_with, prefill_without);
  std::cout << "[ measured ] offload hits " << offload << " tokens; prefill " << prefill_without
            << " -> " << prefill_with << "\n";
}

TEST(SimulatorTest, ModelThatDoesNotFitIsAnError) {
  SimulationConfig c = Config("llama-3.1-70b");  // 141 GB of weights on one 80 GB GPU
  auto r =
      Simulate(c, {LoopTask("t", 1, 100, 0, 10, 0)}, PlanAll({LoopTask("t", 1, 100, 0, 10, 0)}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("leave no room for KV"), std::string::npos);
  // What would: 131.4 GiB of weights over 2 GPUs is 65.7 GiB each, under the
  // 79.6 GiB x 0.9 = 71.6 GiB the memory fraction leaves (no reserve here).
  // No memory fraction up to 0.95 holds 131.4 GiB on one GPU: none offered.
  EXPECT_NE(r.error().message().find(
                ": deployment.gpus_per_replica 2 or a smaller weight_format would leave room"),
            std::string::npos)
      << r.error().message();
  // Llama-3.1-8B's 14.96 GiB of weights (8,030,261,248 parameters x 2 B)
  // at memory_fraction 0.1 (7.96 GiB): 14.96 / 79.6 = 0.188, so 0.2 holds
  // them (ceil(18.8 + 1) / 100 = 0.20), and two GPUs hold 7.48 GiB each,
  // under 7.96.
  SimulationConfig small = Config("llama-3.1-8b");
  small.memory_fraction = 0.1;
  auto f = Simulate(small, {LoopTask("t", 1, 100, 0, 10, 0)},
                    PlanAll({LoopTask("t", 1, 100, 0, 10, 0)}));
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message().find(": deployment.memory_fraction 0.20, "
                                     "deployment.gpus_per_replica 2 or a smaller weight_format "
                                     "would leave room"),
            std::string::npos)
      << f.error().message();
}

// An activation reserve past all the memory the fraction leaves is named as
// what took it (not the weights, with a negative room): the H100's usable
// memory x 0.9 is under 1,000 GiB.
TEST(SimulatorTest, AReserveThatTakesAllTheMemoryIsNamed) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.memory_fraction = 0.9;
  c.activation_reserve_gib = 1000;
  auto r =
      Simulate(c, {LoopTask("t", 1, 100, 0, 10, 0)}, PlanAll({LoopTask("t", 1, 100, 0, 10, 0)}));
  ASSERT_FALSE(r.ok());
  // 79.6 GiB usable x 0.9 = 71.64 GiB.
  EXPECT_EQ(r.error().message().rfind("the activation reserve (1,000.00 GiB per GPU) takes all of "
                                      "the 71.64 GiB per GPU the memory fraction leaves",
                                      0),
            0u)
      << r.error().message();
  EXPECT_EQ(r.error().message().find(" -"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
