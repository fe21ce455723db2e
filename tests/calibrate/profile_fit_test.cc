#include "kvbill/calibrate/profile_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/calibrate/measurements.h"
#include "kvbill/calibrate/replay.h"
#include "kvbill/cost/engine_profile.h"

namespace kvbill::testing {
namespace KVBILL_TEST_FILE_ID {
namespace {

MetricPoint Point(const std::string& record, const std::string& metric, double measured,
                  double predicted) {
  MetricPoint p;
  p.record = record;
  p.metric = metric;
  p.measured = measured;
  p.predicted = predicted;
  return p;
}

MetricPoint In(const std::string& gpu, bool moe, bool several, const std::string& metric,
               double ratio) {
  MetricPoint p = Point(gpu + "/r", metric, 100, 100 * ratio);
  p.gpu = gpu;
  p.moe = moe;
  p.several_gpus = several;
  return p;
}

// The regimes by hand. In sample: H100 dense on one GPU at ratios 1.1, 0.8,
// 1.05, errors 0.10, 0.20, 0.05, median 0.10 (its median-ITL point at 3x is
// not counted); H100 MoE on several at 1.5: 0.5. Leaving the model out:
// H100 dense one at 1.3, 0.9, 1.2: errors 0.3, 0.1, 0.2, median 0.2; A100
// dense one at 0.7: 0.3, a regime with no in-sample point. An H200 regime
// with only a median ITL is no regime. Ordered by GPU, dense first.
TEST(ProfileFitTest, RegimeStatsByGpuModelKindAndGpuCountWorkedByHand) {
  const std::vector<MetricPoint> in_sample = {
      In("h100-sxm", false, false, "duration_s", 1.1),
      In("h100-sxm", true, true, "duration_s", 1.5),
      In("h100-sxm", false, false, "ttft_ms_mean", 0.8),
      In("h100-sxm", false, false, kItlMetric, 3.0),
      In("h100-sxm", false, false, "tpot_ms_mean", 1.05),
      In("h200", true, true, kItlMetric, 2.0),
  };
  const std::vector<MetricPoint> lomo = {
      In("h100-sxm", false, false, "duration_s", 1.3),
      In("a100-80gb", false, false, "duration_s", 0.7),
      In("h100-sxm", false, false, "ttft_ms_mean", 0.9),
      In("h100-sxm", false, false, "tpot_ms_mean", 1.2),
  };
  const std::vector<ValidationRegime> r = RegimeStats(in_sample, lomo);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].gpu, "a100-80gb");
  EXPECT_FALSE(r[0].moe);
  EXPECT_EQ(r[0].points, 0);
  EXPECT_EQ(r[0].lomo_points, 1);
  EXPECT_NEAR(r[0].lomo_median_error, 0.3, 1e-12);
  EXPECT_EQ(r[1].gpu, "h100-sxm");
  EXPECT_FALSE(r[1].moe);
  EXPECT_FALSE(r[1].several_gpus);
  EXPECT_EQ(r[1].points, 3);
  EXPECT_NEAR(r[1].median_error, 0.1, 1e-12);
  EXPECT_EQ(r[1].lomo_points, 3);
  EXPECT_NEAR(r[1].lomo_median_error, 0.2, 1e-12);
  EXPECT_EQ(r[2].gpu, "h100-sxm");
  EXPECT_TRUE(r[2].moe);
  EXPECT_TRUE(r[2].several_gpus);
  EXPECT_EQ(r[2].points, 1);
  EXPECT_NEAR(r[2].median_error, 0.5, 1e-12);
  EXPECT_EQ(r[2].lomo_points, 0);
}

// Two records, two metrics each; "x" is excluded from the fit (its timings
// ignored). Residuals by hand, scale s = 0.25, e = ln(predicted / measured) / s,
// residual s * sign(e) * sqrt(ln(1 + e^2)):
//   a duration 100 -> 100: e = 0, residual 0;
//   a ttft 10 -> 20: e = ln 2 / 0.25 = 2.7726, ln(1 + 7.6872) = 2.1618,
//     sqrt = 1.4703, residual 0.36758;
//   x duration and ttft, replayed: 0 whatever their ratio (0.1x and 10x here).
TEST(ProfileFitTest, ExcludedRecordsCountNothingWhenTheyReplay) {
  const std::vector<MetricPoint> layout = {
      Point("a", "duration_s", 100, 100), Point("a", "ttft_ms_mean", 10, 10),
      Point("x", "duration_s", 100, 100), Point("x", "ttft_ms_mean", 10, 10)};
  const std::vector<MetricPoint> points = {
      Point("a", "duration_s", 100, 100), Point("a", "ttft_ms_mean", 10, 20),
      Point("x", "duration_s", 100, 10), Point("x", "ttft_ms_mean", 10, 100)};
  Eigen::VectorXd r;
  FitResiduals(layout, points, {"x"}, &r);
  ASSERT_EQ(r.size(), 4);
  EXPECT_DOUBLE_EQ(r(0), 0);
  EXPECT_NEAR(r(1), 0.36758, 1e-4);
  EXPECT_DOUBLE_EQ(r(2), 0);
  EXPECT_DOUBLE_EQ(r(3), 0);
}

// An excluded record that does not replay under a candidate profile (no
// points for it: it does not fit in memory, say) counts as a large miss, 1.0
// per metric, as any record's failure does: it ran, so the profile is wrong.
TEST(ProfileFitTest, AnExcludedRecordThatCannotReplayIsAMiss) {
  const std::vector<MetricPoint> layout = {
      Point("a", "duration_s", 100, 100), Point("x", "duration_s", 100, 100),
      Point("x", "ttft_ms_mean", 10, 10), Point("z", "duration_s", 50, 50)};
  // x and z missing; a predicted 0.5x: e = ln 0.5 / 0.25 = -2.7726, residual -0.36758.
  const std::vector<MetricPoint> points = {Point("a", "duration_s", 100, 50)};
  Eigen::VectorXd r;
  FitResiduals(layout, points, {"x"}, &r);
  ASSERT_EQ(r.size(), 4);
  EXPECT_NEAR(r(0), -0.36758, 1e-4);
  EXPECT_DOUBLE_EQ(r(1), 1.0);
  EXPECT_DOUBLE_EQ(r(2), 1.0);
  EXPECT_DOUBLE_EQ(r(3), 1.0);
}

// The vLLM records of the test data (tests/data/calibration: the sample's
// Qwen3-8B runs and a Qwen3.5-9B run), each planned for replay; `records`
// holds what the plans point at.
void VllmTestRecords(std::vector<Measurement>* records, std::vector<ReplayPlan>* plans) {
  for (const char* f : {"sample.jsonl", "qwen3.5-9b.jsonl"}) {
    auto read = ReadMeasurements(std::string(KVBILL_SOURCE_DIR) + "/tests/data/calibration/" + f);
    ASSERT_TRUE(read.ok()) << read.error().message();
    for (Measurement& m : *read) {
      if (m.engine == "vllm") records->push_back(std::move(m));
    }
  }
  for (const Measurement& m : *records) {
    std::string why;
    auto plan = PlanReplay(m, ReplayDefaults{}, &why);
    ASSERT_TRUE(plan.has_value()) << m.id << ": " << why;
    plans->push_back(std::move(*plan));
  }
}

// Leaving out the only model with recurrent-state layers (Qwen3.5-9B beside
// the sample's Qwen3-8B runs) starts its refit with recurrent_state_factor
// at 1, whatever the starting profile says: no other record identifies it,
// so the left-out rows must not carry the value fitted on them. Two starts
// that differ only in the factor give the same left-out predictions for
// Qwen3.5-9B, and different in-sample ones.
TEST(ProfileFitTest, LeavingOutTheOnlyRecurrentModelResetsItsFactor) {
  std::vector<Measurement> records;
  std::vector<ReplayPlan> plans;
  ASSERT_NO_FATAL_FAILURE(VllmTestRecords(&records, &plans));
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  FitOptions options;
  options.keep_start = true;  // the left-out refits only
  options.grid_rounds = 0;
  options.max_evaluations = 2;
  EngineProfile one = *profile, five = *profile;
  one.params.recurrent_state_factor = 1;
  five.params.recurrent_state_factor = 5;
  const FitOutcome a = FitProfile(plans, one, options);
  const FitOutcome b = FitProfile(plans, five, options);
  const std::string hybrid = "gpustack/qwen3.5-9b/h100/vllm/b16-in1024-out128-n1000-rps1000";
  auto of = [&](const std::vector<MetricPoint>& points) {
    std::vector<double> out;
    for (const MetricPoint& p : points) {
      if (p.record == hybrid) out.push_back(p.predicted);
    }
    return out;
  };
  ASSERT_FALSE(of(a.lomo).empty());
  EXPECT_EQ(of(a.lomo), of(b.lomo));
  EXPECT_NE(of(a.after), of(b.after));
  EXPECT_TRUE(a.lomo_skipped.empty());
}

Measurement RateRecord(const std::string& id, std::optional<double> peak,
                       std::optional<double> mean, std::vector<std::string> flags = {}) {
  Measurement m;
  m.id = id;
  m.peak_output_tok_s = peak;
  m.output_tok_s = mean;
  m.quality_flags = std::move(flags);
  return m;
}

// The ceiling by hand: a's peak 20,000 tokens/s; b has no peak, its mean
// 25,000 counts; c's peak (40,000) is flagged implausible, so its mean
// (10,000) counts; d (35,000) is a partial success and e (30,000) speculates:
// neither counts; f's guidellm "peak" of 90,000 is not a rate of the run, its
// mean 5,000 counts. The fastest is b: 25,000 tokens/s, 1 / 25,000 = 40 us.
TEST(ProfileFitTest, PerSequenceCeilingIsTheFastestRunsRateWorkedByHand) {
  const std::vector<Measurement> runs = {
      RateRecord("a", 20000, 5000),
      RateRecord("b", std::nullopt, 25000),
      RateRecord("c", 40000, 10000, {"peak_output_tok_s_implausible"}),
      RateRecord("d", 35000, 9000, {"partial_success"}),
      RateRecord("e", 30000, 8000),
      RateRecord("f", 90000, 5000)};
  std::vector<ReplayPlan> plans(runs.size());
  std::vector<const ReplayPlan*> pointers;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    plans[i].measurement = &runs[i];
    pointers.push_back(&plans[i]);
  }
  plans[4].speculative = SpeculativeSpec{};
  plans[5].client = BenchmarkClient::kGuidellm;
  const auto ceiling = PerSequenceCeiling(pointers);
  ASSERT_TRUE(ceiling.has_value());
  EXPECT_EQ(ceiling->record, "b");
  EXPECT_DOUBLE_EQ(ceiling->tokens_per_s, 25000);
  EXPECT_NEAR(ceiling->seconds, 40e-6, 1e-15);
  // Without b, a's peak: 1 / 20,000 = 50 us.
  pointers.erase(pointers.begin() + 1);
  EXPECT_NEAR(PerSequenceCeiling(pointers)->seconds, 50e-6, 1e-15);
  EXPECT_FALSE(PerSequenceCeiling({}).has_value());
}

