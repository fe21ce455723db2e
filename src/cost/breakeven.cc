#include "kvbill/cost/breakeven.h"

#include <algorithm>

#include "kvbill/metrics/summary.h"
#include "kvbill/util/names.h"

namespace kvbill {
namespace {

Result<Roofline> MakeRoofline(const BreakevenQuery& q) {
  RooflineParams p = q.roofline;
  p.tensor_parallel = q.fit.deployment.tensor_parallel;
  return Roofline::Make(q.fit.model, q.fit.kv_format, q.fit.weight_format, q.fit.deployment.gpu, p);
}

double DollarsPerReplicaSecond(const BreakevenQuery& q) {
  return q.usd_per_gpu_hour / 3600.0 * q.fit.deployment.tensor_parallel;
}

double StepCost(const BreakevenQuery& q, const Roofline& r, Tokens ctx, std::int64_t batch) {
  const double b = static_cast<double>(batch);
  const double bytes = r.WeightBytes(batch) + b * (r.KvReadBytes(ctx) + r.KvWriteBytesPerToken());
  const double flops = b * (r.MatmulFlopsPerToken() + r.DecodeAttentionFlops(ctx));
  return r.IterationSeconds(bytes, flops) * DollarsPerReplicaSecond(q) / b;
}

double PrefillCost(const BreakevenQuery& q, const Roofline& r, Tokens ctx) {
  double seconds = 0;
  for (Tokens start = 0; start < ctx; start += q.prefill_chunk) {
    const Tokens n = std::min(q.prefill_chunk, ctx - start);
    const double bytes =
        r.WeightBytes(n) + r.KvReadBytes(start) + r.KvWriteBytesPerToken() * static_cast<double>(n);
    const double flops =
        r.MatmulFlopsPerToken() * static_cast<double>(n) + r.PrefillAttentionFlops(start, n);
    seconds += r.IterationSeconds(bytes, flops);
  }
  return seconds * DollarsPerReplicaSecond(q);
}

}  // namespace

Result<double> DecodeCostPerToken(const BreakevenQuery& q, Tokens ctx, std::int64_t batch) {
  auto r = MakeRoofline(q);
  if (!r) return r.error();
  return StepCost(q, *r, ctx, batch);
}

Result<double> RequestCost(const BreakevenQuery& q, Tokens ctx, std::int64_t batch) {
  auto r = MakeRoofline(q);
  if (!r) return r.error();
  return PrefillCost(q, *r, ctx) +
         static_cast<double>(q.output_tokens) * StepCost(q, *r, ctx, batch);
}

namespace {

// What a request at context ctx with `batch` sequences decoding earns over
// its cost, in dollars (without an input price: per output token, its decode
// alone); it pays when this is at least 0.
double Margin(const BreakevenQuery& q, const Roofline& r, Tokens ctx, std::int64_t batch) {
  if (!q.input_usd_per_mtok) return q.output_usd_per_mtok * 1e-6 - StepCost(q, r, ctx, batch);
  const double revenue = (static_cast<double>(ctx) * *q.input_usd_per_mtok +
                          static_cast<double>(q.output_tokens) * q.output_usd_per_mtok) *
                         1e-6;
  return revenue - (PrefillCost(q, r, ctx) +
                    static_cast<double>(q.output_tokens) * StepCost(q, r, ctx, batch));
}

// The profitable contexts in [1, out->memory_limit] (capped at the model's
// limit); fills out. Costs are convex in the context (linear reads, the
// prefill's quadratic attention) and the revenue linear, so the profitable
// contexts are one interval: from 1 when a token of context pays, else (an
// input price: short prompts do not pay for the output's decode) from
// wherever the margin turns positive. The most profitable context is found
// by a ternary search (checked against a grid of powers of two, for the
// steps of whole prefill chunks), then each end by bisection.
template <typename MarginAt>
void Search(const BreakevenQuery& q, MarginAt margin, BreakevenResult* out) {
  Tokens top = out->memory_limit;
  const bool capped = q.max_model_len > 0 && q.max_model_len < top;
  if (capped) top = q.max_model_len;
  if (top < 1) return;
  auto pays = [&](Tokens ctx) { return margin(ctx) >= 0; };
  Tokens first = 1;
  if (!pays(1)) {
    if (!q.input_usd_per_mtok) return;  // the margin only falls with the context
    Tokens best = 1;
    double best_margin = margin(1);
    auto consider = [&](Tokens ctx) {
      const double m = margin(ctx);
      if (m > best_margin) {
        best_margin = m;
        best = ctx;
      }
      return m;
    };
    Tokens lo = 1, hi = top;
    while (hi - lo > 2) {
      const Tokens m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
      if (consider(m1) < consider(m2)) {
        lo = m1;
      } else {
        hi = m2;
      }
    }
    for (Tokens ctx = lo; ctx <= hi; ++ctx) consider(ctx);
    for (Tokens ctx = 2; ctx < top; ctx *= 2) consider(ctx);
    consider(top);
    if (best_margin < 0) return;
    Tokens no = 1, yes = best;  // !pays(no), pays(yes)
    while (yes - no > 1) {
      const Tokens mid = no + (yes - no) / 2;
      (pays(mid) ? yes : no) = mid;
    }
    first = yes;
  }
  out->min_profitable = first;
  if (pays(top)) {
    out->max_profitable = top;
    (capped ? out->limited_by_model : out->limited_by_memory) = true;
    return;
  }
  Tokens lo = first, hi = top;  // pays(lo), !pays(hi)
  while (hi - lo > 1) {
    const Tokens mid = lo + (hi - lo) / 2;
    (pays(mid) ? lo : hi) = mid;
  }
  out->max_profitable = lo;
}

Result<FitReport> FitAt(const BreakevenQuery& q, Tokens context, std::int64_t batch) {
  FitRequest fit = q.fit;
  fit.batch = batch;
  fit.context = context;
  return EvaluateFit(fit);
}

}  // namespace

Result<BreakevenResult> FindBreakeven(const BreakevenQuery& q, std::int64_t batch) {
  if (q.output_usd_per_mtok <= 0) return Error("the output price must be positive");
  auto r = MakeRoofline(q);
  if (!r) return r.error();
  auto rep = FitAt(q, 1, batch);
  if (!rep) return rep.error();
  BreakevenResult out;
  out.batch = batch;
  out.memory_limit = rep->max_context_unbounded ? kMaxSearchContext : rep->max_context;
  out.usd_per_token_at_context_1 = StepCost(q, *r, 1, batch);
  Search(
      q, [&](Tokens ctx) { return Margin(q, *r, ctx, batch); }, &out);
  return out;
}

Result<BreakevenResult> FindBreakevenFillingMemory(const BreakevenQuery& q,
                                                   std::int64_t max_batch) {
  if (q.output_usd_per_mtok <= 0) return Error("the output price must be positive");
  if (max_batch < 1) return Error("the batch cap must be at least 1");
  auto r = MakeRoofline(q);
  if (!r) return r.error();
  auto one = FitAt(q, 1, 1);
  if (!one) return one.error();
  BreakevenResult out;
  out.memory_limit = one->max_context_unbounded ? kMaxSearchContext : one->max_context;
  Status failed = OkStatus();
  auto batch_at = [&](Tokens ctx) -> std::int64_t {
    auto fit = FitAt(q, ctx, 1);
    if (!fit) {
      failed = fit.error();
      return 1;
    }
    return std::clamp<std::int64_t>(fit->max_batch, 1, max_batch);
  };
  out.batch = batch_at(1);
  out.usd_per_token_at_context_1 = StepCost(q, *r, 1, out.batch);
  Search(
      q, [&](Tokens ctx) { return Margin(q, *r, ctx, batch_at(ctx)); }, &out);
  if (!failed.ok()) return failed.error();
  if (out.max_profitable > 0) out.batch = batch_at(out.max_profitable);
  return out;
}

namespace {

// Whether `name` occurs in `id` on the boundaries FindComparableOffers names.
bool NamesModel(const std::string& id, const std::string& name) {
  for (std::size_t at = id.find(name); at != std::string::npos; at = id.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    const bool starts =
        at == 0 || id[at - 1] == '/' || id[at - 1] == '.' ||
        (at >= 5 && id.compare(at - 5, 5, "meta-") == 0 && (at == 5 || id[at - 6] == '/'));
    if (starts && (end == id.size() || id[end] == '-')) return true;
  }
  return false;
}

}  // namespace

ComparableOffers FindComparableOffers(const PriceSheet& sheet, const std::string& model_name) {
  ComparableOffers out;
  const std::string name = LowerAscii(model_name);
  if (name.empty()) return out;
  std::vector<double> outputs, inputs;
  for (const ModelPrice& m : sheet.models()) {
    if (m.base.output <= 0 || !NamesModel(LowerAscii(m.id), name)) continue;
    out.offers.push_back(&m);
    outputs.push_back(static_cast<double>(m.base.output) / 1e6);  // pico-$/token -> $/Mtok
    inputs.push_back(static_cast<double>(m.base.input) / 1e6);
  }
  out.median_output_usd_per_mtok = Median(outputs);
  out.median_input_usd_per_mtok = Median(inputs);
  return out;
}

}  // namespace kvbill
