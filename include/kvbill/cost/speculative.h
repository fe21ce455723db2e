// Speculative decoding: the methods, the expected advance of a verification
// step, and the iteration cost with a draft (docs/engine.md, "Speculative
// decoding").
//
// A verification step of a sequence runs k + 1 query tokens through the
// model on top of its context (an extend, as a prefill chunk is priced) and
// accepts the draft's tokens up to the first rejected one, plus one token of
// its own. With α_i the chance that position i is accepted given positions
// 1 .. i-1 were, the expected tokens per step are
//
//   E = 1 + α_1 + α_1 α_2 + ... + α_1 ... α_k   (= (1 - α^(k+1)) / (1 - α) for one α)
//
// so 1 <= E <= k + 1. The draft proposes its k tokens one after another
// before the step: k decode steps of the draft over the verifying
// sequences, priced by the draft's own cost model (a model of its own, or one
// decoder layer of the model's shape and the lm_head for EAGLE and MTP
// heads; nothing for n-gram lookup, which runs on the CPU).
//
// A tree draft (SGLang's EAGLE with --speculative-eagle-topk above 1) runs
// d steps (num_speculative_tokens, SGLang's --speculative-num-steps): the
// first over one token per sequence, each later one over the topk best
// nodes of the depth before, proposing topk children each. The best
// num_draft_tokens - 1 nodes by the draft's score are kept, and the model
// verifies num_draft_tokens query tokens (those nodes and the step's own
// root) with a tree mask. ExpectedTokensPerTreeStep has the expected
// advance; a tree of topk 1 is the chain above.
#ifndef KVBILL_COST_SPECULATIVE_H_
#define KVBILL_COST_SPECULATIVE_H_

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/operator_cost_model.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/result.h"

