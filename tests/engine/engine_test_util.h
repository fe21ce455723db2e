// Building simulations in tests: a config from catalog names, and tasks.
#ifndef KVBILL_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
#define KVBILL_TESTS_ENGINE_ENGINE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kvbill/cost/cost_model.h"
#include "kvbill/engine/simulator.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/metrics/task_metrics.h"
#include "kvbill/trace/generator.h"
#include "model/model_test_util.h"

namespace kvbill {

// Relative difference at most 1e-9 (absolute below 1): how closely event
// skipping must reproduce step mode's sums.
inline bool NearlyEqual(long double x, long double y) {
  return std::fabs(static_cast<double>(x - y)) <=
         1e-9 * std::max(1.0, std::fabs(static_cast<double>(y)));
}

// Event skipping and the step-by-step reference give the same requests:
// equal counts, replicas and peaks, and times, bytes and dollars within 1e-9.
inline void ExpectSameRuns(const SimulationResult& a, const SimulationResult& b) {
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    const RequestRecord& x = a.requests[i];
    const RequestRecord& y = b.requests[i];
    SCOPED_TRACE("request " + std::to_string(i) + " of task " + x.task_id);
    ASSERT_EQ(x.task_id, y.task_id);
    ASSERT_EQ(x.index, y.index);
    EXPECT_EQ(x.cached_tokens, y.cached_tokens);
    EXPECT_EQ(x.prefill_tokens, y.prefill_tokens);
    EXPECT_EQ(x.preemptions, y.preemptions);
    EXPECT_EQ(x.replica, y.replica);
    EXPECT_EQ(x.peak_kv_bytes, y.peak_kv_bytes);
    EXPECT_TRUE(NearlyEqual(x.finish_s, y.finish_s)) << x.finish_s << " vs " << y.finish_s;
    EXPECT_TRUE(NearlyEqual(x.first_token_s, y.first_token_s));
    EXPECT_TRUE(NearlyEqual(x.kv_read_bytes, y.kv_read_bytes));
    EXPECT_TRUE(NearlyEqual(x.cost_usd, y.cost_usd))
        << static_cast<double>(x.cost_usd) << " vs " << static_cast<double>(y.cost_usd);
  }
  EXPECT_TRUE(NearlyEqual(a.simulated_s, b.simulated_s));
  EXPECT_TRUE(NearlyEqual(a.idle_usd, b.idle_usd));
  EXPECT_EQ(a.evicted_blocks, b.evicted_blocks);
}

// Every iteration takes `a` seconds plus `b` per token of context of its
// sequences (each sequence's own part), whatever it computes.
class ContextCost final : public CostModel {
 public:
  ContextCost(double a, double b) : a_(a), b_(b) {}
  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override {
    long double t = a_;
    for (std::size_t i = 0; i < work.size(); ++i) {
      own_s[i] = b_ * static_cast<long double>(work[i].context);
      t += own_s[i];
    }
    return static_cast<Seconds>(t);
  }
  void DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                      DecodeLines* out) const override {
    const std::size_t n = contexts.size();
    long double t0 = a_;
    out->own0.assign(n, 0);
    out->own1.assign(n, b_);
    for (std::size_t i = 0; i < n; ++i) {
      out->own0[i] = b_ * static_cast<long double>(contexts[i]);
      t0 += out->own0[i];
    }
    out->lines.assign(1, StepLine{0, max_steps, t0, b_ * static_cast<long double>(n)});
  }
  Seconds RecomputeSeconds(Tokens, Tokens) const override { return 0; }
  std::string name() const override { return "context"; }
  CostModelInfo Describe() const override { return {}; }

 private:
  double a_, b_;
};

