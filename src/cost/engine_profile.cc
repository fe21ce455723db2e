#include "kvbill/cost/engine_profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"
#include "util/json_input.h"

namespace kvbill {

const std::array<ProfileParameterInfo, kProfileParameterCount>& ProfileParameterTable() {
  static const std::array<ProfileParameterInfo, kProfileParameterCount> table = {{
      {"cpu_iteration_s", &ProfileParameters::cpu_iteration_s, 0, 0.01,
       "CPU time of one scheduler iteration, s"},
      {"cpu_per_sequence_s", &ProfileParameters::cpu_per_sequence_s, 0, 1e-4,
       "CPU time per scheduled sequence per iteration, s"},
      {"output_per_sequence_s", &ProfileParameters::output_per_sequence_s, 0, 5e-4,
       "API-server time per sequence per iteration streaming its output, s (overlapped)"},
      {"elementwise_passes", &ProfileParameters::elementwise_passes, 0, 100,
       "passes over a token's hidden vector per layer outside the timed operators"},
      // A decoder layer run eagerly launches some tens of kernels (norms,
      // projections, rotary, attention, activation, residual adds), each at
      // 10-20 us of PyTorch dispatch and launch: 1 ms a layer is about 50
      // of them at 20 us, the most an engine without CUDA graphs pays.
      {"eager_launch_per_layer_s", &ProfileParameters::eager_launch_per_layer_s, 0, 1e-3,
       "launch time per layer for batches outside CUDA graphs, s"},
      {"frontend_per_request_s", &ProfileParameters::frontend_per_request_s, 0, 0.02,
       "API-server time per request before scheduling (serial), s"},
      // A tokenizer's pace bounds it: Hugging Face's Rust tokenizers encode a
      // GB of text in under 20 s on a server's cores (the tokenizers README),
      // about a million tokens a second on one; 5 us a token leaves five times
      // that for the chat template, the request's token list and its hashes.
      {"frontend_per_token_s", &ProfileParameters::frontend_per_token_s, 0, 5e-6,
       "API-server time per prompt token before scheduling (serial), s"},
      {"request_latency_s", &ProfileParameters::request_latency_s, 0, 0.2,
       "latency of every request outside the GPU that queues nothing (HTTP, hand-offs), s"},
      {"activation_bytes_per_token_hidden", &ProfileParameters::activation_bytes_per_token_hidden,
       0, 100, "memory reserved per batched token per hidden element, bytes"},
      {"fixed_reserve_gib", &ProfileParameters::fixed_reserve_gib, 0, 8,
       "memory reserved besides weights, activations and KV, GiB"},
      {"mixed_attention_factor", &ProfileParameters::mixed_attention_factor, 1, 8,
       "decode attention time multiplier in iterations mixing prefill and decode"},
      {"weight_only_8bit_rate", &ProfileParameters::weight_only_8bit_rate, 0.1, 1,
       "compute rate of dense 8-bit weight-only (Marlin) GEMMs over the bf16 GEMM's"},
      {"weight_only_4bit_rate", &ProfileParameters::weight_only_4bit_rate, 0.1, 1,
       "compute rate of dense 4-bit weight-only (Marlin) GEMMs over the bf16 GEMM's"},
      {"recurrent_state_factor", &ProfileParameters::recurrent_state_factor, 1, 20,
       "time of the recurrent-state kernels (Gated DeltaNet, Mamba) over their state traffic and "
       "FLOPs at the attention kernels' rates"},
  }};
  return table;
}

EngineLimits DefaultEngineLimits(const std::string& engine, const GpuSpec& gpu,
                                 int tensor_parallel) {
  const double gib = static_cast<double>(gpu.usable_memory_bytes) / kBytesPerGiB;
  if (engine == "sglang") {
    const bool wide = tensor_parallel >= 4;
    if (gib < 20) return {2048, 2048, 8};
    if (gib < 35) return {2048, 2048, wide ? 80 : 16};
    if (gib < 60) return {4096, 2048, wide ? 160 : 32};
    if (gib < 160) return {8192, 2048, wide ? 512 : 256};
    return {16384, 2048, 512};
  }
  std::string name = gpu.name + " " + gpu.id;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool large = gib >= 70.0 && name.find("a100") == std::string::npos;
  return large ? EngineLimits{8192, 1024, 0} : EngineLimits{2048, 256, 0};
}

double SglangMemoryFraction(const GpuSpec& gpu, int tensor_parallel, Tokens chunk,
                            Tokens cuda_graph_max_bs, bool eagle, int dp_attention_flag) {
  const double mib = static_cast<double>(gpu.usable_memory_bytes) / (1024.0 * 1024.0);
  const double graphs = static_cast<double>(cuda_graph_max_bs);
  double reserve = 512 + 1.5 * static_cast<double>(std::max<Tokens>(chunk, 2048)) + 2.0 * graphs +
                   128.0 * tensor_parallel;
  if (dp_attention_flag > 0) {
    reserve += 3.0 * graphs * dp_attention_flag;
    if (cuda_graph_max_bs > 300) reserve += 1.5 * graphs * dp_attention_flag;
  }
  if (mib > 60 * 1024) reserve = std::max(reserve, 10240.0);
  if (eagle) reserve += 2048;
  return std::round((mib - reserve) / mib * 1000) / 1000;
}

SglangStateLimits SglangStateSlots(const SglangStateRules& rules, double rest_bytes,
                                   double state_bytes) {
  SglangStateLimits out;
  if (!rules.mamba_radix_cache) {
    out.slots = rules.max_mamba_cache_size > 0   ? rules.max_mamba_cache_size
                : rules.max_running_requests > 0 ? rules.max_running_requests
                                                 : 512;
    out.max_running = out.slots;
    return out;
  }
  if (rules.max_mamba_cache_size > 0) {
    out.slots = rules.max_mamba_cache_size;
  } else if (!rules.radix_cache && rules.max_running_requests > 0) {
    out.slots = rules.max_running_requests;
  } else if (state_bytes > 0 && rest_bytes > 0) {
    constexpr double kMambaFullMemoryRatio = 0.9;
    out.slots = static_cast<std::int64_t>(
        std::floor(rest_bytes * kMambaFullMemoryRatio / (1 + kMambaFullMemoryRatio) / state_bytes));
  }
  out.max_running = out.slots / (rules.radix_cache ? 3 : 1);
  return out;
}

bool SglangHasMambaRadixCache(const std::string& version) {
  int major = 0, minor = 0, patch = 0, post = 0;
  const char* text = version.c_str();
  if (*text == 'v') ++text;
  if (std::sscanf(text, "%d.%d.%d", &major, &minor, &patch) != 3) return true;
  const auto at = version.find(".post");
  if (at != std::string::npos) post = std::atoi(version.c_str() + at + 5);
  if (major != 0) return major > 0;
  if (minor != 5) return minor > 5;
  if (patch != 3) return patch > 3;
  return post >= 2;
}

double ProfileReserveGib(const EngineProfile& profile, Tokens batched_tokens, std::int64_t hidden) {
  const ProfileParameters& p = profile.params;
  if (profile.engine == "sglang") return p.fixed_reserve_gib;
  return p.activation_bytes_per_token_hidden * static_cast<double>(batched_tokens) *
             static_cast<double>(hidden) / kBytesPerGiB +
         p.fixed_reserve_gib;
}

Result<double> DefaultReserveGib(const std::string& engine, const GpuSpec& gpu, int tensor_parallel,
                                 std::int64_t hidden, Tokens* budget) {
  auto profile = LoadEngineProfile(engine);
  if (!profile) return profile.error();
  const Tokens tokens = DefaultEngineLimits(engine, gpu, tensor_parallel).max_num_batched_tokens;
  if (budget != nullptr) *budget = tokens;
  return ProfileReserveGib(*profile, tokens, hidden);
}

const std::vector<ProfileNumberRange>& ProfileNumberRanges() {
  static const std::vector<ProfileNumberRange> ranges = [] {
    std::vector<ProfileNumberRange> r;
    for (const ProfileParameterInfo& info : ProfileParameterTable()) {
      r.push_back(
          {std::string("/parameters/") + info.name, info.lower, info.upper, false, info.meaning});
    }
    r.push_back({"/cuda_graph_max_tokens", 0, 65536, true,
                 "largest batch, tokens, the engine captures in a CUDA graph"});
    r.push_back({"/moe_routing_alpha", 0, 5, false,
                 "power-law exponent of expert popularity (0: uniform routing)"});
    r.push_back({"/validation/median_error", 0, 100, false,
                 "median |predicted / measured - 1| over the fitted records"});
    r.push_back({"/validation/lomo_median_error", 0, 100, false,
                 "the same, leaving each model out of the fit in turn"});
    r.push_back({"/validation/points", 0, 1e9, true, "records the fit was measured on"});
    r.push_back({"/validation/regimes/*/points", 0, 1e9, true,
                 "points of one regime (GPU, dense or MoE, one GPU or several)"});
    r.push_back({"/validation/regimes/*/median_error", 0, 100, false,
                 "median |predicted / measured - 1| over them, in sample"});
    r.push_back({"/validation/regimes/*/lomo_points", 0, 1e9, true,
                 "points of the regime predicted leaving their model out"});
    r.push_back({"/validation/regimes/*/lomo_median_error", 0, 100, false,
                 "median |predicted / measured - 1| over those"});
    return r;
  }();
  return ranges;
}

namespace {

using nlohmann::json;

Error Fail(const std::string& source, const std::string& pointer, const std::string& what) {
  return Error(source + "#" + pointer + ": " + what);
}

// The value at `pointer` within its documented range (ProfileNumberRanges),
// found under `row_pointer` where that differs (array items: "/a/*/b").
Result<double> RangedNumber(const json& v, const std::string& source, const std::string& pointer,
                            const std::string& row_pointer = "") {
  const std::string& key = row_pointer.empty() ? pointer : row_pointer;
  const auto& ranges = ProfileNumberRanges();
  const auto row = std::find_if(ranges.begin(), ranges.end(),
                                [&](const ProfileNumberRange& r) { return r.pointer == key; });
  if (row == ranges.end()) return Fail(source, pointer, "unknown key");
  if (!(row->integer ? v.is_number_integer() : v.is_number())) {
    return Fail(source, pointer,
                std::string("must be ") + (row->integer ? "an integer" : "a number") + " " +
                    json_input::RangeText(row->least, row->most) + ", got " + json_input::Quote(v));
  }
  const double x = v.get<double>();
  if (!(x >= row->least && x <= row->most)) {
    return Fail(source, pointer,
                "must be " + json_input::RangeText(row->least, row->most) +
                    " (docs/engine.md#engine-profile-ranges), got " + json_input::Quote(v));
  }
  return x;
}

// Every member of `object` is one of `known`, or an error naming it.
Status KnownKeys(const json& object, std::initializer_list<const char*> known,
                 const std::string& source, const std::string& at) {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) ==
        known.end()) {
      return Fail(source, at + "/" + json_input::EscapePointerKey(key), "unknown key");
    }
  }
  return OkStatus();
}

