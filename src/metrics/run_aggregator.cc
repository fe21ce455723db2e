#include "kvbill/metrics/run_aggregator.h"

#include <algorithm>

#include "kvbill/metrics/billing.h"

namespace kvbill {

Seconds QueueSeconds(const RequestRecord& r) {
  // Measured from the arrival the engine timed, not from release_s +
  // frontend_s: a request admitted on arrival waited exactly 0, where
  // admitted_s - release_s - frontend_s left rounding residue (9.7e-17 s
  // as the median of a run whose requests mostly waited for nothing).
  return (r.admitted_s - r.arrived_s) + r.frontend_wait_s;
}

void TaskAccumulator::Add(const RequestRecord& r) {
  TaskMetrics& m = m_;
  m.requests += 1;
  m.prompt_tokens += r.prompt_tokens;
  m.cached_tokens += r.cached_tokens;
  m.offload_hit_tokens += r.offload_hit_tokens;
  m.prefill_tokens += r.prefill_tokens;
  m.output_tokens += r.output_tokens;
  m.preemptions += r.preemptions;
  m.kv_read_bytes += r.kv_read_bytes;
  m.kv_written_bytes += r.kv_written_bytes;
  m.peak_kv_bytes = std::max(m.peak_kv_bytes, r.peak_kv_bytes);
  m.longest_sequence_tokens =
      std::max(m.longest_sequence_tokens, r.prompt_tokens + r.output_tokens);
  m.gpu_seconds += r.gpu_seconds;
  m.cost_usd += r.cost_usd;
  first_release_ = std::min(first_release_, r.release_s);
  last_finish_ = std::max(last_finish_, r.finish_s);
  if (r.output_tokens > 0) {
    ttft_sum_ += r.first_token_s - r.release_s;
    ++ttft_n_;
  }
  queue_sum_ += QueueSeconds(r);
}

TaskMetrics TaskAccumulator::Metrics(const std::string& id) const {
  TaskMetrics m = m_;
  m.id = id;
  m.completion_s = last_finish_ - first_release_;
  if (ttft_n_ > 0) m.ttft_mean_s = ttft_sum_ / static_cast<double>(ttft_n_);
  m.queue_mean_s = queue_sum_ / m.requests;
  return m;
}

void TaskSums::Add(const TaskMetrics& t) {
  RunSummary& s = sums_;
  s.tasks += 1;
  s.requests += t.requests;
  s.prompt_tokens += t.prompt_tokens;
  s.cached_tokens += t.cached_tokens;
  s.offload_hit_tokens += t.offload_hit_tokens;
  s.prefill_tokens += t.prefill_tokens;
  s.output_tokens += t.output_tokens;
  s.kv_read_bytes += t.kv_read_bytes;
  s.task_cost_usd += t.cost_usd;
  s.preemptions += t.preemptions;
  s.longest_sequence_tokens = std::max(s.longest_sequence_tokens, t.longest_sequence_tokens);
  cost_.Add(static_cast<double>(t.cost_usd));
  completion_.Add(t.completion_s);
}

RunSummary TaskSums::Build() {
  RunSummary s = sums_;
  s.hit_rate = s.prompt_tokens > 0
                   ? static_cast<double>(s.cached_tokens) / static_cast<double>(s.prompt_tokens)
                   : 0;
  s.cost_per_task_usd = cost_.Build();
  s.completion_s = completion_.Build();
  return s;
}

RunAggregator::RunAggregator(std::function<void(const TaskMetrics&)> on_task, BillingRule billing)
    : on_task_(std::move(on_task)), billing_(billing) {}

RunAggregator::Acc& RunAggregator::Slot(int index) {
  const auto k = static_cast<std::size_t>(index - next_);
  if (k >= window_.size()) window_.resize(k + 1);
  return window_[k];
}

void RunAggregator::OnRequest(RequestRecord&& r) {
  Acc& a = Slot(r.task_index);
  if (a.task.empty()) a.id = r.task_id;
  a.task.Add(r);
  latencies_.Add(r);
}

void RunAggregator::Release(const Acc& a) {
  if (a.task.empty()) return;
  TaskMetrics m = a.task.Metrics(a.id);
  if (billing_ == BillingRule::kAmortized) {
    held_.push_back(std::move(m));
    return;
  }
  Emit(m);
}

void RunAggregator::Emit(const TaskMetrics& m) {
  if (on_task_) on_task_(m);
  sums_.Add(m);
}

void RunAggregator::OnTaskCut(int index, int unserved) {
  if (index >= next_) Slot(index).task.Cut(unserved);
}

void RunAggregator::OnTaskDone(int index) {
  if (index < next_) return;  // announced twice: released already
  Slot(index).done = true;
  while (!window_.empty() && window_.front().done) {
    Release(window_.front());
    window_.pop_front();
    ++next_;
  }
}

void RequestLatencies::Add(const RequestRecord& r) {
  // A request of no output tokens has no first token (vLLM refuses
  // max_tokens 0; a trace may still record such a turn).
  if (r.output_tokens > 0) ttft_.Add(r.first_token_s - r.release_s);
  queue_.Add(QueueSeconds(r));
  frontend_wait_.Add(r.frontend_wait_s);
  if (r.output_tokens > 1) {
    tpot_.Add((r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1));
  }
}

void RequestLatencies::Build(RunSummary* s) {
  s->ttft_s = ttft_.Build();
  s->tpot_s = tpot_.Build();
  s->queue_s = queue_.Build();
  s->frontend_wait_s = frontend_wait_.Build();
}

void ApplyTotals(const SimulationTotals& totals, RunSummary* s) {
  s->cost_usd = totals.bill_usd;
  s->idle_usd = totals.idle_usd;
  s->simulated_s = totals.simulated_s;
  s->evicted_blocks = totals.evicted_blocks;
  s->kv_pool_blocks = totals.kv_pool_blocks;
  s->kv_cache_groups = totals.kv_cache_groups;
}

RunSummary RunAggregator::Finish(const SimulationTotals& totals) {
  if (billing_ == BillingRule::kAmortized) {
    for (const TaskMetrics& m : held_) sums_.Add(m);  // the summary's idle, before the shares
  }
  RunSummary s = sums_.Build();
  ApplyTotals(totals, &s);
  latencies_.Build(&s);
  ApplyBilling(billing_, &held_, &s);
  for (const TaskMetrics& m : held_) {
    if (on_task_) on_task_(m);
  }
  held_.clear();
  return s;
}

}  // namespace kvbill
