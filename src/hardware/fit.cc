#include "kvbill/hardware/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "kvbill/cache/kv_groups.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"
#include "kvbill/model/weight_format.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

struct PerGpu {
  Bytes capacity = 0;
  Bytes weights = 0;
};

PerGpu Budget(const FitRequest& r, const WeightBytes& weights, int tp) {
  PerGpu b;
  b.capacity =
      static_cast<Bytes>(std::floor(static_cast<double>(r.deployment.gpu.usable_memory_bytes) *
                                    r.deployment.memory_fraction)) -
      r.deployment.activation_reserve_bytes;
  b.weights = weights.PerGpu(tp);
  return b;
}

// Block-rounded bytes (state included) on one GPU of a batch at one
// context: the sequence being prefilled holds its chunk beside each window
// (`first`), the others decode, a token beside their windows (`rest`
// each). The iteration's token budget is shared, so one chunk's worth at a
// time: vLLM's and simulate's pools hold that. (vLLM's logged "maximum
// concurrency" charges every sequence the chunk: a lower bound.) The same
// for layers without a window.
struct BatchBytes {
  Bytes first = 0;
  Bytes rest = 0;
};

// One sequence at `ctx` being prefilled (its chunk beside each window) or
// decoding (a token beside them).
SequenceFootprint PrefillFootprint(const FitRequest& r, Tokens ctx, int tp) {
  return PeakFootprint(r.model, r.kv_format, ctx, r.block_size, tp, r.prefill_chunk_tokens);
}
SequenceFootprint DecodeFootprint(const FitRequest& r, Tokens ctx, int tp) {
  return PeakFootprint(r.model, r.kv_format, ctx, r.block_size, tp,
                       r.prefill_chunk_tokens > 0 ? 1 : 0);
}

// What the engine's pool takes for one sequence with footprint `f` at
// `ctx`, computing `chunk` tokens an iteration. One KV cache group: its whole
// blocks and its state. Several (sliding layers beside full ones), or linear
// state: whole pages of the grouped pool (kv_groups.h), every group's page as
// large as the largest group's, so the last group of a kind is padded as vLLM
// pads it, and the state in whole pages; simulate's pool holds the same
// (Gemma-3-27B on one H100, counted layer by layer: 194,448 tokens where
// its pool holds 187,072; docs/fit.md).
Bytes PoolBytes(const FitRequest& r, const SequenceFootprint& f, Tokens ctx, int tp, Tokens chunk) {
  const KvGroupLayout layout = MakeKvGroupLayout(r.model, r.kv_format, tp, r.block_size);
  if (layout.Single() || f.saturated) return f.block_rounded_bytes + f.state_bytes;
  Bytes bytes = 0;
  if (__builtin_mul_overflow(PeakPages(layout, ctx, chunk), layout.page_bytes, &bytes)) {
    return std::numeric_limits<Bytes>::max();
  }
  return bytes;
}

BatchBytes SequenceBytes(const FitRequest& r, Tokens ctx, int tp) {
  return {PoolBytes(r, PrefillFootprint(r, ctx, tp), ctx, tp, r.prefill_chunk_tokens),
          PoolBytes(r, DecodeFootprint(r, ctx, tp), ctx, tp, r.prefill_chunk_tokens > 0 ? 1 : 0)};
}

// The most sequences `free` bytes hold at these footprints (0: not one).
std::int64_t MaxSequences(Bytes free, const BatchBytes& s) {
  if (free < s.first) return 0;
  if (s.rest == 0) return std::numeric_limits<std::int64_t>::max();
  return 1 + (free - s.first) / s.rest;
}

bool FitsAt(const FitRequest& r, const PerGpu& b, Tokens ctx, std::int64_t batch, int tp) {
  const Bytes free = b.capacity - b.weights;
  if (free < 0) return false;
  const BatchBytes s = SequenceBytes(r, ctx, tp);
  return s.first == 0 || batch <= MaxSequences(free, s);
}

