#include "engine/step_fuser.h"

#include <algorithm>
#include <limits>

#include "engine/accounting.h"

namespace kvbill::engine {

StepFuser::StepFuser(const SimulationConfig& config, const CostModel& cost,
                     const Roofline& roofline, const KvGroupLayout& layout,
                     const Scheduler& scheduler)
    : config_(config), cost_(cost), roofline_(roofline), layout_(layout), scheduler_(scheduler) {}

Tokens StepFuser::MaxSteps(const Replica& rep) const {
  if (config_.step_mode || rep.running.empty()) return 0;
  const Tokens batch = static_cast<Tokens>(rep.running.size());
  const bool sglang = config_.scheduler == SchedulerKind::kSglang;
  if (!sglang && batch > config_.max_num_batched_tokens) return 0;
  for (const Seq* s : rep.running) {
    if (s->InPrefill() || s->generated >= s->output) return 0;
  }
  const Tokens budget =
      sglang ? config_.max_num_batched_tokens : config_.max_num_batched_tokens - batch;
  if (!rep.waiting.empty() && scheduler_.CanAdmit(rep, rep.waiting.front(), budget)) return 0;
  // Steps until the first sequence has all its output.
  Tokens k_max = kNoBreak;
  for (const Seq* s : rep.running) k_max = std::min(k_max, s->output - s->generated);
  // Steps the free blocks allow: step k needs ceil((c + k + 1) / bs) blocks.
  const std::int64_t free = rep.cache->free_blocks();
  auto demand = [&](Tokens steps) {
    std::int64_t d = 0;
    for (const Seq* s : rep.running) d += rep.cache->DecodeDemand(s->id, s->computed, steps);
    return d;
  };
  if (demand(k_max) > free) {
    Tokens lo = 0, hi = k_max;  // demand(lo) <= free < demand(hi)
    while (hi - lo > 1) {
      const Tokens mid = lo + (hi - lo) / 2;
      (demand(mid) <= free ? lo : hi) = mid;
    }
    k_max = lo;
  }
  if (sglang) return StepsBeforeSglangAdmission(rep, k_max);
  if (layout_.Windowed()) k_max = StepsBeforeAdmission(rep, k_max);
  return k_max;
}

Tokens StepFuser::StepsBeforeSglangAdmission(const Replica& rep, Tokens k_max) const {
  // The scheduler pass after k decode steps admits the front request when
  // A(k) = free tokens(k) - reservation(k) > need; A(0) <= need here. Each
  // step the reservation falls by at most S = B r + d sum(min(rest, clip))
  // (r the ratio, d its decay while above its floor) and the free tokens
  // rise only by what windows free: A(k) <= A(0) + k S + freed(k). With one
  // full group the steps also take at least B k - slack tokens (slack: room
  // in the blocks held), so A(k) <= A(0) + slack + k (S - B) too. The block
  // ends at the first k where the bound passes need: there the scheduler
  // decides, as it does after every step in step mode.
  if (rep.waiting.empty() || static_cast<int>(rep.running.size()) >= config_.max_num_seqs) {
    return k_max;
  }
  const SglangScheduling& g = config_.sglang;
  const Seq* front = rep.waiting.front();
  const Scheduler::Admission a =
      scheduler_.PlanAdmission(rep, front, config_.max_num_batched_tokens);
  const long double need = static_cast<long double>(front->prefill_target - a.hit_tokens +
                                                    scheduler_.SglangReserve(rep, front));
  const long double gap = need - scheduler_.SglangRoom(rep);  // >= 0: not admitted now
  const long double ratio = g.Ratio(rep.ratio_start, rep.ratio_steps);
  const long double decay = ratio > g.min_ratio ? g.Decay() : 0;
  long double rest = 0, slack = 0;
  const long double per_page = scheduler_.TokensPerPage(rep);
  for (const Seq* s : rep.running) {
    rest += static_cast<long double>(std::min(s->output - s->generated, g.clip_max_new));
    slack += std::max<long double>(
        0, static_cast<long double>(rep.cache->BlocksOf(s->id) * config_.block_size - s->computed));
  }
  const long double b = static_cast<long double>(rep.running.size());
  const long double rise = b * ratio + decay * rest;  // S
  if (layout_.Single()) {
    if (rise <= b && slack <= gap) return k_max;  // A(k) <= A(0) + slack - k (B - S) <= need
  }
  // First k with A(0) + k S + freed(k) > need (freed: windows only).
  auto passes = [&](Tokens k) {
    long double freed = 0;
    if (layout_.Windowed()) {
      for (const Seq* s : rep.running) {
        freed += static_cast<long double>(rep.cache->FreedDuring(s->id, s->computed, k));
      }
    }
    long double bound = static_cast<long double>(k) * rise + freed * per_page;
    if (layout_.Single() && rise > b) {
      bound = std::min(bound, slack + static_cast<long double>(k) * (rise - b));
    }
    return bound > gap;
  };
  if (!passes(k_max)) return k_max;
  Tokens lo = 0, hi = k_max;  // !passes(lo), passes(hi)
  while (hi - lo > 1) {
    const Tokens mid = lo + (hi - lo) / 2;
    (passes(mid) ? hi : lo) = mid;
  }
  return hi;
}

Tokens StepFuser::StepsBeforeAdmission(const Replica& rep, Tokens k_max) const {
  const Tokens budget = config_.max_num_batched_tokens - static_cast<Tokens>(rep.running.size());
  if (rep.waiting.empty() || budget <= 0 ||
      static_cast<int>(rep.running.size()) >= config_.max_num_seqs) {
    return k_max;
  }
  // Only freed pages can make room: allocations and evictions only take it.
  const Scheduler::Admission a = scheduler_.PlanAdmission(rep, rep.waiting.front(), budget);
  const std::int64_t deficit = rep.cache->AdmissionDeficit(a.runs, a.gpu_hits, a.blocks_needed);
  auto freed = [&](Tokens steps) {
    std::int64_t f = 0;
    for (const Seq* s : rep.running) f += rep.cache->FreedDuring(s->id, s->computed, steps);
    return f;
  };
  if (freed(k_max) < deficit) return k_max;
  Tokens lo = 0, hi = k_max;  // freed(lo) < deficit <= freed(hi)
  while (hi - lo > 1) {
    const Tokens mid = lo + (hi - lo) / 2;
    (freed(mid) < deficit ? lo : hi) = mid;
  }
  return lo;
}

Tokens StepFuser::Sum(const Replica& rep, Seconds now, Tokens k_max, Seconds until,
                      std::vector<Work>* out, long double* out_elapsed) {
  // Line by line: the cost model gives step time (and each sequence's own
  // time) as lines in the step index; within a line every sequence's KV
  // read is linear in the step index too (a line never crosses a KV
  // breakpoint).
  const long double write = roofline_.KvWriteBytesPerToken();
  std::vector<Work>& work = *out;
  work.clear();
  for (Seq* s : rep.running) work.push_back(Work{s, 1, 0, 0, 0, 0});
  long double elapsed = 0;
  Tokens done = 0;
  bool stop = false;
  const std::size_t n_seqs = work.size();
  kv0_.resize(n_seqs);
  kv_slope_.resize(n_seqs);
  contexts_.resize(n_seqs);
  while (done < k_max && !stop) {
    for (std::size_t i = 0; i < n_seqs; ++i) {
      const Tokens c = work[i].seq->computed + done;
      contexts_[i] = c;
      kv0_[i] = roofline_.KvReadBytes(c);
      kv_slope_[i] = roofline_.KvPiece(c).slope;
    }
    cost_.DecodeLinesFor(contexts_, k_max - done, &lines_);
    const std::vector<StepLine>& lines = lines_.lines;
    for (std::size_t p = 0; p < lines.size() && !stop; ++p) {
      const Tokens j0 = lines[p].begin, j1 = lines[p].end;
      const long double t0 = lines[p].t0, t1 = lines[p].t1;
      Tokens end = j1;
      if (until < kNever) {
        // Smallest m in (j0, j1] with now + elapsed + sum(j0, m) >= until.
        const long double need = static_cast<long double>(until - now) - elapsed;
        if (SumLine(t0, t1, j0, j1) >= need) {
          Tokens lo = j0, hi = j1;  // sum(j0, lo) < need <= sum(j0, hi)
          while (hi - lo > 1) {
            const Tokens mid = lo + (hi - lo) / 2;
            (SumLine(t0, t1, j0, mid) >= need ? hi : lo) = mid;
          }
          end = std::max(hi, j0 + 1);
          stop = true;
        }
      }
      elapsed += AddDecodeLine(work, j0, end, t0, t1, lines_.own0.data() + p * n_seqs,
                               lines_.own1.data() + p * n_seqs, kv0_, kv_slope_, write, &own_);
      done += end - j0;
      if (end < j1) stop = true;
    }
  }
  *out_elapsed = elapsed;
  return done;
}

void StepFuser::Apply(Replica& rep, Tokens steps, std::vector<Work>* work, long double elapsed) {
  rep.fused_steps = steps;
  decoding_.clear();
  for (Work& w : *work) {
    w.tokens = steps;
    if (layout_.Windowed()) {
      w.seq->NameOutputUpTo(w.seq->computed + steps);  // commits before frees
      w.seq->peak_pages = std::max(w.seq->peak_pages,
                                   rep.cache->PeakPagesDuring(w.seq->id, w.seq->computed, steps));
    }
    decoding_.push_back(DecodingSeq{w.seq->id, w.seq->computed, w.seq->blocks()});
  }
  rep.cache->AdvanceDecode(decoding_, steps);
  if (config_.scheduler == SchedulerKind::kSglang) {
    // Each of the steps was a decode batch: the ratio decays once per step.
    rep.ratio_steps += steps;
  }
  rep.work.swap(*work);  // both buffers are kept for reuse
  rep.duration = static_cast<Seconds>(elapsed);
}

}  // namespace kvbill::engine
