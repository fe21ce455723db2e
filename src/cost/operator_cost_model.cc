#include "kvbill/cost/operator_cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <utility>

#include "kvbill/cost/format_kernels.h"
#include "kvbill/hardware/fit.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/kv_blocks.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"

namespace kvbill {
namespace {

// Adds `note` unless it is there already.
void Note(std::vector<std::string>* notes, const std::string& note) {
  if (std::find(notes->begin(), notes->end(), note) == notes->end()) notes->push_back(note);
}

}  // namespace

double SmallKernelCount(const ModelShape& model) {
  // Per forward pass: the embedding gather and the final norm.
  double kernels = 2;
  for (const LayerShape& l : model.layers) {
    // Every layer: its two norms (each fused with the residual add) and
    // the MLP's gated activation.
    kernels += 3;
    if (l.KeepsPerTokenKv()) {
      kernels += l.SharesKv() ? 1 : 2;  // rotary embedding, KV-cache write (none when shared)
      if (l.IsLatent()) kernels += 2;   // MLA's norms of the compressed q and kv
    } else if (l.HoldsState()) {
      kernels += 3;  // short convolution, gates, gated output norm
    }
  }
  // MoE layers: the router's softmax and top-k, and the sort of tokens into
  // expert blocks before the fused-MoE call.
  kernels += 2 * static_cast<double>(model.moe.layers);
  return kernels;
}

Result<std::shared_ptr<const OperatorCostModel>> OperatorCostModel::Make(
    const ModelShape& model, const ElementFormat& kv_format, const std::string& weight_format,
    const GpuSpec& given_gpu, const GpuKernelCurves* curves, const EngineProfile& profile,
    const OperatorModelOptions& options) {
  // A GPU file that keeps a catalog id with other speeds is not that GPU:
  // its id's kernels were measured on the catalog's, and so were the runs
  // of its validation regime. It runs under its own name, uncalibrated.
  GpuSpec gpu = given_gpu;
  const bool other_speeds = curves == nullptr && BundledKernelCurves().For(gpu.id) != nullptr &&
                            CatalogTwin(gpu) == nullptr;
  if (other_speeds) gpu.id += " with the file's speeds";
  if (options.tensor_parallel < 1) return Error("tensor_parallel must be at least 1");
  auto roofline = Roofline::Make(model, kv_format, weight_format, gpu,
                                 RooflineParams{options.tensor_parallel, 1, 1, 0});
  if (!roofline) return roofline.error();
  auto weights = ComputeWeightBytes(model, weight_format);
  if (!weights) return weights.error();
  std::shared_ptr<OperatorCostModel> m(new OperatorCostModel(*roofline));
  m->profile_ = profile;
  m->async_ = options.async_scheduling;
  m->cpu_waits_for_sampling_ = options.async_scheduling && options.cpu_waits_for_sampling;
  if (options.cuda_graph_max_tokens > 0) {
    m->profile_.cuda_graph_max_tokens = options.cuda_graph_max_tokens;
  }
  // SGLang v0.5 captures decode batches only (cuda_graph_runner.py); vLLM
  // V1's piecewise graphs also hold mixed and prefill batches up to the size.
  m->graph_prompt_chunks_ = profile.engine != "sglang";
  const GpuKernelCurves* own = curves;
  if (own == nullptr) own = BundledKernelCurves().For(gpu.id);
  if (other_speeds) {
    m->notes_.push_back("the GPU file keeps the catalog id \"" + given_gpu.id +
                        "\" but not its speeds (bandwidth, FLOP/s, architecture or link), so the "
                        "kernels measured on the catalog's " +
                        given_gpu.id + " do not time it");
  }
  const GpuKernelCurves* base = own != nullptr ? own : BundledKernelCurves().For("h100-sxm");
  if (base == nullptr || base->gemm.count("bf16") == 0 ||
      base->decode_attention.count("bf16") == 0) {
    return Error("no kernel curves are bundled (scenarios/kernels/curves.json)");
  }
  m->calibrated_ = own != nullptr && profile.calibrated;
  m->name_ = profile.name + (own != nullptr ? "/" + gpu.id : "/uncalibrated-" + gpu.id);
  m->gpu_id_ = gpu.id;
  m->tensor_parallel_ = options.tensor_parallel;
  if (own != nullptr) {
    m->spec_ = own->spec;
  } else {
    m->spec_ = KernelSpec{gpu.hbm_bandwidth_bytes_per_s, gpu.bf16_flops_per_s,
                          gpu.fp8_flops_per_s > 0 ? gpu.fp8_flops_per_s : gpu.bf16_flops_per_s};
    m->notes_.push_back("no kernel measurements for " + gpu.id +
                        ": the operator efficiencies "
                        "fitted on H100 are applied to its spec sheet");
  }
  if (!profile.calibrated) {
    m->notes_.push_back("engine profile \"" + profile.name + "\" is not fitted to measurements");
  }
  const double tp = options.tensor_parallel;
  const double hidden = static_cast<double>(model.hidden_size);
  m->hidden_ = hidden;
  // Per-block work (norms, elementwise passes, all-reduces, eager
  // launches) runs once for each transformer block of a layer.
  m->layers_ = static_cast<double>(model.DecoderLayers()) * std::max(1, model.blocks_per_layer);

  // Weight formats of each part, as the GPU runs them (the format matrix).
  auto native = NativePartFormats(model);
  if (!native) return native.error();
  ElementFormat dense_fmt = native->dense, expert_fmt = native->experts;
  if (weight_format != "auto") {
    auto named = ParseElementFormat(weight_format);
    if (!named) return named.error();
    dense_fmt = expert_fmt = *named;
  }
  const ElementFormat& other_fmt = native->other;
  FormatRun dense_run = HowGpuRuns(gpu, FormatRole::kWeights, dense_fmt);
  FormatRun expert_run = HowGpuRuns(gpu, FormatRole::kWeights, expert_fmt);
  // MXFP4 on Hopper: vLLM's get_mxfp4_backend falls back to Marlin on SM
  // 9.0 when the triton_kernels package is missing (before v0.12.0) or
  // VLLM_MXFP4_USE_MARLIN is set, so the experts run Marlin's W4A16 MoE,
  // timed by the Marlin MoE table (keyed "int4"); the matrix's cell (and its
  // note, which names this very fallback) describes the Triton experts.
  const bool hopper_mxfp4_marlin = options.mxfp4_experts_marlin && gpu.architecture == "hopper";
  if (hopper_mxfp4_marlin && dense_run.runs() && dense_run.matrix_row == "mxfp4") {
    dense_run.cell.kernel = "Marlin FP4 (dense and MoE)";
    dense_run.cell.note.clear();
  }
  if (hopper_mxfp4_marlin && expert_run.runs() && expert_run.matrix_row == "mxfp4") {
    expert_run.cell.kernel = "Marlin FP4 MoE (triton_kernels absent or VLLM_MXFP4_USE_MARLIN)";
    expert_run.cell.experts_table = "int4";
    expert_run.cell.note.clear();
  } else if (model.moe.layers > 0 && model.moe.experts > 0 && expert_run.runs() &&
             expert_run.matrix_row == "mxfp4" && expert_run.cell.experts_table == "mxfp4" &&
             gpu.architecture == "hopper" && profile.engine == "vllm") {
    // The calibration data's vLLM gpt-oss runs on Hopper are v0.11.0's, on
    // Marlin (docs/engine.md#mxfp4-experts-on-hopper-triton-or-marlin).
    m->unreplayed_path_ =
        "MXFP4 experts on the OpenAI Triton MoE kernels (vLLM's published runs of MXFP4 "
        "experts on Hopper ran Marlin: vLLM v0.11.0)";
  }
  // SGLang (v0.5) runs MXFP4 experts below Hopper on the OpenAI
  // triton_kernels it ships in sgl-kernel, not on Marlin as vLLM does
  // (server_args.py: moe runner "triton_kernel" for gpt-oss when the
  // package imports; mxfp4.py, Mxfp4MoEMethod): no table measures that path
  // there, and its one published run (gpt-oss-20b, one A100, v0.5.4.post2)
  // took 18x the time kvbill gives (docs/engine.md, known misses).
  const bool sglang_ampere_mxfp4 = profile.engine == "sglang" && expert_run.runs() &&
                                   expert_run.matrix_row == "mxfp4" &&
                                   (gpu.architecture == "ampere" || gpu.architecture == "ada");
  if (sglang_ampere_mxfp4) {
    expert_run.cell.kernel =
        "OpenAI triton_kernels MoE (SGLang's; FP4 unpacked in software below Hopper)";
  }
  const FormatRun other_run = HowGpuRuns(gpu, FormatRole::kWeights, other_fmt);
  const FormatRun kv_run = HowGpuRuns(gpu, FormatRole::kKvCache, kv_format);
  const bool has_experts = model.moe.layers > 0 && model.moe.experts > 0;
  for (const FormatRun* run : {&std::as_const(dense_run), &other_run, &kv_run}) {
    if (!run->runs()) return Error(run->Describe());
  }
  if (has_experts && !expert_run.runs()) return Error(expert_run.Describe());
  const bool checkpoint_fp8 = weight_format == "auto" || options.fp8_checkpoint;
  const double fp4_over_fp8 = gpu.fp4_flops_per_s > 0 && gpu.fp8_flops_per_s > 0
                                  ? gpu.fp4_flops_per_s / gpu.fp8_flops_per_s
                                  : 1.0;
  const WeightOnlyRates weight_only{profile.params.weight_only_8bit_rate,
                                    profile.params.weight_only_4bit_rate, profile.name};
  const TimedGemm dense_gemm = GemmForFormat(*base, dense_run, dense_fmt, checkpoint_fp8,
                                             fp4_over_fp8, weight_only, "weights");
  const TimedGemm other_gemm = GemmForFormat(*base, other_run, other_fmt, checkpoint_fp8,
                                             fp4_over_fp8, weight_only, "embeddings");
  const GemmCurve& dense_curve = dense_gemm.curve;
  const GemmCurve& other_curve = other_gemm.curve;
  auto describe = [&](const FormatRun& run, const FormatUse& use) {
    m->formats_.push_back(use);
    if (run.cell.computed != "bf16" || run.format != "bf16") {
      const std::string part = use.part == "weights"      ? "dense layers: "
                               : use.part == "experts"    ? "routed experts: "
                               : use.part == "embeddings" ? "embeddings and lm_head: "
                                                          : "";
      Note(&m->notes_, part + run.Describe(false) + "; timing " + use.timing);
    }
  };
  describe(dense_run, dense_gemm.use);
  if (other_run.format != dense_run.format) describe(other_run, other_gemm.use);

  // GEMMs of the attention and mixer layers, from their shapes.
  int attention_layers = 0, linear_layers = 0, mla_layers = 0, compressed_layers = 0;
  for (const LayerShape& l : model.layers) {
    if (l.HoldsState()) {
      ++linear_layers;
      continue;
    }
    if (!l.KeepsPerTokenKv()) continue;  // no-op layers
    ++attention_layers;
    const double hq = static_cast<double>(l.query_heads) / tp;
    if (l.IsCompressed()) {
      // DeepSeek-V4: its projections below; its attention reads and FLOPs
      // are the roofline's (window, top-k and compressed latents).
      ++compressed_layers;
      m->heads_dims_ += hq * static_cast<double>(l.qk_head_dim);
      continue;
    }
    const double kv = std::max(1.0, static_cast<double>(l.kv_heads) / tp);
    if (l.IsLatent()) {
      ++mla_layers;
      m->mla_heads_ += hq;
      m->mla_qk_ = static_cast<double>(l.qk_head_dim);
      m->mla_v_ = static_cast<double>(l.v_head_dim);
      m->mla_topk_ = l.sparse_topk;
      m->indexer_flops_per_token_ +=
          2.0 * static_cast<double>(l.indexer_heads) * static_cast<double>(l.indexer_dim);
      m->heads_dims_ += hq * static_cast<double>(l.latent_dim);
      continue;
    }
    const double dqk = static_cast<double>(l.qk_head_dim), dv = static_cast<double>(l.v_head_dim);
    const double in = l.input_dim > 0 ? static_cast<double>(l.input_dim) : hidden;
    m->heads_dims_ += hq * dqk;
    if (l.query_rank > 0) {
      // Step 3: hidden into the query rank, K and V on every GPU whole, then
      // the rank into this GPU's heads.
      const double rank = static_cast<double>(l.query_rank);
      m->gemms_.push_back(
          Gemm{rank + static_cast<double>(l.kv_heads) * (dqk + dv), hidden, 1, dense_curve});
      m->gemms_.push_back(Gemm{hq * dqk, rank, 1, dense_curve});
    } else {
      m->gemms_.push_back(Gemm{hq * dqk + kv * (dqk + dv), in, 1, dense_curve});
    }
    m->gemms_.push_back(Gemm{hidden, hq * dv, 1, dense_curve});
  }
  const ParamCounts& p = model.params;
  // Attention parameters a layer that every GPU runs whole (vLLM's
  // ReplicatedLinear: MLA's q_a_proj and kv_a_proj_with_mqa, DeepSeek-V4's
  // fused down projection and compressors), in MLA or compressed layers.
  double whole_attention = 0;
  if (mla_layers + compressed_layers > 0) {
    for (const WeightGroup& w : model.weights) {
      // Matrices by shape: DeepSeek-V4's compressors are kept unquantized
      // (not `linear`) but are matmuls all the same; norms and biases are
      // vectors.
      const bool matrix = w.rows > 1 && w.cols > 1;
      if (w.role == ParamRole::kAttention && matrix && HeldWholeOnEveryGpu(w)) {
        whole_attention += static_cast<double>(w.Params());
      }
    }
    whole_attention /= mla_layers + compressed_layers;
  }
  if (tp > 1 && whole_attention > 0) {
    m->gemms_.push_back(Gemm{std::max(1.0, whole_attention / hidden), hidden,
                             static_cast<double>(mla_layers + compressed_layers), dense_curve});
  }
  const double split_share = tp > 1 ? whole_attention : 0;  // priced whole above
  if (mla_layers > 0) {
    // MLA's chain of low-rank projections, as one projection into the
    // attention's parameter count less the output projection (and less
    // the down projections each GPU runs whole, above).
    const double per_layer = static_cast<double>(p.attention) / mla_layers;
    const double out = m->mla_heads_ / mla_layers * tp * m->mla_v_ * hidden;
    m->gemms_.push_back(Gemm{std::max(1.0, (per_layer - out - split_share) / hidden / tp), hidden,
                             static_cast<double>(mla_layers), dense_curve});
    m->gemms_.push_back(Gemm{hidden, std::max(1.0, out / hidden / tp),
                             static_cast<double>(mla_layers), dense_curve});
    m->mla_ = true;
  }
  if (compressed_layers > 0) {
    // DeepSeek-V4's chain of low-rank projections (q latent, the shared
    // latent, the grouped output, compressors, indexer), as one projection
    // of the attention's parameter count a layer.
    const double per_layer =
        (static_cast<double>(p.attention) / compressed_layers - split_share) / tp;
    m->gemms_.push_back(Gemm{std::max(1.0, per_layer / hidden), hidden,
                             static_cast<double>(compressed_layers), dense_curve});
    const std::string how =
        "compressed sparse attention (DeepSeek-V4): no kernel measurements; timed from its bytes "
        "(window, top-k and compressed latents, indexer keys) and FLOPs at the dense attention "
        "kernels' fitted rates";
    m->notes_.push_back(how);
    m->assumed_collectives_.push_back(how);
  }
  // Merge equal shapes: one entry per shape with its layer count.
  std::vector<Gemm> merged;
  for (const Gemm& g : m->gemms_) {
    auto it = std::find_if(merged.begin(), merged.end(),
                           [&](const Gemm& x) { return x.n == g.n && x.k == g.k; });
    if (it == merged.end()) {
      merged.push_back(g);
    } else {
      it->count += g.count;
    }
  }
  m->gemms_ = std::move(merged);
  if (linear_layers > 0 && p.linear_mixers > 0) {
    const double per_layer = static_cast<double>(p.linear_mixers) / linear_layers / tp;
    m->gemms_.push_back(
        Gemm{0.75 * per_layer / hidden, hidden, static_cast<double>(linear_layers), dense_curve});
    m->gemms_.push_back(
        Gemm{hidden, 0.25 * per_layer / hidden, static_cast<double>(linear_layers), dense_curve});
    m->notes_.push_back(
        "linear-state layers: no kernel table; their scan is timed as state traffic at the decode "
        "attention rate and 4 FLOPs per state element per token at the prefill rate, times the "
        "profile's recurrent_state_factor");
  }
  m->linear_layers_ = linear_layers;
  m->state_bytes_ = static_cast<double>(StateBytesPerSequence(model, options.tensor_parallel)) /
                    std::max(1, linear_layers);
  for (const LayerShape& l : model.layers) {
    if (l.HoldsState()) m->state_elements_ += static_cast<double>(l.StateElements()) / tp;
  }
  m->state_elements_ /= std::max(1, linear_layers);
  // Dense MLPs (gated: gate and up in one GEMM, then down).
  const std::int64_t moe_layers = model.moe.layers;
  // A layer has one MLP or one MoE, unless a layer has two MLPs
  // (LongCat-Flash; dense_mlps counts the blocks the model builds).
  const double dense_layers = std::max<double>(
      {1, static_cast<double>(model.DecoderLayers()) - static_cast<double>(moe_layers),
       static_cast<double>(model.dense_mlps)});
  auto add_mlp = [&](double params_per_layer, double count, const GemmCurve& curve) {
    if (params_per_layer <= 0 || count <= 0) return;
    const double inter = params_per_layer / (3 * hidden) / tp;
    m->gemms_.push_back(Gemm{2 * inter, hidden, count, curve});
    m->gemms_.push_back(Gemm{hidden, inter, count, curve});
  };
  add_mlp(static_cast<double>(p.dense_mlp) / dense_layers, p.dense_mlp > 0 ? dense_layers : 0,
          dense_curve);
  if (moe_layers > 0) {
    add_mlp(static_cast<double>(p.shared_experts) / static_cast<double>(moe_layers),
            static_cast<double>(moe_layers), dense_curve);
    if (p.routers > 0) {
      m->gemms_.push_back(Gemm{static_cast<double>(model.moe.experts), hidden,
                               static_cast<double>(moe_layers), other_curve});
    }
  }
  // Weights a pass applies again (Zamba2's shared blocks, Ouro's loops):
  // the attention entries price their own projections at every use; the
  // rest (MLPs, a block's other projections) is one more GEMM of the
  // reapplied parameters.
  const double again =
      static_cast<double>(model.ReappliedParams() - model.ReappliedParams(/*attention_only=*/true));
  if (again > 0) {
    m->gemms_.push_back(Gemm{std::max(1.0, again / hidden / tp), hidden, 1, dense_curve});
    m->notes_.push_back(
        "weights applied more than once a forward pass (shared blocks or loops over the layers): "
        "their reapplied MLP and projection parameters are priced as one GEMM of that size, "
        "beside the once-each layers");
  }
  const double vocab = static_cast<double>(model.vocab_size);
  m->head_ = Gemm{std::max(1.0, vocab / tp), hidden, 1, other_curve};
  m->small_kernels_s_ = SmallKernelCount(model) * base->gemm.at("bf16").t0_s;
  // Launches outside CUDA graphs: a kernel whose table was timed eagerly
  // adds what those rows measured beyond its graph-timed fixed time.
  for (const Gemm& g : m->gemms_) m->eager_gemm_s_ += g.count * g.curve.eager_extra_s;
  m->eager_gemm_s_ += m->head_.curve.eager_extra_s;
  if (m->eager_gemm_s_ > 0) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "GEMMs outside CUDA graphs: %.1f ms of launches an iteration beyond their "
                  "graph-timed fixed time (their table's rows were timed eagerly)",
                  1e3 * m->eager_gemm_s_);
    Note(&m->notes_, buf);
  }

  // Routed experts: one fused-MoE call per MoE layer. With expert
  // parallelism a GPU holds whole experts, 1/ep of them; the busiest GPU
  // holds the most popular expert and every ep-th after it in popularity.
  const int ep = std::max(1, options.expert_parallel);
  if (ep > 1 && !(moe_layers > 0 && model.moe.experts > 0)) {
    return Error("expert parallelism needs routed experts; model \"" + model.name + "\" has none");
  }
  if (ep > 1 && ep != options.tensor_parallel) {
    return Error("expert_parallel must be 1 or the tensor-parallel degree (" +
                 std::to_string(options.tensor_parallel) + "), got " + std::to_string(ep));
  }
  if (const std::string problem = ExpertParallelProblem(model, ep); !problem.empty()) {
    return Error(problem);
  }
  m->expert_parallel_ = ep;
  if (moe_layers > 0 && model.moe.experts > 0 && model.moe.experts_per_token > 0) {
    const int experts = static_cast<int>(model.moe.experts);
    auto moe = MoeForFormat(*base, expert_run, expert_fmt, fp4_over_fp8);
    if (!moe) return moe.error().Within(gpu.id);
    m->moe_curve_ = moe->curve;
    m->moe_fp8_rate_ = moe->fp8_rate && m->spec_.fp8_flops_per_s > m->spec_.bf16_flops_per_s;
    // The kernel tables measure some models' own expert shapes (the pooled
    // curve misses single shapes by up to 1.5x, docs/engine.md#fused-moe).
    // Split over the tensor-parallel GPUs, such a model's experts take the
    // measured times of its shape at that degree. Expert parallelism keeps
    // them whole, as the rows at tensor parallel 1 run them, each expert
    // taking as many rows as there: the curve is corrected by its own error
    // on those rows.
    FormatUse use = moe->use;
    const MoeShapeTable* table =
        moe->shape_table.empty()
            ? nullptr
            : base->MoeTableFor(moe->shape_table, model.hidden_size, model.moe.params_per_expert,
                                model.moe.experts_per_token, model.moe.experts,
                                ep == 1 ? options.tensor_parallel : 1, profile.moe_routing_alpha);
    if (table != nullptr && ep == 1) {
      m->moe_table_ = *table;
      use.timing += "; this model's expert shape measured at tensor parallel " +
                    std::to_string(options.tensor_parallel) + " (interpolated by tokens)";
    } else if (table != nullptr) {
      m->moe_whole_table_ = *table;
      use.timing +=
          "; the curve scaled by the table's time over its own for this model's whole "
          "experts at the same tokens (assumed: the whole-expert kernel's efficiency carries "
          "over to a GPU's share of them)";
    }
    if (sglang_ampere_mxfp4) {
      use.timing +=
          "; SGLang's triton_kernels path below Hopper is not the timed kernel, and its one "
          "published run (gpt-oss-20b, one A100) took 18x the time kvbill gives it";
    }
    describe(expert_run, use);
    m->moe_layers_ = static_cast<int>(moe_layers);
    const double per_expert_bytes =
        static_cast<double>(weights->routed_experts) / static_cast<double>(moe_layers * experts);
    // Tensor parallelism splits every expert; expert parallelism keeps them whole.
    const double split = ep > 1 ? 1.0 : tp;
    m->expert_bytes_ = per_expert_bytes / split;
    m->expert_flops_per_pair_ = 2.0 * static_cast<double>(model.moe.params_per_expert) / split;
    const std::vector<double> q = RoutingProbabilities(
        experts, static_cast<int>(model.moe.experts_per_token), profile.moe_routing_alpha);
    for (std::size_t i = 0; i < q.size(); i += static_cast<std::size_t>(ep)) {
      m->moe_q_.push_back(q[i]);
    }
    if (ep > 1)
      m->moe_skew_ =
          ExpectedBusiestShare(q, ep) / std::accumulate(m->moe_q_.begin(), m->moe_q_.end(), 0.0);
    for (double qi : m->moe_q_) {
      m->moe_log_miss_.push_back(qi >= 1 ? -std::numeric_limits<double>::infinity()
                                         : std::log1p(-qi));
    }
    // vLLM v0.11 without a data-parallel rank has every GPU route every
    // token (the attention's all-reduce leaves each GPU all of them) and
    // masks the pairs of other GPUs' experts inside its kernel: expert_map
    // turns their experts into -1, whose tiles write zeros, and the
    // activation and top-k sum run over all T x top-k rows. So the per-row
    // traffic is the whole batch's on every GPU; only FLOPs and weights are
    // split. An all-to-all dispatch sends a GPU its own pairs only.
    // SGLang's expert-parallel MoE (EPMoE, ep_moe/layer.py) first gathers a
    // GPU's own rows: not checked for v0.5, so its rows stay its own.
    if (ep > 1 && !options.expert_all_to_all && profile.engine != "sglang") {
      m->masked_rows_per_token_ = static_cast<double>(model.moe.experts_per_token);
    }
    if (ep > 1) {
      char share[96];
      std::snprintf(
          share, sizeof share, "%.1f%% of the routed pairs (an even share is %.1f%%)",
          100 * ExpectedBusiestShare(q, ep) / static_cast<double>(model.moe.experts_per_token),
          100.0 / ep);
      Note(&m->notes_, "expert parallelism over " + std::to_string(ep) +
                           " GPUs: " + std::to_string(m->moe_q_.size()) +
                           " whole experts per GPU, placed by expert id; the busiest GPU, which "
                           "sets the layer's time, takes an expected " +
                           share +
                           (m->masked_rows_per_token_ > 0
                                ? "; each GPU's kernel still passes over every token's rows, "
                                  "masking other GPUs' experts"
                                : ""));
    }
  }

  // All-reduce after the mixer and after the MLP of every layer; with
  // expert parallelism over all-to-all, the MoE layers' all-reduce becomes
  // dispatch and combine all-to-alls of the GPU's share of the tokens and an
  // all-gather of the layer's output.
  if (options.tensor_parallel > 1) {
    m->all_reduces_ = 2 * m->layers_;
    bool measured = false;
    std::string how;
    m->all_reduce_fallback_ =
        CollectiveFor("all_reduce", options.tensor_parallel, gpu, own, &measured, &how);
    m->all_reduce_ = &m->all_reduce_fallback_;
    // A collective the tables do not measure is modelled, not calibrated:
    // a note, and the timing_assumed warning (assumed_collectives).
    auto assumed = [&] {
      if (measured) return;
      Note(&m->notes_, how);
      if (own != nullptr) m->assumed_collectives_.push_back(how);
    };
    assumed();
    if (ep > 1 && options.expert_all_to_all && m->moe_layers_ > 0) {
      m->all_reduces_ -= m->moe_layers_;
      m->all_to_all_ = CollectiveFor("all_to_all", ep, gpu, own, &measured, &how);
      assumed();
      m->all_gather_ = CollectiveFor("all_gather", ep, gpu, own, &measured, &how);
      assumed();
      m->experts_per_token_ = static_cast<double>(model.moe.experts_per_token);
    }
  }

  // Attention curves.
  m->attn_layers_ = attention_layers;
  // KV formats attention reads in FP8 use the fp8 KV tables; formats it
  // dequantises to 16 bits use the bf16 ones; both at the stored bytes.
  const std::string kv_key = kv_run.cell.computed == "fp8" ? "fp8" : "bf16";
  {
    FormatUse use{"kv_cache", kv_format.name, kv_run.ComputedLabel(), kv_run.cell.kernel, ""};
    const bool table = base->decode_attention.count(kv_key) > 0 &&
                       (kv_key == "bf16" || kv_format.name == "fp8-e4m3" ||
                        kv_format.name == "fp8-per-token-head");
    const bool compressed_kv = compressed_layers > 0 && compressed_layers == attention_layers;
    if (compressed_kv) {
      // DeepSeek-V4: every layer compressed; its fp8_ds_mla cache is read
      // by FlashMLA's sparse kernels, which no table measures.
      use.kernel = "FlashMLA sparse (fp8_ds_mla)";
      use.computed = "FP8 cache, dequantised in the kernel";
      use.timing =
          "assumed: timed from the compressed attention's bytes and FLOPs (no kernel table)";
    } else if (m->mla_) {
      // A latent cache runs on the engine's MLA backend, not the matrix's
      // per-head kernel: on vLLM the one its block rule names (FlashMLA on
      // Hopper, FlashInfer or CUTLASS MLA on Blackwell), else Triton MLA.
      if (profile.engine == "vllm") {
        const std::string backend = VllmKvBlockRule(model, gpu).backend;
        use.kernel = backend.empty() ? "Triton MLA" : backend;
      } else {
        use.kernel = (profile.engine == "sglang" ? std::string("SGLang") : profile.engine) +
                     "'s MLA attention backend";
      }
      // 16-bit KV only: the tables measured bf16 (fp32 KV is twice the bytes
      // through kernels nobody timed).
      use.timing = kv_format.element_bits == 16
                       ? "measured: the MLA attention tables (bf16 KV)"
                       : "assumed: the bf16 MLA attention curves at " + kv_format.name +
                             "'s byte count (no table of this format)";
    } else if (kv_key == "bf16" && kv_format.element_bits == 16) {
      use.timing = base->gpu == gpu.id ? "measured: attention bf16 KV tables"
                                       : "measured on " + base->gpu + ": attention bf16 KV tables";
    } else if (table && kv_key == "fp8") {
      use.timing = base->gpu == gpu.id ? "measured: attention fp8 KV tables"
                                       : "measured on " + base->gpu + ": attention fp8 KV tables";
    } else {
      const std::string have = base->decode_attention.count(kv_key) > 0 ? kv_key : "bf16";
      use.timing = "assumed: the " + have + " KV attention curves at " + kv_format.name +
                   "'s byte count (no table of this format)";
    }
    if (compressed_kv) {
      m->formats_.push_back(use);
      Note(&m->notes_, kv_format.name + " KV cache on " + gpu.id +
                           ": DeepSeek-V4's fp8_ds_mla entries (584 bytes a latent), read by "
                           "FlashMLA's sparse kernels; timing " +
                           use.timing);
    } else {
      // The note names the kernel that runs (a latent cache's MLA backend,
      // not the per-head kernel of the format matrix).
      FormatRun run = kv_run;
      run.cell.kernel = use.kernel;
      describe(run, use);
    }
  }
  if (m->mla_) {
    if (base->mla_decode.coef.empty() || base->mla_prefill.coef.empty()) {
      return Error("no MLA attention curves for " + gpu.id);
    }
    m->decode_ = base->mla_decode;
    m->prefill_ = base->mla_prefill;
    // The MLA tables were timed eagerly; inside CUDA graphs the fixed time
    // per call is the regular attention kernels'.
    m->decode_.coef[0] = base->decode_attention.at("bf16").coef[0];
    const LinearCurve* pre = base->PrefillFor("bf16", 128);
    if (pre != nullptr) m->prefill_.coef[0] = pre->coef[0];
    if (kv_format.element_bits != 16) {
      Note(&m->notes_, "MLA with " + kv_format.name +
                           " KV: timed with the bf16 MLA curves at its own byte count");
    }
  } else if (attention_layers > 0) {
    auto dec = base->decode_attention.find(kv_key);
    if (dec == base->decode_attention.end()) dec = base->decode_attention.find("bf16");
    m->decode_ = dec->second;
    std::int64_t head_dim = 128;
    for (const LayerShape& l : model.layers) {
      if (l.KeepsPerTokenKv()) {
        head_dim = l.qk_head_dim;
        break;
      }
    }
    const LinearCurve* pre = base->PrefillFor(kv_key, head_dim);
    if (pre == nullptr) pre = base->PrefillFor("bf16", head_dim);
    if (pre == nullptr) return Error("no prefill attention curve for " + gpu.id);
    m->prefill_ = *pre;
    // A head size the tables do not hold is timed with the nearest one's
    // curve: an assumption, said where the KV cache's timing is.
    std::int64_t measured_dim = head_dim;
    for (const auto& [dtype, by_dim] : base->prefill_attention) {
      for (const auto& [d, curve] : by_dim) {
        if (&curve == pre) measured_dim = d;
      }
    }
    if (measured_dim != head_dim) {
      for (FormatUse& use : m->formats_) {
        if (use.part != "kv_cache" || use.timing.starts_with("assumed: ")) continue;
        use.timing = "assumed: prefill attention of " + std::to_string(head_dim) +
                     "-element heads timed with the " + std::to_string(measured_dim) +
                     "-element heads' curve (no table of this head size); decode " + use.timing;
      }
    }
  } else {
    m->decode_ = base->decode_attention.at("bf16");
    const LinearCurve* pre = base->PrefillFor("bf16", 128);
    if (pre != nullptr) m->prefill_ = *pre;
  }
  m->decode_.coef.resize(4, 0);
  m->prefill_.coef.resize(4, 0);
  // vLLM v0.11 picks its attention backend in CudaPlatform.get_attn_backend_cls
  // (vllm/platforms/cuda.py): on compute capability 8.x with attention sinks
  // (gpt-oss) it returns TRITON_ATTN, as FlashAttention 2 has no sinks (so
  // on the RTX Blackwell cards, 12.0, which have no FlashAttention 3 either);
  // Hopper runs FlashAttention 3 (sinks supported), Blackwell FlashInfer. The
  // Triton kernel (kernel_unified_attention_2d,
  // vllm/attention/ops/triton_unified_attention.py) gives each program
  // BLOCK_M = 16 rows (more when a KV head has over 16 query heads): the
  // query heads of one KV head for BLOCK_Q = BLOCK_M / (query heads per KV
  // head) tokens, and streams that KV head's tiles for them alone. A prompt
  // chunk so reads its attended K/V once per BLOCK_Q tokens (gpt-oss: 64
  // query and 8 KV heads, BLOCK_Q = 2) where FlashAttention's 128-row tiles
  // read it once per 128; sliding-window layers read only their window
  // (tiles outside it are skipped since vLLM PR #24390, before v0.11).
  if (profile.engine == "vllm" && !m->mla_ &&
      (gpu.architecture == "ampere" || gpu.architecture == "ada" ||
       gpu.architecture == "blackwell-rtx")) {
    for (const LayerShape& l : model.layers) {
      if (!l.KeepsPerTokenKv() || !l.attention_sinks) continue;
      const double hq = static_cast<double>(l.query_heads) / tp;
      const double kv = std::max(1.0, static_cast<double>(l.kv_heads) / tp);
      const double per_kv = std::max(1.0, std::round(hq / kv));
      m->triton_block_q_ = per_kv <= 16 ? std::floor(16 / per_kv) : 1;
      Note(&m->notes_,
           "attention sinks on " + gpu.id +
               ": vLLM runs its Triton attention, whose prefill reads the attended K/V once "
               "per " +
               std::to_string(static_cast<int>(m->triton_block_q_)) +
               " query tokens; timed as that traffic at the HBM bandwidth when it exceeds the "
               "FlashAttention FLOP time (the kernel tables have no Triton attention rows)");
      break;
    }
  }
  m->kv_write_per_token_ = m->r_.KvWriteBytesPerToken();

  // Iterations price their token count's GEMMs and their sequences'
  // lm_head (two powers per GEMM each): remembered per count, the same
  // values, so the same results.
  const Tokens cap = std::max<Tokens>(1, options.max_batch_tokens);
  m->dense_by_tokens_.Reset(static_cast<std::size_t>(cap) + 1);
  m->head_by_seqs_.Reset(static_cast<std::size_t>(std::max(1, options.max_batch_seqs)) + 1);
  return std::shared_ptr<const OperatorCostModel>(std::move(m));
}

