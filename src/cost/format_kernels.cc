#include "kvbill/cost/format_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvbill {
namespace {

std::string Percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * x);
  return buf;
}

std::string Number(double x, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

// "measured" when the table is the GPU's own, else whose it is.
std::string Measured(const GpuKernelCurves& base, const FormatRun& run, const std::string& table) {
  if (base.gpu == run.gpu) return "measured: " + table + " table";
  return "measured on " + base.gpu + ": " + table + " table (" + run.gpu + " has none)";
}

// The bytes one weight element takes in `format`, scales included (weights
// are grouped along rows of 4,096 elements).
double WeightElementBytes(const ElementFormat& format) { return format.BitsPerElement(4096) / 8.0; }

LinearCurve ScaleMoeCompute(LinearCurve c, double rate) {
  c.coef.resize(5, 0);
  c.coef[2] /= rate;
  c.coef[3] /= rate;
  return c;
}

}  // namespace

TimedGemm GemmForFormat(const GpuKernelCurves& base, const FormatRun& run,
                        const ElementFormat& format, bool fp8_checkpoint, double fp4_over_fp8,
                        const WeightOnlyRates& weight_only, const std::string& part) {
  TimedGemm out;
  out.use = FormatUse{part, format.name, run.ComputedLabel(), run.cell.kernel, ""};
  const GemmCurve& bf16 = base.gemm.at("bf16");
  out.curve = bf16;
  const std::string& c = run.cell.computed;
  if (c == "bf16") {
    out.use.timing = Measured(base, run, "GEMM bf16");
    return out;
  }
  if (run.cell.dense_dequantised && part == "weights") {
    // Each forward writes a bf16 copy of the weights (reading the stored
    // ones) and multiplies by it: the bf16 GEMM, after that pass.
    out.curve.dequant_bytes = WeightElementBytes(format) + 2;
    out.use.timing =
        "assumed: the bf16 GEMM curve after a pass per forward that reads the stored weights "
        "and writes their bf16 copy (" +
        Number(out.curve.dequant_bytes, "%.4g") +
        " bytes a weight at the GEMM's memory efficiency; no table measures it)";
    return out;
  }
  if (c == "fp32") {
    out.curve.weight_bytes = 4;
    out.curve.activation_bytes = 4;
    out.use.timing = "assumed: the bf16 GEMM curve at 4 bytes per element (no FP32 table)";
    return out;
  }
  if (c == "int8") {
    // W8A8 INT8 (CUTLASS scaled_mm's int8 kernels): one byte a weight and
    // an activation. Where the GPU has FP8 tensor cores its int8 peak is
    // the FP8 one and the per-tensor fp8 rows are the same kernel family;
    // on Ampere the int8 peak is twice BF16's. No table measures int8.
    auto fp8 = base.gemm.find("fp8");
    const bool fp8_peak = run.architecture != "ampere" && fp8 != base.gemm.end();
    if (fp8_peak) {
      out.curve = fp8->second;
    } else {
      out.curve.activation_bytes = 1;
      out.curve.compute_rate = 2;
    }
    out.curve.weight_bytes = WeightElementBytes(format);
    out.use.timing = fp8_peak ? "assumed: the GEMM fp8 curve (CUTLASS scaled_mm) at the FP8 peak, "
                                "which int8 matches on this GPU (no int8 table)"
                              : "assumed: the bf16 GEMM curve at one byte a weight and twice its "
                                "rate, the int8 tensor cores' (no int8 table)";
    return out;
  }
  if (c == "fp8" || c == "fp4") {
    // Checkpoints published in fp8 with 128x128 block scales (DeepSeek,
    // Qwen *-FP8) run DeepGEMM; weights quantised on load (per tensor) and
    // per-channel checkpoints (GLM-4.5 *-FP8) run CUTLASS scaled_mm, the
    // fp8 table's kernel. W4A4 runs CUTLASS like the per-tensor fp8 kernel.
    const char* want = c == "fp8" && fp8_checkpoint ? "fp8_block" : "fp8";
    auto it = base.gemm.find(want);
    if (it == base.gemm.end())
      it = base.gemm.find(std::string(want) == "fp8" ? "fp8_block" : "fp8");
    if (it != base.gemm.end()) {
      out.curve = it->second;
      if (it->first == "fp8_block") {
        // Those rows were timed eagerly, one launch each (58-132 us of
        // launches on H100), which hides their weight-streaming regime:
        // the fit pins their memory efficiency at its bound. Engines run
        // them inside CUDA graphs, so the fixed time and the weight
        // streaming come from the graph-timed per-tensor rows (the same
        // weight bytes); what the block rows do measure, at large m, stays:
        // their compute rate and activation quantisation.
        auto per_tensor = base.gemm.find("fp8");
        // Outside the graphs (prompt batches SGLang and vLLM run eagerly)
        // each call pays what the eager rows measured beyond that.
        const double graph_t0 = per_tensor != base.gemm.end() ? per_tensor->second.t0_s : bf16.t0_s;
        out.curve.eager_extra_s = std::max(0.0, out.curve.t0_s - graph_t0);
        out.curve.t0_s = graph_t0;
        if (per_tensor != base.gemm.end()) out.curve.mem_eff = per_tensor->second.mem_eff;
      }
      if (c == "fp8") {
        out.use.timing = Measured(base, run, "GEMM " + it->first);
        return out;
      }
      out.curve.weight_bytes = WeightElementBytes(format);
      out.curve.compute_rate = fp4_over_fp8;
      out.use.timing =
          "assumed: the GEMM " + it->first + " curve's efficiencies at the FP4 peak (no FP4 table)";
      return out;
    }
  }
  // Weight-only kernels (and a low-precision rate without its table):
  // weights streamed at their stored width, 16-bit math slowed by the
  // dequantisation in the main loop.
  out.curve.weight_bytes = WeightElementBytes(format);
  if (c == "fp8" || c == "fp4") {
    out.use.timing = "assumed: the bf16 GEMM curve at the stored width (no " + c + " table)";
    return out;
  }
  const double rate = c == "w8a16" ? weight_only.bits8 : weight_only.bits4;
  out.curve.compute_rate = rate;
  const std::string parameter = std::string("profile \"") + weight_only.profile +
                                "\" parameter weight_only_" + (c == "w8a16" ? "8" : "4") +
                                "bit_rate";
  // The rates are fitted on runs of Marlin's kernels; another weight-only
  // kernel (bitsandbytes, GPTQ's exllama kernels for 2 and 3 bits, Triton
  // AWQ on ROCm, one outside the matrix) borrows Marlin's: an assumption.
  const std::string& kernel = run.cell.kernel;
  if (kernel.find("Marlin") == std::string::npos || kernel.find("no Marlin") != std::string::npos) {
    out.use.timing = "assumed: the bf16 GEMM curve at the stored width, computing at " +
                     Percent(rate) + " of its rate, the rate " + parameter +
                     " fitted for Marlin's kernels (no measurement of " +
                     (kernel == "unknown" ? format.name + "'s kernel" : kernel) + ")";
    return out;
  }
  out.use.timing = "fitted: the bf16 GEMM curve at the stored width, computing at " +
                   Percent(rate) + " of its rate (dequantisation in the main loop; " + parameter +
                   ", fitted end to end: no table measures dense weight-only GEMMs)";
  return out;
}

