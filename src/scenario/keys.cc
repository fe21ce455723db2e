// The table of scenario keys (keys.h) and the domains its rows name.
#include "scenario/keys.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/cost/provider_cache.h"
#include "kvbill/hardware/catalog_names.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/weight_format.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/warnings.h"
#include "kvbill/trace/generator.h"
#include "kvbill/trace/importers.h"
#include "kvbill/util/names.h"
#include "kvbill/util/units.h"
#include "util/json_input.h"

namespace kvbill::scenario_keys {

std::string Source::Resolve(const std::string& path) const {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (directory_ / p).lexically_normal().string();
}

std::string Key::Name() const {
  const std::string p = pointer;
  return p.substr(p.rfind('/') + 1);
}

std::string Key::Parent() const {
  const std::string p = pointer;
  return p.substr(0, p.rfind('/'));
}

std::string Show(const json& value) {
  // At most 40 characters: a longer value shows its first 37 and "...".
  std::string text = json_input::Quote(value, 41);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

std::string Quote(const std::string& text) { return "\"" + text + "\""; }

bool IsFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

namespace {

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

// ---- Domains: a string value checked against a catalog or the file system.

Status KvFormat(const Source& source, const std::string& pointer, std::string* value) {
  if (*value == "auto") return OkStatus();  // the model's dtype: rules.cc
  if (auto kv = ParseElementFormat(*value); !kv) return source.Bad(pointer, kv.error().message());
  return OkStatus();
}

Status ProfileName(const Source& source, const std::string& pointer, std::string* value) {
  if (LoadEngineProfile(*value).ok()) return OkStatus();  // a bundled name
  const std::string path = source.Resolve(*value);
  auto profile = LoadEngineProfile(path);
  if (!profile) return source.Bad(pointer, profile.error().message());
  *value = path;
  return OkStatus();
}

Status WeightFormat(const Source& source, const std::string& pointer, std::string* value) {
  if (*value == "auto") return OkStatus();
  if (auto w = ParseWeightFormat(*value); !w) return source.Bad(pointer, w.error().message());
  return OkStatus();
}

std::string CatalogModelNames() {
  std::string names;
  for (const CatalogModel& m : ModelCatalog()) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

// A catalog model, else a config.json path relative to the scenario.
Status ModelName(const Source& source, const std::string& pointer, std::string* value) {
  const auto& catalog = ModelCatalog();
  if (std::any_of(catalog.begin(), catalog.end(),
                  [&](const CatalogModel& m) { return m.name == *value; })) {
    return OkStatus();
  }
  const std::string path = source.Resolve(*value);
  if (!IsFile(path)) {
    // The names the command line takes: any case, a bundled model's Hugging
    // Face repo id (not a path relative to where kvbill runs: a scenario's
    // paths are relative to the scenario).
    if (!IsFile(*value) && !IsDirectory(*value)) {
      if (auto name = ResolveModelName(*value, ""); name) {
        *value = *name;
        return OkStatus();
      }
    }
    // A name that reads as a file (config.json) is one that is not there.
    if (value->ends_with(".json")) {
      return source.Bad(pointer, "no such file " + Quote(path) + " (a model's config.json)");
    }
    std::vector<std::string> candidates;
    for (const CatalogModel& m : catalog) candidates.push_back(m.name);
    for (const NameAlias& id : ModelRepoIds()) candidates.emplace_back(id.alias);
    const std::string hint = DidYouMean(*value, candidates);
    return source.Bad(pointer,
                      "unknown model " + Quote(*value) + (hint.empty() ? "" : "; " + hint) +
                          " (catalog: " + CatalogModelNames() + "; or a path to a config.json)");
  }
  *value = path;
  return OkStatus();
}

// A catalog GPU, else a GPU JSON file relative to the scenario.
Status Gpu(const Source& source, const std::string& pointer, std::string* value) {
  const auto& catalog = GpuCatalog();
  if (std::any_of(catalog.begin(), catalog.end(),
                  [&](const GpuSpec& g) { return g.id == *value; })) {
    return OkStatus();
  }
  const std::string path = source.Resolve(*value);
  if (!IsFile(path)) {
    // The names the command line takes: any case, short aliases (h100), the
    // names nvidia-smi prints.
    if (!IsFile(*value) && !IsDirectory(*value)) {
      if (auto id = ResolveGpuName(*value, ""); id) {
        *value = *id;
        return OkStatus();
      }
    }
    std::string ids;
    std::vector<std::string> candidates;
    for (const GpuSpec& g : catalog) {
      ids += (ids.empty() ? "" : ", ") + g.id;
      candidates.push_back(g.id);
    }
    for (const NameAlias& a : GpuAliases()) candidates.emplace_back(a.alias);
    const std::string hint = DidYouMean(*value, candidates);
    return source.Bad(pointer, "unknown GPU " + Quote(*value) + (hint.empty() ? "" : "; " + hint) +
                                   " (catalog: " + ids + "; or a path to a GPU JSON file)");
  }
  auto gpu = LookupGpu(path);
  if (!gpu) return gpu.error().Within(source.name() + "#" + pointer);
  *value = path;
  return OkStatus();
}

// A trace path: resolved now, opened when the simulation runs.
Status TraceFile(const Source& source, const std::string&, std::string* value) {
  *value = source.Resolve(*value);
  return OkStatus();
}

Status GeneratorPreset(const Source& source, const std::string& pointer, std::string* value) {
  auto preset = FindGeneratorPreset(*value);
  if (!preset) return preset.error().Within(source.name() + "#" + pointer);
  return OkStatus();
}

Status PricedModel(const Source& source, const std::string& pointer, std::string* value) {
  auto sheet = BundledPriceSheet();
  if (!sheet) return sheet.error();
  if (sheet->Find(*value) == nullptr) {
    return source.Bad(pointer,
                      "no price for model " + Quote(*value) + " in the bundled price sheet");
  }
  return OkStatus();
}

std::vector<std::string> TraceFormatNames() {
  std::vector<std::string> names = {"auto"};
  const std::string list = TraceFormatChoices();
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t bar = std::min(list.find('|', start), list.size());
    names.push_back(list.substr(start, bar - start));
    start = bar + 1;
  }
  return names;
}

// ---- Entries of the free-form maps.

// "model.set": config key -> any JSON value (null removes the key).
Status ModelSetEntry(const Source& source, const std::string& key, const json& value,
                     const std::string& pointer, Scenario* s) {
  std::string name = key;
  if (name.starts_with("text_config.")) name = name.substr(std::string_view("text_config.").size());
  if (name.empty() || name.find('.') != std::string::npos) {
    return source.Bad(pointer, "expected a top-level key of the text config");
  }
  s->model.set[key] = value.dump();
  return OkStatus();
}

// "budgets": metric -> {"max": x} and/or {"min": y}.
Status BudgetEntry(const Source& source, const std::string& metric, const json& value,
                   const std::string& pointer, Scenario* s) {
  if (!IsBudgetMetric(metric)) {
    const std::string hint = DidYouMean(metric, BudgetMetricNames());
    if (metric.starts_with("warnings.")) {
      std::string codes;
      for (const std::string& code : WarningCodes()) codes += (codes.empty() ? "" : ", ") + code;
      return source.Bad(pointer, "unknown warning code \"" + metric.substr(9) + "\"" +
                                     (hint.empty() ? "" : "; " + hint) + " (warnings.<code>, " +
                                     "the codes: " + codes + ")");
    }
    return source.Bad(pointer, "unknown metric" + (hint.empty() ? "" : "; " + hint) + " (one of " +
                                   BudgetMetricChoices() + ")");
  }
  if (!value.is_object()) return source.Bad(pointer, "must be an object, got " + Show(value));
  Budget b;
  b.metric = metric;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() != "max" && it.key() != "min") {
      return source.Bad(pointer + "/" + json_input::EscapePointerKey(it.key()), "unknown key");
    }
  }
  for (const char* limit : {"max", "min"}) {
    auto it = value.find(limit);
    if (it == value.end()) continue;
    if (!it->is_number() || !std::isfinite(it->get<double>())) {
      return source.Bad(pointer + "/" + limit, "must be a number, got " + Show(*it));
    }
    (std::string_view(limit) == "max" ? b.max : b.min) = it->get<double>();
  }
  if (!b.max && !b.min) return source.Bad(pointer, "needs \"max\" or \"min\"");
  if (b.max && b.min && *b.min > *b.max) {
    return source.Bad(pointer, "\"min\" " + Show(value["min"]) + " is above \"max\" " +
                                   Show(value["max"]) + ": no run can pass");
  }
  // Every metric is a count, a size, a time, a price or a share: none is
  // below 0, and hit_rate none above 1.
  if (b.max && *b.max < 0) {
    return source.Bad(pointer + "/max", "is below 0, which no " + metric + " is: no run can pass");
  }
  if (metric == "hit_rate" && b.min && *b.min > 1) {
    return source.Bad(pointer + "/min", "is above 1, which no hit_rate is: no run can pass");
  }
  // A run raises each warning code once at most: its count is 0 or 1.
  if (metric.starts_with("warnings.") && b.min && *b.min > 1) {
    return source.Bad(pointer + "/min",
                      "is above 1, and a run raises each warning once at most (its count is 0 "
                      "or 1): no run can pass");
  }
  s->budgets.push_back(b);
  return OkStatus();
}

// "slo": latency metric -> the most it may be, in seconds.
Status SloEntry(const Source& source, const std::string& metric, const json& value,
                const std::string& pointer, Scenario* s) {
  const std::vector<std::string> names = SloMetricNames();
  if (std::find(names.begin(), names.end(), metric) == names.end()) {
    std::string hint = DidYouMean(metric, names);
    return source.Bad(pointer, "unknown latency metric" + (hint.empty() ? "" : "; " + hint) +
                                   " (ttft_s, tpot_s, queue_s or completion_s, each ."
                                   "{mean,p50,p90,p99,max})");
  }
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0) {
    return source.Bad(pointer, "must be a positive number of seconds, got " + Show(value));
  }
  s->slo.push_back(SloTarget{metric, value.get<double>()});
  return OkStatus();
}