std::vector<std::pair<std::string, Seconds>> OperatorCostModel::DenseParts(Tokens tokens) const {
  std::vector<std::pair<std::string, Seconds>> parts = {{"gemm", 0},       {"moe", 0},
                                                        {"all_reduce", 0}, {"elementwise", 0},
                                                        {"all_to_all", 0}, {"small_kernels", 0}};
  if (tokens <= 0) return parts;
  parts[5].second = small_kernels_s_;
  const double t = static_cast<double>(tokens);
  for (const Gemm& g : gemms_) parts[0].second += g.count * g.curve.Seconds(spec_, t, g.n, g.k);
  if (moe_layers_ > 0 && moe_table_) {
    parts[1].second = moe_layers_ * moe_table_->Seconds(t);
  } else if (moe_layers_ > 0) {
    MoeLoad load;
    constexpr double kTile = 64;
    const double routed = t * moe_skew_;  // the busiest GPU's tokens' worth of pairs
    for (std::size_t i = 0; i < moe_q_.size(); ++i) {
      const double touched = 1.0 - std::exp(routed * moe_log_miss_[i]);
      const double mean = routed * moe_q_[i];
      load.touched_experts += touched;
      load.pairs += mean;
      if (touched > 0) load.padded_pairs += touched * kTile * std::ceil(mean / touched / kTile);
    }
    load.masked_pairs = std::max(0.0, t * masked_rows_per_token_ - load.pairs);
    load.expert_bytes = expert_bytes_;
    load.expert_flops_per_pair = expert_flops_per_pair_;
    load.hidden = hidden_;
    parts[1].second = moe_layers_ * moe_curve_.Seconds(MoeFeatures(spec_, load, moe_fp8_rate_));
    if (moe_whole_table_) {
      const MoeShapeTable& w = *moe_whole_table_;
      MoeLoad whole = ExpectedMoeLoad(t, w.experts, w.top_k, w.alpha, w.experts);
      whole.expert_bytes = expert_bytes_;
      whole.expert_flops_per_pair = expert_flops_per_pair_;
      whole.hidden = hidden_;
      const double curve = moe_curve_.Seconds(MoeFeatures(spec_, whole, moe_fp8_rate_));
      if (curve > 0) parts[1].second *= moe_whole_table_->Seconds(t) / curve;
    }
  }
  if (all_reduce_ != nullptr && all_reduces_ > 0) {
    parts[2].second = all_reduces_ * all_reduce_->Seconds(t * hidden_ * 2);
  }
  parts[3].second =
      profile_.params.elementwise_passes * t * layers_ * hidden_ * 2 / spec_.hbm_bytes_per_s;
  if (!all_to_all_.points.empty() && moe_layers_ > 0) {
    // Per MoE layer: dispatch and combine the (token, expert) pairs of this
    // GPU's 1/ep of the tokens, then gather every GPU's outputs.
    const double share = std::ceil(t / expert_parallel_);
    const double sent = share * experts_per_token_ * hidden_ * 2;
    parts[4].second =
        moe_layers_ * (2 * all_to_all_.Seconds(sent) + all_gather_.Seconds(t * hidden_ * 2));
  }
  return parts;
}

