// kvbill fit: does model + context + batch fit a GPU / deployment?
#include "kvbill/hardware/fit.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/cli_util.h"
#include "cli/model_flags.h"
#include "kvbill/cache/kv_groups.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/hardware/catalog_names.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/kv_blocks.h"
#include "kvbill/model/weight_bytes.h"
#include "kvbill/model/weight_format.h"
#include "kvbill/report/table.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill fit --model M --gpu G [--gpus N] [--kv-format F] [--weight-format F]\n"
    "                  --context C [--batch B] [--memory-fraction F] [--engine vllm|sglang]\n"
    "                  [--reserve-gib G] [--block-size N] [--max-num-batched-tokens N]\n"
    "                  [--set key=value ...]\n"
    "                  [--ignore-model-limit] [--format table|json] [-o FILE]\n\n"
    "Weights + KV (block-rounded, with linear/SSM state) against the memory of one replica of\n"
    "N tensor-parallel GPUs: whether it fits and by how much, the longest context at batch B,\n"
    "the largest batch at context C, the fewest GPUs that fit, and what would fit instead.\n"
    "The engine's activation reserve comes off each GPU first, as simulate's KV pool does\n"
    "(--engine's profile run at its token budget; --reserve-gib 0: memory alone).\n"
    "A sliding-window or chunked layer holds the prefill chunk the engine computes an\n"
    "iteration (--max-num-batched-tokens, default the engine's for the GPU) beside its window\n"
    "for the sequence being prefilled, the others of a batch a token, as simulate's KV pool\n"
    "counts it.\n"
    "A context beyond the model's max_model_len (its config's, as vLLM derives it) does not fit\n"
    "and the longest context stops there; --ignore-model-limit answers the memory question\n"
    "alone (a what-if, with a context_limit warning).\n"
    "Exit status 0 (with --check: 1 when it does not fit), 2 on bad input.\n"
    "GiB = 2^30 bytes, GB = 10^9 bytes.\n";

std::string Gib(Bytes b) { return FormatFixed(static_cast<double>(b) / kBytesPerGiB, 2) + " GiB"; }
std::string Gb(Bytes b) { return FormatFixed(static_cast<double>(b) / kBytesPerGB, 1) + " GB"; }

// The model's limit against the request: `fits` false and the longest
// context capped at the limit unless ignored; the context_limit warning's
// text when the context is past the limit (empty otherwise).
struct ModelLimitCheck {
  Tokens limit = 0;       // ModelShape::max_model_len; 0: unknown
  bool over = false;      // context > limit
  bool caps_max = false;  // the memory's longest context is past the limit
  std::string warning;    // context_limit, when over
};
ModelLimitCheck CheckModelLimit(const ModelShape& model, Tokens context, const FitReport& report,
                                bool ignore, const std::string& engine) {
  ModelLimitCheck c;
  // What vLLM takes when asked (a LongRoPE model's default is shorter).
  c.limit = model.MaxModelLenCeiling();
  if (c.limit <= 0) return c;
  c.over = context > c.limit;
  c.caps_max = !ignore && (report.max_context_unbounded || report.max_context > c.limit);
  if (c.over) {
    c.warning =
        "context " + FormatWithSeparators(context) + " tokens is beyond the model's " +
        "max_model_len " + FormatWithSeparators(c.limit) +
        (model.max_model_len_assumed
             ? " (assumed: the config gives no length; vLLM assumes 2,048 unless "
               "--max-model-len says otherwise)"
             : "") +
        (model.max_model_len_ceiling > 0
             ? " (LongRoPE: vLLM starts it at " + FormatWithSeparators(model.max_model_len) +
                   " unless --max-model-len asks for more, up to this)"
             : "") +
        (ignore ? " (--ignore-model-limit: memory alone, a what-if no engine serves)"
                : std::string(" (") + (engine == "sglang" ? "SGLang" : "vLLM") +
                      " refuses such requests; --ignore-model-limit for a what-if)");
  } else if (model.max_model_len_ceiling > 0 && context > model.max_model_len) {
    // Within what vLLM takes, but past what it starts a LongRoPE model with.
    c.warning = "context " + FormatWithSeparators(context) + " tokens is past vLLM's default " +
                "max_model_len " + FormatWithSeparators(model.max_model_len) +
                " for this LongRoPE model (its original_max_position_embeddings): serve it with "
                "--max-model-len " +
                FormatWithSeparators(context) + " or more, up to " + FormatWithSeparators(c.limit);
  }
  return c;
}

