// The engine under the calibrated operator model (operator_cost_model.h), as
// scenarios run it by default: event skipping must still reproduce step
// mode, and the bill must still split exactly into tasks and idle time.
#include <gtest/gtest.h>

#include "engine/engine_test_util.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/scenario/run.h"
#include "kvbill/trace/generator.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
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
      {"synchronous scheduling (vLLM before v0.14)", "qwen3-8b",
       R"({"gpu": "h100-sxm", "async_scheduling": false})", 6},
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

// Without async_scheduling a scenario runs its engine's default: vLLM (from
// v0.14) overlaps the CPU with the GPU unless it drafts by n-gram; SGLang
// unless it speculates. One decode of Qwen3-8B on an H100 at context 1,000:
// its GPU time is longer than the profile's CPU time, so overlapped it is
// the GPU time and in series the GPU time plus the CPU's, cpu_iteration_s +
// cpu_per_sequence_s for the one sequence.
TEST(OperatorModelEngineTest, SchedulingIsTheEnginesDefaultUnlessSet) {
  const std::vector<ScheduledWork> work = {{1000, 1, false, false}};
  std::vector<long double> own(1);
  auto seconds = [&](const std::string& deployment) {
    const SimulationConfig c = FromScenario(deployment, "qwen3-8b");
    return c.cost_model ? c.cost_model->IterationSeconds(work, own) : -1.0;
  };
  auto vllm = LoadEngineProfile("vllm");
  ASSERT_TRUE(vllm.ok());
  const double cpu = vllm->params.cpu_iteration_s + vllm->params.cpu_per_sequence_s;
  const double by_default = seconds(R"({"gpu": "h100-sxm"})");
  const double overlapped = seconds(R"({"gpu": "h100-sxm", "async_scheduling": true})");
  const double in_series = seconds(R"({"gpu": "h100-sxm", "async_scheduling": false})");
  EXPECT_EQ(by_default, overlapped);
  EXPECT_GT(overlapped, cpu);
  EXPECT_NEAR(in_series, overlapped + cpu, 1e-12);
  // vLLM turns it off for n-gram drafts, which run on the CPU.
  EXPECT_EQ(seconds(R"({"gpu": "h100-sxm", "speculative": "ngram"})"), in_series);
  // SGLang: on, and off when it speculates.
  auto sglang = LoadEngineProfile("sglang");
  ASSERT_TRUE(sglang.ok());
  const double sglang_cpu = sglang->params.cpu_iteration_s + sglang->params.cpu_per_sequence_s;
  const double sglang_default = seconds(R"({"gpu": "h100-sxm", "engine": "sglang"})");
  EXPECT_EQ(sglang_default, seconds(R"({"gpu": "h100-sxm", "engine": "sglang",
      "async_scheduling": true})"));
  EXPECT_NEAR(seconds(R"({"gpu": "h100-sxm", "engine": "sglang", "speculative": "eagle3"})"),
              sglang_default + sglang_cpu, 1e-12);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