std::vector<std::pair<std::string, Seconds>> OperatorCostModel::DecodeParts(std::int64_t batch,
                                                                            Tokens context) const {
  if (batch <= 0) return DenseParts(0);
  const std::vector<ScheduledWork> work(static_cast<std::size_t>(batch),
                                        ScheduledWork{context, 1, false, false});
  return IterationParts(work);
}

std::vector<std::pair<std::string, Seconds>> OperatorCostModel::IterationParts(
    std::span<const ScheduledWork> work) const {
  std::vector<long double> own(work.size());
  Tokens tokens = 0;
  bool chunks = false;
  const long double gpu = GpuSeconds(work, own, &tokens, &chunks);
  std::int64_t logits = 0;
  for (const ScheduledWork& w : work) logits += w.verify ? w.tokens : 1;
  std::vector<std::pair<std::string, Seconds>> parts = DenseParts(tokens);
  const Seconds head = HeadSeconds(logits);
  long double dense = 0;
  for (const auto& part : parts) dense += part.second;
  parts.emplace_back("lm_head", head);
  parts.emplace_back("attention", static_cast<Seconds>(gpu - dense - head));
  const ProfileParameters& p = profile_.params;
  const auto count = static_cast<std::int64_t>(work.size());
  const auto seqs = static_cast<double>(count);
  parts.emplace_back("cpu", p.cpu_iteration_s + p.cpu_per_sequence_s * seqs);
  parts.emplace_back("eager_launch", Graphed(count, tokens, chunks) ? 0.0 : EagerLaunchSeconds());
  parts.emplace_back("output", p.output_per_sequence_s * seqs);
  return parts;
}

