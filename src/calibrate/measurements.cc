#include "kvbill/calibrate/measurements.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <utility>

#include "kvbill/util/file.h"
#include "kvbill/util/names.h"
#include "kvbill/util/units.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

using nlohmann::json;

// Field readers that accept null as "absent" and name the field on error.
class Fields {
 public:
  Fields(std::string where) : where_(std::move(where)) {}
  Error Fail(const std::string& field, const std::string& what) const {
    return Error(where_ + ": " + field + ": " + what);
  }
  Result<std::optional<double>> Number(const json& j, const char* key,
                                       const std::string& path) const {
    if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return std::optional<double>{};
    const json& v = j.at(key);
    if (v.is_number()) {
      const double d = v.get<double>();
      if (!std::isfinite(d)) return Fail(path + key, "not finite");
      return std::optional<double>{d};
    }
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "inf" || s == "Infinity")
        return std::optional<double>{std::numeric_limits<double>::infinity()};
    }
    return Fail(path + key, "not a number");
  }
  Result<std::string> Text(const json& j, const char* key, const std::string& path) const {
    if (!j.is_object() || !j.contains(key) || j.at(key).is_null()) return std::string();
    if (!j.at(key).is_string()) return Fail(path + key, "not a string");
    return j.at(key).get<std::string>();
  }

 private:
  std::string where_;
};

Status ReadRecord(const json& j, const Fields& f, Measurement* m) {
  if (!j.is_object()) return f.Fail("record", "not an object");
  auto id = f.Text(j, "id", "");
  if (!id) return id.error();
  if (id->empty()) return f.Fail("id", "missing");
  m->id = *id;
  const json* engine =
      j.contains("engine") && j.at("engine").is_object() ? &j.at("engine") : nullptr;
  if (engine == nullptr) return f.Fail("engine", "missing or not an object");
  for (auto [key, out] : {std::pair{"name", &m->engine}, std::pair{"version", &m->engine_version},
                          std::pair{"flags", &m->engine_flags}}) {
    auto v = f.Text(*engine, key, "engine/");
    if (!v) return v.error();
    *out = *v;
  }
  for (auto [key, out] : {std::pair{"model", &m->model}, std::pair{"weights", &m->weights},
                          std::pair{"kv_cache_dtype", &m->kv_cache_dtype}}) {
    auto v = f.Text(j, key, "");
    if (!v) return v.error();
    *out = *v;
  }
  if (m->kv_cache_dtype.empty()) m->kv_cache_dtype = "auto";
  if (!j.contains("hardware") || !j.at("hardware").is_object())
    return f.Fail("hardware", "missing or not an object");
  const json& hw = j.at("hardware");
  auto gpu = f.Text(hw, "gpu", "hardware/");
  if (!gpu) return gpu.error();
  m->gpu_text = *gpu;
  for (auto [key, out] : {std::pair{"count", &m->gpus}, std::pair{"tp", &m->tp},
                          std::pair{"pp", &m->pp}, std::pair{"dp", &m->dp}}) {
    auto v = f.Number(hw, key, "hardware/");
    if (!v) return v.error();
    if (*v) {
      if (!(**v >= 1 && **v <= 1024))
        return f.Fail(std::string("hardware/") + key, "must be in [1, 1024]");
      *out = static_cast<int>(**v);
    }
  }
  if (!j.contains("workload") || !j.at("workload").is_object())
    return f.Fail("workload", "missing or not an object");
  const json& w = j.at("workload");
  auto dataset = f.Text(w, "dataset", "workload/");
  if (!dataset) return dataset.error();
  m->dataset = *dataset;
  auto in = f.Number(w, "input_len", "workload/");
  auto out = f.Number(w, "output_len", "workload/");
  auto n = f.Number(w, "num_prompts", "workload/");
  auto c = f.Number(w, "concurrency", "workload/");
  auto rate = f.Number(w, "request_rate", "workload/");
  for (auto* v : {&in, &out, &n, &c, &rate}) {
    if (!*v) return v->error();
  }
  if (*in) m->input_len = static_cast<Tokens>(**in);
  if (*out) m->output_len = static_cast<Tokens>(**out);
  if (*n) m->num_prompts = static_cast<std::int64_t>(**n);
  if (*c) m->concurrency = static_cast<int>(**c);
  if (*rate) m->request_rate = **rate;
  if (w.contains("prefix_caching") && w.at("prefix_caching").is_boolean()) {
    m->prefix_caching = w.at("prefix_caching").get<bool>();
  }
  auto tool = f.Text(w, "benchmark_tool", "workload/");
  auto basis = f.Text(w, "request_rate_basis", "workload/");
  for (auto* v : {&tool, &basis}) {
    if (!*v) return v->error();
  }
  if (LowerAscii(*tool).find("guidellm") != std::string::npos) {
    m->client = BenchmarkClient::kGuidellm;
    for (const std::string* text : {&*tool, &*basis}) {
      std::istringstream words(*text);
      std::string word;
      while (words >> word) {
        if (word == "--profile" && words >> word) m->client_profile = word;
      }
      if (!m->client_profile.empty()) break;
    }
  }
  if (j.contains("quality_flags") && j.at("quality_flags").is_array()) {
    for (const json& q : j.at("quality_flags")) {
      if (q.is_string()) m->quality_flags.push_back(q.get<std::string>());
    }
  }
  if (!j.contains("metrics") || !j.at("metrics").is_object())
    return f.Fail("metrics", "missing or not an object");
  const json& mt = j.at("metrics");
  struct Metric {
    const char* key;
    std::optional<double>* out;
  };
  const Metric metrics[] = {{"duration_s", &m->duration_s},
                            {"total_input_tokens", &m->total_input_tokens},
                            {"total_output_tokens", &m->total_output_tokens},
                            {"ttft_ms_mean", &m->ttft_ms_mean},
                            {"tpot_ms_mean", &m->tpot_ms_mean},
                            {"itl_ms_mean", &m->itl_ms_mean},
                            {"e2e_ms_mean", &m->e2e_ms_mean},
                            {"output_tok_s", &m->output_tok_s},
                            {"itl_ms_p50", &m->itl_ms_p50},
                            {"itl_ms_p99", &m->itl_ms_p99},
                            {"tpot_ms_p50", &m->tpot_ms_p50},
                            {"peak_output_tok_s", &m->peak_output_tok_s}};
  for (const Metric& x : metrics) {
    auto v = f.Number(mt, x.key, "metrics/");
    if (!v) return v.error();
    // A time, a token count or a rate below zero is a broken record (it was
    // left out of the fit without a word).
    if (*v && !(**v >= 0)) {
      return f.Fail(std::string("metrics/") + x.key,
                    "must not be negative, got " + ShortestDecimal(**v));
    }
    *x.out = *v;
  }
  auto ok = f.Number(mt, "successful_requests", "metrics/");
  if (!ok) return ok.error();
  if (*ok) {
    const double requests = **ok;
    if (!(requests >= 0 && requests == std::floor(requests) && requests < 9e15)) {
      return f.Fail("metrics/successful_requests",
                    "must be a whole number of requests, got " + ShortestDecimal(requests));
    }
    m->successful_requests = static_cast<std::int64_t>(requests);
  }
  return OkStatus();
}

