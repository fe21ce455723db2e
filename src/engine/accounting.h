// Cost accounting: an iteration's time, and how it is split among the
// sequences it served so that the split adds up to the whole.
//
// Contract (docs/engine.md, "The bill"). The cost model prices an iteration
// and states each sequence's own time in it; a sequence pays its own time
// plus the rest of the iteration (weights, compute beyond memory time,
// overhead) in proportion to the tokens it computed (in a decode step:
// equally), plus any host-tier reload charged to it. So the shares of an
// iteration add up to its duration, and the replicas' iterations plus idle
// time add up to replicas x GPUs x simulated time. KV bytes read and written
// are the model's arithmetic (Roofline), whatever the cost model. Sums are
// long double; the order of every sum is fixed, so runs are bit-identical.
#ifndef KVBILL_ENGINE_ACCOUNTING_H_
#define KVBILL_ENGINE_ACCOUNTING_H_

#include <vector>

#include "engine/replica.h"
#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/roofline.h"

namespace kvbill::engine {

// Prices one (unfused) iteration of `work`: fills each entry's KV bytes and
// share of the time; returns the iteration's duration (reloads included).
// The buffers are the caller's, kept from call to call.
Seconds PriceIteration(std::vector<Work>& work, const CostModel& cost, const Roofline& roofline,
                       std::vector<ScheduledWork>* sched, std::vector<long double>* own);

// Prices `work` (some of it speculative verification steps) as the
// deployment would run it without speculation (PlainIteration), with
// `plain` (CostModel::WithoutSpeculation). The buffers are the caller's.
PlainIteration PriceWithoutSpeculation(const std::vector<Work>& work, const CostModel& plain,
                                       std::vector<ScheduledWork>* sched,
                                       std::vector<long double>* own);

// Adds steps [j0, end) of one line of a fused decode block (steps j0..end-1
// of a run whose step j takes t0 + t1 j, sequence i's own time own0[i] +
// own1[i] j, its KV read kv0[i] + kv_slope[i] j) to each entry of `work`;
// returns the time of those steps. `own` is a buffer of the caller's.
long double AddDecodeLine(std::vector<Work>& work, Tokens j0, Tokens end, long double t0,
                          long double t1, const long double* own0, const long double* own1,
                          const std::vector<long double>& kv0,
                          const std::vector<long double>& kv_slope, long double write_per_token,
                          std::vector<long double>* own);

// The sum of t0 + t1 j over steps j in [from, to).
inline long double SumLine(long double t0, long double t1, Tokens from, Tokens to) {
  const long double n = static_cast<long double>(to - from);
  return t0 * n + t1 * (static_cast<long double>(from + to - 1) * n / 2);
}

// Charges a finished iteration's entry to its request's record: bytes, GPU
// seconds and dollars for `gpus` GPUs at usd_per_gpu_s.
void Charge(const Work& w, long double gpus, double usd_per_gpu_s);

}  // namespace kvbill::engine

#endif  // KVBILL_ENGINE_ACCOUNTING_H_
