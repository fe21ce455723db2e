// An engine profile: what a serving engine adds around its GPU kernels —
// CPU work per iteration and per sequence, elementwise kernels the operator
// tables do not time, kernel launches outside CUDA graphs, the API server's
// work before a request reaches the scheduler, and the memory its profiling
// run reserves — as a handful of parameters fitted end to end by
// `kvbill calibrate` on published serving benchmarks (docs/validation.md).
// None of them is per model or per GPU: GPUs differ through their kernel
// curves (kernel_curves.h) and spec sheet, models through their shapes.
//
// kvbill ships one profile per engine (scenarios/profiles/<engine>.json); a
// scenario names its engine (`deployment.engine`) or another profile
// (`deployment.profile`).
#ifndef KVBILL_COST_ENGINE_PROFILE_H_
#define KVBILL_COST_ENGINE_PROFILE_H_

#include <array>
#include <string>
#include <vector>

#include "kvbill/hardware/gpu.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

// The fitted parameters, in the order of kProfileParameters.
struct ProfileParameters {
  // CPU time of one scheduler iteration (scheduling, input preparation,
  // launching the step), seconds.
  double cpu_iteration_s = 0;
  // CPU time per scheduled sequence per iteration in the engine's own loop
  // (its inputs, sampling), seconds.
  double cpu_per_sequence_s = 0;
  // API-server time per sequence per iteration turning its new token into a
  // streamed response (detokenising, serialising, sending), seconds. It
  // runs in its own process, beside the engine: an iteration cannot finish
  // faster than the server streams the previous one's outputs.
  double output_per_sequence_s = 0;
  // Elementwise passes over a token's hidden vector per layer (norms,
  // rotary, residual adds, activations) at the HBM bandwidth.
  double elementwise_passes = 0;
  // Launch time per layer when a batch runs outside CUDA graphs (more
  // tokens than the largest captured size), seconds.
  double eager_launch_per_layer_s = 0;
  // API-server time before a request reaches the scheduler: fixed and per
  // prompt token, served one request at a time, seconds.
  double frontend_per_request_s = 0;
  double frontend_per_token_s = 0;
  // Latency every request carries that occupies nothing serially (the
  // HTTP round trip, handing the request to the engine process and the
  // first token back), seconds.
  double request_latency_s = 0;
  // Memory the profiling run reserves before the KV pool: activation bytes
  // per batched token per hidden element, and a fixed reserve (CUDA context,
  // communication buffers, CUDA graphs), GiB.
  double activation_bytes_per_token_hidden = 0;
  double fixed_reserve_gib = 0;
  // Multiplier on the decodes' attention time when an iteration mixes
  // prefill chunks with decodes (one varlen kernel serving both shapes runs
  // a decode as a one-row prefill tile, without splitting its KV).
  double mixed_attention_factor = 1;
  // Compute rate of dense weight-only GEMMs (Marlin: weights dequantised in
  // the main loop, 16-bit math) over the bf16 GEMM curve's, for 8-bit and
  // for 4-bit (and 2-bit) weights. No kernel table measures them; the start
  // is 0.4, the rate vLLM's Marlin fused-MoE kernel reaches against the
  // bf16 fused-MoE curve in the H100 tables (docs/engine.md#formats).
  double weight_only_8bit_rate = 0.4;
  double weight_only_4bit_rate = 0.4;
  // Time of the recurrent-state kernels (Gated DeltaNet, Mamba: the decode
  // step's state update, the prefill's chunked scan) over what their state
  // traffic and FLOPs cost at the attention kernels' fitted rates. No kernel
  // table measures them; the engines' Triton kernels are launch- and
  // latency-bound at small batches (docs/engine.md#recurrent-state-layers).
  // 1 for models without such layers, whatever its value.
  double recurrent_state_factor = 1;
};

struct ProfileParameterInfo {
  const char* name;
  double ProfileParameters::*field;
  double lower;  // fitting bounds
  double upper;
  const char* meaning;
};
inline constexpr int kProfileParameterCount = 14;
const std::array<ProfileParameterInfo, kProfileParameterCount>& ProfileParameterTable();

