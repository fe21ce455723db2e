#include "kvbill/trace/stats.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "kvbill/trace/importers.h"
#include "trace/open_trace.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// tests/data/traces/native_small.jsonl, worked by hand:
//   task a: prompts 1200, 1600 (+100 +300), 1100 (keep 1000 + 100); outputs 100, 50, 20;
//           appended 1200, 400, 100; gaps 2.5, 1; kept from before 0, 1200, 1000.
//   task b: prompt 1400, output 10.
TEST(TraceStatsTest, SummarisesTheNativeFixture) {
  auto reader = OpenTrace(testing::TraceFixture("native_small.jsonl"), std::nullopt);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  auto stats = ComputeTraceStats(reader->get());
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  EXPECT_EQ(stats->tasks, 2);
  EXPECT_EQ(stats->requests, 4);
  // turns [1, 3]: nearest rank p50 = 1st = 1, p90 = 2nd = 3.
  EXPECT_EQ(stats->turns_per_task, (Summary{2, 2, 1, 3, 3, 3, 4}));
  // prompts sorted 1100 1200 1400 1600, sum 5300.
  EXPECT_EQ(stats->input_tokens, (Summary{4, 1325, 1200, 1600, 1600, 1600, 5300}));
  // appended sorted 100 400 1200 1400, sum 3100.
  EXPECT_EQ(stats->appended_tokens, (Summary{4, 775, 400, 1400, 1400, 1400, 3100}));
  EXPECT_EQ(stats->output_tokens, (Summary{4, 45, 20, 100, 100, 100, 180}));
  // growth +400, -500.
  EXPECT_EQ(stats->context_growth_tokens, (Summary{2, -50, -500, 400, 400, 400, -100}));
  EXPECT_EQ(stats->gap_s, (Summary{2, 1.75, 1, 2.5, 2.5, 2.5, 3.5}));
  EXPECT_DOUBLE_EQ(stats->task_prefix_reuse_share, 2200.0 / 5300.0);
  EXPECT_FALSE(stats->block_reuse_share.has_value());
}

// A first turn of no tokens is no request: the reader refuses it at its
// line, as for simulate, rather than stats counting a prompt of 0.
TEST(TraceStatsTest, AnEmptyPromptIsRefusedAsSimulateRefusesIt) {
  auto in = std::make_unique<std::istringstream>(
      "{\"kvbill_trace\":1}\n"
      "{\"id\":\"e\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":0}],\"out\":5}]}\n");
  auto reader = OpenTraceStream(std::move(in), "e.jsonl", std::nullopt, {});
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  auto stats = ComputeTraceStats(reader->get());
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.error().message(),
            "e.jsonl:2: task \"e\": turn 1: an empty prompt (0 tokens; a request sends at least "
            "one)");
}

// mooncake_small.jsonl: rows of 14, 15, 15 and 2 blocks; they share block 0
// only, and the last row ([0, 1], 1000 tokens) repeats blocks 0 and 1.
// Hits: row 2 and row 3 reuse block 0 (512 each); row 4 reuses 0 and 1
// (512 + 488). Prompts 6758 + 7322 + 7236 + 1000 = 22316.
TEST(TraceStatsTest, BlockReuseCountsLeadingBlocksSeenBefore) {
  auto reader = OpenTrace(testing::TraceFixture("mooncake_small.jsonl"), std::nullopt);
  ASSERT_TRUE(reader.ok());
  auto stats = ComputeTraceStats(reader->get());
  ASSERT_TRUE(stats.ok());
  ASSERT_TRUE(stats->block_reuse_share.has_value());
  EXPECT_DOUBLE_EQ(*stats->block_reuse_share, (512.0 + 512.0 + 1000.0) / 22316.0);
  EXPECT_EQ(stats->task_prefix_reuse_share, 0.0);
  EXPECT_TRUE(stats->block_reuse_exact);
}

// The same trace with room for 10 exact hashes: its 14 + 14 + 14 = 42
// distinct ones move into the Bloom filter, the output says so, and at 42
// hashes in 2^29 bits a false positive has probability (1 - e^(-5 * 42 /
// 2^29))^5 < 10^-30: the share is the exact one.
TEST(TraceStatsTest, BeyondTheExactLimitBlockReuseIsEstimatedAndSaysSo) {
  auto reader = OpenTrace(testing::TraceFixture("mooncake_small.jsonl"), std::nullopt);
  ASSERT_TRUE(reader.ok());
  auto stats = ComputeTraceStats(reader->get(), TraceStatsOptions{.exact_block_hashes = 10});
  ASSERT_TRUE(stats.ok());
  EXPECT_FALSE(stats->block_reuse_exact);
  ASSERT_TRUE(stats->block_reuse_share.has_value());
  EXPECT_DOUBLE_EQ(*stats->block_reuse_share, (512.0 + 512.0 + 1000.0) / 22316.0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