Seconds OperatorCostModel::ComputeDense(Tokens tokens) const {
  Seconds s = 0;
  for (const auto& part : DenseParts(tokens)) s += part.second;
  return s;
}

Seconds OperatorCostModel::DenseSeconds(Tokens tokens) const {
  if (tokens >= 0 && static_cast<std::size_t>(tokens) < dense_by_tokens_.size()) {
    return dense_by_tokens_.Get(static_cast<std::size_t>(tokens),
                                [&] { return ComputeDense(tokens); });
  }
  return ComputeDense(tokens);
}

Seconds OperatorCostModel::HeadSeconds(std::int64_t seqs) const {
  if (seqs >= 0 && static_cast<std::size_t>(seqs) < head_by_seqs_.size()) {
    return head_by_seqs_.Get(static_cast<std::size_t>(seqs), [&] { return ComputeHead(seqs); });
  }
  return ComputeHead(seqs);
}

Seconds OperatorCostModel::ComputeHead(std::int64_t seqs) const {
  if (seqs <= 0) return 0;
  return head_.curve.Seconds(spec_, static_cast<double>(seqs), head_.n, head_.k);
}

long double OperatorCostModel::DecodeOwn(Tokens c) const {
  const auto& k = decode_.coef;
  long double own = attn_layers_ * k[1] + k[2] * heads_dims_ +
                    k[3] * static_cast<long double>(r_.KvReadBytes(c)) / spec_.hbm_bytes_per_s;
  if (linear_layers_ > 0) {
    own += linear_layers_ * profile_.params.recurrent_state_factor *
           (k[1] + k[3] * 2 * state_bytes_ / spec_.hbm_bytes_per_s);
  }
  return own;
}