Result<TimedMoe> MoeForFormat(const GpuKernelCurves& base, const FormatRun& run,
                              const ElementFormat& format, double fp4_over_fp8) {
  TimedMoe out;
  out.use = FormatUse{"experts", format.name, run.ComputedLabel(), run.cell.kernel, ""};
  const std::string& table = run.cell.experts_table;
  // The kernel's table on this GPU (or on H100 for a GPU without tables);
  // without one, the GPU's bf16 fused-MoE table at the experts' stored
  // width: the published A100 runs of MXFP4 and FP8 experts through Marlin
  // match it (docs/validation.md), and the only Marlin MoE table, H100's,
  // holds one model shape.
  std::string used = table;
  auto it = base.moe.find(table);
  if (it == base.moe.end()) {
    used = "bf16";
    it = base.moe.find("bf16");
  }
  if (it == base.moe.end()) return Error("no fused-MoE curve \"" + table + "\" for " + run.gpu);
  out.curve = it->second;
  out.fp8_rate = used == "fp8_block";
  const std::string what = "fused MoE " + used;
  std::string timing = base.gpu == run.gpu ? "measured: " + what + " table"
                                           : "measured on " + base.gpu + ": " + what + " table";
  if (used != table) {
    // Name the experts' format and the kernel that runs them, not the
    // table's key: FP8 experts on A100 run FP8 Marlin, whose table is keyed
    // "int4".
    const std::string kernel = run.cell.kernel.empty() ? table : run.cell.kernel;
    timing = "assumed: the " + what + " table of " + base.gpu + " (no table of this GPU for " +
             format.name + " experts under " + kernel + "; dequantisation taken as hidden)";
  }
  if (run.cell.computed == "fp4") {
    out.curve = ScaleMoeCompute(out.curve, fp4_over_fp8);
    timing = "assumed: the " + what + " curve at the FP4 peak (no FP4 MoE table)";
  } else if (run.cell.computed == "fp32") {
    timing = "assumed: the " + what + " curve at the stored width (no FP32 table)";
  }
  const bool table_width = (used == "bf16" && format.element_bits == 16) ||
                           (used == "fp8_block" && format.element_bits == 8) ||
                           (used == "int4" && format.name.rfind("int4", 0) == 0) ||
                           (used == "mxfp4" && format.name == "mxfp4");
  if (!table_width && run.cell.computed != "fp4" && run.cell.computed != "fp32") {
    timing += ", at " + format.name + "'s stored width";
  }
  if (table_width && used == table && base.gpu == run.gpu && run.cell.computed != "fp4" &&
      run.cell.computed != "fp32") {
    out.shape_table = used;
  }
  // The format matrix names the dense layers' kernel; routed experts run
  // the fused-MoE kernel of their table where the matrix's kernel is a
  // plain GEMM (vLLM's and SGLang's Triton fused MoE for 16-bit and
  // block-scaled FP8 experts, docs/engine.md#formats).
  if (run.cell.computed == "bf16" || run.cell.computed == "fp32") {
    out.use.kernel = "Triton fused MoE";
  } else if (run.cell.computed == "fp8" && used == "fp8_block") {
    out.use.kernel = "Triton fused MoE, block-scaled FP8";
  }
  out.use.timing = timing;
  return out;
}

