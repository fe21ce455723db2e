// Building simulations in tests: a config from catalog names, and tasks.
#ifndef KVBILL_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
#define KVBILL_TESTS_ENGINE_ENGINE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include "kvbill/engine/simulator.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/metrics/task_metrics.h"
#include "model/model_test_util.h"

namespace kvbill {

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

}  // namespace kvbill

#endif  // KVBILL_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
