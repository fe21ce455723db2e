// Replaying a published measurement as a kvbill workload: the deployment
// the record describes (model, GPU, parallelism, engine and its settings,
// with the engine's defaults where the record sets nothing) and the requests
// its benchmark client sent, then the metrics the benchmark reports,
// computed the way `vllm bench serve` computes them.
//
// Workloads (docs/validation.md#replaying-a-record):
//   - fixed lengths ("random" datasets): every request has the record's
//     mean input and output tokens (its totals over its requests);
//   - ShareGPT: lengths drawn from lognormals (sigma 1.0) scaled so that
//     they sum to the record's totals, inputs within [4, 1024] and
//     input + output within 2,048 tokens as the benchmark filters them;
//   - release: all at once (request rate inf), Poisson at the rate, or a
//     concurrency cap (that many clients, each sending its next request
//     when the last one finished);
//   - guidellm records (Measurement::client): --profile constant sends
//     request k (from 1) at k / rate, poisson at Poisson arrivals; at most
//     512 in flight, the rest waiting at the client first come first served
//     (SimulationConfig::client_max_tasks), each timed from its send; TPOT
//     as guidellm computes it, (last token − sent) / output tokens.
// Each request's tokens are unique: no prefix is shared.
#ifndef KVBILL_CALIBRATE_REPLAY_H_
#define KVBILL_CALIBRATE_REPLAY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbill/calibrate/measurements.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/speculative.h"
#include "kvbill/engine/simulator.h"
#include "kvbill/util/result.h"

