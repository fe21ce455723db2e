#include "kvbill/calibrate/kernel_fit.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "kvbill/calibrate/least_squares.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/util/file.h"

namespace kvbill {
namespace {

namespace fs = std::filesystem;

// One CSV table of the kernel database, read whole.
class Table {
 public:
  static Result<Table> Read(const std::string& path) {
    auto text = ReadFile(path);
    if (!text) return text.error();
    Table t;
    t.path_ = path;
    std::istringstream in(*text);
    std::string line;
    std::size_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      std::vector<std::string> fields;
      std::size_t start = 0;
      while (true) {
        const std::size_t comma = line.find(',', start);
        fields.push_back(
            line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      if (t.columns_.empty()) {
        for (std::size_t i = 0; i < fields.size(); ++i) t.columns_[fields[i]] = i;
        continue;
      }
      if (fields.size() != t.columns_.size()) {
        return Error(path + ":" + std::to_string(line_no) + ": " + std::to_string(fields.size()) +
                     " fields, the header has " + std::to_string(t.columns_.size()));
      }
      t.rows_.push_back(std::move(fields));
      t.lines_.push_back(line_no);
    }
    if (t.columns_.empty()) return Error(path + ": empty table");
    return t;
  }

  std::size_t size() const { return rows_.size(); }
  bool Has(const std::string& column) const { return columns_.count(column) > 0; }
  Result<std::string> Text(std::size_t row, const std::string& column) const {
    auto it = columns_.find(column);
    if (it == columns_.end()) return Error(path_ + ": no column \"" + column + "\"");
    return rows_[row][it->second];
  }
  Result<double> Number(std::size_t row, const std::string& column) const {
    auto text = Text(row, column);
    if (!text) return text.error();
    char* end = nullptr;
    const double v = std::strtod(text->c_str(), &end);
    if (text->empty() || end != text->c_str() + text->size() || !std::isfinite(v)) {
      return Error(path_ + ":" + std::to_string(lines_[row]) + ": " + column + ": \"" + *text +
                   "\" is not a number");
    }
    return v;
  }

 private:
  std::string path_;
  std::map<std::string, std::size_t> columns_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;
};

// The newest <dir>/<engine>/<version>/<name>.txt (versions compared
// numerically); engine "vllm" or "nccl".
std::optional<std::pair<std::string, std::string>> NewestTable(const fs::path& gpu_dir,
                                                               const std::string& name,
                                                               const std::string& engine = "vllm") {
  std::optional<std::pair<std::vector<int>, fs::path>> best;
  std::error_code ec;
  const fs::path engine_dir = gpu_dir / engine;
  if (!fs::is_directory(engine_dir, ec)) return std::nullopt;
  for (const auto& entry : fs::directory_iterator(engine_dir, ec)) {
    const fs::path file = entry.path() / (name + ".txt");
    if (!fs::is_regular_file(file, ec)) continue;
    std::vector<int> version;
    std::istringstream parts(entry.path().filename().string());
    std::string part;
    while (std::getline(parts, part, '.')) version.push_back(std::atoi(part.c_str()));
    if (!best || version > best->first) best = std::make_pair(version, file);
  }
  if (!best) return std::nullopt;
  return std::make_pair(best->second.string(), best->second.parent_path().filename().string());
}

FitError Errors(const std::vector<double>& predicted, const std::vector<double>& measured) {
  FitError e;
  std::vector<double> err;
  for (std::size_t i = 0; i < predicted.size(); ++i) {
    err.push_back(std::fabs(predicted[i] / measured[i] - 1.0));
  }
  e.rows = static_cast<std::int64_t>(err.size());
  if (err.empty()) return e;
  std::sort(err.begin(), err.end());
  auto at = [&](double q) {
    return err[std::min(err.size() - 1,
                        static_cast<std::size_t>(q * static_cast<double>(err.size())))];
  };
  e.median = at(0.5);
  e.p90 = at(0.9);
  e.within_25 = static_cast<double>(
                    std::count_if(err.begin(), err.end(), [](double x) { return x <= 0.25; })) /
                static_cast<double>(err.size());
  return e;
}

// Rows for a linear curve: features and measured seconds.
struct LinearRows {
  std::vector<std::vector<double>> features;
  std::vector<double> seconds;
  template <std::size_t N>
  void Add(const std::array<double, N>& f, double s) {
    features.emplace_back(f.begin(), f.end());
    seconds.push_back(s);
  }
};

LinearCurve FitLinear(const LinearRows& rows, const std::string& kernel) {
  LinearCurve c;
  c.kernel = kernel;
  if (rows.seconds.empty()) return c;
  const Eigen::Index n = static_cast<Eigen::Index>(rows.seconds.size());
  const Eigen::Index k = static_cast<Eigen::Index>(rows.features.front().size());
  Eigen::MatrixXd a(n, k);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < k; ++j) {
      a(i, j) = rows.features[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
    }
    y(i) = rows.seconds[static_cast<std::size_t>(i)];
  }
  const Eigen::VectorXd x = NonNegativeRelativeFit(a, y);
  c.coef.assign(x.data(), x.data() + x.size());
  const Eigen::VectorXd pred = a * x;
  c.error = Errors(std::vector<double>(pred.data(), pred.data() + pred.size()), rows.seconds);
  return c;
}

// Kernel sources kvbill takes for each operator (the ones vLLM picks on
// that GPU for the common case); rows of other kernels are left out.
bool IsKernel(const std::string& source, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (source == n) return true;
  }
  return false;
}

struct GpuDir {
  const char* dir;
  const char* catalog_id;
};
constexpr GpuDir kGpuDirs[] = {
    {"a100_sxm", "a100-80gb"}, {"h100_sxm", "h100-sxm"}, {"h200_sxm", "h200"}};

Result<std::map<std::string, GemmCurve>> FitGemm(const Table& t, const KernelSpec& spec) {
  struct Row {
    double m, n, k, s;
  };
  std::map<std::string, std::vector<Row>> by_dtype;
  std::map<std::string, std::string> kernel;
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto dtype = t.Text(i, "gemm_dtype");
    auto src = t.Text(i, "kernel_source");
    auto m = t.Number(i, "m"), n = t.Number(i, "n"), k = t.Number(i, "k");
    auto lat = t.Number(i, "latency");
    if (!dtype) return dtype.error();
    if (!src) return src.error();
    if (!m) return m.error();
    if (!n) return n.error();
    if (!k) return k.error();
    if (!lat) return lat.error();
    const std::string d = *dtype == "bfloat16" ? "bf16" : *dtype;
    if (d == "fp8_block" && !IsKernel(*src, {"DeepGemmFp8BlockScaledMMKernel"})) continue;
    by_dtype[d].push_back(Row{*m, *n, *k, *lat * 1e-3});
    kernel[d] = *src;
  }
  std::map<std::string, GemmCurve> out;
  for (const auto& entry : by_dtype) {
    const std::string& dtype = entry.first;
    const std::vector<Row>& rows = entry.second;
    GemmCurve base;
    base.kernel = kernel[dtype];
    const bool fp8 = dtype != "bf16";
    base.weight_bytes = fp8 ? 1 : 2;
    base.activation_bytes = fp8 ? 1 : 2;
    base.fp8_rate = fp8 && spec.fp8_flops_per_s > spec.bf16_flops_per_s;
    // p maps onto the parameters so that each stays in its physical range:
    // t0 = e^p0 us, em and ec in (0, 1] (no kernel beats the spec sheet),
    // q in (1, 10), eq > 0.
    auto unit = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    auto curve_at = [&](const Eigen::VectorXd& p) {
      GemmCurve c = base;
      c.t0_s = std::exp(p(0)) * 1e-6;
      c.mem_eff = unit(p(1));
      c.compute_eff = unit(p(2));
      c.smoothness = 1.0 + 9.0 * unit(p(3));
      c.quant_eff = fp8 ? std::exp(p(4)) : 0.0;
      return c;
    };
    const int n = static_cast<int>(rows.size());
    auto residuals = [&](const Eigen::VectorXd& p, Eigen::VectorXd* r) {
      const GemmCurve c = curve_at(p);
      r->resize(n);
      for (int i = 0; i < n; ++i) {
        const Row& row = rows[static_cast<std::size_t>(i)];
        (*r)(i) = std::log(c.Seconds(spec, row.m, row.n, row.k) / row.s);
      }
    };
    Eigen::VectorXd x0(5);
    x0 << std::log(5.0), std::log(0.8 / 0.2), std::log(0.7 / 0.3), 0.0, std::log(0.5);
    const LmResult fit = LevenbergMarquardt(residuals, n, x0, 3000);
    GemmCurve c = curve_at(fit.x);
    std::vector<double> pred, meas;
    for (const Row& row : rows) {
      pred.push_back(c.Seconds(spec, row.m, row.n, row.k));
      meas.push_back(row.s);
    }
    c.error = Errors(pred, meas);
    out[dtype] = c;
  }
  return out;
}

