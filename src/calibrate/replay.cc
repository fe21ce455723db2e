#include "kvbill/calibrate/replay.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>
#include <utility>

#include "kvbill/cost/operator_cost_model.h"
#include "kvbill/cost/speculative.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/hardware/kv_blocks.h"
#include "kvbill/metrics/summary.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/hf_model_id.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"
#include "kvbill/policy/context_policy.h"
#include "kvbill/util/names.h"
#include "kvbill/util/random.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The catalog GPU a published hardware name means.
std::string GpuFromText(const std::string& text) {
  const std::string t = LowerAscii(text);
  if (Contains(t, "h200")) return "h200";
  if (Contains(t, "h100") && Contains(t, "pcie")) return "h100-pcie";
  if (Contains(t, "h100")) return "h100-sxm";
  if (Contains(t, "a100") && (Contains(t, "80") || Contains(t, "sxm"))) return "a100-80gb";
  if (Contains(t, "b200")) return "b200";
  return "";
}

// Lengths summing to `total` over n requests, drawn from a lognormal
// (sigma 1.0) and scaled, each clamped to [lo, hi].
std::vector<Tokens> ScaledLengths(Rng& rng, std::int64_t n, double total, Tokens lo, Tokens hi) {
  const Distribution d = Distribution::Lognormal(1.0, 1.0);
  std::vector<double> raw(static_cast<std::size_t>(n));
  for (double& x : raw) x = d.Sample(rng);
  const double mean = total / static_cast<double>(n);
  // Scale so that the clamped lengths sum to the total (bisection on the scale).
  double s_lo = 0, s_hi = 1;
  auto sum_at = [&](double s) {
    double sum = 0;
    for (double x : raw)
      sum += std::clamp(std::round(x * s), static_cast<double>(lo), static_cast<double>(hi));
    return sum;
  };
  while (sum_at(s_hi) < total && s_hi < 1e9) s_hi *= 2;
  for (int i = 0; i < 60; ++i) {
    const double mid = (s_lo + s_hi) / 2;
    (sum_at(mid) < total ? s_lo : s_hi) = mid;
  }
  (void)mean;
  std::vector<Tokens> out;
  for (double x : raw) {
    out.push_back(static_cast<Tokens>(
        std::clamp(std::round(x * s_hi), static_cast<double>(lo), static_cast<double>(hi))));
  }
  return out;
}

std::uint64_t Seed(const std::string& id) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// Prices as `inner` does and notes every iteration it prices (step mode
// prices each iteration once, through IterationSeconds).
class RecordingCostModel : public CostModel {
 public:
  RecordingCostModel(std::shared_ptr<const CostModel> inner, std::vector<IterationEntry>* log)
      : inner_(std::move(inner)), log_(log) {}

  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override {
    const Seconds t = inner_->IterationSeconds(work, own_s);
    IterationEntry e;
    e.seconds = static_cast<double>(t);
    e.sequences = static_cast<int>(work.size());
    const std::size_t at = log_->size();
    for (const ScheduledWork& w : work) {
      if (w.prefill) {
        e.prefill_tokens += w.tokens;
        // A chunk starting where an earlier one stopped continues its
        // prompt: that one gave no token.
        if (const auto earlier = TakeChunkEnd(w.context)) --(*log_)[*earlier].first_tokens;
        chunk_ends_.emplace(w.context + w.tokens, at);
        ++e.first_tokens;
      } else {
        ++e.decodes;
        TakeChunkEnd(w.context);  // its prompt ended there: nothing continues it
      }
    }
    log_->push_back(e);
    return t;
  }
  void DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                      DecodeLines* out) const override {
    inner_->DecodeLinesFor(contexts, max_steps, out);
  }
  Seconds RecomputeSeconds(Tokens start, Tokens n) const override {
    return inner_->RecomputeSeconds(start, n);
  }
  std::string name() const override { return inner_->name(); }
  CostModelInfo Describe() const override { return inner_->Describe(); }

 private:
  // Removes the oldest chunk that stopped at `context` (the scheduler serves
  // the earliest first) and returns its iteration's index in the log.
  std::optional<std::size_t> TakeChunkEnd(Tokens context) const {
    const auto it = chunk_ends_.lower_bound(context);
    if (it == chunk_ends_.end() || it->first != context) return std::nullopt;
    const std::size_t at = it->second;
    chunk_ends_.erase(it);
    return at;
  }

  std::shared_ptr<const CostModel> inner_;
  std::vector<IterationEntry>* log_;
  // Where the chunks priced so far stopped (context after them), each with
  // its iteration's index in the log, until a decode or chunk goes on.
  mutable std::multimap<Tokens, std::size_t> chunk_ends_;
};

}  // namespace

std::map<std::string, std::string> ParseEngineFlags(const std::string& flags) {
  std::map<std::string, std::string> out;
  std::istringstream in(flags);
  std::vector<std::string> words;
  std::string w;
  while (in >> w) words.push_back(w);
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].empty() || words[i][0] != '-') continue;
    std::string key = words[i];
    while (!key.empty() && key[0] == '-') key.erase(0, 1);
    std::string value = "true";
    const std::size_t eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < words.size() && !words[i + 1].empty() &&
               (words[i + 1][0] != '-' ||  // a value, or a negative number
                (words[i + 1].size() > 1 &&
                 std::isdigit(static_cast<unsigned char>(words[i + 1][1])) != 0))) {
      value = words[++i];
    }
    std::replace(key.begin(), key.end(), '_', '-');
    out[key] = value;
  }
  return out;
}