CollectiveCurve CollectiveFor(const std::string& kind, int gpus, const GpuSpec& gpu,
                              const GpuKernelCurves* own, bool* measured, std::string* how) {
  auto pick = [&](const GpuKernelCurves* g) -> const CollectiveCurve* {
    if (g == nullptr) return nullptr;
    if (kind == "all_to_all") return g->AllToAllFor(gpus);
    if (kind == "all_gather") return g->AllGatherFor(gpus);
    return g->AllReduceFor(gpus);
  };
  if (const CollectiveCurve* c = pick(own)) {
    *measured = true;
    *how = "measured: " + c->kernel;
    return *c;
  }
  *measured = false;
  const double n = gpus;
  // Bytes a GPU moves over its link per byte of the collective's size.
  const double traffic = kind == "all_reduce" ? 2 * (n - 1) / n : (n - 1) / n;
  const GpuKernelCurves* h100 = BundledKernelCurves().For("h100-sxm");
  const CollectiveCurve* ref = pick(h100);
  double latency = 10e-6, efficiency = 0.7;
  const auto h100_spec = LookupGpu("h100-sxm");
  const double h100_link = h100_spec ? h100_spec->link_bytes_per_s : 450e9;
  if (ref != nullptr && ref->points.size() >= 2 && h100_link > 0) {
    latency = ref->points.front().seconds;
    const AllReducePoint& last = ref->points.back();
    const double moving = std::max(last.seconds - latency, 1e-12);
    efficiency = std::clamp(traffic * last.bytes / moving / h100_link, 0.05, 1.0);
  }
  double link = gpu.link_bytes_per_s > 0 ? gpu.link_bytes_per_s : 32e9;
  std::string over =
      "a ring over its " + gpu.interconnect + " link (" + Number(link / 1e9, "%.0f") + " GB/s)";
  // More GPUs than the link joins: the collective spans nodes, and its
  // slowest hop is each GPU's network link. A ring (all-reduce, all-gather)
  // sends all of its traffic through it; an all-to-all sends the share
  // bound for other nodes, (n - d) / (n - 1) of it.
  // Within one server of several link groups (H100 NVL's bridged pairs), the
  // same over each GPU's server link (PCIe).
  if (gpus > gpu.link_gpus && gpu.link_gpus >= 1) {
    const bool in_server = gpus <= gpu.server_gpus;
    // The GPUs a node holds: the server's, or the link's without one.
    const int node = std::max(gpu.link_gpus, gpu.server_gpus);
    const int d = in_server ? gpu.link_gpus : node;
    const int groups = (gpus + d - 1) / d;
    const double slowest = in_server ? gpu.server_bytes_per_s : gpu.network_bytes_per_s;
    link = slowest;
    if (kind == "all_to_all") link *= (n - 1) / (n - d);
    over = "across " + std::to_string(groups) + (in_server ? " groups of " : " nodes of ") +
           std::to_string(d) +
           (in_server ? " GPUs in one server, each GPU's PCIe link ("
                      : " GPUs, each GPU's network link (") +
           Number(slowest / 1e9, "%.0f") + " GB/s) its slowest hop";
  }
  *how = kind + " over " + std::to_string(gpus) + " GPUs of " + gpu.id + " not measured: " + over +
         " at " +
         (ref != nullptr
              ? "the latency (" + Number(latency * 1e6, "%.1f") + " us) and bus efficiency (" +
                    Percent(efficiency) + ") of H100's NVLink table"
              : "an assumed 10 us and 70% efficiency") +
         " (uncalibrated)";
  CollectiveCurve out;
  out.gpus = gpus;
  out.kernel = "ring over the link (modelled)";
  for (double bytes = 256; bytes <= 1.1e9; bytes *= 2) {
    out.points.push_back(AllReducePoint{bytes, latency + traffic * bytes / (link * efficiency)});
  }
  return out;
}

}  // namespace kvbill
