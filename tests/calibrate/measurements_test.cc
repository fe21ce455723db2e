#include "kvbill/calibrate/measurements.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

constexpr char kRecord[] =
    R"({"id": "r1", "engine": {"name": "vllm", "version": "v0.11.0", "flags": "-tp 2"},)"
    R"( "model": "Qwen/Qwen3-32B", "weights": "bf16", "kv_cache_dtype": "auto",)"
    R"( "hardware": {"gpu": "H100 SXM", "count": 2, "tp": 2, "pp": 1, "dp": 1},)"
    R"( "workload": {"dataset": "random", "input_len": 4000, "output_len": 200, "num_prompts": null,)"
    R"( "concurrency": null, "request_rate": "inf"},)"
    R"( "metrics": {"successful_requests": 500, "duration_s": 976.29, "ttft_ms_mean": 482284.21,)"
    R"( "tpot_ms_mean": 66.61, "total_input_tokens": 1997942, "total_output_tokens": 99790}})";

TEST(MeasurementsTest, ReadsARecordOfThePublishedShape) {
  auto r = ReadMeasurements(Write("kvbill_meas_ok.jsonl", std::string(kRecord) + "\n"));
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 1u);
  const Measurement& m = r->front();
  EXPECT_EQ(m.id, "r1");
  EXPECT_EQ(m.engine, "vllm");
  EXPECT_EQ(m.engine_version, "v0.11.0");
  EXPECT_EQ(m.tp, 2);
  EXPECT_EQ(m.dataset, "random");
  EXPECT_EQ(m.input_len, 4000);
  EXPECT_FALSE(m.num_prompts.has_value());
  EXPECT_TRUE(std::isinf(m.request_rate));
  EXPECT_EQ(m.successful_requests, 500);
  EXPECT_DOUBLE_EQ(*m.tpot_ms_mean, 66.61);
  EXPECT_EQ(m.source.substr(m.source.size() - 2), ":1");
}

TEST(MeasurementsTest, ReadsVllmBenchSaveResult) {
  auto r = ReadMeasurements(Write("kvbill_meas_bench.json", R"({"backend": "vllm",
      "model_id": "Qwen/Qwen3-8B", "num_prompts": 2, "request_rate": "inf",
      "max_concurrency": null, "duration": 3.5, "completed": 2, "total_input_tokens": 300,
      "total_output_tokens": 40, "mean_ttft_ms": 120.5, "mean_tpot_ms": 12.25,
      "mean_itl_ms": 12.0, "input_lens": [100, 200], "output_lens": [10, 30]})"));
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Measurement& m = r->front();
  EXPECT_EQ(m.model, "Qwen/Qwen3-8B");
  EXPECT_EQ(m.dataset, "bench");
  EXPECT_EQ(m.input_lens, (std::vector<Tokens>{100, 200}));
  EXPECT_EQ(m.output_lens, (std::vector<Tokens>{10, 30}));
  EXPECT_DOUBLE_EQ(*m.duration_s, 3.5);
  EXPECT_DOUBLE_EQ(*m.ttft_ms_mean, 120.5);
}