// The first KV head count of a layer that `tp` GPUs can neither split nor
// replicate evenly (Gemma 4's full layers have their own); 0 when none.
std::int64_t UnsplitKvHeads(const ModelShape& model, int tp) {
  for (const LayerShape& l : model.layers) {
    if (l.kv_heads > 0 && l.kv_heads % tp != 0 && tp % l.kv_heads != 0) return l.kv_heads;
  }
  return 0;
}

// The query heads of the first layer whose heads `tp` GPUs cannot split
// evenly (layers may differ: Laguna's sliding layers have more), or 0.
std::int64_t UnsplitQueryHeads(const ModelShape& model, int tp) {
  for (const LayerShape& l : model.layers) {
    if (l.query_heads > 0 && l.query_heads % tp != 0) return l.query_heads;
  }
  return 0;
}

// A quantized MLP weight whose split by `tp` GPUs leaves a GPU a part
// that is not whole quantization blocks (groups): vLLM's and SGLang's
// block-FP8 layers refuse a partition not a multiple of weight_block_size
// ("The output_size of gate's and up's weight = 192 is not divisible by
// weight quantization block_n = 128": Qwen3-235B-A22B-FP8's 1,536 over 8
// GPUs), and their grouped int4 ones an input partition not a multiple of
// group_size. Tensor parallelism splits the intermediate dimension (the
// rows of gate and up, the columns of down), the one not hidden_size;
// expert parallelism keeps routed experts whole (`experts_split` false).
struct UnsplitBlock {
  std::string weight;
  std::int64_t size = 0;   // the intermediate dimension
  std::int64_t block = 0;  // the quantization block (group) along it
  bool routed = false;     // a routed expert's (expert parallelism keeps it whole)
};
std::optional<UnsplitBlock> UnsplitQuantBlocks(const ModelShape& model, int tp,
                                               bool experts_split) {
  if (tp <= 1) return std::nullopt;
  for (const WeightGroup& w : model.weights) {
    const bool mlp = w.role == ParamRole::kDenseMlp || w.role == ParamRole::kSharedExperts ||
                     (experts_split && w.role == ParamRole::kRoutedExperts);
    if (!w.linear || !mlp || w.module_role != w.role) continue;
    std::int64_t size = 0, block = 0;
    if (w.rows == model.hidden_size && w.cols != model.hidden_size) {
      size = w.cols;  // down: split along its input, where groups run too
      block = w.format.block_cols > 0 ? w.format.block_cols : w.format.group_size;
    } else if (w.cols == model.hidden_size && w.rows != model.hidden_size) {
      size = w.rows;  // gate and up: split along their output
      block = w.format.block_rows;
    }
    if (block <= 0) continue;
    if (size % tp != 0 || (size / tp) % block != 0) {
      return UnsplitBlock{w.name, size, block, w.role == ParamRole::kRoutedExperts};
    }
  }
  return std::nullopt;
}

}  // namespace

// DeepSeek-V4's o_groups when `tp` GPUs cannot split them evenly, or 0.
std::int64_t UnsplitOutputGroups(const ModelShape& model, int tp) {
  for (const LayerShape& l : model.layers) {
    if (l.output_groups > 0 && l.output_groups % tp != 0) return l.output_groups;
  }
  return 0;
}

bool ValidTensorParallel(const ModelShape& model, int tp, bool experts_split) {
  if (tp < 1) return false;
  if (UnsplitQueryHeads(model, tp) != 0) return false;
  if (UnsplitOutputGroups(model, tp) != 0) return false;
  if (UnsplitKvHeads(model, tp) != 0) return false;
  return !UnsplitQuantBlocks(model, tp, experts_split);
}

