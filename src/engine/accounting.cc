#include "engine/accounting.h"

namespace kvbill::engine {

Seconds PriceIteration(std::vector<Work>& work, const CostModel& cost, const Roofline& roofline,
                       std::vector<ScheduledWork>* sched, std::vector<long double>* own) {
  sched->clear();
  Tokens tokens = 0;
  for (Work& w : work) {
    const Tokens c = w.seq->computed;
    sched->push_back(ScheduledWork{c, w.tokens, w.seq->InPrefill(), w.verify});
    tokens += w.tokens;
    w.kv_read = roofline.KvReadBytes(c);
    w.kv_write = static_cast<long double>(roofline.KvWriteBytesPerToken()) *
                 static_cast<long double>(w.tokens);
  }
  own->assign(sched->size(), 0);
  const long double t = cost.IterationSeconds(*sched, *own);
  long double own_total = 0;
  for (long double o : *own) own_total += o;
  long double reload = 0;
  for (std::size_t i = 0; i < work.size(); ++i) {
    Work& w = work[i];
    w.share_s =
        (*own)[i] +
        (t - own_total) * static_cast<long double>(w.tokens) / static_cast<long double>(tokens) +
        w.reload_s;
    reload += w.reload_s;
  }
  return static_cast<Seconds>(t + reload);
}

PlainIteration PriceWithoutSpeculation(const std::vector<Work>& work, const CostModel& plain,
                                       std::vector<ScheduledWork>* sched,
                                       std::vector<long double>* own) {
  PlainIteration out;
  sched->clear();
  bool others = false;
  for (const Work& w : work) {
    const Tokens c = w.seq->computed;
    if (w.verify) {
      sched->push_back(ScheduledWork{c, 1, false, false});
      ++out.sequences;
    } else {
      sched->push_back(ScheduledWork{c, w.tokens, w.seq->InPrefill(), false});
      others = true;
    }
  }
  if (out.sequences == 0) return out;
  own->assign(sched->size(), 0);
  out.plain_s = plain.IterationSeconds(*sched, *own);
  out.decode_s = out.plain_s;
  if (others) {
    sched->clear();
    for (const Work& w : work) {
      if (w.verify) sched->push_back(ScheduledWork{w.seq->computed, 1, false, false});
    }
    own->assign(sched->size(), 0);
    out.decode_s = plain.IterationSeconds(*sched, *own);
  }
  return out;
}

long double AddDecodeLine(std::vector<Work>& work, Tokens j0, Tokens end, long double t0,
                          long double t1, const long double* own0, const long double* own1,
                          const std::vector<long double>& kv0,
                          const std::vector<long double>& kv_slope, long double write_per_token,
                          std::vector<long double>* own) {
  const std::size_t n_seqs = work.size();
  const long double n = static_cast<long double>(end - j0);
  const long double sum_j = static_cast<long double>(j0 + end - 1) * n / 2;
  const long double piece_t = SumLine(t0, t1, j0, end);
  long double own_total = 0;
  own->resize(n_seqs);
  for (std::size_t i = 0; i < n_seqs; ++i) {
    work[i].kv_read += kv0[i] * n + kv_slope[i] * sum_j;
    work[i].kv_write += write_per_token * n;
    (*own)[i] = own0[i] * n + own1[i] * sum_j;
    own_total += (*own)[i];
  }
  const long double rest = (piece_t - own_total) / static_cast<long double>(n_seqs);
  for (std::size_t i = 0; i < n_seqs; ++i) work[i].share_s += (*own)[i] + rest;
  return piece_t;
}

void Charge(const Work& w, long double gpus, double usd_per_gpu_s) {
  RequestRecord& rec = w.seq->record;
  rec.kv_read_bytes += w.kv_read * gpus;
  rec.kv_written_bytes += w.kv_write * gpus;
  rec.gpu_seconds += w.share_s * gpus;
  rec.cost_usd += w.share_s * gpus * usd_per_gpu_s;
}

}  // namespace kvbill::engine