long double OperatorCostModel::PrefillOwn(Tokens start, Tokens n, bool verify) const {
  const auto& k = prefill_.coef;
  const double nn = static_cast<double>(n);
  double flops = 0;
  double query = heads_dims_;
  if (mla_) {
    // Token j of the chunk attends start + j + 1 tokens, at most mla_topk_
    // of them under sparse attention; the indexers score them all.
    const double s = static_cast<double>(start);
    const double pairs = nn * s + nn * (nn + 1) / 2;
    double attended = pairs;
    if (mla_topk_ > 0) {
      const double cap = static_cast<double>(mla_topk_);
      const double below = std::clamp(cap - s, 0.0, nn);  // tokens before the cap
      attended = below * s + below * (below + 1) / 2 + (nn - below) * cap;
    }
    flops = 2 * mla_heads_ * (mla_qk_ + mla_v_) * attended + indexer_flops_per_token_ * pairs;
    query = mla_heads_ * mla_qk_;
  } else {
    flops = r_.PrefillAttentionFlops(start, n);
  }
  long double attend = k[2] * flops / spec_.bf16_flops_per_s;
  if (triton_block_q_ > 0) {
    // The Triton kernel streams every attended key, cached ones included,
    // once per query block: that traffic or the FLOPs bound it.
    const double stream = r_.PrefillAttendedKvBytes(start, n) / triton_block_q_;
    attend = std::max<long double>(attend, stream / spec_.hbm_bytes_per_s);
  }
  long double own =
      k[1] * nn * query / 1e6 + attend + k[3] * nn * kv_write_per_token_ / spec_.hbm_bytes_per_s;
  if (start > 0 && triton_block_q_ == 0) {
    own +=
        decode_.coef[3] * static_cast<long double>(r_.KvReadBytes(start)) / spec_.hbm_bytes_per_s;
  }
  if (linear_layers_ > 0) {
    // vLLM's and SGLang's recurrent kernels store the state after each
    // token of a verification, in its own slot.
    const double states = verify ? 1 + nn : 2;
    own += linear_layers_ * profile_.params.recurrent_state_factor *
           (k[2] * 4 * nn * state_elements_ / spec_.bf16_flops_per_s +
            decode_.coef[3] * states * state_bytes_ / spec_.hbm_bytes_per_s);
  }
  return own;
}

