// Numeric safety of the engine's sums: a very long task and a trace of a
// million tasks accumulate KV bytes and dollars without overflow or visible
// rounding (docs/robustness.md#numeric-ranges). Expected values are closed
// forms worked out below, never the program's output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "engine/engine_test_util.h"
#include "kvbill/metrics/task_metrics.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// B below: Llama-3.1-8B keeps 32 layers x 8 KV heads x 128 dims x (K, V) x
// 2 bytes = 131,072 B of KV per token (kvbill kv --model llama-3.1-8b).

// With the prefix cache off and a token budget above every prompt, a request
// of prompt P and output O is one prefill iteration that reads no KV (its
// prefix is empty) and yields the first token, then O - 1 decode steps at
// contexts P, P + 1, ..., P + O - 2, each reading the whole cache
// (SimulatorTest.BatchOneDecodeReadsTheClosedFormSum):
//   read(P, O) = B x ((O - 1) P + (O - 1)(O - 2) / 2).
SimulationConfig ClosedFormConfig() {
  SimulationConfig c = Config("llama-3.1-8b");
  c.prefix_caching = false;
  c.capacity_tokens = kUnlimitedTokens;  // a 1M-token KV is 128 GiB: never evict
  c.max_num_batched_tokens = Tokens{1} << 22;
  // KV reads are the exact footprint, not block-rounded; large blocks only
  // spare the test allocating 2^16 blocks per 1M-token prefill.
  c.block_size = Tokens{1} << 16;
  return c;
}

// One task of 10,000 turns that starts at a 1M-token context (2^20): turn 1
// sends 1,048,576 tokens, every later turn the previous prompt plus its
// 11-token answer and 9 tool tokens, so P_i = 2^20 + 20 (i - 1), and the
// last prompt is 1,248,556 tokens. Each turn generates O = 11. Each turn
// re-sends its prompt as one span (keep 0): with the prefix cache off that
// is the same work as appending, and the planned prompts stay one piece each
// (appending two spans a turn makes request i hold 2i pieces, 10^8 in all).
//   sum P_i = 10,000 x 1,048,576 + 20 x (0 + ... + 9,999)
//           = 10,485,760,000 + 20 x 49,995,000 = 11,485,660,000
//   read    = B x (10 x 11,485,660,000 + 10,000 x 45)
//           = 131,072 x 114,857,050,000 = 15,054,543,257,600,000 bytes
// which is above 2^53 (9,007,199,254,740,992): a double sum of the per-step
// reads would round; the sum must come out exact (it is a multiple of 2^17
// with a 37-bit cofactor, so it is representable).
//   written = B x (sum P_i + 10,000 x 10) = 131,072 x 11,485,760,000
//           = 1,505,461,534,720,000 bytes (each prompt and the 10 decoded tokens).
TEST(NumericSafetyTest, TenThousandTurnsAtAMillionTokensSumBytesExactly) {
  const int turns = 10000;
  const Tokens first = Tokens{1} << 20;
  Task task;
  task.id = "long";
  for (int i = 0; i < turns; ++i) {
    Turn turn;
    if (i > 0) turn.keep = 0;
    turn.spans.push_back(Span{SpanKind::kUser, first + 20 * i, std::nullopt});
    turn.output = 11;
    turn.tool_s = i + 1 < turns ? 1.0 : 0;
    task.turns.push_back(std::move(turn));
  }
  const std::vector<Task> tasks = {task};
  for (bool step : {false, true}) {
    SCOPED_TRACE(step ? "step" : "event");
    SimulationConfig c = ClosedFormConfig();
    c.step_mode = step;
    const SimulationResult r = RunSim(c, tasks);
    ASSERT_EQ(r.requests.size(), static_cast<std::size_t>(turns));
    EXPECT_EQ(r.requests.back().prompt_tokens, 1248556);

    const std::vector<TaskMetrics> metrics = AggregateTasks(tasks, r);
    ASSERT_EQ(metrics.size(), 1u);
    EXPECT_EQ(metrics[0].kv_read_bytes, 15054543257600000.0L);
    EXPECT_EQ(metrics[0].kv_written_bytes, 1505461534720000.0L);
    EXPECT_EQ(metrics[0].prompt_tokens, 11485660000);
    EXPECT_EQ(metrics[0].output_tokens, 110000);
    const RunSummary summary = Summarise(metrics, r);
    EXPECT_EQ(summary.kv_read_bytes, 15054543257600000.0L);

    // Tasks plus idle are the rental: 1 replica x 1 GPU x $0.001 per second
    // x the simulated time (9,999 one-second tool waits are idle at least).
    const long double rental = r.simulated_s * 3.6L / 3600;
    EXPECT_NEAR(static_cast<double>(summary.task_cost_usd + summary.idle_usd),
                static_cast<double>(rental), 0.005);
    EXPECT_NEAR(static_cast<double>(summary.cost_usd), static_cast<double>(rental), 0.005);
    EXPECT_GE(summary.idle_usd, 9999 * 0.001L - 1e-9L);
  }
}

