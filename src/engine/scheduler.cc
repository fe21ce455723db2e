#include "engine/scheduler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kvbill/util/units.h"

namespace kvbill::engine {
namespace {

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
                     const Roofline& roofline, std::function<void(Seq*)> on_first_admission,
                     std::function<bool(Replica&)> yield_pin)
    : config_(config),
      cost_(cost),
      roofline_(roofline),
      bs_(config.block_size),
      on_first_admission_(std::move(on_first_admission)),
      yield_pin_(std::move(yield_pin)) {}

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
  if (config_.scheduler == SchedulerKind::kSglang && a.chunk < seq->prefill_target - a.hit_tokens) {
    a.chunk = a.chunk / bs_ * bs_;  // SGLang cuts a chunk at a page
  }
  a.blocks_needed = CeilDiv(a.hit_tokens + a.chunk, bs_);
  return a;
}

bool Scheduler::CanAdmit(const Replica& rep, const Seq* seq, Tokens budget) const {
  if (budget <= 0 || static_cast<int>(rep.running.size()) >= config_.max_num_seqs) return false;
  const Admission a = PlanAdmission(rep, seq, budget);
  if (config_.scheduler == SchedulerKind::kSglang) {
    const Tokens extend = seq->prefill_target - a.hit_tokens;
    if (a.chunk <= 0) return false;
    if (static_cast<long double>(extend + SglangReserve(rep, seq)) + SglangLocked(rep, a) >=
        SglangRoom(rep)) {
      return false;
    }
  }
  return rep.cache->CanAdmit(a.runs, a.gpu_hits, a.blocks_needed);
}

long double Scheduler::TokensPerPage(const Replica& rep) const {
  const std::int64_t pages = rep.cache->capacity_blocks();
  return pages > 0 ? static_cast<long double>(rep.cache->capacity_tokens()) / pages
                   : static_cast<long double>(bs_);
}

Tokens Scheduler::SglangReserve(const Replica& rep, const Seq* seq) const {
  // max_new_tokens clipped for the estimate, and (as SGLang clips a
  // request's max_new_tokens on arrival) to what the pool can hold after
  // its prompt, so that a request alone on the replica always fits.
  return std::max<Tokens>(0, std::min({seq->output, config_.sglang.clip_max_new,
                                       rep.cache->capacity_tokens() - 1 - seq->prompt}));
}

long double Scheduler::SglangLocked(const Replica& rep, const Admission& a) const {
  return static_cast<long double>(rep.cache->EvictableHits(a.runs, a.gpu_hits)) *
         TokensPerPage(rep);
}

long double Scheduler::SglangRoom(const Replica& rep) const {
  long double reserved = 0;
  for (const Seq* s : rep.running) {
    if (s->InPrefill()) continue;  // the chunked request reserves at its last chunk
    reserved +=
        static_cast<long double>(std::min(s->output - s->generated, config_.sglang.clip_max_new));
  }
  return static_cast<long double>(rep.cache->free_blocks()) * TokensPerPage(rep) -
         reserved * config_.sglang.Ratio(rep.ratio_start, rep.ratio_steps);
}

void Scheduler::Preempt(Replica& rep, Seq* seq, bool to_back) {
  rep.cache->Release(seq->id);
  seq->computed = 0;
  seq->committed = 0;
  seq->prefill_target = seq->generated > 0 ? seq->prompt + seq->generated - 1 : seq->prompt;
  seq->NameOutputUpTo(seq->prefill_target);
  seq->record.preemptions += 1;
  rep.running.erase(std::find(rep.running.begin(), rep.running.end(), seq));
  if (to_back) {
    rep.waiting.push_back(seq);
  } else {
    rep.waiting.push_front(seq);
  }
}

Status Scheduler::Schedule(Replica& rep, Seconds now) {
  rep.work.clear();
  rep.fused_steps = 0;
  return config_.scheduler == SchedulerKind::kSglang ? ScheduleSglang(rep, now)
                                                     : ScheduleVllm(rep, now);
}

Result<bool> Scheduler::AdmitFront(Replica& rep, const Admission& a, Seconds now) {
  Seq* seq = rep.waiting.front();
  auto admitted = rep.cache->Admit(seq->id, a.runs, a.gpu_hits, a.blocks_needed);
  if (!admitted) {
    // With nothing running, only pinned blocks can free up later; a chunk
    // larger than the whole pool never fits.
    if (rep.running.empty() && rep.work.empty() &&
        rep.cache->AdmissionPages(a.gpu_hits, a.blocks_needed) > rep.cache->capacity_blocks()) {
      return Error::CannotServe(
          NameRequest(seq->record.task_id, seq->record.index, seq->record.turn,
                      seq->record.is_summary) +
          " can never be admitted: its first chunk needs " +
          std::to_string(rep.cache->AdmissionPages(a.gpu_hits, a.blocks_needed)) +
          " blocks, the pool holds " + std::to_string(rep.cache->capacity_blocks()));
    }
    return false;
  }
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
  rep.work.push_back(Work{seq, a.chunk, 0, 0, 0, a.reload_s});
  return true;
}