// `vllm bench serve --save-result` output.
Status ReadBenchResult(const json& j, const Fields& f, const std::string& path, Measurement* m) {
  m->id = path;
  m->source = path;
  auto model = f.Text(j, "model_id", "");
  if (!model) return model.error();
  m->model = *model;
  m->engine = "vllm";
  m->dataset = "bench";
  auto n = f.Number(j, "num_prompts", ""), rate = f.Number(j, "request_rate", "");
  auto c = f.Number(j, "max_concurrency", ""), duration = f.Number(j, "duration", "");
  auto completed = f.Number(j, "completed", ""), tin = f.Number(j, "total_input_tokens", "");
  auto tout = f.Number(j, "total_output_tokens", ""), ttft = f.Number(j, "mean_ttft_ms", "");
  auto tpot = f.Number(j, "mean_tpot_ms", ""), itl = f.Number(j, "mean_itl_ms", "");
  auto e2e = f.Number(j, "mean_e2el_ms", "");
  auto itl50 = f.Number(j, "median_itl_ms", ""), itl99 = f.Number(j, "p99_itl_ms", "");
  auto tpot50 = f.Number(j, "median_tpot_ms", "");
  for (auto* v : {&n, &rate, &c, &duration, &completed, &tin, &tout, &ttft, &tpot, &itl, &e2e,
                  &itl50, &itl99, &tpot50}) {
    if (!*v) return v->error();
  }
  // What a benchmark run can have been: a positive whole number of
  // prompts, a positive (or infinite) rate, a concurrency cap of 1 or more,
  // no more completed than sent.
  auto whole = [&](const std::optional<double>& v, const char* key) -> Status {
    if (v && !(*v >= 1 && *v <= 1e9 && std::floor(*v) == *v)) {
      return f.Fail(key, "must be a whole number >= 1, got " + ShortestDecimal(*v));
    }
    return OkStatus();
  };
  if (auto s = whole(*n, "num_prompts"); !s) return s;
  if (auto s = whole(*c, "max_concurrency"); !s) return s;
  if (*rate && !(**rate > 0)) {
    return f.Fail("request_rate", "must be positive (or \"inf\"), got " + ShortestDecimal(**rate));
  }
  if (*completed && !(**completed >= 0 && std::floor(**completed) == **completed)) {
    return f.Fail("completed", "must be a whole number >= 0, got " + ShortestDecimal(**completed));
  }
  if (*completed && *n && **completed > **n) {
    return f.Fail("completed", ShortestDecimal(**completed) + " is more than num_prompts " +
                                   ShortestDecimal(**n));
  }
  // Times and token counts below zero: a broken file.
  for (const auto& [value, key] :
       {std::pair{&duration, "duration"}, std::pair{&tin, "total_input_tokens"},
        std::pair{&tout, "total_output_tokens"}, std::pair{&ttft, "mean_ttft_ms"},
        std::pair{&tpot, "mean_tpot_ms"}, std::pair{&itl, "mean_itl_ms"},
        std::pair{&e2e, "mean_e2el_ms"}, std::pair{&itl50, "median_itl_ms"},
        std::pair{&itl99, "p99_itl_ms"}, std::pair{&tpot50, "median_tpot_ms"}}) {
    if (**value && !(***value >= 0)) {
      return f.Fail(key, "must not be negative, got " + ShortestDecimal(***value));
    }
  }
  m->itl_ms_p50 = *itl50;
  m->itl_ms_p99 = *itl99;
  m->tpot_ms_p50 = *tpot50;
  if (*n) m->num_prompts = static_cast<std::int64_t>(**n);
  if (*rate) m->request_rate = **rate;
  if (*c) m->concurrency = static_cast<int>(**c);
  m->duration_s = *duration;
  if (*completed) m->successful_requests = static_cast<std::int64_t>(**completed);
  m->total_input_tokens = *tin;
  m->total_output_tokens = *tout;
  m->ttft_ms_mean = *ttft;
  m->tpot_ms_mean = *tpot;
  m->itl_ms_mean = *itl;
  m->e2e_ms_mean = *e2e;
  for (auto [key, out] :
       {std::pair{"input_lens", &m->input_lens}, std::pair{"output_lens", &m->output_lens}}) {
    if (!j.contains(key)) continue;
    const json& a = j.at(key);
    if (!a.is_array()) return f.Fail(key, "not an array");
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_number_integer() || a[i].get<std::int64_t>() < 0) {
        return f.Fail(std::string(key) + "/" + std::to_string(i), "must be an integer >= 0");
      }
      out->push_back(a[i].get<Tokens>());
    }
  }
  if (!m->input_lens.empty() && m->input_lens.size() != m->output_lens.size()) {
    return f.Fail("output_lens", "not as long as input_lens");
  }
  // --save-detailed lists every prompt sent; when all completed, the
  // totals are their sums.
  if (!m->input_lens.empty() && m->num_prompts &&
      static_cast<std::int64_t>(m->input_lens.size()) != *m->num_prompts) {
    return f.Fail("input_lens", "has " + std::to_string(m->input_lens.size()) +
                                    " entries, num_prompts is " + std::to_string(*m->num_prompts));
  }
  if (!m->input_lens.empty() && m->num_prompts && m->successful_requests &&
      *m->successful_requests == *m->num_prompts) {
    for (auto [key, lens, total] :
         {std::tuple{"total_input_tokens", &m->input_lens, m->total_input_tokens},
          std::tuple{"total_output_tokens", &m->output_lens, m->total_output_tokens}}) {
      double sum = 0;
      for (Tokens t : *lens) sum += static_cast<double>(t);
      if (total && *total != sum) {
        return f.Fail(key, ShortestDecimal(*total) + " is not the sum of the lengths listed, " +
                               ShortestDecimal(sum) + " (every prompt completed)");
      }
    }
  }
  // The seed: the run's content, not the file's name.
  std::ostringstream key;
  key << "bench|" << m->model << "|";
  if (j.contains("date") && j.at("date").is_string()) key << j.at("date").get<std::string>();
  key << "|" << m->num_prompts.value_or(0) << "|" << m->request_rate << "|"
      << m->concurrency.value_or(0) << "|" << m->total_input_tokens.value_or(0) << "|"
      << m->total_output_tokens.value_or(0) << "|" << m->duration_s.value_or(0);
  m->seed_key = key.str();
  return OkStatus();
}

}  // namespace