// What a benchmark run cannot have been is refused, naming the field; a
// renamed copy of a result seeds its replay alike (its content, not its
// path).
TEST(MeasurementsTest, ABenchResultsValuesMustBeARunsAndItsSeedItsContent) {
  const std::string good = R"({"backend": "vllm", "model_id": "Qwen/Qwen3-8B",
      "date": "20261205-120000", "num_prompts": 2, "request_rate": 4,
      "max_concurrency": null, "duration": 3.5, "completed": 2, "total_input_tokens": 300,
      "total_output_tokens": 40, "mean_ttft_ms": 120.5, "mean_tpot_ms": 12.25,
      "mean_itl_ms": 12.0, "input_lens": [100, 200], "output_lens": [10, 30]})";
  auto a = ReadMeasurements(Write("kvbill_meas_seed_a.json", good));
  auto b = ReadMeasurements(Write("kvbill_meas_seed_b.json", good));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->front().id, b->front().id);
  EXPECT_FALSE(a->front().seed_key.empty());
  EXPECT_EQ(a->front().seed_key, b->front().seed_key);
  const std::string path =
      (std::filesystem::temp_directory_path() / "kvbill_meas_bad_bench.json").string();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    auto r = ReadMeasurements(Write("kvbill_meas_bad_bench.json", text));
    return r.ok() ? std::string("(read)") : r.error().message();
  };
  EXPECT_EQ(with("\"request_rate\": 4", "\"request_rate\": -1"),
            path + ": request_rate: must be positive (or \"inf\"), got -1");
  EXPECT_EQ(with("\"max_concurrency\": null", "\"max_concurrency\": 0"),
            path + ": max_concurrency: must be a whole number >= 1, got 0");
  EXPECT_EQ(with("\"completed\": 2", "\"completed\": 5"),
            path + ": completed: 5 is more than num_prompts 2");
  EXPECT_EQ(with("\"num_prompts\": 2", "\"num_prompts\": 3"),
            path + ": input_lens: has 2 entries, num_prompts is 3");
  // Every prompt completed: the totals are the listed lengths' sums
  // (100 + 200 = 300, 10 + 30 = 40).
  EXPECT_EQ(with("\"total_input_tokens\": 300", "\"total_input_tokens\": 999"),
            path +
                ": total_input_tokens: 999 is not the sum of the lengths listed, 300 (every "
                "prompt completed)");
  EXPECT_EQ(with("\"request_rate\": 4", "\"request_rate\": \"inf\""), "(read)");
  EXPECT_EQ(with("\"mean_ttft_ms\": 120.5", "\"mean_ttft_ms\": -120.5"),
            path + ": mean_ttft_ms: must not be negative, got -120.5");
}

// A record's metric below zero, or a fractional count of requests, is an
// error naming the line and field: the fit left such a metric out without
// a word.
TEST(MeasurementsTest, ANegativeMetricIsAnErrorNotLeftOut) {
  for (const auto& [from, to, said] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"\"ttft_ms_mean\": 482284.21", "\"ttft_ms_mean\": -64",
            "metrics/ttft_ms_mean: must not be negative, got -64"},
           {"\"duration_s\": 976.29", "\"duration_s\": -44.4",
            "metrics/duration_s: must not be negative, got -44.4"},
           {"\"successful_requests\": 500", "\"successful_requests\": 1.5",
            "metrics/successful_requests: must be a whole number of requests, got 1.5"}}) {
    std::string bad = kRecord;
    bad.replace(bad.find(from), from.size(), to);
    auto r = ReadMeasurements(Write("kvbill_meas_negative.jsonl", bad + "\n"));
    ASSERT_FALSE(r.ok()) << to;
    EXPECT_NE(r.error().message().find("kvbill_meas_negative.jsonl:1: " + said), std::string::npos)
        << r.error().message();
  }
}

// --detail, the fit's exclusions and the pages name records by id: two
// records of one id are an error naming both lines.
TEST(MeasurementsTest, ARepeatedIdIsAnError) {
  const std::string path =
      Write("kvbill_meas_dup.jsonl", std::string(kRecord) + "\n" + kRecord + "\n");
  auto r = ReadMeasurements(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find(path + ":2: id \""), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("\" is the id of " + path + ":1 too"), std::string::npos)
      << r.error().message();
}

TEST(MeasurementsTest, ReadsTheDetailMetricsOfBothShapes) {
  // Shown beside a replay's own by `calibrate --detail`; absent ones stay absent.
  std::string record = kRecord;
  record.replace(record.find("\"tpot_ms_mean\""), 0,
                 "\"itl_ms_p50\": 43.3, \"itl_ms_p99\": 46.54, \"peak_output_tok_s\": 24.0, ");
  auto r = ReadMeasurements(Write("kvbill_meas_detail.jsonl", record + "\n"));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_DOUBLE_EQ(*r->front().itl_ms_p50, 43.3);
  EXPECT_DOUBLE_EQ(*r->front().itl_ms_p99, 46.54);
  EXPECT_DOUBLE_EQ(*r->front().peak_output_tok_s, 24.0);
  EXPECT_FALSE(r->front().tpot_ms_p50.has_value());
  auto b = ReadMeasurements(Write("kvbill_meas_detail_bench.json", R"({"backend": "vllm",
      "model_id": "Qwen/Qwen3-8B", "num_prompts": 2, "request_rate": "inf",
      "max_concurrency": null, "duration": 3.5, "completed": 2, "total_input_tokens": 300,
      "total_output_tokens": 40, "mean_ttft_ms": 120.5, "mean_tpot_ms": 12.25,
      "mean_itl_ms": 12.0, "median_itl_ms": 11.5, "p99_itl_ms": 30.25,
      "median_tpot_ms": 12.0})"));
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_DOUBLE_EQ(*b->front().itl_ms_p50, 11.5);
  EXPECT_DOUBLE_EQ(*b->front().itl_ms_p99, 30.25);
  EXPECT_DOUBLE_EQ(*b->front().tpot_ms_p50, 12.0);
}