// How well a profile predicted the published runs of one regime: its
// engine on one GPU model, serving dense or mixture-of-experts models, on
// one GPU a replica or several. Written by `kvbill calibrate` beside the
// profile-wide figures; a run reports the regime it falls in
// (summary.cost_model.validation_regime) and warns when that regime's runs
// were missed by more than kWeaklyValidatedError (docs/engine.md#warnings).
struct ValidationRegime {
  std::string gpu;  // catalog id, "h100-sxm"
  bool moe = false;
  bool several_gpus = false;
  std::int64_t points = 0;  // duration and mean-latency points, in sample
  double median_error = 0;  // median |predicted / measured - 1| over them
  std::int64_t lomo_points = 0;
  double lomo_median_error = 0;  // each model predicted by a fit without it
};
inline constexpr double kWeaklyValidatedError = 0.25;
// The regime's median error that decides: leaving the model out where the
// profile has it, else in sample.
inline double DecidingMedianError(const ValidationRegime& r) {
  return r.lomo_points > 0 ? r.lomo_median_error : r.median_error;
}
// "h100-sxm, mixture-of-experts models, several GPUs a replica".
std::string DescribeRegime(const std::string& gpu, bool moe, bool several_gpus);

struct EngineProfile {
  std::string name = "roofline";  // e.g. "vllm"
  std::string engine = "vllm";    // "vllm" or "sglang": the scheduler kvbill models
  std::string engine_versions;    // versions of the measurements it was fitted on
  bool calibrated = false;
  // Median |predicted / measured - 1| over the fitted records, in sample and
  // leaving each model out in turn.
  double validation_median_error = 0;
  double validation_lomo_median_error = 0;
  std::int64_t validation_points = 0;
  std::vector<ValidationRegime> validation_regimes;  // by gpu, then dense before MoE, one GPU first
  ProfileParameters params;
  // Engine behaviour the profile assumes (not fitted).
  Tokens cuda_graph_max_tokens = 512;  // largest batch captured in a CUDA graph
  double moe_routing_alpha = 1.2;      // expert popularity power law (kernel_curves.h)
};

// The scheduler limits an engine sets when its command line sets none.
// vLLM V1 (vllm/engine/arg_utils.py, EngineArgs' default batch sizes for
// its OpenAI server): GPUs of at least 70 GiB other than the A100 schedule
// 8,192 tokens and 1,024 sequences per iteration, others 2,048 and 256;
// CUDA graphs up to 512 tokens (the profile's).
// SGLang v0.5.3 (python/sglang/srt/server_args.py, _handle_gpu_memory_
// settings, at commit a4a3d82), by the GPU's memory: chunked_prefill_size
// 2,048 below 35 GiB, 4,096 below 60 GiB, 8,192 below 160 GiB, 16,384
// above; cuda_graph_max_bs 8 below 20 GiB, then 16 / 32 / 256 / 512 with
// tensor parallelism below 4 and 80 / 160 / 512 / 512 with 4 or more.
// max_running_requests is derived from the pool there, min(pool / 2,
// min(max(pool / context x 512, 2048), 4096)): at least 2,048 once the pool
// holds 4,096 tokens, which kvbill takes.
struct EngineLimits {
  Tokens max_num_batched_tokens = 8192;
  int max_num_seqs = 1024;
  Tokens cuda_graph_max_batch = 0;  // 0: the profile's cuda_graph_max_tokens
};
EngineLimits DefaultEngineLimits(const std::string& engine, const GpuSpec& gpu,
                                 int tensor_parallel = 1);

// SGLang's default mem_fraction_static (server_args.py as above): the share
// of the GPU's memory left after R MiB = 512 + 1.5 max(chunk, 2048) +
// 2 cuda_graph_max_bs + 128 tp (at least 10,240 on GPUs above 60 GiB;
// 2,048 more with EAGLE drafts), rounded to three decimals. Of that share
// its KV pool takes what the weights leave (no activation reserve: the
// activations live in the rest). `dp_attention_flag` is the dp_size when
// --enable-dp-attention was given (0 without it): R grows by 3 dp
// cuda_graph_max_bs, and 1.5 dp cuda_graph_max_bs more above 300, before
// the 10,240 floor. SGLang adds this before it switches the flag off for
// dp_size 1 (server_args.py L650-658, L950-952; docs/engine.md).
double SglangMemoryFraction(const GpuSpec& gpu, int tensor_parallel, Tokens chunk,
                            Tokens cuda_graph_max_bs, bool eagle, int dp_attention_flag = 0);

