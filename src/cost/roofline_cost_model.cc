#include "kvbill/cost/roofline_cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace kvbill {

Seconds RooflineCostModel::IterationSeconds(std::span<const ScheduledWork> work,
                                            std::span<long double> own_s) const {
  Tokens tokens = 0;
  for (const ScheduledWork& w : work) tokens += w.tokens;
  long double bytes = r_.WeightBytes(tokens), flops = 0;
  for (std::size_t i = 0; i < work.size(); ++i) {
    const ScheduledWork& w = work[i];
    const long double read = r_.KvReadBytes(w.context);
    const long double write =
        static_cast<long double>(r_.KvWriteBytesPerToken()) * static_cast<long double>(w.tokens);
    bytes += read + write;
    flops += r_.MatmulFlopsPerToken() * static_cast<double>(w.tokens) +
             (w.prefill || w.verify ? r_.PrefillAttentionFlops(w.context, w.tokens)
                                    : r_.DecodeAttentionFlops(w.context));
    own_s[i] = (read + write) / r_.bytes_per_s();
  }
  return r_.IterationSeconds(static_cast<double>(bytes), static_cast<double>(flops));
}

void RooflineCostModel::DecodeLinesFor(std::span<const Tokens> contexts, Tokens max_steps,
                                       DecodeLines* out) const {
  const std::size_t batch = contexts.size();
  const long double write = r_.KvWriteBytesPerToken();
  const long double bw = r_.bytes_per_s(), fl = r_.flops_per_s();
  // Step j reads a + s j bytes and computes f0 + g j FLOPs while no
  // sequence crosses a KV breakpoint (a window filling, a chunk ending).
  long double a =
      r_.WeightBytes(static_cast<std::int64_t>(batch)) + write * static_cast<long double>(batch);
  long double s_bytes = 0, s_flops = 0;
  long double f0 = r_.MatmulFlopsPerToken() * static_cast<double>(batch);
  Tokens len = max_steps;
  out->own0.resize(2 * batch);
  out->own1.resize(2 * batch);
  for (std::size_t i = 0; i < batch; ++i) {
    const Tokens c = contexts[i];
    const LinearPiece kp = r_.KvPiece(c), fp = r_.FlopPiece(c);
    const long double kv0 = r_.KvReadBytes(c);
    a += kv0;
    s_bytes += kp.slope;
    f0 += r_.DecodeAttentionFlops(c);
    s_flops += fp.slope;
    len = std::min(len, kp.max_k + 1);
    out->own0[i] = out->own0[batch + i] = (kv0 + write) / bw;
    out->own1[i] = out->own1[batch + i] = kp.slope / bw;
  }
  const long double overhead = r_.overhead_s();
  auto mem = [&](long double j) { return (a + s_bytes * j) / bw; };
  auto comp = [&](long double j) { return (f0 + s_flops * j) / fl; };
  // Split [0, len) where compute overtakes memory (at most once each way).
  std::array<Tokens, 3> cuts = {0, len, len};
  std::size_t pieces = 1;
  const long double dm = s_bytes / bw - s_flops / fl;  // slope of mem - comp
  if (dm != 0) {
    const long double root = (comp(0) - mem(0)) / dm;  // mem(j) = comp(j)
    const Tokens cut = static_cast<Tokens>(std::ceil(root));
    if (cut > 0 && cut < len) cuts[pieces++] = cut;
  }
  cuts[pieces] = len;
  out->lines.clear();
  for (std::size_t p = 0; p < pieces; ++p) {
    const Tokens j0 = cuts[p], j1 = cuts[p + 1];
    const bool memory_bound =
        mem(static_cast<long double>(j0)) >= comp(static_cast<long double>(j0));
    out->lines.push_back(StepLine{j0, j1, (memory_bound ? a / bw : f0 / fl) + overhead,
                                  memory_bound ? s_bytes / bw : s_flops / fl});
  }
  out->own0.resize(pieces * batch);
  out->own1.resize(pieces * batch);
}

Seconds RooflineCostModel::RecomputeSeconds(Tokens start, Tokens n) const {
  return r_.ComputeSeconds(r_.MatmulFlopsPerToken() * static_cast<double>(n) +
                           r_.PrefillAttentionFlops(start, n));
}

CostModelInfo RooflineCostModel::Describe() const {
  CostModelInfo info;
  info.profile = "roofline";
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "spec-sheet roofline at %.0f%% of peak HBM bandwidth and %.0f%% of peak FLOP/s",
                100 * r_.bytes_per_s() / std::max(1.0, r_.peak_bytes_per_s()),
                100 * r_.flops_per_s() / std::max(1.0, r_.peak_flops_per_s()));
  info.notes.push_back(buf);
  return info;
}

}  // namespace kvbill
