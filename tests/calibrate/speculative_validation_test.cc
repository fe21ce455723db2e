#include "kvbill/calibrate/speculative_validation.h"

#include <gtest/gtest.h>

namespace kvbill {
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

}  // namespace
}  // namespace kvbill