// "sweep": JSON pointer into the scenario -> non-empty list of distinct values.
Status SweepEntry(const Source& source, const std::string& path, const json& value,
                  const std::string& pointer, Scenario* s) {
  if (path.empty() || path[0] != '/' || path.starts_with("/sweep") ||
      path.starts_with("/budgets")) {
    return source.Bad(pointer,
                      "must be a JSON pointer into the scenario outside /sweep and /budgets "
                      "(a sweep varies the run, not its own axes or the budgets), like "
                      "\"/kv_format\"");
  }
  if (!value.is_array() || value.empty()) {
    return source.Bad(pointer, "must be a non-empty list of values, got " + Show(value));
  }
  // One axis inside another ("/engine" and "/engine/block_size") would have
  // one overwrite what the other set, so a point would not be what it says.
  for (const SweepAxis& other : s->sweep) {
    const std::string& outer = other.path.size() < path.size() ? other.path : path;
    const std::string& inner = other.path.size() < path.size() ? path : other.path;
    if (inner.starts_with(outer) && (inner.size() == outer.size() || inner[outer.size()] == '/')) {
      return source.Bad(pointer, "overlaps the axis \"" + other.path +
                                     "\": one would overwrite what the other sets");
    }
  }
  SweepAxis axis;
  axis.path = path;
  for (std::size_t i = 0; i < value.size(); ++i) {
    // A value twice would run the same points twice, rows a reader takes
    // for two settings; equal as JSON (1 and 1.0 too, as the schema's
    // uniqueItems has it).
    for (std::size_t j = 0; j < i; ++j) {
      if (value[j] == value[i]) {
        return source.Bad(pointer + "/" + std::to_string(i),
                          "repeats the value " + value[i].dump());
      }
    }
    axis.values.push_back(value[i].dump());
  }
  s->sweep.push_back(axis);
  // Past kMaxSweepPoints the sweep is refused, naming its axes' sizes.
  if (SweepPointCount(s->sweep) > kMaxSweepPoints) {
    std::string product;
    for (const SweepAxis& a : s->sweep) {
      product += (product.empty() ? "" : " x ") + std::to_string(a.values.size());
    }
    return source.Bad(pointer, "the sweep's axes make more than " +
                                   FormatWithSeparators(kMaxSweepPoints) + " points (" + product +
                                   " values): split it into several scenarios, or sweep fewer "
                                   "values");
  }
  return OkStatus();
}

// ---- JSON Schemas of the maps' values (schema.cc).