// The fit keeps both per-sequence costs under the ceiling of its records,
// wherever it starts. The vLLM records of the test data: two vllm bench
// runs peaking at 540 and 140 tokens/s, and a guidellm run whose mean is
// 3,285.25 tokens/s (its peak is flagged implausible): 1 / 3,285.25 =
// 304.4 us, under output_per_sequence_s's range end (500 us), over
// cpu_per_sequence_s's (100 us), which stays.
TEST(ProfileFitTest, TheFitKeepsPerSequenceCostsUnderTheFastestRun) {
  std::vector<Measurement> records;
  std::vector<ReplayPlan> plans;
  ASSERT_NO_FATAL_FAILURE(VllmTestRecords(&records, &plans));
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  EngineProfile start = *profile;
  start.params.output_per_sequence_s = 4.5e-4;  // over the ceiling
  start.params.cpu_per_sequence_s = 9e-5;
  FitOptions options;
  options.leave_one_model_out = false;
  options.grid_rounds = 0;
  options.max_evaluations = 2;
  const FitOutcome fit = FitProfile(plans, start, options);
  ASSERT_TRUE(fit.ceiling.has_value());
  EXPECT_EQ(fit.ceiling->record, "gpustack/qwen3.5-9b/h100/vllm/b16-in1024-out128-n1000-rps1000");
  EXPECT_NEAR(fit.ceiling->seconds, 1 / 3285.25, 1e-12);
  EXPECT_LE(fit.profile.params.output_per_sequence_s, 1 / 3285.25);
  EXPECT_GT(fit.profile.params.output_per_sequence_s, 0.9 / 3285.25);  // started at its end
  EXPECT_LE(fit.profile.params.cpu_per_sequence_s, 1e-4);
  EXPECT_GT(fit.profile.params.cpu_per_sequence_s, 8e-5);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill::testing
