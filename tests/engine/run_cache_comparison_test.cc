// TEMPORARY (removed with the legacy pool): the engine on the run cache
// against the engine on the block-by-block pool of before, on randomised
// workloads and the bundled traces, at several block sizes, event and step
// modes. Every field of every record and of the result must be equal, bit
// for bit: the run cache changes how blocks are held, not what happens.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engine/engine_test_util.h"
#include "kvbill/trace/generator.h"
#include "kvbill/trace/importers.h"

namespace kvbill {
namespace {

void ExpectIdenticalRuns(const SimulationResult& a, const SimulationResult& b) {
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    const RequestRecord& x = a.requests[i];
    const RequestRecord& y = b.requests[i];
    SCOPED_TRACE("request " + std::to_string(i) + " of task " + x.task_id);
    ASSERT_EQ(x.task_id, y.task_id);
    ASSERT_EQ(x.index, y.index);
    EXPECT_EQ(x.replica, y.replica);
    EXPECT_EQ(x.release_s, y.release_s);
    EXPECT_EQ(x.admitted_s, y.admitted_s);
    EXPECT_EQ(x.first_token_s, y.first_token_s);
    EXPECT_EQ(x.finish_s, y.finish_s);
    EXPECT_EQ(x.prompt_tokens, y.prompt_tokens);
    EXPECT_EQ(x.cached_tokens, y.cached_tokens);
    EXPECT_EQ(x.offload_hit_tokens, y.offload_hit_tokens);
    EXPECT_EQ(x.prefill_tokens, y.prefill_tokens);
    EXPECT_EQ(x.output_tokens, y.output_tokens);
    EXPECT_EQ(x.preemptions, y.preemptions);
    EXPECT_EQ(x.kv_read_bytes, y.kv_read_bytes);
    EXPECT_EQ(x.kv_written_bytes, y.kv_written_bytes);
    EXPECT_EQ(x.peak_kv_bytes, y.peak_kv_bytes);
    EXPECT_EQ(x.gpu_seconds, y.gpu_seconds);
    EXPECT_EQ(x.cost_usd, y.cost_usd);
  }
  EXPECT_EQ(a.simulated_s, b.simulated_s);
  EXPECT_EQ(a.bill_usd, b.bill_usd);
  EXPECT_EQ(a.idle_usd, b.idle_usd);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.steps_advanced, b.steps_advanced);
  EXPECT_EQ(a.evicted_blocks, b.evicted_blocks);
}

// The requests of `tasks` under a context policy with small parameters,
// so that it edits the prompts of these short workloads.
std::vector<std::vector<Request>> Plan(const std::vector<Task>& tasks, const std::string& kind) {
  ContextPolicyParams p;
  p.kind = kind;
  p.window_tokens = 6000;
  p.older_than_turns = 2;
  p.stub_tokens = 20;
  p.threshold_tokens = 12000;
  p.summary_tokens = 500;
  p.keep_recent_tokens = 2000;
  p.sink_tokens = 300;
  p.recent_tokens = 5000;
  auto policy = MakeContextPolicy(p);
  EXPECT_TRUE(policy.ok()) << (policy.ok() ? "" : policy.error().message());
  std::vector<std::vector<Request>> out;
  for (const Task& t : tasks) out.push_back((*policy)->Plan(t));
  return out;
}

struct Exercised {
  std::int64_t evicted_blocks = 0;
  Tokens cached_tokens = 0;
  int preemptions = 0;
};

// Runs `tasks` on both pools, in both modes, at each block size; adds what
// the runs exercised to *seen.
void CompareOnBothPools(Exercised* seen, SimulationConfig c, const std::vector<Task>& tasks,
                        const std::vector<Tokens>& block_sizes,
                        const std::string& policy = "keep_all") {
  const auto requests = Plan(tasks, policy);
  for (const Tokens bs : block_sizes) {
    for (const bool step : {false, true}) {
      SCOPED_TRACE("block size " + std::to_string(bs) + (step ? ", step" : ", event"));
      c.block_size = bs;
      c.step_mode = step;
      c.legacy_block_cache = false;
      auto runs = Simulate(c, tasks, requests);
      c.legacy_block_cache = true;
      auto blocks = Simulate(c, tasks, requests);
      ASSERT_TRUE(runs.ok()) << runs.error().message();
      ASSERT_TRUE(blocks.ok()) << blocks.error().message();
      ExpectIdenticalRuns(*runs, *blocks);
      EXPECT_GT(runs->requests.size(), 0u);
      seen->evicted_blocks += runs->evicted_blocks;
      for (const RequestRecord& r : runs->requests) {
        seen->cached_tokens += r.cached_tokens;
        seen->preemptions += r.preemptions;
      }
    }
  }
}

std::vector<Task> Generated(const char* preset_name, std::uint64_t seed, int n) {
  auto preset = FindGeneratorPreset(preset_name);
  EXPECT_TRUE(preset.ok());
  preset->arrivals_per_s = 0.5;  // crowd the replicas
  TraceGenerator gen(*preset, seed);
  std::vector<Task> tasks;
  for (int i = 0; i < n; ++i) tasks.push_back(gen.Next());
  return tasks;
}