namespace kvbill {

// A method and its defaults (the sources: docs/engine.md).
struct SpeculativeMethod {
  const char* name;            // "draft_model", "eagle", "eagle3", "mtp", "ngram"
  int num_speculative_tokens;  // default k
  double acceptance_rate;      // default α, every position
  // Default β of a tree draft: each lower-ranked candidate of the draft at
  // a position is the model's token β times as often as the one above it
  // (ExpectedTokensPerTreeStep).
  double rank_decay;
  bool draft_layer;  // drafts with a one-layer head beside the model (EAGLE heads, MTP)
  bool own_model;    // drafts with a model of its own (draft_model)
};

// Every method, in the scenario docs' order.
const std::vector<SpeculativeMethod>& SpeculativeMethods();
// The method named `name`, or nullptr.
const SpeculativeMethod* FindSpeculativeMethod(std::string_view name);

// An EAGLE head drafts (method "eagle" or "eagle3"): SGLang reserves more
// memory for it, and it is sized by EagleHeadShape.
bool IsEagleHead(std::string_view method);

// Whether `method` drafts on the GPU (a layer of the model's or a model of
// its own), as every method but n-gram prompt lookup does. vLLM schedules
// asynchronously with such drafts, its worker then waiting for each step's
// sampled tokens (OperatorModelOptions::cpu_waits_for_sampling), and not
// with n-gram ones.
bool DraftsOnGpu(std::string_view method);

// Whether the engine schedules asynchronously when nothing says (`method`
// its speculation, empty for none): vLLM from v0.14 unless it drafts by
// n-gram (vllm/config/vllm.py); SGLang's overlap scheduler unless it
// speculates (server_args.py).
bool AsyncSchedulingByDefault(bool sglang, std::string_view method);

// The method a what-if turns on for `model` when the scenario names none
// (compare's lever, plan --speculative on): the model's own MTP layer when
// its checkpoint has one, else an EAGLE-3 head.
const char* DefaultSpeculativeMethod(const ModelShape& model);

// E above for draft length k >= 0: `rates` holds one α (every position) or k
// of them, each in [0, 1). Precondition: rates has 1 or k entries.
long double ExpectedTokensPerStep(std::span<const double> rates, int k);

// The expected advance of a verification step over a tree draft of depth d
// (draft steps), `topk` candidates per expanded node and num_draft_tokens
// query tokens (the root and num_draft_tokens - 1 draft nodes). At depth i
// the model's token is the draft's r-th candidate with chance
//
//   p_i(r) = min(α_i β^(r - 1), 1 - p_i(1) - ... - p_i(r - 1))
//
// (β = rank_decay: the top r cover α_i (1 + β + ... + β^(r - 1)), at most
// all), so a node whose path from the root takes ranks r_1 .. r_i is
// accepted with chance p_1(r_1) ⋯ p_i(r_i), its value. The
// tree is SGLang's: depth 1 holds the root's topk children, each deeper
// depth the topk children of the topk best nodes of the one before, and the
// num_draft_tokens - 1 best nodes of all are verified (the draft's scores
// taken as the chances, EAGLE-2's calibration). E = 1 + the sum of the kept
// nodes' values. With topk 1 it is ExpectedTokensPerStep(rates, d).
// Preconditions: rates has 1 or d entries in [0, 1), rank_decay in [0, 1],
// topk >= 1, 1 <= num_draft_tokens <= TreeDraftNodes(d, topk) + 1.
long double ExpectedTokensPerTreeStep(std::span<const double> rates, double rank_decay, int d,
                                      int topk, int num_draft_tokens);

// Candidate nodes of a tree draft of depth d: topk + (d - 1) x topk²
// (d for topk 1); SGLang verifies at most this many plus the root.
long long TreeDraftNodes(int d, int topk);

// The draft of an EAGLE or MTP head: one decoder layer of `model` (its last
// attention layer) and the model's embedding and lm_head. A checkpoint that
// carries multi-token-prediction modules drafts with its first one, counted
// tensor by tensor in the formats it is stored in (DeepSeek's fp8 blocks,
// the module's eh_proj in the dtype); otherwise the layer has the parameters
// of an average layer of its kind (attention, then a dense MLP, or one MoE
// layer of an MoE model), stored in the model's dtype.
ModelShape DraftLayerShape(const ModelShape& model);

// EAGLE-3 heads draft over a vocabulary of their own (draft_vocab_size
// 32,000 in the published heads: SpecForge's configs for Qwen3-8B,
// Qwen3-Coder-30B-A3B and Qwen3-Next-80B-A3B), mapped to the model's.
inline constexpr std::int64_t kEagle3DraftVocabulary = 32000;

// The draft of an EAGLE head (`eagle3` false: EAGLE-1; true: EAGLE-3), a
// one-layer llama-style draft beside the model: the attention of the
// model's last attention layer, a dense MLP (the model's dense layers'
// width, or for an MoE model without dense layers what a token runs in an
// MoE layer: its top-k and shared experts), the projection of the model's
// hidden states into the head (EAGLE-1's fc, 2h x h, every draft step;
// EAGLE-3's, 3h x h, in the first only: `first_step`), and the model's
// embedding. EAGLE-1 projects through the model's lm_head; EAGLE-3 through
// its own over kEagle3DraftVocabulary tokens, and its q, k and v read the
// embedding beside the hidden state (2h; not widened for a latent (MLA) or
// compressed layer, whose head vLLM builds otherwise). In the model's
// dtype. The fc is whole on every GPU (MakeSpeculative's weights).
ModelShape EagleHeadShape(const ModelShape& model, bool eagle3, bool first_step);

// What an EAGLE head's draft step is timed as: one of the model's layers
// (its attention, the dense MLP of EagleHeadShape) and the model's lm_head,
// for EAGLE-1 and EAGLE-3 alike. SGLang's published EAGLE-3 runs of
// Qwen3-8B show a draft step costing about that, more than the head's own
// weights stream (0.35 of the 0.82 B parameters a step): its top-k and
// tree kernels and their launches, which kvbill does not time apart
// (docs/engine.md, "Speculative decoding"). The head's memory is
// EagleHeadShape's.
ModelShape EagleTimedShape(const ModelShape& model);

// The iteration cost of a deployment that speculates: the model's own cost
// model prices every iteration (a verification step is a ScheduledWork with
// verify set: k + 1 tokens after its context, priced as an extend), and the
// draft adds k steps over the verifying sequences, sequence i at context
// c_i + j in draft step j; its first step also runs the iteration's prompt
// chunks (the draft keeps KV of its own for every prompt token, and the
// engine runs it before it returns the step's tokens). Each sequence's
// share of a draft step is its own time in it plus an equal part of the
// rest. The draft follows the model's sampling, so it reaches the model's
// cost as the iteration's tail (CostModel::IterationSecondsWithTail).
// `draft` null: no draft operators (n-gram).
class SpeculativeCostModel final : public CostModel {
 public:
  // `plain`: the model as the deployment runs it without speculation (an
  // engine that changes its CPU scheduling to speculate schedules otherwise
  // then); null: `target`.
  SpeculativeCostModel(std::shared_ptr<const CostModel> target,
                       std::shared_ptr<const CostModel> draft, int num_speculative_tokens,
                       std::string description, int topk = 1,
                       std::shared_ptr<const CostModel> plain = nullptr);