Result<std::map<std::string, LinearCurve>> FitDecode(const Table& t, const KernelSpec& spec,
                                                     bool step_is_context) {
  std::map<std::string, LinearRows> rows;
  std::map<std::string, std::string> kernel;
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto src = t.Text(i, "kernel_source");
    auto dtype = t.Text(i, "kv_cache_dtype");
    if (!src) return src.error();
    if (!dtype) return dtype.error();
    if (!IsKernel(*src, {"vllm_flash_attn_fa3", "vllm_flash_attn"})) continue;
    auto b = t.Number(i, "batch_size"), step = t.Number(i, "step"), h = t.Number(i, "num_heads");
    auto kv = t.Number(i, "num_key_value_heads"), d = t.Number(i, "head_dim");
    auto lat = t.Number(i, "latency");
    for (auto* v : {&b, &step, &h, &kv, &d, &lat}) {
      if (!*v) return v->error();
    }
    const std::string dt = *dtype == "bfloat16" ? "bf16" : *dtype;
    const double elem = dt == "bf16" ? 2 : 1;
    const double ctx = step_is_context ? *step : *step + 1;
    const double kv_bytes = *b * ctx * *kv * *d * 2 * elem;
    rows[dt].Add(DecodeAttentionFeatures(spec, *b, *h, *d, kv_bytes), *lat * 1e-3);
    kernel[dt] = *src;
  }
  std::map<std::string, LinearCurve> out;
  for (const auto& [dt, r] : rows) out[dt] = FitLinear(r, kernel[dt]);
  return out;
}