TEST(MeasurementsTest, ErrorsNameTheLineAndField) {
  std::string bad = kRecord;
  bad.replace(bad.find("\"tp\": 2"), 7, "\"tp\": \"x\"");
  auto r =
      ReadMeasurements(Write("kvbill_meas_bad.jsonl", std::string(kRecord) + "\n" + bad + "\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("kvbill_meas_bad.jsonl:2: hardware/tp: not a number"),
            std::string::npos)
      << r.error().message();
  auto lens = ReadMeasurements(Write("kvbill_meas_lens.json", R"({"model_id": "m", "duration": 1,
      "input_lens": [1, 2], "output_lens": [1]})"));
  ASSERT_FALSE(lens.ok());
  EXPECT_NE(lens.error().message().find("output_lens: not as long as input_lens"),
            std::string::npos);
  // A bench result without "duration" is still read as one (by its
  // "model_id"), its field errors named, not taken for a JSONL record.
  auto no_duration = ReadMeasurements(Write("kvbill_meas_nodur.json", R"({"model_id": "m",
      "input_lens": [1, -2], "output_lens": [1, 1]})"));
  ASSERT_FALSE(no_duration.ok());
  EXPECT_NE(no_duration.error().message().find("input_lens/1: must be an integer >= 0"),
            std::string::npos)
      << no_duration.error().message();
}

TEST(MeasurementsTest, ATpotContradictingItsOwnEndToEndLatencyIsNamed) {
  // gpustack/qwen3.5-9b/h100/vllm/b18: 100 requests of 32,000 + 100 tokens,
  // mean E2E 7,880 ms, mean TTFT 1,021.12 ms, published mean TPOT 10.21 ms.
  // Implied: (7,880 − 1,021.12) / (100 − 1) = 69.28 ms per token; 10.21 is
  // 0.15 of it.
  Measurement m;
  m.successful_requests = 100;
  m.total_output_tokens = 10000;
  m.e2e_ms_mean = 7880;
  m.ttft_ms_mean = 1021.12;
  m.tpot_ms_mean = 10.21;
  const auto why = TpotInconsistency(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("69.28 ms per token"), std::string::npos) << *why;
  EXPECT_NE(why->find("0.15x"), std::string::npos) << *why;
  // 60 ms (0.87 of 69.28) is within 25%; 50 ms (0.72) is not.
  m.tpot_ms_mean = 60;
  EXPECT_FALSE(TpotInconsistency(m).has_value());
  m.tpot_ms_mean = 50;
  EXPECT_TRUE(TpotInconsistency(m).has_value());
  // gpustack/qwen3-8b/h100-latency/vllm/b01 (vllm bench serve): E2E 1,680,
  // TTFT 64, 22,061 outputs over 100 requests, TPOT 7.38: implied
  // (1,680 − 64) / 219.61 = 7.36, consistent.
  Measurement q;
  q.successful_requests = 100;
  q.total_output_tokens = 22061;
  q.e2e_ms_mean = 1680;
  q.ttft_ms_mean = 64;
  q.tpot_ms_mean = 7.38;
  EXPECT_FALSE(TpotInconsistency(q).has_value());
  // Nothing to check against without an end-to-end latency.
  m.e2e_ms_mean.reset();
  EXPECT_FALSE(TpotInconsistency(m).has_value());
}

TEST(MeasurementsTest, ReadsTheBenchmarkClientAndItsProfile) {
  // gpustack/qwen3.5-9b/h100/vllm/b18's workload fields (abridged): the tool
  // names guidellm, the rate basis its --profile.
  const std::string guidellm =
      R"({"id": "g", "engine": {"name": "vllm", "version": "v0.17.1"}, "model": "m",)"
      R"( "hardware": {"gpu": "H100"}, "workload": {"dataset": "random", "request_rate": 1,)"
      R"j( "benchmark_tool": "GPUStack benchmark (gpustack/benchmark-runner wrapper over)j"
      R"j( vllm-project/guidellm)", "request_rate_basis": "profile \"Long Context\" (page)j"
      R"j( lines 83-88): guidellm --profile constant --rate 1"}, "metrics": {}})j";
  const std::string bench =
      R"({"id": "b", "engine": {"name": "vllm"}, "model": "m", "hardware": {"gpu": "H100"},)"
      R"( "workload": {"dataset": "random", "benchmark_tool": "vllm bench serve"},)"
      R"( "metrics": {}})";
  const std::string unstated =
      R"({"id": "u", "engine": {"name": "vllm"}, "model": "m", "hardware": {"gpu": "H100"},)"
      R"( "workload": {"dataset": "random", "benchmark_tool": "guidellm"}, "metrics": {}})";
  const auto dir = std::filesystem::temp_directory_path() / "kvbill_meas_client_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.jsonl").string();
  std::ofstream(path) << guidellm << "\n" << bench << "\n" << unstated << "\n";
  auto r = ReadMeasurements(path);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].client, BenchmarkClient::kGuidellm);
  EXPECT_EQ((*r)[0].client_profile, "constant");
  EXPECT_EQ((*r)[1].client, BenchmarkClient::kVllmBench);
  EXPECT_EQ((*r)[1].client_profile, "");
  EXPECT_EQ((*r)[2].client, BenchmarkClient::kGuidellm);
  EXPECT_EQ((*r)[2].client_profile, "");  // PlanReplay says why it cannot replay it
}