Result<std::vector<Measurement>> ReadMeasurements(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return text.error();
  std::vector<Measurement> out;
  // A bench result is one JSON object with "duration" or "model_id" at the
  // top level (a record has "metrics" and "model"). Not one document:
  // JSONL, read line by line below.
  json_input::Problem problem;
  if (const auto whole = json_input::Parse(*text, &problem);
      whole && whole->is_object() && (whole->contains("duration") || whole->contains("model_id")) &&
      !whole->contains("metrics")) {
    Measurement m;
    if (auto s = ReadBenchResult(*whole, Fields(path), path, &m); !s) return s.error();
    out.push_back(std::move(m));
    return out;
  }
  std::istringstream in(*text);
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    auto parsed = json_input::Parse(line, &problem);
    if (!parsed) {
      return Error(where + ": not valid JSON: " +
                   (problem.kind == json_input::Problem::Kind::kDuplicateKey
                        ? "repeated key at #" + problem.pointer
                        : "column " + std::to_string(problem.byte + 1) + ": " + problem.reason));
    }
    const json j = std::move(*parsed);
    Measurement m;
    if (auto s = ReadRecord(j, Fields(where), &m); !s) return s.error();
    m.source = where;
    // An id names one record (--detail, the fit's exclusions, the pages).
    for (const Measurement& earlier : out) {
      if (earlier.id == m.id) {
        return Error(where + ": id \"" + m.id + "\" is the id of " + earlier.source +
                     " too: each record needs its own");
      }
    }
    out.push_back(std::move(m));
  }
  if (out.empty()) return Error(path + ": no measurements");
  return out;
}