// Whether any layer keeping its own KV slides or attends in chunks: the
// layers that hold a prefill chunk beside their window.
bool HasWindowedLayers(const ModelShape& model) {
  return std::any_of(model.layers.begin(), model.layers.end(),
                     [](const LayerShape& l) { return !l.SharesKv() && l.IsWindowed(); });
}

}  // namespace

int RunFit(const Args& args) {
  po::options_description options("options");
  ModelFlags model_flags;
  AddModelFlags(options, model_flags);
  std::string gpu_id, kv_format_name, weight_format, context_text, format, out;
  int gpus = 1;
  std::int64_t batch = 1;
  double memory_fraction = 0.9;
  std::optional<double> reserve_option;
  std::optional<Tokens> batched_tokens_option;
  std::string engine;
  Tokens block_size = 16;
  bool check = false, ignore_limit = false;
  options.add_options()(
      "gpu,g", po::value(&gpu_id)->default_value("h100-sxm"),
      "catalog id (kvbill gpus), alias (h100) or nvidia-smi name, or a GPU JSON file")(
      "gpus", po::value(&gpus)->default_value(1), "GPUs per replica (tensor parallel)")(
      "kv-format", po::value(&kv_format_name)->default_value("bf16"),
      "KV element format; auto: the one the checkpoint declares, else its dtype")(
      "weight-format", po::value(&weight_format)->default_value("auto"),
      "weight format; auto = as the checkpoint ships")(
      "context,c", po::value(&context_text)->required(), "context per sequence, e.g. 128k")(
      "batch,b", po::value(&batch)->default_value(1), "concurrent sequences")(
      "memory-fraction", DoubleValue(&memory_fraction, 0.9),
      "share of usable GPU memory for weights + KV (--engine sglang: SGLang's own for the GPU)")(
      "engine", po::value(&engine)->default_value("vllm"),
      "vllm or sglang: whose memory share and activation reserve (its bundled profile)")(
      "reserve-gib", po::value<double>()->notifier([&](double v) { reserve_option = v; }),
      "activation reserve per GPU in GiB (default: the engine's, as simulate)")(
      "block-size", po::value(&block_size)->default_value(16, "the engine's"),
      "tokens per KV block (default: the engine's for the model and GPU, 16 for most; "
      "docs/engine.md#kv-blocks)")(
      "max-num-batched-tokens",
      po::value<Tokens>()->notifier([&](Tokens v) { batched_tokens_option = v; }),
      "tokens the engine computes an iteration, the prefill chunk a sliding or chunked layer "
      "holds beside its window, and the activation reserve's budget (default: the engine's for "
      "the GPU, as simulate)")("format", po::value(&format)->default_value("table"),
                               "table or json")("out,o", FileValue(&out),
                                                "write to FILE instead of stdout")(
      "check", po::bool_switch(&check),
      "exit 1 when it does not fit, or no engine runs the formats on the GPU (for CI)")(
      "ignore-model-limit", po::bool_switch(&ignore_limit),
      "answer for contexts past the model's max_model_len (a what-if)");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "fit", kUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json"); !s)
    return ReportError("fit", s.error());
  if (gpus < 1) return ReportError("fit", Error("--gpus: must be at least 1"));
  if (batch < 1) return ReportError("fit", Error("--batch: must be at least 1"));
  if (auto s = CheckBlockSize(block_size); !s) return ReportError("fit", s.error());
  if (auto s = CheckShare("memory-fraction", memory_fraction); !s) {
    return ReportError("fit", s.error());
  }
  if (auto s = CheckChoice("engine", engine, "vllm|sglang"); !s) {
    return ReportError("fit", s.error());
  }
  if (reserve_option && !(*reserve_option >= 0)) {
    return ReportError("fit", Error("--reserve-gib: must be >= 0"));
  }
  if (batched_tokens_option && *batched_tokens_option < 1) {
    return ReportError("fit", Error("--max-num-batched-tokens: must be at least 1"));
  }

  auto model = LoadModelFromFlags(model_flags);
  if (!model) return ReportError("fit", model.error());
  // DeepSeek-V4 runs in its fp8 cache, the only one vLLM runs for it.
  if (vm["kv-format"].defaulted() && model->HasCompressedLayers()) kv_format_name = "auto";
  auto gpu_name = ResolveGpuName(gpu_id);
  if (!gpu_name) return ReportError("fit", gpu_name.error());
  auto gpu = LookupGpu(*gpu_name);
  if (!gpu) return ReportError("fit", gpu.error());
  // The block size the engine pages the model in on this GPU, as a scenario
  // takes it (kv_blocks.h): vLLM's FlashMLA takes 64, DeepSeek-V4 256.
  if (vm["block-size"].defaulted()) block_size = DefaultKvBlockSize(engine, *model, *gpu);
  // A block size vLLM's attention backend for the model on this GPU does
  // not keep, as a scenario's block_size_unserved warns it.
  std::string block_warning;
  if (const VllmKvBlocks rule = VllmKvBlockRule(*model, *gpu);
      engine == "vllm" && !vm["block-size"].defaulted() && !rule.Keeps(block_size)) {
    block_warning = "--block-size " + std::to_string(block_size) + ": vLLM serves " + model->name +
                    " on " + gpu->id + " in " + std::to_string(rule.size) + "-token blocks" +
                    (rule.backend.empty() ? " (its CUDA attention backends need a multiple of 16)"
                                          : " (" + rule.backend + ")") +
                    ", so the sizes are of a block size it does not run";
  }
  // The tokens an iteration computes, as a scenario takes them: the
  // engine's default for the GPU and degree unless given.
  const EngineLimits limits = DefaultEngineLimits(engine, *gpu, gpus);
  const Tokens batched_tokens = batched_tokens_option.value_or(limits.max_num_batched_tokens);
  // SGLang's own mem_fraction_static for the GPU and degree when none is
  // given, as a scenario on SGLang takes it.
  if (engine == "sglang" && vm["memory-fraction"].defaulted()) {
    memory_fraction =
        SglangMemoryFraction(*gpu, gpus, batched_tokens, limits.cuda_graph_max_batch, false, 0);
    if (memory_fraction <= 0) {
      char value[32];
      std::snprintf(value, sizeof value, "%.3f", memory_fraction);
      return ReportError(
          "fit", Error("--max-num-batched-tokens " + FormatWithSeparators(batched_tokens) +
                       ": SGLang derives its memory fraction (mem_fraction_static) from the "
                       "GPU's memory less 1.5 MiB per token of its chunked prefill size for "
                       "activations, which leaves " +
                       value + " on " + gpu->id +
                       ", no memory for weights and KV: SGLang would not start; lower "
                       "--max-num-batched-tokens or give --memory-fraction"));
    }
  }
  auto kv_format = ParseElementFormat(AutoKvFormat(kv_format_name, *model));
  if (!kv_format) return ReportError("fit", kv_format.error().Within("--kv-format"));
  // vLLM's int4 KV cache is int4_per_token_head: int4-g<head_dim>, as
  // simulate reads "int4" (docs/formats.md).
  kv_format = EngineKvFormat(kv_format_name, *kv_format, *model, engine);
  // A format no engine runs on this GPU still has a size; say so beside the
  // verdict (simulate refuses it, compare marks it not applicable).
  std::vector<std::string> format_warnings;
  if (auto run = CheckGpuRuns(*gpu, FormatRole::kKvCache, *kv_format); !run) {
    format_warnings.push_back(run.error().message());
  }
  const std::string engine_kv_problem = EngineKvProblem(engine, *kv_format, *model);
  if (!engine_kv_problem.empty()) format_warnings.push_back(engine_kv_problem);
  if (weight_format != "auto") {
    auto w = ParseWeightFormat(weight_format);
    if (!w) return ReportError("fit", w.error().Within("--weight-format"));
    if (auto run = CheckGpuRuns(*gpu, FormatRole::kWeights, *w); !run) {
      format_warnings.push_back(run.error().message());
    }
  } else if (auto run = CheckCheckpointRuns(*gpu, *model); !run) {
    format_warnings.push_back(model->name + "'s own weights: " + run.error().message());
  }
  // Weights stored in a format the GPU has no units for (fp8 before
  // Hopper, nvfp4 before Blackwell) run as a weight-only fallback: they
  // save memory, not compute, as simulate's unsupported_format says.
  std::string fallback_warning;
  {
    std::vector<ElementFormat> stored;
    if (weight_format != "auto") {
      if (auto w = ParseWeightFormat(weight_format)) stored.push_back(*w);
    } else if (auto native = NativePartFormats(*model)) {
      stored = {native->dense, native->other};
      if (model->moe.layers > 0) stored.push_back(native->experts);
    }
    std::vector<std::string> seen;
    for (const ElementFormat& f : stored) {
      const FormatRun run = HowGpuRuns(*gpu, FormatRole::kWeights, f);
      if (!run.runs() || !IsWeightOnlyFallback(f.name, run.ComputedLabel()) ||
          std::find(seen.begin(), seen.end(), f.name) != seen.end()) {
        continue;
      }
      seen.push_back(f.name);
      fallback_warning += std::string(fallback_warning.empty() ? "" : "; ") + f.name +
                          " weights run as " + run.ComputedLabel() + " (" + run.cell.kernel + ")";
    }
    if (!fallback_warning.empty()) {
      fallback_warning = WeightOnlyFallbackWarning(gpu->id, fallback_warning);
    }
  }
  auto context = ParseTokenCount(context_text);
  if (!context) return ReportError("fit", context.error().Within("--context"));
  Tokens reserve_budget = 0;
  double reserve_gib = 0;
  if (reserve_option) {
    reserve_gib = *reserve_option;
  } else if (batched_tokens_option) {
    // The profile run at the budget given, as simulate sizes it.
    auto profile = LoadEngineProfile(engine);
    if (!profile) return ReportError("fit", profile.error().Within("--engine"));
    reserve_budget = batched_tokens;
    reserve_gib = ProfileReserveGib(*profile, batched_tokens, model->hidden_size);
  } else {
    auto r = DefaultReserveGib(engine, *gpu, gpus, model->hidden_size, &reserve_budget);
    if (!r) return ReportError("fit", r.error().Within("--engine"));
    reserve_gib = *r;
  }
  // Where the reserve came from, for the output.
  const std::string reserve_source =
      reserve_option       ? std::string("--reserve-gib")
      : engine == "sglang" ? std::string("sglang's fixed reserve, the same for every model")
                           : engine + "'s profile run at " + FormatWithSeparators(reserve_budget) +
                                 " batched tokens";

  FitRequest request;
  request.model = *model;
  request.kv_format = *kv_format;
  request.engine = engine;
  request.weight_format = weight_format;
  request.context = *context;
  request.batch = batch;
  request.block_size = block_size;
  request.prefill_chunk_tokens = batched_tokens;
  request.deployment.gpu = *gpu;
  request.deployment.tensor_parallel = gpus;
  request.deployment.memory_fraction = memory_fraction;
  request.deployment.activation_reserve_bytes = static_cast<Bytes>(reserve_gib * kBytesPerGiB);
  // A reserve past the memory share leaves a negative capacity: a typo, not
  // a verdict.
  const double share_gib =
      static_cast<double>(gpu->usable_memory_bytes) * memory_fraction / kBytesPerGiB;
  if (reserve_gib >= share_gib) {
    std::ostringstream why;
    if (reserve_option) {
      why << "--reserve-gib: " << reserve_gib << " GiB";
    } else {
      // The reserve the engine's profile run takes (at the budget
      // --max-num-batched-tokens gave, when it did).
      why << (batched_tokens_option ? "--max-num-batched-tokens " +
                                          FormatWithSeparators(*batched_tokens_option) + ": "
                                    : std::string())
          << "the activation reserve (" << reserve_source << "), " << FormatFixed(reserve_gib, 2)
          << " GiB,";
    }
    why << " is not less than the " << FormatFixed(share_gib, 2) << " GiB that --memory-fraction "
        << memory_fraction << " leaves of " << gpu->id << "'s usable memory";
    return ReportError("fit", Error(why.str()));
  }
  // A degree that splits the experts' quantization blocks runs with expert
  // parallelism (vLLM's --enable-expert-parallel), which holds the same
  // weights a GPU: sized, and said.
  if (auto problem = TensorParallelProblem(*model, gpus, /*experts_split=*/false);
      !problem.empty()) {
    return ReportError("fit", Error("--gpus: " + problem));
  }
  const std::string expert_parallel_needed = TensorParallelProblem(*model, gpus);
  auto report = EvaluateFit(request);
  if (!report) return ReportError("fit", report.error());
  const ModelLimitCheck limit = CheckModelLimit(*model, *context, *report, ignore_limit, engine);
  // The shorter context to try stays within the model's limit too.
  FitReport suggest_from = *report;
  if (limit.caps_max) suggest_from.max_context = std::min(report->max_context, limit.limit);
  std::vector<FitAlternative> alternatives = SuggestAlternatives(request, suggest_from);
  // A format no engine runs on the GPU has a size but no deployment: the
  // verdict is "does not run", memory's stays under memory_fits.
  const bool runnable = format_warnings.empty();
  bool fits = report->fits && (ignore_limit || !limit.over) && runnable;
  // Past the model's limit no memory saving makes the request fit: a change
  // that keeps the context does not fit either, and neither does any batch
  // or GPU count (their memory-only answers stay under memory_*).
  const bool refused = limit.over && !ignore_limit;
  auto past_limit = [&](const FitAlternative& a) {
    return !ignore_limit && limit.limit > 0 && a.context > limit.limit;
  };
  // (Not for a format that does not run here: a shorter context keeps it.)
  if (refused && runnable &&
      std::none_of(alternatives.begin(), alternatives.end(),
                   [&](const FitAlternative& a) { return !past_limit(a); })) {
    // The change that does work: the model's own limit.
    FitRequest v = request;
    v.context = limit.limit;
    if (auto r = EvaluateFit(v)) {
      alternatives.push_back(FitAlternative{
          "context " + FormatWithSeparators(limit.limit) + " tokens (the model's max_model_len)",
          r->fits, r->needed_bytes, r->capacity_bytes, v.context});
    }
  }
  // The engine's start-up check: vLLM refuses to start when one sequence
  // of max_model_len tokens does not fit the KV pool
  // (check_enough_kv_cache_memory); SGLang starts and refuses the requests
  // its pool cannot hold. The pool's longest sequence is the longest
  // context at batch 1.
  bool pool_holds_max_model_len = true;
  std::string pool_warning;
  Tokens pool_max_context = report->max_context;
  if (batch != 1) {
    FitRequest one = request;
    one.batch = 1;
    if (auto r = EvaluateFit(one)) pool_max_context = r->max_context_unbounded ? 0 : r->max_context;
  } else if (report->max_context_unbounded) {
    pool_max_context = 0;
  }
  if (!ignore_limit && model->max_model_len > 0 && pool_max_context > 0 &&
      pool_max_context < model->max_model_len) {
    pool_holds_max_model_len = false;
    const std::string held = FormatWithSeparators(pool_max_context);
    pool_warning =
        "a replica's KV pool holds one sequence of at most " + held +
        " tokens, less than the model's max_model_len " +
        FormatWithSeparators(model->max_model_len) +
        (engine == "sglang"
             ? ": SGLang starts and refuses requests longer than its pool holds "
               "(max_req_len = min(context length, pool tokens) - 1)"
             : ": vLLM refuses to start such a deployment (check_enough_kv_cache_memory); "
               "serve with --max-model-len " +
                   std::to_string(pool_max_context) +
                   " or less, or give the KV more memory (more --gpus, narrower KV or "
                   "weight formats)");
  }
  // SGLang serves a request of at most max_req_len - 1 tokens, max_req_len
  // being min(context length, pool tokens) - 1 (docs/engine.md, "model
  // limits"): two fewer than the shorter of the two.
  Tokens sglang_served = 0;  // 0: not SGLang, or nothing bounds it
  if (engine == "sglang" && !ignore_limit) {
    Tokens bound = limit.limit > 0 ? limit.limit : 0;
    if (pool_max_context > 0)
      bound = bound > 0 ? std::min(bound, pool_max_context) : pool_max_context;
    if (bound > 2) sglang_served = bound - 2;
  }
  const bool past_sglang = sglang_served > 0 && *context > sglang_served && !limit.over;
  if (past_sglang) fits = false;
  const std::int64_t max_batch = refused ? 0 : report->max_batch;
  const bool gpus_fit = !refused && report->min_gpus.has_value();
  Tokens max_context = limit.caps_max ? limit.limit : report->max_context;
  const bool sglang_caps_max =
      sglang_served > 0 && (max_context > sglang_served || report->max_context_unbounded);
  if (sglang_caps_max) max_context = sglang_served;

  std::ostringstream text;
  if (format == "json") {
    nlohmann::ordered_json j;
    j["fits"] = fits;
    j["weights_bytes"] = report->weights_bytes;
    j["kv_bytes"] = report->kv_bytes;
    j["capacity_bytes"] = report->capacity_bytes;
    // Unbounded by memory and by no limit (--ignore-model-limit, layers
    // that all slide): null, as memory_max_context, not the search's bound.
    j["max_context"] = report->max_context_unbounded && !limit.caps_max && !sglang_caps_max
                           ? nlohmann::ordered_json(nullptr)
                           : nlohmann::ordered_json(max_context);
    j["max_batch"] = max_batch;
    j["min_gpus"] =
        gpus_fit ? nlohmann::ordered_json(*report->min_gpus) : nlohmann::ordered_json(nullptr);
    j["model"] = model->name;
    j["gpu"] = gpu->id;
    j["gpus"] = gpus;
    j["kv_format"] = kv_format->name;
    j["weight_format"] = report->weight_description;
    j["context"] = *context;
    j["batch"] = batch;
    j["block_size"] = block_size;
    j["prefill_chunk_tokens"] = batched_tokens;
    j["memory_fraction"] = memory_fraction;
    j["reserve_gib"] = reserve_gib;
    j["reserve_source"] = reserve_source;
    j["kv_exact_bytes"] = report->kv_exact_bytes;
    j["needed_bytes"] = report->needed_bytes;
    j["headroom_bytes"] = report->headroom_bytes;
    j["max_context_unbounded"] =
        report->max_context_unbounded && !limit.caps_max && !sglang_caps_max;
    if (sglang_served > 0) j["sglang_max_request_tokens"] = sglang_served;
    j["model_max_context"] = model->max_position_embeddings;
    j["max_model_len"] = limit.limit;
    j["memory_fits"] = report->fits;
    j["runnable"] = runnable;
    j["max_model_len_fits_pool"] = pool_holds_max_model_len;
    // Memory that holds any context has no longest one: null, not the
    // search's 2^30 bound.
    j["memory_max_context"] = report->max_context_unbounded
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(report->max_context);
    j["memory_max_context_unbounded"] = report->max_context_unbounded;
    j["memory_max_batch"] = report->max_batch;
    j["memory_min_gpus"] = report->min_gpus ? nlohmann::ordered_json(*report->min_gpus)
                                            : nlohmann::ordered_json(nullptr);
    j["ignore_model_limit"] = ignore_limit;
    j["defaulted_fields"] = DefaultedFieldsJson(*model);
    j["defaults_source"] = model->defaults_source.empty()
                               ? nlohmann::ordered_json(nullptr)
                               : nlohmann::ordered_json(model->defaults_source);
    j["warnings"] = nlohmann::ordered_json::array();
    if (!limit.warning.empty()) {
      j["warnings"].push_back({{"code", "context_limit"}, {"message", limit.warning}});
    }
    if (!pool_warning.empty()) {
      j["warnings"].push_back({{"code", "context_limit"}, {"message", pool_warning}});
    }
    if (!block_warning.empty()) {
      j["warnings"].push_back({{"code", "block_size_unserved"}, {"message", block_warning}});
    }
    if (!fallback_warning.empty()) {
      j["warnings"].push_back({{"code", "unsupported_format"}, {"message", fallback_warning}});
    }
    for (const std::string& w : format_warnings) {
      j["warnings"].push_back(
          {{"code", "format_not_run"}, {"message", w + " (the sizes are memory's alone)"}});
    }
    if (!expert_parallel_needed.empty()) {
      j["expert_parallel_needed"] = expert_parallel_needed;
    }
    j["per_gpu"] = {{"capacity_bytes", report->capacity_per_gpu_bytes},
                    {"weights_bytes", report->weights_per_gpu_bytes},
                    {"kv_bytes", report->kv_per_gpu_bytes}};
    j["alternatives"] = nlohmann::ordered_json::array();
    for (const FitAlternative& a : alternatives) {
      j["alternatives"].push_back({{"change", a.change},
                                   {"fits", a.fits && !past_limit(a)},
                                   {"memory_fits", a.fits},
                                   {"past_model_limit", past_limit(a)},
                                   {"needed_bytes", a.needed_bytes},
                                   {"capacity_bytes", a.capacity_bytes}});
    }
    text << j.dump(2) << "\n";
  } else {
    const std::string gpus_text =
        gpus == 1 ? "1x " + gpu->id : std::to_string(gpus) + "x " + gpu->id + " (tensor parallel)";
    text << DescribeModel(*model);
    text << "deployment  " << gpus_text << ", " << Gib(gpu->usable_memory_bytes) << " usable each, "
         << FormatPercentOf(memory_fraction) << "% for weights + KV\n";
    if (reserve_gib > 0) {
      text << "reserve     " << FormatFixed(reserve_gib, 2) << " GiB per GPU for activations ("
           << reserve_source << (reserve_option ? "" : "; --reserve-gib 0: memory alone") << ")\n";
    }
    // SGLang's pool keeps every token of most models' sliding layers.
    if (HasWindowedLayers(engine == "sglang" ? SglangPoolModel(*model) : *model)) {
      text << "prefill     " << FormatWithSeparators(batched_tokens)
           << " tokens an iteration (max_num_batched_tokens): each sliding or chunked layer holds "
              "them beside its window for the sequence being prefilled (one of the batch)\n";
    }
    text << "request     " << FormatWithSeparators(batch) << " x " << FormatWithSeparators(*context)
         << " tokens, " << kv_format->name << " KV, " << report->weight_description
         << " weights\n\n";
    Table t({"", "bytes", "GiB", "GB"});
    t.AddRow({"weights", FormatWithSeparators(report->weights_bytes), Gib(report->weights_bytes),
              Gb(report->weights_bytes)});
    t.AddRow({"KV (" + std::to_string(block_size) + "-token blocks)",
              FormatWithSeparators(report->kv_bytes), Gib(report->kv_bytes), Gb(report->kv_bytes)});
    t.AddRow({"needed", FormatWithSeparators(report->needed_bytes), Gib(report->needed_bytes),
              Gb(report->needed_bytes)});
    t.AddRow({"capacity", FormatWithSeparators(report->capacity_bytes), Gib(report->capacity_bytes),
              Gb(report->capacity_bytes)});
    text << t.ToText() << "\n";
    if (!limit.warning.empty()) text << "warning [context_limit]: " << limit.warning << "\n";
    if (!pool_warning.empty()) text << "warning [context_limit]: " << pool_warning << "\n";
    if (!block_warning.empty()) {
      text << "warning [block_size_unserved]: " << block_warning << "\n";
    }
    if (!fallback_warning.empty()) {
      text << "warning [unsupported_format]: " << fallback_warning << "\n";
    }
    for (const std::string& w : format_warnings) {
      text << "warning [format_not_run]: " << w << " (the sizes are memory's alone)\n";
    }
    if (!expert_parallel_needed.empty()) {
      text << "note: runs only with expert parallelism (vLLM --enable-expert-parallel, the same "
              "weights a GPU): without it, "
           << expert_parallel_needed << "\n";
    }
    // The engine's KV formats are its own limit (SGLang's, vLLM's for a
    // latent cache); the others are the GPU's.
    const std::string not_served =
        engine_kv_problem.empty() ? "no engine serves this format on " + gpu->id
        : engine == "sglang"      ? "SGLang does not store this KV format"
                                  : "vLLM does not store this KV format for this model";
    if (!runnable) {
      text << "DOES NOT RUN: " << not_served << " (memory alone "
           << (report->fits ? "would hold it with " + Gib(report->headroom_bytes) + " to spare"
                            : "is short by " + Gib(-report->headroom_bytes))
           << ")\n";
    } else if (past_sglang && report->fits) {
      text << "DOES NOT FIT SGLang's limit: " << FormatWithSeparators(*context)
           << " tokens is past the " << FormatWithSeparators(sglang_served)
           << " it serves (its max_req_len - 1, max_req_len = min(context length, pool tokens) - "
              "1; memory alone would hold it with "
           << Gib(report->headroom_bytes) << " to spare)\n";
    } else if (!fits && report->fits) {
      text << "DOES NOT FIT the model: " << FormatWithSeparators(*context)
           << " tokens is past its max_model_len " << FormatWithSeparators(limit.limit)
           << " (memory alone would hold it with " << Gib(report->headroom_bytes) << " to spare)\n";
    } else if (report->fits) {
      text << "FITS with " << Gib(report->headroom_bytes) << " to spare\n";
    } else {
      text << "DOES NOT FIT: short by " << Gib(-report->headroom_bytes) << " ("
           << Gb(-report->headroom_bytes) << ")\n";
    }
    std::string max_context_text;
    if (sglang_caps_max) {
      max_context_text =
          FormatWithSeparators(max_context) + " tokens (SGLang's max_req_len - 1; memory " +
          (report->max_context_unbounded
               ? std::string("is unbounded")
               : "holds " + FormatWithSeparators(report->max_context) + " tokens") +
          (limit.limit > 0 ? ", the model's max_model_len " + FormatWithSeparators(limit.limit)
                           : std::string()) +
          ")";
    } else if (limit.caps_max) {
      max_context_text = FormatWithSeparators(max_context) +
                         " tokens (the model's max_model_len; memory " +
                         (report->max_context_unbounded
                              ? std::string("is unbounded")
                              : "holds " + FormatWithSeparators(report->max_context) + " tokens") +
                         ")";
    } else {
      max_context_text =
          report->max_context_unbounded ? "unbounded (the footprint stops growing)"
          : report->max_context > 0     ? FormatWithSeparators(report->max_context) + " tokens"
          : batch == 1                  ? std::string("none, one sequence fits no context")
                       : "none, " + FormatWithSeparators(batch) + " sequences fit no context";
    }
    // Weights that leave no room for KV: no context and no batch, and why.
    const std::string no_room = report->weights_bytes >= report->capacity_bytes
                                    ? "none, the weights alone (" + Gib(report->weights_bytes) +
                                          ") leave no room for KV in " + Gib(report->capacity_bytes)
                                    : "";
    if (!no_room.empty() && report->max_context == 0) max_context_text = no_room;
    text << "max context at batch " << FormatWithSeparators(batch) << ": "
         << (runnable ? max_context_text
                      : "none, " + not_served + " (memory alone: " + max_context_text + ")")
         << "\n";
    if (!runnable) {
      // Memory's answers, said to be memory's: no engine runs the format.
      const std::string why = "none, " + not_served;
      text << "max batch at " << FormatWithSeparators(*context) << " tokens: " << why
           << " (memory alone holds " << FormatWithSeparators(report->max_batch) << ")\n";
      text << "fewest GPUs that fit: " << why << " (memory alone: "
           << (report->min_gpus ? std::to_string(*report->min_gpus) : "none up to 64") << ")\n";
    } else if (refused) {
      text << "max batch at " << FormatWithSeparators(*context)
           << " tokens: none, past the model's max_model_len (memory alone holds "
           << FormatWithSeparators(report->max_batch) << ")\n";
      text << "fewest GPUs that fit: none, past the model's max_model_len (memory alone: "
           << (report->min_gpus ? std::to_string(*report->min_gpus) : "none up to 64") << ")\n";
    } else {
      text << "max batch at " << FormatWithSeparators(*context) << " tokens: "
           << (report->max_batch == 0 && !no_room.empty() ? no_room
                                                          : FormatWithSeparators(report->max_batch))
           << "\n";
      text << "fewest GPUs that fit: "
           << (report->min_gpus ? std::to_string(*report->min_gpus) : "none up to 64") << "\n";
    }
    if (!alternatives.empty()) {
      text << "\nwhat would fit instead:\n";
      Table a({"change", "verdict", "needed GiB", "capacity GiB"});
      for (const FitAlternative& alt : alternatives) {
        a.AddRow({alt.change,
                  past_limit(alt) ? "past max_model_len"
                  : alt.fits      ? "fits"
                                  : "does not fit",
                  FormatFixed(static_cast<double>(alt.needed_bytes) / kBytesPerGiB, 2),
                  FormatFixed(static_cast<double>(alt.capacity_bytes) / kBytesPerGiB, 2)});
      }
      text << a.ToText();
    }
  }
  if (auto s = EmitOutput("fit", text.str(), out); !s) return ReportError("fit", s.error());
  return (check && !fits) ? 1 : 0;
}

}  // namespace kvbill::cli