TEST(MeasurementsTest, AGuidellmTpotIsCheckedAgainstEndToEndOverOutputTokens) {
  // guidellm's TPOT counts from the send: TPOT = (last token − sent) /
  // output tokens, i.e. about E2E / mean output.
  // gpustack/qwen3.5-9b/h100-latency/sglang/b02: 1,000 requests, 281,412
  // output tokens (281.41 each), E2E 8,130 ms, TPOT 28.88 ms: 8,130 / 281.41
  // = 28.89 ms, consistent (1.00x). vllm bench's rule would imply
  // (8,130 − 98.72) / 280.41 = 28.64: also within 25%, so the vLLM record
  // decides: gpustack/qwen3.5-9b/h100/vllm/b01, E2E 24,110 ms, TPOT 15.12 ms:
  // 24,110 / 281.412 = 85.675 ms, 0.18x: left out.
  Measurement m;
  m.client = BenchmarkClient::kGuidellm;
  m.successful_requests = 1000;
  m.total_output_tokens = 281412;
  m.e2e_ms_mean = 8130;
  m.ttft_ms_mean = 98.72;
  m.tpot_ms_mean = 28.88;
  EXPECT_FALSE(TpotInconsistency(m).has_value());
  m.e2e_ms_mean = 24110;
  m.ttft_ms_mean = 1604.23;
  m.tpot_ms_mean = 15.12;
  const auto why = TpotInconsistency(m);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("85.68 ms per token"), std::string::npos) << *why;
  EXPECT_NE(why->find("0.18x"), std::string::npos) << *why;
  // A TPOT that includes the TTFT is what guidellm reports: with E2E 2,000,
  // TTFT 1,000 and 101 output tokens, 19.80 (= 2,000 / 101) is consistent
  // for guidellm, while vllm bench's rule would want (2,000 − 1,000) / 100
  // = 10, and 19.80 is 1.98x that.
  Measurement g;
  g.client = BenchmarkClient::kGuidellm;
  g.successful_requests = 1;
  g.total_output_tokens = 101;
  g.e2e_ms_mean = 2000;
  g.ttft_ms_mean = 1000;
  g.tpot_ms_mean = 19.80;
  EXPECT_FALSE(TpotInconsistency(g).has_value());
  g.client = BenchmarkClient::kVllmBench;
  EXPECT_TRUE(TpotInconsistency(g).has_value());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
