// `kvbill scenario from-vllm`: a vLLM serve command line as a scenario.
#include "kvbill/scenario/from_vllm.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "kvbill/hardware/catalog_names.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/hf_model_id.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/util/names.h"
#include "kvbill/util/units.h"
#include "scenario/keys.h"

namespace kvbill {
namespace {

using nlohmann::ordered_json;

// How a flag's value becomes a scenario value.
enum class Conv {
  kModel,           // a repo id or path -> /model
  kInt,             // a plain integer
  kVllmInt,         // vLLM's human-readable integer ("32k" = 32,000)
  kModelLen,        // kVllmInt, or "auto" / -1 (the model's limit: nothing to set)
  kNumber,          // a decimal number
  kTrue,            // a switch that sets true
  kFalse,           // a switch that sets false
  kKvDtype,         // --kv-cache-dtype: the kv_format row's vLLM values
  kDtype,           // --dtype: the weights' and an "auto" KV cache's dtype
  kQuantization,    // -q: the weights' format
  kPipeline,        // -pp: only 1 is expressible
  kExpertParallel,  // a switch: the experts over the tensor-parallel GPUs
  kRopeScaling,     // --rope-scaling JSON: the config's rope_scaling (/model/set)
  kHfOverrides,     // --hf-overrides JSON object: config keys (/model/set)
  kSpeculative,     // --speculative-config JSON object: /deployment/speculative
};

struct Flag {
  const char* name;   // "--tensor-parallel-size"
  const char* alias;  // "-tp"
  const char* pointer;
  Conv conv;
};

// The vLLM flags kvbill can express (vllm/engine/arg_utils.py).
constexpr Flag kFlags[] = {
    {"--model", nullptr, "/model", Conv::kModel},
    {"--language-model-only", nullptr, "/model/text_only", Conv::kTrue},
    {"--tensor-parallel-size", "-tp", "/deployment/gpus_per_replica", Conv::kInt},
    {"--data-parallel-size", "-dp", "/deployment/replicas", Conv::kInt},
    {"--pipeline-parallel-size", "-pp", nullptr, Conv::kPipeline},
    {"--gpu-memory-utilization", nullptr, "/deployment/memory_fraction", Conv::kNumber},
    {"--kv-cache-dtype", nullptr, "/kv_format", Conv::kKvDtype},
    {"--dtype", nullptr, "/weight_format", Conv::kDtype},
    {"--quantization", "-q", "/weight_format", Conv::kQuantization},
    {"--enable-prefix-caching", nullptr, "/prefix_cache/enabled", Conv::kTrue},
    {"--no-enable-prefix-caching", nullptr, "/prefix_cache/enabled", Conv::kFalse},
    {"--block-size", nullptr, "/prefix_cache/block_size", Conv::kInt},
    {"--max-model-len", nullptr, "/engine/max_model_len", Conv::kModelLen},
    {"--max-num-seqs", nullptr, "/engine/max_num_seqs", Conv::kInt},
    {"--max-num-batched-tokens", nullptr, "/engine/max_num_batched_tokens", Conv::kVllmInt},
    {"--enable-expert-parallel", nullptr, "/deployment/expert_parallel", Conv::kExpertParallel},
    {"--async-scheduling", nullptr, "/deployment/async_scheduling", Conv::kTrue},
    {"--no-async-scheduling", nullptr, "/deployment/async_scheduling", Conv::kFalse},
    {"--rope-scaling", nullptr, "/model/set/rope_scaling", Conv::kRopeScaling},
    {"--hf-overrides", nullptr, "/model/set", Conv::kHfOverrides},
    {"--speculative-config", nullptr, "/deployment/speculative", Conv::kSpeculative},
};

// Repositories whose published config.json is a catalog model's but for its
// context length: the catalog model with that length set (what vLLM reads
// as max_model_len). The others are the catalog's ModelRepoIds.
struct LengthVariant {
  const char* repo;
  const char* catalog;
  std::int64_t max_position_embeddings;
};
constexpr LengthVariant kLengthVariants[] = {
    // Qwen2.5-7B-Instruct's config.json: 32,768 (the base's 131,072; the
    // model card serves longer prompts with YaRN, --rope-scaling), as the
    // 72B-Instruct's.
    {"Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b", 32768},
    // Llama-4-Scout-17B-16E (the base checkpoint): text_config's 262,144,
    // where the Instruct's, the catalog's, is 10,485,760 (the base's
    // config.json as quoted in AMD-AGI/Primus pull request 165).
    {"meta-llama/Llama-4-Scout-17B-16E", "llama-4-scout", 262144},
};

// --max_num_seqs and --max-num-seqs are one flag to vLLM.
std::string Dashed(std::string flag) {
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

Result<std::int64_t> ParseInt(const std::string& flag, const std::string& text) {
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return Error(flag + ": expected an integer, got \"" + text + "\"");
  }
  return value;
}

// The kv_format row's vLLM value, as kvbill spells it.
Result<std::string> KvDtype(const std::string& text) {
  const scenario_keys::Key* row = scenario_keys::FindKey("/kv_format");
  std::string known;
  for (const scenario_keys::SynonymValue& v : row->vllm_values) {
    if (text == v.vllm) {
      if (v.kvbill == nullptr) {
        return Error("--kv-cache-dtype: vLLM's \"" + text +
                     "\" has no kvbill KV format (docs/formats.md lists kvbill's)");
      }
      return std::string(v.kvbill);
    }
    if (v.kvbill != nullptr) known += (known.empty() ? "" : "|") + std::string(v.vllm);
  }
  return Error("--kv-cache-dtype: unknown value \"" + text + "\" (one of " + known + ")");
}

Result<std::string> Dtype(const std::string& text) {
  if (text == "auto") return std::string();
  if (text == "bfloat16") return std::string("bf16");
  if (text == "half" || text == "float16") return std::string("fp16");
  if (text == "float" || text == "float32") return std::string("fp32");
  return Error("--dtype: unknown value \"" + text +
               "\" (one of auto|half|float16|bfloat16|float|float32)");
}

// The catalog name for a repo id or local path, else empty.
std::string CatalogName(const std::string& model) {
  for (const NameAlias& id : ModelRepoIds()) {
    if (LowerAscii(model) == LowerAscii(std::string(id.alias))) return std::string(id.catalog);
  }
  for (const LengthVariant& v : kLengthVariants) {
    if (LowerAscii(model) == LowerAscii(v.repo)) return v.catalog;
  }
  for (const CatalogModel& m : ModelCatalog()) {
    if (m.name == model) return m.name;
  }
  return "";
}

// The context length `model`'s config.json sets where the catalog model's
// differs, else nullopt.
std::optional<std::int64_t> PublishedLength(const std::string& model) {
  for (const LengthVariant& v : kLengthVariants) {
    if (LowerAscii(model) == LowerAscii(v.repo)) return v.max_position_embeddings;
  }
  return std::nullopt;
}

struct Conversion {
  ordered_json doc = ordered_json::object();
  std::vector<std::string> notes;
  std::vector<std::string> not_expressed;
  std::string model;
  std::string dtype;                          // --dtype as a kvbill format; empty: auto
  std::string kv_format;                      // --kv-cache-dtype as a kvbill format; empty: absent
  std::string quantization;                   // -q as a kvbill format; empty: none
  bool expert_parallel = false;               // --enable-expert-parallel
  ordered_json speculative;                   // --speculative-config as given; null: absent
  ordered_json set = ordered_json::object();  // config overrides (/model/set)
};

void Set(ordered_json& doc, const std::string& pointer, ordered_json value) {
  doc[ordered_json::json_pointer(pointer)] = std::move(value);
}

Status Apply(const Flag& flag, const std::string& value, Conversion* c) {
  const std::string name = flag.name;
  switch (flag.conv) {
    case Conv::kModel:
      c->model = value;
      return OkStatus();
    case Conv::kInt: {
      auto v = ParseInt(name, value);
      if (!v) return v.error();
      Set(c->doc, flag.pointer, *v);
      return OkStatus();
    }
    case Conv::kModelLen:
      if (value == "auto" || value == "-1") {
        // vLLM then fits the longest context its KV pool holds, when that is
        // below the model's limit; a scenario's max_model_len is a number.
        c->notes.push_back(name + " " + value +
                           ": not expressed; the scenario serves the model's max_model_len, "
                           "where vLLM would serve the longest context its KV pool holds if "
                           "that is shorter (kvbill fit --context ... says how long that is; "
                           "set engine.max_model_len to it)");
        return OkStatus();
      }
      [[fallthrough]];
    case Conv::kVllmInt: {
      auto v = ParseVllmInt(value);
      if (!v) return v.error().Within(name);
      Set(c->doc, flag.pointer, *v);
      return OkStatus();
    }
    case Conv::kNumber: {
      double v = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || ptr != value.data() + value.size() || !std::isfinite(v)) {
        return Error(name + ": expected a number, got \"" + value + "\"");
      }
      Set(c->doc, flag.pointer, v);
      return OkStatus();
    }
    case Conv::kTrue:
    case Conv::kFalse:
      Set(c->doc, flag.pointer, flag.conv == Conv::kTrue);
      return OkStatus();
    case Conv::kKvDtype: {
      auto v = KvDtype(value);
      if (!v) return v.error();
      c->kv_format = *v;
      return OkStatus();
    }
    case Conv::kDtype: {
      auto v = Dtype(value);
      if (!v) return v.error();
      c->dtype = *v;
      return OkStatus();
    }
    case Conv::kQuantization:
      if (value == "fp8" || value == "mxfp4") {
        c->quantization = value;
      } else if (value == "modelopt_fp4") {
        c->quantization = "nvfp4";
      } else if (value == "awq" || value == "awq_marlin" || value == "gptq" ||
                 value == "gptq_marlin") {
        // AutoAWQ's default group (q_group_size 128) and GPTQ's usual one:
        // 4 bits + an fp16 scale and zero point per 128 = 4.25 bits, as the
        // checkpoint name rule reads an -AWQ or -GPTQ id (int4 alone is
        // groups of 32, 5 bits: 15% more weight bytes).
        c->quantization = "int4-g128";
        c->notes.push_back("--quantization " + value +
                           ": weights taken as 4-bit integers in groups of 128 (int4-g128); "
                           "the checkpoint's quantization_config has the real bit width and "
                           "group size (kvbill reads it from a config.json model)");
      } else {
        c->not_expressed.push_back(name + " " + value);
      }
      return OkStatus();
    case Conv::kExpertParallel:
      c->expert_parallel = true;
      return OkStatus();
    case Conv::kRopeScaling:
    case Conv::kHfOverrides: {
      // vLLM reads both as JSON and edits the model's config with them
      // (vllm/engine/arg_utils.py; --rope-scaling is the older spelling of
      // --hf-overrides '{"rope_scaling": ...}').
      auto parsed = ordered_json::parse(value, nullptr, false);
      if (parsed.is_discarded()) return Error(name + ": not valid JSON: " + value);
      if (flag.conv == Conv::kRopeScaling) {
        if (!parsed.is_object()) return Error(name + ": must be a JSON object, got " + value);
        c->set["rope_scaling"] = parsed;
        return OkStatus();
      }
      if (!parsed.is_object()) return Error(name + ": must be a JSON object, got " + value);
      for (auto it = parsed.begin(); it != parsed.end(); ++it) c->set[it.key()] = it.value();
      return OkStatus();
    }
    case Conv::kSpeculative: {
      auto parsed = ordered_json::parse(value, nullptr, false);
      if (parsed.is_discarded()) return Error(name + ": not valid JSON: " + value);
      if (!parsed.is_object()) return Error(name + ": must be a JSON object, got " + value);
      c->speculative = std::move(parsed);
      return OkStatus();
    }
    case Conv::kPipeline: {
      auto v = ParseInt(name, value);
      if (!v) return v.error();
      // A note would leave a scenario counting a pipeline's GPUs once: its
      // replicas priced at 1/pp of what the command line runs.
      if (*v != 1) {
        return Error(name + " " + value +
                     ": kvbill does not model pipeline parallelism, and the scenario would "
                     "count each replica's GPUs once where vLLM runs " +
                     value + " stages of them (a bill " + value +
                     " times too low); give the same GPUs as tensor parallelism (-tp) to price "
                     "them");
      }
      return OkStatus();
    }
  }
  return OkStatus();
}

const Flag* FindFlag(const std::string& arg) {
  for (const Flag& f : kFlags) {
    if (arg == f.name || (f.alias != nullptr && arg == f.alias)) return &f;
  }
  return nullptr;
}

bool IsSwitch(const Flag& f) {
  return f.conv == Conv::kTrue || f.conv == Conv::kFalse || f.conv == Conv::kExpertParallel;
}

// vLLM's boolean flags that kvbill does not express, common on serve
// command lines (vllm/engine/arg_utils.py, vllm/entrypoints/openai/
// cli_args.py: store_true or BooleanOptionalAction): they take no value,
// so a word after one is the next argument (the model, when it comes after
// the flags), not their value.
bool IsUnmodelledSwitch(const std::string& flag) {
  static constexpr std::string_view kSwitches[] = {"--trust-remote-code",
                                                   "--enforce-eager",
                                                   "--disable-log-requests",
                                                   "--disable-log-stats",
                                                   "--enable-auto-tool-choice",
                                                   "--enable-lora",
                                                   "--disable-custom-all-reduce",
                                                   "--enable-sleep-mode",
                                                   "--disable-frontend-multiprocessing",
                                                   "--enable-log-requests",
                                                   "--enable-reasoning",
                                                   "--no-enable-log-requests",
                                                   "--enable-prompt-tokens-details",
                                                   "--enable-force-include-usage",
                                                   "--disable-fastapi-docs",
                                                   "--enable-server-load-tracking"};
  return std::find(std::begin(kSwitches), std::end(kSwitches), flag) != std::end(kSwitches);
}

// --speculative-config as deployment.speculative, following vLLM's reading
// of the JSON (SpeculativeConfig.__post_init__, vllm/config/speculative.py):
// no method with the model "ngram" (or "[ngram]") is ngram, with another
// model a draft model; the deprecated per-model MTP names ("deepseek_mtp",
// "qwen3_next_mtp", ... MTPModelTypes) are mtp. A method kvbill does not
// model leaves the scenario without speculation and is listed; keys it does
// not model are named in a note. `*draft_known` is false when the draft
// model is not one kvbill can load (the read-back then leaves it out).
Status MapSpeculative(const ordered_json& j, Conversion* c, ordered_json* out, bool* draft_known) {
  const std::string flag = "--speculative-config";
  for (const char* key : {"method", "model"}) {
    if (j.contains(key) && !j[key].is_string() && !j[key].is_null()) {
      return Error(flag + ": \"" + key + "\" must be a string, got " + j[key].dump());
    }
  }
  auto text = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  std::string method = text("method");
  const std::string draft = text("model");
  if (method.empty()) {
    if (draft.empty()) {
      return Error(flag + ": names neither a \"method\" nor a draft \"model\" (vLLM refuses it)");
    }
    method = draft == "ngram" || draft == "[ngram]" ? "ngram" : "draft_model";
  }
  if (method == "[ngram]") method = "ngram";
  if (method.size() > 4 && method.ends_with("_mtp")) {
    c->notes.push_back(flag + " method " + method +
                       ": vLLM reads this deprecated name as \"mtp\" (MTPModelTypes, "
                       "vllm/config/speculative.py); so does the scenario");
    method = "mtp";
  }
  if (method != "draft_model" && method != "eagle" && method != "eagle3" && method != "mtp" &&
      method != "ngram") {
    c->not_expressed.push_back(flag + " " + j.dump() + " (method \"" + method +
                               "\": kvbill models draft_model, eagle, eagle3, mtp and ngram)");
    return OkStatus();
  }
  ordered_json spec = ordered_json{{"method", method}};
  std::vector<std::string> unmodelled;
  if (method == "draft_model") {
    if (draft.empty()) {
      return Error(flag + ": method \"draft_model\" needs \"model\", the draft's repo id or path");
    }
    std::string value = CatalogName(draft);
    if (value.empty() && scenario_keys::IsFile(draft + "/config.json")) {
      value = draft + "/config.json";
    }
    if (value.empty()) {
      const HfModelChoice variant = CatalogModelFromHfId(draft);
      if (!CatalogName(variant.catalog).empty()) {
        value = variant.catalog;
        c->notes.push_back(flag + " model \"" + draft + "\" is taken as the catalog's \"" + value +
                           "\", the architecture it is a copy of (run in its own stored "
                           "weight format)");
      }
    }
    *draft_known = !value.empty();
    if (value.empty()) {
      value = draft;
      c->notes.push_back(flag + " model \"" + draft +
                         "\" is not recognised: save its config.json and set "
                         "deployment.speculative.model to that path (until then the scenario "
                         "does not load)");
    }
    spec["model"] = value;
  } else if (!draft.empty() && method != "ngram") {
    unmodelled.push_back("model " + draft + " (kvbill prices " + method +
                         "'s draft from the method and the model, not this checkpoint)");
  }
  if (j.contains("num_speculative_tokens") && !j["num_speculative_tokens"].is_null()) {
    spec["num_speculative_tokens"] = j["num_speculative_tokens"];
  } else {
    c->notes.push_back(flag +
                       ": no num_speculative_tokens; the scenario takes kvbill's default "
                       "for " +
                       method + " (docs/engine.md, \"Speculative decoding\")");
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "method" || it.key() == "model" || it.key() == "num_speculative_tokens")
      continue;
    unmodelled.push_back(it.key() + " " + it.value().dump());
  }
  if (!unmodelled.empty()) {
    std::string list;
    for (const std::string& u : unmodelled) list += (list.empty() ? "" : ", ") + u;
    c->notes.push_back(flag + " keys not expressed: " + list);
  }
  c->notes.push_back(flag + ": the acceptance rate is kvbill's default for " + method +
                     " (vLLM measures it as it runs; simulate warns "
                     "speculative_acceptance_assumed): set deployment.speculative.acceptance_rate "
                     "to a measured one");
  Set(*out, "/deployment/speculative", spec);
  return OkStatus();
}

