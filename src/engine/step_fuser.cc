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
  if (batch > config_.max_num_batched_tokens) return 0;
  for (const Seq* s : rep.running) {
    if (s->InPrefill() || s->generated >= s->output) return 0;
  }
  if (!rep.waiting.empty() &&
      scheduler_.CanAdmit(rep, rep.waiting.front(), config_.max_num_batched_tokens - batch)) {
    return 0;
  }
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
  if (layout_.Windowed()) k_max = StepsBeforeAdmission(rep, k_max);
  return k_max;
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
  rep.work.swap(*work);  // both buffers are kept for reuse
  rep.duration = static_cast<Seconds>(elapsed);
}

}  // namespace kvbill::engine
