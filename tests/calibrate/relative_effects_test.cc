#include "kvbill/calibrate/relative_effects.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

Measurement Record(const std::string& id, const std::string& model, const std::string& weights,
                   int tp, const std::string& flags, double duration, double tpot) {
  Measurement m;
  m.id = id;
  m.engine = "vllm";
  m.engine_version = "v0.11.0";
  m.engine_flags = flags;
  m.model = model;
  m.weights = weights;
  m.gpu_text = "A100 80GB";
  m.tp = tp;
  m.gpus = tp;
  m.dataset = "sharegpt";
  m.num_prompts = 1000;
  m.duration_s = duration;
  m.tpot_ms_mean = tpot;
  return m;
}

MetricPoint Point(const std::string& id, const std::string& metric, double predicted) {
  MetricPoint p;
  p.record = id;
  p.metric = metric;
  p.predicted = predicted;
  return p;
}

TEST(RelativeEffectsTest, PairsDifferInOneFactorAndGainsAreTimeRatios) {
  const std::vector<Measurement> records = {
      // BF16 vs FP8 weights of one model; the length limit is set aside.
      Record("bf16", "Qwen/Qwen3-32B", "bf16", 1, "--max-model-len 32768", 100, 10),
      Record("fp8", "Qwen/Qwen3-32B-FP8", "fp8", 1, "", 80, 12),
      // TP 8 vs 4, expert-parallel over the GPUs both times: one factor.
      Record("tp8", "Qwen/Qwen3-235B", "fp8", 8, "-tp 8 --enable-expert-parallel", 110, 100),
      Record("tp4", "Qwen/Qwen3-235B", "fp8", 4, "-tp 4 --enable-expert-parallel", 147, 150),
      // Two factors at once: no pair with tp4.
      Record("tp4-bf16", "Qwen/Qwen3-235B", "bf16", 8, "-tp 8", 120, 100),
  };
  const std::vector<MetricPoint> points = {
      Point("bf16", "duration_s", 100),  Point("fp8", "duration_s", 95),
      Point("bf16", "tpot_ms_mean", 10), Point("fp8", "tpot_ms_mean", 12),
      Point("tp8", "duration_s", 100),   Point("tp4", "duration_s", 137)};
  const std::vector<RelativeEffect> e = FindRelativeEffects(records, points, {});
  // bf16/fp8 (duration, tpot), tp4/tp8 (duration, tpot); tp4-bf16 pairs with nothing.
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].factor, "weights fp8 vs bf16");
  EXPECT_EQ(e[0].base, "bf16");
  EXPECT_EQ(e[0].variant, "fp8");
  EXPECT_EQ(e[0].metric, "duration_s");
  EXPECT_DOUBLE_EQ(e[0].published, 100.0 / 80 - 1);  // +25%
  EXPECT_DOUBLE_EQ(e[0].predicted, 100.0 / 95 - 1);  // +5.3%
  EXPECT_DOUBLE_EQ(e[0].Tolerance(), 0.125);         // half of 25%
  EXPECT_FALSE(e[0].Meets());                        // 19.7 points off
  EXPECT_EQ(e[1].metric, "tpot_ms_mean");
  EXPECT_DOUBLE_EQ(e[1].published, 10.0 / 12 - 1);
  EXPECT_TRUE(e[1].Meets());  // predicted exactly
  EXPECT_EQ(e[2].factor, "tensor parallel 8 vs 4 (experts expert-parallel over them)");
  EXPECT_EQ(e[2].base, "tp4");
  EXPECT_DOUBLE_EQ(e[2].published, 147.0 / 110 - 1);  // +33.6%
  EXPECT_DOUBLE_EQ(e[2].predicted, 137.0 / 100 - 1);  // +37%: 3.4 points, within 16.8
  EXPECT_TRUE(e[2].Meets());
  EXPECT_FALSE(e[3].replayed);  // no tpot prediction for the TP pair
  EXPECT_EQ(e[3].why, "not replayed");
}

TEST(RelativeEffectsTest, SmallGainsAreHeldToThreePointsAndSkippedRecordsSayWhy) {
  const std::vector<Measurement> records = {
      Record("a", "m/M", "bf16", 1, "", 100, 10),
      Record("b", "m/M-AWQ", "awq-int4", 1, "", 98, 10),
  };
  const std::vector<MetricPoint> points = {Point("a", "duration_s", 100),
                                           Point("b", "duration_s", 104)};
  auto e = FindRelativeEffects(records, points, {});
  ASSERT_EQ(e.size(), 2u);
  // Published +2.0%, predicted -3.8%: 5.9 points, more than the 3-point floor.
  EXPECT_EQ(e[0].factor, "weights awq-int4 vs bf16");
  EXPECT_DOUBLE_EQ(e[0].Tolerance(), 0.03);
  EXPECT_FALSE(e[0].Meets());
  const std::string table = RelativeEffectsMarkdown(e);
  EXPECT_NE(table.find("| weights awq-int4 vs bf16 | a | b | duration_s | +2.0% | -3.8% | 5.9 pp | "
                       "3.0 pp | **no** |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("0 of 1 comparisons on replayed pairs meet the tolerance (weights 0 of 1); "
                       "1 more on pairs kvbill does not replay."),
            std::string::npos)
      << table;
  auto skipped = FindRelativeEffects(records, {}, {SkippedRecord{"b", "engine \"x\" unknown"}});
  EXPECT_EQ(skipped[0].why, "b: engine \"x\" unknown");
}

TEST(RelativeEffectsTest, RecordsFlaggedAmbiguousAreListedNotCompared) {
  // "b" prints BF16 weights but the page that published it was probably
  // running FP8 (weights_ambiguous): its pair with "a" may differ in two
  // factors, so it is listed without a comparison even though both replayed.
  std::vector<Measurement> records = {
      Record("a", "m/M", "bf16", 4, "--tp-size 4", 44, 220),
      Record("b", "m/M", "bf16", 4, "--tp-size 4 --ep-size 4", 33, 150),
  };
  records[1].quality_flags = {"weights_ambiguous"};
  const std::vector<MetricPoint> points = {
      Point("a", "duration_s", 40), Point("b", "duration_s", 40), Point("a", "tpot_ms_mean", 200),
      Point("b", "tpot_ms_mean", 200)};
  const std::vector<RelativeEffect> e = FindRelativeEffects(records, points, {});
  ASSERT_EQ(e.size(), 2u);
  for (const RelativeEffect& row : e) {
    EXPECT_EQ(row.factor, "expert parallel 4 vs every expert split 4 ways");
    EXPECT_FALSE(row.comparable);
    EXPECT_FALSE(row.replayed);
    EXPECT_FALSE(row.Meets());
    EXPECT_NE(row.why.find("b is flagged weights_ambiguous"), std::string::npos) << row.why;
  }
  const std::string table = RelativeEffectsMarkdown(e);
  EXPECT_NE(table.find("| +33.3% | — | — | — | not compared: b is flagged weights_ambiguous"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("0 of 0 comparisons on replayed pairs meet the tolerance; 0 more on pairs "
                       "kvbill does not replay, 2 on pairs with a record the data flags as "
                       "ambiguous."),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