// A Mooncake-like trace: one request per task, prompts published as 512-token
// block hashes; half of them reuse a random prefix of an earlier prompt.
std::vector<Task> MooncakeLike(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint64_t>> prompts;
  std::uint64_t next_id = 0;
  std::vector<Task> tasks;
  for (int i = 0; i < n; ++i) {
    const Tokens input = 500 + static_cast<Tokens>(rng() % 20000);
    const std::size_t blocks = static_cast<std::size_t>((input + 511) / 512);
    std::vector<std::uint64_t> ids;
    if (!prompts.empty() && rng() % 2 == 0) {
      const auto& earlier = prompts[rng() % prompts.size()];
      const std::size_t shared = std::min<std::size_t>(blocks, rng() % (earlier.size() + 1));
      ids.assign(earlier.begin(), earlier.begin() + static_cast<std::ptrdiff_t>(shared));
    }
    while (ids.size() < blocks) ids.push_back(next_id++);
    prompts.push_back(ids);
    Task t;
    t.id = "m" + std::to_string(i);
    t.arrival_s = 0.3 * i;
    Turn turn;
    turn.spans.push_back(Span{SpanKind::kUser, input, std::nullopt});
    turn.output = 1 + static_cast<Tokens>(rng() % 600);
    turn.time_s = t.arrival_s;
    turn.blocks = BlockHashes{512, ids};
    t.turns.push_back(turn);
    tasks.push_back(t);
  }
  return tasks;
}

struct Case {
  const char* name;
  const char* model;
  std::vector<ConfigOverride> overrides;
  Tokens capacity_tokens;
  std::uint64_t seed;
  int tasks;
  const char* preset = "coding-agent";
  const char* policy = "keep_all";
  int replicas = 1;
  Seconds pin_s = 0;
  Tokens offload_tokens = 0;
  const char* router = "round_robin";
};

TEST(RunCacheComparisonTest, GeneratedWorkloadsGiveTheSameRuns) {
  const Case cases[] = {
      {"roomy pool", "qwen3-8b", {}, 0, 1, 6},
      {"tight pool, preemption", "llama-3.1-8b", {}, 120000, 4, 6},
      {"thrashing pool", "qwen3-8b", {}, 100000, 21, 8},
      {"unlimited cache", "qwen3-8b", {}, kUnlimitedTokens, 22, 8},
      {"chat, three replicas", "qwen3-8b", {}, 0, 7, 30, "chat", "keep_all", 3},
      {"pinning",
       "qwen3-8b",
       {},
       200000,
       8,
       8,
       "coding-agent",
       "keep_all",
       2,
       4.0,
       0,
       "prefix_affinity"},
      {"host offload tier",
       "qwen3-8b",
       {},
       150000,
       9,
       6,
       "coding-agent",
       "keep_all",
       1,
       0,
       2000000},
      {"sliding window policy", "qwen3-8b", {}, 150000, 23, 6, "coding-agent", "sliding_window"},
      {"summarise policy", "qwen3-8b", {}, 150000, 24, 6, "coding-agent", "summarise"},
      {"drop tool results", "qwen3-8b", {}, 150000, 25, 6, "coding-agent", "drop_tool_results"},
      {"attention sinks", "qwen3-8b", {}, 150000, 26, 6, "coding-agent", "sinks_recent"},
      {"gpt-oss, tight pool", "gpt-oss-20b", {}, 60000, 11, 8},
      {"gpt-oss, pinning", "gpt-oss-20b", {}, 200000, 15, 8, "coding-agent", "keep_all", 1, 4.0},
      {"window of 8", "gpt-oss-20b", {{"sliding_window", "8"}}, 110000, 16, 8},
      {"mistral, every layer sliding", "mistral-7b", {}, 100000, 18, 6},
      {"chunks of 40", "llama-4-scout", {{"attention_chunk_size", "40"}}, 40000, 17, 6},
  };
  Exercised seen;
  for (const Case& w : cases) {
    SCOPED_TRACE(w.name);
    SimulationConfig c = Config(w.model);
    c.model = Catalog(w.model, w.overrides);
    c.replicas = w.replicas;
    c.router = w.router;
    c.capacity_tokens = w.capacity_tokens;
    c.pin_during_tool_s = w.pin_s;
    c.offload_capacity_tokens = w.offload_tokens;
    CompareOnBothPools(&seen, c, Generated(w.preset, w.seed, w.tasks), {16, 7, 64}, w.policy);
  }
  EXPECT_GT(seen.evicted_blocks, 10000);
  EXPECT_GT(seen.cached_tokens, 1000000);
  EXPECT_GT(seen.preemptions, 10);
}

TEST(RunCacheComparisonTest, BundledTracesGiveTheSameRuns) {
  struct Trace {
    const char* file;
    std::vector<Tokens> block_sizes;
    Tokens capacity_tokens;
  };
  Exercised seen;
  for (const Tokens capacity : {Tokens{0}, Tokens{150000}}) {
    SCOPED_TRACE("Mooncake-like, capacity " + std::to_string(capacity));
    SimulationConfig c = Config("llama-3.1-8b");
    c.replicas = 2;
    c.capacity_tokens = capacity;
    c.release = "recorded";
    CompareOnBothPools(&seen, c, MooncakeLike(31, 300), {16, 128, 512});
  }
  const Trace traces[] = {
      {"mooncake_small.jsonl", {16, 64, 512}, 0}, {"native_small.jsonl", {16, 5}, 0},
      {"claude_code_small.jsonl", {16, 3}, 0},    {"codex_small.jsonl", {16}, 0},
      {"tracelab_round_small.jsonl", {16}, 0},
  };
  for (const Trace& t : traces) {
    SCOPED_TRACE(t.file);
    auto tasks =
        ReadTraceTasks(std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/" + t.file, {});
    ASSERT_TRUE(tasks.ok()) << tasks.error().message();
    for (const char* release : {"after_finish", "recorded"}) {
      SimulationConfig c = Config("llama-3.1-8b");
      c.replicas = 2;
      c.capacity_tokens = t.capacity_tokens;
      c.release = release;
      CompareOnBothPools(&seen, c, *tasks, t.block_sizes);
    }
  }
  EXPECT_GT(seen.evicted_blocks, 100);
  EXPECT_GT(seen.cached_tokens, 10000);
}

}  // namespace
}  // namespace kvbill
