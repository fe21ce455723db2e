// The rules between scenario keys: every check that is not one row's.
// (Within one object, the rows themselves declare "exactly one of",
// "only with", required members and vLLM synonyms; see keys.h.)
#include <cstdio>
#include <memory>

#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/cost/provider_cache.h"
#include "kvbill/cost/speculative.h"
#include "kvbill/hardware/fit.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/hardware/kv_blocks.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/weight_bytes.h"
#include "kvbill/scenario/run.h"
#include "scenario/keys.h"
#include "scenario/scenario_model.h"

namespace kvbill::scenario_keys {
namespace {

// The model must load with its overrides; blame "set" when it loads without them.
Status ModelLoads(const ReadState& state, Scenario* s) {
  if (!state.Given("/model")) return OkStatus();
  const std::vector<ConfigOverride> overrides = ScenarioOverrides(*s);
  auto loaded = LoadModel(s->model.name, overrides, s->model.text_only);
  if (loaded) return OkStatus();
  const bool set_is_bad =
      !overrides.empty() && LoadModel(s->model.name, {}, s->model.text_only).ok();
  return loaded.error().Within(state.source().name() + "#" +
                               (set_is_bad ? "/model/set" : state.At("/model/name")));
}

// kv_format "auto" (vLLM's kv_cache_dtype "auto") is the KV format the
// checkpoint declares, else the model's dtype.
Status KvFormatAuto(const ReadState& state, Scenario* s) {
  if (s->kv_format != "auto") {
    // Left at kvbill's default: note a KV format the checkpoint declares,
    // which vLLM's default would store instead (the kv_format_default
    // warning); DeepSeek-V4 takes its only format, fp8.
    if (state.Given("/kv_format") || s->pricing) return OkStatus();
    auto model = LoadScenarioModel(*s);
    if (model && model->HasCompressedLayers()) {
      s->kv_format = VllmAutoKvFormat(*model);
      return OkStatus();
    }
    if (model && !model->checkpoint_kv_format.empty() &&
        model->checkpoint_kv_format != s->kv_format) {
      s->declared_kv_format = model->checkpoint_kv_format;
    }
    return OkStatus();
  }
  auto model = LoadScenarioModel(*s);
  if (!model) return model.error().Within(state.source().name() + "#" + state.At("/kv_format"));
  s->kv_format = VllmAutoKvFormat(*model);
  return OkStatus();
}

// DeepSeek-V4 as vLLM serves it: its fp8_ds_mla cache only (vLLM asserts an
// fp8 kv_cache_dtype for the model), on the FlashMLA sparse kernels, which
// run on Hopper and Blackwell data-center GPUs.
Status CompressedModelRuns(const ReadState& state, Scenario* s) {
  if (s->pricing) return OkStatus();
  auto model = LoadScenarioModel(*s);
  if (!model || !model->HasCompressedLayers()) return OkStatus();
  auto at = [&](const char* pointer) {
    return state.Given(pointer) ? state.At(pointer) : std::string(pointer);
  };
  auto kv = ParseElementFormat(s->kv_format);
  if (kv && kv->name != "fp8-e4m3") {
    return state.source().Bad(
        at("/kv_format"),
        "is " + kv->name +
            ": DeepSeek-V4's cache is vLLM's fp8_ds_mla (fp8 latents with UE8M0 "
            "scales and bf16 rotary keys), the only kv_cache_dtype vLLM runs for it; set \"fp8\" "
            "or \"auto\"");
  }
  if (s->deployment.engine == "vllm") {
    auto gpu = LookupGpu(s->deployment.gpu);
    if (gpu && gpu->architecture != "hopper" && gpu->architecture != "blackwell") {
      return state.source().Bad(at("/deployment/gpu"),
                                "is " + s->deployment.gpu + " (" + gpu->architecture +
                                    "): vLLM runs DeepSeek-V4's attention on FlashMLA's sparse "
                                    "kernels, which need a Hopper or Blackwell data-center GPU");
    }
  }
  return OkStatus();
}

// A scenario that does not set prefix_cache.block_size takes the block size
// its engine forces for the model on the GPU (kv_blocks.h): on vLLM 64 for
// MLA on Hopper (FlashMLA), 256 for DeepSeek-V4, 16 for most models.
Status EngineBlockSize(const ReadState& state, Scenario* s) {
  if (s->pricing || state.Given("/prefix_cache/block_size")) return OkStatus();
  auto model = LoadScenarioModel(*s);
  if (!model) return OkStatus();
  auto gpu = LookupGpu(s->deployment.gpu);
  if (!gpu) return OkStatus();  // the GPU's own rule reports it
  s->prefix_cache.block_size = DefaultKvBlockSize(s->deployment.engine, *model, *gpu);
  return OkStatus();
}

// A summary must leave the context below the threshold, or every turn
// would summarise again.
Status SummaryBelowThreshold(const ReadState& state, Scenario* s) {
  const ContextPolicyParams& p = s->context_policy;
  if (p.kind != "summarise" || p.summary_tokens + p.keep_recent_tokens < p.threshold_tokens) {
    return OkStatus();
  }
  return state.source().Bad(state.At("/context_policy"),
                            "summary_tokens + keep_recent_tokens (" +
                                std::to_string(p.summary_tokens + p.keep_recent_tokens) +
                                ") must be below threshold_tokens (" +
                                std::to_string(p.threshold_tokens) + ")");
}

// A model's calls follow its own provider's caching rules: a provider the
// price sheet does not list the model under is a slip, not a what-if (a
// Claude model under gemini's rules cached nothing and billed as if
// caching were off, without a word).
Status ProviderOfTheModel(const ReadState& state, Scenario* s) {
  if (!s->pricing) return OkStatus();
  const ScenarioPricing& p = *s->pricing;
  auto sheet = BundledPriceSheet();
  if (!sheet) return sheet.error();
  const ModelPrice* price = sheet->Find(p.model);
  if (price == nullptr || price->provider == p.provider) return OkStatus();
  return state.source().Bad(state.At("/pricing/provider"),
                            "is \"" + p.provider + "\", but the price sheet lists " + price->id +
                                " under \"" + price->provider + "\": a model's calls follow " +
                                "its own provider's caching rules (set provider \"" +
                                price->provider + "\", or a " + p.provider + " model)");
}

// The cache options must be ones the provider has, for that model.
Status ProviderCacheOptionsFit(const ReadState& state, Scenario* s) {
  if (!s->pricing) return OkStatus();
  const ScenarioPricing& p = *s->pricing;
  auto sheet = BundledPriceSheet();
  if (!sheet) return sheet.error();
  const ModelPrice* price = sheet->Find(p.model);
  if (price == nullptr) return OkStatus();  // the row's domain said so
  auto cache = MakeProviderCache(p.provider, price->id,
                                 ProviderCacheOptions{p.ttl_s, p.min_cacheable_tokens, p.write_fee,
                                                      p.explicit_cache, p.prefix_tokens});
  if (!cache) return cache.error().Within(state.source().name() + "#/pricing/cache");
  return OkStatus();
}

// The engine cannot reuse a constant-state (SSM / linear attention / short
// convolution) layer's state from a block prefix cache (docs/engine.md, "The
// KV pool"): say so at the field, before any run. An API run has no engine.
// (A sweep or lever that turns caching on for such a model meets the same
// error from the engine.)
Status PrefixCacheFitsModel(const ReadState& state, Scenario* s) {
  if (s->pricing || !s->prefix_cache.enabled) return OkStatus();
  auto model = LoadScenarioModel(*s);
  if (!model || !model->HasState()) return OkStatus();
  const std::string at = state.Given("/prefix_cache/enabled") ? state.At("/prefix_cache/enabled")
                                                              : "/prefix_cache/enabled";
  return state.source().Bad(
      at,
      "model " + Quote(model->name) +
          " has constant-state (SSM / linear attention / short convolution) layers, whose state a "
          "block prefix cache cannot reuse: set it to false");
}

// A pin keeps a task's cached blocks for its next request: with caching
// off nothing would hit them, and they would only crowd the pool.
Status PinNeedsTheCache(const ReadState& state, Scenario* s) {
  if (s->pricing || s->prefix_cache.pin_during_tool_s <= 0 || s->prefix_cache.enabled) {
    return OkStatus();
  }
  return state.source().Bad(state.At("/prefix_cache/pin_during_tool_s"),
                            "keeps a task's cached blocks for its next request, and "
                            "prefix_cache.enabled is false: nothing would hit them; turn the "
                            "cache on or set it to 0");
}

// The host offload tier holds blocks the prefix cache evicts: nothing
// reaches it with caching off, so a tier there is a contradiction, not a
// setting to ignore.
Status OffloadNeedsTheCache(const ReadState& state, Scenario* s) {
  if (s->pricing || s->prefix_cache.offload_capacity_gib <= 0 || s->prefix_cache.enabled) {
    return OkStatus();
  }
  return state.source().Bad(state.At("/prefix_cache/offload"),
                            "holds the blocks the prefix cache evicts, and prefix_cache.enabled "
                            "is false: nothing would reach it; turn the cache on or drop the tier");
}

// The offload tier is not modelled for sliding-window, chunked or compressed layers
// (docs/engine.md, "Host offload"): said at the field, before any run.
Status OffloadFitsModel(const ReadState& state, Scenario* s) {
  if (s->pricing || s->prefix_cache.offload_capacity_gib <= 0 || !s->prefix_cache.enabled) {
    return OkStatus();
  }
  auto model = LoadScenarioModel(*s);
  if (!model) return OkStatus();  // ModelLoads says why
  if (model->CountLayers(LayerKind::kSlidingWindow) == 0 &&
      model->CountLayers(LayerKind::kChunkedAttention) == 0 && !model->HasCompressedLayers()) {
    return OkStatus();
  }
  return state.source().Bad(state.At("/prefix_cache/offload"),
                            "the host offload tier is not modelled for models with "
                            "sliding-window, chunked or compressed attention layers, as " +
                                Quote(model->name) + " has");
}

// The formats must be ones an engine runs on the GPU (the format matrix,
// hardware/format_support.h): blame the format's field, or the model when
// its own checkpoint format is the one no engine runs there. An API run has
// no GPU.
Status FormatsRunOnGpu(const ReadState& state, Scenario* s) {
  if (s->pricing) return OkStatus();
  auto gpu = LookupGpu(s->deployment.gpu);
  if (!gpu) return OkStatus();  // the row's domain said so
  auto at = [&](const char* pointer) {
    return state.Given(pointer) ? state.At(pointer) : std::string(pointer);
  };
  if (auto kv = ParseElementFormat(s->kv_format)) {
    if (auto run = CheckGpuRuns(*gpu, FormatRole::kKvCache, *kv); !run) {
      return state.source().Bad(at("/kv_format"), run.error().message());
    }
  }
  if (s->weight_format != "auto") {
    auto w = ParseElementFormat(s->weight_format);
    if (!w) return OkStatus();  // the row's domain said so
    if (auto run = CheckGpuRuns(*gpu, FormatRole::kWeights, *w); !run) {
      return state.source().Bad(at("/weight_format"), run.error().message());
    }
    return OkStatus();
  }
  auto model = LoadScenarioModel(*s);
  if (!model) return OkStatus();  // ModelLoads said so
  if (!NativePartFormats(*model)) return OkStatus();
  if (auto run = CheckCheckpointRuns(*gpu, *model); !run) {
    return state.source().Bad(state.Given("/model") ? state.At("/model") : "/model",
                              run.error().message());
  }
  return OkStatus();
}

// The MXFP4 MoE kernel is vLLM's choice on Hopper (get_mxfp4_backend).
// Elsewhere vLLM takes one kernel whatever it is told (Marlin on Ampere,
// Ada and RTX Blackwell, FlashInfer on Blackwell, Triton on AMD's CDNA):
// "marlin" (VLLM_MXFP4_USE_MARLIN=1) then changes nothing, as in vLLM, and
// so does "triton" on CDNA; "triton" where vLLM does not run it is refused,
// as is either on another engine.
Status Mxfp4MoeKernelIsVllms(const ReadState& state, Scenario* s) {
  const ScenarioDeployment& d = s->deployment;
  if (s->pricing || d.mxfp4_moe_kernel == "auto") return OkStatus();
  const std::string at = state.At("/deployment/mxfp4_moe_kernel");
  if (d.engine != "vllm") {
    return state.source().Bad(
        at, "is vLLM's choice; " + d.engine + " is not modelled with another (set it to \"auto\")");
  }
  if (d.mxfp4_moe_kernel != "triton") return OkStatus();
  auto gpu = LookupGpu(d.gpu);
  if (!gpu) return OkStatus();  // the GPU's own rule reports it
  if (gpu->architecture != "hopper" && gpu->architecture != "cdna3" &&
      gpu->architecture != "cdna4") {
    return state.source().Bad(at,
                              "\"triton\": vLLM runs MXFP4 experts on the OpenAI Triton kernels "
                              "only on Hopper and AMD CDNA; " +
                                  d.gpu + " (" + gpu->architecture +
                                  ") runs them on one kernel whatever it is told (set it to "
                                  "\"auto\")");
  }
  return OkStatus();
}

// Tensor parallelism splits the attention heads over the replica's GPUs:
// vLLM refuses a degree that does not divide the query heads, or the KV
// heads when there are more of them than GPUs (ValidTensorParallel). An API
// run has no GPUs.
Status TensorParallelFits(const ReadState& state, Scenario* s) {
  if (s->pricing) return OkStatus();
  const int tp = s->deployment.gpus_per_replica;
  auto model = LoadScenarioModel(*s);
  if (!model) return OkStatus();  // ModelLoads said so
  const std::string problem =
      TensorParallelProblem(*model, tp, /*experts_split=*/s->deployment.expert_parallel == 1);
  if (problem.empty()) return OkStatus();
  const std::string at = state.Given("/deployment/gpus_per_replica")
                             ? state.At("/deployment/gpus_per_replica")
                             : "/deployment/gpus_per_replica";
  return state.source().Bad(at, problem);
}

// Expert parallelism splits routed experts over the replica's GPUs.
Status ExpertParallelFits(const ReadState& state, Scenario* s) {
  const ScenarioDeployment& d = s->deployment;
  if (d.expert_parallel == 1) {
    // Without expert parallelism every GPU holds a slice of every expert:
    // no token leaves its GPU, so an all-to-all dispatch would change
    // nothing and is refused rather than ignored.
    if (d.expert_dispatch != "all_to_all") return OkStatus();
    return state.source().Bad(state.At("/deployment/expert_dispatch"),
                              "\"all_to_all\" needs expert_parallel above 1 (it is 1: every GPU "
                              "holds a slice of every expert and no token is dispatched)");
  }
  // vLLM runs its dispatch and combine kernels only with data parallelism
  // (use_all2all_kernels: dp_size > 1 and use_ep, docs/engine.md#parallelism):
  // with one replica it sums the experts' outputs by all-reduce, so an
  // all-to-all run would price what vLLM does not do.
  if (d.expert_dispatch == "all_to_all" && d.engine == "vllm" && !s->pricing && d.replicas <= 1) {
    return state.source().Bad(state.At("/deployment/expert_dispatch"),
                              "\"all_to_all\" on vLLM needs data parallelism (deployment.replicas "
                              "above 1, vLLM's --data-parallel-size): with one replica vLLM runs "
                              "no dispatch or combine and sums the experts' outputs by "
                              "all-reduce; set it to \"all_reduce\"");
  }
  const std::string at = state.At("/deployment/expert_parallel");
  if (d.expert_parallel != d.gpus_per_replica) {
    return state.source().Bad(at, "must be 1 or gpus_per_replica (" +
                                      std::to_string(d.gpus_per_replica) + "), got " +
                                      std::to_string(d.expert_parallel));
  }
  auto model = LoadScenarioModel(*s);
  if (model && model->moe.experts <= 1) {
    return state.source().Bad(
        at, "model " + Quote(model->name) + " has no routed experts to split; set it to 1");
  }
  // Each GPU holds at least one whole expert (ValidExpertParallel).
  if (model) {
    if (const std::string problem = ExpertParallelProblem(*model, d.expert_parallel);
        !problem.empty()) {
      return state.source().Bad(at, problem + "; set it to 1 (every GPU a slice of every expert)");
    }
  }
  return OkStatus();
}

// deployment.speculative: a draft model with draft_model and only there; one
// acceptance rate or one per position.
Status SpeculativeFits(const ReadState& state, Scenario* s) {
  if (!s->deployment.speculative) return OkStatus();
  const ScenarioSpeculative& spec = *s->deployment.speculative;
  const std::string at = "/deployment/speculative";
  const bool own = spec.method == "draft_model";
  if (own && spec.model.empty()) {
    return state.source().Bad(at + "/model", "missing (required by method \"draft_model\")");
  }
  if (!own && !spec.model.empty()) {
    return state.source().Bad(state.At(at + "/model"), "only with method \"draft_model\" (" +
                                                           Quote(spec.method) +
                                                           " drafts without a model of its own)");
  }
  if (spec.method == "ngram" && s->deployment.async_scheduling.value_or(false) &&
      s->deployment.engine != "sglang") {
    return state.source().Bad(state.At("/deployment/async_scheduling"),
                              "vLLM refuses async scheduling with n-gram speculation "
                              "(vllm/config/vllm.py); set it to false or draft another way");
  }
  if (s->deployment.engine == "sglang" && s->deployment.async_scheduling.value_or(false)) {
    return state.source().Bad(state.At("/deployment/async_scheduling"),
                              "SGLang turns its overlap scheduler off when it speculates "
                              "(server_args.py, v0.5): set it to false or leave it unset");
  }
  if (spec.method == "mtp") {
    // The engines draft with the checkpoint's own multi-token-prediction
    // layers and refuse "mtp" for a model without them.
    auto model = LoadScenarioModel(*s);
    if (model && model->params.mtp <= 0) {
      return state.source().Bad(state.At(at + "/method"),
                                "model " + Quote(model->name) +
                                    " has no multi-token-prediction layers "
                                    "(num_nextn_predict_layers or mtp_num_hidden_layers in its "
                                    "config) to draft with; use \"eagle3\", \"ngram\" or "
                                    "\"draft_model\"");
    }
  }
  const SpeculativeMethod* method = FindSpeculativeMethod(spec.method);
  const int k = spec.num_speculative_tokens.value_or(method ? method->num_speculative_tokens : 1);
  const std::size_t n = spec.acceptance_rate.size();
  if (n > 1 && n != static_cast<std::size_t>(k)) {
    return state.source().Bad(state.At(at + "/acceptance_rate"),
                              "must be one rate or " + std::to_string(k) +
                                  " (one per drafted position, num_speculative_tokens " +
                                  std::to_string(k) + "), got " + std::to_string(n));
  }
  // A tree draft: a draft that scores its candidates, and a verification
  // step that fits the tree (SGLang's server_args checks, docs/engine.md).
  const int topk = spec.topk.value_or(1);
  if (topk > 1 && spec.method == "ngram") {
    return state.source().Bad(state.At(at + "/topk"),
                              "must be 1 with method \"ngram\" (prompt lookup proposes one "
                              "continuation, not ranked candidates), got " +
                                  std::to_string(topk));
  }
  if (topk == 1 && spec.rank_decay) {
    return state.source().Bad(state.At(at + "/rank_decay"),
                              "only with topk above 1 (β ranks the candidates of a tree draft; a "
                              "chain drafts one token per position and never uses it)");
  }
  if (topk > 1 && !spec.num_draft_tokens) {
    return state.source().Bad(at + "/num_draft_tokens",
                              "missing (required when topk is above 1: the tree's nodes the "
                              "model verifies, the step's own token included)");
  }
  if (!spec.num_draft_tokens) return OkStatus();
  const int verify = *spec.num_draft_tokens;
  if (topk == 1 && verify != k + 1) {
    return state.source().Bad(state.At(at + "/num_draft_tokens"),
                              "must be num_speculative_tokens + 1 = " + std::to_string(k + 1) +
                                  " with topk 1 (a chain), got " + std::to_string(verify));
  }
  const long long tree = TreeDraftNodes(k, topk);
  if (verify > tree + 1) {
    return state.source().Bad(state.At(at + "/num_draft_tokens"),
                              "must be at most " + std::to_string(tree + 1) +
                                  " (the step's own token and the " + std::to_string(tree) +
                                  " candidates of a tree of depth " + std::to_string(k) +
                                  " and topk " + std::to_string(topk) +
                                  ": topk + (depth - 1) x topk²), got " + std::to_string(verify));
  }
  return OkStatus();
}

}  // namespace

// vLLM stores an int4 KV cache with one fp32 scale per token and KV head
// (int4_per_token_head): int4-g<head_dim>, which a scenario names "int4"
// (BuildSimulationConfig reads it so); another group size is not one vLLM
// runs.
Status Int4KvIsVllms(const ReadState& state, Scenario* s) {
  if (s->pricing || s->deployment.engine != "vllm" || s->kv_format == "int4") return OkStatus();
  auto kv = ParseElementFormat(s->kv_format);
  if (!kv || !kv->name.starts_with("int4")) return OkStatus();
  auto model = LoadScenarioModel(*s);
  if (!model) return OkStatus();  // ModelLoads said so
  const std::string problem = VllmInt4KvProblem(*kv, *model);
  if (problem.empty()) return OkStatus();
  return state.source().Bad(
      state.Given("/kv_format") ? state.At("/kv_format") : std::string("/kv_format"), problem);
}

// vLLM's MLA backends store a latent cache as the model's dtype or fp8
// e4m3 only (VllmKvProblem).
Status LatentKvIsOneVllmStores(const ReadState& state, Scenario* s) {
  if (s->pricing || s->deployment.engine != "vllm") return OkStatus();
  auto kv = ParseElementFormat(s->kv_format);
  if (!kv) return OkStatus();  // the row's domain said so
  auto model = LoadScenarioModel(*s);
  if (!model) return OkStatus();  // ModelLoads said so
  const std::string problem = VllmKvProblem(*kv, *model);
  if (problem.empty()) return OkStatus();
  return state.source().Bad(
      state.Given("/kv_format") ? state.At("/kv_format") : std::string("/kv_format"),
      problem + "; pick bf16 or fp8");
}

// SGLang stores its KV cache as the model's dtype or as fp8 (its
// --kv-cache-dtype: auto, bf16, fp8_e4m3, fp8_e5m2; its experimental
// fp4_e2m1, E2M1 with a UE8M0 scale per 16 elements, is not modelled): no
// int4, int2, per-token-head fp8 or NVFP4 cache.
Status KvIsOneSglangStores(const ReadState& state, Scenario* s) {
  if (s->pricing || s->deployment.engine != "sglang") return OkStatus();
  auto kv = ParseElementFormat(s->kv_format);
  if (!kv) return OkStatus();  // the row's domain said so
  const std::string problem = SglangKvProblem(*kv);
  if (problem.empty()) return OkStatus();
  return state.source().Bad(
      state.Given("/kv_format") ? state.At("/kv_format") : std::string("/kv_format"),
      problem + "; serve it with deployment.engine \"vllm\", or pick one of those");
}

// vLLM and SGLang keep the KV cache in the dtype the model runs in
// (--kv-cache-dtype auto) or a narrower one (fp8, vLLM's int4 and NVFP4):
// neither's --kv-cache-dtype names float32, and --dtype auto runs even an
// fp32 checkpoint in 16 bits. An fp32 cache is the model run in fp32
// (--dtype float32), weight_format "fp32".
Status Fp32KvNeedsFp32Weights(const ReadState& state, Scenario* s) {
  if (s->pricing) return OkStatus();
  auto kv = ParseElementFormat(s->kv_format);
  if (!kv || kv->name != "fp32") return OkStatus();  // the row's domain said so
  auto weights = ParseElementFormat(s->weight_format);
  if (weights && weights->name == "fp32") return OkStatus();
  return state.source().Bad(
      state.Given("/kv_format") ? state.At("/kv_format") : std::string("/kv_format"),
      "an fp32 KV cache with weight_format \"" + s->weight_format +
          "\": vLLM and SGLang keep the cache in the dtype the model runs in or a narrower one "
          "(--kv-cache-dtype auto, fp8, ...), so an fp32 cache runs only with the model in fp32 "
          "(--dtype float32): set weight_format \"fp32\", or pick bf16");
}

// A tree draft (topk above 1) is SGLang's EAGLE tree: the top-k
// candidates of each draft step, the best num_draft_tokens - 1 of them
// verified. vLLM drafts a chain; its tree drafting (speculative_token_tree
// on the TREE_ATTN backend, vLLM PR #20401) verifies a static tree given
// node by node, with as many children under each node of a level, and is
// not fully implemented (vLLM issue #37396): not the tree kvbill models.
Status TreeDraftIsSglangs(const ReadState& state, Scenario* s) {
  if (s->pricing || s->deployment.engine != "vllm" || !s->deployment.speculative) {
    return OkStatus();
  }
  const int topk = s->deployment.speculative->topk.value_or(1);
  if (topk <= 1) return OkStatus();
  return state.source().Bad(
      state.At("/deployment/speculative/topk"),
      "a tree draft (topk " + std::to_string(topk) +
          ") is SGLang's EAGLE tree (--speculative-eagle-topk), which vLLM does not run: vLLM "
          "drafts a chain, and its own tree drafting (speculative_token_tree on the "
          "experimental TREE_ATTN backend) verifies a fixed tree kvbill does not model; set "
          "deployment.engine \"sglang\", or topk 1 for vLLM's chain");
}

// vLLM's SchedulerConfig refuses a token budget below the sequence cap
// (every running request decodes a token a step); the defaults are the
// engine's for the GPU.
Status TokenBudgetHoldsTheSequences(const ReadState& state, Scenario* s) {
  if (s->pricing || s->deployment.engine != "vllm") return OkStatus();
  auto gpu = LookupGpu(s->deployment.gpu);
  if (!gpu) return OkStatus();  // the row's domain said so
  const EngineLimits limits =
      DefaultEngineLimits(s->deployment.engine, *gpu, s->deployment.gpus_per_replica);
  const Tokens tokens = ScenarioTokenBudget(*s, *gpu);
  const std::int64_t seqs = s->engine.max_num_seqs.value_or(limits.max_num_seqs);
  if (tokens >= seqs) return OkStatus();
  const bool tokens_set = s->engine.max_num_batched_tokens.has_value();
  const std::string pointer =
      tokens_set ? "/engine/max_num_batched_tokens" : "/engine/max_num_seqs";
  return state.source().Bad(
      state.Given(pointer) ? state.At(pointer) : pointer,
      std::string(tokens_set ? "max_num_batched_tokens " : "the default max_num_batched_tokens ") +
          FormatWithSeparators(tokens) + " is below " +
          (s->engine.max_num_seqs ? "max_num_seqs " : "the default max_num_seqs ") +
          FormatWithSeparators(seqs) +
          ": vLLM refuses it (its SchedulerConfig needs a token budget of at least one token per "
          "running request); raise engine.max_num_batched_tokens or lower engine.max_num_seqs");
}

// kvbill's SGLang scheduler cuts a prompt's chunk at a page (a block of
// prefix_cache.block_size, SGLang's page where its backend pages, which
// also needs the chunked prefill size a multiple of it): a token budget
// below one block admits no prompt.
Status SglangBudgetHoldsABlock(const ReadState& state, Scenario* s) {
  if (s->pricing || s->deployment.engine != "sglang") return OkStatus();
  auto gpu = LookupGpu(s->deployment.gpu);
  if (!gpu) return OkStatus();  // the row's domain said so
  const bool tokens_set = s->engine.max_num_batched_tokens.has_value();
  const Tokens tokens = ScenarioTokenBudget(*s, *gpu);
  const Tokens block = s->prefix_cache.block_size;
  if (block <= 0 || tokens >= block) return OkStatus();
  const std::string pointer =
      tokens_set ? "/engine/max_num_batched_tokens" : "/prefix_cache/block_size";
  return state.source().Bad(
      state.Given(pointer) ? state.At(pointer) : pointer,
      std::string(tokens_set ? "max_num_batched_tokens " : "the default max_num_batched_tokens ") +
          FormatWithSeparators(tokens) + " is below one KV block of " +
          FormatWithSeparators(block) +
          " tokens (prefix_cache.block_size): kvbill's SGLang cuts a prompt's chunk at a block, "
          "so no prompt would be admitted; raise engine.max_num_batched_tokens to at least " +
          FormatWithSeparators(block));
}

// SGLang derives its mem_fraction_static from the GPU's memory less what it
// keeps for activations: 1.5 MiB per token of its chunked prefill size,
// its CUDA graphs and a fixed part (SglangMemoryFraction). A chunk that
// takes all of it leaves a fraction at or below 0: SGLang would not start.
Status SglangFractionLeavesMemory(const ReadState& state, Scenario* s) {
  if (s->pricing || s->deployment.engine != "sglang" || s->deployment.memory_fraction) {
    return OkStatus();
  }
  auto gpu = LookupGpu(s->deployment.gpu);
  if (!gpu) return OkStatus();  // the row's domain said so
  const double fraction = SglangScenarioMemoryFraction(*s, *gpu);
  if (fraction > 0) return OkStatus();
  const Tokens tokens = ScenarioTokenBudget(*s, *gpu);
  const bool tokens_set = s->engine.max_num_batched_tokens.has_value();
  const std::string pointer = tokens_set ? "/engine/max_num_batched_tokens" : "/deployment/gpu";
  char value[32];
  std::snprintf(value, sizeof value, "%.3f", fraction);
  return state.source().Bad(
      state.Given(pointer) ? state.At(pointer) : pointer,
      "SGLang derives its memory fraction (mem_fraction_static) from the GPU's memory less 1.5 "
      "MiB per token of its chunked prefill size for activations: max_num_batched_tokens " +
          FormatWithSeparators(tokens) + " on " + gpu->id + " leaves " + value +
          ", no memory for weights and KV, and SGLang would not start; lower "
          "engine.max_num_batched_tokens or set deployment.memory_fraction");
}

const std::vector<Rule>& CrossKeyRules() {
  static const std::vector<Rule> rules = {
      {"/model",
       "`model`: the config must load with the `set` overrides; an error that goes away without "
       "them is reported at `#/model/set`",
       ModelLoads},
      {"/model",
       "`kv_format` `\"auto\"` becomes the KV format the checkpoint declares (an 8-bit float "
       "`kv_cache_scheme`, `kv_cache_quant_algo` FP8: fp8), else the model's dtype, once the "
       "model is read; left unset where the checkpoint declares one, the run keeps `bf16` and "
       "warns `kv_format_default`",
       KvFormatAuto},
      {"",
       "`prefix_cache.block_size`, when not set, is the block size vLLM forces for the model on "
       "the GPU: 64 for MLA on Hopper (FlashMLA) and on Blackwell with qk_nope_head_dim 128 "
       "(FlashInfer MLA), 128 for other MLA on Blackwell (CUTLASS MLA), 64 for MLA with a "
       "sparse indexer (DeepSeek-V3.2, GLM-5), 256 for compressed attention (DeepSeek-V4), 16 "
       "otherwise; on SGLang 64 where its default backend pages (DeepSeek Sparse Attention; "
       "DeepSeek-V3/R1 on Blackwell), else 16 (docs/engine.md#kv-blocks)",
       EngineBlockSize},
      {"",
       "a model with compressed attention layers (DeepSeek-V4) runs with `kv_format` fp8 "
       "(its default there; vLLM's fp8_ds_mla cache, the only one vLLM runs for it) and, on "
       "vLLM, on a Hopper or Blackwell GPU (FlashMLA's sparse kernels) (a sweep point that "
       "breaks it is a row marked not runnable)",
       CompressedModelRuns, true},
      {"/context_policy",
       "`context_policy` `summarise`: `summary_tokens + keep_recent_tokens` must be below "
       "`threshold_tokens`",
       SummaryBelowThreshold},
      {"/pricing",
       "`pricing.provider` must be the one the price sheet lists `pricing.model` under (a "
       "model's calls follow its own provider's caching rules)",
       ProviderOfTheModel},
      {"/pricing",
       "`pricing.cache`: the options must be the provider's (anthropic `ttl_s` 300 or 3600, "
       "`write_fee` openai only, gemini `prefix_tokens` at least the model's minimum, ...)",
       ProviderCacheOptionsFit},
      {"",
       "`prefix_cache.enabled` must be `false` for a model with constant-state layers (SSM, "
       "linear attention, short convolution), unless the scenario has `pricing` (no engine)",
       PrefixCacheFitsModel},
      {"/prefix_cache",
       "`prefix_cache.offload` needs `prefix_cache.enabled` (the tier holds the blocks the cache "
       "evicts)",
       OffloadNeedsTheCache},
      {"/prefix_cache",
       "`prefix_cache.pin_during_tool_s` above 0 needs `prefix_cache.enabled` (a pin keeps "
       "cached blocks for a task's next request)",
       PinNeedsTheCache},
      {"",
       "`prefix_cache.offload` is not modelled for a model with sliding-window, chunked or "
       "compressed attention layers (a sweep point that breaks it is a row marked not runnable)",
       OffloadFitsModel, true},
      {"",
       "`kv_format`, `weight_format` and the model's own weight formats must be ones an engine "
       "runs on the GPU ([hardware.md](hardware.md#formats): NVFP4 KV only on Blackwell, ...), "
       "unless the scenario has `pricing` (a sweep point that breaks it is a row marked not "
       "runnable)",
       FormatsRunOnGpu, true},
      {"",
       "`deployment.gpus_per_replica` must split the model's query heads evenly, and its KV "
       "heads (or be a multiple of them), as vLLM requires, unless the scenario has `pricing` (a "
       "sweep point that breaks it is a row marked not runnable)",
       TensorParallelFits, true},
      {"",
       "`kv_format` int4 on vLLM is its `int4_per_token_head` cache, int4-g<head_dim> (`\"int4\"` "
       "names it); another group size is not one vLLM runs (a sweep point that breaks it is a "
       "row marked not runnable)",
       Int4KvIsVllms, true},
      {"",
       "`kv_format` on vLLM for a model with latent (MLA) attention is the model's dtype or fp8 "
       "e4m3 (`bf16`, `fp16`, `fp8`, `fp8-e4m3`), all its MLA backends store (a sweep point "
       "that breaks it is a row marked not runnable)",
       LatentKvIsOneVllmStores, true},
      {"",
       "`kv_format` on SGLang is one its `--kv-cache-dtype` stores: the model's dtype (bf16, "
       "fp16, fp32) or fp8 (`fp8`, `fp8-e4m3`, `fp8-e5m2`) (a sweep point that breaks it is a "
       "row marked not runnable)",
       KvIsOneSglangStores, true},
      {"",
       "`kv_format` `fp32` needs `weight_format` `fp32`: vLLM and SGLang keep the KV cache in the "
       "dtype the model runs in or a narrower one, never a wider one (a sweep point that breaks "
       "it is a row marked not runnable)",
       Fp32KvNeedsFp32Weights, true},
      {"",
       "`engine.max_num_batched_tokens` must be at least `engine.max_num_seqs` on vLLM (the "
       "engine's defaults for the GPU when not set), which its scheduler requires (a sweep point "
       "that breaks it is a row marked not runnable)",
       TokenBudgetHoldsTheSequences, true},
      {"",
       "`engine.max_num_batched_tokens` on SGLang (its default for the GPU when not set) must be "
       "at least `prefix_cache.block_size`: SGLang cuts a prompt's chunk at a page, so a smaller "
       "budget "
       "admits no prompt (a sweep point that breaks it is a row marked not runnable)",
       SglangBudgetHoldsABlock, true},
      {"",
       "On SGLang without `deployment.memory_fraction`, the memory fraction SGLang derives "
       "(its `mem_fraction_static`: the GPU's memory less 1.5 MiB per token of "
       "`engine.max_num_batched_tokens`, its CUDA graphs and a fixed part) must leave memory "
       "for weights and KV (a sweep point that breaks it is a row marked not runnable)",
       SglangFractionLeavesMemory, true},
      {"/deployment",
       "`deployment.expert_parallel` must be 1 or `gpus_per_replica`, and above 1 only for a "
       "model with routed experts, at most their number (each GPU holds a whole expert); "
       "`expert_dispatch` `all_to_all` only with `expert_parallel` "
       "above 1, and on vLLM only with `replicas` above 1 (its all-to-all kernels run only with "
       "data parallelism) (a sweep point that breaks it is a row marked not runnable)",
       ExpertParallelFits, true},
      {"/deployment",
       "`deployment.mxfp4_moe_kernel` other than `auto` only on vLLM, and `triton` only with a "
       "Hopper GPU (where vLLM chooses the kernel by the packages installed) or an AMD CDNA one "
       "(where it is vLLM's only kernel) (a sweep point that breaks it is a row marked not "
       "runnable)",
       Mxfp4MoeKernelIsVllms, true},
      {"/deployment/speculative",
       "`deployment.speculative`: `model` is required with `method` `\"draft_model\"` and "
       "allowed only there; `acceptance_rate` is one rate or `num_speculative_tokens` of them; "
       "`topk` above 1 not with `ngram` and only with `num_draft_tokens`, which is "
       "`num_speculative_tokens` + 1 with `topk` 1 and at most 1 + topk + (depth − 1) × topk²; "
       "`rank_decay` only with `topk` above 1; "
       "`ngram` not with `async_scheduling` on vLLM (which refuses it), no method with "
       "`async_scheduling` on SGLang (which turns its overlap off to speculate); `mtp` only for a "
       "model "
       "whose config has multi-token-prediction layers",
       SpeculativeFits},
      {"/deployment/speculative",
       "`deployment.speculative.topk` above 1 (a tree draft, SGLang's EAGLE tree) only with "
       "`deployment.engine` `\"sglang\"`: vLLM drafts a chain, and its experimental "
       "`speculative_token_tree` is a fixed tree kvbill does not model, unless the scenario has "
       "`pricing` (a sweep point that breaks it is a row marked not runnable)",
       TreeDraftIsSglangs, true},
  };
  return rules;
}

}  // namespace kvbill::scenario_keys