namespace kvbill {

// Settings the caller gives for records that do not carry them (vllm bench
// results): the scenario's deployment.
struct ReplayDefaults {
  std::string model;          // catalog name or config path ("" = from the record)
  std::string gpu;            // catalog id ("" = from the record)
  int tensor_parallel = 0;    // 0 = from the record
  std::string engine;         // "" = from the record
  std::string weight_format;  // "" = from the record (or the model's checkpoint)
  // Whether vLLM schedules asynchronously in a record that names no engine
  // version (`vllm bench serve --save-result`): nullopt = synchronously, as
  // before v0.14; --scenario sets its deployment.async_scheduling, resolved
  // to vLLM's own default (on) when the scenario leaves it null.
  std::optional<bool> async_scheduling;
  // MXFP4 experts on Hopper through Marlin in a record that names no engine
  // version: --scenario's deployment.mxfp4_moe_kernel "marlin".
  bool mxfp4_experts_marlin = false;
};

// What guidellm keeps in flight when no cap is asked for (its
// settings.max_concurrency, src/guidellm/settings.py L129 at v0.5.3).
inline constexpr int kGuidellmMaxConcurrency = 512;

// Whether vLLM `version` ("v0.17.1") schedules asynchronously when no flag
// says: from v0.14, whose release branch holds PR #27614 (2025-12-29,
// "Enable async scheduling by default") and PR #31998 (2026-01-09, the same
// with EAGLE, MTP and draft-model speculation); n-gram speculation turns it
// off (vllm/config/vllm.py, VllmConfig.__post_init__). Earlier versions
// schedule synchronously unless --async-scheduling is given.
bool VllmAsyncSchedulingByDefault(const std::string& version,
                                  const std::string& speculative_method);

// Whether vLLM `version` ("v0.11.0", "0.11.0", "v0.11.1rc4") runs MXFP4
// routed experts on Hopper through Marlin as installed: before v0.12.0.
// get_mxfp4_backend (vllm/model_executor/layers/quantization/mxfp4.py) takes
// the OpenAI Triton kernels on SM 9.0 only when the triton_kernels package
// imports, and picks Marlin without it. vLLM did not install it: PR #27370
// (merged 2025-10-22, "users have to install triton_kernels manually") made
// it a dependency, but that broke installs (issue #27573) and was taken
// back (issue #27672, 2025-10-28); PR #28788 ("[Build] Add OpenAI
// triton_kernels", reviewed 2025-11-18, after v0.11.1's release) builds it
// into vLLM, so v0.12.0 is the first release with it. An unreadable
// version: false.
bool VllmMxfp4MarlinByDefault(const std::string& version);

struct ReplayPlan {
  const Measurement* measurement = nullptr;
  BenchmarkClient client = BenchmarkClient::kVllmBench;
  std::string engine;          // "vllm" or "sglang"
  std::string model_name;      // catalog name used
  bool fixed_lengths = false;  // "random" dataset: lengths exact
  // vLLM: --async-scheduling / --no-async-scheduling, else the version's
  // default (VllmAsyncSchedulingByDefault); SGLang: its overlap scheduler.
  bool async_scheduling = false;
  // vLLM with async scheduling and a draft on the GPU: the CPU overlaps
  // the draft only (OperatorModelOptions::cpu_waits_for_sampling).
  bool cpu_waits_for_sampling = false;
  bool fp8_checkpoint = false;        // a *-FP8 checkpoint with 128x128 block scales
  int expert_parallel = 1;            // --enable-expert-parallel (= tp), --ep-size N
  bool mxfp4_experts_marlin = false;  // vLLM before v0.12.0 (VllmMxfp4MarlinByDefault)
  Tokens cuda_graph_max_batch = 0;    // SGLang's cuda_graph_max_bs; 0: the profile's
  // vLLM's --speculative-config (method and num_speculative_tokens) or
  // SGLang's --speculative-algorithm and its tree flags (depth, top-k,
  // verified tokens); the acceptance rates are the method's defaults, never
  // fitted.
  std::optional<SpeculativeSpec> speculative;
  // SGLang serving a model with constant-state layers: its state-slot rules
  // (SglangStateSlots), applied to max_num_seqs when the replay runs, once
  // the profile's reserve fixes the memory the weights leave.
  std::optional<SglangStateRules> sglang_state;
  SimulationConfig config;  // cost_model unset
  std::vector<Task> tasks;
  std::vector<std::vector<Request>> requests;
};

// What a replay predicts, in the benchmark's units.
struct ReplayMetrics {
  double duration_s = 0;
  double ttft_ms_mean = 0;
  double tpot_ms_mean = 0;  // the client's definition (Measurement::client)
  double e2e_ms_mean = 0;   // finish − send, mean over requests
  double output_tok_s = 0;
};

// Engine flags as a map, names without dashes and with '_' as '-':
// "--max-num-seqs 512", "--max-num-seqs=512", "-tp 8"; a flag without a
// value maps to "true".
std::map<std::string, std::string> ParseEngineFlags(const std::string& flags);

// SGLang's speculative flags as a spec: --speculative-algorithm EAGLE (or
// NEXTN, its alias) or EAGLE3, a tree of depth --speculative-num-steps,
// top-k --speculative-eagle-topk and --speculative-num-draft-tokens verified
// tokens. EAGLE without --speculative-draft-model-path is the model's own
// MTP layer (DeepSeek's NextN). With top-k 1 SGLang sets the verified tokens
// to depth + 1 itself (python/sglang/srt/server_args.py: "speculative_num_
// draft_tokens is adjusted to speculative_num_steps + 1 when
// speculative_eagle_topk == 1"). The acceptance rates are the draft's
// measured ones when MeasuredDraftAcceptance() has its
// --speculative-draft-model-path, else the method's defaults (never fitted).
// nullopt, with the reason in *why: another algorithm, or a tree flag missing
// (SGLang then picks the tree per model).
std::optional<SpeculativeSpec> SglangSpeculativeSpec(
    const std::map<std::string, std::string>& flags, std::string* why);

// A draft's acceptance as measured in published runs (docs/engine.md,
// "Speculative decoding", "Acceptance from the runs"): α per position (one
// rate for every position) and β (`rank_decay`), with where they come from.
struct DraftAcceptance {
  // The draft's path as SGLang's --speculative-draft-model-path names it, or
  // for a model's own MTP head (vLLM's "method": "mtp") the model's id.
  std::string draft;
  double acceptance_rate = 0;
  double rank_decay = 0;
  std::string source;
};
const std::vector<DraftAcceptance>& MeasuredDraftAcceptance();
const DraftAcceptance* FindDraftAcceptance(std::string_view draft);

// The α of a chain of k draft tokens that advances `tokens_per_step` tokens a
// verification step, 1 + α + … + α^k = tokens_per_step (1 ≤ it ≤ k + 1).
double ChainAcceptanceForTokensPerStep(double tokens_per_step, int k);

// The α with which a tree of depth d, `topk` and `num_draft_tokens` verified
// at rank decay `beta` advances `tokens_per_step` tokens a verification step
// (for a draft with one tree run: β from another draft's runs).
double TreeAcceptanceForTokensPerStep(double tokens_per_step, double beta, int d, int topk,
                                      int num_draft_tokens);

// The β with which a tree of depth d, `topk` and `num_draft_tokens` verified
// (ExpectedTokensPerTreeStep) at acceptance `alpha` advances `tokens_per_step`
// tokens a verification step; clamped to [0, 1).
double TreeRankDecayForTokensPerStep(double tokens_per_step, double alpha, int d, int topk,
                                     int num_draft_tokens);

// A plan for `m`, or nullopt with `*why` saying why kvbill cannot represent
// the record (unknown engine, model or GPU, a setting kvbill does not model).
std::optional<ReplayPlan> PlanReplay(const Measurement& m, const ReplayDefaults& defaults,
                                     std::string* why);

// Iterations of one kind in a replay: how many, and their summed time,
// prompt tokens computed and decode steps.
struct IterationKind {
  std::int64_t count = 0;
  double seconds = 0;
  double prefill_tokens = 0;
  double decodes = 0;
};

// What a replay did inside, to set beside the record's own detail metrics
// (ITL percentiles, peak output throughput): `kvbill calibrate --detail ID`.
// The replay runs in step mode, so every iteration is priced on its own.
struct ReplayDetail {
  ReplayMetrics metrics;
  double reserve_gib = 0;        // memory the profile run takes before the KV pool
  int max_num_seqs = 0;          // running-request cap as replayed (SGLang's state slots applied)
  std::int64_t pool_blocks = 0;  // KV pool, pages of one KV cache group
  Tokens pool_tokens = 0;        // pool_blocks x block size
  std::int64_t requests = 0;
  Tokens prompt_tokens = 0;      // summed over the requests
  Tokens prefill_tokens = 0;     // prompt tokens computed, recomputation included
  std::int64_t preemptions = 0;  // summed over the requests
  std::int64_t preempted_requests = 0;
  IterationKind decode_only;   // every scheduled sequence decodes
  IterationKind mixed;         // prompt chunks and decodes together
  IterationKind prefill_only;  // prompt chunks only
  int peak_batch = 0;          // most sequences in one iteration
  int peak_decodes = 0;        // most decode steps in one iteration
  // Inter-token latency as vllm bench serve reports it: the time between a
  // request's successive output tokens (InterTokenGaps; median and 99th
  // percentile).
  double itl_ms_p50 = 0;
  double itl_ms_p99 = 0;
  double itl_ms_mean = 0;  // over every gap
  // The median over requests of each one's TPOT, (end − first token) /
  // (output − 1), as vllm bench serve reports it (0 for guidellm records).
  double tpot_ms_p50 = 0;
  // The routed experts as timed, "<stored format> on <kernel>" (MXFP4
  // ones on Marlin or on the OpenAI Triton kernels); empty without experts.
  std::string experts;
  // One decode-only iteration at the replay's mean decode batch and mean
  // context (prompt plus half the output) by cost-model part
  // (OperatorCostModel::DecodeParts); empty when no iteration was decode
  // only, or under speculative decoding.
  std::int64_t typical_decode_batch = 0;
  Tokens typical_decode_context = 0;
  std::vector<std::pair<std::string, double>> decode_parts;
  // The replay's mean iteration computing prompts (mixed with decodes when
  // any was, else prompt-only): its mean prompt tokens (as whole prompts of
  // the mean length from context 0, the last one cut) and mean decodes at
  // typical_decode_context, by part (OperatorCostModel::IterationParts).
  Tokens typical_mixed_prompt_tokens = 0;
  std::int64_t typical_mixed_decodes = 0;
  std::vector<std::pair<std::string, double>> mixed_parts;
};

// One iteration of a step-mode replay as priced.
struct IterationEntry {
  double seconds = 0;
  int sequences = 0;
  int decodes = 0;
  Tokens prefill_tokens = 0;
  // Prompt chunks that ended their prompt (the sequence's first token):
  // a chunk continued by a later chunk from where it stopped did not.
  int first_tokens = 0;
};

// The gaps between a request's successive output tokens, as the client sees
// them, from the iterations of a step-mode replay: a decode's gap is its
// iteration's time plus the decode-free iterations (prompts only, SGLang's)
// since the sequence's previous token. The sequences whose prompts end in a
// decode-free iteration (IterationEntry::first_tokens; a long prompt's
// earlier chunks do not count) get their first token at its end and are the
// first of the next decodes, oldest first. Built once, read for each
// statistic.
class InterTokenGaps {
 public:
  explicit InterTokenGaps(const std::vector<IterationEntry>& log);
  // The nearest-rank percentile p (0 < p <= 100, NearestRank), each token's
  // gap counted once; 0 without decodes.
  double Percentile(double p) const;
  // Their mean; 0 without decodes.
  double Mean() const;