Result<ValidationRegime> ParseRegime(const json& r, const std::string& source,
                                     const std::string& at) {
  if (!r.is_object()) return Fail(source, at, "not an object");
  if (auto s = KnownKeys(r,
                         {"gpu", "moe", "several_gpus", "points", "median_error", "lomo_points",
                          "lomo_median_error"},
                         source, at);
      !s) {
    return s.error();
  }
  ValidationRegime g;
  if (!r.contains("gpu") || !r.at("gpu").is_string() || r.at("gpu").get<std::string>().empty())
    return Fail(source, at + "/gpu", "must be a GPU's catalog id");
  g.gpu = r.at("gpu").get<std::string>();
  for (auto [key, out] : {std::pair{"moe", &g.moe}, std::pair{"several_gpus", &g.several_gpus}}) {
    if (!r.contains(key) || !r.at(key).is_boolean())
      return Fail(source, at + "/" + key, "must be true or false");
    *out = r.at(key).get<bool>();
  }
  for (auto [key, out] :
       {std::pair{"points", &g.points}, std::pair{"lomo_points", &g.lomo_points}}) {
    if (!r.contains(key)) continue;
    auto x = RangedNumber(r.at(key), source, at + "/" + key,
                          std::string("/validation/regimes/*/") + key);
    if (!x) return x.error();
    *out = static_cast<std::int64_t>(*x);
  }
  for (auto [key, out] : {std::pair{"median_error", &g.median_error},
                          std::pair{"lomo_median_error", &g.lomo_median_error}}) {
    if (!r.contains(key)) continue;
    auto x = RangedNumber(r.at(key), source, at + "/" + key,
                          std::string("/validation/regimes/*/") + key);
    if (!x) return x.error();
    *out = *x;
  }
  return g;
}

}  // namespace

