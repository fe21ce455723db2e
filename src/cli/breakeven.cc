// kvbill breakeven: the longest context a deployment serves profitably.
#include "kvbill/cost/breakeven.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/model_flags.h"
#include "kvbill/hardware/catalog_names.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/report/table.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill breakeven --model M --gpu G --price OUT_USD_PER_MTOK [--input-price "
    "USD_PER_MTOK]\n"
    "                        [--output-tokens 1000] [--kv-format F] [--batch B] [--gpus N]\n"
    "                        [--usd-per-gpu-hour X] [--format table|json]\n\n"
    "The longest context a deployment serves profitably at batch one and at batch B, given\n"
    "what an output token sells for (and an input token, when --input-price is given: then\n"
    "per request of --output-tokens) and what the GPU-hour costs, for the KV format asked\n"
    "for and for fp8 and nvfp4 KV. Roofline decode cost: docs/engine.md; rules: "
    "docs/breakeven.md.\n";

std::string Ctx(const BreakevenResult& r) {
  if (r.max_profitable == 0) return "none";
  std::string s = FormatWithSeparators(r.max_profitable);
  if (r.limited_by_memory) s += " (memory limit)";
  return s;
}

}  // namespace

int RunBreakeven(const Args& args) {
  po::options_description options("options");
  ModelFlags model_flags;
  AddModelFlags(options, model_flags);
  std::string gpu_id, kv_name, weight_format, format;
  double price = 0, input_price = -1, usd_per_gpu_hour = -1, memory_fraction = 0.9;
  double bw_eff = 0.65, mfu = 0.6;
  std::int64_t batch = 32;
  Tokens output_tokens = 1000;
  int gpus = 1;
  options.add_options()("gpu,g", po::value(&gpu_id)->default_value("h100-sxm"),
                        "catalog id, alias (h100) or nvidia-smi name, or a GPU JSON file")(
      "gpus", po::value(&gpus)->default_value(1), "GPUs per replica (tensor parallel)")(
      "price", po::value(&price)->required(), "what an output token sells for, $ per million")(
      "input-price", po::value(&input_price), "what an input token sells for, $ per million")(
      "output-tokens", po::value(&output_tokens)->default_value(1000),
      "output tokens per request (with --input-price)")(
      "kv-format", po::value(&kv_name)->default_value("bf16"), "KV element format")(
      "weight-format", po::value(&weight_format)->default_value("auto"), "weight format")(
      "batch,b", po::value(&batch)->default_value(32), "the larger batch to report")(
      "usd-per-gpu-hour", po::value(&usd_per_gpu_hour), "default: the GPU catalog's price")(
      "memory-fraction", DoubleValue(&memory_fraction, 0.9), "for weights + KV")(
      "bandwidth-efficiency", DoubleValue(&bw_eff, 0.65), "achieved HBM fraction")(
      "compute-efficiency", DoubleValue(&mfu, 0.6), "achieved FLOP/s fraction")(
      "format", po::value(&format)->default_value("table"), "table or json");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "breakeven", kUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json"); !s) {
    return ReportError("breakeven", s.error());
  }
  if (!(price > 0)) return ReportError("breakeven", Error("--price: must be positive"));
  if (vm.count("input-price") && !(input_price >= 0)) {
    return ReportError("breakeven", Error("--input-price: must be non-negative"));
  }
  // A negative price was silently the catalog's (the default's sentinel).
  if (vm.count("usd-per-gpu-hour") && !(usd_per_gpu_hour >= 0 && usd_per_gpu_hour <= 1e6)) {
    return ReportError("breakeven", Error("--usd-per-gpu-hour: must be in [0, 1,000,000] dollars"));
  }
  if (batch < 1) return ReportError("breakeven", Error("--batch: must be at least 1"));
  if (gpus < 1) return ReportError("breakeven", Error("--gpus: must be at least 1"));
  if (output_tokens < 1)
    return ReportError("breakeven", Error("--output-tokens: must be positive"));
  if (!(bw_eff > 0 && bw_eff <= 1) || !(mfu > 0 && mfu <= 1) ||
      !(memory_fraction > 0 && memory_fraction <= 1)) {
    return ReportError("breakeven", Error("efficiencies and --memory-fraction must be in (0, 1]"));
  }
  auto model = LoadModelFromFlags(model_flags);
  if (!model) return ReportError("breakeven", model.error());
  auto gpu_name = ResolveGpuName(gpu_id);
  if (!gpu_name) return ReportError("breakeven", gpu_name.error());
  auto gpu = LookupGpu(*gpu_name);
  if (!gpu) return ReportError("breakeven", gpu.error());
  auto kv = ParseElementFormat(kv_name);
  if (!kv) return ReportError("breakeven", kv.error().Within("--kv-format"));
  if (!ValidTensorParallel(*model, gpus)) {
    return ReportError("breakeven", Error("--gpus: " + std::to_string(gpus) +
                                          " GPUs cannot split this model's heads evenly"));
  }

  BreakevenQuery q;
  q.fit.model = *model;
  q.fit.weight_format = weight_format;
  q.fit.deployment.gpu = *gpu;
  q.fit.deployment.tensor_parallel = gpus;
  q.fit.deployment.memory_fraction = memory_fraction;
  q.roofline.bandwidth_efficiency = bw_eff;
  q.roofline.compute_efficiency = mfu;
  q.usd_per_gpu_hour = usd_per_gpu_hour >= 0 ? usd_per_gpu_hour : gpu->usd_per_gpu_hour;
  q.output_usd_per_mtok = price;
  if (vm.count("input-price")) q.input_usd_per_mtok = input_price;
  q.output_tokens = output_tokens;

  std::vector<ElementFormat> formats = {*kv};
  for (const char* name : {"fp8-e4m3", "nvfp4"}) {
    auto f = ParseElementFormat(name);
    if (f && f->element_bits < kv->element_bits &&
        CheckGpuRuns(*gpu, FormatRole::kKvCache, *f).ok())
      formats.push_back(*f);
  }
  nlohmann::ordered_json j;
  j["model"] = model->name;
  j["gpu"] = gpu->id;
  j["gpus"] = gpus;
  j["usd_per_gpu_hour"] = q.usd_per_gpu_hour;
  j["output_usd_per_mtok"] = price;
  if (q.input_usd_per_mtok) j["input_usd_per_mtok"] = *q.input_usd_per_mtok;
  j["kv_formats"] = nlohmann::ordered_json::array();
  Table t({"KV format", "batch 1: longest profitable context",
           "batch " + std::to_string(batch) + ": longest profitable context", "$/Mtok at 8k (b=1)",
           "at 32k", "at 128k"});
  for (const ElementFormat& f : formats) {
    q.fit.kv_format = f;
    auto one = FindBreakeven(q, 1);
    if (!one) return ReportError("breakeven", one.error());
    auto many = FindBreakeven(q, batch);
    if (!many) return ReportError("breakeven", many.error());
    std::vector<double> per_mtok;
    for (Tokens ctx : {8192, 32768, 131072}) {
      auto c = DecodeCostPerToken(q, ctx, 1);
      if (!c) return ReportError("breakeven", c.error());
      per_mtok.push_back(*c * 1e6);
    }
    t.AddRow({f.name, Ctx(*one), Ctx(*many), "$" + FormatFixed(per_mtok[0], 2),
              "$" + FormatFixed(per_mtok[1], 2), "$" + FormatFixed(per_mtok[2], 2)});
    auto row = [](const BreakevenResult& r) {
      return nlohmann::ordered_json{{"batch", r.batch},
                                    {"max_profitable_context", r.max_profitable},
                                    {"limited_by_memory", r.limited_by_memory},
                                    {"memory_limit_context", r.memory_limit}};
    };
    j["kv_formats"].push_back(
        {{"kv_format", f.name},
         {"batch_1", row(*one)},
         {"batch_n", row(*many)},
         {"decode_usd_per_mtok_batch_1",
          {{"8k", per_mtok[0]}, {"32k", per_mtok[1]}, {"128k", per_mtok[2]}}}});
  }
  if (format == "json") {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "model " << model->name << " on " << gpus << "x " << gpu->id << " at $"
            << FormatFixed(q.usd_per_gpu_hour, 2) << "/GPU-hour; output sells at $"
            << FormatFixed(price, 2) << "/Mtok";
  if (q.input_usd_per_mtok) {
    std::cout << ", input at $" << FormatFixed(*q.input_usd_per_mtok, 2) << "/Mtok ("
              << output_tokens << " output tokens per request)";
  }
  std::cout << "\n\n"
            << t.ToText()
            << "\nA context is profitable when decoding at it costs no more than the token "
               "sells for;\n\"memory limit\": profitable up to the longest context that fits.\n";
  return 0;
}

}  // namespace kvbill::cli