 private:
  std::vector<std::pair<double, std::int64_t>> gaps_;  // (gap, tokens), sorted
  std::int64_t tokens_ = 0;
};

// Whether the record's median inter-token latency compares with a replay's
// (ReplayDetail::itl_ms_p50) as a measure of the decode step: published by
// vllm bench serve (guidellm's differs), without speculation (a step emits
// several tokens, the client sees them as one chunk), not flagged
// itl_reported_zero, and with at least kItlMinMeanOutput output tokens a
// request on average: a request of a few tokens has all its gaps while the
// other requests' prompts are admitted, so its median gap times the
// admission, not a decode step.
inline constexpr double kItlMinMeanOutput = 32;
bool ItlComparable(const ReplayPlan& plan);

// Runs the plan with `profile` (which sets the engine's overheads and the
// memory its profiling run reserves). With `detail`, runs in step mode and
// fills it too (the metrics are the same: event mode equals step mode).
Result<ReplayMetrics> RunReplay(const ReplayPlan& plan, const EngineProfile& profile,
                                ReplayDetail* detail = nullptr);

// `detail` as Markdown lines, the record's own detail metrics (when it has
// them) beside kvbill's.
std::string ReplayDetailMarkdown(const ReplayPlan& plan, const ReplayDetail& detail);

}  // namespace kvbill

#endif  // KVBILL_CALIBRATE_REPLAY_H_
