#include "kvbill/calibrate/speculative_validation.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Two ShareGPT runs of gpustack's Qwen3-8B page: the run without
// speculation (b05) and the EAGLE-3 one (b08) report the same 100 requests,
// 23,260 prompt and 22,061 output tokens.
Measurement ShareGpt(const std::string& id, const std::string& flags) {
  Measurement m;
  m.id = id;
  m.engine = "sglang";
  m.engine_flags = flags;
  m.dataset = "sharegpt";
  m.num_prompts = 100;
  m.successful_requests = 100;
  m.total_input_tokens = 23260;
  m.total_output_tokens = 22061;
  return m;
}

TEST(SpeculativeValidationTest, RunsWithTheSameTotalsRanTheSameRequests) {
  const Measurement base = ShareGpt("p/sglang/b05-sharegpt-n100-c4", "");
  Measurement spec = ShareGpt("p/sglang/b08-sharegpt-n100-c4", "--speculative-algorithm EAGLE3");
  EXPECT_TRUE(IsSpeculativeRecord(spec));
  EXPECT_FALSE(IsSpeculativeRecord(base));
  EXPECT_TRUE(SameRequests(spec, base));
  // One output token more is another draw (or another model's outputs).
  spec.total_output_tokens = 22062;
  EXPECT_FALSE(SameRequests(spec, base));
  // Without totals nothing says the prompts were the same.
  spec.total_output_tokens = 22061;
  EXPECT_TRUE(SameRequests(spec, base));
  spec.total_input_tokens.reset();
  Measurement base_without = base;
  base_without.total_input_tokens.reset();
  EXPECT_FALSE(SameRequests(spec, base_without));
  // Another number of requests.
  spec.total_input_tokens = 23260;
  spec.successful_requests = 99;
  EXPECT_FALSE(SameRequests(spec, base));
}

// gpustack's Qwen3.5-9B page pairs its MTP runs with runs that differ in
// flags a vLLM replay runs alike as well as in speculation.
Measurement Vllm(const std::string& id, const std::string& flags) {
  Measurement m;
  m.id = id;
  m.engine = "vllm";
  m.engine_flags = flags;
  m.model = "Qwen/Qwen3.5-9B";
  m.gpu_text = "H100 SXM";
  return m;
}

TEST(SpeculativeValidationTest, TheBaselineDiffersOnlyInFlagsReplayedAlike) {
  const std::string mtp = "--speculative-config={\"method\":\"mtp\",\"num_speculative_tokens\":1}";
  const Measurement spec =
      Vllm("p/vllm/b12-sharegpt-n1000-rps1", "--reasoning-parser=qwen3 " + mtp +
                                                 " --language-model-only "
                                                 "--performance-mode=interactivity");
  std::vector<Measurement> records = {
      spec,
      Vllm("p/vllm/b01-sharegpt-n1000-rps8", "--reasoning-parser=qwen3"),  // another workload
      Vllm("p/vllm/b06-sharegpt-n1000-rps1", "--reasoning-parser=qwen3 --max-num-seqs=128"),
      Vllm("p/vllm/b11-sharegpt-n1000-rps1", "--reasoning-parser=qwen3"),
  };
  std::string differs = "stale";
  const Measurement* base = SpeculationBaseline(spec, records, &differs);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->id, "p/vllm/b11-sharegpt-n1000-rps1");
  EXPECT_EQ(differs, "--language-model-only --performance-mode=interactivity");

  // A run with the very flags wins over one that differs in flags alike,
  // wherever it comes in the records.
  records.push_back(Vllm("p/vllm/b13-sharegpt-n1000-rps1",
                         "--reasoning-parser=qwen3 --language-model-only "
                         "--performance-mode=interactivity"));
  base = SpeculationBaseline(spec, records, &differs);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->id, "p/vllm/b13-sharegpt-n1000-rps1");
  EXPECT_EQ(differs, "");

  // --performance-mode throughput doubles the scheduler's budgets: not alike.
  const Measurement throughput =
      Vllm("p/vllm/b14-sharegpt-n1000-rps4",
           "--reasoning-parser=qwen3 " + mtp + " --performance-mode=throughput");
  records = {throughput, Vllm("p/vllm/b13-sharegpt-n1000-rps4", "--reasoning-parser=qwen3")};
  EXPECT_EQ(SpeculationBaseline(throughput, records, &differs), nullptr);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
