// The engine under the calibrated operator model (operator_cost_model.h), as
// scenarios run it by default: event skipping must still reproduce step
// mode, and the bill must still split exactly into tasks and idle time.
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "kvbill/scenario/run.h"
#include "kvbill/trace/generator.h"

namespace kvbill {
namespace {

SimulationConfig FromScenario(const std::string& deployment, const std::string& model) {
  auto s = ParseScenario(R"({"model": ")" + model + R"(", "deployment": )" + deployment + "}",
                         "inline.json");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
  if (!s.ok()) return {};
  auto c = BuildSimulationConfig(*s);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message());
  return c.ok() ? *c : SimulationConfig{};
}

struct Case {
  const char* name;
  const char* model;
  const char* deployment;
  int tasks;
  const char* preset = "coding-agent";
};

TEST(OperatorModelEngineTest, EventSkippingAgreesWithStepMode) {
  const Case cases[] = {
      {"dense, one H100", "qwen3-8b", R"({"gpu": "h100-sxm"})", 6},
      {"tensor parallel 4: all-reduces", "llama-3.1-70b",
       R"({"gpu": "h100-sxm", "gpus_per_replica": 4})", 5},
      {"MoE with sliding-window layers", "gpt-oss-20b", R"({"gpu": "h100-sxm"})", 5},
      {"MLA and MoE on 8 H200s", "deepseek-v3", R"({"gpu": "h200", "gpus_per_replica": 8})", 3},
      {"async scheduling", "qwen3-8b", R"({"gpu": "h100-sxm", "async_scheduling": true})", 6},
      {"A100 curves, two replicas", "llama-3.1-8b", R"({"gpu": "a100-80gb", "replicas": 2})", 8},
      {"a GPU without kernel tables", "qwen3-8b", R"({"gpu": "l40s"})", 4, "chat"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    SimulationConfig c = FromScenario(k.deployment, k.model);
    ASSERT_NE(c.cost_model, nullptr);
    auto preset = FindGeneratorPreset(k.preset);
    ASSERT_TRUE(preset.ok());
    preset->arrivals_per_s = 0.5;  // crowd the replicas: mixed prefill and decode iterations
    TraceGenerator gen(*preset, 11);
    std::vector<Task> tasks;
    for (int i = 0; i < k.tasks; ++i) tasks.push_back(gen.Next());
    const SimulationResult event = RunSim(c, tasks);
    c.step_mode = true;
    const SimulationResult step = RunSim(c, tasks);
    ExpectSameRuns(event, step);
    EXPECT_LT(event.steps_advanced * 5, step.steps_advanced);  // it did skip
    // Tasks plus idle time make the rental bill: replicas x GPUs x price x time.
    long double paid = 0;
    for (const RequestRecord& r : event.requests) paid += r.cost_usd;
    const long double bill = static_cast<long double>(c.replicas) * c.gpus_per_replica *
                             c.usd_per_gpu_hour / 3600 * event.simulated_s;
    EXPECT_NEAR(static_cast<double>(paid + event.idle_usd), static_cast<double>(bill),
                static_cast<double>(bill) * 1e-9);
    EXPECT_EQ(event.cost_model.profile, "vllm");
  }
}

}  // namespace
}  // namespace kvbill