std::optional<SpeculativeSpec> SglangSpeculativeSpec(
    const std::map<std::string, std::string>& flags, std::string* why) {
  const std::string algorithm = flags.at("speculative-algorithm");
  SpeculativeSpec spec;
  if (algorithm == "EAGLE3") {
    spec.method = "eagle3";
  } else if (algorithm == "EAGLE" || algorithm == "NEXTN") {
    spec.method = flags.count("speculative-draft-model-path") ? "eagle" : "mtp";
  } else {
    *why = "--speculative-algorithm " + algorithm + ": only EAGLE, NEXTN and EAGLE3 are replayed";
    return std::nullopt;
  }
  for (const char* f :
       {"speculative-num-steps", "speculative-eagle-topk", "speculative-num-draft-tokens"}) {
    if (!flags.count(f) || std::atoi(flags.at(f).c_str()) < 1) {
      *why = std::string("--speculative-algorithm ") + algorithm + " without --" + f +
             " (SGLang then picks the tree per model)";
      return std::nullopt;
    }
  }
  const int steps = std::atoi(flags.at("speculative-num-steps").c_str());
  const int topk = std::atoi(flags.at("speculative-eagle-topk").c_str());
  spec.num_speculative_tokens = steps;
  spec.topk = topk;
  spec.num_draft_tokens =
      topk == 1 ? steps + 1 : std::atoi(flags.at("speculative-num-draft-tokens").c_str());
  if (flags.count("speculative-draft-model-path")) {
    if (const DraftAcceptance* a = FindDraftAcceptance(flags.at("speculative-draft-model-path"))) {
      spec.acceptance_rate = {a->acceptance_rate};
      if (topk > 1) spec.rank_decay = a->rank_decay;  // β ranks a tree's candidates only
    }
  }
  return spec;
}

const std::vector<DraftAcceptance>& MeasuredDraftAcceptance() {
  // Tokens a verification step advances, read off a run's own metrics: vLLM's
  // `bench serve` takes TPOT per request as (latency − TTFT) / (output tokens
  // − 1) and ITL as the gaps between streamed chunks, one chunk a step, so
  // mean ITL / mean TPOT is the tokens a step (0.98–0.99 on the page's runs
  // without speculation). gpustack's docs/performance-lab/qwen3-8b/
  // h100-latency.md (commit 47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d), draft
  // Tengyunw/qwen3_8b_eagle3:
  // - α from the chain run b15 (steps 2, top-k 1): 8.78 / 4.37 = 2.009
  //   tokens a step = 1 + α + α², α = 0.622;
  // - β from the seven runs of steps 4, top-k 4, 16 tokens (b08, b16, b17,
  //   b21–b24: 2.95, 2.87, 3.22, 3.27, 3.19, 3.16, 2.71 tokens a step; median
  //   3.156): the β that tree gives 3.156 at α 0.622, 0.262.
  // The page's other trees (b10–b14: depth 2 and 8, top-k 8, 8 and 32 tokens)
  // are then predicted, not fitted (docs/engine.md).
  //
  // AngelSlim/Qwen3-8B_eagle3, another EAGLE-3 head for Qwen3-8B, has one run
  // on the page (b09: depth 4, top-k 4, 16 tokens, 10.49 / 4.45 = 2.357
  // tokens a step): one number cannot give both α and β, so β is
  // Tengyunw's (a head of the same kind on the same model) and α the one
  // that tree then needs, 0.492. The method's default α 0.8 gave 3.90 tokens
  // a step where the run advanced 2.36. b09's gain is then this
  // derivation's, not a prediction.
  //
  // Qwen/Qwen3.5-9B's MTP head under vLLM v0.17.1 (gpustack's docs/
  // performance-lab/qwen3.5-9b/h100-latency.md, same commit): those runs'
  // TPOT and ITL count no reasoning tokens (their client counts chunks
  // with `reasoning_content`, a field vLLM renamed), so a step's tokens
  // cannot be read off them. α is instead the rate at which kvbill's replay
  // of b12 (1 req/s, k 1) gains over b11 (the same run without speculation)
  // what the run gained in mean end-to-end latency, 2,090 / 1,650 − 1 =
  // 26.7%: 0.45 gives 26.8% (0.42 24.2%, 0.48 29.4%; the vllm profile of
  // this commit). The requests were sampled (guidellm sends no temperature, so
  // the server's default applies), and vLLM drafts the top token and keeps
  // it with the model's probability of it (vllm/v1/sample/
  // rejection_sampler.py, no draft probabilities), which is why it is far
  // below DeepSeek-V3's 0.85. The runs at 4, 8 and 16 req/s and the k 4
  // burst are then predicted, not fitted (docs/validation.md).
  static const std::vector<DraftAcceptance> table = {
      {"Tengyunw/qwen3_8b_eagle3", 0.62, 0.26,
       "Tengyunw/qwen3_8b_eagle3's α from gpustack's chain run (steps 2) and β from its seven "
       "runs of steps 4, top-k 4, 16 tokens (mean ITL / mean TPOT)"},
      {"AngelSlim/Qwen3-8B_eagle3", 0.49, 0.26,
       "AngelSlim/Qwen3-8B_eagle3's α from gpustack's one run of it (depth 4, top-k 4, 16 "
       "tokens; mean ITL / mean TPOT) at Tengyunw/qwen3_8b_eagle3's β"},
      {"Qwen/Qwen3.5-9B", 0.45, 0.1,
       "Qwen/Qwen3.5-9B's MTP head, sampled at the server's default temperature: the α at which "
       "kvbill's replay of gpustack's MTP run at 1 req/s (b12) gains what it gained over the "
       "run without speculation (b11), 26.7% in mean end-to-end latency"},
  };
  return table;
}

const DraftAcceptance* FindDraftAcceptance(std::string_view draft) {
  for (const DraftAcceptance& a : MeasuredDraftAcceptance()) {
    if (a.draft == draft) return &a;
  }
  return nullptr;
}

