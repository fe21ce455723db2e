// SGLang's scheduler in the engine (docs/engine.md, "Batching, SGLang"):
// prefill batches ahead of and apart from decodes, admission that reserves
// the running requests' future output at a decaying ratio, and event
// skipping that stays exact through it. Times are worked by hand on a cost
// model whose every iteration takes 1 ms.
#include <gtest/gtest.h>

#include <memory>

#include "engine/engine_test_util.h"
#include "kvbill/cost/engine_profile.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

SimulationConfig MillisecondConfig(SchedulerKind kind) {
  SimulationConfig c = Config("llama-3.1-8b");
  c.cost_model = std::make_shared<ContextCost>(0.001, 0.0);
  c.scheduler = kind;
  return c;
}

const RequestRecord& Find(const SimulationResult& r, const std::string& task) {
  for (const RequestRecord& rec : r.requests) {
    if (rec.task_id == task) return rec;
  }
  ADD_FAILURE() << "no request of task " << task;
  return r.requests.front();
}

// A decodes alone (prompt 10, 10 output tokens: its prefill [0, 1] ms gives
// the first, then one decode step a millisecond). B (prompt 2,500, 2 output
// tokens) arrives at 1.5 ms; the prefill budget is 1,000 tokens.
// SGLang: B's chunks 1,000, 1,000 and 500 run alone in [2, 5] ms (prefill
// first, decodes wait): B's first token at 5 ms, its second at 6 ms. A had
// one decode step ([1, 2]) before and needs 8 more from 5 ms: it ends at
// 13 ms. vLLM: A's decode rides along with B's chunks (999, 999, 502), so A
// never waits: 9 decode steps from 1 ms end at 10 ms; B's first token
// still at 5 ms.
TEST(SglangSchedulerTest, PrefillChunksRunAheadOfDecodes) {
  const std::vector<Task> tasks = {LoopTask("a", 1, 10, 0, 10, 0),
                                   LoopTask("b", 1, 2500, 0, 2, 0, 0.0015)};
  for (bool step : {false, true}) {
    SCOPED_TRACE(step ? "step" : "event");
    SimulationConfig c = MillisecondConfig(SchedulerKind::kSglang);
    c.max_num_batched_tokens = 1000;
    c.step_mode = step;
    const SimulationResult sglang = RunSim(c, tasks);
    EXPECT_NEAR(Find(sglang, "a").finish_s, 0.013, 1e-12);
    EXPECT_NEAR(Find(sglang, "b").first_token_s, 0.005, 1e-12);
    EXPECT_NEAR(Find(sglang, "b").finish_s, 0.006, 1e-12);
    EXPECT_EQ(Find(sglang, "b").prefill_tokens, 2500);
    c.scheduler = SchedulerKind::kVllm;
    const SimulationResult vllm = RunSim(c, tasks);
    EXPECT_NEAR(Find(vllm, "a").finish_s, 0.010, 1e-12);
    EXPECT_NEAR(Find(vllm, "b").first_token_s, 0.005, 1e-12);
  }
}

