// kvbill plot: SVG charts.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/cli_util.h"
#include "kvbill/hardware/catalog_names.h"
#include "kvbill/hardware/fit.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/weight_format.h"
#include "kvbill/report/memory_chart.h"
#include "kvbill/util/names.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill plot [memory] --model A,B,C --gpu G --out FILE.svg [--gpus N]\n"
    "                          [--kv-format F] [--weight-format F] [--batch B]\n"
    "                          [--min-context 4k] [--max-context 1M] [--memory-fraction 0.9]\n"
    "                          [--engine vllm|sglang] [--reserve-gib G] [--ignore-model-limit]\n\n"
    "memory: KV memory against context (log axes) for each model, with the GPU's capacity\n"
    "line and each model's line of what its weights and the engine's activation reserve leave\n"
    "(as simulate's KV pool: --engine's profile run; --reserve-gib 0: memory alone); the\n"
    "context where each model stops fitting is marked. KV is block-rounded and includes linear/SSM "
    "state. GiB = 2^30 bytes.\n"
    "Each curve stops at its model's max_model_len (the legend names it); --ignore-model-limit\n"
    "draws it over the whole axis (a what-if, with a context_limit warning).\n";

// --model's comma-separated names: an empty one ("a,,b", a trailing comma)
// is an error.
Result<std::vector<std::string>> SplitModels(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (item.empty()) return Error("--model: an empty name in \"" + text + "\"");
    out.push_back(std::move(item));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

int RunPlot(const Args& args) {
  po::options_description options("options");
  std::string chart_name, models_text, gpu_id, kv_format_name, weight_format, out, min_text,
      max_text;
  int gpus = 1;
  std::int64_t batch = 1;
  double memory_fraction = 0.9;
  std::optional<double> reserve_gib;
  std::string engine;
  Tokens block_size = 16;
  bool ignore_limit = false;
  options.add_options()(
      "model,m", po::value(&models_text)->default_value("qwen3-32b,llama-3.1-8b,gpt-oss-20b"),
      "comma-separated models: catalog names, Hugging Face repo ids or config.json files")(
      "gpu,g", po::value(&gpu_id)->default_value("h100-sxm"),
      "catalog id, alias (h100) or nvidia-smi name, or a GPU JSON file")(
      "gpus", po::value(&gpus)->default_value(1), "GPUs per replica (tensor parallel)")(
      "kv-format", po::value(&kv_format_name)->default_value("bf16"), "KV element format")(
      "weight-format", po::value(&weight_format)->default_value("auto"), "weight format")(
      "batch,b", po::value(&batch)->default_value(1), "concurrent sequences")(
      "min-context", po::value(&min_text)->default_value("4k"), "left end of the x axis")(
      "max-context", po::value(&max_text)->default_value("1M"), "right end of the x axis")(
      "memory-fraction", DoubleValue(&memory_fraction, 0.9),
      "share of usable GPU memory for weights + KV")(
      "engine", po::value(&engine)->default_value("vllm"),
      "vllm or sglang: whose activation reserve each model's line takes off")(
      "reserve-gib", po::value<double>()->notifier([&](double v) { reserve_gib = v; }),
      "activation reserve per GPU in GiB for every model (default: the engine's, as simulate)")(
      "block-size", po::value(&block_size)->default_value(16, "the engine's"),
      "tokens per KV block (default: each model's as the engine pages it on the GPU, 16 for "
      "most; docs/engine.md#kv-blocks)")("out,o", FileValue(&out)->required(),
                                         "the SVG file to write")(
      "ignore-model-limit", po::bool_switch(&ignore_limit),
      "draw past each model's max_model_len (a what-if)");
  // The chart's name is a positional word ("plot memory"), not a flag.
  po::options_description hidden;
  hidden.add_options()("chart", po::value(&chart_name)->default_value("memory"));
  po::positional_options_description positional;
  positional.add("chart", 1);
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "plot", kUsage, options, vm, &positional, &hidden)) {
    return *stop;
  }
  if (chart_name != "memory") {
    const std::string hint = DidYouMean(chart_name, {"memory"});
    return ReportError("plot", Error("unknown chart \"" + chart_name + "\"" +
                                     (hint.empty() ? "" : "; " + hint) + " (known: memory)"));
  }
  // The chart is SVG: a file named for another image format would not be
  // one (a path without an extension, "-" or a device, is taken as given).
  if (const std::string ext = std::filesystem::path(out).extension().string();
      !ext.empty() && ext != ".svg" && ext != ".SVG") {
    return ReportError("plot", Error("--out: " + out + ": plot writes SVG; name the file .svg"));
  }
  if (gpus < 1) return ReportError("plot", Error("--gpus: must be at least 1"));
  if (batch < 1) return ReportError("plot", Error("--batch: must be at least 1"));
  if (auto s = CheckBlockSize(block_size); !s) return ReportError("plot", s.error());
  if (auto s = CheckShare("memory-fraction", memory_fraction); !s) {
    return ReportError("plot", s.error());
  }
  if (auto s = CheckChoice("engine", engine, "vllm|sglang"); !s) {
    return ReportError("plot", s.error());
  }
  if (reserve_gib && !(*reserve_gib >= 0)) {
    return ReportError("plot", Error("--reserve-gib: must be >= 0"));
  }
  MemoryChartOptions o;
  auto gpu_name = ResolveGpuName(gpu_id);
  if (!gpu_name) return ReportError("plot", gpu_name.error());
  auto gpu = LookupGpu(*gpu_name);
  if (!gpu) return ReportError("plot", gpu.error());
  o.deployment.gpu = *gpu;
  o.deployment.tensor_parallel = gpus;
  o.deployment.memory_fraction = memory_fraction;
  if (reserve_gib) {
    o.deployment.activation_reserve_bytes = static_cast<Bytes>(*reserve_gib * kBytesPerGiB);
  } else {
    o.reserve_engine = engine;
  }
  auto kv = ParseElementFormat(kv_format_name);
  if (!kv) return ReportError("plot", kv.error().Within("--kv-format"));
  o.kv_format = *kv;
  o.kv_format_name = kv_format_name;
  // Drawn all the same (the sizes are memory's), said as `fit` says it.
  if (auto run = CheckGpuRuns(*gpu, FormatRole::kKvCache, *kv); !run) {
    std::cerr << "kvbill plot: warning [format_not_run]: " << run.error().message()
              << " (the curves are memory's alone)\n";
  }
  if (const std::string problem = engine == "sglang" ? SglangKvProblem(*kv) : "";
      !problem.empty()) {
    std::cerr << "kvbill plot: warning [format_not_run]: " << problem
              << " (the curves are memory's alone)\n";
  }
  o.kv_engine = engine;
  if (weight_format != "auto") {
    auto w = ParseWeightFormat(weight_format);
    if (!w) return ReportError("plot", w.error().Within("--weight-format"));
    if (auto run = CheckGpuRuns(*gpu, FormatRole::kWeights, *w); !run) {
      std::cerr << "kvbill plot: warning [format_not_run]: " << run.error().message()
                << " (the curves are memory's alone)\n";
    }
  }
  o.weight_format = weight_format;
  o.batch = batch;
  o.block_size = vm["block-size"].defaulted() ? 0 : block_size;
  auto lo = ParseTokenCount(min_text);
  if (!lo) return ReportError("plot", lo.error().Within("--min-context"));
  auto hi = ParseTokenCount(max_text);
  if (!hi) return ReportError("plot", hi.error().Within("--max-context"));
  if (*hi <= *lo) return ReportError("plot", Error("--max-context: must be above --min-context"));
  o.min_context = *lo;
  o.max_context = *hi;

  std::vector<ModelShape> models;
  auto names = SplitModels(models_text);
  if (!names) return ReportError("plot", names.error());
  std::vector<std::string> resolved_names;
  for (const std::string& name : *names) {
    auto resolved = ResolveModelName(name);
    if (!resolved) return ReportError("plot", resolved.error());
    // One model named twice, in any spelling (qwen3-8b, Qwen/Qwen3-8B),
    // would draw two curves under one label.
    if (std::find(resolved_names.begin(), resolved_names.end(), *resolved) !=
        resolved_names.end()) {
      return ReportError("plot", Error("--model: \"" + name + "\" names a model named before"));
    }
    resolved_names.push_back(*resolved);
    auto m = LoadModel(*resolved);
    if (!m) return ReportError("plot", m.error());
    if (auto problem = TensorParallelProblem(*m, gpus, /*experts_split=*/false); !problem.empty()) {
      return ReportError("plot", Error("--gpus: " + problem));
    }
    if (const std::string problem =
            engine == "vllm"
                ? EngineKvProblem("vllm", EngineKvFormat(kv_format_name, *kv, *m, "vllm"), *m)
                : "";
        !problem.empty()) {
      std::cerr << "kvbill plot: warning [format_not_run]: " << problem
                << " (the curves are memory's alone)\n";
    }
    if (weight_format == "auto") {
      if (auto run = CheckCheckpointRuns(*gpu, *m); !run) {
        std::cerr << "kvbill plot: warning [format_not_run]: " << m->name
                  << "'s own weights: " << run.error().message()
                  << " (the curves are memory's alone)\n";
      }
    }
    models.push_back(*m);
  }
  o.ignore_model_limit = ignore_limit;
  for (const ModelShape& m : models) {
    if (ignore_limit && m.max_model_len > 0 && m.max_model_len < o.max_context) {
      std::cerr << "kvbill plot: warning [context_limit]: " << m.name
                << " is drawn past its max_model_len " << FormatWithSeparators(m.max_model_len)
                << " (--ignore-model-limit: memory alone, a what-if no engine serves)\n";
    }
    // Its curve stops at max_model_len: below --min-context it has none.
    if (!ignore_limit && m.max_model_len > 0 && m.max_model_len < o.min_context) {
      std::cerr << "kvbill plot: warning [context_limit]: " << m.name
                << " has no curve: its max_model_len " << FormatWithSeparators(m.max_model_len)
                << " is below --min-context (--ignore-model-limit draws memory alone)\n";
    }
  }
  auto chart = BuildMemoryChart(models, o);
  if (!chart) return ReportError("plot", chart.error());
  auto svg = RenderSvg(*chart);
  if (!svg) return ReportError("plot", svg.error());
  if (auto s = EmitOutput("plot", *svg, out); !s) return ReportError("plot", s.error());
  return 0;
}

}  // namespace kvbill::cli