bool OperatorCostModel::Graphed(std::int64_t seqs, Tokens tokens, bool chunks) const {
  // vLLM captures batches by their tokens; SGLang decode and verification
  // batches by their sequences (a verification graph holds its draft tokens).
  return graph_prompt_chunks_ ? tokens <= profile_.cuda_graph_max_tokens
                              : !chunks && seqs <= profile_.cuda_graph_max_tokens;
}

Seconds OperatorCostModel::Combine(long double gpu, std::int64_t seqs, Tokens tokens, bool chunks,
                                   long double tail) const {
  const ProfileParameters& p = profile_.params;
  const long double cpu = p.cpu_iteration_s + p.cpu_per_sequence_s * static_cast<double>(seqs);
  const long double eager = Graphed(seqs, tokens, chunks) ? 0.0 : EagerLaunchSeconds();
  const long double output = p.output_per_sequence_s * static_cast<double>(seqs);
  if (cpu_waits_for_sampling_) {
    // The next iteration's CPU work starts when this one's tokens are
    // sampled: it overlaps the draft after the sampling, not the GPU time
    // before it.
    return static_cast<Seconds>(std::max(std::max(gpu, eager) + std::max(tail, cpu), output));
  }
  if (async_) return static_cast<Seconds>(std::max({gpu, cpu, eager, output}) + tail);
  return static_cast<Seconds>(std::max(cpu + std::max(gpu, eager), output) + tail);
}

