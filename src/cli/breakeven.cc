// kvbill breakeven: the longest context a deployment serves profitably.
#include "kvbill/cost/breakeven.h"

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cli_util.h"
#include "cli/model_flags.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/hardware/catalog_names.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/model/weight_format.h"
#include "kvbill/report/table.h"
#include "kvbill/util/file.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill breakeven --model M --gpu G [--price OUT_USD_PER_MTOK] [--prices FILE]\n"
    "                        [--input-price USD_PER_MTOK] [--output-tokens 1000] [--kv-format F]\n"
    "                        [--batch B] [--gpus N] [--usd-per-gpu-hour X] [--reserve-gib G]\n"
    "                        [--ignore-model-limit] [--format table|json]\n\n"
    "The longest context a deployment serves profitably at batch one, at batch B and at the\n"
    "batch that fills memory, given what an output token sells for (and an input token, when\n"
    "--input-price is given: then per request of --output-tokens) and what the GPU-hour\n"
    "costs, for the KV format asked for and for fp8 and nvfp4 KV where they are smaller\n"
    "than it and the GPU runs them, up to the model's max_model_len\n"
    "(--ignore-model-limit: up to memory, after vLLM's activation reserve as simulate's\n"
    "pool takes it; --reserve-gib 0: memory alone). Without --price, the median output\n"
    "price of the API offers of the same model in the price sheet (--prices: a LiteLLM\n"
    "model_prices_and_context_window.json or a kvbill sheet; default the bundled one).\n"
    "Roofline decode cost: docs/engine.md; rules: docs/breakeven.md.\n";

std::string Ctx(const BreakevenResult& r) {
  // No context fits at this batch (the weights leave no room for KV): not a
  // question of price.
  if (r.memory_limit == 0) return "does not fit";
  if (r.max_profitable == 0) return "not profitable at any context";
  std::string s = FormatWithSeparators(r.max_profitable);
  // An input price: prompts shorter than min_profitable do not pay for the
  // output's decode.
  if (r.min_profitable > 1) s = FormatWithSeparators(r.min_profitable) + " to " + s;
  if (r.limited_by_memory) s += " (memory limit)";
  if (r.limited_by_model) s += " (model limit)";
  return s;
}

// "$6.45", "past the limit" for a context beyond max_model_len (0: none),
// or "does not fit" past the longest context memory holds at batch one
// (no deployment serves it, so it has no price).
std::string PerMtok(double usd_per_mtok, Tokens ctx, Tokens max_model_len, Tokens memory_limit) {
  if (max_model_len > 0 && ctx > max_model_len) return "past the limit";
  if (ctx > memory_limit) return "does not fit";
  return "$" + FormatFixed(usd_per_mtok, 2);
}

// The price sheet of --prices, or the bundled one.
Result<PriceSheet> LoadSheet(const std::string& path) {
  if (path.empty()) return BundledPriceSheet();
  auto text = ReadFile(path);
  if (!text) return text.error().Within("--prices");
  return ParsePriceSheet(*text, path);
}

// "groq/llama-3.1-8b-instant $0.08, ..." (output prices, $ per million tokens).
std::string OfferNames(const ComparableOffers& c) {
  std::string names;
  for (const ModelPrice* m : c.offers) {
    names += (names.empty() ? "" : ", ") + m->id + " $" +
             FormatFixed(static_cast<double>(m->base.output) / 1e6, 3);
  }
  return names;
}

// Empty when `model` is the catalog's (asked by its name) or its file's
// name resolves to no catalog model, or to one of the same size (within
// 2%: a fine-tune or another export of it); else why the offers found by
// that name are not this model's.
std::string NamedLike(const std::string& asked, const ModelShape& model) {
  if (auto resolved = ResolveModelName(asked); !resolved || *resolved == model.name) return "";
  auto catalog_name = ResolveModelName(model.name);
  if (!catalog_name) return "";
  auto named = LoadModel(*catalog_name);
  if (!named) return "";
  const double mine = static_cast<double>(model.params.Total());
  const double theirs = static_cast<double>(named->params.Total());
  if (std::abs(mine - theirs) <= 0.02 * theirs) return "";
  return "the price sheet's offers named like " + model.name +
         " (its file's or folder's name) sell " + named->name + ", a model of " +
         FormatFixed(theirs / 1e9, 2) + "B parameters, where " + asked + " has " +
         FormatFixed(mine / 1e9, 2) + "B: give --price";
}

}  // namespace

