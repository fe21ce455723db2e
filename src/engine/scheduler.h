// Batch formation and preemption on one replica, after vLLM v1's scheduler.
//
// Contract (docs/engine.md, "Batching"). Schedule fills rep.work with the
// next iteration within the token budget (max_num_batched_tokens) and the cap
// on running sequences (max_num_seqs):
//   1. running sequences in admission order: a decode takes 1 token, a
//      prefill the next chunk that fits; each reserves the KV blocks it will
//      hold, and when the pool cannot supply them the most recently admitted
//      running sequence is preempted (blocks released, back to the front of
//      the waiting queue, to recompute its prompt and output so far);
//   2. unless a sequence was preempted (and something still runs), waiting
//      requests in order while budget and cap allow: each reuses the longest
//      cached prefix of its blocks (leaving at least one token to compute),
//      reloads from the host tier what is faster to move than to recompute,
//      and takes fresh blocks for its first chunk; the first that does not
//      fit stops admission.
// With SchedulerKind::kSglang (docs/engine.md, "Batching, SGLang") the
// iteration is either a prefill batch or a decode batch:
//   1. the prefill batch: the pending chunk of the request in prefill, then
//      waiting requests in order while max_running_requests, the chunk
//      budget (chunked_prefill_size) and max_prefill_tokens allow and each
//      one's uncomputed prompt plus its clipped output stays below the free
//      KV tokens less the running requests' reservation (SglangScheduling);
//      a request longer than the budget left is cut there and ends the batch;
//   2. only when that batch is empty, a decode batch of every running
//      request; when the pool cannot hold its next tokens, requests are
//      retracted, fewest generated tokens first (longest prompt on a tie),
//      to the back of the queue, and the ratio re-estimated; otherwise the
//      ratio decays one step.
// A request's first admission sets its record's cached tokens and admission
// time and calls the first-admission hook (the coordinator drops the task's
// pinned blocks there). An error only when a request can never be admitted.
#ifndef KVBILL_ENGINE_SCHEDULER_H_
#define KVBILL_ENGINE_SCHEDULER_H_

#include <functional>
#include <span>
#include <vector>

#include "engine/replica.h"
#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/engine/simulator.h"
#include "kvbill/util/result.h"

namespace kvbill::engine {

class Scheduler {
 public:
  // How a waiting request would be admitted with some budget left.
  struct Admission {
    std::span<const BlockRun> runs;  // its blocks; the first gpu_hits are the GPU hits
    std::int64_t gpu_hits = 0;
    std::int64_t host_hits = 0;  // blocks after them reloaded from the host tier
    Tokens hit_tokens = 0;
    Tokens chunk = 0;  // tokens computed in its first iteration
    std::int64_t blocks_needed = 0;
    double reload_s = 0;
  };

  // `yield_pin` releases rep's oldest pin (false when it holds none): what a
  // sequence that would otherwise preempt itself out of an empty batch asks
  // first (a pin never stalls a replica).
  Scheduler(const SimulationConfig& config, const CostModel& cost, const Roofline& roofline,
            std::function<void(Seq*)> on_first_admission, std::function<bool(Replica&)> yield_pin);

  // Forms rep's next iteration into rep.work (see above); `now` is its start.
  Status Schedule(Replica& rep, Seconds now);

  Admission PlanAdmission(const Replica& rep, const Seq* seq, Tokens budget) const;
  // Whether `seq` (waiting on rep) would be admitted with `budget` tokens
  // (SGLang: whether a prefill batch would take it, budgets aside).
  bool CanAdmit(const Replica& rep, const Seq* seq, Tokens budget) const;

  // SGLang's admission arithmetic, in tokens (SglangScheduling): what the
  // pool can still promise (free and evictable tokens less the running
  // requests' reservation at rep's ratio), and what admitting `seq` asks of
  // it: its uncomputed prompt after `hit_tokens` plus its clipped output.
  long double SglangRoom(const Replica& rep) const;
  // Tokens of the pages admission `a` locks out of the room: its prefix hits
  // on cached, unreferenced blocks, which the room counted as evictable
  // (SGLang locks a request's prefix before it checks its budget).
  long double SglangLocked(const Replica& rep, const Admission& a) const;
  Tokens SglangReserve(const Replica& rep, const Seq* seq) const;
  // Tokens one page of rep's pool holds (the block size with one group).
  long double TokensPerPage(const Replica& rep) const;
  // Moves the blocks rep's pool evicted into its host tier, in eviction order.
  void DrainEvictions(Replica& rep) const;

 private:
  Status ScheduleVllm(Replica& rep, Seconds now);
  Status ScheduleSglang(Replica& rep, Seconds now);
  // Admits rep's front waiting request as `a` plans it; false (changing
  // nothing) when the pool cannot hold it, an error when it never can.
  Result<bool> AdmitFront(Replica& rep, const Admission& a, Seconds now);
  // Releases `seq`'s blocks and queues it to recompute: at the front of the
  // waiting queue (vLLM's preemption) or at the back (SGLang's retraction).
  void Preempt(Replica& rep, Seq* seq, bool to_back = false);

  const SimulationConfig& config_;
  const CostModel& cost_;
  const Roofline& roofline_;
  Tokens bs_;
  std::function<void(Seq*)> on_first_admission_;
  std::function<bool(Replica&)> yield_pin_;
  std::vector<BlockRun> scratch_;
};

}  // namespace kvbill::engine

#endif  // KVBILL_ENGINE_SCHEDULER_H_
