// Break-even context: the longest context a deployment serves profitably
// given what a token sells for and what the GPU-hour costs. Pure.
//
// Decode of `batch` sequences, all at context c, on one replica of G GPUs:
//   step time t(c)  = roofline(weights(batch) + batch x (KV read(c) + KV write),
//                              batch x (matmul + attention(c)))        (roofline.h)
//   cost per output token = t(c) x G x $/GPU-second / batch
// Without an input price, the context is profitable when that cost is at most
// the output price. With one, a request of c prompt tokens and `output`
// generated tokens is: revenue c x input price + output x output price;
// cost = its prefill alone on the replica (chunks of `prefill_chunk` tokens,
// each a roofline iteration) + output x the cost per token at context c.
// Both costs grow with c, so the answer is found by bisection, up to the
// longest context that fits memory at that batch (fit.h).
#ifndef KVBILL_COST_BREAKEVEN_H_
#define KVBILL_COST_BREAKEVEN_H_

#include <optional>

#include "kvbill/cost/roofline.h"
#include "kvbill/hardware/fit.h"

namespace kvbill {

struct BreakevenQuery {
  FitRequest fit;  // model, KV format, weights, GPU, GPUs, memory fraction
  RooflineParams roofline;
  double usd_per_gpu_hour = 0;
  double output_usd_per_mtok = 0;  // > 0
  std::optional<double> input_usd_per_mtok;
  Tokens output_tokens = 1000;  // per request, with an input price
  Tokens prefill_chunk = 8192;
};

struct BreakevenResult {
  std::int64_t batch = 1;
  Tokens memory_limit = 0;         // longest context that fits at this batch
  Tokens max_profitable = 0;       // 0: not even one token of context pays
  bool limited_by_memory = false;  // profitable all the way to the memory limit
};

// Cost per output token (dollars) at context ctx with `batch` sequences decoding.
Result<double> DecodeCostPerToken(const BreakevenQuery& q, Tokens ctx, std::int64_t batch);

// Dollars of one request at context ctx, prefill included (needs no input price).
Result<double> RequestCost(const BreakevenQuery& q, Tokens ctx, std::int64_t batch);

Result<BreakevenResult> FindBreakeven(const BreakevenQuery& q, std::int64_t batch);

}  // namespace kvbill

#endif  // KVBILL_COST_BREAKEVEN_H_
