#include "kvbill/cost/kernel_curves.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <utility>

#include "kvbill/util/embedded.h"
#include "util/json_input.h"

namespace kvbill {

double GemmCurve::Seconds(const KernelSpec& spec, double m, double n, double k) const {
  const double peak = fp8_rate ? spec.fp8_flops_per_s : spec.bf16_flops_per_s;
  const double bytes = n * k * weight_bytes + m * k * activation_bytes + m * n * 2.0;
  const double tm = bytes / (spec.hbm_bytes_per_s * mem_eff);
  const double tc = 2.0 * m * n * k / (peak * compute_eff * compute_rate);
  // (tm^q + tc^q)^(1/q), scaled by the larger term so that neither power
  // overflows nor underflows. The larger term's ratio is exactly 1 and so
  // is its power: only the smaller one's is computed.
  const double big = std::max(tm, tc);
  double t = t0_s;
  if (big > 0) {
    const double small = std::min(tm, tc);
    t += big * std::pow(1.0 + std::pow(small / big, smoothness), 1.0 / smoothness);
  }
  if (quant_eff > 0) t += 3.0 * m * k / (spec.hbm_bytes_per_s * quant_eff);
  if (dequant_bytes > 0) t += n * k * dequant_bytes / (spec.hbm_bytes_per_s * mem_eff);
  return t;
}

std::array<double, 4> DecodeAttentionFeatures(const KernelSpec& spec, double batch, double heads,
                                              double head_dim, double kv_bytes) {
  return {1.0, batch, batch * heads * head_dim, kv_bytes / spec.hbm_bytes_per_s};
}

std::array<double, 4> PrefillAttentionFeatures(const KernelSpec& spec, double query_elements,
                                               double flops, double kv_written_bytes) {
  return {1.0, query_elements / 1e6, flops / spec.bf16_flops_per_s,
          kv_written_bytes / spec.hbm_bytes_per_s};
}

std::array<double, 5> MoeFeatures(const KernelSpec& spec, const MoeLoad& load, bool fp8_rate) {
  const double peak = fp8_rate ? spec.fp8_flops_per_s : spec.bf16_flops_per_s;
  const double bw = spec.hbm_bytes_per_s;
  // Row traffic, elements of 2 bytes. A row of one of this GPU's experts:
  // its token's input read (hidden), the gate and up output written (2
  // inter) and read by the activation, which writes inter, read by the down
  // GEMM, which writes hidden, read by the top-k sum: 3 hidden + 6 inter. A
  // masked row: the gate and up output written as zeros and the activation
  // over it (5 inter), the output zeroed and read by the sum (2 hidden).
  // `inter` is the expert's width on this GPU (split under tensor
  // parallelism, whole under expert parallelism).
  const double h = load.hidden;
  const double inter = h > 0 ? load.expert_flops_per_pair / (6 * h) : 0;
  const double own_row = 2 * (3 * h + 6 * inter), masked_row = 2 * (2 * h + 5 * inter);
  return {1.0, load.touched_experts * load.expert_bytes / bw,
          load.pairs * load.expert_flops_per_pair / peak,
          load.padded_pairs * load.expert_flops_per_pair / peak,
          (load.pairs * own_row + load.masked_pairs * masked_row) / bw};
}

std::vector<double> RoutingProbabilities(int experts, int top_k, double alpha) {
  std::vector<double> p(static_cast<std::size_t>(std::max(0, experts)));
  if (experts <= 0 || top_k <= 0) return p;
  const int k = std::min(top_k, experts);
  for (int i = 0; i < experts; ++i) p[static_cast<std::size_t>(i)] = std::pow(i + 1.0, -alpha);
  // The m most popular experts are certain (q = 1); the rest share k - m in
  // proportion to their popularity. Find the smallest m that keeps every
  // shared probability at most 1.
  double tail = 0;
  for (double x : p) tail += x;
  for (int m = 0; m < k; ++m) {
    const double c = (k - m) / tail;
    if (c * p[static_cast<std::size_t>(m)] <= 1.0) {
      for (int i = 0; i < experts; ++i) {
        double& q = p[static_cast<std::size_t>(i)];
        q = i < m ? 1.0 : c * q;
      }
      return p;
    }
    tail -= p[static_cast<std::size_t>(m)];
  }
  for (int i = 0; i < experts; ++i) p[static_cast<std::size_t>(i)] = i < k ? 1.0 : 0.0;
  return p;
}

MoeLoad ExpectedMoeLoad(double tokens, int experts, int top_k, double alpha, int local_experts) {
  MoeLoad load;
  if (tokens <= 0 || experts <= 0 || top_k <= 0) return load;
  const std::vector<double> q = RoutingProbabilities(experts, top_k, alpha);
  // The local experts are spread over the ranks as expert parallelism
  // assigns them (every (E / local)-th rank).
  const int stride = std::max(1, experts / std::max(1, local_experts));
  constexpr double kTile = 64;
  for (int i = 0; i < experts; i += stride) {
    const double qi = q[static_cast<std::size_t>(i)];
    const double touched = 1.0 - std::pow(1.0 - qi, tokens);  // P(at least one token)
    const double mean = tokens * qi;                          // expected tokens
    load.touched_experts += touched;
    load.pairs += mean;
    if (touched > 0) load.padded_pairs += touched * kTile * std::ceil(mean / touched / kTile);
  }
  return load;
}

double ExpectedBusiestShare(const std::vector<double>& q, int ep) {
  const double n = static_cast<double>(q.size());
  const double local = n / ep;
  const double mean = std::accumulate(q.begin(), q.end(), 0.0) / n;
  double var = 0;
  for (double x : q) var += (x - mean) * (x - mean);
  var /= n;
  // E[max of k standard normals] (k = 2, 4, 8, 16, 32, 64); between, by log k.
  constexpr double kMaxNormal[] = {0.5642, 1.0294, 1.4236, 1.7660, 2.0697, 2.3433};
  const double at = std::clamp(std::log2(static_cast<double>(ep)) - 1, 0.0, 5.0);
  const std::size_t lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min<std::size_t>(lo + 1, 5);
  const double z =
      kMaxNormal[lo] + (at - static_cast<double>(lo)) * (kMaxNormal[hi] - kMaxNormal[lo]);
  const double sd = std::sqrt(local * var * (n - local) / std::max(1.0, n - 1));
  // The GPU holding the most popular expert takes its share and, on
  // average, local - 1 of the others': a lower bound of the busiest GPU's
  // share that the normal approximation falls below when a GPU holds few
  // experts (one a GPU: the busiest takes exactly the largest q).
  const double top = *std::max_element(q.begin(), q.end());
  const double rest = n > 1 ? (n * mean - top) / (n - 1) * std::max(0.0, local - 1) : 0.0;
  return std::max(local * mean + z * sd, top + rest);
}

namespace {
// Log-log interpolation through n points (x increasing); below the first,
// its y; beyond the last, linear in x.
template <class X, class Y>
double LogLog(std::size_t n, X x, Y y, double at) {
  if (n == 0) return 0;
  if (at <= x(0)) return y(0);
  for (std::size_t i = 1; i < n; ++i) {
    if (at <= x(i)) {
      const double f = std::log(at / x(i - 1)) / std::log(x(i) / x(i - 1));
      return y(i - 1) * std::pow(y(i) / y(i - 1), f);
    }
  }
  if (n == 1) return y(0);
  return y(n - 1) + (at - x(n - 1)) * (y(n - 1) - y(n - 2)) / (x(n - 1) - x(n - 2));
}
}  // namespace

double AllReduceCurve::Seconds(double bytes) const {
  return LogLog(
      points.size(), [&](std::size_t i) { return points[i].bytes; },
      [&](std::size_t i) { return points[i].seconds; }, bytes);
}

double MoeShapeTable::Seconds(double t) const {
  return LogLog(
      std::min(tokens.size(), seconds.size()), [&](std::size_t i) { return tokens[i]; },
      [&](std::size_t i) { return seconds[i]; }, t);
}

const MoeShapeTable* GpuKernelCurves::MoeTableFor(const std::string& dtype, std::int64_t hidden,
                                                  std::int64_t params_per_expert,
                                                  std::int64_t top_k, std::int64_t experts,
                                                  int tensor_parallel, double alpha) const {
  for (const MoeShapeTable& t : moe_tables) {
    // Gate, up and down projections, and at most one bias per output of each.
    const std::int64_t weights = 3 * hidden * t.inter;
    const std::int64_t extra = params_per_expert - weights;
    if (t.dtype == dtype && t.hidden == hidden && t.top_k == top_k && t.experts == experts &&
        t.tensor_parallel == tensor_parallel && std::abs(t.alpha - alpha) < 1e-9 && extra >= 0 &&
        extra <= 2 * t.inter + hidden) {
      return &t;
    }
  }
  return nullptr;
}

namespace {
const CollectiveCurve* ForGpus(const std::vector<CollectiveCurve>& curves, int gpus) {
  for (const CollectiveCurve& c : curves) {
    if (c.gpus == gpus) return &c;
  }
  return nullptr;
}
}  // namespace

const AllReduceCurve* GpuKernelCurves::AllReduceFor(int gpus) const {
  return ForGpus(all_reduce, gpus);
}
const CollectiveCurve* GpuKernelCurves::AllToAllFor(int gpus) const {
  return ForGpus(all_to_all, gpus);
}
const CollectiveCurve* GpuKernelCurves::AllGatherFor(int gpus) const {
  return ForGpus(all_gather, gpus);
}

const LinearCurve* GpuKernelCurves::PrefillFor(const std::string& kv_dtype,
                                               std::int64_t head_dim) const {
  auto it = prefill_attention.find(kv_dtype);
  if (it == prefill_attention.end() || it->second.empty()) return nullptr;
  const LinearCurve* best = nullptr;
  double best_d = 0;
  for (const auto& [d, curve] : it->second) {
    const double dist = std::fabs(std::log(static_cast<double>(d) / static_cast<double>(head_dim)));
    if (best == nullptr || dist < best_d) {
      best = &curve;
      best_d = dist;
    }
  }
  return best;
}

const GpuKernelCurves* KernelCurveSet::For(const std::string& gpu_id) const {
  for (const GpuKernelCurves& g : gpus) {
    if (g.gpu == gpu_id) return &g;
  }
  return nullptr;
}

namespace {

using nlohmann::json;

json ErrorJson(const FitError& e) {
  return json{{"rows", e.rows}, {"median", e.median}, {"p90", e.p90}, {"within_25", e.within_25}};
}

json LinearJson(const LinearCurve& c) {
  return json{{"kernel", c.kernel}, {"coef", c.coef}, {"error", ErrorJson(c.error)}};
}

// Arrays of numbers only, on one line each: the MoE tables' token and time
// lists and the curves' coefficients stay readable and small.
std::string CollapseNumberArrays(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;  // inside a JSON string: copied as it is
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (in_string) {
      out += text[i];
      if (text[i] == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (text[i] == '"') {
        in_string = false;
      }
      continue;
    }
    if (text[i] == '"') in_string = true;
    if (text[i] == '[') {
      const std::size_t end = text.find_first_of("[]{}\"", i + 1);
      if (end != std::string::npos && text[end] == ']') {
        out += '[';
        for (std::size_t k = i + 1; k < end; ++k) {
          if (text[k] != ' ' && text[k] != '\n') out += text[k];
        }
        out += ']';
        i = end;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

// Reading: a small cursor that remembers the JSON pointer for errors.
class Reader {
 public:
  Reader(std::string source) : source_(std::move(source)) {}
  Error Fail(const std::string& pointer, const std::string& what) const {
    return Error(source_ + "#" + pointer + ": " + what);
  }
  Result<double> Number(const json& j, const std::string& pointer, const char* key) const {
    if (!j.contains(key) || !j.at(key).is_number())
      return Fail(pointer + "/" + key, "missing or not a number");
    const double v = j.at(key).get<double>();
    if (!std::isfinite(v)) return Fail(pointer + "/" + key, "not finite");
    return v;
  }
  Result<std::string> String(const json& j, const std::string& pointer, const char* key) const {
    if (!j.contains(key) || !j.at(key).is_string())
      return Fail(pointer + "/" + key, "missing or not a string");
    return j.at(key).get<std::string>();
  }
  Result<FitError> Fit(const json& j, const std::string& pointer) const {
    FitError e;
    if (!j.contains("error")) return e;
    const json& x = j.at("error");
    const std::string p = pointer + "/error";
    if (!x.is_object()) return Fail(p, "not an object");
    auto rows = Number(x, p, "rows");
    auto median = Number(x, p, "median");
    auto p90 = Number(x, p, "p90");
    auto within = Number(x, p, "within_25");
    if (!rows) return rows.error();
    if (!median) return median.error();
    if (!p90) return p90.error();
    if (!within) return within.error();
    e.rows = static_cast<std::int64_t>(*rows);
    e.median = *median;
    e.p90 = *p90;
    e.within_25 = *within;
    return e;
  }
  Result<LinearCurve> Linear(const json& j, const std::string& pointer) const {
    if (!j.is_object()) return Fail(pointer, "not an object");
    LinearCurve c;
    auto kernel = String(j, pointer, "kernel");
    if (!kernel) return kernel.error();
    c.kernel = *kernel;
    if (!j.contains("coef") || !j.at("coef").is_array())
      return Fail(pointer + "/coef", "missing or not an array");
    const json& coef = j.at("coef");
    if (coef.size() > static_cast<std::size_t>(kMaxFeatures))
      return Fail(pointer + "/coef", "too many coefficients");
    for (std::size_t i = 0; i < coef.size(); ++i) {
      if (!coef[i].is_number() || !(coef[i].get<double>() >= 0)) {
        return Fail(pointer + "/coef/" + std::to_string(i), "must be a number >= 0");
      }
      c.coef.push_back(coef[i].get<double>());
    }
    auto fit = Fit(j, pointer);
    if (!fit) return fit.error();
    c.error = *fit;
    return c;
  }

 private:
  std::string source_;
};

}  // namespace

std::string KernelCurvesToJson(const KernelCurveSet& set) {
  json gpus = json::array();
  for (const GpuKernelCurves& g : set.gpus) {
    json gemm = json::object();
    for (const auto& [dtype, c] : g.gemm) {
      gemm[dtype] = json{{"kernel", c.kernel},
                         {"t0_s", c.t0_s},
                         {"mem_eff", c.mem_eff},
                         {"compute_eff", c.compute_eff},
                         {"smoothness", c.smoothness},
                         {"quant_eff", c.quant_eff},
                         {"weight_bytes", c.weight_bytes},
                         {"activation_bytes", c.activation_bytes},
                         {"fp8_rate", c.fp8_rate},
                         {"error", ErrorJson(c.error)}};
    }
    json decode = json::object();
    for (const auto& [dtype, c] : g.decode_attention) decode[dtype] = LinearJson(c);
    json prefill = json::object();
    for (const auto& [dtype, by_dim] : g.prefill_attention) {
      json dims = json::object();
      for (const auto& [d, c] : by_dim) dims[std::to_string(d)] = LinearJson(c);
      prefill[dtype] = dims;
    }
    json moe = json::object();
    for (const auto& [dtype, c] : g.moe) moe[dtype] = LinearJson(c);
    json moe_tables = json::array();
    for (const MoeShapeTable& t : g.moe_tables) {
      moe_tables.push_back(json{{"dtype", t.dtype},
                                {"kernel", t.kernel},
                                {"hidden", t.hidden},
                                {"inter", t.inter},
                                {"top_k", t.top_k},
                                {"experts", t.experts},
                                {"tensor_parallel", t.tensor_parallel},
                                {"alpha", t.alpha},
                                {"tokens", t.tokens},
                                {"seconds", t.seconds}});
    }
    auto collectives = [](const std::vector<CollectiveCurve>& curves) {
      json out = json::array();
      for (const CollectiveCurve& c : curves) {
        json points = json::array();
        for (const AllReducePoint& p : c.points)
          points.push_back(json::array({p.bytes, p.seconds}));
        out.push_back(json{{"gpus", c.gpus}, {"kernel", c.kernel}, {"points", points}});
      }
      return out;
    };
    json entry{{"gpu", g.gpu},
               {"device", g.device},
               {"engine", g.engine},
               {"spec",
                {{"hbm_bytes_per_s", g.spec.hbm_bytes_per_s},
                 {"bf16_flops_per_s", g.spec.bf16_flops_per_s},
                 {"fp8_flops_per_s", g.spec.fp8_flops_per_s}}},
               {"gemm", gemm},
               {"decode_attention", decode},
               {"prefill_attention", prefill},
               {"moe", moe},
               {"all_reduce", collectives(g.all_reduce)}};
    if (!g.moe_tables.empty()) entry["moe_tables"] = moe_tables;
    if (!g.all_to_all.empty()) entry["all_to_all"] = collectives(g.all_to_all);
    if (!g.all_gather.empty()) entry["all_gather"] = collectives(g.all_gather);
    if (!g.mla_decode.coef.empty()) entry["mla_decode"] = LinearJson(g.mla_decode);
    if (!g.mla_prefill.coef.empty()) entry["mla_prefill"] = LinearJson(g.mla_prefill);
    gpus.push_back(entry);
  }
  json doc{{"source", set.source}, {"gpus", gpus}};
  return CollapseNumberArrays(doc.dump(1)) + "\n";
}

Result<KernelCurveSet> ParseKernelCurves(const std::string& json_text, const std::string& source) {
  json_input::Problem problem;
  auto parsed = json_input::Parse(json_text, &problem);
  if (!parsed) return Error(json_input::Describe(source, json_text, problem));
  const json doc = std::move(*parsed);
  Reader r(source);
  if (!doc.is_object()) return r.Fail("", "not an object");
  KernelCurveSet set;
  if (doc.contains("source") && doc.at("source").is_string())
    set.source = doc.at("source").get<std::string>();
  if (!doc.contains("gpus") || !doc.at("gpus").is_array())
    return r.Fail("/gpus", "missing or not an array");
  const json& gpus = doc.at("gpus");
  for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
    const json& j = gpus[gi];
    const std::string p = "/gpus/" + std::to_string(gi);
    if (!j.is_object()) return r.Fail(p, "not an object");
    GpuKernelCurves g;
    auto id = r.String(j, p, "gpu");
    if (!id) return id.error();
    g.gpu = *id;
    if (j.contains("device") && j.at("device").is_string())
      g.device = j.at("device").get<std::string>();
    if (j.contains("engine") && j.at("engine").is_string())
      g.engine = j.at("engine").get<std::string>();
    if (!j.contains("spec") || !j.at("spec").is_object())
      return r.Fail(p + "/spec", "missing or not an object");
    const json& spec = j.at("spec");
    auto bw = r.Number(spec, p + "/spec", "hbm_bytes_per_s");
    auto bf16 = r.Number(spec, p + "/spec", "bf16_flops_per_s");
    auto fp8 = r.Number(spec, p + "/spec", "fp8_flops_per_s");
    if (!bw) return bw.error();
    if (!bf16) return bf16.error();
    if (!fp8) return fp8.error();
    if (!(*bw > 0 && *bf16 > 0 && *fp8 > 0)) return r.Fail(p + "/spec", "rates must be > 0");
    g.spec = KernelSpec{*bw, *bf16, *fp8};
    if (j.contains("gemm")) {
      if (!j.at("gemm").is_object()) return r.Fail(p + "/gemm", "not an object");
      for (const auto& [dtype, c] : j.at("gemm").items()) {
        const std::string q = p + "/gemm/" + dtype;
        if (!c.is_object()) return r.Fail(q, "not an object");
        GemmCurve curve;
        auto kernel = r.String(c, q, "kernel");
        if (!kernel) return kernel.error();
        curve.kernel = *kernel;
        double* fields[] = {
            &curve.t0_s,      &curve.mem_eff,      &curve.compute_eff,     &curve.smoothness,
            &curve.quant_eff, &curve.weight_bytes, &curve.activation_bytes};
        const char* names[] = {"t0_s",      "mem_eff",      "compute_eff",     "smoothness",
                               "quant_eff", "weight_bytes", "activation_bytes"};
        for (std::size_t i = 0; i < std::size(fields); ++i) {
          auto v = r.Number(c, q, names[i]);
          if (!v) return v.error();
          if (*v < 0) return r.Fail(q + "/" + names[i], "must be >= 0");
          *fields[i] = *v;
        }
        if (!(curve.mem_eff > 0 && curve.compute_eff > 0 && curve.smoothness >= 1)) {
          return r.Fail(q, "mem_eff and compute_eff must be > 0 and smoothness >= 1");
        }
        if (c.contains("fp8_rate") && c.at("fp8_rate").is_boolean())
          curve.fp8_rate = c.at("fp8_rate").get<bool>();
        auto fit = r.Fit(c, q);
        if (!fit) return fit.error();
        curve.error = *fit;
        g.gemm[dtype] = curve;
      }
    }
    if (j.contains("decode_attention")) {
      for (const auto& [dtype, c] : j.at("decode_attention").items()) {
        auto curve = r.Linear(c, p + "/decode_attention/" + dtype);
        if (!curve) return curve.error();
        g.decode_attention[dtype] = *curve;
      }
    }
    if (j.contains("prefill_attention")) {
      for (const auto& [dtype, dims] : j.at("prefill_attention").items()) {
        for (const auto& [d, c] : dims.items()) {
          const std::string q = p + "/prefill_attention/" + dtype + "/" + d;
          int head_dim = 0;
          try {
            head_dim = std::stoi(d);
          } catch (...) {
            return r.Fail(q, "head dim is not a number");
          }
          auto curve = r.Linear(c, q);
          if (!curve) return curve.error();
          g.prefill_attention[dtype][head_dim] = *curve;
        }
      }
    }
    if (j.contains("mla_decode")) {
      auto curve = r.Linear(j.at("mla_decode"), p + "/mla_decode");
      if (!curve) return curve.error();
      g.mla_decode = *curve;
    }
    if (j.contains("mla_prefill")) {
      auto curve = r.Linear(j.at("mla_prefill"), p + "/mla_prefill");
      if (!curve) return curve.error();
      g.mla_prefill = *curve;
    }
    if (j.contains("moe")) {
      for (const auto& [dtype, c] : j.at("moe").items()) {
        auto curve = r.Linear(c, p + "/moe/" + dtype);
        if (!curve) return curve.error();
        g.moe[dtype] = *curve;
      }
    }
    if (j.contains("moe_tables")) {
      const json& ar = j.at("moe_tables");
      const std::string base = p + "/moe_tables";
      if (!ar.is_array()) return r.Fail(base, "not an array");
      for (std::size_t i = 0; i < ar.size(); ++i) {
        const std::string q = base + "/" + std::to_string(i);
        if (!ar[i].is_object()) return r.Fail(q, "not an object");
        MoeShapeTable t;
        auto dtype = r.String(ar[i], q, "dtype");
        if (!dtype) return dtype.error();
        t.dtype = *dtype;
        if (ar[i].contains("kernel") && ar[i].at("kernel").is_string())
          t.kernel = ar[i].at("kernel").get<std::string>();
        std::array<double, 6> shape{};
        const char* keys[] = {"hidden", "inter", "top_k", "experts", "tensor_parallel", "alpha"};
        // Shapes as models have them (widths up to 2^24, experts and top-k
        // up to 2^16, degrees up to 1,024), routing exponents up to 10.
        const double highest[] = {16777216, 16777216, 65536, 65536, 1024, 10};
        for (std::size_t k = 0; k < shape.size(); ++k) {
          auto v = r.Number(ar[i], q, keys[k]);
          if (!v) return v.error();
          if (!(*v >= (k == 5 ? 0 : 1) && *v <= highest[k]))
            return r.Fail(q + "/" + keys[k], "out of range");
          shape[k] = *v;
        }
        t.hidden = static_cast<std::int64_t>(shape[0]);
        t.inter = static_cast<std::int64_t>(shape[1]);
        t.top_k = static_cast<int>(shape[2]);
        t.experts = static_cast<int>(shape[3]);
        t.tensor_parallel = static_cast<int>(shape[4]);
        t.alpha = shape[5];
        for (const char* key : {"tokens", "seconds"}) {
          if (!ar[i].contains(key) || !ar[i].at(key).is_array())
            return r.Fail(q + "/" + key, "missing or not an array");
          std::vector<double>& out = std::string(key) == "tokens" ? t.tokens : t.seconds;
          for (const json& v : ar[i].at(key)) {
            if (!v.is_number() || !(v.get<double>() > 0))
              return r.Fail(q + "/" + key, "each value must be a number > 0");
            out.push_back(v.get<double>());
          }
        }
        if (t.tokens.size() < 2 || t.tokens.size() != t.seconds.size())
          return r.Fail(q, "needs at least two tokens and one time per token count");
        for (std::size_t k = 1; k < t.tokens.size(); ++k) {
          if (!(t.tokens[k] > t.tokens[k - 1])) return r.Fail(q + "/tokens", "must increase");
        }
        g.moe_tables.push_back(std::move(t));
      }
    }
    auto read_collectives = [&](const char* key, std::vector<CollectiveCurve>* out) -> Status {
      if (!j.contains(key)) return OkStatus();
      const json& ar = j.at(key);
      const std::string base = p + "/" + key;
      if (!ar.is_array()) return r.Fail(base, "not an array");
      for (std::size_t i = 0; i < ar.size(); ++i) {
        const std::string q = base + "/" + std::to_string(i);
        CollectiveCurve c;
        auto gpus_n = r.Number(ar[i], q, "gpus");
        if (!gpus_n) return gpus_n.error();
        c.gpus = static_cast<int>(*gpus_n);
        if (ar[i].contains("kernel") && ar[i].at("kernel").is_string())
          c.kernel = ar[i].at("kernel").get<std::string>();
        if (!ar[i].contains("points") || !ar[i].at("points").is_array())
          return r.Fail(q + "/points", "missing or not an array");
        for (const json& pt : ar[i].at("points")) {
          if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number() || !pt[1].is_number() ||
              !(pt[0].get<double>() > 0) || !(pt[1].get<double>() > 0)) {
            return r.Fail(q + "/points", "each point must be [bytes > 0, seconds > 0]");
          }
          c.points.push_back(AllReducePoint{pt[0].get<double>(), pt[1].get<double>()});
        }
        if (c.points.size() < 2) return r.Fail(q + "/points", "needs at least two points");
        for (std::size_t k = 1; k < c.points.size(); ++k) {
          if (!(c.points[k].bytes > c.points[k - 1].bytes))
            return r.Fail(q + "/points", "bytes must increase");
        }
        out->push_back(std::move(c));
      }
      return OkStatus();
    };
    if (auto st = read_collectives("all_reduce", &g.all_reduce); !st) return st.error();
    if (auto st = read_collectives("all_to_all", &g.all_to_all); !st) return st.error();
    if (auto st = read_collectives("all_gather", &g.all_gather); !st) return st.error();
    set.gpus.push_back(std::move(g));
  }
  return set;
}

const KernelCurveSet& BundledKernelCurves() {
  static const KernelCurveSet set = [] {
    auto text = EmbeddedFile("kernels/curves.json");
    if (!text) return KernelCurveSet{};
    auto parsed = ParseKernelCurves(std::string(*text), "kernels/curves.json");
    return parsed.ok() ? *parsed : KernelCurveSet{};
  }();
  return set;
}

}  // namespace kvbill
