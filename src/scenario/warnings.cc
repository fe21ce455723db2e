#include "kvbill/scenario/warnings.h"

#include <set>

#include "kvbill/cache/prefix_cache.h"
#include "kvbill/cost/speculative.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/hardware/kv_blocks.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/util/names.h"
#include "kvbill/util/units.h"
#include "scenario/scenario_model.h"

namespace kvbill {
namespace {

std::string Count(std::int64_t n, const std::string& one, const std::string& many) {
  return FormatWithSeparators(n) + " " + (n == 1 ? one : many);
}

std::string Seconds3(double s) { return FormatFixed(s, s < 10 ? 3 : 1) + " s"; }

// "1 task was refused at its first request", "3 tasks were refused at their
// first request".
std::string RefusedAtFirstRequest(std::int64_t tasks) {
  return Count(tasks, "task was refused at its", "tasks were refused at their") + " first request";
}

// ": a, b, c and 4 more" of the tasks that served nothing (the summary's
// unserved_task_ids lists them all).
std::string UnservedIds(const std::vector<std::string>& ids) {
  constexpr std::size_t kNamed = 3;
  if (ids.empty()) return "";
  std::string out = ": ";
  for (std::size_t i = 0; i < ids.size() && i < kNamed; ++i) {
    out += (i == 0 ? "" : ", ") + ids[i];
  }
  if (ids.size() > kNamed) out += " and " + FormatWithSeparators(ids.size() - kNamed) + " more";
  return out;
}

// What else serves requests refused over the limit. The scenario's own
// max_model_len below the model's may be raised, but only as far as a
// replica's pool holds one sequence (vLLM would not start past it): past
// that, it takes more memory for KV too.
std::string Remedy(const Scenario& s, const SimulationTotals& t) {
  if (t.pool_context_len > 0) return "a larger KV pool";
  if (!s.engine.max_model_len || t.model_max_model_len <= *s.engine.max_model_len) {
    return "a model with a longer context";
  }
  const Tokens set = *s.engine.max_model_len;
  const Tokens model = t.model_max_model_len;
  const Tokens pool = t.pool_sequence_tokens > 0 ? t.pool_sequence_tokens : model;
  const std::string sets = " (the scenario sets " + FormatWithSeparators(set) + ")";
  if (pool >= model) {
    return "engine.max_model_len raised towards the model's " + FormatWithSeparators(model) + sets;
  }
  if (pool > set) {
    return "engine.max_model_len raised towards the " + FormatWithSeparators(pool) +
           " tokens a replica's KV pool holds of one sequence" + sets +
           ", and past them towards the model's " + FormatWithSeparators(model) +
           " with more memory for KV (GPUs, a smaller KV format)";
  }
  return "more memory for KV (GPUs, a smaller KV format: a replica's pool holds " +
         FormatWithSeparators(pool) +
         " tokens of one sequence) with engine.max_model_len raised "
         "towards the model's " +
         FormatWithSeparators(model) + sets;
}

void ContextLimit(const Scenario& s, const SimulationTotals& t, std::vector<RunWarning>* out) {
  std::string text;
  const std::string limit =
      RequestLimitText(t.request_len_limit, t.pool_context_len, t.max_model_len);
  if (t.rejected_requests > 0) {
    text =
        Count(t.rejected_requests, "request was", "requests were") +
        " refused: prompt plus output tokens over " + limit + " (the longest " +
        FormatWithSeparators(t.longest_rejected_tokens) + " tokens); each ends its task" +
        (t.unsent_requests > 0
             ? ", whose " + Count(t.unsent_requests, "later request was", "later requests were") +
                   " never sent"
             : std::string()) +
        (t.unserved_tasks > 0 ? " (" + RefusedAtFirstRequest(t.unserved_tasks) +
                                    " and served nothing" + UnservedIds(t.unserved_task_ids) + ")"
                              : std::string()) +
        ". A context_policy that keeps prompts under the limit, or " + Remedy(s, t) +
        ", serves them";
    if (!s.engine.max_model_len && t.model_max_model_len > t.max_model_len) {
      text += " (the model uses LongRoPE: vLLM starts it at its original_max_position_embeddings " +
              FormatWithSeparators(t.max_model_len) + "; engine.max_model_len up to " +
              FormatWithSeparators(t.model_max_model_len) + " serves longer ones)";
    }
  }
  if (s.engine.max_model_len && t.model_max_model_len > 0 &&
      *s.engine.max_model_len > t.model_max_model_len) {
    if (!text.empty()) text += "; ";
    text += "engine.max_model_len " + FormatWithSeparators(*s.engine.max_model_len) +
            " is above the model's " + FormatWithSeparators(t.model_max_model_len) +
            (s.deployment.engine == "sglang"
                 ? " (a what-if: SGLang refuses a context length above the model's unless "
                   "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1, and the model was not trained "
                   "that long)"
                 : " (a what-if: vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, and the "
                   "model was not trained that long)");
  }
  if (t.pool_context_len > 0) {
    if (!text.empty()) text += "; ";
    text += "a replica's KV pool holds " + FormatWithSeparators(t.pool_sequence_tokens) +
            " tokens of a sequence, less than max_model_len " +
            FormatWithSeparators(t.max_model_len) +
            ": SGLang starts anyway and serves requests of at most " +
            FormatWithSeparators(t.pool_context_len) +
            " tokens (its max_req_len, min(context length, pool) - 1, less one; prompts under "
            "max_req_len - 5), refusing longer prompts and cutting outputs short (kvbill refuses "
            "the request either way); give it more memory (GPUs, "
            "memory_fraction, a smaller KV format) to serve the model's whole context";
  } else if (const std::string refused = VllmRefusesToStart(t); !refused.empty()) {
    if (!text.empty()) text += "; ";
    text += refused;
  }
  if (!text.empty()) out->push_back({"context_limit", text});
}

void PoolBeyondMemory(const SimulationTotals& t, std::vector<RunWarning>* out) {
  if (t.memory_pool_tokens == kUnlimitedBlocks || t.pool_tokens <= t.memory_pool_tokens) return;
  const std::string after = " after the weights and the activation reserve";
  std::string size;
  if (t.memory_pool_tokens <= 0) {
    size = (t.pool_tokens == kUnlimitedBlocks ? std::string("unlimited (never evict)")
                                              : FormatWithSeparators(t.pool_tokens) + " tokens") +
           ", where its memory holds none: the weights alone do not fit these GPUs";
  } else {
    const std::string memory = FormatWithSeparators(t.memory_pool_tokens) + " tokens";
    size = t.pool_tokens == kUnlimitedBlocks
               ? "unlimited (never evict), where its memory holds " + memory + after
               : FormatWithSeparators(t.pool_tokens) + " tokens, " +
                     FormatFixed(static_cast<double>(t.pool_tokens) /
                                     static_cast<double>(t.memory_pool_tokens),
                                 1) +
                     "x what its memory holds" + after + " (" + memory + ")";
  }
  out->push_back(
      {"pool_beyond_memory",
       "prefix_cache.capacity_tokens makes a replica's KV pool " + size +
           ": running sequences and cached blocks share that pool, so batch sizes, preemptions "
           "and hits assume memory the GPUs do not have (a cache study, not a deployment); null "
           "sizes it from memory, and prefix_cache.offload models a host-memory tier under it"});
}

void BlockSizeUnserved(const Scenario& s, std::vector<RunWarning>* out) {
  // SGLang pages token by token by default (page_size 1); vLLM's attention
  // backends each keep their own block sizes (kv_blocks.h).
  const Tokens bs = s.prefix_cache.block_size;
  if (s.deployment.engine != "vllm") return;
  auto model = LoadScenarioModel(s);
  auto gpu = LookupGpu(s.deployment.gpu);
  const VllmKvBlocks rule = model && gpu ? VllmKvBlockRule(*model, *gpu) : VllmKvBlocks{};
  if (rule.Keeps(bs)) return;
  const std::string given = "prefix_cache.block_size " + std::to_string(bs);
  const std::string consequence =
      "hits, eviction and the pool describe a granularity vLLM does not run";
  if (rule.backend.empty()) {
    out->push_back({"block_size_unserved",
                    given +
                        " is not a multiple of 16, which vLLM's CUDA attention backends "
                        "(FlashAttention, Triton) need for its KV blocks: " +
                        consequence + " on these GPUs (16 is its default)"});
    return;
  }
  const std::string keeps =
      rule.exact ? std::to_string(rule.size) + "-token blocks only"
                 : "blocks in multiples of " + std::to_string(rule.multiple) +
                       (rule.also > 0 ? " (or of " + std::to_string(rule.also) + " tokens)" : "");
  out->push_back({"block_size_unserved",
                  given + ": vLLM runs this model's attention on " + gpu->name + " with " +
                      rule.backend + ", which takes " + keeps + ": vLLM serves it in " +
                      std::to_string(rule.size) + "-token blocks, and " + consequence +
                      " (leave block_size unset for " + std::to_string(rule.size) + ")"});
}

// A host offload tier the GPUs' servers cannot have: a link faster than
// the GPU's own to its host (HostLinkOf), or more host memory than
// about 1 TiB a GPU, the most 8-GPU servers hold (8 TB of DRAM).
void OffloadImplausible(const Scenario& s, std::vector<RunWarning>* out) {
  const auto& c = s.prefix_cache;
  if (!c.enabled || c.offload_capacity_gib <= 0) return;
  std::string text;
  auto gpu = LookupGpu(s.deployment.gpu);
  const HostLink link = gpu ? HostLinkOf(*gpu) : HostLink{};
  if (gpu && c.offload_link_gb_s * 1e9 > link.bytes_per_s) {
    const double raw = link.bytes_per_s / 1e9;
    text = "prefix_cache.offload.link_gb_s " + FormatFixed(c.offload_link_gb_s, 0) + " GB/s" +
           (c.offload_link_gb_s == ScenarioPrefixCache{}.offload_link_gb_s ? " (kvbill's default)"
                                                                           : "") +
           " is more than " + gpu->id + "'s link to its host carries one way (" + link.name + ", " +
           FormatFixed(raw, 0) + " GB/s raw; copies reach about " + FormatFixed(raw * 0.8, 0) +
           "): reloads from the host tier are timed too fast; set link_gb_s to what the "
           "host's copies reach";
  }
  const double per_gpu_gib = c.offload_capacity_gib / std::max(1, s.deployment.gpus_per_replica);
  if (per_gpu_gib > 1024) {
    if (!text.empty()) text += "; ";
    text += "prefix_cache.offload.capacity_gib " + FormatFixed(c.offload_capacity_gib, 0) +
            " GiB is " + FormatFixed(per_gpu_gib, 0) + " GiB of host memory a GPU of the " +
            "replica, more than servers hold (8-GPU servers take up to about 8 TB of DRAM, 1 "
            "TiB a GPU): hits from the tier assume memory no server of these GPUs has";
  }
  if (!text.empty()) out->push_back({"offload_implausible", text});
}

void KvFormatDefault(const Scenario& s, std::vector<RunWarning>* out) {
  if (s.declared_kv_format.empty()) return;
  out->push_back({"kv_format_default",
                  "the checkpoint declares a " + s.declared_kv_format +
                      " KV cache, which vLLM's default (--kv-cache-dtype auto) stores, and this "
                      "run keeps kvbill's default kv_format " +
                      s.kv_format +
                      ": its KV bytes, pool and hits are not what a default deployment has; set "
                      "kv_format \"auto\" for vLLM's choice, or kv_format explicitly"});
}

// Sizing keys the model's config.json omits, read at their class defaults.
void ConfigDefaulted(const Scenario& s, std::vector<RunWarning>* out) {
  auto model = LoadScenarioModel(s);
  if (!model || model->defaulted_fields.empty()) return;
  std::string fields;
  for (const DefaultedField& d : model->defaulted_fields) {
    fields += (fields.empty() ? "" : ", ") + d.key + " = " + d.value;
  }
  out->push_back(
      {"config_defaulted",
       model->source + " omits " +
           (model->defaulted_fields.size() == 1 ? "a key that sizes" : "keys that size") +
           " the model, read at the class defaults of model_type \"" + model->model_type + "\" (" +
           fields + "; " + model->defaults_source +
           "): the weights, KV bytes and pool rest on them; check them against the "
           "model card, or give them with model.set"});
}

void OverloadedRun(const Scenario& s, const SimulationTotals& t, const RunSummary& sum,
                   std::vector<RunWarning>* out) {
  const std::optional<OverloadedBound> by = OverloadedBy(sum.queue_s);
  if (!by) return;
  std::string where;
  if (s.prefix_cache.pin_during_tool_s > 0 && t.pins_yielded > 0) {
    // Pins hold blocks the waiting requests needed: part of the backlog is
    // theirs, which more replicas would hide and shorter pins remove.
    where += "; pins held KV through tool waits (prefix_cache.pin_during_tool_s " +
             FormatDuration(s.prefix_cache.pin_during_tool_s) + ") and " +
             FormatWithSeparators(t.pins_yielded) +
             (t.pins_yielded == 1 ? " gave" : " of them gave") +
             " way to waiting requests: they hold the pool the queue waits for, so shorter pins "
             "may shorten it";
  }
  if (sum.frontend_wait_s.p50 > 0.5 * sum.queue_s.p50) {
    // The backlog is the API server's: it takes requests one at a time.
    where += "; most of it (median " + Seconds3(sum.frontend_wait_s.p50) +
             ") waiting for the API server, which takes requests one at a time, so more GPUs "
             "per replica will not shorten it and more replicas would; its time per request "
             "is the profile's, one fitted value, where published vLLM bursts imply 1.5 to 16 ms "
             "by the model's chat template (and the host's CPU), so this wait is uncertain";
  }
  // A median above the bound, or a mean (or a tenth) above it with a quick
  // median: part of the requests (preempted, recomputed) carries the backlog.
  std::string waited;
  switch (by->statistic) {
    case OverloadedBound::Statistic::kMedian:
      waited = "the median request waited " + Seconds3(sum.queue_s.p50) + " to be admitted (p90 " +
               Seconds3(sum.queue_s.p90) + "; more than " + Seconds3(by->bound) + " is a backlog)";
      break;
    case OverloadedBound::Statistic::kMean:
      waited = "requests waited " + Seconds3(sum.queue_s.mean) +
               " on average to be admitted (median " + Seconds3(sum.queue_s.p50) + ", p90 " +
               Seconds3(sum.queue_s.p90) + ": a backlog part of them carries; a mean above " +
               Seconds3(by->bound) + " is one)";
      break;
    case OverloadedBound::Statistic::kP90:
      waited = "a tenth of the requests waited more than " + Seconds3(sum.queue_s.p90) +
               " to be admitted (p90; median " + Seconds3(sum.queue_s.p50) + ", mean " +
               Seconds3(sum.queue_s.mean) + ", " + std::to_string(sum.preemptions) +
               (sum.preemptions == 1 ? " preemption" : " preemptions") +
               ": a backlog part of them carries; a p90 above " + Seconds3(by->bound) + " is one)";
      break;
  }
  // A handful of requests cannot tell a backlog from one request waiting
  // behind another's long prefill: said so.
  constexpr std::int64_t kFewRequests = 10;
  if (sum.queue_s.count < kFewRequests) {
    where += "; only " + Count(sum.queue_s.count, "request", "requests") +
             ", so this may be head-of-line waiting behind one long prefill rather than a "
             "backlog: a trace of more requests tells them apart";
  }
  out->push_back({"overloaded", waited +
                                    ": the deployment cannot keep up with the arrivals, so "
                                    "latencies and cost per task describe a queue; add replicas "
                                    "or lower the load" +
                                    where + " (docs/engine.md#warnings)"});
}

void SloViolated(const Scenario& s, const RunSummary& sum, std::vector<RunWarning>* out) {
  std::string text;
  int violated = 0;
  for (const SloCheck& c : CheckSlo(s.slo, sum)) {
    if (c.held) continue;
    text += std::string(violated++ > 0 ? ", " : "") + c.target.metric +
            (c.not_measured.empty() ? " " + Seconds3(c.actual) + " > " + Seconds3(c.target.max)
                                    : " not measured (" + c.not_measured + ")");
  }
  if (violated == 0) return;
  out->push_back({"slo_violated", std::to_string(violated) + " of " + std::to_string(s.slo.size()) +
                                      " latency targets violated: " + text});
}

// What would show busy GPUs' cost, among what applies to the run: a denser
// load only when there are arrivals to bring closer (two tasks or more),
// release "after_finish" for recorded gaps between a task's turns, fewer
// replicas when there are
// several, else busy billing (the GPU time used, as a shared fleet bills).
std::string IdleRemedies(const Scenario& s, const RunSummary& sum) {
  std::vector<std::string> remedies;
  if (sum.tasks > 1) remedies.push_back("a denser load (trace.load)");
  // The gaps after_finish closes are between a task's turns: none when every
  // task is one request.
  if (s.trace.release == "recorded" && sum.requests > sum.tasks) {
    remedies.push_back("release \"after_finish\" instead of recorded gaps");
  }
  if (s.deployment.replicas > 1) remedies.push_back("fewer replicas");
  if (remedies.empty()) {
    // One task: its idle time is its own waits between turns, or, for one
    // request, the time around its iterations (the API server's, the
    // arrival).
    return std::string(sum.requests > 1
                           ? "one task on one replica waits out its own tool calls"
                           : "one request on one replica leaves the GPU idle around its own "
                             "iterations (the API server's time, its arrival)") +
           ": deployment.billing \"busy\" (the GPU time used, as a shared fleet bills it)";
  }
  return JoinWithOr(remedies, /*serial_comma=*/true);
}

// The advice fits the run's trace.release: "recorded" can switch to
// after_finish; an after_finish run (the default) already does.
void IdleDominant(const Scenario& s, const RunSummary& sum, std::vector<RunWarning>* out) {
  // The idle GPU time the bill holds: its own line (dedicated) or spread
  // over the tasks (amortized, where idle_usd is 0); busy billing holds none.
  const long double idle = sum.billing == BillingRule::kBusy ? 0.0L : sum.idle_gpu_usd;
  if (!(sum.cost_usd > 0) || !(idle > kIdleDominantShare * sum.cost_usd)) return;
  const double share = static_cast<double>(idle / sum.cost_usd);
  const std::string where =
      sum.billing == BillingRule::kAmortized ? " (amortized into the tasks' costs)" : "";
  out->push_back({"idle_dominant",
                  "idle GPU time is " + FormatFixed(share * 100, 0) + "% of the bill" + where +
                      " ($" + FormatFixed(static_cast<double>(idle), 4) + " of $" +
                      FormatFixed(static_cast<double>(sum.cost_usd), 4) +
                      "): the GPUs mostly wait between arrivals, so the bill is the rental, not "
                      "the work; " +
                      (s.trace.release == "recorded"
                           ? ""
                           : "turns already go out as soon as the previous one finishes "
                             "(release \"after_finish\"), so the waits are the trace's tool "
                             "waits and the gaps between task arrivals; ") +
                      IdleRemedies(s, sum) + " shows what busy GPUs cost"});
}

// `served` requests served (or priced), `edited` of them changed by the
// policy; `refused_tasks` tasks refused at their first request over the
// context limit, which served nothing. A run that served no request still
// warns when tasks were refused: a policy that leaves every first prompt
// whole (a window over the system and tools spans) refuses them as
// keep_all does.
void PolicyNoEffect(const Scenario& s, std::int64_t edited, std::int64_t served,
                    std::int64_t refused_tasks, std::vector<RunWarning>* out) {
  if (s.context_policy.kind == "keep_all" || edited > 0) return;
  std::string what;
  if (served > 0) {
    what = "changed none of the " + FormatWithSeparators(served) + " prompts";
  } else if (refused_tasks > 0) {
    what = "changed no prompt that was served: " + RefusedAtFirstRequest(refused_tasks) +
           ", over the context limit, and served nothing";
  } else {
    return;
  }
  out->push_back({"policy_no_effect",
                  "context_policy \"" + s.context_policy.kind + "\" " + what +
                      " (docs/policies.md says what each policy needs of a trace, e.g. "
                      "tool spans for drop_tool_results): the run is the same as keep_all"});
}

// `count` turns whose recorded output is a streaming placeholder; an API
// bill prices their output tokens (no decode time), an engine run both.
void PlaceholderOutputs(std::int64_t count, bool api, std::vector<RunWarning>* out) {
  if (count == 0) return;
  out->push_back({"placeholder_outputs",
                  Count(count, "turn of the trace has", "turns of the trace have") +
                      " a placeholder output (a streaming stub the transcript kept instead of "
                      "the reply, as usage-only Claude Code logs hold): their output tokens" +
                      (api ? std::string(" and their cost are") : ", decode time and cost are") +
                      " understated"});
}

void UnsupportedFormat(const Scenario& s, const SimulationTotals& t, std::vector<RunWarning>* out) {
  std::string text;
  for (const FormatUse& f : t.cost_model.formats) {
    if (f.part == "kv_cache" || !IsWeightOnlyFallback(f.stored, f.computed)) continue;
    text += std::string(text.empty() ? "" : "; ") + f.part + " stored as " + f.stored + " run as " +
            f.computed + " (" + f.kernel + ")";
  }
  if (text.empty()) return;
  out->push_back({"unsupported_format", WeightOnlyFallbackWarning(s.deployment.gpu, text)});
}

// The longest decode context the kernel tables measure: decode attention
// (and MLA) rows reach 131,072 tokens on every GPU with tables
// (shared/data/kernels/README.md, "decode context 2…131072").
constexpr Tokens kMeasuredDecodeContextTokens = 131072;

void TimingAssumed(const SimulationTotals& t, const RunSummary& sum, std::vector<RunWarning>* out) {
  std::string text;
  for (const FormatUse& f : t.cost_model.formats) {
    constexpr std::string_view kAssumed = "assumed: ";
    if (!f.timing.starts_with(kAssumed)) continue;
    text += std::string(text.empty() ? "" : "; ") + f.part + " stored as " + f.stored + " (" +
            f.kernel + "): " + f.timing.substr(kAssumed.size());
  }
  for (const std::string& how : t.cost_model.assumed_collectives) {
    text += std::string(text.empty() ? "" : "; ") + how;
  }
  if (t.cost_model.calibrated && sum.longest_sequence_tokens > kMeasuredDecodeContextTokens) {
    text += std::string(text.empty() ? "" : "; ") + "decode attention over contexts up to " +
            FormatWithSeparators(sum.longest_sequence_tokens) +
            " tokens (the longest request served): the kernel tables measure it to " +
            FormatWithSeparators(kMeasuredDecodeContextTokens) +
            " tokens, and the fitted curve is extended past them";
  }
  if (text.empty()) return;
  out->push_back({"timing_assumed",
                  "no kernel measurement times these parts, so their time is an assumption, "
                  "not the calibration's: " +
                      text +
                      "; iteration times, latency and cost under load rest on it "
                      "(docs/hardware.md#formats)"});
}

void SpeculativeAcceptanceAssumed(const Scenario& s, std::vector<RunWarning>* out) {
  if (!s.deployment.speculative || !s.deployment.speculative->acceptance_rate.empty()) return;
  const ScenarioSpeculative& spec = *s.deployment.speculative;
  const SpeculativeMethod* method = FindSpeculativeMethod(spec.method);
  if (method == nullptr) return;
  out->push_back(
      {"speculative_acceptance_assumed",
       "speculation runs at the \"" + spec.method + "\" method's default acceptance rate, " +
           FormatFixed(method->acceptance_rate, 2) +
           " a drafted token, not a rate measured for this draft, text and sampling; the gain "
           "rests on it. Sampled requests accept less than greedy ones (vLLM drafts the top "
           "token and keeps it with the model's probability of it: Qwen3.5-9B's MTP head at "
           "the engine's default sampling keeps about 0.45, for a 27% gain where 0.85 predicts "
           "61%, docs/engine.md#speculative-decoding)" +
           (spec.method == "mtp" && spec.num_speculative_tokens.value_or(1) > 1
                ? "; the default is the second token's rate of a one-token MTP module, "
                  "applied here at each of " +
                      std::to_string(*spec.num_speculative_tokens) +
                      " positions, where a module run again on its own drafts accepts less"
                : std::string()) +
           "; set deployment.speculative.acceptance_rate"});
}

// Speculation that slows the run's decoding down (SpeculationTotals): at
// large batches the k + 1 tokens a sequence verifies and the draft's steps
// cost more than the tokens accepted save.
void SpeculationSlower(const Scenario& s, const SimulationTotals& t, std::vector<RunWarning>* out) {
  const SpeculationTotals& spec = t.speculation;
  if (!s.deployment.speculative || spec.verification_steps == 0 || spec.DecodeSpeedup() >= 1) {
    return;
  }
  out->push_back(
      {"speculation_slower",
       "speculation makes this run's decoding slower, not faster: " +
           FormatFixed(static_cast<double>(spec.DecodeSpeedup()), 2) +
           "x the decode tokens a second of the same deployment without it, at its batches (" +
           FormatFixed(static_cast<double>(spec.MeanBatch()), 1) +
           " sequences a verification step on average, " +
           FormatFixed(static_cast<double>(spec.TokensPerStep()), 2) +
           " tokens advanced a sequence a step): verifying k + 1 tokens a sequence and the "
           "draft's steps cost more than the accepted tokens save. Speculation pays at small "
           "batches, with a draft much cheaper than the model and a high acceptance rate; "
           "compare the run without it (deployment.speculative null, or `kvbill compare`'s "
           "speculation lever) (docs/engine.md#speculative-decoding)"});
}

void LinearStateUnmeasured(const Scenario& s, const SimulationTotals& t,
                           std::vector<RunWarning>* out) {
  const int layers = t.cost_model.linear_state_layers;
  if (layers <= 0) return;
  // Such models run without kvbill's block prefix cache (it cannot reuse a
  // recurrent state), where engines now can cache their prefixes.
  const std::string uncached =
      s.prefix_cache.enabled
          ? std::string()
          : "; and prefix caching is off (kvbill's block cache cannot reuse a recurrent "
            "state), so every turn computes its whole prompt again: engines that cache such "
            "models' prefixes (vLLM opted in with --enable-prefix-caching, in blocks of "
            "hundreds of tokens; SGLang's MambaRadixCache) bill an agent's re-sent context "
            "for less, so on that count the cost here is too high (docs/engine.md#recurrent-"
            "state-layers)";
  out->push_back(
      {"linear_state_unmeasured",
       Count(layers, "layer of the model keeps", "layers of the model keep") +
           " a recurrent state (linear attention, SSM) whose kernels no measured table "
           "prices: kvbill times the state's traffic and scan at the attention kernels' rates "
           "times the profile's recurrent_state_factor, fitted to one model's published runs "
           "(Qwen3.5-9B: mean end-to-end latency 0.94-1.00 of measured at 1 to 8 requests a "
           "second on vLLM, 1.12 at 16; 0.98 at 8 on SGLang); other shapes and SSM kernels "
           "are unvalidated, so latency and cost under load may be off either way "
           "(docs/engine.md#recurrent-state-layers)" +
           uncached});
}

// vLLM speculating on a model with recurrent-state layers waits on the host
// between steps (docs/engine.md#acceptance-from-the-runs), which the profile
// does not time: the published MTP runs' first tokens came later than
// kvbill's by 17-41 ms.
void SpeculativeHostWaits(const Scenario& s, const SimulationTotals& t,
                          std::vector<RunWarning>* out) {
  if (!s.deployment.speculative || s.deployment.engine != "vllm" ||
      t.cost_model.linear_state_layers <= 0) {
    return;
  }
  out->push_back(
      {"speculative_host_waits",
       "vLLM speculating on a model with recurrent-state layers waits on the host between "
       "steps (v0.17: the gated-DeltaNet metadata build and the accepted-token counts "
       "synchronise with the GPU), which kvbill does not time: gpustack's Qwen3.5-9B MTP runs "
       "had a mean time to first token 17-41 ms above kvbill's (37 -> 55 ms at 1 request a "
       "second), so read TTFT as low by about that; end-to-end latency and cost are within "
       "their validation (docs/engine.md#acceptance-from-the-runs)"});
}

// The run's regime is unvalidated or missed by more than
// kWeaklyValidatedError, or the run takes a kernel path none of the
// regime's runs took (WeaklyValidated): one warning saying each.
void WeaklyValidatedRun(const SimulationTotals& t, std::vector<RunWarning>* out) {
  const CostModelInfo& model = t.cost_model;
  if (!WeaklyValidated(model)) return;
  const std::string page =
      "docs/validation" + std::string(model.profile == "sglang" ? "-sglang" : "") + ".md#by-regime";
  std::vector<std::string> says;
  if (!model.unreplayed_path.empty()) {
    says.push_back("no published run replayed in this regime (" + model.regime + ") took " +
                   model.unreplayed_path +
                   ": the kernel's own measured table times it, but no end-to-end run checks "
                   "it, so treat latency and cost as unvalidated "
                   "(docs/engine.md#mxfp4-experts-on-hopper-triton-or-marlin)");
  }
  const auto& r = model.regime_validation;
  const bool weak_regime = RegimeWeaklyValidated(r);
  if (weak_regime && !r) {
    says.push_back("no published run of the \"" + model.profile + "\" profile's engine in this " +
                   "regime (" + model.regime + ") was replayed, so its times rest on the " +
                   "fit to other GPUs, model kinds or parallelism; treat latency and cost " +
                   "as unvalidated (" + page + ")");
  } else if (weak_regime && r->lomo_points == 0) {
    says.push_back("the profile was fitted to this regime's published runs (" + model.regime +
                   ": " + std::to_string(r->points) + " points, " +
                   FormatFixed(100 * r->median_error, 0) +
                   "% median miss in sample) but never checked on runs left out of the "
                   "fit (no leave-one-model-out: calibrate without --no-lomo, with runs of "
                   "several models), so its error on other runs is unknown (" +
                   page + ")");
  } else if (weak_regime) {
    says.push_back("published runs in this regime (" + model.regime +
                   ") were missed by a median of " + FormatFixed(100 * DecidingMedianError(*r), 0) +
                   "% when their model was left out of the fit (" +
                   FormatFixed(100 * r->median_error, 0) + "% in sample; " +
                   std::to_string(r->lomo_points) +
                   " points): latency and cost here are about that uncertain (" + page + ")");
  }
  std::string text;
  for (const std::string& s : says) text += (text.empty() ? "" : "; and ") + s;
  out->push_back({"weakly_validated", text});
}

void Uncalibrated(const Scenario& scenario, const SimulationTotals& t,
                  std::vector<RunWarning>* out) {
  const CostModelInfo& model = t.cost_model;
  if (model.calibrated) return;
  std::string why;
  if (model.profile == "roofline") {
    why =
        "iteration times come from the spec-sheet roofline (bandwidth_efficiency or "
        "compute_efficiency is set), which has no CPU or scheduling overheads and is "
        "optimistic under load";
    // Nor any collective: its GPUs split the work for free.
    if (scenario.deployment.gpus_per_replica > 1) {
      why += "; nor does it time tensor parallelism's all-reduces (two a layer over " +
             std::to_string(scenario.deployment.gpus_per_replica) +
             " GPUs; the calibrated model times them from the measured tables), so more GPUs a "
             "replica read as a free speed-up";
    }
  } else {
    why = "iteration times come from the \"" + model.profile +
          "\" profile without measurements behind it for this deployment";
    for (const std::string& note : model.notes) why += "; " + note;
  }
  out->push_back({"uncalibrated",
                  why + " (" + scenario.source + "; docs/validation.md lists what is calibrated)"});
}

// An API run whose calls all named a model of their own, priced at it
// (pricing.per_call_models), none of them pricing.model: the scenario's
// model changed nothing, which reads as a price for it unless said.
void PricingModelUnused(const Scenario& s, const ApiPricingRun& run, std::vector<RunWarning>* out) {
  if (!s.pricing || !s.pricing->per_call_models || run.replay.requests.empty()) return;
  std::set<std::string> named;
  for (const ApiRequestOutcome& r : run.replay.requests) {
    if (r.model == run.price.id) return;
    named.insert(r.model);
  }
  std::string models;
  for (const std::string& m : named) models += (models.empty() ? "" : ", ") + m;
  out->push_back(
      {"pricing_model_unused",
       "every call names its model (" + models + ") and is priced at it (pricing.per_call_models " +
           "is true): pricing.model \"" + run.price.id +
           "\" priced none of them; set \"per_call_models\": false to price every call at it (" +
           s.source + "#/pricing)"});
}

}  // namespace

std::string OverloadedFigures(const Summary& queue_s) {
  const std::optional<OverloadedBound> by = OverloadedBy(queue_s);
  if (!by) return "";
  const std::string above = " queueing delay " + FormatFixed(by->delay, 1) + " s, above " +
                            FormatFixed(by->bound, 0) + " s";
  switch (by->statistic) {
    case OverloadedBound::Statistic::kMedian:
      return "median" + above;
    case OverloadedBound::Statistic::kMean:
      return "mean" + above + "; median " + FormatFixed(queue_s.p50, 2) + " s";
    case OverloadedBound::Statistic::kP90:
      return "p90" + above + "; median " + FormatFixed(queue_s.p50, 2) + " s, mean " +
             FormatFixed(queue_s.mean, 2) + " s";
  }
  return "";
}

std::string RequestLimitText(Tokens request_len_limit, Tokens pool_context_len,
                             Tokens max_model_len) {
  if (pool_context_len > 0) {
    return "the " + FormatWithSeparators(pool_context_len) + " tokens SGLang serves";
  }
  if (request_len_limit > 0 && request_len_limit < max_model_len) {
    return "the " + FormatWithSeparators(request_len_limit) + " tokens SGLang serves at " +
           "max_model_len " + FormatWithSeparators(max_model_len);
  }
  return "max_model_len " + FormatWithSeparators(max_model_len);
}

const std::vector<std::string>& WarningCodes() {
  static const std::vector<std::string> codes = {"context_limit",
                                                 "pool_beyond_memory",
                                                 "block_size_unserved",
                                                 "offload_implausible",
                                                 "kv_format_default",
                                                 "config_defaulted",
                                                 "overloaded",
                                                 "slo_violated",
                                                 "idle_dominant",
                                                 "policy_no_effect",
                                                 "pricing_model_unused",
                                                 "placeholder_outputs",
                                                 "unsupported_format",
                                                 "timing_assumed",
                                                 "speculative_acceptance_assumed",
                                                 "speculation_slower",
                                                 "linear_state_unmeasured",
                                                 "speculative_host_waits",
                                                 "weakly_validated",
                                                 "uncalibrated"};
  return codes;
}

std::vector<RunWarning> EngineRunWarnings(const Scenario& scenario, const SimulationTotals& totals,
                                          const RunSummary& summary) {
  std::vector<RunWarning> out;
  ContextLimit(scenario, totals, &out);
  PoolBeyondMemory(totals, &out);
  BlockSizeUnserved(scenario, &out);
  OffloadImplausible(scenario, &out);
  KvFormatDefault(scenario, &out);
  ConfigDefaulted(scenario, &out);
  OverloadedRun(scenario, totals, summary, &out);
  SloViolated(scenario, summary, &out);
  IdleDominant(scenario, summary, &out);
  PolicyNoEffect(scenario, totals.edited_requests, summary.requests, totals.unserved_tasks, &out);
  PlaceholderOutputs(totals.placeholder_outputs, false, &out);
  UnsupportedFormat(scenario, totals, &out);
  TimingAssumed(totals, summary, &out);
  SpeculativeAcceptanceAssumed(scenario, &out);
  SpeculationSlower(scenario, totals, &out);
  LinearStateUnmeasured(scenario, totals, &out);
  SpeculativeHostWaits(scenario, totals, &out);
  WeaklyValidatedRun(totals, &out);
  Uncalibrated(scenario, totals, &out);
  return out;
}

// API mode: prompts above the model's context window, which the provider
// refuses (HTTP 400) and the replay priced anyway.
void ApiContextLimit(const ApiPricingRun& run, std::vector<RunWarning>* out) {
  const ApiReplayOutcome& r = run.replay;
  if (r.over_input_limit == 0) return;
  out->push_back(
      {"context_limit",
       std::to_string(r.over_input_limit) +
           (r.over_input_limit == 1 ? " request has a prompt" : " requests have prompts") +
           " above the model's context window (the longest, " +
           FormatWithSeparators(r.longest_over_limit) + " tokens, against " + r.over_limit_model +
           "'s " + FormatWithSeparators(r.over_limit) +
           (r.over_limit_is_tier_window ? " input tokens, the window of its long-context tier"
                                        : " input tokens, the price sheet's max_input_tokens") +
           "): the provider refuses such a "
           "request, and the bill prices it as if served; bound the context (context_policy) "
           "or price a model with a longer window"});
}

std::vector<RunWarning> ApiRunWarnings(const Scenario& scenario, const ApiPricingRun& run) {
  std::vector<RunWarning> out;
  ApiContextLimit(run, &out);
  PricingModelUnused(scenario, run, &out);
  PolicyNoEffect(scenario, run.edited_requests, run.requests, 0, &out);
  PlaceholderOutputs(run.placeholder_outputs, true, &out);
  return out;
}

const std::vector<std::string>& ApiWarningCodes() {
  // One a function ApiRunWarnings calls, in its order.
  static const std::vector<std::string> codes = {"context_limit", "pricing_model_unused",
                                                 "policy_no_effect", "placeholder_outputs"};
  return codes;
}

std::vector<RunWarning> ApiReplayWarnings(const ApiPricingRun& run) {
  std::vector<RunWarning> out;
  ApiContextLimit(run, &out);
  PlaceholderOutputs(run.placeholder_outputs, true, &out);
  return out;
}

std::string VllmRefusesToStart(const SimulationTotals& t) {
  if (t.max_model_len_fits_pool || t.pool_context_len > 0) return std::string();
  return "a replica's KV pool holds " + FormatWithSeparators(t.pool_sequence_tokens) +
         " tokens of a sequence, less than one request of max_model_len " +
         FormatWithSeparators(t.max_model_len) +
         " needs: vLLM refuses to start such a deployment (check_enough_kv_cache_memory); "
         "set engine.max_model_len to what the pool holds, or give it more memory (GPUs, "
         "memory_fraction, a smaller KV format)";
}

std::vector<RunWarning> PlaceholderOutputsWarning(std::int64_t count) {
  std::vector<RunWarning> out;
  PlaceholderOutputs(count, true, &out);
  return out;
}

std::vector<RunWarning> RunWarnings(const Scenario& scenario, const ScenarioOutcome& outcome) {
  if (outcome.api) return ApiRunWarnings(scenario, *outcome.api);
  return EngineRunWarnings(scenario, outcome.result, outcome.summary);
}

}  // namespace kvbill
