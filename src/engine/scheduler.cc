#include "engine/scheduler.h"

#include <algorithm>
#include <string>

namespace kvbill::engine {
namespace {

Tokens CeilDiv(Tokens a, Tokens b) { return (a + b - 1) / b; }

// How many blocks of `blocks` from position `from` (below `end`) the host
// tier holds, counting until the first it does not; their hashes go to
// *hashes when given.
std::int64_t HostRun(const OffloadTier& tier, BlockRunList blocks, std::int64_t from,
                     std::int64_t end, std::vector<std::uint64_t>* hashes) {
  std::vector<BlockRun> runs;
  blocks.Slice(from, end, &runs);
  std::int64_t n = 0;
  for (const BlockRun& r : runs) {
    for (std::int64_t i = r.first; i < r.first + r.count; ++i) {
      const std::uint64_t h = BlockRunHash(r.key, i);
      if (!tier.Contains(h)) return n;
      if (hashes != nullptr) hashes->push_back(h);
      ++n;
    }
  }
  return n;
}

}  // namespace

Scheduler::Scheduler(const SimulationConfig& config, const CostModel& cost,
                     const Roofline& roofline, std::function<void(Seq*)> on_first_admission)
    : config_(config),
      cost_(cost),
      roofline_(roofline),
      bs_(config.block_size),
      on_first_admission_(std::move(on_first_admission)) {}

void Scheduler::DrainEvictions(Replica& rep) const {
  if (!rep.offload) return;
  for (const std::uint64_t h : rep.cache->TakeEvictedHashes()) rep.offload->Insert(h);
}

Scheduler::Admission Scheduler::PlanAdmission(const Replica& rep, const Seq* seq,
                                              Tokens budget) const {
  Admission a;
  const std::int64_t max_hit = std::max<std::int64_t>(0, (seq->prefill_target - 1) / bs_);
  const BlockRunList blocks = seq->blocks();
  a.runs = blocks.runs;
  a.gpu_hits = rep.cache->LongestPrefix(a.runs, max_hit);
  if (rep.offload) {
    // The run of blocks after the GPU hits that the host tier holds: reload
    // them when moving them over the link is faster than recomputing them.
    const std::int64_t run =
        HostRun(*rep.offload, blocks, a.gpu_hits, std::min(max_hit, blocks.blocks()), nullptr);
    if (run > 0) {
      const Tokens tokens = run * bs_;
      const double reload_s = static_cast<double>(tokens) * roofline_.KvWriteBytesPerToken() /
                              config_.offload_link_bytes_per_s;
      const double recompute_s = cost_.RecomputeSeconds(a.gpu_hits * bs_, tokens);
      if (reload_s < recompute_s) {
        a.host_hits = run;
        a.reload_s = reload_s;
      }
    }
  }
  a.hit_tokens = (a.gpu_hits + a.host_hits) * bs_;
  a.chunk = std::min(seq->prefill_target - a.hit_tokens, budget);
  a.blocks_needed = CeilDiv(a.hit_tokens + a.chunk, bs_);
  return a;
}

bool Scheduler::CanAdmit(const Replica& rep, const Seq* seq, Tokens budget) const {
  if (budget <= 0 || static_cast<int>(rep.running.size()) >= config_.max_num_seqs) return false;
  const Admission a = PlanAdmission(rep, seq, budget);
  return rep.cache->CanAdmit(a.runs, a.gpu_hits, a.blocks_needed);
}

void Scheduler::Preempt(Replica& rep, Seq* seq) {
  rep.cache->Release(seq->id);
  seq->computed = 0;
  seq->committed = 0;
  seq->prefill_target = seq->generated > 0 ? seq->prompt + seq->generated - 1 : seq->prompt;
  seq->NameOutputUpTo(seq->prefill_target);
  seq->record.preemptions += 1;
  rep.running.erase(std::find(rep.running.begin(), rep.running.end(), seq));
  rep.waiting.push_front(seq);
}

Status Scheduler::Schedule(Replica& rep, Seconds now) {
  rep.work.clear();
  rep.fused_steps = 0;
  Tokens budget = config_.max_num_batched_tokens;
  bool preempted = false;
  for (std::size_t i = 0; i < rep.running.size() && budget > 0;) {
    Seq* seq = rep.running[i];
    const int k = config_.speculative.num_speculative_tokens;
    const bool verify = k > 0 && !seq->InPrefill();
    const int verified =
        config_.speculative.verify_tokens > 0 ? config_.speculative.verify_tokens : k + 1;
    const Tokens n = seq->InPrefill() ? std::min(seq->prefill_target - seq->computed, budget)
                     : verify         ? std::min<Tokens>(verified, budget)
                                      : 1;
    bool ok = rep.cache->Reserve(seq->id, seq->computed, seq->computed + n);
    while (!ok) {
      Seq* victim = rep.running.back();
      Preempt(rep, victim);
      preempted = true;
      if (victim == seq) break;
      ok = rep.cache->Reserve(seq->id, seq->computed, seq->computed + n);
    }
    if (!ok) break;  // preempted itself: nothing further in running
    rep.work.push_back(Work{seq, n, 0, 0, 0, 0, verify});
    budget -= n;
    ++i;
  }
  // vLLM admits nothing in a step that preempted; but when the preemption
  // emptied the batch there is nothing else to run, so admit now.
  if (preempted && rep.work.empty()) preempted = false;
  while (!preempted && !rep.waiting.empty() && budget > 0 &&
         static_cast<int>(rep.running.size()) < config_.max_num_seqs) {
    Seq* seq = rep.waiting.front();
    DrainEvictions(rep);
    const Admission a = PlanAdmission(rep, seq, budget);
    auto admitted = rep.cache->Admit(seq->id, a.runs, a.gpu_hits, a.blocks_needed);
    if (!admitted) {
      // With nothing running, only pinned blocks can free up later; a chunk
      // larger than the whole pool never fits.
      if (rep.running.empty() && rep.work.empty() &&
          rep.cache->AdmissionPages(a.gpu_hits, a.blocks_needed) > rep.cache->capacity_blocks()) {
        return Error("request " + std::to_string(seq->record.index) + " of task \"" +
                     seq->record.task_id + "\" can never be admitted: its first chunk needs " +
                     std::to_string(rep.cache->AdmissionPages(a.gpu_hits, a.blocks_needed)) +
                     " blocks, the pool holds " + std::to_string(rep.cache->capacity_blocks()));
      }
      break;
    }
    const Tokens n = a.chunk;
    rep.waiting.pop_front();
    seq->computed = a.hit_tokens;
    seq->committed = *admitted;
    if (a.host_hits > 0) {
      std::vector<std::uint64_t> reloaded;
      HostRun(*rep.offload, seq->blocks(), a.gpu_hits, a.gpu_hits + a.host_hits, &reloaded);
      rep.offload->Touch(reloaded, 0, a.host_hits);
      CommitNamed(*rep.cache, seq, bs_, &scratch_);  // reloaded blocks are full and findable again
    }
    if (!seq->admitted_once) {
      seq->admitted_once = true;
      seq->record.cached_tokens = seq->computed;
      seq->record.offload_hit_tokens = a.host_hits * bs_;
      seq->record.admitted_s = now;
      on_first_admission_(seq);
    }
    rep.running.push_back(seq);
    rep.work.push_back(Work{seq, n, 0, 0, 0, a.reload_s});
    budget -= n;
  }
  return OkStatus();
}

}  // namespace kvbill::engine