std::string TensorParallelProblem(const ModelShape& model, int tp, bool experts_split) {
  if (ValidTensorParallel(model, tp, experts_split)) return "";
  if (UnsplitQueryHeads(model, tp) == 0 && UnsplitOutputGroups(model, tp) == 0 &&
      UnsplitKvHeads(model, tp) == 0) {
    const UnsplitBlock b = *UnsplitQuantBlocks(model, tp, experts_split);
    const std::string part =
        b.size % tp == 0 ? FormatWithSeparators(b.size / tp) : "not a whole number";
    return std::to_string(tp) + " GPUs cannot split model \"" + model.name + "\"'s " + b.weight +
           " (intermediate size " + FormatWithSeparators(b.size) + ") into whole " +
           std::to_string(b.block) + "-element quantization blocks: " + part +
           " a GPU (vLLM and SGLang refuse to load a partition that is not a multiple of the "
           "checkpoint's weight_block_size or group_size" +
           (b.routed ? "; expert parallelism keeps the routed experts whole)" : ")");
  }
  if (const std::int64_t groups = UnsplitOutputGroups(model, tp);
      groups > 0 && UnsplitQueryHeads(model, tp) == 0) {
    return std::to_string(tp) + " GPUs cannot split model \"" + model.name + "\"'s " +
           std::to_string(groups) +
           " output-projection groups (o_groups) evenly: vLLM and DeepSeek's reference code give "
           "each GPU o_groups / tp of them";
  }
  if (model.MaxKvHeads() == 0) {  // a latent (MLA) model: every GPU holds the whole latent
    return std::to_string(tp) + " GPUs cannot split model \"" + model.name + "\"'s " +
           std::to_string(model.QueryHeads()) +
           " query heads evenly (vLLM and SGLang require them divisible by the degree; the "
           "latent KV is whole on every GPU)";
  }
  const std::int64_t kv = UnsplitKvHeads(model, tp);
  const std::int64_t q = UnsplitQueryHeads(model, tp);
  return std::to_string(tp) + " GPUs cannot split model \"" + model.name + "\"'s " +
         std::to_string(q > 0 ? q : model.QueryHeads()) + " query heads and " +
         std::to_string(kv > 0 ? kv : model.MaxKvHeads()) +
         " KV heads evenly (vLLM and SGLang require the query heads divisible by the degree, "
         "and the KV heads too, or the degree by them)";
}

bool ValidExpertParallel(const ModelShape& model, int ep) {
  if (ep == 1) return true;
  return ep > 1 && model.moe.layers > 0 && model.moe.experts > 0 && ep <= model.moe.experts;
}

std::string ExpertParallelProblem(const ModelShape& model, int ep) {
  if (ValidExpertParallel(model, ep)) return "";
  if (ep < 1) return "an expert-parallel degree must be at least 1, got " + std::to_string(ep);
  if (model.moe.layers <= 0 || model.moe.experts <= 0) {
    return "model \"" + model.name + "\" has no routed experts to split";
  }
  const std::int64_t idle = ep - model.moe.experts;
  return std::to_string(ep) + " GPUs cannot each hold one of model \"" + model.name + "\"'s " +
         std::to_string(model.moe.experts) +
         " routed experts: vLLM gives each GPU whole experts, " + "experts / degree of them, so " +
         std::to_string(idle) + (idle == 1 ? " GPU would hold none" : " GPUs would hold none") +
         " and idle in every MoE layer; expert parallelism needs at most " +
         std::to_string(model.moe.experts) + " GPUs a replica";
}