// `NAME=value` as a shell puts it before a command: an environment
// variable's name (letters, digits, underscores, not a digit first).
bool IsEnvAssignment(const std::string& word) {
  const std::size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (std::isdigit(static_cast<unsigned char>(word[0]))) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
  });
}

// `text` without the whitespace Python's str.strip() removes at its ends.
std::string Trimmed(const std::string& text) {
  const char* space = " \t\n\r\f\v";
  const std::size_t first = text.find_first_not_of(space);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

// Whether Python's int(text) is not 0; nullopt when int() refuses it
// (surrounding whitespace, a sign, and single underscores between digits
// are allowed; the value can be any size).
std::optional<bool> PythonIntIsNonZero(const std::string& text) {
  std::string t = Trimmed(text);
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.erase(0, 1);
  if (t.empty() || t.front() == '_' || t.back() == '_') return std::nullopt;
  bool nonzero = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '_') {
      if (t[i - 1] == '_') return std::nullopt;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return std::nullopt;
    nonzero = nonzero || t[i] != '0';
  }
  return nonzero;
}

}  // namespace

Result<std::int64_t> ParseVllmInt(const std::string& text) {
  const Error bad("expected a count like 32768, 32k (32,000) or 32K (32,768), got \"" + text +
                  "\"");
  // A number of digits, with a decimal part only before a decimal suffix.
  const std::size_t digits = text.find_first_not_of("0123456789.");
  const std::string number = text.substr(0, digits);
  const std::string suffix = digits == std::string::npos ? "" : text.substr(digits);
  const std::size_t decimal = std::string_view("kmgt").find(suffix);
  const std::size_t binary = std::string_view("KMGT").find(suffix);
  if (number.empty() || !std::isdigit(static_cast<unsigned char>(number[0])) || suffix.size() > 1 ||
      (!suffix.empty() && decimal == binary)) {
    return bad;
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size()) return bad;
  if (number.find('.') != std::string::npos && (suffix.empty() || binary != std::string::npos)) {
    return Error("expected a count like 32768, 32k (32,000) or 32K (32,768), got \"" + text +
                 "\" (decimals only with k, m, g, t)");
  }
  if (decimal != std::string::npos && !suffix.empty()) {
    value *= std::pow(1000.0, static_cast<double>(decimal + 1));
  } else if (binary != std::string::npos && !suffix.empty()) {
    value *= std::pow(1024.0, static_cast<double>(binary + 1));
  }
  if (value > static_cast<double>(kMaxTokenCount)) {
    return Error("\"" + text + "\" is above 2^40");
  }
  return static_cast<std::int64_t>(value);  // vLLM truncates: int(25.6 * 1000)
}