json ModelSetSchema() {
  return {{"type", "object"}, {"propertyNames", {{"pattern", "^(text_config\\.)?[^.]+$"}}}};
}

json BudgetsSchema() {
  json names = json::array();
  for (const std::string& n : BudgetMetricNames()) names.push_back(n);
  return {{"type", "object"},
          {"propertyNames", {{"enum", names}}},
          {"additionalProperties",
           {{"type", "object"},
            {"properties", {{"max", {{"type", "number"}}}, {"min", {{"type", "number"}}}}},
            {"additionalProperties", false},
            {"minProperties", 1}}}};
}

json SloSchema() {
  json names = json::array();
  for (const std::string& n : SloMetricNames()) names.push_back(n);
  return {{"type", "object"},
          {"propertyNames", {{"enum", names}}},
          {"additionalProperties", {{"type", "number"}, {"exclusiveMinimum", 0}}}};
}

json SweepSchema() {
  return {{"type", "object"},
          {"propertyNames", {{"pattern", "^/(?!sweep|budgets)"}}},
          {"additionalProperties", {{"type", "array"}, {"minItems", 1}, {"uniqueItems", true}}}};
}

// ---- Fields that are not a plain member.

Field PricingSection() {
  return Field{[](Scenario& s, const json&) { s.pricing.emplace(); }, nullptr};
}

// deployment.speculative: present = on.
Field SpeculativeSection() {
  return Field{[](Scenario& s, const json&) { s.deployment.speculative.emplace(); }, nullptr};
}

template <auto Member>
Field InSpeculative() {
  return Field{
      [](Scenario& s, const json& v) { StoreValue((*s.deployment.speculative).*Member, v); },
      [](const Scenario&) { return LoadValue(ScenarioSpeculative{}.*Member); }};
}

}  // namespace

