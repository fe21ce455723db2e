#include "engine/setup.h"

#include <cmath>
#include <string>
#include <vector>

#include "kvbill/cost/roofline_cost_model.h"
#include "kvbill/model/weight_bytes.h"
#include "kvbill/util/names.h"
#include "kvbill/util/units.h"

namespace kvbill::engine {

Result<EngineSetup> SetUpEngine(const SimulationConfig& config) {
  if (config.replicas < 1 || config.gpus_per_replica < 1) {
    return Error("replicas and gpus_per_replica must be at least 1");
  }
  if (config.block_size < 1) return Error("block_size must be at least 1");
  if (config.client_max_tasks < 0) return Error("client_max_tasks must be 0 (no cap) or more");
  RooflineParams params = config.roofline;
  params.tensor_parallel = config.gpus_per_replica;
  auto roofline =
      Roofline::Make(config.model, config.kv_format, config.weight_format, config.gpu, params);
  if (!roofline) return roofline.error();
  // The KV pool: what is left of the memory fraction after weights, in
  // pages of one KV cache group (kv_groups.h); with one group a page is the
  // block of every per-token layer. SGLang's pool keeps every token of a
  // sliding layer unless the model is one of its hybrid sliding-window
  // architectures (SglangPoolModel).
  KvGroupLayout layout = MakeKvGroupLayout(
      config.scheduler == SchedulerKind::kSglang ? SglangPoolModel(config.model) : config.model,
      config.kv_format, config.gpus_per_replica, config.block_size);
  if (layout.groups.size() > 254) {
    return Error("the model has " + std::to_string(layout.groups.size()) +
                 " KV cache groups; the engine supports at most 254");
  }
  if (layout.state_stops_prefix_caching && config.prefix_caching) {
    return Error("model \"" + config.model.name +
                 "\" has constant-state (SSM / linear attention / short convolution) layers, whose "
                 "state a block prefix cache cannot reuse (vLLM serves such models without "
                 "prefix caching unless opted in): set prefix_cache.enabled to false");
  }
  if ((layout.Windowed() || config.model.HasCompressedLayers()) &&
      config.offload_capacity_tokens > 0 && config.prefix_caching) {
    return Error(
        "the host offload tier (prefix_cache.offload) is not modelled for models with "
        "sliding-window, chunked or compressed attention layers");
  }
  auto weights = ComputeWeightBytes(config.model, config.weight_format);
  if (!weights) return weights.error();
  const int tp = config.gpus_per_replica;
  const long double capacity = std::floor(static_cast<long double>(config.gpu.usable_memory_bytes) *
                                          config.memory_fraction) -
                               config.activation_reserve_gib * kBytesPerGiB;
  // Speculative decoding: the draft's weights come out of the pool, and its
  // KV rides along with every block (vLLM keeps the draft's layers in the
  // same KV cache, one block table for both).
  const SpeculativeDecoding& spec = config.speculative;
  const long double weights_per_gpu =
      static_cast<long double>(weights->PerGpu(tp)) + spec.draft_weight_bytes;
  const long double draft_block_bytes = spec.draft_kv_bytes_per_token * config.block_size;
  const long double block_bytes =
      static_cast<long double>(roofline->KvWriteBytesPerToken()) * config.block_size +
      draft_block_bytes;
  // What memory holds, whatever the scenario sets (0 pages when the weights
  // leave no room: an error unless a capacity override studies the cache
  // regardless, which the run's pool_beyond_memory warning then says).
  const bool overridden = config.capacity_tokens != 0;
  if (capacity <= weights_per_gpu && !overridden) {
    // Say what took the memory: the activation reserve alone, or the weights.
    const long double share = std::floor(static_cast<long double>(config.gpu.usable_memory_bytes) *
                                         config.memory_fraction);
    if (capacity <= 0) {
      return Error::CannotServe(
          "the activation reserve (" +
          FormatBinaryBytes(static_cast<double>(config.activation_reserve_gib) *
                            static_cast<double>(kBytesPerGiB)) +
          " per GPU) takes all of the " + FormatBinaryBytes(static_cast<double>(share)) +
          " per GPU the memory fraction leaves, before the weights (" +
          FormatBinaryBytes(static_cast<double>(weights_per_gpu)) +
          " per GPU): lower deployment.activation_reserve_gib or raise "
          "deployment.memory_fraction");
    }
    // Say what would leave room, the likeliest first: a memory fraction
    // (up to 0.95) that holds the weights and the reserve, a smaller
    // reserve when the fraction alone holds the weights, then the smallest
    // power-of-two tensor-parallel degree whose share of the weights fits
    // (heads permitting), up to 64.
    std::vector<std::string> fixes;
    const long double usable = static_cast<long double>(config.gpu.usable_memory_bytes);
    const long double reserve = config.activation_reserve_gib * kBytesPerGiB;
    const long double fraction_needed =
        std::ceil((weights_per_gpu + reserve) / usable * 100 + 1) / 100;
    if (fraction_needed <= 0.95 && fraction_needed > config.memory_fraction) {
      fixes.push_back("deployment.memory_fraction " +
                      FormatFixed(static_cast<double>(fraction_needed), 2));
    }
    if (fixes.empty() && reserve > 0 && weights_per_gpu < share) {
      fixes.push_back(
          "a deployment.activation_reserve_gib below " +
          FormatFixed(static_cast<double>((share - weights_per_gpu) / kBytesPerGiB), 2));
    }
    std::string gpus = "more GPUs";
    for (int t = 2 * tp; t <= 64; t *= 2) {
      if (static_cast<long double>(weights->PerGpu(t)) + spec.draft_weight_bytes < capacity) {
        gpus = "deployment.gpus_per_replica " + std::to_string(t);
        break;
      }
    }
    fixes.push_back(gpus);
    fixes.push_back("a smaller weight_format");
    const std::string hint = ": " + JoinWithOr(fixes) + " would leave room";
    const std::string draft =
        spec.draft_weight_bytes > 0
            ? ", the draft model's " +
                  FormatBinaryBytes(static_cast<double>(spec.draft_weight_bytes)) + " of them"
            : "";
    return Error::CannotServe("the model's weights (" +
                              FormatBinaryBytes(static_cast<double>(weights_per_gpu)) + " per GPU" +
                              draft + ") leave no room for KV in " +
                              FormatBinaryBytes(static_cast<double>(capacity)) + " per GPU" + hint);
  }
  const long double free_bytes = std::max<long double>(0, capacity - weights_per_gpu);
  std::int64_t memory_pool =
      block_bytes > 0 ? static_cast<std::int64_t>(free_bytes / block_bytes) : kUnlimitedBlocks;
  if (!layout.Single()) {
    // The draft's KV of block_size tokens, spread over the pages a
    // sequence takes for them (one per group).
    const long double page = static_cast<long double>(layout.page_bytes) +
                             draft_block_bytes / static_cast<long double>(std::max<std::size_t>(
                                                     1, layout.groups.size()));
    memory_pool =
        layout.page_bytes > 0 ? static_cast<std::int64_t>(free_bytes / page) : kUnlimitedBlocks;
  }
  // Memory for weights but not for one block: the block size, not a
  // request, is at fault (a request would be refused for a pool of 0).
  if (memory_pool == 0 && config.capacity_tokens == 0 && free_bytes > 0) {
    return Error(
        "one KV block of " + FormatWithSeparators(config.block_size) +
        " tokens (prefix_cache.block_size) takes " +
        FormatBinaryBytes(static_cast<double>(layout.Single() ? block_bytes : layout.page_bytes)) +
        " per GPU, more than the " + FormatBinaryBytes(static_cast<double>(free_bytes)) +
        " the weights leave for KV: a smaller block_size");
  }
  std::int64_t pool = memory_pool;
  if (config.capacity_tokens == kUnlimitedTokens) {
    pool = kUnlimitedBlocks;
  } else if (config.capacity_tokens > 0) {
    // Tokens of sequences that keep every block of every group.
    pool = CeilDiv(config.capacity_tokens, config.block_size) *
           std::max<std::int64_t>(1, std::ssize(layout.groups));
  }
  std::shared_ptr<const CostModel> cost = config.cost_model;
  if (!cost) cost = std::make_shared<RooflineCostModel>(*roofline);
  return EngineSetup{std::move(*roofline), std::move(cost), std::move(layout), pool, memory_pool};
}

}  // namespace kvbill::engine