Result<VllmScenario> ScenarioFromVllm(const std::vector<std::string>& words,
                                      const FromVllmOptions& options) {
  Conversion c;
  // Environment assignments before the command (`VLLM_MXFP4_USE_MARLIN=1
  // vllm serve ...`, also after `env`).
  std::size_t first = !words.empty() && words[0] == "env" ? 1 : 0;
  std::vector<std::pair<std::string, std::string>> environment;
  for (; first < words.size() && IsEnvAssignment(words[first]); ++first) {
    const std::size_t eq = words[first].find('=');
    environment.emplace_back(words[first].substr(0, eq), words[first].substr(eq + 1));
  }
  const std::vector<std::string> argv(words.begin() + static_cast<std::ptrdiff_t>(first),
                                      words.end());
  std::size_t i = 0;
  const bool serve = argv.size() >= 2 && argv[0] == "vllm" && argv[1] == "serve";
  if (serve) {
    i = 2;
    if (i < argv.size() && !argv[i].starts_with("-")) c.model = argv[i++];
  } else if (argv.empty() || argv[0] != "vllm") {
    // python -m vllm.entrypoints.openai.api_server --model M ...: skip to the first flag.
    while (i < argv.size() && !argv[i].starts_with("--")) ++i;
  } else {
    return Error("expected `vllm serve MODEL [FLAGS]`, got `vllm " +
                 (argv.size() > 1 ? argv[1] : std::string()) + "`");
  }
  for (; i < argv.size(); ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (const std::size_t eq = arg.find('='); arg.starts_with("-") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    arg = Dashed(arg);
    // `vllm serve` takes the model as its positional argument after flags
    // too (`vllm serve --max-model-len 8192 Qwen/Qwen3-8B`).
    if (serve && c.model.empty() && !arg.starts_with("-")) {
      c.model = argv[i];
      continue;
    }
    const Flag* flag = FindFlag(arg);
    if (flag == nullptr) {
      // Not expressible: the flag and the value it takes, if one follows.
      std::string text = argv[i];
      if (!has_value && arg.starts_with("-") && !IsUnmodelledSwitch(arg) && i + 1 < argv.size() &&
          !argv[i + 1].starts_with("-")) {
        text += " " + argv[++i];
      }
      c.not_expressed.push_back(text);
      continue;
    }
    if (!IsSwitch(*flag) && !has_value) {
      if (i + 1 >= argv.size()) return Error(arg + ": missing its value");
      value = argv[++i];
    }
    if (Status s = Apply(*flag, value, &c); !s) return s.error();
  }
  if (c.model.empty()) return Error("no model: expected `vllm serve MODEL [FLAGS]`");

  // The model: a catalog architecture, a local checkpoint, a tuned or
  // quantised copy of a catalog architecture, or a note.
  ordered_json out = ordered_json::object();
  std::string catalog = CatalogName(c.model);
  bool model_known = !catalog.empty();
  std::string model_value = catalog;
  std::string stem =
      catalog.empty() ? LowerAscii(c.model.substr(c.model.find_last_of('/') + 1)) : catalog;
  std::string variant_weights;  // the copy's weight format; empty: as the catalog model's
  if (!model_known) {
    const std::string config = c.model + "/config.json";
    const HfModelChoice variant = CatalogModelFromHfId(c.model);
    if (scenario_keys::IsFile(config)) {
      model_value = config;
      model_known = true;
    } else if (!CatalogName(variant.catalog).empty()) {
      catalog = model_value = variant.catalog;
      model_known = true;
      c.notes.push_back("model \"" + c.model + "\" is taken as the catalog's \"" + catalog +
                        "\", the architecture it is a tuned or quantised copy of (kvbill models)");
      if (variant.weight_format != "auto" && c.quantization.empty()) {
        variant_weights = variant.weight_format;
        c.notes.push_back(
            variant.weight_format == "fp8" && variant.fp8_checkpoint
                ? "weight_format fp8: \"" + c.model +
                      "\" is an fp8 checkpoint with 128x128 block scales; the scenario prices "
                      "fp8 weights as vLLM runs weights quantised when loaded (CUTLASS "
                      "scaled_mm), not the checkpoint's block-scaled kernels: for those, save its "
                      "config.json and set \"model\" to that path (weight_format \"auto\")"
            : variant.weight_format == "fp8"
                ? "weight_format fp8: \"" + c.model + "\" is an fp8 copy"
                : "weight_format " + variant.weight_format + ": \"" + c.model +
                      "\" is an AWQ copy, taken as 4-bit integers in groups of 128; its "
                      "config.json's quantization_config has the real layout");
      }
    } else {
      model_value = c.model;
      c.notes.push_back(
          "model \"" + c.model +
          "\" is not recognised (not in kvbill's catalog, kvbill models, nor a copy of a catalog "
          "architecture): save its config.json and set \"model\" to that path; until then the "
          "scenario does not load, and the checks that need the model (-tp against its heads, "
          "--enable-expert-parallel against its experts, an mtp draft against its layers) were "
          "not made");
    }
  }
  out["name"] = "vllm-" + LowerAscii(stem);
  out["model"] = model_value;
  // --language-model-only: vLLM does not load the multimodal towers.
  if (c.doc.contains(ordered_json::json_pointer("/model/text_only"))) {
    out["model"] = ordered_json{{"name", model_value}, {"text_only", true}};
  }
  // A checkpoint of the catalog's architecture with another context length:
  // its own (before --hf-overrides, which vLLM applies to the config read).
  if (auto length = PublishedLength(c.model);
      length && !c.set.contains("max_position_embeddings")) {
    c.set["max_position_embeddings"] = *length;
    c.notes.push_back("model \"" + c.model + "\" is the catalog's \"" + catalog +
                      "\" with its own config.json's context length, max_position_embeddings " +
                      std::to_string(*length) + " (model.set)");
  }
  // --rope-scaling / --hf-overrides: the config as vLLM edits it.
  if (!c.set.empty()) {
    if (!out["model"].is_object()) out["model"] = ordered_json{{"name", model_value}};
    out["model"]["set"] = c.set;
  }
  // vLLM's KV cache "auto" is the model dtype (--dtype when given).
  std::string kv = c.kv_format.empty() ? "auto" : c.kv_format;
  if (kv == "auto" && !c.dtype.empty()) kv = c.dtype;
  out["kv_format"] = kv;
  if (!c.quantization.empty()) {
    out["weight_format"] = c.quantization;
  } else if (!variant_weights.empty()) {
    out["weight_format"] = variant_weights;
  } else if (!c.dtype.empty()) {
    out["weight_format"] = c.dtype;
  }
  if (!options.gpu.empty()) Set(out, "/deployment/gpu", options.gpu);
  for (const char* section : {"/deployment", "/engine", "/prefix_cache"}) {
    const ordered_json::json_pointer p(section);
    if (!c.doc.contains(p)) continue;
    for (auto it = c.doc[p].begin(); it != c.doc[p].end(); ++it) {
      Set(out, std::string(section) + "/" + it.key(), it.value());
    }
  }

  // The environment vLLM reads that kvbill models, as vllm/envs.py reads
  // it (a variable given twice takes its last value, as a shell passes it):
  // VLLM_MXFP4_USE_MARLIN with int() (maybe_convert_bool) picks Marlin for
  // MXFP4 experts where vLLM has a choice, Hopper (get_mxfp4_backend), and
  // changes nothing elsewhere; VLLM_ALLOW_LONG_MAX_MODEL_LEN is on when
  // its value, stripped and lower-cased, is "1" or "true".
  std::map<std::string, std::string> vllm_env;
  for (const auto& [name, value] : environment) {
    if (name == "VLLM_MXFP4_USE_MARLIN" || name == "VLLM_ALLOW_LONG_MAX_MODEL_LEN") {
      vllm_env[name] = value;
    } else {
      c.not_expressed.push_back(name + "=" + value + " (environment)");
    }
  }
  std::string allow_long_max_model_len;  // the assignment that turns it on, if one does
  if (auto it = vllm_env.find("VLLM_ALLOW_LONG_MAX_MODEL_LEN"); it != vllm_env.end()) {
    const std::string v = LowerAscii(Trimmed(it->second));
    if (v == "1" || v == "true") allow_long_max_model_len = it->first + "=" + it->second;
  }
  if (auto it = vllm_env.find("VLLM_MXFP4_USE_MARLIN"); it != vllm_env.end()) {
    const std::string shown = it->first + "=" + it->second;
    const std::optional<bool> on = PythonIntIsNonZero(it->second);
    if (!on) {
      return Error(shown +
                   ": vLLM reads VLLM_MXFP4_USE_MARLIN with int() (0 off, another "
                   "integer on), and this is not an integer");
    }
    const std::string gpu_name = options.gpu.empty() ? ScenarioDeployment{}.gpu : options.gpu;
    auto gpu = LookupGpu(gpu_name);
    if (*on && gpu && gpu->architecture == "hopper") {
      Set(out, "/deployment/mxfp4_moe_kernel", "marlin");
    } else if (*on && gpu) {
      c.notes.push_back(shown + ": on " + gpu_name + " (" + gpu->architecture +
                        ") vLLM runs MXFP4 experts on one kernel whatever it says (Marlin on "
                        "Ampere, Ada and RTX Blackwell, FlashInfer on Blackwell, Triton on "
                        "AMD); nothing to set");
    }
  }

  // vLLM spreads the experts over tp x dp GPUs (FusedMoEParallelConfig.make;
  // docs/engine.md, "Parallelism"), and dispatches tokens all-to-all when
  // dp > 1. A scenario splits them only within a replica (expert_parallel
  // 1 or gpus_per_replica; replicas are independent copies): with dp > 1
  // (or one GPU) the note says what vLLM does and what the scenario does.
  if (c.expert_parallel) {
    auto integer = [&](const char* pointer) {
      const ordered_json::json_pointer p(pointer);
      return out.contains(p) && out[p].is_number_integer() ? out[p].get<std::int64_t>() : 1;
    };
    const std::int64_t tp = integer("/deployment/gpus_per_replica");
    const std::int64_t dp = integer("/deployment/replicas");
    if (tp > 1) Set(out, "/deployment/expert_parallel", tp);
    const std::string tp_text = std::to_string(tp), dp_text = std::to_string(dp);
    const std::string ep_text = std::to_string(tp * dp);
    if (dp > 1) {
      c.notes.push_back(
          "--enable-expert-parallel with -tp " + tp_text + " -dp " + dp_text +
          ": vLLM splits the routed experts over all " + ep_text + " GPUs (expert parallel " +
          ep_text +
          " = tp x dp), each data-parallel rank running its own attention, and sends "
          "tokens to their experts all-to-all; a scenario cannot split experts across replicas, "
          "so it runs " +
          dp_text + " independent replicas of " + tp_text + " GPU" + (tp > 1 ? "s" : "") +
          ", each holding all the experts" +
          (tp > 1 ? ", whole experts spread over its " + tp_text + " GPUs (expert_parallel " +
                        tp_text + ", expert_dispatch all_reduce)"
                  : " on its GPU (expert_parallel 1)"));
    } else if (tp == 1) {
      c.notes.push_back(
          "--enable-expert-parallel on one GPU (-tp 1, no -dp): nothing to split, as in vLLM; "
          "expert_parallel stays 1");
    }
  }
  bool draft_known = true;
  if (!c.speculative.is_null()) {
    if (Status st = MapSpeculative(c.speculative, &c, &out, &draft_known); !st) return st.error();
  }
  // The model as vLLM loads it (with --rope-scaling / --hf-overrides and
  // --language-model-only), for the checks below; none when it is unknown.
  std::optional<ModelShape> model;
  if (model_known) {
    std::vector<ConfigOverride> overrides;
    for (auto it = c.set.begin(); it != c.set.end(); ++it) {
      overrides.push_back(ConfigOverride{it.key(), it.value().dump()});
    }
    const bool text_only = c.doc.contains(ordered_json::json_pointer("/model/text_only"));
    if (auto loaded = LoadModel(model_value, overrides, text_only)) model = std::move(*loaded);
  }
  // Prefix caching (vLLM's default, or --enable-prefix-caching) over a model
  // with constant-state layers: kvbill does not model it (docs/engine.md,
  // "The KV pool"), and the scenario reader refuses it, so it is written off.
  const ordered_json::json_pointer caching("/prefix_cache/enabled");
  const bool caching_given = out.contains(caching);
  if (model && model->HasState() && (!caching_given || out[caching].get<bool>())) {
    Set(out, "/prefix_cache/enabled", false);
    c.notes.push_back(
        std::string(caching_given ? "--enable-prefix-caching"
                                  : "prefix caching (on by default "
                                    "in vLLM)") +
        ": prefix_cache.enabled is false; model \"" + model->name +
        "\" has constant-state (SSM / linear attention / short convolution) layers, and kvbill "
        "does not model a prefix cache over their state. vLLM turned prefix caching off for "
        "such models (\"Hybrid or mamba-based model detected: disabling prefix caching\", "
        "MambaModelConfig in vllm/model_executor/models/config.py); newer versions have an "
        "experimental Mamba prefix cache (--mamba-cache-mode), which kvbill does not model");
  }
  // --max-model-len past what the model (with --rope-scaling /
  // --hf-overrides) derives: vLLM refuses to start (_get_and_verify_max_len)
  // unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1; say so now, not at the run.
  const ordered_json::json_pointer len_pointer("/engine/max_model_len");
  if (model && out.contains(len_pointer) && out[len_pointer].is_number_integer()) {
    const Tokens asked = out[len_pointer].get<Tokens>();
    const Tokens limit = model->MaxModelLenCeiling();
    if (limit > 0 && asked > limit && !allow_long_max_model_len.empty()) {
      c.notes.push_back("--max-model-len " + FormatWithSeparators(asked) +
                        " is above the model's " + FormatWithSeparators(limit) +
                        ": vLLM starts only because " + allow_long_max_model_len +
                        ", and the model was not trained that long (simulate warns "
                        "context_limit)");
    } else if (limit > 0 && asked > limit) {
      c.notes.push_back(
          "--max-model-len " + FormatWithSeparators(asked) + " is above the model's " +
          FormatWithSeparators(limit) +
          ": vLLM refuses to start unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (and the model was "
          "not trained that long); --rope-scaling or --hf-overrides with the model card's "
          "scaling is the way vLLM serves longer contexts (simulate warns context_limit)");
    }
  }
  if (options.gpu.empty()) {
    c.notes.push_back(
        "the command line does not name the GPU: deployment.gpu is kvbill's "
        "default, h100-sxm (give --gpu to from-vllm)");
  }
  for (const char* pointer : {"/engine/max_num_seqs", "/engine/max_num_batched_tokens"}) {
    if (!out.contains(ordered_json::json_pointer(pointer))) {
      c.notes.push_back(std::string(pointer).substr(1) +
                        " not given: kvbill's default applies (docs/scenario-format.md); vLLM's "
                        "own default depends on its version, the GPU and the usage context");
    }
  }
  if (!c.not_expressed.empty()) {
    std::string list;
    for (const std::string& f : c.not_expressed) list += (list.empty() ? "" : ", ") + f;
    c.notes.push_back("not expressed in the scenario: " + list);
  }
  c.notes.push_back("no trace: give one with --trace or a \"trace\" section");
  out["notes"] = c.notes;

  // The scenario must read; an unknown model is left for the user to fix,
  // and the settings checked against the model are left out of the check
  // (it would check them against kvbill's default model instead): the
  // tensor-parallel degree (heads) and the expert parallelism (experts)
  // keep only their own checks (a positive integer, one equal to the other).
  ordered_json check = out;
  if (!model_known) {
    check.erase("model");
    ordered_json& d = check["deployment"];
    if (d.is_null()) d = ordered_json::object();
    if (d.contains("gpus_per_replica") && d["gpus_per_replica"].is_number_integer() &&
        d["gpus_per_replica"].get<std::int64_t>() > 0 &&
        (!d.contains("expert_parallel") || d["expert_parallel"] == d["gpus_per_replica"])) {
      d["gpus_per_replica"] = 1;
      d.erase("expert_parallel");
      d.erase("expert_dispatch");
    }
    // An mtp draft needs the model's MTP layers: checked as another
    // method, whose other rules (the length, ngram's) are the same.
    if (d.contains("speculative") && d["speculative"]["method"] == "mtp") {
      d["speculative"]["method"] = "eagle3";
    }
  }
  if (!draft_known) check["deployment"].erase("speculative");
  if (auto s = ParseScenario(check.dump(), "from-vllm.json"); !s) {
    return s.error().Within("the scenario made from the command line does not read");
  }
  return VllmScenario{out.dump(2) + "\n", c.notes};
}

}  // namespace kvbill