Result<std::map<std::string, std::map<int, LinearCurve>>> FitPrefill(const Table& t,
                                                                     const KernelSpec& spec) {
  std::map<std::pair<std::string, int>, LinearRows> rows;
  std::map<std::string, std::string> kernel;
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto src = t.Text(i, "kernel_source");
    auto dtype = t.Text(i, "kv_cache_dtype");
    if (!src) return src.error();
    if (!dtype) return dtype.error();
    if (!IsKernel(*src, {"vllm_flash_attn_fa3", "vllm_flash_attn"})) continue;
    auto b = t.Number(i, "batch_size"), s = t.Number(i, "isl"), h = t.Number(i, "num_heads");
    auto kv = t.Number(i, "num_key_value_heads"), d = t.Number(i, "head_dim");
    auto lat = t.Number(i, "latency");
    for (auto* v : {&b, &s, &h, &kv, &d, &lat}) {
      if (!*v) return v->error();
    }
    const std::string dt = *dtype == "bfloat16" ? "bf16" : *dtype;
    const double elem = dt == "bf16" ? 2 : 1;
    const double pairs = *b * *s * (*s + 1) / 2;
    const double flops = 4 * *h * *d * pairs;
    const double kvw = *b * *s * *kv * *d * 2 * elem;
    rows[{dt, static_cast<int>(*d)}].Add(
        PrefillAttentionFeatures(spec, *b * *s * *h * *d, flops, kvw), *lat * 1e-3);
    kernel[dt] = *src;
  }
  std::map<std::string, std::map<int, LinearCurve>> out;
  for (const auto& [key, r] : rows) {
    if (r.seconds.size() < 8) continue;
    out[key.first][key.second] = FitLinear(r, kernel[key.first]);
  }
  return out;
}