// The rows. Sections come before their members; within a section the
// scalars are read first, then subsections and maps, in row order.
const std::vector<Key>& ScenarioKeys() {
  using D = ScenarioDeployment;
  using E = ScenarioEngine;
  using C = ScenarioPrefixCache;
  using P = ContextPolicyParams;
  using T = ScenarioTrace;
  using R = ScenarioPricing;
  static const std::vector<Key> keys = {
      {.pointer = "/$schema",
       .type = Type::kString,
       .meaning = "the JSON Schema that editors check the file against (`kvbill scenario schema`); "
                  "kvbill does not read it",
       .default_text = "none"},
      {.pointer = "/name",
       .type = Type::kString,
       .meaning = "label in reports",
       .field = Top<&Scenario::name>(),
       .default_text = "the file stem (`runs/fp8.json` → `fp8`)"},
      {.pointer = "/kv_format",
       .type = Type::kString,
       .meaning = "KV cache element format: any name of [formats.md](formats.md) (`bf16`, `fp16`, "
                  "`fp8`, `fp8-e5m2`, `nvfp4`, `int4`, `int4-g64`, ...), or `auto`: what vLLM's "
                  "`auto` stores, the KV format the checkpoint's quantization config declares "
                  "(fp8 for an 8-bit float `kv_cache_scheme` or `kv_cache_quant_algo` FP8), else "
                  "the model's dtype (its config's `torch_dtype`)",
       .field = Top<&Scenario::kv_format>(),
       .domain = KvFormat,
       .vllm = "kv_cache_dtype",
       .vllm_values = {{"auto", "auto"},
                       {"float16", "fp16"},
                       {"bfloat16", "bf16"},
                       {"fp8", "fp8"},
                       {"fp8_e4m3", "fp8-e4m3"},
                       {"fp8_e5m2", "fp8-e5m2"},
                       {"fp8_inc", "fp8-e4m3"},
                       {"fp8_per_token_head", "fp8-per-token-head"},
                       {"nvfp4", "nvfp4"},
                       {"nvfp4_4over6", "nvfp4"},
                       {"fp8_ds_mla", nullptr},
                       {"nvfp4_ds_mla", nullptr},
                       {"int8", nullptr},
                       {"int8_per_token_head", nullptr},
                       {"int4_per_token_head", "int4"},
                       {"turboquant_k8v4", nullptr},
                       {"turboquant_4bit_nc", nullptr},
                       {"turboquant_k3v4_nc", nullptr},
                       {"turboquant_3bit_nc", nullptr}}},
      {.pointer = "/weight_format",
       .type = Type::kString,
       .meaning = "weight element format; `auto` = as the model's config stores them "
                  "(docs/models.md), else a format name",
       .field = Top<&Scenario::weight_format>(),
       .domain = WeightFormat},
      {.pointer = "/seed",
       .type = Type::kUnsigned,
       .meaning = "seeds every random draw of the run (the trace generator)",
       .field = Top<&Scenario::seed>()},
      {.pointer = "/notes",
       .type = Type::kText,
       .meaning = "for people: what the scenario is, where it came from "
                  "(`kvbill scenario from-vllm` lists here the flags it could not express); "
                  "kvbill does not read it",
       .default_text = "none"},

      {.pointer = "/model",
       .type = Type::kSection,
       .meaning = "the model: a name, or an object with what-if edits of its config",
       .default_text = "`\"qwen3-8b\"`",
       .type_text = "a model name or {\"name\": ..., \"set\": {...}}",
       .shorthand = "name",
       .doc_section = "model"},
      {.pointer = "/model/name",
       .type = Type::kString,
       .meaning = "a catalog name (`kvbill models`, in any case), a bundled model's Hugging Face "
                  "repo id (`Qwen/Qwen3-8B`), or the path of a Hugging Face `config.json` "
                  "(relative to the scenario)",
       .field = In<&Scenario::model, &ScenarioModel::name>(),
       .domain = ModelName},
      {.pointer = "/model/set",
       .type = Type::kMap,
       .meaning = "config keys to override before the config is interpreted, as `--set "
                  "key=value` does: any JSON value, `null` removes the key; keys are top-level "
                  "keys of the text config, a leading `text_config.` is allowed",
       .entry = ModelSetEntry,
       .schema = ModelSetSchema,
       .default_text = "`{}`"},
      {.pointer = "/model/text_only",
       .type = Type::kBool,
       .meaning = "leave a multimodal model's vision and audio towers out of the weights (a "
                  "server that never loads them); `false` counts them, as a server loading the "
                  "whole checkpoint does",
       .field = In<&Scenario::model, &ScenarioModel::text_only>(),
       .vllm = "language_model_only"},

      {.pointer = "/deployment",
       .type = Type::kSection,
       .meaning = "the GPUs and what they achieve",
       .doc_section = "deployment"},
      {.pointer = "/deployment/gpu",
       .type = Type::kString,
       .meaning = "a catalog id ([hardware.md](hardware.md), `kvbill gpus`), a short alias "
                  "(`h100`) or the name nvidia-smi prints, or the path of a GPU JSON file of the "
                  "catalog's shape (relative to the scenario)",
       .field = In<&Scenario::deployment, &D::gpu>(),
       .domain = Gpu},
      {.pointer = "/deployment/gpus_per_replica",
       .type = Type::kInteger,
       .meaning = "tensor-parallel degree: GPUs that hold one copy of the model",
       .field = In<&Scenario::deployment, &D::gpus_per_replica>(),
       .unit = "GPUs",
       .vllm = "tensor_parallel_size"},
      {.pointer = "/deployment/expert_parallel",
       .type = Type::kInteger,
       .meaning = "expert-parallel degree of MoE layers: the routed experts are split over this "
                  "many GPUs of a replica, whole experts per GPU, instead of every expert over "
                  "all of them (vLLM's `--enable-expert-parallel` makes it `gpus_per_replica`); "
                  "1 or `gpus_per_replica`, and MoE models only, at most their routed experts "
                  "(each GPU holds at least one)",
       .field = In<&Scenario::deployment, &D::expert_parallel>(),
       .unit = "GPUs"},
      {.pointer = "/deployment/expert_dispatch",
       .type = Type::kChoice,
       .meaning = "with `expert_parallel` above 1: how tokens reach experts on other GPUs "
                  "([engine.md](engine.md#parallelism)); `all_to_all` on vLLM only with "
                  "`replicas` above 1, as vLLM dispatches so only with data parallelism",
       .field = In<&Scenario::deployment, &D::expert_dispatch>(),
       .choices = {{"all_reduce",
                    "every GPU routes every token to its own experts; the layer's all-reduce "
                    "sums the outputs (vLLM and SGLang without data-parallel attention)"},
                   {"all_to_all",
                    "each GPU sends its share of the tokens to the experts' GPUs and back by "
                    "all-to-all, then gathers the layer's output (DeepEP-style dispatch; "
                    "attention stays tensor-parallel)"}},
       .what = "expert dispatch"},
      {.pointer = "/deployment/mxfp4_moe_kernel",
       .type = Type::kChoice,
       .meaning = "on vLLM: the kernel of MXFP4 routed experts (gpt-oss), which vLLM chooses by "
                  "the packages installed on Hopper "
                  "([engine.md](engine.md#mxfp4-experts-on-hopper-triton-or-marlin)); no effect "
                  "on other experts, nor on other GPUs, whose one kernel vLLM runs (`triton` is "
                  "refused there but on AMD CDNA, where it is that kernel)",
       .field = In<&Scenario::deployment, &D::mxfp4_moe_kernel>(),
       .choices = {{"auto", "vLLM's own choice today: the OpenAI Triton kernels on Hopper"},
                   {"triton",
                    "the OpenAI Triton MoE kernels (triton_kernels' matmul_ogs), vLLM's on "
                    "Hopper from v0.12.0, which builds them in"},
                   {"marlin",
                    "Marlin's weight-only FP4 MoE (W4A16): vLLM before v0.12.0, which did not "
                    "install triton_kernels, or VLLM_MXFP4_USE_MARLIN=1"}},
       .what = "MXFP4 MoE kernel"},
      {.pointer = "/deployment/replicas",
       .type = Type::kInteger,
       .meaning = "independent copies, each with its own KV pool and prefix cache (vLLM's "
                  "`--data-parallel-size`)",
       .field = In<&Scenario::deployment, &D::replicas>(),
       .max = 65536},
      {.pointer = "/deployment/memory_fraction",
       .type = Type::kNumber,
       .meaning = "share of each GPU's usable memory the engine may use (vLLM's "
                  "gpu_memory_utilization, SGLang's mem_fraction_static)",
       .field = In<&Scenario::deployment, &D::memory_fraction>(),
       .range = Range::kFraction,
       .least = 0.01,
       .nullable = true,
       .default_text = "0.9 on vLLM; on SGLang its own `mem_fraction_static` for the GPU, the "
                       "tensor-parallel degree and the token budget (0.835 on one H100: "
                       "[engine.md](engine.md#batching-sglang))",
       .vllm = "gpu_memory_utilization"},
      {.pointer = "/deployment/engine",
       .type = Type::kChoice,
       .meaning =
           "the serving engine: its scheduler and its fitted cost profile "
           "([engine.md](engine.md#the-calibrated-cost-model), [validation.md](validation.md))",
       .field = In<&Scenario::deployment, &D::engine>(),
       .choices = {{"vllm", "vLLM V1 (continuous batching, chunked prefill, decodes first)"},
                   {"sglang",
                    "SGLang (prefill batches apart from and ahead of decodes, admission that "
                    "reserves future output, its overlap scheduler)"}},
       .what = "engine"},
      {.pointer = "/deployment/profile",
       .type = Type::kString,
       .meaning = "another engine profile: a bundled name or the path of a profile JSON file "
                  "(`kvbill calibrate -o` writes one)",
       .field = In<&Scenario::deployment, &D::profile>(),
       .domain = ProfileName,
       .default_text = "the engine's bundled profile"},
      {.pointer = "/deployment/async_scheduling",
       .type = Type::kBool,
       .meaning = "the engine schedules the next iteration while the GPU runs this one, so CPU "
                  "time overlaps GPU time (with a speculative draft on vLLM the CPU overlaps the "
                  "draft only, docs/engine.md); `false` models vLLM before v0.14 or "
                  "`--no-async-scheduling`",
       .field = In<&Scenario::deployment, &D::async_scheduling>(),
       .nullable = true,
       .default_text = "the engine's: vLLM on (its default from v0.14) unless it drafts by "
                       "n-gram, SGLang on unless it speculates",
       .vllm = "async_scheduling"},
      {.pointer = "/deployment/activation_reserve_gib",
       .type = Type::kNumber,
       .meaning = "per GPU, memory held back from the KV pool for activations, CUDA graphs and "
                  "buffers",
       .field = In<&Scenario::deployment, &D::activation_reserve_gib>(),
       .range = Range::kNonNegative,
       .most = 1e6,
       .nullable = true,
       .unit = "GiB",
       .default_text = "from the engine profile (what its profiling run reserves for the token "
                       "budget)"},
      {.pointer = "/deployment/usd_per_gpu_hour",
       .type = Type::kNumber,
       .meaning = "rental price of one GPU",
       .field = In<&Scenario::deployment, &D::usd_per_gpu_hour>(),
       .range = Range::kPositive,
       .most = 1e6,
       .nullable = true,
       .unit = "USD per GPU-hour",
       .default_text = "the GPU catalog's price"},
      {.pointer = "/deployment/billing",
       .type = Type::kChoice,
       .meaning = "how the GPU time is paid for ([billing.md](billing.md#idle-time))",
       .field = In<&Scenario::deployment, &D::billing>(),
       .choices = {{"dedicated",
                    "GPUs rented around the clock: busy and idle time billed, idle on its own "
                    "line"},
                   {"busy", "a shared or serverless pool: only busy GPU time billed"},
                   {"amortized",
                    "busy and idle time billed, idle spread over the tasks in proportion to "
                    "their busy GPU time"}},
       .what = "billing"},
      {.pointer = "/deployment/bandwidth_efficiency",
       .type = Type::kNumber,
       .meaning = "achieved share of peak HBM bandwidth; setting it (or compute_efficiency) prices "
                  "iterations with the spec-sheet roofline instead of the calibrated model",
       .field = In<&Scenario::deployment, &D::bandwidth_efficiency>(),
       .range = Range::kFraction,
       .least = 0.01,
       .nullable = true,
       .default_text = "the calibrated model (0.65 under the roofline)"},
      {.pointer = "/deployment/compute_efficiency",
       .type = Type::kNumber,
       .meaning = "achieved share of peak dense FLOP/s (MFU); setting it selects the roofline, as "
                  "bandwidth_efficiency does",
       .field = In<&Scenario::deployment, &D::compute_efficiency>(),
       .range = Range::kFraction,
       .least = 0.01,
       .nullable = true,
       .default_text = "the calibrated model (0.6 under the roofline)"},
      {.pointer = "/deployment/iteration_overhead_s",
       .type = Type::kNumber,
       .meaning = "CPU time of every engine iteration (scheduling, input preparation, launches)",
       .field = In<&Scenario::deployment, &D::iteration_overhead_s>(),
       .range = Range::kNonNegative,
       .most = 60,
       .nullable = true,
       .unit = "s",
       .default_text = "from the engine profile (0 under the roofline)"},
      {.pointer = "/deployment/speculative",
       .type = Type::kSection,
       .meaning = "speculative decoding: a draft proposes k tokens, the model verifies them in "
                  "one step ([engine.md](engine.md#speculative-decoding)); absent or `null` = off, "
                  "`\"eagle\"` stands for `{\"method\": \"eagle\"}`",
       .field = SpeculativeSection(),
       .nullable = true,
       .default_text = "none (off)",
       .type_text = "a method name or an object",
       .shorthand = "method",
       .doc_section = "deployment/speculative"},
      {.pointer = "/deployment/speculative/method",
       .type = Type::kChoice,
       .meaning = "how drafts are made; defaults of k and α per method, with their sources, in "
                  "[engine.md](engine.md#speculative-decoding)",
       .field = InSpeculative<&ScenarioSpeculative::method>(),
       .choices = {{"draft_model",
                    "a smaller model of its own (`model`): its weights, KV and k "
                    "decode steps (k 5, α 0.6)"},
                   {"eagle",
                    "an EAGLE head: its fc (2h x h), one decoder layer of the model's "
                    "attention and a dense MLP, and the model's lm_head; k steps, each timed "
                    "as one of the model's layers and its lm_head (k 3, α 0.8)"},
                   {"eagle3",
                    "an EAGLE-3 head: as `eagle` with its q, k and v reading 2h (MLA: not "
                    "widened), an fc of 3h x h and its own lm_head over 32,000 draft tokens, "
                    "timed as `eagle` (k 3, α 0.8)"},
                   {"mtp",
                    "the model's multi-token-prediction layer, priced as one decoder "
                    "layer and the lm_head (k 1, α 0.85)"},
                   {"ngram",
                    "prompt lookup on the CPU: no draft operators, no draft KV (k 5, "
                    "α 0.3, assumed)"}},
       .what = "speculative method",
       .required = true},
      {.pointer = "/deployment/speculative/model",
       .type = Type::kString,
       .meaning = "`draft_model` only (and required there): the draft, a catalog name or the path "
                  "of a `config.json`, run in its own stored weight format at the model's KV "
                  "format and tensor-parallel degree",
       .field = InSpeculative<&ScenarioSpeculative::model>(),
       .domain = ModelName,
       .default_text = "none"},
      {.pointer = "/deployment/speculative/num_speculative_tokens",
       .type = Type::kInteger,
       .meaning = "draft length k: tokens proposed per step, a chain's step verifies k + 1; with "
                  "`topk` above 1 the tree's depth (SGLang's `--speculative-num-steps`)",
       .field = InSpeculative<&ScenarioSpeculative::num_speculative_tokens>(),
       .max = 32,
       .nullable = true,
       .unit = "tokens",
       .default_text = "the method's"},
      {.pointer = "/deployment/speculative/acceptance_rate",
       .type = Type::kRates,
       .meaning = "α: the chance that a draft token is accepted given the ones before it were; "
                  "one number for every position, or a list of k, one per position. It depends "
                  "on the draft, the text and the sampling: sampled requests accept less than "
                  "greedy ones (Qwen3.5-9B's MTP head about 0.45 at vLLM's default sampling, "
                  "DeepSeek-V3's 0.85 greedy, [engine.md](engine.md#acceptance-from-the-runs))",
       .field = InSpeculative<&ScenarioSpeculative::acceptance_rate>(),
       .default_text = "the method's (the run then warns `speculative_acceptance_assumed`)"},
      {.pointer = "/deployment/speculative/topk",
       .type = Type::kInteger,
       .meaning =
           "a tree draft (SGLang's `--speculative-eagle-topk`): candidates proposed per "
           "expanded node; `num_speculative_tokens` is then the tree's depth (SGLang's "
           "`--speculative-num-steps`) and each draft step after the first runs `topk` "
           "tokens per sequence ([engine.md](engine.md#speculative-decoding)); 1 is the chain, "
           "the only draft vLLM runs (above 1 needs `deployment.engine` `\"sglang\"`)",
       .field = InSpeculative<&ScenarioSpeculative::topk>(),
       .max = 64,
       .nullable = true,
       .unit = "candidates",
       .default_text = "1 (a chain)"},
      {.pointer = "/deployment/speculative/num_draft_tokens",
       .type = Type::kInteger,
       .meaning = "query tokens a verification step runs per sequence (SGLang's "
                  "`--speculative-num-draft-tokens`): the step's own token and the best "
                  "`num_draft_tokens` − 1 nodes of the tree; at most 1 + topk + (depth − 1) × "
                  "topk², and exactly `num_speculative_tokens` + 1 with `topk` 1",
       .field = InSpeculative<&ScenarioSpeculative::num_draft_tokens>(),
       .min = 2,
       .max = 4096,
       .nullable = true,
       .unit = "tokens",
       .default_text = "`num_speculative_tokens` + 1; required when `topk` is above 1"},
      {.pointer = "/deployment/speculative/rank_decay",
       .type = Type::kNumber,
       .meaning = "β of a tree draft: each lower-ranked candidate of the draft at a position is "
                  "the model's token β times as often as the one ranked above it (the first α "
                  "times), so its top k cover α (1 + β + … + β^(k−1)), at most all",
       .field = InSpeculative<&ScenarioSpeculative::rank_decay>(),
       .range = Range::kFraction,
       .nullable = true,
       .default_text = "the method's (0.1, assumed)"},

      {.pointer = "/engine",
       .type = Type::kSection,
       .meaning = "the scheduler's limits",
       .doc_section = "engine"},
      {.pointer = "/engine/max_num_batched_tokens",
       .type = Type::kTokens,
       .meaning = "token budget of one iteration, decodes and prefill chunks together (vLLM: at "
                  "least `max_num_seqs`, which its scheduler requires)",
       .field = In<&Scenario::engine, &E::max_num_batched_tokens>(),
       .nullable = true,
       .unit = "tokens",
       .default_text = "the engine's for the GPU: 8,192 on GPUs of 70 GiB or more other than "
                       "the A100, else 2,048 (vLLM V1)",
       .vllm = "max_num_batched_tokens"},
      {.pointer = "/engine/max_num_seqs",
       .type = Type::kInteger,
       .meaning = "running sequences per replica",
       .field = In<&Scenario::engine, &E::max_num_seqs>(),
       .nullable = true,
       .unit = "sequences",
       .default_text = "the engine's for the GPU: 1,024 on GPUs of 70 GiB or more other than "
                       "the A100, else 256 (vLLM V1)",
       .vllm = "max_num_seqs"},
      {.pointer = "/engine/max_model_len",
       .type = Type::kTokens,
       .meaning = "the longest sequence (prompt + output) a request may reach: the engine refuses "
                  "a longer request and ends its task there ([engine.md](engine.md#model-limits))",
       .field = In<&Scenario::engine, &E::max_model_len>(),
       .nullable = true,
       .unit = "tokens",
       .default_text = "`null`: the model's limit, as vLLM derives it from the config (length "
                       "keys and RoPE scaling)",
       .vllm = "max_model_len"},
      {.pointer = "/engine/router",
       .type = Type::kChoice,
       .meaning = "how requests are placed on replicas",
       .field = In<&Scenario::engine, &E::router>(),
       .choices = {{"round_robin", "in turn"},
                   {"prefix_affinity", "keeps a task on one replica"},
                   {"least_loaded", "the replica holding the fewest requests"},
                   {"session_affinity",
                    "keeps a task on one replica while it holds fewer than `max_num_seqs`"}},
       .what = "router"},
      {.pointer = "/engine/mode",
       .type = Type::kChoice,
       .meaning = "how the engine advances (`--engine` overrides it)",
       .field = In<&Scenario::engine, &E::mode>(),
       .choices = {{"event", "many iterations at once between events"},
                   {"step", "one iteration at a time (the reference)"}},
       .what = "mode"},

      {.pointer = "/prefix_cache",
       .type = Type::kSection,
       .meaning = "the engine's block prefix cache",
       .doc_section = "prefix_cache"},
      {.pointer = "/prefix_cache/enabled",
       .type = Type::kBool,
       .meaning = "automatic prefix caching on or off; must be `false` for models with "
                  "constant-state (SSM / linear attention / short convolution) layers "
                  "(docs/engine.md, \"The KV pool\")",
       .field = In<&Scenario::prefix_cache, &C::enabled>(),
       .vllm = "enable_prefix_caching"},
      {.pointer = "/prefix_cache/block_size",
       .type = Type::kTokens,
       .meaning = "tokens per KV block, the unit of hashing, hits and eviction",
       .field = In<&Scenario::prefix_cache, &C::block_size>(),
       .unit = "tokens",
       .vllm = "block_size"},
      {.pointer = "/prefix_cache/capacity_tokens",
       .type = Type::kTokens,
       .meaning = "`null`: what the KV pool holds; a count: a fixed capacity for cache studies "
                  "(tokens of every KV cache group: ⌈N / block_size⌉ pages per group), which "
                  "replaces the whole pool, running sequences included (above what memory holds: "
                  "a `pool_beyond_memory` warning); `\"unlimited\"`: never evict",
       .field = In<&Scenario::prefix_cache, &C::capacity_tokens>(),
       .nullable = true,
       .keywords = {{"unlimited", ScenarioPrefixCache::kUnlimited}},
       .unit = "tokens",
       .type_text = "a positive integer, a token count like \"3M\", \"unlimited\" or null"},
      {.pointer = "/prefix_cache/pin_during_tool_s",
       .type = Type::kNumber,
       .meaning = "keep a task's blocks during its tool wait, for up to this long (counted "
                  "against capacity)",
       .field = In<&Scenario::prefix_cache, &C::pin_during_tool_s>(),
       .range = Range::kNonNegative,
       .most = 1e9,
       .unit = "s"},
      {.pointer = "/prefix_cache/offload",
       .type = Type::kSection,
       .meaning = "host-memory tier for evicted blocks; not with sliding-window or chunked layers",
       .doc_section = "prefix_cache/offload"},
      {.pointer = "/prefix_cache/offload/capacity_gib",
       .type = Type::kNumber,
       .meaning = "host memory for evicted blocks; `0` = no tier",
       .field = In<&Scenario::prefix_cache, &C::offload_capacity_gib>(),
       .range = Range::kNonNegative,
       .most = 1e9,
       .unit = "GiB"},
      {.pointer = "/prefix_cache/offload/link_gb_s",
       .type = Type::kNumber,
       .meaning = "host ↔ GPU bandwidth",
       .field = In<&Scenario::prefix_cache, &C::offload_link_gb_s>(),
       .range = Range::kPositive,
       .least = 0.001,
       .most = 1e6,
       .unit = "GB/s (10^9 bytes)"},

      {.pointer = "/context_policy",
       .type = Type::kSection,
       .meaning = "what the agent sends each turn (include/kvbill/policy/context_policy.h): "
                  "`kind` picks the policy; every parameter of the chosen kind is required, and a "
                  "parameter of another kind is an error",
       .default_text = "`{\"kind\": \"keep_all\"}`",
       .doc_section = "context_policy"},
      {.pointer = "/context_policy/kind",
       .type = Type::kChoice,
       .meaning = "the policy",
       .field = In<&Scenario::context_policy, &P::kind>(),
       .choices = {{"keep_all", "send the context as recorded"},
                   {"sliding_window",
                    "leading system/tools spans plus the last `window_tokens` tokens"},
                   {"drop_tool_results",
                    "tool results of turns older than `older_than_turns` become a stub of "
                    "`stub_tokens` tokens"},
                   {"summarise",
                    "when a prompt would pass `threshold_tokens`, a summarisation request first, "
                    "then system/tools + the summary + the last `keep_recent_tokens` tokens"},
                   {"sinks_recent", "the first `sink_tokens` and the last `recent_tokens` tokens"}},
       .what = "context policy"},
      {.pointer = "/context_policy/window_tokens",
       .type = Type::kTokens,
       .meaning = "tokens kept after the leading system/tools spans",
       .field = In<&Scenario::context_policy, &P::window_tokens>(),
       .unit = "tokens",
       .variant = "sliding_window"},
      {.pointer = "/context_policy/older_than_turns",
       .type = Type::kInteger,
       .meaning = "tool results of turns older than this become stubs",
       .field = In<&Scenario::context_policy, &P::older_than_turns>(),
       .min = 0,
       .unit = "turns",
       .variant = "drop_tool_results"},
      {.pointer = "/context_policy/stub_tokens",
       .type = Type::kTokens,
       .meaning = "size of the stub that replaces a dropped tool result",
       .field = In<&Scenario::context_policy, &P::stub_tokens>(),
       .min = 0,
       .unit = "tokens",
       .variant = "drop_tool_results"},
      {.pointer = "/context_policy/threshold_tokens",
       .type = Type::kTokens,
       .meaning = "a prompt that would pass this is summarised first",
       .field = In<&Scenario::context_policy, &P::threshold_tokens>(),
       .unit = "tokens",
       .variant = "summarise"},
      {.pointer = "/context_policy/summary_tokens",
       .type = Type::kTokens,
       .meaning = "size of the summary",
       .field = In<&Scenario::context_policy, &P::summary_tokens>(),
       .unit = "tokens",
       .variant = "summarise"},
      {.pointer = "/context_policy/keep_recent_tokens",
       .type = Type::kTokens,
       .meaning = "recent tokens kept after the summary",
       .field = In<&Scenario::context_policy, &P::keep_recent_tokens>(),
       .min = 0,
       .unit = "tokens",
       .variant = "summarise"},
      {.pointer = "/context_policy/sink_tokens",
       .type = Type::kTokens,
       .meaning = "first tokens always kept (attention sinks)",
       .field = In<&Scenario::context_policy, &P::sink_tokens>(),
       .min = 0,
       .unit = "tokens",
       .variant = "sinks_recent"},
      {.pointer = "/context_policy/recent_tokens",
       .type = Type::kTokens,
       .meaning = "last tokens kept",
       .field = In<&Scenario::context_policy, &P::recent_tokens>(),
       .unit = "tokens",
       .variant = "sinks_recent"},

      {.pointer = "/trace",
       .type = Type::kSection,
       .meaning = "the workload: exactly one of `file` and `generator`; without it the trace must "
                  "come from `--trace`, which also replaces the scenario's",
       .default_text = "none (`--trace` gives it)",
       .doc_section = "trace",
       .one_of = {"file", "generator"}},
      {.pointer = "/trace/file",
       .type = Type::kString,
       .meaning = "trace path, relative to the scenario; opened when the simulation runs (a "
                  "missing file is reported then, by its resolved path)",
       .field = In<&Scenario::trace, &T::file>(),
       .domain = TraceFile,
       .default_text = "none"},
      {.pointer = "/trace/format",
       .type = Type::kChoice,
       .meaning = "`auto` detects it, else a `--from` name of [importers.md](importers.md)",
       .field = In<&Scenario::trace, &T::format>(),
       .choice_names = TraceFormatNames,
       .what = "trace format",
       .only_with = "file"},
      {.pointer = "/trace/generator",
       .type = Type::kString,
       .meaning = "a generator preset ([generator.md](generator.md)): `coding-agent`, `chat`",
       .field = In<&Scenario::trace, &T::generator>(),
       .domain = GeneratorPreset,
       .default_text = "none"},
      {.pointer = "/trace/tasks",
       .type = Type::kInteger,
       .meaning = "number of tasks to generate",
       .field = In<&Scenario::trace, &T::tasks>(),
       .max = kMaxGeneratedTasks,
       .default_text = "required with `generator`",
       .only_with = "generator",
       .required_with = "generator",
       .missing = "missing (the number of tasks to generate)"},
      {.pointer = "/trace/release",
       .type = Type::kChoice,
       .meaning = "when a task's next turn is released",
       .field = In<&Scenario::trace, &T::release>(),
       .choices = {{"after_finish", "after the previous response finished plus its tool wait"},
                   {"recorded", "at the turn's recorded time"}},
       .what = "release"},
      {.pointer = "/trace/load",
       .type = Type::kNumber,
       .meaning = "load factor: the gaps between task starts are divided by it (2 = tasks start "
                  "twice as often, 0.5 = half as often); within a task the gaps keep (recorded "
                  "times move with the task's start) ([engine.md](engine.md#load))",
       .field = In<&Scenario::trace, &T::load>(),
       .range = Range::kPositive,
       .least = 1e-6,
       .most = 1e6},
      {.pointer = "/budgets",
       .type = Type::kMap,
       .meaning = "limits for `kvbill check`: metric → `{\"max\": x}` and/or `{\"min\": y}`; "
                  "metric names and errors in [ci.md](ci.md)",
       .entry = BudgetEntry,
       .schema = BudgetsSchema,
       .default_text = "none"},
      {.pointer = "/slo",
       .type = Type::kMap,
       .meaning =
           "latency targets, reported by `kvbill simulate`: metric → the most it may be, "
           "in seconds; metrics `ttft_s`, `tpot_s`, `queue_s`, `completion_s`, each "
           "`.{mean,p50,p90,p99,max}`, as budgets name them ([engine.md](engine.md#latency))",
       .entry = SloEntry,
       .schema = SloSchema,
       .default_text = "none"},
      {.pointer = "/sweep",
       .type = Type::kMap,
       .meaning = "axes for `kvbill sweep`: JSON pointer into the scenario (outside /sweep and "
                  "/budgets) → non-empty list of distinct values; at most 1,000,000 points, "
                  "the product of the axes' values ([ci.md](ci.md))",
       .entry = SweepEntry,
       .schema = SweepSchema,
       .default_text = "none"},

      {.pointer = "/pricing",
       .type = Type::kSection,
       .meaning = "API mode of `kvbill simulate`: bill the trace at a provider's cache rules and "
                  "list prices",
       .field = PricingSection(),
       .default_text = "none",
       .doc_section = "pricing"},
      {.pointer = "/pricing/provider",
       .type = Type::kChoice,
       .meaning = "the cache rules ([billing.md](billing.md#provider-caching-rules))",
       .field = In<&Scenario::pricing, &R::provider>(),
       .choice_names = ProviderCacheNames,
       .what = "provider",
       .required = true},
      {.pointer = "/pricing/model",
       .type = Type::kString,
       .meaning = "a model of the bundled price sheet, by id or alias "
                  "(`claude-sonnet-4-5-20250929`); with `per_call_models`, only for calls whose "
                  "trace turn names no model",
       .field = In<&Scenario::pricing, &R::model>(),
       .domain = PricedModel,
       .required = true},
      {.pointer = "/pricing/per_call_models",
       .type = Type::kBool,
       .meaning = "`true`: a call whose trace turn names its model (the `model` of a turn, "
                  "[trace-format.md](trace-format.md); Claude Code and Codex logs) is priced at "
                  "that model, through that model's own provider cache; `false`: every call at "
                  "`model` (a what-if of another model; `compare`'s model lever sets it)",
       .field = In<&Scenario::pricing, &R::per_call_models>()},
      {.pointer = "/pricing/cache",
       .type = Type::kSection,
       .meaning = "the provider cache's options",
       .doc_section = "pricing/cache"},
      {.pointer = "/pricing/cache/enabled",
       .type = Type::kBool,
       .meaning = "`false`: no provider cache, every prompt token billed as uncached input (and "
                  "no warm start)",
       .field = In<&Scenario::pricing, &R::cache_enabled>()},
      {.pointer = "/pricing/cache/ttl_s",
       .type = Type::kNumber,
       .meaning = "lifetime since last use; anthropic accepts 300 or 3600",
       .field = In<&Scenario::pricing, &R::ttl_s>(),
       .range = Range::kPositive,
       .most = 1e9,
       .unit = "s",
       .default_text = "the provider's: 300 (anthropic, openai, gemini implicit), 10,800 "
                       "(deepseek)"},
      {.pointer = "/pricing/cache/min_cacheable_tokens",
       .type = Type::kTokens,
       .meaning = "minimum cacheable prompt",
       .field = In<&Scenario::pricing, &R::min_cacheable_tokens>(),
       .unit = "tokens",
       .default_text = "the model's"},
      {.pointer = "/pricing/cache/warm_start",
       .type = Type::kChoice,
       .meaning = "seed the cache with each task's first recorded cache read",
       .field = {[](Scenario& s, const json& v) {
                   s.pricing->warm_start_from_recorded = v == "recorded";
                 },
                 [](const Scenario&) { return json("recorded"); }},
       .choices = {{"recorded", "seed it"}, {"none", "start cold"}},
       .what = "warm start"},
      {.pointer = "/pricing/cache/mode",
       .type = Type::kChoice,
       .meaning = "gemini: implicit caching, or explicit caches charged for creation and storage "
                  "([billing.md](billing.md#gemini)); ttl_s then defaults to 3,600 from creation",
       .field = {[](Scenario& s, const json& v) { s.pricing->explicit_cache = v == "explicit"; },
                 [](const Scenario&) { return json("implicit"); }},
       .choices = {{"implicit", "the provider caches prefixes itself"},
                   {"explicit", "caches created and stored at a price"}},
       .what = "cache mode"},
      {.pointer = "/pricing/cache/prefix_tokens",
       .type = Type::kTokens,
       .meaning = "gemini explicit: the cached prefix length, or the whole prompt of a request "
                  "that finds no live cache",
       .field = In<&Scenario::pricing, &R::prefix_tokens>(),
       .keywords = {{"first_request", 0}},
       .unit = "tokens",
       .default_text = "`\"first_request\"`"},
      {.pointer = "/pricing/cache/write_fee",
       .type = Type::kBool,
       .meaning = "openai: cache writes billed at the sheet's `cache_write_5m` "
                  "([billing.md](billing.md#openai)); ttl_s then defaults to 1,800",
       .field = {[](Scenario& s, const json& v) {
                   s.pricing->write_fee = v.get<bool>() ? WriteFee::kOn : WriteFee::kOff;
                 },
                 nullptr},
       .default_text = "by model: true for GPT-5.6"},
  };
  return keys;
}

const Key* FindKey(const std::string& pointer) {
  for (const Key& k : ScenarioKeys()) {
    if (k.pointer == pointer) return &k;
  }
  return nullptr;
}

std::vector<const Key*> ChildKeys(const std::string& parent) {
  std::vector<const Key*> out;
  for (const Key& k : ScenarioKeys()) {
    if (k.Parent() == parent) out.push_back(&k);
  }
  return out;
}

}  // namespace kvbill::scenario_keys