// A pool of 1,000 one-token blocks. A (prompt 100, 800 output tokens) is
// admitted alone at 0: 100 + min(800, 4,096, 1,000 - 1 - 100) = 900 < 1,000.
// B (prompt 300, 100 output tokens, also at 0) asks 300 + 100 = 400, and the
// pool can promise 1,000 - 900 = 100 in the same batch. After k decode
// steps A holds 100 + k tokens and reserves (799 - k) x r(k) more, with
// r(k) = max(0.098, 0.7 - k x 0.602 / 600): the room is
// f(k) = 900 - k - (799 - k) r(k), and B is admitted at the first pass with
// f(k) > 400. f(0) = 340.7; f(191) = 709 - 608 x 0.508363 = 399.915;
// f(192) = 708 - 607 x 0.507360 = 400.032. So B waits for 192 decode steps
// (its pass at 1 + 192 = 193 ms), prefills alone in [193, 194] ms, and
// decodes 99 steps to 293 ms. A loses that one millisecond: 799 decode
// steps and one prefill of B after its own first token at 1 ms end at
// 801 ms. Event skipping must stop exactly where the ratio lets B in.
TEST(SglangSchedulerTest, AdmissionWaitsForTheReservationToDecay) {
  const std::vector<Task> tasks = {LoopTask("a", 1, 100, 0, 800, 0),
                                   LoopTask("b", 1, 300, 0, 100, 0)};
  for (bool step : {false, true}) {
    SCOPED_TRACE(step ? "step" : "event");
    SimulationConfig c = MillisecondConfig(SchedulerKind::kSglang);
    c.block_size = 1;
    c.capacity_tokens = 1000;
    c.prefix_caching = false;  // both prompts open with the same system prompt
    c.step_mode = step;
    const SimulationResult r = RunSim(c, tasks);
    EXPECT_NEAR(Find(r, "b").admitted_s, 0.193, 1e-12);
    EXPECT_NEAR(Find(r, "b").first_token_s, 0.194, 1e-12);
    EXPECT_NEAR(Find(r, "b").finish_s, 0.293, 1e-12);
    EXPECT_NEAR(Find(r, "a").finish_s, 0.801, 1e-12);
    if (!step) {
      EXPECT_LT(r.steps_advanced, 20);  // fused up to B's pass and after
    }
  }
}

// A prompt's prefix hits on cached, unreferenced blocks are no room for it
// (SGLang locks the prefix and then checks the budget again: "rem_total_tokens
// may decrease after the lock acquisition", PrefillAdder.add_one_req). A
// pool of 1,000 one-token blocks. P (the 600-token system prompt, one output
// token) prefills in [0, 1] ms and leaves its 600 blocks cached. A (100
// tokens of its own, 300 out) prefills in [2, 3] ms. B (P's prompt, 300 out,
// at 2.5 ms) hits 599 blocks and computes 1. At B's pass at 3 ms the room is
// 900 free (600 of them P's cached blocks) - A's 299 tokens to come x the
// ratio 0.7 = 690.7, and B asks 1 + min(300, 1,000 - 1 - 600) = 301 plus
// the 599 blocks it locks, 900: it waits (counting the locked blocks as room
// admitted it at 3 ms, and the two then outgrew the pool: 900 + 400 tokens).
// While A runs the room stays below 1,000 - 100 = 900, so B waits for A's
// 299 decode steps to end at 302 ms, prefills in [302, 303] ms and decodes
// 299 steps to 602 ms, with no retraction.
TEST(SglangSchedulerTest, PrefixHitsOnCachedBlocksAreNoRoom) {
  Task a;
  a.id = "a";
  a.arrival_s = 0.002;
  Turn turn;
  turn.spans.push_back(Span{SpanKind::kUser, 100, std::nullopt});
  turn.output = 300;
  a.turns.push_back(turn);
  const std::vector<Task> tasks = {LoopTask("p", 1, 600, 0, 1, 0), a,
                                   LoopTask("b", 1, 600, 0, 300, 0, 0.0025)};
  for (bool step : {false, true}) {
    SCOPED_TRACE(step ? "step" : "event");
    SimulationConfig c = MillisecondConfig(SchedulerKind::kSglang);
    c.block_size = 1;
    c.capacity_tokens = 1000;
    c.step_mode = step;
    const SimulationResult r = RunSim(c, tasks);
    EXPECT_NEAR(Find(r, "p").finish_s, 0.001, 1e-12);
    EXPECT_NEAR(Find(r, "a").finish_s, 0.302, 1e-12);
    EXPECT_NEAR(Find(r, "b").admitted_s, 0.302, 1e-12);
    EXPECT_NEAR(Find(r, "b").first_token_s, 0.303, 1e-12);
    EXPECT_NEAR(Find(r, "b").finish_s, 0.602, 1e-12);
    EXPECT_EQ(Find(r, "b").cached_tokens, 599);
    for (const RequestRecord& rec : r.requests) EXPECT_EQ(rec.preemptions, 0) << rec.task_id;
  }
}