// DeepSeek-V3 MLA shapes of the MLA tables: latent 512 + rope 64 cached per
// token; prefill runs the expanded form, q/k head dim 192, v head dim 128.
Result<LinearCurve> FitMla(const Table& t, const KernelSpec& spec, bool decode,
                           bool step_is_context) {
  LinearRows rows;
  std::string kernel;
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto src = t.Text(i, "kernel_source");
    auto dtype = t.Text(i, "kv_cache_dtype");
    if (!src) return src.error();
    if (!dtype) return dtype.error();
    if (*dtype != "bfloat16") continue;
    if (!IsKernel(*src, {"vllm_flashmla", "vllm_flash_attn_mla", "vllm_triton_mla"})) continue;
    auto b = t.Number(i, "batch_size"), s = t.Number(i, "isl"), step = t.Number(i, "step");
    auto h = t.Number(i, "num_heads"), lat = t.Number(i, "latency");
    for (auto* v : {&b, &s, &step, &h, &lat}) {
      if (!*v) return v->error();
    }
    constexpr double kLatent = 576;
    if (decode) {
      const double ctx = step_is_context ? *step : *step + 1;
      rows.Add(DecodeAttentionFeatures(spec, *b, *h, kLatent, *b * ctx * kLatent * 2), *lat * 1e-3);
    } else {
      const double pairs = *b * *s * (*s + 1) / 2;
      rows.Add(PrefillAttentionFeatures(spec, *b * *s * *h * 192, 2 * *h * (192 + 128) * pairs,
                                        *b * *s * kLatent * 2),
               *lat * 1e-3);
    }
    kernel = *src;
  }
  return FitLinear(rows, kernel);
}

// `x` to four significant digits (the tables' repeat noise is larger).
double FourDigits(double x) {
  if (!(x > 0)) return x;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(x)));
  return std::round(x * scale) / scale;
}