  Seconds IterationSeconds(std::span<const ScheduledWork> work,
                           std::span<long double> own_s) const override;
  // The model's decode lines (steps without speculation; the engine does not
  // fuse verification steps).
  void DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                      DecodeLines* out) const override;
  Seconds RecomputeSeconds(Tokens start, Tokens n) const override;
  std::string name() const override { return target_->name(); }
  CostModelInfo Describe() const override;
  const CostModel& WithoutSpeculation() const override { return plain_ ? *plain_ : *target_; }

  // The draft's time in an iteration of `work` (0 without a draft): k steps
  // over its verification steps, the first with its prompt chunks; adds each
  // item's share to own_s (same size as work).
  long double DraftSeconds(std::span<const ScheduledWork> work, std::span<long double> own_s) const;

 private:
  std::shared_ptr<const CostModel> target_;
  std::shared_ptr<const CostModel> draft_;
  int k_;
  std::string description_;
  int topk_;
  std::shared_ptr<const CostModel> plain_;
};

// What a deployment speculates with (deployment.speculative, or an engine's
// flags in a calibration replay).
struct SpeculativeSpec {
  std::string method;                         // a SpeculativeMethods() name
  std::string draft_model;                    // draft_model: catalog name or config.json path
  std::optional<int> num_speculative_tokens;  // nullopt: the method's
  std::vector<double> acceptance_rate;        // empty: the method's; else 1 or k entries
  // A tree draft (SGLang's --speculative-eagle-topk, --speculative-num-draft-
  // tokens): nullopt topk is 1 (a chain); num_draft_tokens is k + 1 for a
  // chain and required above topk 1.
  std::optional<int> topk;
  std::optional<int> num_draft_tokens;
  std::optional<double> rank_decay;  // β; nullopt: the method's
};

// A spec with its defaults filled in and its expected advance.
struct SpeculativeShape {
  const SpeculativeMethod* method = nullptr;
  int num_speculative_tokens = 0;  // k, a tree's depth
  int topk = 1;
  int verify_tokens = 0;  // num_draft_tokens (k + 1 a chain)
  long double expected_tokens = 1;
};

// The method's defaults for what `spec` leaves unset, checked as
// MakeSpeculative checks them (its errors, without a location).
Result<SpeculativeShape> ResolveSpeculative(const SpeculativeSpec& spec);

// The engine's side of it (engine/simulator.h SpeculativeDecoding) and the
// cost model that adds the draft.
struct SpeculativeSetup {
  int num_speculative_tokens = 0;
  int topk = 1;
  int verify_tokens = 0;  // query tokens per verification step: num_draft_tokens (k + 1 a chain)
  long double expected_tokens = 1;
  long double draft_weight_bytes = 0;        // per GPU
  long double draft_kv_bytes_per_token = 0;  // per GPU
  std::shared_ptr<const CostModel> cost;     // SpeculativeCostModel over `target`
};

// Builds the draft's cost model on `gpu` at tensor parallelism `tp`: with
// `profile`, an operator model whose CPU, launch and streaming times are 0
// (they are the iteration's, already counted by the model's own cost
// model), `options` otherwise; without, the roofline at `roofline`'s
// efficiencies and no overhead. Errors: an unknown method or draft model,
// a rate count other than 1 or k, a tree draft without a draft or with
// num_draft_tokens outside [2, TreeDraftNodes + 1] (k + 1 exactly for topk
// 1) (messages without a location).
// `plain`: the model as the deployment runs it without speculation
// (SpeculativeCostModel), null: `target`.
Result<SpeculativeSetup> MakeSpeculative(const SpeculativeSpec& spec, const ModelShape& model,
                                         const ElementFormat& kv_format, const GpuSpec& gpu,
                                         std::shared_ptr<const CostModel> target,
                                         const EngineProfile* profile,
                                         const OperatorModelOptions& options,
                                         const RooflineParams& roofline,
                                         std::shared_ptr<const CostModel> plain = nullptr);

}  // namespace kvbill

#endif  // KVBILL_COST_SPECULATIVE_H_