// SGLang's defaults by GPU (server_args.py, docs/engine.md): an H100 (79.6
// GiB = 81,510.4 MiB) with tensor parallelism 1 prefills 8,192 tokens a
// batch and captures decode batches up to 256; its static memory fraction
// leaves R = 512 + 1.5 x 8,192 + 2 x 256 + 128 = 13,440 MiB:
// (81,510.4 - 13,440) / 81,510.4 = 0.83511 -> 0.835. With tensor
// parallelism 8 the graphs go to 512 and R = 512 + 12,288 + 1,024 + 1,024 =
// 14,848: 0.81784 -> 0.818. An H200 (140.4 GiB = 143,769.6 MiB) at 1:
// (143,769.6 - 13,440) / 143,769.6 = 0.90652 -> 0.907. EAGLE adds 2,048 MiB
// on the H100: (81,510.4 - 15,488) / 81,510.4 = 0.80999 -> 0.810.
// State slots for a model with constant-state layers. With the mamba radix
// cache (v0.5.9 rules), 19 GiB left after the weights and 10 MiB of state a
// request: the states take 0.9 / 1.9 of the 19,456 MiB = 9,216 MiB, 921.6
// states of 10 MiB -> 921 slots; the radix cache on caps the running
// requests at 921 / 3 = 307, off at 921. --max-mamba-cache-size 64 gives 64
// slots, 64 / 3 = 21 running. v0.5.3's rules: 512 slots and 512 running
// whatever the memory, or --max-running-requests 100 as both.
TEST(SglangSchedulerTest, StateSlotsCapTheRunningRequests) {
  const double gib = 1024.0 * 1024.0 * 1024.0, mib = 1024.0 * 1024.0;
  SglangStateRules rules;
  SglangStateLimits l = SglangStateSlots(rules, 19 * gib, 10 * mib);
  EXPECT_EQ(l.slots, 921);
  EXPECT_EQ(l.max_running, 307);
  rules.radix_cache = false;
  l = SglangStateSlots(rules, 19 * gib, 10 * mib);
  EXPECT_EQ(l.slots, 921);
  EXPECT_EQ(l.max_running, 921);
  rules.radix_cache = true;
  rules.max_mamba_cache_size = 64;
  l = SglangStateSlots(rules, 19 * gib, 10 * mib);
  EXPECT_EQ(l.slots, 64);
  EXPECT_EQ(l.max_running, 21);
  SglangStateRules old;
  old.mamba_radix_cache = false;
  old.radix_cache = false;
  l = SglangStateSlots(old, 19 * gib, 10 * mib);
  EXPECT_EQ(l.slots, 512);
  EXPECT_EQ(l.max_running, 512);
  old.max_running_requests = 100;
  EXPECT_EQ(SglangStateSlots(old, 19 * gib, 10 * mib).max_running, 100);
  // The mamba radix cache came with #11214, first in v0.5.3.post2.
  EXPECT_FALSE(SglangHasMambaRadixCache("v0.5.3"));
  EXPECT_FALSE(SglangHasMambaRadixCache("v0.5.3.post1"));
  EXPECT_TRUE(SglangHasMambaRadixCache("v0.5.3.post2"));
  EXPECT_TRUE(SglangHasMambaRadixCache("v0.5.4.post2"));
  EXPECT_TRUE(SglangHasMambaRadixCache("0.5.9"));
  EXPECT_FALSE(SglangHasMambaRadixCache("v0.4.10"));
  EXPECT_TRUE(SglangHasMambaRadixCache("v0.6.0"));
  EXPECT_TRUE(SglangHasMambaRadixCache("main"));
}