Seconds OperatorCostModel::IterationSeconds(std::span<const ScheduledWork> work,
                                            std::span<long double> own_s) const {
  return IterationSecondsWithTail(work, own_s, 0);
}

Seconds OperatorCostModel::IterationSecondsWithTail(std::span<const ScheduledWork> work,
                                                    std::span<long double> own_s,
                                                    long double tail) const {
  Tokens tokens = 0;
  bool chunks = false;
  const long double gpu = GpuSeconds(work, own_s, &tokens, &chunks);
  return Combine(gpu, static_cast<std::int64_t>(work.size()), tokens, chunks, tail);
}

long double OperatorCostModel::GpuSeconds(std::span<const ScheduledWork> work,
                                          std::span<long double> own_s, Tokens* tokens_out,
                                          bool* chunks_out) const {
  Tokens tokens = 0;
  std::int64_t logits = 0;  // rows of the lm_head: one per sequence, k + 1 per verification
  bool prefill = false, decode = false, chunks = false;
  long double own_total = 0;
  for (std::size_t i = 0; i < work.size(); ++i) {
    const ScheduledWork& w = work[i];
    tokens += w.tokens;
    logits += w.verify ? w.tokens : 1;
    chunks = chunks || w.prefill;
    if (w.prefill || w.verify) {
      prefill = true;
      own_s[i] = PrefillOwn(w.context, w.tokens, w.verify);
    } else {
      decode = true;
      own_s[i] = DecodeOwn(w.context);
    }
    own_total += own_s[i];
  }
  const long double fixed =
      attn_layers_ * (prefill ? std::max(prefill_.coef[0], decode_.coef[0]) : decode_.coef[0]);
  if (prefill && decode) {
    // One varlen kernel serves the whole mixed batch: the decodes' attention
    // runs as prefill tiles of one query row, without the decode kernel's
    // split over the KV length, so it costs more than in a decode-only
    // iteration. The prefill chunks' attention is what it would be alone.
    const long double f = profile_.params.mixed_attention_factor;
    for (std::size_t i = 0; i < work.size(); ++i) {
      if (work[i].prefill || work[i].verify) continue;
      own_total += (f - 1) * own_s[i];
      own_s[i] *= f;
    }
  }
  *tokens_out = tokens;
  *chunks_out = chunks;
  return DenseSeconds(tokens) + HeadSeconds(logits) + fixed + own_total;
}