std::string DescribeRegime(const std::string& gpu, bool moe, bool several_gpus) {
  return gpu + ", " + (moe ? "mixture-of-experts" : "dense") + " models, " +
         (several_gpus ? "several GPUs" : "one GPU") + " a replica";
}

const ValidationRegime* FindValidationRegime(const EngineProfile& profile, const std::string& gpu,
                                             bool moe, bool several_gpus) {
  for (const ValidationRegime& r : profile.validation_regimes) {
    if (r.gpu == gpu && r.moe == moe && r.several_gpus == several_gpus) return &r;
  }
  return nullptr;
}

std::string EngineProfileToJson(const EngineProfile& p) {
  json params = json::object();
  for (const ProfileParameterInfo& info : ProfileParameterTable()) {
    params[info.name] = p.params.*(info.field);
  }
  json validation{{"median_error", p.validation_median_error},
                  {"lomo_median_error", p.validation_lomo_median_error},
                  {"points", p.validation_points}};
  if (!p.validation_regimes.empty()) {
    json regimes = json::array();
    for (const ValidationRegime& r : p.validation_regimes) {
      regimes.push_back(json{{"gpu", r.gpu},
                             {"moe", r.moe},
                             {"several_gpus", r.several_gpus},
                             {"points", r.points},
                             {"median_error", r.median_error},
                             {"lomo_points", r.lomo_points},
                             {"lomo_median_error", r.lomo_median_error}});
    }
    validation["regimes"] = regimes;
  }
  json doc{{"name", p.name},
           {"engine", p.engine},
           {"engine_versions", p.engine_versions},
           {"calibrated", p.calibrated},
           {"validation", validation},
           {"parameters", params},
           {"cuda_graph_max_tokens", p.cuda_graph_max_tokens},
           {"moe_routing_alpha", p.moe_routing_alpha}};
  return doc.dump(2) + "\n";
}