int RunBreakeven(const Args& args) {
  po::options_description options("options");
  ModelFlags model_flags;
  AddModelFlags(options, model_flags);
  std::string gpu_id, kv_name, weight_format, format;
  double price = 0, input_price = -1, usd_per_gpu_hour = -1, memory_fraction = 0.9;
  double bw_eff = 0.65, mfu = 0.6;
  std::optional<double> reserve_gib;
  std::int64_t batch = 32;
  Tokens output_tokens = 1000;
  int gpus = 1;
  std::string prices_path;
  bool ignore_model_limit = false;
  options.add_options()("gpu,g", po::value(&gpu_id)->default_value("h100-sxm"),
                        "catalog id, alias (h100) or nvidia-smi name, or a GPU JSON file")(
      "gpus", po::value(&gpus)->default_value(1), "GPUs per replica (tensor parallel)")(
      "price", po::value(&price),
      "what an output token sells for, $ per million (default: the median of the price "
      "sheet's API offers of the model)")("prices", FileValue(&prices_path),
                                          "price sheet for the default price (LiteLLM or kvbill)")(
      "ignore-model-limit", po::bool_switch(&ignore_model_limit),
      "search past the model's max_model_len (a what-if)")(
      "input-price", po::value(&input_price), "what an input token sells for, $ per million")(
      "output-tokens", po::value(&output_tokens)->default_value(1000),
      "output tokens per request (with --input-price)")(
      "kv-format", po::value(&kv_name)->default_value("bf16"), "KV element format")(
      "weight-format", po::value(&weight_format)->default_value("auto"), "weight format")(
      "batch,b", po::value(&batch)->default_value(32), "the larger batch to report")(
      "usd-per-gpu-hour", po::value(&usd_per_gpu_hour), "default: the GPU catalog's price")(
      "memory-fraction", DoubleValue(&memory_fraction, 0.9), "for weights + KV")(
      "reserve-gib", po::value<double>()->notifier([&](double v) { reserve_gib = v; }),
      "activation reserve per GPU in GiB (default: vLLM's, as simulate and fit)")(
      "bandwidth-efficiency", DoubleValue(&bw_eff, 0.65), "achieved HBM fraction")(
      "compute-efficiency", DoubleValue(&mfu, 0.6), "achieved FLOP/s fraction")(
      "format", po::value(&format)->default_value("table"), "table or json");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "breakeven", kUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json"); !s) {
    return ReportError("breakeven", s.error());
  }
  // At most what a price sheet may list ($100 a token: docs/billing.md).
  if (vm.count("price") && !(price > 0 && price <= 1e8)) {
    return ReportError("breakeven",
                       Error("--price: must be a positive number of dollars per million tokens, "
                             "at most 100,000,000"));
  }
  if (vm.count("input-price") && !(input_price >= 0 && input_price <= 1e8)) {
    return ReportError("breakeven",
                       Error("--input-price: must be a non-negative number of dollars per million "
                             "tokens, at most 100,000,000"));
  }
  // Without an input price the answer is per output token: a request length
  // would be ignored.
  if (!vm["output-tokens"].defaulted() && !vm.count("input-price")) {
    return ReportError("breakeven",
                       Error("--output-tokens: only with --input-price (without it the "
                             "break-even is per output token, whatever the request's length)"));
  }
  // A negative price was silently the catalog's (the default's sentinel).
  // As a GPU file's price (positive: a free GPU has no break-even).
  if (vm.count("usd-per-gpu-hour") && !(usd_per_gpu_hour > 0 && usd_per_gpu_hour <= 1e6)) {
    return ReportError("breakeven", Error("--usd-per-gpu-hour: must be in (0, 1,000,000] dollars"));
  }
  if (batch < 1) return ReportError("breakeven", Error("--batch: must be at least 1"));
  if (gpus < 1) return ReportError("breakeven", Error("--gpus: must be at least 1"));
  if (output_tokens < 1)
    return ReportError("breakeven", Error("--output-tokens: must be positive"));
  for (const auto& [flag, value] : {std::pair<std::string, double>{"bandwidth-efficiency", bw_eff},
                                    {"compute-efficiency", mfu},
                                    {"memory-fraction", memory_fraction}}) {
    if (auto s = CheckShare(flag, value); !s) return ReportError("breakeven", s.error());
  }
  auto model = LoadModelFromFlags(model_flags);
  if (!model) return ReportError("breakeven", model.error());
  auto gpu_name = ResolveGpuName(gpu_id);
  if (!gpu_name) return ReportError("breakeven", gpu_name.error());
  auto gpu = LookupGpu(*gpu_name);
  if (!gpu) return ReportError("breakeven", gpu.error());
  auto kv = ParseElementFormat(kv_name);
  if (!kv) return ReportError("breakeven", kv.error().Within("--kv-format"));
  // "int4" on vLLM: its int4_per_token_head, as fit and simulate size it.
  kv = EngineKvFormat(kv_name, *kv, *model, "vllm");
  if (auto problem = TensorParallelProblem(*model, gpus, /*experts_split=*/false);
      !problem.empty()) {
    return ReportError("breakeven", Error("--gpus: " + problem));
  }

  std::string price_source;  // the table's line naming the offers; empty with --price
  nlohmann::ordered_json price_json;
  if (!vm.count("price")) {
    auto sheet = LoadSheet(prices_path);
    if (!sheet) return ReportError("breakeven", sheet.error());
    const std::string sheet_name = prices_path.empty() ? "the bundled price sheet" : prices_path;
    const ComparableOffers offers = FindComparableOffers(*sheet, model->name);
    // A config read from a file is named by its file: the offers of that
    // name are this model's only if the catalog's model of the name has its
    // size (a Llama-3.1-405B config saved as Llama-3.1-8B.json would sell
    // at the 8B's price).
    if (const std::string named = NamedLike(model_flags.model, *model); !named.empty()) {
      return ReportError("breakeven", Error("--price: not given, and " + named));
    }
    if (offers.offers.empty()) {
      return ReportError(
          "breakeven",
          Error("--price: not given, and " + sheet_name + " has no API offer of " + model->name +
                " to take it from (docs/breakeven.md); give --price, or --prices "
                "with a LiteLLM model_prices_and_context_window.json"));
    }
    price = offers.median_output_usd_per_mtok;
    price_source = "output price $" + FormatFixed(price, 3) + "/Mtok: the median of " +
                   std::to_string(offers.offers.size()) + " API offers of " + model->name + " in " +
                   sheet_name + " (" + OfferNames(offers) + ")";
    price_json = {{"median_of", offers.offers.size()},
                  {"sheet", prices_path.empty() ? "bundled" : prices_path},
                  {"offers", nlohmann::ordered_json::array()}};
    for (const ModelPrice* m : offers.offers) {
      price_json["offers"].push_back(
          {{"id", m->id},
           {"provider", m->provider},
           {"output_usd_per_mtok", static_cast<double>(m->base.output) / 1e6},
           {"input_usd_per_mtok", static_cast<double>(m->base.input) / 1e6}});
    }
  }

  BreakevenQuery q;
  q.fit.model = *model;
  if (!ignore_model_limit) q.max_model_len = model->max_model_len;
  q.fit.weight_format = weight_format;
  q.fit.deployment.gpu = *gpu;
  q.fit.deployment.tensor_parallel = gpus;
  q.fit.deployment.memory_fraction = memory_fraction;
  // The memory limit leaves what simulate's pool leaves: vLLM's activation
  // reserve comes off each GPU first (kvbill fit, docs/fit.md).
  if (reserve_gib && !(*reserve_gib >= 0)) {
    return ReportError("breakeven", Error("--reserve-gib: must be >= 0"));
  }
  double reserve = 0;
  if (reserve_gib) {
    reserve = *reserve_gib;
  } else {
    auto r = DefaultReserveGib("vllm", *gpu, gpus, model->hidden_size);
    if (!r) return ReportError("breakeven", r.error());
    reserve = *r;
  }
  // A reserve past the memory share leaves no memory at all: a typo, not a
  // verdict (as kvbill fit refuses it).
  const double share_gib =
      static_cast<double>(gpu->usable_memory_bytes) * memory_fraction / kBytesPerGiB;
  if (reserve_gib && *reserve_gib >= share_gib) {
    return ReportError(
        "breakeven",
        Error("--reserve-gib: " + FormatFixed(*reserve_gib, 2) + " GiB is not less than the " +
              FormatFixed(share_gib, 2) + " GiB that --memory-fraction " +
              FormatFixed(memory_fraction, 2) + " leaves of " + gpu->id + "'s usable memory"));
  }
  q.fit.deployment.activation_reserve_bytes = static_cast<Bytes>(reserve * kBytesPerGiB);
  // Sliding and chunked layers hold vLLM's prefill chunk beside their window
  // (its default token budget on the GPU, as the reserve), as fit counts it.
  q.fit.prefill_chunk_tokens = DefaultEngineLimits("vllm", *gpu, gpus).max_num_batched_tokens;
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
        CheckGpuRuns(*gpu, FormatRole::kKvCache, *f).ok() && VllmKvProblem(*f, *model).empty())
      formats.push_back(*f);
  }
  nlohmann::ordered_json j;
  j["model"] = model->name;
  j["gpu"] = gpu->id;
  j["gpus"] = gpus;
  j["usd_per_gpu_hour"] = q.usd_per_gpu_hour;
  j["output_usd_per_mtok"] = price;
  if (!price_json.is_null()) j["price_from_offers"] = price_json;
  if (q.input_usd_per_mtok) j["input_usd_per_mtok"] = *q.input_usd_per_mtok;
  j["max_model_len"] = model->max_model_len;
  j["reserve_gib"] = reserve;
  j["model_limit_applied"] = q.max_model_len > 0;
  const EngineLimits limits = DefaultEngineLimits("vllm", *gpu);
  j["kv_formats"] = nlohmann::ordered_json::array();
  Table t({"KV format", "batch 1: longest profitable context",
           "batch " + std::to_string(batch) + ": longest profitable context",
           "batch filling memory (up to " + std::to_string(limits.max_num_seqs) + ")",
           "$/Mtok at 8k (b=1)", "at 32k", "at 128k"});
  // --ignore-model-limit: the longest answer past the model's limit, which
  // no engine serves (a what-if, warned as fit and kv warn it).
  Tokens past_model_limit = 0;
  for (const ElementFormat& f : formats) {
    q.fit.kv_format = f;
    auto one = FindBreakeven(q, 1);
    if (!one) return ReportError("breakeven", one.error());
    auto many = FindBreakeven(q, batch);
    if (!many) return ReportError("breakeven", many.error());
    auto filling = FindBreakevenFillingMemory(q, limits.max_num_seqs);
    if (!filling) return ReportError("breakeven", filling.error());
    for (const BreakevenResult* r : {&*one, &*many, &*filling}) {
      if (ignore_model_limit && model->max_model_len > 0 &&
          r->max_profitable > model->max_model_len) {
        past_model_limit = std::max(past_model_limit, r->max_profitable);
      }
    }
    std::vector<double> per_mtok;
    for (Tokens ctx : {8192, 32768, 131072}) {
      auto c = DecodeCostPerToken(q, ctx, 1);
      if (!c) return ReportError("breakeven", c.error());
      per_mtok.push_back(*c * 1e6);
    }
    t.AddRow(
        {f.name, Ctx(*one), Ctx(*many),
         Ctx(*filling) +
             (filling->max_profitable > 0 ? " (" + std::to_string(filling->batch) + " seqs)" : ""),
         PerMtok(per_mtok[0], 8192, q.max_model_len, one->memory_limit),
         PerMtok(per_mtok[1], 32768, q.max_model_len, one->memory_limit),
         PerMtok(per_mtok[2], 131072, q.max_model_len, one->memory_limit)});
    auto row = [](const BreakevenResult& r) {
      return nlohmann::ordered_json{
          {"batch", r.batch},
          {"max_profitable_context", r.max_profitable},
          {"min_profitable_context", r.min_profitable},
          {"limited_by_memory", r.limited_by_memory},
          {"memory_limit_context", r.memory_limit},
          {"limited_by_model", r.limited_by_model},
          {"fits", r.memory_limit > 0},
          {"not_profitable_at_any_context", r.memory_limit > 0 && r.max_profitable == 0},
          {"usd_per_mtok_at_context_1", r.usd_per_token_at_context_1 * 1e6}};
    };
    // null where the table has no price: past max_model_len, or one
    // sequence of that context does not fit.
    nlohmann::ordered_json decode_prices;
    const std::pair<const char*, Tokens> at[] = {{"8k", 8192}, {"32k", 32768}, {"128k", 131072}};
    for (std::size_t i = 0; i < 3; ++i) {
      const bool past_limit = q.max_model_len > 0 && at[i].second > q.max_model_len;
      decode_prices[at[i].first] = past_limit || at[i].second > one->memory_limit
                                       ? nlohmann::ordered_json(nullptr)
                                       : nlohmann::ordered_json(per_mtok[i]);
    }
    j["kv_formats"].push_back({{"kv_format", f.name},
                               {"batch_1", row(*one)},
                               {"batch_n", row(*many)},
                               {"batch_filling_memory", row(*filling)},
                               {"decode_usd_per_mtok_batch_1", decode_prices}});
  }
  // The asked KV format, or the weights, where no engine runs them on the
  // GPU: priced at their bytes, but no deployment of them exists (as fit
  // warns).
  std::vector<std::string> not_run;
  if (auto runs = CheckGpuRuns(*gpu, FormatRole::kKvCache, *kv); !runs) {
    not_run.push_back(runs.error().message() + " (its row prices the bytes alone)");
  } else if (const std::string problem = EngineKvProblem("vllm", *kv, *model); !problem.empty()) {
    not_run.push_back(problem + " (its row prices the bytes alone)");
  }
  if (weight_format == "auto") {
    if (auto runs = CheckCheckpointRuns(*gpu, *model); !runs) {
      not_run.push_back(model->name + "'s own weights: " + runs.error().message() +
                        " (every row prices the bytes alone)");
    }
  } else if (auto w = ParseWeightFormat(weight_format); w) {
    if (auto runs = CheckGpuRuns(*gpu, FormatRole::kWeights, *w); !runs) {
      not_run.push_back(runs.error().message() + " (every row prices the bytes alone)");
    }
  }
  j["warnings"] = nlohmann::ordered_json::array();
  std::string limit_warning;
  if (past_model_limit > 0) {
    limit_warning = "a profitable context of " + FormatWithSeparators(past_model_limit) +
                    " tokens is beyond " + model->name + "'s max_model_len " +
                    FormatWithSeparators(model->max_model_len) +
                    " (--ignore-model-limit: memory alone, a what-if no engine serves)";
    j["warnings"].push_back({{"code", "context_limit"}, {"message", limit_warning}});
  }
  for (const std::string& w : not_run) {
    j["warnings"].push_back({{"code", "format_not_run"}, {"message", w}});
  }
  // Every row is the spec-sheet roofline, not the calibrated cost model
  // simulate uses: say so where the answer is read, not only in the docs.
  const std::string roofline =
      "every cost here is the spec-sheet roofline at " + FormatPercentOf(bw_eff) + "% of " +
      gpu->id + "'s HBM bandwidth and " + FormatPercentOf(mfu) +
      "% of its FLOP/s (--bandwidth-efficiency, --compute-efficiency), not the calibrated cost "
      "model `kvbill simulate` prices with: it can be off either way: at batch 1 it streams "
      "the weights slower than the measured kernels (Qwen3-8B on one H100 breaks even at "
      "$6.20/Mtok near 9,000 tokens here, about 15,000 in simulate), and where the GPU "
      "saturates (large batches, MoE) it is faster, leaving out the engine's overheads; replay "
      "a workload with simulate for a calibrated price (docs/breakeven.md)";
  j["warnings"].push_back({{"code", "uncalibrated"}, {"message", roofline}});
  if (format == "json") {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (!limit_warning.empty()) std::cout << "warning [context_limit]: " << limit_warning << "\n";
  for (const std::string& w : not_run) std::cout << "warning [format_not_run]: " << w << "\n";
  std::cout << "warning [uncalibrated]: " << roofline << "\n";
  std::cout << "model " << model->name << " on " << gpus << "x " << gpu->id << " at $"
            << FormatFixed(q.usd_per_gpu_hour, 2) << "/GPU-hour; output sells at $"
            << FormatFixed(price, 2) << "/Mtok";
  if (q.input_usd_per_mtok) {
    std::cout << ", input at $" << FormatFixed(*q.input_usd_per_mtok, 2) << "/Mtok ("
              << output_tokens << " output tokens per request)";
  }
  std::cout << "\n";
  if (!price_source.empty()) std::cout << price_source << "\n";
  if (model->max_model_len == 0) {
    std::cout << model->name << "'s config gives no max_model_len: contexts up to memory\n";
  } else {
    std::cout << "contexts up to " << model->name << "'s max_model_len "
              << FormatWithSeparators(model->max_model_len)
              << (q.max_model_len > 0 ? "" : " ignored (--ignore-model-limit)") << "\n";
  }
  std::cout << "memory: " << FormatPercentOf(memory_fraction)
            << "% of each GPU for weights + KV, less "
            << (reserve_gib ? FormatFixed(reserve, 2) + " GiB of activation reserve (--reserve-gib)"
                            : FormatFixed(reserve, 2) +
                                  " GiB of vLLM's activation reserve, as simulate's pool "
                                  "(--reserve-gib 0: memory alone)")
            << "\n";
  std::cout << "\n"
            << t.ToText()
            << (q.input_usd_per_mtok
                    ? "\nA context c is profitable when a request of c prompt tokens and the "
                      "output tokens earns at least\nits prefill and decode; \"A to B\": prompts "
                      "shorter than A do not pay for the output's decode;\n"
                    : "\nA context is profitable when decoding at it costs no more than the token "
                      "sells for;\n")
            << "\"memory limit\": profitable up to the longest context that fits; "
               "\"model limit\": up to max_model_len;\n\"not profitable at any context\": "
               "the weights alone cost more per token than the price;\n\"does not fit\": no "
               "context fits at that batch (kvbill fit says why).\n";
  return 0;
}

}  // namespace kvbill::cli
