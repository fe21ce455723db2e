// Published serving measurements for `kvbill calibrate`: one measured
// configuration point each (engine, model, GPUs, workload, metrics).
//
// Two input shapes are read:
//   - JSONL in the record shape of shared/data/calibration/measurements.jsonl
//     (fields: id, engine {name, version, flags}, model, weights,
//     kv_cache_dtype, hardware {gpu, count, tp, pp, dp}, workload {dataset,
//     input_len, output_len, num_prompts, concurrency, request_rate,
//     prefix_caching}, metrics {duration_s, ttft_ms_mean, tpot_ms_mean, e2e_ms_mean,
//     total_input_tokens, total_output_tokens, successful_requests, ...},
//     quality_flags);
//   - the JSON `vllm bench serve --save-result` writes (fields read:
//     model_id, backend, num_prompts, request_rate, max_concurrency,
//     duration, completed, total_input_tokens, total_output_tokens,
//     input_lens, output_lens, mean_ttft_ms, mean_tpot_ms, mean_itl_ms,
//     mean_e2el_ms). It
//     carries no server settings: the caller supplies engine, GPU and
//     parallelism (`kvbill calibrate --scenario`).
// docs/validation.md lists the fields and what each replay assumes.
#ifndef KVBILL_CALIBRATE_MEASUREMENTS_H_
#define KVBILL_CALIBRATE_MEASUREMENTS_H_

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

// The benchmark client that measured a record, which fixes how its
// requests were sent and what its latencies time (docs/validation.md,
// "Method"; the replay follows it).
enum class BenchmarkClient {
  // vllm bench serve (and SGLang's bench_serving, which sends and times the
  // same way): Poisson arrivals at the rate or all at once, or
  // --max-concurrency clients in turn; TPOT (end - first token) / (output - 1).
  kVllmBench,
  // vllm-project/guidellm (and gpustack/benchmark-runner, a wrapper over it):
  // at most 512 requests in flight, first come first served, each timed from
  // when it is sent; TPOT (last token - sent) / output tokens.
  kGuidellm,
};

struct Measurement {
  std::string id;
  // What seeds the replay's random lengths and arrivals; empty: the id. A
  // `vllm bench serve` result's id is its path, so its seed is its content
  // (model, date, counts, totals): a renamed copy replays alike.
  std::string seed_key;
  std::string source;  // "file:line"
  std::string engine;  // "vllm", "sglang", "trtllm", ...
  std::string engine_version;
  std::string engine_flags;
  std::string model;  // Hugging Face id as published
  std::string weights;
  std::string kv_cache_dtype = "auto";
  std::string gpu_text;  // as published, e.g. "H100 SXM"
  int gpus = 1;
  int tp = 1;
  int pp = 1;
  int dp = 1;
  std::string dataset;  // "random", "sharegpt", ...
  std::optional<Tokens> input_len;
  std::optional<Tokens> output_len;
  std::optional<std::int64_t> num_prompts;
  std::optional<int> concurrency;
  double request_rate = std::numeric_limits<double>::infinity();  // inf: all at once
  std::optional<bool> prefix_caching;
  // workload.benchmark_tool naming guidellm makes the client guidellm, and
  // "--profile NAME" in that text or in workload.request_rate_basis its
  // profile ("" when neither says).
  BenchmarkClient client = BenchmarkClient::kVllmBench;
  std::string client_profile;
  std::vector<std::string> quality_flags;
  // Per-request lengths when the input gives them (vllm bench --save-result).
  std::vector<Tokens> input_lens;
  std::vector<Tokens> output_lens;
  // Metrics as published (0 / absent when not given).
  std::optional<std::int64_t> successful_requests;
  std::optional<double> duration_s;
  std::optional<double> total_input_tokens;
  std::optional<double> total_output_tokens;
  std::optional<double> ttft_ms_mean;
  std::optional<double> tpot_ms_mean;
  std::optional<double> itl_ms_mean;
  std::optional<double> e2e_ms_mean;  // mean end-to-end latency of a request
  std::optional<double> output_tok_s;
  // Detail metrics, never fitted: shown beside a replay's own
  // (`kvbill calibrate --detail`).
  std::optional<double> itl_ms_p50;
  std::optional<double> itl_ms_p99;
  std::optional<double> tpot_ms_p50;
  std::optional<double> peak_output_tok_s;
};

// Why the record's mean TPOT cannot be compared with kvbill's, or nullopt
// when it can. A mean TPOT must agree with the record's own mean end-to-end
// latency and mean TTFT: TPOT ≈ (E2E − TTFT) / (mean output − 1), or for
// guidellm, whose TPOT counts from the send, TPOT ≈ E2E / mean output. Some
// benchmark tools time gaps between streamed chunks rather than tokens, and
// their TPOT is then several times below what the end-to-end latency
// implies (and below the time to read the weights once); such a TPOT is left
// out, not fitted. Tolerance ±25%: per-request means and the mean of ratios
// differ by a few percent on variable lengths.
std::optional<std::string> TpotInconsistency(const Measurement& m);

// Reads a measurements file of either shape (detected from the content).
// Errors name the file and line (JSONL) or the field.
Result<std::vector<Measurement>> ReadMeasurements(const std::string& path);

}  // namespace kvbill

#endif  // KVBILL_CALIBRATE_MEASUREMENTS_H_
