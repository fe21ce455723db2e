#include "kvbill/cost/speculative.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "kvbill/cost/roofline_cost_model.h"
#include "kvbill/hardware/fit.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"

namespace kvbill {

const std::vector<SpeculativeMethod>& SpeculativeMethods() {
  // k, α and β: docs/engine.md, "Speculative decoding", has the sources.
  static const std::vector<SpeculativeMethod> methods = {
      {"draft_model", 5, 0.6, 0.1, false, true}, {"eagle", 3, 0.8, 0.1, true, false},
      {"eagle3", 3, 0.8, 0.1, true, false},      {"mtp", 1, 0.85, 0.1, true, false},
      {"ngram", 5, 0.3, 0.1, false, false},
  };
  return methods;
}

const char* DefaultSpeculativeMethod(const ModelShape& model) {
  return model.params.mtp > 0 ? "mtp" : "eagle3";
}

const SpeculativeMethod* FindSpeculativeMethod(std::string_view name) {
  for (const SpeculativeMethod& m : SpeculativeMethods()) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

bool IsEagleHead(std::string_view method) { return method == "eagle" || method == "eagle3"; }

bool DraftsOnGpu(std::string_view method) {
  const SpeculativeMethod* m = FindSpeculativeMethod(method);
  return m != nullptr && (m->draft_layer || m->own_model);
}

bool AsyncSchedulingByDefault(bool sglang, std::string_view method) {
  return method.empty() || (!sglang && DraftsOnGpu(method));
}

long double ExpectedTokensPerStep(std::span<const double> rates, int k) {
  long double expected = 1, all_accepted = 1;
  for (int i = 0; i < k; ++i) {
    all_accepted *= rates.size() == 1 ? rates[0] : rates[static_cast<std::size_t>(i)];
    expected += all_accepted;
  }
  return expected;
}

long long TreeDraftNodes(int d, int topk) {
  if (d <= 0) return 0;
  const long long k = std::max(1, topk);
  return k + static_cast<long long>(d - 1) * k * k;
}

long double ExpectedTokensPerTreeStep(std::span<const double> rates, double rank_decay, int d,
                                      int topk, int num_draft_tokens) {
  const int nodes = std::max(0, num_draft_tokens - 1);
  if (topk <= 1) return ExpectedTokensPerStep(rates, std::min(d, nodes));
  // A candidate: its chance of acceptance (the product of its path's rank
  // chances), its depth and the order it was drafted in (ties go to the
  // shallower, then the earlier: a node never outranks its parent).
  struct Node {
    long double value;
    int depth;
    std::size_t order;
  };
  auto better = [](const Node& a, const Node& b) {
    if (a.value != b.value) return a.value > b.value;
    if (a.depth != b.depth) return a.depth < b.depth;
    return a.order < b.order;
  };
  const long double beta = rank_decay;
  std::vector<Node> all;
  std::vector<long double> frontier = {1.0L};  // the root: the step's own token
  for (int i = 0; i < d; ++i) {
    const long double alpha = rates.size() == 1 ? rates[0] : rates[static_cast<std::size_t>(i)];
    std::vector<Node> level;
    for (long double parent : frontier) {
      long double ranked = alpha, covered = 0;  // α β^(r - 1); p(1) + ... + p(r - 1)
      for (int r = 1; r <= topk; ++r) {
        const long double p = std::min(ranked, 1 - covered);
        covered += p;
        ranked *= beta;
        level.push_back(Node{parent * p, i + 1, all.size() + level.size()});
      }
    }
    all.insert(all.end(), level.begin(), level.end());
    // The next depth expands the topk best nodes of this one.
    std::sort(level.begin(), level.end(), better);
    frontier.clear();
    for (std::size_t j = 0; j < level.size() && j < static_cast<std::size_t>(topk); ++j) {
      frontier.push_back(level[j].value);
    }
  }
  std::sort(all.begin(), all.end(), better);
  long double expected = 1;
  for (std::size_t j = 0; j < all.size() && j < static_cast<std::size_t>(nodes); ++j) {
    expected += all[j].value;
  }
  return expected;
}

namespace {

// The layer a checkpoint tensor belongs to ("model.layers.61.eh_proj": 61),
// or -1 for a tensor outside the numbered layers ("mtp.fc").
long LayerOf(const std::string& name) {
  const std::size_t at = name.find("layers.");
  if (at == std::string::npos) return -1;
  long layer = -1;
  const char* begin = name.data() + at + 7;
  const char* end = name.data() + name.size();
  const auto [stop, error] = std::from_chars(begin, end, layer);
  if (error != std::errc() || stop == end || *stop != '.') return -1;
  return layer;
}

// The checkpoint's multi-token-prediction tensors as a draft loads them, in
// the formats the checkpoint stores, each under its role inside the module
// (its eh_proj / fc projections as dense attention-side matmuls): all
// modules, or the first one alone. The modules' embedding and lm_head copies
// are left out: vLLM's proposer shares the target's.
std::vector<WeightGroup> MtpWeights(const ModelShape& model, bool first_only) {
  long first = -1;
  for (const WeightGroup& g : model.weights) {
    const long at = g.role == ParamRole::kMtp ? LayerOf(g.name) : -1;
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  std::vector<WeightGroup> out;
  for (const WeightGroup& g : model.weights) {
    if (g.role != ParamRole::kMtp) continue;
    if (g.module_role == ParamRole::kEmbedding || g.module_role == ParamRole::kLmHead) continue;
    const long at = LayerOf(g.name);
    if (first_only && at >= 0 && at != first) continue;
    out.push_back(g);
    out.back().role = g.module_role == ParamRole::kMtp ? ParamRole::kAttention : g.module_role;
  }
  return out;
}

}  // namespace

ModelShape DraftLayerShape(const ModelShape& model) {
  ModelShape d;
  d.name = model.name + " (draft layer)";
  d.source = model.source;
  d.architecture = model.architecture;
  d.model_type = model.model_type;
  d.hidden_size = model.hidden_size;
  d.vocab_size = model.vocab_size;
  d.max_position_embeddings = model.max_position_embeddings;
  d.max_model_len = model.max_model_len;
  d.dtype = model.dtype;
  d.compute_format = model.dtype;
  d.state_format = model.state_format;
  // The last layer that keeps per-token KV: the head attends as it does.
  for (const LayerShape& l : model.layers) {
    if (l.KeepsPerTokenKv()) d.layers.assign(1, l);
  }
  if (d.layers.empty()) d.layers.assign(1, LayerShape{});
  d.layers[0].index = 0;
  d.layers[0].kv_source = -1;  // the head keeps its own KV
  if (d.layers[0].IsCompressed()) {
    // DeepSeek-V4's prediction layer attends its window alone (its
    // compress_ratios entry is 0 in every release): no compressor, no indexer.
    LayerShape& w = d.layers[0];
    w.compress_ratio = 0;
    w.indexer_dim = w.indexer_heads = 0;
    w.sparse_topk = 0;
    w.recurrent_state_elements = 0;
  }
  const ParamCounts& p = model.params;
  const std::int64_t layers = std::max(1, model.DecoderLayers());
  std::int64_t attention_layers = 0;
  for (const LayerShape& l : model.layers) {
    if (l.KeepsPerTokenKv()) ++attention_layers;
  }
  if (model.params.mtp > 0) {
    // The checkpoint's own first prediction module, as stored, with the
    // target's embedding and lm_head (the draft gathers and projects
    // through them).
    d.weights = MtpWeights(model, /*first_only=*/true);
    if (!d.weights.empty()) {
      for (const WeightGroup& g : model.weights) {
        if (g.role == ParamRole::kEmbedding || g.role == ParamRole::kLmHead) d.weights.push_back(g);
      }
      d.params = ParamsByRole(d.weights);
      d.weight_description = model.weight_description;
      if (model.moe.layers > 0) {
        d.moe = model.moe;
        d.moe.layers = 1;
      }
      return d;
    }
  }
  d.params.embedding = p.embedding;
  d.params.lm_head = p.lm_head;
  d.params.attention = p.attention / std::max<std::int64_t>(1, attention_layers);
  d.params.norms = p.norms / layers;
  if (model.moe.layers > 0) {
    const std::int64_t n = model.moe.layers;
    d.moe = model.moe;
    d.moe.layers = 1;
    d.params.routed_experts = p.routed_experts / n;
    d.params.active_routed_experts = p.active_routed_experts / n;
    d.params.shared_experts = p.shared_experts / n;
    d.params.routers = p.routers / n;
  } else {
    d.params.dense_mlp = p.dense_mlp / layers;
  }
  return d;  // no weight groups: one per role, in the dtype
}

ModelShape EagleHeadShape(const ModelShape& model, bool eagle3, bool first_step) {
  ModelShape plain = model;
  plain.params.mtp = 0;  // a head of its own, not the checkpoint's MTP module
  plain.weights.clear();
  ModelShape d = DraftLayerShape(plain);
  d.name = model.name + (eagle3 ? " (EAGLE-3 head)" : " (EAGLE head)");
  const ParamCounts& p = model.params;
  const std::int64_t h = model.hidden_size;
  // A dense MLP: the model's dense layers' width, else the width one token
  // runs in an MoE layer (its top-k experts and the shared ones).
  if (model.moe.layers > 0) {
    const std::int64_t moe_layers = model.moe.layers;
    const std::int64_t dense_layers =
        std::max<std::int64_t>({1, model.DecoderLayers() - moe_layers, model.dense_mlps});
    d.params.dense_mlp = p.dense_mlp > 0
                             ? p.dense_mlp / dense_layers
                             : (p.active_routed_experts + p.shared_experts) / moe_layers;
    d.params.routed_experts = d.params.active_routed_experts = 0;
    d.params.shared_experts = d.params.routers = 0;
    d.moe = MoeShape{};
  }
  // The projection of the model's hidden states into the head: EAGLE's fc
  // (2h -> h: the token's embedding beside the last hidden state) every
  // step; EAGLE-3's fc (3h -> h: three of the model's layers' hidden states)
  // once, in the first step. Priced with the MLP (the same bytes and FLOPs).
  if (!eagle3 || first_step) d.params.dense_mlp += (eagle3 ? 3 : 2) * h * h;
  if (eagle3) {
    // EAGLE-3's layer attends from its input embedding beside the hidden
    // state, 2h wide into q, k and v; its lm_head is its own, over a draft
    // vocabulary of 32,000 tokens mapped to the model's.
    LayerShape& l = d.layers[0];
    if (!l.IsLatent() && !l.IsCompressed() && l.kv_heads > 0) {
      const std::int64_t qkv_out =
          l.query_heads * l.qk_head_dim + l.kv_heads * (l.qk_head_dim + l.v_head_dim);
      const std::int64_t in = l.input_dim > 0 ? l.input_dim : h;
      d.params.attention += qkv_out * (2 * h - in);
      l.input_dim = 2 * h;
    }
    d.vocab_size = kEagle3DraftVocabulary;
    d.params.lm_head = kEagle3DraftVocabulary * h;
  }
  return d;
}

ModelShape EagleTimedShape(const ModelShape& model) {
  ModelShape d = EagleHeadShape(model, /*eagle3=*/false, /*first_step=*/false);
  d.params.dense_mlp -= 2 * model.hidden_size * model.hidden_size;  // no fc
  d.name = model.name + " (EAGLE head, as timed)";
  return d;
}

SpeculativeCostModel::SpeculativeCostModel(std::shared_ptr<const CostModel> target,
                                           std::shared_ptr<const CostModel> draft,
                                           int num_speculative_tokens, std::string description,
                                           int topk, std::shared_ptr<const CostModel> plain)
    : target_(std::move(target)),
      draft_(std::move(draft)),
      k_(num_speculative_tokens),
      description_(std::move(description)),
      topk_(std::max(1, topk)),
      plain_(std::move(plain)) {}

long double SpeculativeCostModel::DraftSeconds(std::span<const ScheduledWork> work,
                                               std::span<long double> own_s) const {
  if (!draft_ || work.empty()) return 0;
  std::vector<ScheduledWork> step;
  std::vector<std::size_t> at;  // the item of `work` each entry of `step` is
  std::vector<long double> own;
  long double total = 0;
  for (int j = 0; j < k_; ++j) {
    step.clear();
    at.clear();
    for (std::size_t i = 0; i < work.size(); ++i) {
      const ScheduledWork& w = work[i];
      if (w.verify) {
        // A tree's later steps run its topk nodes of the depth before, as an
        // extend with logits at each (a chain's steps are decodes).
        const Tokens tokens = j == 0 ? 1 : topk_;
        step.push_back(ScheduledWork{w.context + j, tokens, false, tokens > 1});
      } else if (w.prefill && j == 0) {
        step.push_back(ScheduledWork{w.context, w.tokens, true, false});
      } else {
        continue;
      }
      at.push_back(i);
    }
    if (step.empty()) break;
    own.assign(step.size(), 0.0L);
    const long double t = draft_->IterationSeconds(step, own);
    total += t;
    long double own_total = 0;
    for (long double o : own) own_total += o;
    const long double rest = (t - own_total) / static_cast<long double>(step.size());
    for (std::size_t n = 0; n < step.size(); ++n) own_s[at[n]] += own[n] + rest;
  }
  return total;
}

Seconds SpeculativeCostModel::IterationSeconds(std::span<const ScheduledWork> work,
                                               std::span<long double> own_s) const {
  if (!draft_) return target_->IterationSeconds(work, own_s);
  std::vector<long double> draft_own(work.size(), 0);
  const long double draft = DraftSeconds(work, draft_own);
  if (draft == 0) return target_->IterationSeconds(work, own_s);
  // The draft runs after the model's sampling.
  const Seconds t = target_->IterationSecondsWithTail(work, own_s, draft);
  for (std::size_t i = 0; i < work.size(); ++i) own_s[i] += draft_own[i];
  return t;
}

void SpeculativeCostModel::DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                                          DecodeLines* out) const {
  target_->DecodeLinesFor(contexts, max_steps, out);
}

Seconds SpeculativeCostModel::RecomputeSeconds(Tokens start, Tokens n) const {
  // The draft's KV of those tokens is recomputed with the model's.
  return target_->RecomputeSeconds(start, n) + (draft_ ? draft_->RecomputeSeconds(start, n) : 0);
}

Result<SpeculativeShape> ResolveSpeculative(const SpeculativeSpec& spec) {
  const SpeculativeMethod* method = FindSpeculativeMethod(spec.method);
  if (method == nullptr) return Error("unknown speculative method \"" + spec.method + "\"");
  const int k = spec.num_speculative_tokens.value_or(method->num_speculative_tokens);
  std::vector<double> rates = spec.acceptance_rate;
  if (rates.empty()) rates.push_back(method->acceptance_rate);
  if (rates.size() != 1 && rates.size() != static_cast<std::size_t>(k)) {
    return Error("acceptance_rate must be one rate or " + std::to_string(k) + ", got " +
                 std::to_string(rates.size()));
  }
  const int topk = spec.topk.value_or(1);
  const double beta = spec.rank_decay.value_or(method->rank_decay);
  const long long tree = TreeDraftNodes(k, topk);
  if (topk < 1) return Error("topk must be at least 1, got " + std::to_string(topk));
  if (topk > 1 && !method->own_model && !method->draft_layer) {
    return Error("topk above 1 needs a draft that scores its candidates (method \"" + spec.method +
                 "\" has none)");
  }
  if (topk > 1 && !spec.num_draft_tokens) {
    return Error("num_draft_tokens is required with topk above 1");
  }
  const int verify = spec.num_draft_tokens.value_or(k + 1);
  if (topk == 1 && verify != k + 1) {
    return Error("num_draft_tokens must be num_speculative_tokens + 1 = " + std::to_string(k + 1) +
                 " with topk 1 (a chain), got " + std::to_string(verify));
  }
  if (topk > 1 && (verify < 2 || verify > tree + 1)) {
    return Error("num_draft_tokens must be between 2 and " + std::to_string(tree + 1) +
                 " (the root and the tree's " + std::to_string(tree) + " candidates at depth " +
                 std::to_string(k) + ", topk " + std::to_string(topk) + "), got " +
                 std::to_string(verify));
  }
  SpeculativeShape out;
  out.method = method;
  out.num_speculative_tokens = k;
  out.topk = topk;
  out.verify_tokens = verify;
  out.expected_tokens = topk == 1 ? ExpectedTokensPerStep(rates, k)
                                  : ExpectedTokensPerTreeStep(rates, beta, k, topk, verify);
  return out;
}

// What vLLM's draft-model proposer refuses at start-up (DraftModelProposer):
// a multimodal target, a draft with M-RoPE, vocabularies of different sizes
// (its verify_equal_vocab_size_if_draft_model; Qwen's padded vocabularies
// included), and a draft that cannot run at the target's tensor parallel
// degree (the draft's degree must equal the target's).
Status CheckDraftModel(const ModelShape& target, const ModelShape& draft, int tensor_parallel) {
  const std::string why = ": vLLM's draft-model speculation refuses it";
  if (target.params.vision > 0) {
    return Error("the target model \"" + target.name + "\" is multimodal (a vision tower)" + why +
                 " (model.text_only serves its language model alone)");
  }
  if (draft.uses_mrope) {
    return Error("draft model \"" + draft.name + "\" uses multimodal RoPE (mrope_section)" + why);
  }
  if (draft.vocab_size != target.vocab_size) {
    return Error("draft model \"" + draft.name + "\" has a vocabulary of " +
                 FormatWithSeparators(draft.vocab_size) + " tokens and the target \"" +
                 target.name + "\" " + FormatWithSeparators(target.vocab_size) +
                 ": the draft proposes the target's token ids, and vLLM requires equal "
                 "vocabulary sizes (padded ones too)");
  }
  if (const std::string problem = TensorParallelProblem(draft, tensor_parallel); !problem.empty()) {
    return Error("draft model \"" + draft.name + "\" cannot run at the target's tensor parallel " +
                 "degree " + std::to_string(tensor_parallel) +
                 ", which vLLM runs it at: " + problem);
  }
  return OkStatus();
}

Result<SpeculativeSetup> MakeSpeculative(const SpeculativeSpec& spec, const ModelShape& model,
                                         const ElementFormat& kv_format, const GpuSpec& gpu,
                                         std::shared_ptr<const CostModel> target,
                                         const EngineProfile* profile,
                                         const OperatorModelOptions& options,
                                         const RooflineParams& roofline,
                                         std::shared_ptr<const CostModel> plain) {
  auto shape = ResolveSpeculative(spec);
  if (!shape) return shape.error();
  const SpeculativeMethod* method = shape->method;
  const int k = shape->num_speculative_tokens;
  const int topk = shape->topk;
  const int verify = shape->verify_tokens;
  SpeculativeSetup out;
  out.num_speculative_tokens = k;
  out.topk = topk;
  out.verify_tokens = verify;
  out.expected_tokens = shape->expected_tokens;
  std::optional<ModelShape> draft, eagle_head;
  std::string drafted_by;
  const bool eagle = IsEagleHead(spec.method);
  const bool eagle3 = spec.method == "eagle3";
  if (method->own_model) {
    auto loaded = LoadModel(spec.draft_model);
    if (!loaded) return loaded.error();
    draft = std::move(*loaded);
    drafted_by = "draft model " + draft->name;
    if (Status s = CheckDraftModel(model, *draft, std::max(1, options.tensor_parallel)); !s) {
      return s.error();
    }
  } else if (eagle) {
    // Its time: EagleTimedShape (one of the model's layers and its
    // lm_head); its memory: the head itself (below).
    draft = EagleTimedShape(model);
    eagle_head = EagleHeadShape(model, eagle3, /*first_step=*/true);
    drafted_by = std::string(eagle3 ? "an EAGLE-3 head (one decoder layer, its fc and a "
                                      "32,000-token lm_head)"
                                    : "an EAGLE head (its fc, one decoder layer and the lm_head)") +
                 ", each step timed as one of the model's layers and its lm_head";
  } else if (method->draft_layer) {
    draft = DraftLayerShape(model);
    drafted_by = "a head of one decoder layer and the lm_head";
  }
  const int tp = std::max(1, options.tensor_parallel);
  auto make_cost = [&](const ModelShape& drafter) -> Result<std::shared_ptr<const CostModel>> {
    if (profile != nullptr) {
      EngineProfile bare = *profile;
      bare.params.cpu_iteration_s = 0;
      bare.params.cpu_per_sequence_s = 0;
      bare.params.output_per_sequence_s = 0;
      bare.params.eager_launch_per_layer_s = 0;
      OperatorModelOptions o = options;
      o.expert_parallel = 1;
      o.expert_all_to_all = false;
      o.fp8_checkpoint = false;
      auto m = OperatorCostModel::Make(drafter, kv_format, "auto", gpu, nullptr, bare, o);
      if (!m) return m.error();
      return std::shared_ptr<const CostModel>(*m);
    }
    RooflineParams params = roofline;
    params.tensor_parallel = tp;
    params.iteration_overhead_s = 0;
    auto r = Roofline::Make(drafter, kv_format, "auto", gpu, params);
    if (!r) return r.error();
    return std::shared_ptr<const CostModel>(std::make_shared<RooflineCostModel>(std::move(*r)));
  };
  std::shared_ptr<const CostModel> draft_cost;
  if (draft) {
    auto cost = make_cost(*draft);
    if (!cost) return cost.error();
    draft_cost = *cost;
    // What the draft's cache grows by a token (the pool's share): its
    // per-token layers' bytes; a window-only layer keeps a constant.
    out.draft_kv_bytes_per_token = BytesPerToken(*draft, kv_format, tp);
    // Its weights: all it holds (EAGLE-3's fc among them), less what it
    // shares with the model (a head's embedding, and EAGLE-1's and MTP's
    // lm_head; EAGLE-3's is its own).
    ModelShape own = eagle_head ? *eagle_head : *draft;
    if (method->draft_layer) {
      own.params.embedding = 0;
      if (!eagle3) own.params.lm_head = 0;
    }
    auto bytes = ComputeWeightBytes(own, "auto");
    if (!bytes) return bytes.error();
    // Split over the GPUs, but for an EAGLE head's fc, which every GPU
    // holds whole (vLLM builds EAGLE-3's as ReplicatedLinear, EAGLE-1's as
    // a plain nn.Linear).
    Bytes whole = 0;
    if (eagle) {
      ModelShape no_fc = own;
      no_fc.params.dense_mlp -= (eagle3 ? 3 : 2) * model.hidden_size * model.hidden_size;
      auto without = ComputeWeightBytes(no_fc, "auto");
      if (!without) return without.error();
      whole = bytes->total - without->total;
    }
    out.draft_weight_bytes = static_cast<long double>((bytes->total - whole + tp - 1) / tp + whole);
    if (spec.method == "mtp" && model.params.mtp > 0) {
      // Every prediction module the checkpoint carries, as it stores them
      // (DeepSeek's fp8 blocks, V4's MXFP4 experts), with vLLM's replicated
      // tensors (norms, routers, MLA's down projections) whole on each GPU.
      ModelShape stored = model;
      stored.weights = MtpWeights(model, /*first_only=*/false);
      if (!stored.weights.empty()) {
        auto mtp = ComputeWeightBytes(stored, "auto");
        if (!mtp) return mtp.error();
        out.draft_weight_bytes = static_cast<long double>(mtp->PerGpu(tp));
      }
    }
  }
  char text[200];
  if (topk == 1) {
    std::snprintf(text, sizeof text,
                  "speculative decoding: %s, k %d, %.3Lf tokens per verification step",
                  spec.method.c_str(), k, out.expected_tokens);
  } else {
    std::snprintf(text, sizeof text,
                  "speculative decoding: %s, a tree of depth %d, top-k %d, %d tokens verified, "
                  "%.3Lf tokens per verification step",
                  spec.method.c_str(), k, topk, verify, out.expected_tokens);
  }
  std::string note = text;
  if (!drafted_by.empty()) {
    char memory[160];
    std::snprintf(memory, sizeof memory,
                  "; the KV pool holds the draft too (%.0Lf bytes of weights and %.0Lf bytes of "
                  "KV a token, per GPU)",
                  out.draft_weight_bytes, out.draft_kv_bytes_per_token);
    note += ", drafted by " + drafted_by + memory;
  }
  out.cost = std::make_shared<SpeculativeCostModel>(std::move(target), draft_cost, k, note, topk,
                                                    std::move(plain));
  return out;
}

CostModelInfo SpeculativeCostModel::Describe() const {
  CostModelInfo info = target_->Describe();
  info.notes.push_back(description_);
  return info;
}

}  // namespace kvbill