Result<EngineProfile> ParseEngineProfile(const std::string& json_text, const std::string& source) {
  json_input::Problem problem;
  auto parsed = json_input::Parse(json_text, &problem);
  if (!parsed) return Error(json_input::Describe(source, json_text, problem));
  const json doc = std::move(*parsed);
  if (!doc.is_object()) return Fail(source, "", "not an object");
  if (auto s = KnownKeys(doc,
                         {"name", "engine", "engine_versions", "calibrated", "validation",
                          "parameters", "cuda_graph_max_tokens", "moe_routing_alpha"},
                         source, "");
      !s) {
    return s.error();
  }
  EngineProfile p;
  auto text = [&](const char* key, std::string* out) -> Status {
    if (!doc.contains(key)) return OkStatus();
    if (!doc.at(key).is_string()) return Fail(source, std::string("/") + key, "not a string");
    *out = doc.at(key).get<std::string>();
    return OkStatus();
  };
  for (auto [key, out] : {std::pair{"name", &p.name}, std::pair{"engine", &p.engine},
                          std::pair{"engine_versions", &p.engine_versions}}) {
    if (auto s = text(key, out); !s) return s.error();
  }
  if (p.engine != "vllm" && p.engine != "sglang") {
    return Fail(source, "/engine",
                "\"" + p.engine + "\" is not an engine kvbill models (vllm, sglang)");
  }
  if (doc.contains("calibrated")) {
    if (!doc.at("calibrated").is_boolean()) return Fail(source, "/calibrated", "not a boolean");
    p.calibrated = doc.at("calibrated").get<bool>();
  }
  if (doc.contains("validation")) {
    const json& v = doc.at("validation");
    if (!v.is_object()) return Fail(source, "/validation", "not an object");
    if (auto s = KnownKeys(v, {"median_error", "lomo_median_error", "points", "regimes"}, source,
                           "/validation");
        !s) {
      return s.error();
    }
    for (auto [key, out] : {std::pair{"median_error", &p.validation_median_error},
                            std::pair{"lomo_median_error", &p.validation_lomo_median_error}}) {
      if (!v.contains(key)) continue;
      auto x = RangedNumber(v.at(key), source, std::string("/validation/") + key);
      if (!x) return x.error();
      *out = *x;
    }
    if (v.contains("points")) {
      auto x = RangedNumber(v.at("points"), source, "/validation/points");
      if (!x) return x.error();
      p.validation_points = static_cast<std::int64_t>(*x);
    }
    if (v.contains("regimes")) {
      const json& regimes = v.at("regimes");
      if (!regimes.is_array()) return Fail(source, "/validation/regimes", "not an array");
      for (std::size_t i = 0; i < regimes.size(); ++i) {
        const std::string at = "/validation/regimes/" + std::to_string(i);
        auto r = ParseRegime(regimes[i], source, at);
        if (!r) return r.error();
        if (FindValidationRegime(p, r->gpu, r->moe, r->several_gpus) != nullptr)
          return Fail(source, at, "repeats the regime of an earlier entry");
        p.validation_regimes.push_back(std::move(*r));
      }
    }
  }
  if (doc.contains("parameters")) {
    const json& params = doc.at("parameters");
    if (!params.is_object()) return Fail(source, "/parameters", "not an object");
    for (const auto& [key, value] : params.items()) {
      const ProfileParameterInfo* info = nullptr;
      for (const ProfileParameterInfo& i : ProfileParameterTable()) {
        if (key == i.name) info = &i;
      }
      const std::string pointer = "/parameters/" + json_input::EscapePointerKey(key);
      if (info == nullptr) return Fail(source, pointer, "unknown parameter");
      auto x = RangedNumber(value, source, pointer);
      if (!x) return x.error();
      p.params.*(info->field) = *x;
    }
  }
  if (doc.contains("cuda_graph_max_tokens")) {
    auto x = RangedNumber(doc.at("cuda_graph_max_tokens"), source, "/cuda_graph_max_tokens");
    if (!x) return x.error();
    p.cuda_graph_max_tokens = static_cast<Tokens>(*x);
  }
  if (doc.contains("moe_routing_alpha")) {
    auto x = RangedNumber(doc.at("moe_routing_alpha"), source, "/moe_routing_alpha");
    if (!x) return x.error();
    p.moe_routing_alpha = *x;
  }
  return p;
}

Result<EngineProfile> LoadEngineProfile(const std::string& name_or_path) {
  if (auto text = EmbeddedFile("profiles/" + name_or_path + ".json")) {
    return ParseEngineProfile(std::string(*text), "profiles/" + name_or_path + ".json");
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) {
    // `calibrate --profile P -o P` refits a profile in place.
    auto text = ReadFile(name_or_path, /*to_rewrite=*/true);
    if (!text) return text.error();
    return ParseEngineProfile(*text, name_or_path);
  }
  std::string names;
  for (const EmbeddedFileEntry& e : EmbeddedFileTable()) {
    if (e.path.rfind("profiles/", 0) == 0) {
      std::string n(e.path.substr(9));
      if (n.size() > 5) n.resize(n.size() - 5);
      names += (names.empty() ? "" : ", ") + n;
    }
  }
  return Error("\"" + name_or_path + "\" is neither a bundled engine profile (" + names +
               ") nor a profile file");
}

}  // namespace kvbill