// A trace of 10^6 one-turn tasks, arriving one second apart (each finishes
// well within its second: prefill of 8,192 tokens and 10 decode steps on an
// H100), prompt P = 8,192, output O = 11:
//   read per task = B x (10 x 8,192 + 45) = 131,072 x 81,965 = 10,743,316,480
//   read in total = 10^6 x that = 10,743,316,480,000,000 bytes (> 2^53).
// Every task runs alone on an identical replica state, so each pays the same
// dollars; the sum of 10^6 of them must be 10^6 x one of them, and tasks plus
// idle must be the rental of the simulated time, to the cent.
TEST(NumericSafetyTest, MillionTaskTraceSumsBytesAndConservesTheBill) {
  constexpr int kTasks = 1000000;
  std::vector<Task> tasks;
  tasks.reserve(kTasks);
  for (int i = 0; i < kTasks; ++i) {
    Task t;
    t.id = std::to_string(i);
    t.arrival_s = i;
    Turn turn;
    turn.spans.push_back(Span{SpanKind::kUser, 8192, std::nullopt});
    turn.output = 11;
    t.turns.push_back(std::move(turn));
    tasks.push_back(std::move(t));
  }
  const SimulationResult r = RunSim(ClosedFormConfig(), tasks);
  ASSERT_EQ(r.requests.size(), static_cast<std::size_t>(kTasks));
  const std::vector<TaskMetrics> metrics = AggregateTasks(tasks, r);
  const RunSummary summary = Summarise(metrics, r);
  EXPECT_EQ(summary.tasks, kTasks);
  EXPECT_EQ(summary.prompt_tokens, 8192LL * kTasks);
  EXPECT_EQ(summary.kv_read_bytes, 10743316480000000.0L);
  EXPECT_EQ(metrics[0].kv_read_bytes, 10743316480.0L);

  const long double one = metrics[0].cost_usd;
  ASSERT_GT(one, 0);
  long double most = one, least = one;
  for (const TaskMetrics& m : metrics) {
    most = std::max(most, m.cost_usd);
    least = std::min(least, m.cost_usd);
  }
  // Identical work: identical dollars, up to the last bits of a long double;
  // their sum within 10^-12 of 10^6 x one (about $3 x 10^-10 of ~$300:
  // below a pico-dollar per task, invisible at any printed precision).
  EXPECT_LE(static_cast<double>((most - least) / one), 1e-15);
  EXPECT_NEAR(static_cast<double>(summary.task_cost_usd), static_cast<double>(one * kTasks),
              static_cast<double>(one * kTasks) * 1e-12);
  // The last task arrives at 999,999 s, so the rental covers about 10^6 s at
  // $0.001 per second: ~$1,000, split to the cent.
  const long double rental = r.simulated_s * 3.6L / 3600;
  EXPECT_GT(r.simulated_s, kTasks - 1.0);
  EXPECT_NEAR(static_cast<double>(summary.task_cost_usd + summary.idle_usd),
              static_cast<double>(rental), 0.005);
  EXPECT_NEAR(static_cast<double>(summary.cost_usd), static_cast<double>(rental), 0.005);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
