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
// longest context that fits memory at that batch (fit.h), capped at the
// model's max_model_len (model_shape.h) unless the query says otherwise.
//
// "The batch that fills memory": at context c, B(c) = the most sequences of
// c tokens the KV pool holds (FitReport::max_batch), capped at max_batch
// (the engine's max_num_seqs); a context is profitable when a token decoded
// with B(c) sequences at c pays. B(c) falls as c grows, so the cost per
// token grows with c and bisection applies as above.
#ifndef KVBILL_COST_BREAKEVEN_H_
#define KVBILL_COST_BREAKEVEN_H_

#include <optional>
#include <string>
#include <vector>

#include "kvbill/cost/price_sheet.h"
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
  // Cap on the context: the model's max_model_len; 0 = none (a what-if
  // beyond the model's limit, --ignore-model-limit).
  Tokens max_model_len = 0;
};

struct BreakevenResult {
  std::int64_t batch = 1;     // the fixed batch; the filling batch: B at max_profitable
  Tokens memory_limit = 0;    // longest context that fits at this batch
  Tokens max_profitable = 0;  // 0: not even one token of context pays
  // The shortest profitable context: 1, or with an input price the prompt
  // length from which a request pays for its output's decode (0: none pays).
  Tokens min_profitable = 0;
  bool limited_by_memory = false;  // profitable all the way to the memory limit
  // Profitable all the way to the model's max_model_len (the cap, below the
  // memory limit).
  bool limited_by_model = false;
  // Dollars per output token at context 1 (weights, compute and one token's
  // KV): above the price, no context is profitable.
  double usd_per_token_at_context_1 = 0;
};

// Cost per output token (dollars) at context ctx with `batch` sequences decoding.
Result<double> DecodeCostPerToken(const BreakevenQuery& q, Tokens ctx, std::int64_t batch);

// Dollars of one request at context ctx, prefill included (needs no input price).
Result<double> RequestCost(const BreakevenQuery& q, Tokens ctx, std::int64_t batch);

Result<BreakevenResult> FindBreakeven(const BreakevenQuery& q, std::int64_t batch);

// The same with the batch that fills memory at each context, up to
// max_batch sequences (>= 1).
// The API offers of the same model in a price sheet, for a default price:
// entries whose id, lower-cased, contains the model's name (lower-cased)
// starting at the id's start or right after '/', '.' or "meta-", and ending
// at the id's end or before '-' ("groq/llama-3.1-8b-instant",
// "nebius/meta-llama/Meta-Llama-3.1-8B-Instruct" for llama-3.1-8b; not
// "deepseek-r1-0528-qwen3-8b" for qwen3-8b), with a positive output price.
// In the sheet's order.
struct ComparableOffers {
  std::vector<const ModelPrice*> offers;
  double median_output_usd_per_mtok = 0;  // of the offers; the mean of the middle two when even
  double median_input_usd_per_mtok = 0;
};
ComparableOffers FindComparableOffers(const PriceSheet& sheet, const std::string& model_name);

Result<BreakevenResult> FindBreakevenFillingMemory(const BreakevenQuery& q, std::int64_t max_batch);

}  // namespace kvbill

#endif  // KVBILL_COST_BREAKEVEN_H_