double ChainAcceptanceForTokensPerStep(double tokens_per_step, int k) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    const double rate[] = {mid};
    (static_cast<double>(ExpectedTokensPerStep(rate, k)) < tokens_per_step ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double TreeAcceptanceForTokensPerStep(double tokens_per_step, double beta, int d, int topk,
                                      int num_draft_tokens) {
  // E grows with α.
  double lo = 0, hi = 1;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    const double rate[] = {mid};
    const double e =
        static_cast<double>(ExpectedTokensPerTreeStep(rate, beta, d, topk, num_draft_tokens));
    (e < tokens_per_step ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double TreeRankDecayForTokensPerStep(double tokens_per_step, double alpha, int d, int topk,
                                     int num_draft_tokens) {
  // E grows with β (each lower rank keeps more of the model's choices).
  double lo = 0, hi = 1;
  const double rate[] = {alpha};
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    const double e =
        static_cast<double>(ExpectedTokensPerTreeStep(rate, mid, d, topk, num_draft_tokens));
    (e < tokens_per_step ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

namespace {

// A vLLM version's major and minor numbers: "v0.14.0" as records write it,
// "0.14.0" as vLLM prints it, "v0.11.1rc4" (a release candidate of 0.11);
// nullopt when it does not start so.
std::optional<std::pair<int, int>> VllmMajorMinor(const std::string& version) {
  int major = 0, minor = 0;
  const char* text = version.c_str();
  if (*text == 'v') ++text;
  if (std::sscanf(text, "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::pair{major, minor};
}

}  // namespace

bool VllmAsyncSchedulingByDefault(const std::string& version,
                                  const std::string& speculative_method) {
  const auto v = VllmMajorMinor(version);
  return v && (v->first > 0 || v->second >= 14) &&
         AsyncSchedulingByDefault(false, speculative_method);
}

bool VllmMxfp4MarlinByDefault(const std::string& version) {
  const auto v = VllmMajorMinor(version);
  return v && v->first == 0 && v->second < 12;
}

std::optional<ReplayPlan> PlanReplay(const Measurement& m, const ReplayDefaults& defaults,
                                     std::string* why) {
  ReplayPlan plan;
  plan.measurement = &m;
  plan.engine = defaults.engine.empty() ? m.engine : defaults.engine;
  if (plan.engine != "vllm" && plan.engine != "sglang") {
    *why = "engine \"" + m.engine + "\" has no kvbill profile (vllm, sglang)";
    return std::nullopt;
  }
  const auto flags = ParseEngineFlags(m.engine_flags);
  if (plan.engine == "vllm") {
    if (m.engine_version.empty() && !m.id.empty() && m.dataset != "bench") {
      *why = "engine version not given";
      return std::nullopt;
    }
    // An unreadable version is taken as V0's, as before v0.9.
    const auto version = VllmMajorMinor(m.engine_version);
    if (!m.engine_version.empty() && (!version || (version->first == 0 && version->second < 9))) {
      *why = "vLLM " + m.engine_version + " runs the V0 scheduler, which kvbill does not model";
      return std::nullopt;
    }
  }
  if (plan.engine == "sglang") {
    for (const char* f : {"enable-mixed-chunk", "pp-size"}) {
      if (flags.count(f)) {
        *why = std::string("SGLang's --") + f + " is not modelled";
        return std::nullopt;
      }
    }
  }
  if (m.pp > 1) {
    *why = "pipeline parallelism is not modelled";
    return std::nullopt;
  }
  // SGLang's dp_size (--data-parallel-size, --dp-size, or --dp, which its
  // argparse takes as --dp-size) defaults to 1, and with dp_size 1 it turns
  // --enable-dp-attention off (server_args.py _handle_data_parallelism,
  // L950-952): one scheduler over the tensor-parallel GPUs, as without the
  // flag, but a smaller memory fraction (below). Only dp_size > 1 runs
  // data-parallel attention, which kvbill does not model.
  const bool dp_attention_flag = plan.engine == "sglang" && flags.count("enable-dp-attention") > 0;
  std::string dp_text = "1";
  for (const char* f : {"data-parallel-size", "dp-size", "dp"}) {
    if (flags.count(f)) dp_text = flags.at(f);
  }
  if (m.dp > 1 || dp_text != "1" || (flags.count("enable-dp-attention") && !dp_attention_flag)) {
    *why = dp_attention_flag ? "SGLang's --enable-dp-attention with dp_size " + dp_text +
                                   " (data-parallel attention) is not modelled"
                             : std::string("data-parallel attention is not modelled");
    return std::nullopt;
  }
  if (flags.count("speculative-config")) {
    // vLLM's JSON: {"method": ..., "num_speculative_tokens": k}; the
    // acceptance rate is the method's default unless runs measured the
    // draft (MeasuredDraftAcceptance).
    const auto j = nlohmann::json::parse(flags.at("speculative-config"), nullptr, false);
    const auto method = j.is_object() && j.contains("method") && j["method"].is_string()
                            ? j["method"].get<std::string>()
                            : std::string();
    if (FindSpeculativeMethod(method) == nullptr || method == "draft_model") {
      *why = "--speculative-config " + flags.at("speculative-config") +
             ": only the methods eagle, eagle3, mtp and ngram are replayed";
      return std::nullopt;
    }
    SpeculativeSpec spec;
    spec.method = method;
    if (j.contains("num_speculative_tokens") && j["num_speculative_tokens"].is_number_integer()) {
      spec.num_speculative_tokens = j["num_speculative_tokens"].get<int>();
    }
    // The model's own MTP head, where runs measured it.
    if (method == "mtp") {
      if (const DraftAcceptance* a = FindDraftAcceptance(m.model)) {
        spec.acceptance_rate = {a->acceptance_rate};
      }
    }
    plan.speculative = spec;
  }
  if (flags.count("speculative-algorithm")) {
    plan.speculative = SglangSpeculativeSpec(flags, why);
    if (!plan.speculative) return std::nullopt;
  }
  bool throughput_mode = false;  // vLLM's --performance-mode throughput
  if (flags.count("performance-mode")) {
    const std::string& mode = flags.at("performance-mode");
    if (plan.engine != "vllm") {
      *why = "--performance-mode is vLLM's; not modelled for " + plan.engine;
      return std::nullopt;
    }
    if (mode != "balanced" && mode != "interactivity" && mode != "throughput") {
      *why = "--performance-mode " + mode + ": not one of vLLM's modes";
      return std::nullopt;
    }
    throughput_mode = mode == "throughput";
  }
  std::optional<HfModelChoice> choice = CatalogModelFromHfId(m.model, m.weights);
  if (!defaults.model.empty()) choice = HfModelChoice{defaults.model, "auto", false};
  if (choice && !defaults.weight_format.empty()) choice->weight_format = defaults.weight_format;
  if (!choice) {
    *why = "model \"" + m.model + "\" not recognised";
    return std::nullopt;
  }
  // vLLM's --language-model-only loads no vision or audio tower.
  auto model = LoadModel(choice->catalog, {}, flags.count("language-model-only") > 0);
  if (!model) {
    *why = "model \"" + m.model + "\" (catalog name \"" + choice->catalog +
           "\") is not in kvbill's catalog";
    return std::nullopt;
  }
  plan.model_name = choice->catalog;
  plan.fp8_checkpoint = choice->fp8_checkpoint;
  const std::string gpu_id = defaults.gpu.empty() ? GpuFromText(m.gpu_text) : defaults.gpu;
  auto gpu = LookupGpu(gpu_id);
  if (gpu_id.empty() || !gpu) {
    *why = m.gpu_text.empty() && defaults.gpu.empty()
               ? std::string(
                     "no GPU: the record names none (hardware.gpu); a --scenario "
                     "names it for a vllm bench result")
               : "GPU \"" + m.gpu_text + "\" is not in kvbill's catalog";
    return std::nullopt;
  }
  SimulationConfig& c = plan.config;
  c.model = std::move(*model);
  c.weight_format = choice->weight_format;
  c.gpu = *gpu;
  c.gpus_per_replica = defaults.tensor_parallel > 0 ? defaults.tensor_parallel : m.tp;
  c.replicas = 1;
  const std::string kv = LowerAscii(m.kv_cache_dtype);
  auto kv_format = ParseElementFormat(kv == "auto" || kv.empty() ? "bf16" : kv);
  if (flags.count("kv-cache-dtype")) kv_format = ParseElementFormat(flags.at("kv-cache-dtype"));
  if (!kv_format) {
    *why = "KV dtype \"" + m.kv_cache_dtype + "\" is not a kvbill format";
    return std::nullopt;
  }
  c.kv_format = *kv_format;
  const EngineLimits limits = DefaultEngineLimits(plan.engine, *gpu, c.gpus_per_replica);
  c.max_num_batched_tokens = limits.max_num_batched_tokens;
  c.max_num_seqs = limits.max_num_seqs;
  plan.cuda_graph_max_batch = limits.cuda_graph_max_batch;
  std::string bad_flag;  // the first limit flag that is not a positive integer
  auto int_flag = [&](const char* name, auto* out) {
    if (!flags.count(name)) return;
    const std::string& text = flags.at(name);
    long long v = 0;
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), v);
    if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() || v <= 0 ||
        v > (1LL << 30)) {
      if (bad_flag.empty()) {
        bad_flag = std::string("--") + name + " " + text + ": must be a positive integer";
      }
      return;
    }
    *out = static_cast<std::remove_reference_t<decltype(*out)>>(v);
  };
  // vLLM's --performance-mode (v0.17; EngineArgs.
  // _set_default_max_num_seqs_and_batched_tokens_args, vllm/engine/
  // arg_utils.py): throughput doubles max_num_batched_tokens and max_num_seqs
  // where no flag sets them; interactivity captures CUDA graphs at every
  // batch size up to 32 rather than at 1, 2, 4, 8, 16, ... (vllm/config/
  // vllm.py), and kvbill pads no batch to a captured size, so it changes
  // nothing here; balanced is the default.
  if (throughput_mode) {
    c.max_num_batched_tokens *= 2;
    c.max_num_seqs *= 2;
  }
  int_flag("max-num-batched-tokens", &c.max_num_batched_tokens);
  int_flag("max-num-seqs", &c.max_num_seqs);
  auto fraction_flag = [&](const char* name) {
    if (!flags.count(name)) return;
    const std::string& text = flags.at(name);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !(v > 0 && v <= 1)) {
      if (bad_flag.empty())
        bad_flag = std::string("--") + name + " " + text + ": must be in (0, 1]";
      return;
    }
    c.memory_fraction = v;
  };
  fraction_flag("gpu-memory-utilization");
  // vLLM's block size: its default 16, or what the model's attention
  // backend forces on this GPU over --block-size (64 for MLA on Hopper;
  // kv_blocks.h).
  const VllmKvBlocks blocks = VllmKvBlockRule(c.model, *gpu);
  c.block_size = blocks.size;
  int_flag("block-size", &c.block_size);
  if (!blocks.backend.empty() && !blocks.Keeps(c.block_size)) c.block_size = blocks.size;
  c.prefix_caching = m.prefix_caching.value_or(true);
  if (flags.count("no-enable-prefix-caching")) c.prefix_caching = false;
  if (plan.engine == "sglang") {
    // SGLang's names for the same limits, its page of one token, its radix
    // cache and overlap scheduler (on unless disabled, or speculating), and
    // its static memory fraction (docs/engine.md, "Batching, SGLang").
    c.scheduler = SchedulerKind::kSglang;
    // Pages of one token, unless the default backend needs its own (kv_blocks.h).
    c.block_size = std::max<Tokens>(1, SglangForcedPage(c.model, *gpu));
    const bool speculating = flags.count("speculative-algorithm") > 0;
    if (speculating) c.max_num_seqs = 48;  // server_args.py: max_running_requests unset
    int_flag("chunked-prefill-size", &c.max_num_batched_tokens);
    int_flag("max-running-requests", &c.max_num_seqs);
    int_flag("max-prefill-tokens", &c.sglang.max_prefill_tokens);
    int_flag("cuda-graph-max-bs", &plan.cuda_graph_max_batch);
    // The reserve counts cuda_graph_max_bs as set for the GPU: server_args.py
    // computes it (L471) before speculation caps the running requests at 48
    // (L503), and the 48 caps only the graphs captured (cuda_graph_runner.py
    // L170-197).
    c.memory_fraction =
        SglangMemoryFraction(*gpu, c.gpus_per_replica, c.max_num_batched_tokens,
                             plan.cuda_graph_max_batch, speculating, dp_attention_flag ? 1 : 0);
    if (speculating)
      plan.cuda_graph_max_batch = std::min<Tokens>(plan.cuda_graph_max_batch, c.max_num_seqs);
    for (const char* f : {"mem-fraction-static", "mem-frac"}) fraction_flag(f);
    c.prefix_caching = flags.count("disable-radix-cache") == 0;
    plan.async_scheduling = !speculating && flags.count("disable-overlap-schedule") == 0;
  }
  if (!bad_flag.empty()) {
    *why = bad_flag;
    return std::nullopt;
  }
  if (plan.engine == "sglang" && StateBytesPerSequence(c.model, 1) > 0) {
    // A model with constant-state layers (docs/engine.md, "Batching, SGLang"):
    // a pool of state slots caps the running requests; with the mamba radix
    // cache on (its default no_buffer strategy) SGLang turns the overlap
    // scheduler off (server_args.py _handle_mamba_radix_cache, v0.5.9) and
    // speculation turns that radix cache off. kvbill's prefix cache stays off
    // for such models (below): ShareGPT-like replays share no prefixes.
    SglangStateRules rules;
    rules.mamba_radix_cache = SglangHasMambaRadixCache(m.engine_version);
    rules.radix_cache =
        rules.mamba_radix_cache && !plan.speculative && flags.count("disable-radix-cache") == 0;
    int_flag("max-running-requests", &rules.max_running_requests);
    int_flag("max-mamba-cache-size", &rules.max_mamba_cache_size);
    if (rules.radix_cache) plan.async_scheduling = false;
    plan.sglang_state = rules;
  }
  if (c.prefix_caching && StateBytesPerSequence(c.model, 1) > 0) c.prefix_caching = false;
  if (plan.engine == "vllm") {
    const std::string method = plan.speculative ? plan.speculative->method : "";
    if (method == "ngram" && flags.count("async-scheduling")) {
      *why = "vLLM refuses --async-scheduling with n-gram speculation (vllm/config/vllm.py)";
      return std::nullopt;
    }
    const bool by_default = m.engine_version.empty() && defaults.async_scheduling
                                ? *defaults.async_scheduling
                                : VllmAsyncSchedulingByDefault(m.engine_version, method);
    plan.async_scheduling = flags.count("async-scheduling") > 0 ||
                            (flags.count("no-async-scheduling") == 0 && by_default);
    // A draft on the GPU: the worker waits for each step's sampled tokens
    // before it prepares the next (vllm/v1/worker/gpu_model_runner.py,
    // _get_valid_sampled_token_count).
    plan.cpu_waits_for_sampling = plan.async_scheduling && DraftsOnGpu(method);
    plan.mxfp4_experts_marlin = m.engine_version.empty()
                                    ? defaults.mxfp4_experts_marlin
                                    : VllmMxfp4MarlinByDefault(m.engine_version);
  }
  // vLLM's --enable-expert-parallel spreads the experts over the tensor-
  // parallel GPUs (with one data-parallel rank: all-reduce, no all-to-all);
  // SGLang's --ep-size names the degree.
  if (flags.count("enable-expert-parallel")) plan.expert_parallel = c.gpus_per_replica;
  if (flags.count("ep-size")) plan.expert_parallel = std::atoi(flags.at("ep-size").c_str());
  if (plan.expert_parallel != 1 && plan.expert_parallel != c.gpus_per_replica) {
    *why = "expert parallelism of degree " + std::to_string(plan.expert_parallel) +
           " with tensor parallelism " + std::to_string(c.gpus_per_replica) + " is not modelled";
    return std::nullopt;
  }
  if (plan.expert_parallel > 1 && c.model.moe.experts <= 1) {
    *why = "expert parallelism on a model without routed experts";
    return std::nullopt;
  }
  c.release = ReleaseRule::kAfterFinish;

  // The requests.
  std::int64_t n = m.num_prompts.value_or(0);
  if (m.successful_requests && *m.successful_requests > 0) n = *m.successful_requests;
  if (!m.input_lens.empty()) n = static_cast<std::int64_t>(m.input_lens.size());
  if (n <= 0) {
    *why = "the number of requests is not given";
    return std::nullopt;
  }
  std::vector<Tokens> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  Rng rng(Seed(m.seed_key.empty() ? m.id : m.seed_key));
  if (!m.input_lens.empty()) {
    in = m.input_lens;
    out = m.output_lens;
  } else if (m.dataset == "random" || m.dataset == "single long prompt") {
    plan.fixed_lengths = true;
    if (!m.input_len) {
      *why = "a fixed-length record without input_len";
      return std::nullopt;
    }
    const double total_in = m.total_input_tokens.value_or(static_cast<double>(*m.input_len * n));
    const double total_out =
        m.total_output_tokens.value_or(static_cast<double>(m.output_len.value_or(1) * n));
    // The record's totals, spread as evenly as whole tokens allow.
    for (std::int64_t i = 0; i < n; ++i) {
      in[static_cast<std::size_t>(i)] = static_cast<Tokens>(
          std::floor(total_in * static_cast<double>(i + 1) / static_cast<double>(n)) -
          std::floor(total_in * static_cast<double>(i) / static_cast<double>(n)));
      out[static_cast<std::size_t>(i)] = std::max<Tokens>(
          1, static_cast<Tokens>(
                 std::floor(total_out * static_cast<double>(i + 1) / static_cast<double>(n)) -
                 std::floor(total_out * static_cast<double>(i) / static_cast<double>(n))));
    }
  } else if (m.dataset == "sharegpt") {
    if (!m.total_input_tokens || !m.total_output_tokens) {
      *why = "a ShareGPT record without its token totals";
      return std::nullopt;
    }
    // guidellm records too, although benchmark-runner bounds no length:
    // docs/engine.md, "Replaying guidellm records".
    in = ScaledLengths(rng, n, *m.total_input_tokens, 4, 1024);
    out = ScaledLengths(rng, n, *m.total_output_tokens, 4, 1024);
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = std::min<Tokens>(out[i], 2048 - in[i]);
  } else {
    *why = m.dataset == "bench"
               ? std::string(
                     "a vllm bench result without input_lens and output_lens (vllm "
                     "bench serve --save-result --save-detailed lists them) has no "
                     "lengths of its requests to replay")
               : "dataset \"" + m.dataset + "\" has no length model";
    return std::nullopt;
  }
  const Tokens limit = c.model.max_position_embeddings;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (limit > 0 && in[i] + out[i] > limit + 1) {
      *why = "requests longer than the model's context (" + std::to_string(limit) + ")";
      return std::nullopt;
    }
  }
  plan.client = m.client;
  if (m.client == BenchmarkClient::kGuidellm) {
    if (m.client_profile != "constant" && m.client_profile != "poisson") {
      *why = m.client_profile.empty()
                 ? std::string(
                       "guidellm record without its --profile (constant and poisson are "
                       "replayed)")
                 : "guidellm --profile " + m.client_profile +
                       " is not replayed (constant and poisson are)";
      return std::nullopt;
    }
    if (!(std::isfinite(m.request_rate) && m.request_rate > 0)) {
      *why = "guidellm --profile " + m.client_profile + " without a finite --rate";
      return std::nullopt;
    }
  }
  auto request_turn = [&](std::size_t i) {
    Turn t;
    t.spans.push_back(Span{SpanKind::kUser, std::max<Tokens>(1, in[i]), std::nullopt});
    t.output = std::max<Tokens>(1, out[i]);
    return t;
  };
  // Release: one request per task at its arrival (evenly spaced, Poisson or
  // all at once), at most `concurrency` in flight. vllm bench serve's
  // --max-concurrency is one asyncio.Semaphore that every request's task
  // waits on in the order the requests were drawn (vllm/benchmarks/serve.py,
  // `limited_request_func`), so the next request starts when any running
  // one finishes, not when the one a fixed client sent before it does; its
  // latencies count from then (the request function's start time).
  const bool guidellm = m.client == BenchmarkClient::kGuidellm;
  const int slots = !guidellm && m.concurrency ? std::max(1, *m.concurrency) : 0;
  if (slots > 0) plan.config.client_max_tasks = slots;
  // guidellm v0.5.3 (the version gpustack/benchmark-runner's uv.lock
  // pins), src/guidellm: --profile constant sends request k (from 1) at
  // start + k / rate (scheduler/strategies.py L526-527), poisson after
  // exponential gaps (L635-645); with no cap asked for, at most
  // settings.max_concurrency = 512 are in flight (settings.py L129,
  // scheduler/worker_group.py L141-151), a worker taking its next request
  // only when a slot is free (scheduler/worker.py L305-308), so a late
  // one goes at once when one finishes; every latency counts from the
  // send (backends/openai.py L281, schemas/request_stats.py L149-179).
  if (guidellm) plan.config.client_max_tasks = kGuidellmMaxConcurrency;
  const bool constant = guidellm && m.client_profile == "constant";
  const bool poisson = !constant && std::isfinite(m.request_rate) && m.request_rate > 0;
  double clock = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    Task task;
    task.id = "request-" + std::to_string(i);
    if (constant) {
      task.arrival_s = static_cast<double>(i + 1) / m.request_rate;
    } else if (poisson) {
      clock += -std::log(rng.NextOpenUnit()) / m.request_rate;
      task.arrival_s = clock;
    }
    task.turns.push_back(request_turn(i));
    plan.tasks.push_back(std::move(task));
  }
  auto policy = MakeContextPolicy(ContextPolicyParams{});
  if (!policy) {
    *why = policy.error().message();
    return std::nullopt;
  }
  for (const Task& t : plan.tasks) plan.requests.push_back((*policy)->Plan(t));
  return plan;
}

Result<ReplayMetrics> RunReplay(const ReplayPlan& plan, const EngineProfile& profile,
                                ReplayDetail* detail) {
  SimulationConfig c = plan.config;
  c.activation_reserve_gib =
      ProfileReserveGib(profile, c.max_num_batched_tokens, c.model.hidden_size);
  if (plan.sglang_state) {
    // The state slots' cap on running requests (SglangStateSlots): the
    // slots share what the weights leave of the memory fraction less the
    // reserve (SGLang's CUDA graphs stop at that cap too, but no batch is
    // larger, so the cost model needs no other limit).
    auto weights = ComputeWeightBytes(c.model, c.weight_format);
    if (!weights) return weights.error();
    const double rest =
        std::floor(static_cast<double>(c.gpu.usable_memory_bytes) * c.memory_fraction) -
        c.activation_reserve_gib * kBytesPerGiB -
        static_cast<double>(weights->PerGpu(c.gpus_per_replica));
    const SglangStateLimits limits =
        SglangStateSlots(*plan.sglang_state, rest,
                         static_cast<double>(StateBytesPerSequence(c.model, c.gpus_per_replica)));
    if (limits.max_running > 0)
      c.max_num_seqs = static_cast<int>(std::min<std::int64_t>(c.max_num_seqs, limits.max_running));
  }
  OperatorModelOptions options;
  options.tensor_parallel = c.gpus_per_replica;
  options.max_batch_tokens = c.max_num_batched_tokens;
  options.max_batch_seqs = c.max_num_seqs;
  options.async_scheduling = plan.async_scheduling;
  options.cpu_waits_for_sampling = plan.cpu_waits_for_sampling;
  options.fp8_checkpoint = plan.fp8_checkpoint;
  options.expert_parallel = plan.expert_parallel;
  options.cuda_graph_max_tokens = plan.cuda_graph_max_batch;
  options.mxfp4_experts_marlin = plan.mxfp4_experts_marlin;
  auto model = OperatorCostModel::Make(c.model, c.kv_format, c.weight_format, c.gpu, nullptr,
                                       profile, options);
  if (!model) return model.error();
  c.cost_model = *model;
  if (plan.speculative) {
    auto spec = MakeSpeculative(*plan.speculative, c.model, c.kv_format, c.gpu, *model, &profile,
                                options, RooflineParams{});
    if (!spec) return spec.error();
    c.cost_model = spec->cost;
    c.speculative.num_speculative_tokens = spec->num_speculative_tokens;
    c.speculative.expected_tokens = spec->expected_tokens;
    c.speculative.verify_tokens = spec->verify_tokens;
    c.speculative.draft_weight_bytes = spec->draft_weight_bytes;
    c.speculative.draft_kv_bytes_per_token = spec->draft_kv_bytes_per_token;
  }
  const ProfileParameters& p = profile.params;
  c.frontend_per_request_s = p.frontend_per_request_s;
  c.frontend_per_token_s = p.frontend_per_token_s;
  c.request_latency_s = p.request_latency_s;
  std::vector<IterationEntry> log;
  if (detail != nullptr) {
    c.step_mode = true;
    c.cost_model = std::make_shared<RecordingCostModel>(c.cost_model, &log);
  }
  auto result = Simulate(c, plan.tasks, plan.requests);
  if (!result) return result.error();
  // The record's engine served every request: a replay that refuses some
  // (SGLang's pool cap, SimulationTotals::pool_context_len) gave it less
  // memory than it had.
  if (result->rejected_requests > 0) {
    return Error("the replay refused " + FormatWithSeparators(result->rejected_requests) +
                 " request(s) of up to " + FormatWithSeparators(result->longest_rejected_tokens) +
                 " tokens over " +
                 (result->pool_context_len > 0
                      ? "the " + FormatWithSeparators(result->pool_context_len) +
                            " tokens SGLang serves from its KV pool"
                      : "max_model_len " + FormatWithSeparators(result->max_model_len)) +
                 ", which the record's engine served");
  }
  ReplayMetrics out;
  double first_release = 1e300, last_finish = 0, ttft = 0, tpot = 0, e2e = 0, outputs = 0;
  double tpot_tokens = 0;  // guidellm's weights
  std::int64_t tpot_n = 0;
  std::vector<double> tpots;  // each request's, vllm bench's definition
  for (const RequestRecord& r : result->requests) {
    first_release = std::min(first_release, r.release_s);
    last_finish = std::max(last_finish, r.finish_s);
    ttft += r.first_token_s - r.release_s;
    e2e += r.finish_s - r.release_s;
    outputs += static_cast<double>(r.output_tokens);
    if (plan.client == BenchmarkClient::kGuidellm) {
      // guidellm: (last token - sent) / output tokens per request, its mean
      // weighted by output tokens (v0.5.3,
      // src/guidellm/benchmark/schemas/generative/metrics.py L862-870, a
      // (value, weight) pair per request): sum of latencies / sum of tokens.
      tpot += r.finish_s - r.release_s;
      tpot_tokens += static_cast<double>(r.output_tokens);
    } else if (r.output_tokens > 1) {
      tpot += (r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1);
      tpots.push_back((r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1));
      ++tpot_n;
    }
  }
  const double n = static_cast<double>(std::max<std::size_t>(1, result->requests.size()));
  out.duration_s = last_finish - std::min(first_release, last_finish);
  out.ttft_ms_mean = 1000 * ttft / n;
  out.e2e_ms_mean = 1000 * e2e / n;
  if (plan.client == BenchmarkClient::kGuidellm) {
    out.tpot_ms_mean = tpot_tokens > 0 ? 1000 * tpot / tpot_tokens : 0;
  } else {
    out.tpot_ms_mean = tpot_n > 0 ? 1000 * tpot / static_cast<double>(tpot_n) : 0;
  }
  out.output_tok_s = out.duration_s > 0 ? outputs / out.duration_s : 0;
  if (detail != nullptr) {
    ReplayDetail& d = *detail;
    d = ReplayDetail{};
    d.metrics = out;
    d.reserve_gib = c.activation_reserve_gib;
    d.max_num_seqs = c.max_num_seqs;
    d.pool_blocks = result->kv_pool_blocks;
    d.pool_tokens = result->kv_pool_blocks * c.block_size;
    if (c.cost_model) {
      for (const FormatUse& f : c.cost_model->Describe().formats) {
        if (f.part == "experts") d.experts = f.stored + " on " + f.kernel;
      }
    }
    d.requests = static_cast<std::int64_t>(result->requests.size());
    double context_sum = 0;
    for (const RequestRecord& r : result->requests) {
      context_sum +=
          static_cast<double>(r.prompt_tokens) + static_cast<double>(r.output_tokens) / 2;
      d.prompt_tokens += r.prompt_tokens;
      d.prefill_tokens += r.prefill_tokens;
      d.preemptions += r.preemptions;
      d.preempted_requests += r.preemptions > 0 ? 1 : 0;
    }
    for (const IterationEntry& e : log) {
      IterationKind& kind = e.prefill_tokens == 0 ? d.decode_only
                            : e.decodes == 0      ? d.prefill_only
                                                  : d.mixed;
      kind.count += 1;
      kind.seconds += e.seconds;
      kind.prefill_tokens += static_cast<double>(e.prefill_tokens);
      kind.decodes += e.decodes;
      d.peak_batch = std::max(d.peak_batch, e.sequences);
      d.peak_decodes = std::max(d.peak_decodes, e.decodes);
    }
    // A sequence's mean context while decoding: prompt plus half the output.
    const Tokens context =
        d.requests > 0
            ? static_cast<Tokens>(std::llround(context_sum / static_cast<double>(d.requests)))
            : 0;
    if (d.decode_only.count > 0 && d.requests > 0 && !plan.speculative) {
      d.typical_decode_batch = std::max<std::int64_t>(
          1, std::llround(d.decode_only.decodes / static_cast<double>(d.decode_only.count)));
      d.typical_decode_context = context;
      for (const auto& [part, s] :
           (*model)->DecodeParts(d.typical_decode_batch, d.typical_decode_context)) {
        d.decode_parts.emplace_back(part, s);
      }
    }
    // The mean iteration computing prompts: mixed with decodes when any
    // was (vLLM's), else prompt chunks alone (SGLang's, or one at a time).
    const IterationKind& prompting = d.mixed.count > 0 ? d.mixed : d.prefill_only;
    if (prompting.count > 0 && d.requests > 0 && !plan.speculative) {
      const double mixed = static_cast<double>(prompting.count);
      d.typical_mixed_prompt_tokens =
          std::max<Tokens>(1, static_cast<Tokens>(std::llround(prompting.prefill_tokens / mixed)));
      d.typical_mixed_decodes = std::llround(static_cast<double>(prompting.decodes) / mixed);
      const Tokens prompt = std::max<Tokens>(
          1, static_cast<Tokens>(std::llround(static_cast<double>(d.prompt_tokens) /
                                              static_cast<double>(d.requests))));
      std::vector<ScheduledWork> work;
      for (Tokens left = d.typical_mixed_prompt_tokens; left > 0; left -= prompt) {
        work.push_back(ScheduledWork{0, std::min(left, prompt), true, false});
      }
      for (std::int64_t i = 0; i < d.typical_mixed_decodes; ++i) {
        work.push_back(ScheduledWork{context, 1, false, false});
      }
      for (const auto& [part, s] : (*model)->IterationParts(work)) {
        d.mixed_parts.emplace_back(part, s);
      }
    }
    const InterTokenGaps gaps(log);
    d.itl_ms_p50 = 1000 * gaps.Percentile(50);
    d.itl_ms_p99 = 1000 * gaps.Percentile(99);
    d.itl_ms_mean = 1000 * gaps.Mean();
    d.tpot_ms_p50 = 1000 * Median(std::move(tpots));
  }
  return out;
}

InterTokenGaps::InterTokenGaps(const std::vector<IterationEntry>& log) {
  double idle = 0;  // decode-free iterations since the last decode
  // Sequences given their first token in those iterations: how long ago.
  std::vector<std::pair<double, std::int64_t>> started;
  for (const IterationEntry& e : log) {
    if (e.decodes == 0) {
      for (auto& s : started) s.first += e.seconds;
      started.emplace_back(0.0, e.first_tokens);
      idle += e.seconds;
      continue;
    }
    std::int64_t left = e.decodes;
    for (const auto& [since, n] : started) {  // oldest first
      const std::int64_t k = std::min(left, n);
      if (k > 0) gaps_.emplace_back(since + e.seconds, k);
      left -= k;
    }
    if (left > 0) gaps_.emplace_back(idle + e.seconds, left);
    tokens_ += e.decodes;
    idle = 0;
    started.clear();
  }
  std::sort(gaps_.begin(), gaps_.end());
}

double InterTokenGaps::Percentile(double p) const {
  if (tokens_ == 0) return 0;
  const std::int64_t rank = NearestRank(tokens_, p);
  std::int64_t seen = 0;
  for (const auto& [t, n] : gaps_) {
    seen += n;
    if (seen >= rank) return t;
  }
  return gaps_.back().first;
}

double InterTokenGaps::Mean() const {
  double sum = 0;
  for (const auto& [t, n] : gaps_) sum += t * static_cast<double>(n);
  return tokens_ > 0 ? sum / static_cast<double>(tokens_) : 0;
}

bool ItlComparable(const ReplayPlan& plan) {
  const Measurement& m = *plan.measurement;
  const bool zero = std::find(m.quality_flags.begin(), m.quality_flags.end(),
                              "itl_reported_zero") != m.quality_flags.end();
  double outputs = 0, requests = 0;
  for (const std::vector<Request>& task : plan.requests) {
    for (const Request& r : task) {
      outputs += static_cast<double>(r.output);
      requests += 1;
    }
  }
  return plan.client == BenchmarkClient::kVllmBench && !plan.speculative && m.itl_ms_p50 &&
         *m.itl_ms_p50 > 0 && !zero && requests > 0 && outputs >= kItlMinMeanOutput * requests;
}

std::string ReplayDetailMarkdown(const ReplayPlan& plan, const ReplayDetail& d) {
  const Measurement& m = *plan.measurement;
  std::ostringstream o;
  auto row = [&](const std::string& what, const std::optional<double>& measured, double kvbill,
                 int digits) {
    o << "| " << what << " | " << (measured ? FormatFixed(*measured, digits) : std::string("—"))
      << " | " << FormatFixed(kvbill, digits) << " |\n";
  };
  o << "## " << m.id << "\n\n"
    << "model " << plan.model_name << ", GPU " << plan.config.gpu.id << " x"
    << plan.config.gpus_per_replica << ", max_num_batched_tokens "
    << plan.config.max_num_batched_tokens << ", max_num_seqs " << d.max_num_seqs
    << (plan.async_scheduling ? ", async scheduling" : "")
    << (d.experts.empty() ? std::string() : ", experts " + d.experts)
    << (plan.client == BenchmarkClient::kGuidellm
            ? "; client guidellm --profile " + m.client_profile + ", at most " +
                  std::to_string(plan.config.client_max_tasks) + " in flight"
        : plan.config.client_max_tasks > 0
            ? "; client vllm bench serve, at most " + std::to_string(plan.config.client_max_tasks) +
                  " in flight"
            : std::string())
    << "\n\n"
    << "| metric | measured | kvbill |\n|---|---:|---:|\n";
  row("duration_s", m.duration_s, d.metrics.duration_s, 2);
  row("ttft_ms_mean", m.ttft_ms_mean, d.metrics.ttft_ms_mean, 2);
  row("tpot_ms_mean", m.tpot_ms_mean, d.metrics.tpot_ms_mean, 2);
  row("itl_ms_p50", m.itl_ms_p50, d.itl_ms_p50, 2);
  row("itl_ms_p99", m.itl_ms_p99, d.itl_ms_p99, 2);
  row("itl_ms_mean", m.itl_ms_mean, d.itl_ms_mean, 2);
  row("tpot_ms_p50", m.tpot_ms_p50, d.tpot_ms_p50, 2);
  row("output_tok_s", m.output_tok_s, d.metrics.output_tok_s, 2);
  o << "\n- memory reserved before the KV pool (profile run): " << FormatFixed(d.reserve_gib, 2)
    << " GiB; KV pool " << d.pool_blocks << " blocks = " << d.pool_tokens << " tokens\n"
    << "- requests " << d.requests << ", prompt tokens " << d.prompt_tokens
    << ", prompt tokens computed " << d.prefill_tokens << " (recomputed "
    << d.prefill_tokens - d.prompt_tokens << "), preemptions " << d.preemptions << " of "
    << d.preempted_requests << " requests\n"
    << "- most sequences in one iteration " << d.peak_batch << ", most decode steps "
    << d.peak_decodes << "\n\n"
    << "| iterations | count | total s | mean ms | mean prompt tokens | mean decodes |\n"
    << "|---|---:|---:|---:|---:|---:|\n";
  auto kind = [&](const char* name, const IterationKind& k) {
    const double n = static_cast<double>(std::max<std::int64_t>(1, k.count));
    o << "| " << name << " | " << k.count << " | " << FormatFixed(k.seconds, 2) << " | "
      << FormatFixed(1000 * k.seconds / n, 2) << " | " << FormatFixed(k.prefill_tokens / n, 1)
      << " | " << FormatFixed(k.decodes / n, 1) << " |\n";
  };
  kind("decode only", d.decode_only);
  kind("prompt chunks and decodes", d.mixed);
  kind("prompt chunks only", d.prefill_only);
  if (!d.decode_parts.empty()) {
    o << "\nA decode-only iteration of " << d.typical_decode_batch
      << (d.typical_decode_batch == 1 ? " sequence" : " sequences") << " at context "
      << FormatWithSeparators(d.typical_decode_context)
      << " (the replay's mean batch of such iterations; prompt plus half the output), by "
         "part (ms; the GPU parts add, \"cpu\" adds before them unless scheduling is "
         "async, \"eager_launch\" and \"output\" bound them from below):\n\n"
      << "| part | ms |\n|---|---:|\n";
    for (const auto& [part, s] : d.decode_parts) {
      o << "| " << part << " | " << FormatFixed(1000 * s, 3) << " |\n";
    }
  }
  if (!d.mixed_parts.empty()) {
    o << "\nAn iteration of " << FormatWithSeparators(d.typical_mixed_prompt_tokens)
      << " prompt tokens (whole prompts of the mean length from an empty cache)";
    if (d.typical_mixed_decodes > 0) {
      o << " and " << d.typical_mixed_decodes
        << (d.typical_mixed_decodes == 1 ? " decode" : " decodes")
        << " at that context (the replay's mean iteration mixing them)";
    } else {
      o << " alone (the replay's mean prompt-only iteration; none mixed prompts with decodes)";
    }
    o << ", by part (ms):\n\n"
      << "| part | ms |\n|---|---:|\n";
    for (const auto& [part, s] : d.mixed_parts) {
      o << "| " << part << " | " << FormatFixed(1000 * s, 3) << " |\n";
    }
  }
  return o.str();
}

}  // namespace kvbill