TEST(SglangSchedulerTest, DefaultsFollowTheGpuMemory) {
  const GpuSpec h100 = *LookupGpu("h100-sxm");
  const GpuSpec h200 = *LookupGpu("h200");
  const EngineLimits one = DefaultEngineLimits("sglang", h100, 1);
  EXPECT_EQ(one.max_num_batched_tokens, 8192);
  EXPECT_EQ(one.cuda_graph_max_batch, 256);
  EXPECT_EQ(DefaultEngineLimits("sglang", h100, 8).cuda_graph_max_batch, 512);
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h100, 1, 8192, 256, false), 0.835);
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h100, 8, 8192, 512, false), 0.818);
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h200, 1, 8192, 256, false), 0.907);
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h100, 1, 8192, 256, true), 0.810);
  // --enable-dp-attention with dp_size 1 (server_args.py L650-658, before
  // the flag is switched off): R grows by 3 x 512 x 1 = 1,536 and, as 512 >
  // 300, by 1.5 x 512 x 1 = 768 more. Eight H200s: R = 14,848 + 2,304 =
  // 17,152, (143,769.6 - 17,152) / 143,769.6 = 0.88070 -> 0.881 (0.897
  // without the flag: 0.89672). One H100 with 256 graphs adds only the
  // 3 x 256 = 768: R = 14,208, 0.82569 -> 0.826. A small chunk and 8 graphs
  // stay under the 10,240 floor with the flag (R = 3,728 + 24): 0.87437 ->
  // 0.874 either way.
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h200, 8, 8192, 512, false, 1), 0.881);
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h200, 8, 8192, 512, false, 0), 0.897);
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h100, 1, 8192, 256, false, 1), 0.826);
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h100, 1, 2048, 8, false, 1), 0.874);
  EXPECT_DOUBLE_EQ(SglangMemoryFraction(h100, 1, 2048, 8, false, 0), 0.874);
  // vLLM keeps its own limits and the profile's graphs.
  EXPECT_EQ(DefaultEngineLimits("vllm", h100, 1).max_num_seqs, 1024);
  EXPECT_EQ(DefaultEngineLimits("vllm", h100, 1).cuda_graph_max_batch, 0);
}

struct Workload {
  const char* name;
  const char* model;
  int replicas;
  Tokens capacity_tokens;  // 0: what memory holds
  Tokens block_size;
  std::uint64_t seed;
  int tasks;
  double arrivals_per_s;
};

// Event skipping against the step-by-step reference under SGLang's rules,
// on crowded agent workloads: tight pools that retract, one-token pages,
// windowed and MLA models, several replicas.
TEST(SglangSchedulerTest, EventSkippingAgreesWithStepMode) {
  const Workload workloads[] = {
      {"one replica", "qwen3-8b", 1, 0, 16, 1, 6, 0.5},
      {"one-token pages, tight pool", "llama-3.1-8b", 1, 120000, 1, 2, 8, 2.0},
      {"tight pool, 16-token blocks", "llama-3.1-8b", 1, 150000, 16, 3, 8, 2.0},
      // gpt-oss's sliding layers keep every token in SGLang's pool (its
      // attention still reads the window); Llama 4's chunked layers are
      // paged in groups, their blocks freed past the chunk.
      {"sliding window layers, full-length in the pool", "gpt-oss-20b", 1, 0, 16, 4, 6, 0.5},
      {"chunked layers (a hybrid sliding-window model)", "llama-4-scout", 1, 200000, 16, 7, 4, 0.5},
      {"MLA and MoE", "deepseek-v3", 1, 400000, 16, 5, 4, 0.5},
      {"two replicas", "qwen3-8b", 2, 150000, 1, 6, 10, 1.0},
  };
  for (const Workload& w : workloads) {
    SCOPED_TRACE(w.name);
    SimulationConfig c = Config(w.model);
    c.scheduler = SchedulerKind::kSglang;
    c.replicas = w.replicas;
    c.capacity_tokens = w.capacity_tokens;
    c.block_size = w.block_size;
    const SimulationResult event =
        RunBothModes(c, PresetTasks("coding-agent", w.arrivals_per_s, w.seed, w.tasks));
    if (w.capacity_tokens == 120000) {
      EXPECT_GT(Preemptions(event), 0);  // the tight pool did retract
    }
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