inline SimulationConfig Config(const std::string& model, const std::string& gpu = "h100-sxm") {
  SimulationConfig c;
  c.model = Catalog(model);
  c.kv_format = Fmt("bf16");
  auto g = LookupGpu(gpu);
  EXPECT_TRUE(g.ok());
  c.gpu = *g;
  c.usd_per_gpu_hour = 3.6;  // 0.001 $/GPU-second: dollars read as GPU-milliseconds
  return c;
}

// A task of `turns` turns: the first appends `first` tokens, each later one
// an assistant span equal to the previous output plus `appended` tool tokens;
// every turn generates `output` tokens and waits `tool_s`.
inline Task LoopTask(const std::string& id, int turns, Tokens first, Tokens appended, Tokens output,
                     Seconds tool_s, Seconds arrival = 0) {
  Task t;
  t.id = id;
  t.arrival_s = arrival;
  for (int i = 0; i < turns; ++i) {
    Turn turn;
    if (i == 0) {
      turn.spans.push_back(Span{SpanKind::kSystem, first, std::string("system-prompt")});
    } else {
      turn.spans.push_back(Span{SpanKind::kAssistant, output, std::nullopt});
      turn.spans.push_back(Span{SpanKind::kToolResult, appended, std::nullopt});
    }
    turn.output = output;
    turn.tool_s = i + 1 < turns ? tool_s : 0;
    t.turns.push_back(turn);
  }
  return t;
}

// One request of a 1,000-token prompt and `output` tokens arriving at `arrival`.
inline Task OneRequest(const std::string& id, Seconds arrival, Tokens output) {
  Task t;
  t.id = id;
  t.arrival_s = arrival;
  Turn turn;
  turn.spans.push_back(Span{SpanKind::kUser, 1000, std::nullopt});
  turn.output = output;
  t.turns.push_back(turn);
  return t;
}

inline std::vector<std::vector<Request>> PlanAll(const std::vector<Task>& tasks,
                                                 const std::string& policy = "keep_all") {
  ContextPolicyParams p;
  p.kind = policy;
  auto made = MakeContextPolicy(p);
  EXPECT_TRUE(made.ok());
  std::vector<std::vector<Request>> out;
  for (const Task& t : tasks) out.push_back((*made)->Plan(t));
  return out;
}

inline SimulationResult RunSim(const SimulationConfig& c, const std::vector<Task>& tasks,
                               const std::string& policy = "keep_all") {
  auto r = Simulate(c, tasks, PlanAll(tasks, policy));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : SimulationResult{};
}

// The first `n` tasks of generator preset `preset` (seed `seed`), arriving
// `per_s` a second.
inline std::vector<Task> PresetTasks(const std::string& preset, double per_s, std::uint64_t seed,
                                     int n) {
  auto p = FindGeneratorPreset(preset);
  EXPECT_TRUE(p.ok());
  std::vector<Task> tasks;
  if (!p.ok()) return tasks;
  p->arrivals_per_s = per_s;
  TraceGenerator gen(*p, seed);
  for (int i = 0; i < n; ++i) tasks.push_back(gen.Next());
  return tasks;
}

// Runs `c` with event skipping and step by step, expects the same runs
// (ExpectSameRuns) and returns the event-skipping one. `skips`: the run
// has decode stretches to skip (one-token outputs have none), so event
// mode advances in far fewer steps.
inline SimulationResult RunBothModes(SimulationConfig c, const std::vector<Task>& tasks,
                                     bool skips = true) {
  c.step_mode = false;
  SimulationResult event = RunSim(c, tasks);
  c.step_mode = true;
  const SimulationResult step = RunSim(c, tasks);
  ExpectSameRuns(event, step);
  if (skips) {
    EXPECT_LT(event.steps_advanced * 3, step.steps_advanced);  // it did skip
  }
  return event;
}

inline std::int64_t Preemptions(const SimulationResult& r) {
  std::int64_t n = 0;
  for (const RequestRecord& rec : r.requests) n += rec.preemptions;
  return n;
}

}  // namespace kvbill

#endif  // KVBILL_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