void OperatorCostModel::DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                                       DecodeLines* out) const {
  const std::size_t batch = contexts.size();
  const Tokens b = static_cast<Tokens>(batch);
  const long double per_byte = decode_.coef[3] / spec_.hbm_bytes_per_s;
  long double g0 = DenseSeconds(b) + HeadSeconds(b) + attn_layers_ * decode_.coef[0];
  long double g1 = 0;
  Tokens len = max_steps;
  out->own0.resize(2 * batch);
  out->own1.resize(2 * batch);
  for (std::size_t i = 0; i < batch; ++i) {
    const Tokens c = contexts[i];
    const LinearPiece kp = r_.KvPiece(c);
    const long double own0 = DecodeOwn(c);
    const long double own1 = per_byte * kp.slope;
    g0 += own0;
    g1 += own1;
    len = std::min(len, kp.max_k + 1);
    out->own0[i] = out->own0[batch + i] = own0;
    out->own1[i] = out->own1[batch + i] = own1;
  }
  // t(j) = a + max(g0 + g1 j, z): a the synchronous CPU time, z what the
  // GPU time must exceed (eager launches, the API server streaming outputs;
  // with async scheduling, the CPU). Streaming is overlapped, so with a
  // synchronous CPU it bounds a + GPU time, not the GPU time alone.
  const ProfileParameters& p = profile_.params;
  const long double cpu = p.cpu_iteration_s + p.cpu_per_sequence_s * static_cast<double>(batch);
  const long double eager = Graphed(b, b, false) ? 0.0 : EagerLaunchSeconds();
  const long double output = p.output_per_sequence_s * static_cast<double>(batch);
  const bool overlapped = async_ && !cpu_waits_for_sampling_;
  const long double a = overlapped ? 0 : cpu;
  const long double z = overlapped ? std::max({cpu, eager, output}) : std::max(eager, output - cpu);
  std::array<Tokens, 3> cuts = {0, len, len};
  std::size_t pieces = 1;
  if (g1 != 0) {
    const Tokens cut = static_cast<Tokens>(std::ceil((z - g0) / g1));
    if (cut > 0 && cut < len) cuts[pieces++] = cut;
  }
  cuts[pieces] = len;
  out->lines.clear();
  for (std::size_t k = 0; k < pieces; ++k) {
    const Tokens j0 = cuts[k];
    const bool gpu_bound = g0 + g1 * static_cast<long double>(j0) >= z;
    out->lines.push_back(StepLine{j0, cuts[k + 1], a + (gpu_bound ? g0 : z), gpu_bound ? g1 : 0});
  }
  out->own0.resize(pieces * batch);
  out->own1.resize(pieces * batch);
}

Seconds OperatorCostModel::RecomputeSeconds(Tokens start, Tokens n) const {
  return static_cast<Seconds>(DenseSeconds(n) + HeadSeconds(1) + attn_layers_ * prefill_.coef[0] +
                              PrefillOwn(start, n));
}

CostModelInfo OperatorCostModel::Describe() const {
  CostModelInfo info;
  info.profile = profile_.name;
  info.calibrated = calibrated_;
  info.validation_median_error = profile_.validation_median_error;
  info.regime = DescribeRegime(gpu_id_, moe_layers_ > 0, tensor_parallel_ > 1);
  info.regimes_known = !profile_.validation_regimes.empty();
  if (const ValidationRegime* r =
          FindValidationRegime(profile_, gpu_id_, moe_layers_ > 0, tensor_parallel_ > 1)) {
    info.regime_validation = *r;
  }
  info.notes = notes_;
  info.formats = formats_;
  info.assumed_collectives = assumed_collectives_;
  info.linear_state_layers = static_cast<int>(linear_layers_);
  info.unreplayed_path = unreplayed_path_;
  return info;
}

}  // namespace kvbill