Result<FitReport> EvaluateFit(const FitRequest& request) {
  // SGLang's pool keeps every token of most models' sliding layers
  // (SglangPoolModel); the weights are the same either way.
  FitRequest sglang;
  if (request.engine == "sglang") {
    sglang = request;
    sglang.model = SglangPoolModel(request.model);
  }
  const FitRequest& r = request.engine == "sglang" ? sglang : request;
  auto weights = ComputeWeightBytes(r.model, r.weight_format);
  if (!weights) return weights.error();
  const int tp = std::max(1, r.deployment.tensor_parallel);
  const PerGpu b = Budget(r, *weights, tp);

  FitReport rep;
  rep.tensor_parallel = tp;
  rep.weight_description = weights->description;
  const SequenceFootprint f = PrefillFootprint(r, r.context, tp);
  // Past 2^60 bytes a sequence's sizes are held at that bound (as `kv`
  // refuses them): an exact-looking figure would be wrong.
  if (f.saturated) {
    return Error("--context: one sequence of " + std::to_string(r.context) +
                 " tokens (in blocks of " + std::to_string(r.block_size) +
                 ") holds more than 2^60 bytes of KV, past what kvbill counts");
  }
  rep.capacity_per_gpu_bytes = b.capacity;
  rep.weights_per_gpu_bytes = b.weights;
  // Checked: batch x context can exceed 2^63 bytes (40,000,000 x 1M tokens
  // of qwen3-32b came out negative and "FITS").
  const auto overflow = [&] {
    return Error("--batch " + std::to_string(r.batch) + " x --context " +
                 std::to_string(r.context) +
                 ": the KV cache is beyond 2^63 bytes (8 EiB), the range of a size");
  };
  // One sequence prefilling at the peak, the others decoding (SequenceBytes).
  const SequenceFootprint d = DecodeFootprint(r, r.context, tp);
  const BatchBytes per_seq = SequenceBytes(r, r.context, tp);
  Bytes kv_exact_per_gpu = 0, rest = 0, rest_exact = 0;
  const std::int64_t others = std::max<std::int64_t>(0, r.batch - 1);
  if (__builtin_mul_overflow(others, per_seq.rest, &rest) ||
      __builtin_add_overflow(rest, per_seq.first, &rep.kv_per_gpu_bytes) ||
      __builtin_mul_overflow(rep.kv_per_gpu_bytes, Bytes{tp}, &rep.kv_bytes) ||
      __builtin_mul_overflow(others, d.kv_bytes + d.state_bytes, &rest_exact) ||
      __builtin_add_overflow(rest_exact, f.kv_bytes + f.state_bytes, &kv_exact_per_gpu) ||
      __builtin_mul_overflow(kv_exact_per_gpu, Bytes{tp}, &rep.kv_exact_bytes)) {
    return overflow();
  }
  rep.capacity_bytes = b.capacity * tp;
  rep.weights_bytes = b.weights * tp;
  if (__builtin_add_overflow(rep.weights_bytes, rep.kv_bytes, &rep.needed_bytes)) return overflow();
  rep.headroom_bytes = rep.capacity_bytes - rep.needed_bytes;
  rep.fits = rep.headroom_bytes >= 0;

  // Longest context: the footprint is non-decreasing in ctx (peak semantics),
  // so binary search for the last fitting ctx.
  if (FitsAt(r, b, kMaxSearchContext, r.batch, tp)) {
    rep.max_context = kMaxSearchContext;
    rep.max_context_unbounded = true;
  } else {
    Tokens lo = 0, hi = kMaxSearchContext;  // FitsAt(lo) or lo == 0; !FitsAt(hi)
    while (hi - lo > 1) {
      const Tokens mid = lo + (hi - lo) / 2;
      if (FitsAt(r, b, mid, r.batch, tp)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    rep.max_context = lo;
  }

  const Bytes free = b.capacity - b.weights;
  rep.max_batch = free < 0 || per_seq.first == 0 ? 0 : MaxSequences(free, per_seq);

  // Expert parallelism where a split would break the experts' blocks (the
  // memory is the same: whole experts, experts / n of them a GPU).
  for (int n = 1; n <= 64; n *= 2) {
    if (!ValidTensorParallel(r.model, n, /*experts_split=*/false)) continue;
    const PerGpu bn = Budget(r, *weights, n);
    if (FitsAt(r, bn, r.context, r.batch, n)) {
      rep.min_gpus = n;
      break;
    }
  }
  return rep;
}

std::vector<FitAlternative> SuggestAlternatives(const FitRequest& request,
                                                const FitReport& report) {
  std::vector<FitAlternative> out;
  // `smaller_weights`: offered only where its weights are smaller than the
  // request's own (FP8 weights are not, for an NVFP4 or int4 checkpoint).
  auto add = [&](const std::string& change, const FitRequest& variant,
                 bool smaller_weights = false) {
    auto rep = EvaluateFit(variant);
    if (!rep || (smaller_weights && rep->weights_bytes >= report.weights_bytes)) return;
    out.push_back(
        FitAlternative{change, rep->fits, rep->needed_bytes, rep->capacity_bytes, variant.context});
  };
  // Only formats an engine runs on this GPU (format_support.h).
  const GpuSpec& gpu = request.deployment.gpu;
  auto runs = [&](FormatRole role, const Result<ElementFormat>& f) {
    return f.ok() && CheckGpuRuns(gpu, role, *f).ok() &&
           (role != FormatRole::kKvCache ||
            EngineKvProblem(request.engine, *f, request.model).empty());
  };
  auto fp8 = ParseElementFormat("fp8-e4m3");
  auto nvfp4 = ParseElementFormat("nvfp4");
  // A request whose formats no engine runs here has sizes but no
  // deployment: a change that keeps those formats does not run either.
  // Weights that do not run leave nothing to offer; a KV format that does
  // not run, the narrowest KV format that does (fp8, else bf16).
  const bool weights_run =
      request.weight_format == "auto"
          ? CheckCheckpointRuns(gpu, request.model).ok()
          : runs(FormatRole::kWeights, ParseWeightFormat(request.weight_format));
  if (!weights_run) return out;
  if (!runs(FormatRole::kKvCache, request.kv_format)) {
    for (const char* name : {"fp8-e4m3", "bf16"}) {
      auto f = ParseElementFormat(name);
      if (!runs(FormatRole::kKvCache, f)) continue;
      FitRequest v = request;
      v.kv_format = *f;
      add(std::string(name) + " KV cache (" + request.kv_format.name + " does not run here)", v);
      break;
    }
    return out;
  }
  if (request.kv_format.element_bits > 8 && runs(FormatRole::kKvCache, fp8)) {
    FitRequest v = request;
    v.kv_format = *fp8;
    add("fp8-e4m3 KV cache", v);
    v.weight_format = "fp8-e4m3";
    // Linear weights 8-bit or narrower already, most of them (DeepSeek-V3's
    // fp8 blocks, its router and a few projections kept bf16): converting
    // them to fp8 saves little more than their scales, no real change.
    std::int64_t linear = 0, narrow = 0;
    for (const WeightGroup& w : request.model.weights) {
      if (!w.linear) continue;
      linear += w.Params();
      narrow += w.format.element_bits <= 8 ? w.Params() : 0;
    }
    const bool eight_bit_already =
        request.weight_format.starts_with("fp8") ||
        (request.weight_format == "auto" && linear > 0 && 10 * narrow >= 9 * linear);
    if (runs(FormatRole::kWeights, fp8) && !eight_bit_already) {
      add("fp8-e4m3 KV cache and fp8-e4m3 weights", v, true);
    }
  }
  if (request.kv_format.element_bits > 4 && runs(FormatRole::kKvCache, nvfp4)) {
    FitRequest v = request;
    v.kv_format = *nvfp4;
    add("nvfp4 KV cache", v);
  }
  if (!report.fits && report.max_context > 0) {
    FitRequest v = request;
    v.context = report.max_context;
    add("context " + FormatWithSeparators(report.max_context) + " tokens", v);
  }
  if (!report.fits && report.max_batch > 0 && report.max_batch < request.batch) {
    FitRequest v = request;
    v.batch = report.max_batch;
    add("batch " + std::to_string(report.max_batch), v);
  }
  if (report.min_gpus && *report.min_gpus != report.tensor_parallel) {
    FitRequest v = request;
    v.deployment.tensor_parallel = *report.min_gpus;
    add(*report.min_gpus == 1 ? std::string("1 GPU (no tensor parallelism)")
                              : std::to_string(*report.min_gpus) + " GPUs (tensor parallel " +
                                    std::to_string(*report.min_gpus) + ")",
        v);
  }
  return out;
}

}  // namespace kvbill