// The MoE curves by dtype, and in `tables` each expert shape's measured
// times at the tensor-parallel degrees of one node (up to 8), without
// expert parallelism, under the routing kvbill's profiles assume (power law
// 1.2; a profile with another keeps the curve).
Result<std::map<std::string, LinearCurve>> FitMoe(const Table& t, const KernelSpec& spec,
                                                  std::vector<MoeShapeTable>* tables) {
  struct Kind {
    const char* dtype;   // table's moe_dtype
    const char* name;    // kvbill's
    const char* kernel;  // the source kept
    double bits;         // stored bits per weight
    bool fp8_rate;
  };
  const Kind kinds[] = {
      {"bfloat16", "bf16", "vllm_unquantizedfusedmoe_triton_tritonexperts", 16, false},
      {"bfloat16", "bf16", "vllm_fused_moe", 16, false},
      {"fp8_block", "fp8_block", "vllm_fp8moe_triton_tritonexperts", 8, true},
      {"fp8", "fp8", "vllm_modeloptfp8moe_flashinfer_cutlass_flashinferexperts", 8, true},
      {"int4_wo", "int4", "vllm_compressedtensorswna16marlinmoe_marlin_marlinexperts", 4.125,
       false},
      {"w4a16_mxfp4", "mxfp4", "vllm_gptossmxfp4moe_triton_oaitritonmxfp4expertsmonolithic", 4.25,
       false},
  };
  std::map<std::string, LinearRows> rows;
  std::map<std::string, std::string> kernel;
  std::map<std::tuple<double, int, int, double, int>, MoeLoad> loads;
  // (dtype, hidden, inter, top-k, experts, tp, alpha) -> tokens -> seconds
  using ShapeKey = std::tuple<std::string, std::int64_t, std::int64_t, int, int, int, double>;
  std::map<ShapeKey, std::map<double, double>> shapes;
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto dtype = t.Text(i, "moe_dtype"), src = t.Text(i, "kernel_source");
    auto dist = t.Text(i, "distribution");
    if (!dtype) return dtype.error();
    if (!src) return src.error();
    if (!dist) return dist.error();
    const Kind* kind = nullptr;
    for (const Kind& k : kinds) {
      if (*dtype == k.dtype && *src == k.kernel) kind = &k;
    }
    if (kind == nullptr || dist->rfind("power_law_", 0) != 0) continue;
    auto tokens = t.Number(i, "num_tokens"), hidden = t.Number(i, "hidden_size");
    auto inter = t.Number(i, "inter_size"), topk = t.Number(i, "topk");
    auto experts = t.Number(i, "num_experts"), tp = t.Number(i, "moe_tp_size");
    auto ep = t.Number(i, "moe_ep_size"), lat = t.Number(i, "latency");
    for (auto* v : {&tokens, &hidden, &inter, &topk, &experts, &tp, &ep, &lat}) {
      if (!*v) return v->error();
    }
    if (*ep != 1) continue;  // expert parallelism is not part of these curves
    const double alpha = std::strtod(dist->c_str() + 10, nullptr);
    const auto key = std::make_tuple(*tokens, static_cast<int>(*experts), static_cast<int>(*topk),
                                     alpha, static_cast<int>(*experts));
    auto it = loads.find(key);
    if (it == loads.end()) {
      it = loads
               .emplace(key,
                        ExpectedMoeLoad(*tokens, static_cast<int>(*experts),
                                        static_cast<int>(*topk), alpha, static_cast<int>(*experts)))
               .first;
    }
    MoeLoad load = it->second;
    const double local_inter = *inter / *tp;
    load.expert_bytes = 3 * *hidden * local_inter * kind->bits / 8;
    load.expert_flops_per_pair = 6 * *hidden * local_inter;
    load.hidden = *hidden;
    rows[kind->name].Add(
        MoeFeatures(spec, load, kind->fp8_rate && spec.fp8_flops_per_s > spec.bf16_flops_per_s),
        *lat * 1e-3);
    kernel[kind->name] = *src;
    if (*tp <= 8 && std::abs(alpha - EngineProfile{}.moe_routing_alpha) < 1e-9) {
      shapes[ShapeKey{kind->name, static_cast<std::int64_t>(*hidden),
                      static_cast<std::int64_t>(*inter), static_cast<int>(*topk),
                      static_cast<int>(*experts), static_cast<int>(*tp), alpha}][*tokens] =
          FourDigits(*lat * 1e-3);
    }
  }
  std::map<std::string, LinearCurve> out;
  for (const auto& [name, r] : rows) out[name] = FitLinear(r, kernel[name]);
  for (const auto& [key, points] : shapes) {
    if (points.size() < 2) continue;
    MoeShapeTable table;
    std::tie(table.dtype, table.hidden, table.inter, table.top_k, table.experts,
             table.tensor_parallel, table.alpha) = key;
    table.kernel = kernel[table.dtype];
    for (const auto& [tokens, seconds] : points) {
      table.tokens.push_back(tokens);
      table.seconds.push_back(seconds);
    }
    tables->push_back(std::move(table));
  }
  return out;
}

