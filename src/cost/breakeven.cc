#include "kvbill/cost/breakeven.h"

#include <algorithm>

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

Result<BreakevenResult> FindBreakeven(const BreakevenQuery& q, std::int64_t batch) {
  if (q.output_usd_per_mtok <= 0) return Error("the output price must be positive");
  auto r = MakeRoofline(q);
  if (!r) return r.error();
  FitRequest fit = q.fit;
  fit.batch = batch;
  fit.context = 1;
  auto rep = EvaluateFit(fit);
  if (!rep) return rep.error();
  BreakevenResult out;
  out.batch = batch;
  out.memory_limit = rep->max_context_unbounded ? kMaxSearchContext : rep->max_context;
  auto profitable = [&](Tokens ctx) {
    if (!q.input_usd_per_mtok) return StepCost(q, *r, ctx, batch) <= q.output_usd_per_mtok * 1e-6;
    const double revenue = (static_cast<double>(ctx) * *q.input_usd_per_mtok +
                            static_cast<double>(q.output_tokens) * q.output_usd_per_mtok) *
                           1e-6;
    return PrefillCost(q, *r, ctx) +
               static_cast<double>(q.output_tokens) * StepCost(q, *r, ctx, batch) <=
           revenue;
  };
  if (out.memory_limit < 1 || !profitable(1)) return out;
  if (profitable(out.memory_limit)) {
    out.max_profitable = out.memory_limit;
    out.limited_by_memory = true;
    return out;
  }
  Tokens lo = 1, hi = out.memory_limit;  // profitable(lo), !profitable(hi)
  while (hi - lo > 1) {
    const Tokens mid = lo + (hi - lo) / 2;
    (profitable(mid) ? lo : hi) = mid;
  }
  out.max_profitable = lo;
  return out;
}

}  // namespace kvbill