// SGLang serving a model with constant-state layers (Gated DeltaNet, Mamba):
// a pool of per-request state slots, and a cap on running requests from it.
// v0.5.3 (a4a3d82, model_runner.py L357-368, L1291-1296, L1441-1442): the
// radix cache is forced off, the pool holds --max-mamba-cache-size slots,
// else --max-running-requests, else 512, and the running requests are at
// most the slots. From the mamba radix cache on (the rules as at v0.5.9,
// 59e7ea99c, model_runner_kv_cache_mixin.py L37-39, L158-210, L355-369):
// the slots are --max-mamba-cache-size, else (radix cache disabled and
// --max-running-requests given) that, else what 0.9 / 1.9 of the memory left
// after the weights holds (mamba_full_memory_ratio 0.9: states : KV =
// 0.9 : 1); the running requests are at most slots / 3 with the radix cache
// on, slots / 1 with it off.
struct SglangStateRules {
  bool mamba_radix_cache = true;          // false: v0.5.3's rules
  bool radix_cache = true;                // off: --disable-radix-cache, or speculation
  std::int64_t max_running_requests = 0;  // --max-running-requests; 0 unset
  std::int64_t max_mamba_cache_size = 0;  // --max-mamba-cache-size; 0 unset
};
struct SglangStateLimits {
  std::int64_t slots = 0;        // state slots in the pool
  std::int64_t max_running = 0;  // the cap they put on running requests
};
// `rest_bytes`: per GPU, the memory fraction less the reserve and the weights;
// `state_bytes`: one request's state per GPU (StateBytesPerSequence).
SglangStateLimits SglangStateSlots(const SglangStateRules& rules, double rest_bytes,
                                   double state_bytes);

// Whether SGLang `version` ("v0.5.9", "0.5.3.post1") has the mamba radix
// cache (#11214, in v0.5.3.post2 and later); an unparsable version is taken
// as the newest.
bool SglangHasMambaRadixCache(const std::string& version);

// The regime of `profile`'s validation a run falls in, or null when no
// published run of it was replayed.
const ValidationRegime* FindValidationRegime(const EngineProfile& profile, const std::string& gpu,
                                             bool moe, bool several_gpus);

// Memory the profile's engine reserves per GPU before its KV pool, GiB:
// activations for `batched_tokens` tokens of a `hidden`-wide model plus the
// fixed reserve (SGLang: the fixed reserve only, see above).
double ProfileReserveGib(const EngineProfile& profile, Tokens batched_tokens, std::int64_t hidden);

// The reserve simulate's pool takes when a scenario sets none: the bundled
// profile of `engine` ("vllm" or "sglang") at the engine's default token
// budget on `gpu` at tensor parallel `tensor_parallel`, for a
// `hidden`-wide model. `budget`, when given, receives that token budget.
// Error: an engine with no bundled profile.
Result<double> DefaultReserveGib(const std::string& engine, const GpuSpec& gpu, int tensor_parallel,
                                 std::int64_t hidden, Tokens* budget = nullptr);

// The documented range of every number a profile file holds: the
// parameters within their fitting bounds (ProfileParameterTable), the
// engine behaviour and the validation figures. The reader refuses a value
// outside (`p.json#/parameters/cpu_iteration_s: must be in [0, 0.01]
// (docs/engine.md#engine-profile-ranges), got 1e+300`), so that an absurd
// profile stops before any work; docs/engine.md's table lists the rows.
struct ProfileNumberRange {
  std::string pointer;  // "/parameters/cpu_iteration_s"
  double least;
  double most;
  bool integer;
  std::string meaning;
};
const std::vector<ProfileNumberRange>& ProfileNumberRanges();

// Reads a profile file's text; errors name `source` and the JSON pointer.
// Unknown keys are errors.
Result<EngineProfile> ParseEngineProfile(const std::string& json_text, const std::string& source);
std::string EngineProfileToJson(const EngineProfile& profile);

// A bundled profile by engine name ("vllm", "sglang") or a path to a profile
// JSON file. Error lists the bundled names.
Result<EngineProfile> LoadEngineProfile(const std::string& name_or_path);

}  // namespace kvbill

#endif  // KVBILL_COST_ENGINE_PROFILE_H_