Status Scheduler::ScheduleVllm(Replica& rep, Seconds now) {
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
      // The batch's only sequence would preempt itself, leaving the replica
      // nothing to run: pinned blocks give way first (docs/engine.md), or
      // it would be readmitted and preempted again until the pins expire.
      if (rep.running.size() == 1 && yield_pin_ && yield_pin_(rep)) {
        ok = rep.cache->Reserve(seq->id, seq->computed, seq->computed + n);
        continue;
      }
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
    DrainEvictions(rep);
    const Admission a = PlanAdmission(rep, rep.waiting.front(), budget);
    auto admitted = AdmitFront(rep, a, now);
    if (!admitted) return admitted.error();
    if (!*admitted) break;
    budget -= a.chunk;
  }
  return OkStatus();
}

Status Scheduler::ScheduleSglang(Replica& rep, Seconds now) {
  const SglangScheduling& g = config_.sglang;
  // 1. The prefill batch (SGLang's PrefillAdder): the pending chunk first.
  long double room = SglangRoom(rep);
  Tokens chunk_left = config_.max_num_batched_tokens;
  Tokens input_left = g.max_prefill_tokens;
  for (Seq* seq : rep.running) {
    if (!seq->InPrefill()) continue;
    const Tokens rest = seq->prefill_target - seq->computed;
    Tokens n = std::min(rest, chunk_left);
    if (static_cast<long double>(n) > room) {
      n = static_cast<Tokens>(std::max<long double>(0, std::floor(room)));
    }
    if (n <= 0 || !rep.cache->Reserve(seq->id, seq->computed, seq->computed + n)) {
      chunk_left = 0;  // the chunked request waits, and so does admission (one at a time)
      break;
    }
    rep.work.push_back(Work{seq, n, 0, 0, 0, 0});
    chunk_left -= n;
    input_left -= n;
    room -= static_cast<long double>(n + (n == rest ? SglangReserve(rep, seq) : 0));
    break;  // one chunked request at a time
  }
  while (!rep.waiting.empty() && chunk_left > 0 && input_left > 0 && room > 0 &&
         static_cast<int>(rep.running.size()) < config_.max_num_seqs) {
    Seq* seq = rep.waiting.front();
    DrainEvictions(rep);
    const Admission a = PlanAdmission(rep, seq, chunk_left);
    const Tokens extend = seq->prefill_target - a.hit_tokens;
    const Tokens reserve = SglangReserve(rep, seq);
    const long double locked = SglangLocked(rep, a);
    if (static_cast<long double>(extend + reserve) + locked >= room) break;
    if (extend >= input_left && !rep.work.empty()) break;  // the first may pass it
    if (a.chunk <= 0) break;
    auto admitted = AdmitFront(rep, a, now);
    if (!admitted) return admitted.error();
    if (!*admitted) break;
    chunk_left -= a.chunk;
    input_left -= a.chunk;
    room -= static_cast<long double>(a.chunk + (a.chunk == extend ? reserve : 0)) + locked;
    if (a.chunk < extend) break;  // the chunked request ends the batch
  }
  if (!rep.work.empty()) return OkStatus();

  // 2. The decode batch: every running request past its prefill.
  const int k = config_.speculative.num_speculative_tokens;
  const Tokens n = k == 0                                  ? 1
                   : config_.speculative.verify_tokens > 0 ? config_.speculative.verify_tokens
                                                           : k + 1;
  auto demand = [&] {
    std::int64_t d = 0;
    for (const Seq* s : rep.running) {
      if (!s->InPrefill()) d += rep.cache->DecodeDemand(s->id, s->computed, n);
    }
    return d;
  };
  std::int64_t decoding = 0;
  for (const Seq* s : rep.running) decoding += s->InPrefill() ? 0 : 1;
  if (decoding == 0) {
    rep.ratio_start = g.init_ratio;  // no batch: the scheduler idles
    rep.ratio_steps = 0;
    return OkStatus();
  }
  bool retracted = false;
  while (demand() > rep.cache->free_blocks() && decoding > 1) {
    // Fewest generated tokens first, the longest prompt among equals.
    Seq* victim = nullptr;
    for (Seq* s : rep.running) {
      if (s->InPrefill()) continue;
      if (victim == nullptr || s->generated < victim->generated ||
          (s->generated == victim->generated && s->prompt > victim->prompt)) {
        victim = s;
      }
    }
    Preempt(rep, victim, /*to_back=*/true);
    --decoding;
    retracted = true;
  }
  if (retracted) {
    // min(1, (generated + 20 x requests) / max_new) over those that stay.
    long double generated = 0, max_new = 0;
    for (const Seq* s : rep.running) {
      if (s->InPrefill()) continue;
      generated += static_cast<long double>(s->generated);
      max_new += static_cast<long double>(s->output);
    }
    generated += static_cast<long double>(g.retract_decode_steps) * decoding;
    rep.ratio_start = max_new > 0 ? std::min<long double>(1, generated / max_new) : 1;
    rep.ratio_steps = 0;
  } else {
    rep.ratio_steps += 1;
  }
  for (Seq* seq : rep.running) {
    if (seq->InPrefill()) continue;
    if (!rep.cache->Reserve(seq->id, seq->computed, seq->computed + n)) {
      return Error::CannotServe(NameRequest(seq->record.task_id, seq->record.index,
                                            seq->record.turn, seq->record.is_summary) +
                                " cannot decode: the KV pool holds " +
                                std::to_string(rep.cache->capacity_blocks()) +
                                " blocks, fewer than its context needs");
    }
    rep.work.push_back(Work{seq, n, 0, 0, 0, 0, k > 0});
  }
  return OkStatus();
}

}  // namespace kvbill::engine