Result<std::vector<AllReduceCurve>> ReadAllReduce(const Table& t) {
  std::map<int, AllReduceCurve> by_gpus;
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto backend = t.Text(i, "backend");
    if (!backend) return backend.error();
    if (*backend != "vllm_graph") continue;
    auto gpus = t.Number(i, "num_gpus"), size = t.Number(i, "message_size");
    auto lat = t.Number(i, "latency");
    for (auto* v : {&gpus, &size, &lat}) {
      if (!*v) return v->error();
    }
    AllReduceCurve& c = by_gpus[static_cast<int>(*gpus)];
    c.gpus = static_cast<int>(*gpus);
    c.kernel = "vllm custom all-reduce (CUDA graph)";
    c.points.push_back(AllReducePoint{*size * 2, *lat * 1e-3});  // bf16 elements
  }
  std::vector<AllReduceCurve> out;
  for (auto& [g, c] : by_gpus) {
    std::sort(c.points.begin(), c.points.end(),
              [](const AllReducePoint& a, const AllReducePoint& b) { return a.bytes < b.bytes; });
    out.push_back(std::move(c));
  }
  return out;
}

// NCCL's collectives (nccl-tests, fp16 rows) by GPU count: `op` is
// "alltoall" or "all_gather"; bytes are message_size x 2, the whole send
// buffer of an all-to-all and the whole output of an all-gather.
Result<std::vector<CollectiveCurve>> ReadNccl(const Table& t, const std::string& op,
                                              const std::string& version) {
  std::map<int, CollectiveCurve> by_gpus;
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto name = t.Text(i, "op_name"), dtype = t.Text(i, "nccl_dtype");
    if (!name) return name.error();
    if (!dtype) return dtype.error();
    if (*name != op || *dtype != "half") continue;
    auto gpus = t.Number(i, "num_gpus"), size = t.Number(i, "message_size");
    auto lat = t.Number(i, "latency");
    for (auto* v : {&gpus, &size, &lat}) {
      if (!*v) return v->error();
    }
    CollectiveCurve& c = by_gpus[static_cast<int>(*gpus)];
    c.gpus = static_cast<int>(*gpus);
    c.kernel = "NCCL " + version + " " + op;
    c.points.push_back(AllReducePoint{*size * 2, *lat * 1e-3});
  }
  std::vector<CollectiveCurve> out;
  for (auto& [g, c] : by_gpus) {
    std::sort(c.points.begin(), c.points.end(),
              [](const AllReducePoint& a, const AllReducePoint& b) { return a.bytes < b.bytes; });
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Result<KernelCurveSet> FitKernelCurves(const std::string& dir) {
  KernelCurveSet set;
  set.source = "measured kernel latencies (NVIDIA aiconfigurator database, Apache-2.0)";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error(dir + ": not a directory");
  for (const GpuDir& g : kGpuDirs) {
    const fs::path gpu_dir = fs::path(dir) / g.dir;
    if (!fs::is_directory(gpu_dir, ec)) continue;
    auto spec_gpu = LookupGpu(g.catalog_id);
    if (!spec_gpu) return spec_gpu.error();
    GpuKernelCurves curves;
    curves.gpu = g.catalog_id;
    curves.spec = KernelSpec{
        spec_gpu->hbm_bandwidth_bytes_per_s, spec_gpu->bf16_flops_per_s,
        spec_gpu->fp8_flops_per_s > 0 ? spec_gpu->fp8_flops_per_s : spec_gpu->bf16_flops_per_s};
    auto load = [&](const std::string& name) -> Result<std::pair<Table, std::string>> {
      auto found = NewestTable(gpu_dir, name);
      if (!found) return Error(gpu_dir.string() + ": no vllm/<version>/" + name + ".txt");
      auto t = Table::Read(found->first);
      if (!t) return t.error();
      return std::make_pair(std::move(*t), found->second);
    };
    auto gemm = load("gemm_perf");
    if (!gemm) return gemm.error();
    curves.engine = "vllm " + gemm->second;
    if (gemm->first.size() > 0) {
      auto device = gemm->first.Text(0, "device");
      if (device) curves.device = *device;
    }
    auto gemm_curves = FitGemm(gemm->first, curves.spec);
    if (!gemm_curves) return gemm_curves.error();
    curves.gemm = *gemm_curves;
    auto decode = load("generation_attention_perf");
    if (!decode) return decode.error();
    // The vLLM 0.14.0 collector gave `step` as the context length, later ones step + 1.
    auto decode_curves = FitDecode(decode->first, curves.spec, decode->second == "0.14.0");
    if (!decode_curves) return decode_curves.error();
    curves.decode_attention = *decode_curves;
    auto prefill = load("context_attention_perf");
    if (!prefill) return prefill.error();
    auto prefill_curves = FitPrefill(prefill->first, curves.spec);
    if (!prefill_curves) return prefill_curves.error();
    curves.prefill_attention = *prefill_curves;
    if (auto mla = load("generation_mla_perf"); mla.ok()) {
      auto c = FitMla(mla->first, curves.spec, true, mla->second == "0.14.0");
      if (!c) return c.error();
      curves.mla_decode = *c;
    }
    if (auto mla = load("context_mla_perf"); mla.ok()) {
      auto c = FitMla(mla->first, curves.spec, false, false);
      if (!c) return c.error();
      curves.mla_prefill = *c;
    }
    auto moe = load("moe_perf");
    if (!moe) return moe.error();
    auto moe_curves = FitMoe(moe->first, curves.spec, &curves.moe_tables);
    if (!moe_curves) return moe_curves.error();
    curves.moe = *moe_curves;
    auto ar = load("custom_allreduce_perf");
    if (!ar) return ar.error();
    auto ar_curves = ReadAllReduce(ar->first);
    if (!ar_curves) return ar_curves.error();
    curves.all_reduce = *ar_curves;
    if (auto nccl = NewestTable(gpu_dir, "nccl_perf", "nccl")) {
      auto t = Table::Read(nccl->first);
      if (!t) return t.error();
      auto a2a = ReadNccl(*t, "alltoall", nccl->second);
      if (!a2a) return a2a.error();
      curves.all_to_all = *a2a;
      auto ag = ReadNccl(*t, "all_gather", nccl->second);
      if (!ag) return ag.error();
      curves.all_gather = *ag;
    }
    set.gpus.push_back(std::move(curves));
  }
  if (set.gpus.empty()) {
    return Error(dir + ": no GPU directory kvbill knows (a100_sxm, h100_sxm, h200_sxm)");
  }
  return set;
}

std::string KernelFitTable(const KernelCurveSet& set) {
  std::ostringstream out;
  out << "| GPU | operator | kernel | rows | median error | p90 error | within ±25% |\n"
      << "|---|---|---|---:|---:|---:|---:|\n";
  auto row = [&](const std::string& gpu, const std::string& op, const std::string& kernel,
                 const FitError& e) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "| %lld | %.1f%% | %.1f%% | %.0f%% |",
                  static_cast<long long>(e.rows), 100 * e.median, 100 * e.p90, 100 * e.within_25);
    out << "| " << gpu << " | " << op << " | " << kernel << " " << buf << "\n";
  };
  for (const GpuKernelCurves& g : set.gpus) {
    for (const auto& [dt, c] : g.gemm) row(g.gpu, "GEMM " + dt, c.kernel, c.error);
    for (const auto& [dt, c] : g.decode_attention)
      row(g.gpu, "decode attention, " + dt + " KV", c.kernel, c.error);
    for (const auto& [dt, dims] : g.prefill_attention) {
      for (const auto& [d, c] : dims) {
        row(g.gpu, "prefill attention, " + dt + " KV, head dim " + std::to_string(d), c.kernel,
            c.error);
      }
    }
    if (!g.mla_decode.coef.empty())
      row(g.gpu, "MLA decode", g.mla_decode.kernel, g.mla_decode.error);
    if (!g.mla_prefill.coef.empty())
      row(g.gpu, "MLA prefill", g.mla_prefill.kernel, g.mla_prefill.error);
    for (const auto& [dt, c] : g.moe) row(g.gpu, "fused MoE " + dt, c.kernel, c.error);
  }
  return out.str();
}

}  // namespace kvbill