std::optional<std::string> TpotInconsistency(const Measurement& m) {
  if (!m.tpot_ms_mean || !m.e2e_ms_mean || !m.ttft_ms_mean || !m.total_output_tokens) {
    return std::nullopt;  // nothing to check against
  }
  const double requests =
      static_cast<double>(m.successful_requests.value_or(m.num_prompts.value_or(0)));
  if (!(requests > 0)) return std::nullopt;
  const double mean_output = *m.total_output_tokens / requests;
  if (!(mean_output > 1.5)) return std::nullopt;
  // guidellm's TPOT is (last token - sent) / output tokens
  // (schemas/request_stats.py, time_per_output_token_ms, v0.5.3).
  const bool guidellm = m.client == BenchmarkClient::kGuidellm;
  const double implied = guidellm ? *m.e2e_ms_mean / mean_output
                                  : (*m.e2e_ms_mean - *m.ttft_ms_mean) / (mean_output - 1);
  if (!(implied > 0)) return std::nullopt;
  const double ratio = *m.tpot_ms_mean / implied;
  if (ratio >= 0.75 && ratio <= 1.25) return std::nullopt;
  char buf[256];
  if (guidellm) {
    std::snprintf(buf, sizeof buf,
                  "mean TPOT %.2f ms disagrees with its own end-to-end latency: guidellm's TPOT "
                  "counts from the send, E2E %.0f ms / %.0f output tokens = %.2f ms per token "
                  "(%.2fx)",
                  *m.tpot_ms_mean, *m.e2e_ms_mean, mean_output, implied, ratio);
    return std::string(buf);
  }
  std::snprintf(buf, sizeof buf,
                "mean TPOT %.2f ms disagrees with its own end-to-end latency: (E2E %.0f ms - "
                "TTFT %.0f ms) / (%.0f - 1 output tokens) = %.2f ms per token (%.2fx)",
                *m.tpot_ms_mean, *m.e2e_ms_mean, *m.ttft_ms_mean, mean_output, implied, ratio);
  return std::string(buf);
}

}  // namespace kvbill
