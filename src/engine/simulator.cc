// The engine's coordinator; engine/engine.h states its contract.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "engine/accounting.h"
#include "engine/engine.h"
#include "kvbill/model/kv_footprint.h"

namespace kvbill {
namespace engine {

// The pool's part in SGLang's max_req_len = min(context length, pool
// tokens) - 1 (python/sglang/srt/managers/scheduler.py, Scheduler.__init__):
// the longest sequence the pool holds, when that is below max_model_len;
// none when the pool holds max_model_len (or is unlimited).
std::optional<Tokens> Engine::SglangPoolLimit(const KvPool& pool) const {
  if (pool.capacity_blocks() >= kUnlimitedBlocks) return std::nullopt;
  const Tokens chunk = config_.max_num_batched_tokens;
  auto fits = [&](Tokens n) { return pool.PeakPages(n, chunk) <= pool.capacity_blocks(); };
  Tokens hi = config_.max_model_len > 0 ? config_.max_model_len : Tokens{1} << 40;
  if (fits(hi)) return std::nullopt;
  // The longest length that fits, in [lo, hi): PeakPages never decreases.
  Tokens lo = 0;
  while (hi - lo > 1) {
    const Tokens mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

Seq* Engine::NewSeq() {
  Seq* seq = nullptr;
  if (free_seqs_.empty()) {
    seq = &seq_storage_.emplace_back();
  } else {
    seq = free_seqs_.back();
    free_seqs_.pop_back();
    *seq = Seq{};
  }
  seq->id = next_seq_id_++;
  return seq;
}

// The next task, taken when its time comes (before queued events at the
// same time): the event heap holds only events in flight.
void Engine::OnArrival() {
  const Seconds now = tasks_.pending_arrival();
  auto slot = tasks_.Arrive();
  if (!slot) {
    error_ = slot.error();
    return;
  }
  OnRelease(now, Release{*slot, 0});
}

Result<SimulationTotals> Engine::Run() {
  replicas_.resize(static_cast<std::size_t>(config_.replicas));
  loads_.assign(replicas_.size(), 0);
  for (int i = 0; i < config_.replicas; ++i) {
    Replica& rep = replicas_[static_cast<std::size_t>(i)];
    rep.index = i;
    rep.ratio_start = config_.sglang.init_ratio;
    rep.cache = std::make_unique<KvPool>(setup_.layout, setup_.pool_pages, config_.prefix_caching);
    if (config_.offload_capacity_tokens > 0 && config_.prefix_caching) {
      rep.offload = std::make_unique<OffloadTier>(config_.offload_capacity_tokens / bs_);
      rep.cache->TrackEvictions(true);
    }
  }
  totals_.request_len_limit = config_.max_model_len;
  if (config_.scheduler == SchedulerKind::kSglang && !replicas_.empty()) {
    const std::optional<Tokens> pool = SglangPoolLimit(*replicas_.front().cache);
    const Tokens context = pool ? *pool : config_.max_model_len;
    if (context > 0) {
      const Tokens max_req_len = std::max<Tokens>(context - 1, 1);
      tasks_.ApplySglangLimits(max_req_len);
      totals_.request_len_limit = std::max<Tokens>(max_req_len - 1, 1);
      if (pool) totals_.pool_context_len = totals_.request_len_limit;
    }
  }
  error_ = tasks_.Pull();
  while (error_.ok()) {
    if (tasks_.pending() && (queue_.empty() || tasks_.pending_arrival() <= queue_.NextTime())) {
      OnArrival();
      continue;
    }
    if (queue_.empty()) break;
    auto entry = queue_.Pop();
    const Seconds now = entry.time;
    if (std::holds_alternative<Release>(entry.event) ||
        std::holds_alternative<PinExpiry>(entry.event)) {
      assert(!external_.empty() && external_.top() == now);  // it was the earliest
      external_.pop();
    }
    std::visit(
        [&](auto&& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, Release>) {
            OnRelease(now, e);
          } else if constexpr (std::is_same_v<T, StartIteration>) {
            OnStart(now, e.replica);
          } else if constexpr (std::is_same_v<T, IterationEnd>) {
            OnEnd(now, e.replica);
          } else {
            OnPinExpiry(now, e);
          }
        },
        entry.event);
  }
  if (!error_.ok()) return error_.error();
  if (tasks_.held()) return Error("internal: a task held at the client was never sent");
  for (const Replica& rep : replicas_) {
    if (!rep.running.empty() || !rep.waiting.empty()) {
      const Seq* s = rep.running.empty() ? rep.waiting.front() : rep.running.front();
      return Error("internal: the simulation stopped with request " +
                   std::to_string(s->record.index) + " of task \"" + s->record.task_id +
                   "\" unserved");
    }
  }
  SimulationTotals& t = totals_;
  t.simulated_s = last_finish_;
  t.bill_usd = static_cast<long double>(last_finish_) * config_.replicas * gpus_ * usd_per_gpu_s_;
  t.idle_usd = t.bill_usd - paid_;
  t.kv_pool_blocks = setup_.pool_pages;
  t.cost_model = setup_.cost->Describe();
  t.kv_cache_groups = std::max(1, static_cast<int>(setup_.layout.groups.size()));
  t.rejected_requests = tasks_.rejected();
  t.unsent_requests = tasks_.unsent();
  t.unserved_tasks = tasks_.unserved();
  t.unserved_task_ids = tasks_.unserved_ids();
  t.longest_rejected_tokens = tasks_.longest_rejected();
  t.edited_requests = tasks_.edited();
  t.placeholder_outputs = tasks_.placeholders();
  t.max_model_len = config_.max_model_len;
  // An assumed limit (no length in the config) is no limit a deployment's
  // own max_model_len can exceed: vLLM takes any it is given.
  t.model_max_model_len =
      config_.model.max_model_len_assumed ? 0 : config_.model.MaxModelLenCeiling();
  t.last_arrival_s = tasks_.last_arrival();
  if (!replicas_.empty()) {
    const auto& cache = *replicas_.front().cache;
    t.pool_tokens = cache.capacity_tokens();
    t.pool_sequence_tokens = cache.LongestSequence(config_.max_num_batched_tokens);
    t.memory_pool_tokens = PoolTokens(setup_.layout, setup_.memory_pool_pages);
    t.max_model_len_fits_pool =
        config_.max_model_len <= 0 ||
        cache.PeakPages(config_.max_model_len, config_.max_num_batched_tokens) <=
            cache.capacity_blocks();
  }
  for (const Replica& rep : replicas_) {
    t.evicted_blocks += rep.cache->stats().evicted_blocks;
    t.busy_gpu_seconds += rep.busy_s * gpus_;
  }
  return t;
}

Seconds Engine::FrontendWork(const Request& request) const {
  return config_.frontend_per_request_s +
         config_.frontend_per_token_s * static_cast<double>(request.PromptTokens());
}

void Engine::OnRelease(Seconds now, const Release& e) {
  TaskState& task = tasks_[e.task];
  const Request& request = task.fed.requests[static_cast<std::size_t>(e.req)];
  int r = e.replica;
  if (r >= 0) --replicas_[static_cast<std::size_t>(r)].in_frontend;
  if (r < 0) {
    for (std::size_t i = 0; i < replicas_.size(); ++i) loads_[i] = replicas_[i].Load();
    r = router_->Route(loads_, &task.replica);
    // The replica's API server takes requests one at a time before they
    // reach its scheduler.
    const Seconds work = FrontendWork(request);
    if (work > 0 || config_.request_latency_s > 0) {
      Seconds& free_at = replicas_[static_cast<std::size_t>(r)].frontend_free_s;
      free_at = std::max(free_at, now) + work;
      ++replicas_[static_cast<std::size_t>(r)].in_frontend;
      PushExternal(free_at + config_.request_latency_s, Release{e.task, e.req, r, now});
      return;
    }
  }
  const Seconds sent = e.replica < 0 ? now : e.sent_s;
  Seq* seq = NewSeq();
  seq->task = e.task;
  seq->req = e.req;
  seq->request = &request;
  seq->replica = r;
  seq->prompt = request.PromptTokens();
  seq->output = request.output;
  seq->prefill_target = seq->prompt;
  // Before naming the prompt's blocks: that costs time and memory in
  // proportion to it, and a prompt that can never fit must fail at once.
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  const Tokens kv_tokens = seq->prompt + std::max<Tokens>(seq->output - 1, 0);
  if (rep.cache->PeakPages(kv_tokens, config_.max_num_batched_tokens) >
      rep.cache->capacity_blocks()) {
    error_ = Error::CannotServe(
        NameRequest(task.fed.id, request.index, request.turn, request.is_summary) +
        " needs KV for " + FormatWithSeparators(kv_tokens) + " tokens (prompt " +
        FormatWithSeparators(seq->prompt) + " + output), more than a replica's KV pool holds (" +
        FormatWithSeparators(rep.cache->LongestSequence(config_.max_num_batched_tokens)) +
        " tokens of one sequence, its state included): use more GPUs per replica, a smaller KV "
        "format, a context policy that bounds the context, or an engine.max_model_len no longer "
        "than the pool holds (the engine then refuses longer requests and ends their tasks; "
        "vLLM would not start on this pool at a longer max_model_len)");
    return;
  }
  const bool has_next = static_cast<std::size_t>(e.req + 1) < task.fed.requests.size();
  NamePrompt(seq, bs_, has_next, &task.chain);
  RequestRecord& rec = seq->record;
  rec.task_id = std::string(task.fed.id);
  rec.task_index = task.fed.index;
  rec.index = request.index;
  rec.turn = request.turn;
  rec.is_summary = request.is_summary;
  rec.replica = r;
  rec.release_s = sent;
  rec.arrived_s = now;
  if (e.replica >= 0) {
    rec.frontend_s = FrontendWork(request) + config_.request_latency_s;
    // The wait is what is left of now - sent once the API server's own
    // time is taken out; below the rounding of those times it is none
    // (else residue like 3e-14 s, differing between engine modes).
    const Seconds wait = now - sent - rec.frontend_s;
    rec.frontend_wait_s = wait > 1e-9 * std::max<Seconds>(1, now) ? wait : 0;
  }
  rec.prompt_tokens = seq->prompt;
  rec.output_tokens = seq->output;
  rep.waiting.push_back(seq);
  Track(rep, seq, true);
  // A newcomer may have a shorter tool wait than the requests the horizon
  // was computed from.
  if (rep.busy) SetReleaseHorizon(rep);
  Kick(now, r);
}

void Engine::OnPinExpiry(Seconds now, const PinExpiry& e) {
  TaskState& task = tasks_[e.task];
  Replica& rep = replicas_[static_cast<std::size_t>(e.replica)];
  if (task.pin_seq == e.seq) {
    rep.cache->Unpin(e.seq);
    task.pin_seq = -1;
  }
  // Pins expire in the order they were made: forget those gone since.
  while (!rep.pins.empty() && tasks_[rep.pins.front().first].pin_seq != rep.pins.front().second) {
    rep.pins.pop_front();
  }
  Kick(now, e.replica);
}

bool Engine::YieldPin(Replica& rep) {
  while (!rep.pins.empty()) {
    const auto [slot, seq] = rep.pins.front();
    rep.pins.pop_front();
    TaskState& task = tasks_[slot];
    if (task.pin_seq != seq) continue;  // dropped or expired already
    rep.cache->Unpin(seq);
    task.pin_seq = -1;
    totals_.pins_yielded += 1;
    return true;
  }
  return false;
}

void Engine::DropPin(Seq* seq) {
  // The task's previous request may still hold pinned blocks: drop them now
  // that this request holds its hits.
  TaskState& task = tasks_[seq->task];
  if (task.pin_seq >= 0) {
    replicas_[static_cast<std::size_t>(task.pin_replica)].cache->Unpin(task.pin_seq);
    task.pin_seq = -1;
  }
}

void Engine::Kick(Seconds now, int r) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.busy) return;
  if (rep.running.empty() && rep.waiting.empty()) {
    rep.ratio_start = config_.sglang.init_ratio;  // SGLang resets it when idle
    rep.ratio_steps = 0;
    return;
  }
  rep.busy = true;
  rep.natural_end = now;  // unknown until it starts: bound others conservatively
  SetReleaseHorizon(rep);
  queue_.Push(now, StartIteration{r});
}

std::optional<std::pair<bool, Seconds>> Engine::NextRelease(const Seq* s) const {
  const TaskState& task = tasks_[s->task];
  const std::size_t next = static_cast<std::size_t>(s->req + 1);
  if (next >= task.fed.requests.size()) return std::nullopt;
  if (config_.release == ReleaseRule::kRecorded && task.fed.requests[next].recorded_time_s) {
    const auto& first = task.fed.requests.front().recorded_time_s;
    return std::make_pair(
        true, task.arrival + *task.fed.requests[next].recorded_time_s - (first ? *first : 0));
  }
  if (s->request->tool_s_from_start) {
    return std::make_pair(true, s->record.release_s + s->request->tool_s);
  }
  return std::make_pair(false, s->request->tool_s);
}

void Engine::Track(Replica& rep, const Seq* s, bool add) {
  auto next = NextRelease(s);
  if (!next) return;
  std::multiset<Seconds>& set = next->first ? rep.recorded_releases : rep.tool_waits;
  if (add) {
    set.insert(next->second);
  } else {
    set.erase(set.find(next->second));
  }
}

// Fuses decode steps when the batch cannot change before the next event.
bool Engine::TryFuse(Replica& rep, Seconds now) {
  if (config_.speculative.num_speculative_tokens > 0) return false;  // steps advance by E
  const Tokens k_max = fuser_.MaxSteps(rep);
  if (k_max < 2) return false;
  // The natural block: limited only by what can reach this replica from
  // outside (releases, pin expiries). Its end is the earliest time this
  // replica can finish a request, which bounds the other replicas' blocks.
  const Seconds external = NextExternal();
  long double elapsed = 0;
  Tokens done = fuser_.Sum(rep, now, k_max, external, &fuse_work_, &elapsed);
  rep.natural_end = now + static_cast<Seconds>(elapsed);
  SetReleaseHorizon(rep);
  Seconds others = kNever;
  if (finite_horizons_ > (rep.release_horizon < kNever ? 1 : 0)) {  // else all are kNever
    for (const Replica& other : replicas_) {
      if (&other != &rep && other.busy) others = std::min(others, other.release_horizon);
    }
  }
  // A task held at the client starts when any request finishes: another
  // replica's next finish may send it here.
  if (tasks_.held()) {
    for (const Replica& other : replicas_) {
      if (&other != &rep && other.busy) others = std::min(others, other.natural_end);
    }
  }
  if (others < rep.natural_end) {
    done = fuser_.Sum(rep, now, k_max, std::min(external, others), &fuse_work_, &elapsed);
  }
  if (done < 2) return false;
  fuser_.Apply(rep, done, &fuse_work_, elapsed);
  return true;
}

void Engine::OnStart(Seconds now, int r) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  rep.started = now;
  if (!TryFuse(rep, now)) {
    if (auto s = scheduler_.Schedule(rep, now); !s.ok()) {
      error_ = s;
      return;
    }
    // A pin holds memory for a task's next request, never a replica idle:
    // when nothing can run while requests wait, the oldest pins give way
    // (their blocks stay cached, now evictable) until something can.
    while (rep.work.empty() && !rep.waiting.empty() && YieldPin(rep)) {
      if (auto s = scheduler_.Schedule(rep, now); !s.ok()) {
        error_ = s;
        return;
      }
    }
    if (rep.work.empty()) {
      rep.busy = false;
      return;
    }
    rep.duration = PriceIteration(rep.work, *setup_.cost, setup_.roofline, &iter_work_, &iter_own_);
    if (config_.speculative.num_speculative_tokens > 0) {
      rep.plain = PriceWithoutSpeculation(rep.work, setup_.cost->WithoutSpeculation(), &iter_work_,
                                          &iter_own_);
    }
    rep.natural_end = now + rep.duration;
    SetReleaseHorizon(rep);
  }
  scheduler_.DrainEvictions(rep);
  queue_.Push(now + rep.duration, IterationEnd{r});
}

void Engine::OnEnd(Seconds now, int r) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  totals_.iterations += rep.fused_steps > 0 ? rep.fused_steps : 1;
  totals_.steps_advanced += 1;
  rep.busy_s += rep.duration;
  std::vector<Seq*>& finished = finished_;
  finished.clear();
  const long double gpus = gpus_;
  Tokens advanced = 0;  // by verification steps
  long double reloads = 0;
  for (Work& w : rep.work) {
    reloads += w.reload_s;
    Seq* s = w.seq;
    Charge(w, gpus, usd_per_gpu_s_);
    RequestRecord& rec = s->record;
    if (rep.fused_steps > 0) {
      s->computed += w.tokens;
      s->generated += w.tokens;
    } else if (s->InPrefill()) {
      s->computed += w.tokens;
      rec.prefill_tokens += w.tokens;
      if (!s->InPrefill() && s->generated == 0 && s->output > 0) {
        s->generated = 1;
        rec.first_token_s = now;
      } else if (!s->InPrefill() && s->output == 0) {
        rec.first_token_s = now;
      }
    } else if (w.verify) {
      // The expected advance, rounded by the sequence's credit (simulator.h).
      s->spec_credit += config_.speculative.expected_tokens;
      const Tokens whole = static_cast<Tokens>(std::floor(s->spec_credit));
      s->spec_credit -= static_cast<long double>(whole);
      const Tokens advance =
          std::max<Tokens>(1, std::min({whole, w.tokens, s->output - s->generated}));
      s->computed += advance;
      s->generated += advance;
      advanced += advance;
    } else {
      s->computed += 1;
      s->generated += 1;
    }
    CommitNamed(*rep.cache, s, bs_, &commit_runs_);
    s->peak_tokens = std::max<Tokens>(s->peak_tokens, rep.cache->BlocksOf(s->id) * bs_);
    s->peak_pages = std::max(s->peak_pages, rep.cache->PagesOf(s->id));
    if (!s->InPrefill() && s->generated >= s->output) finished.push_back(s);
  }
  if (rep.plain.sequences > 0) {
    // Speculation's cost: this iteration (its reloads apart) over the plain
    // one, plus the decode step the verifying sequences take either way;
    // without it their tokens take (advanced / sequences) such steps.
    SpeculationTotals& spec = totals_.speculation;
    const PlainIteration& plain = rep.plain;
    ++spec.verification_steps;
    spec.verified_sequences += plain.sequences;
    spec.advanced_tokens += advanced;
    spec.speculative_s +=
        static_cast<long double>(rep.duration) - reloads - plain.plain_s + plain.decode_s;
    spec.plain_s += static_cast<long double>(advanced) / static_cast<long double>(plain.sequences) *
                    plain.decode_s;
    rep.plain = PlainIteration{};
  }
  for (Seq* s : finished) Finish(rep, s, now);
  rep.work.clear();
  rep.fused_steps = 0;
  rep.busy = false;
  Kick(now, r);
}

void Engine::Finish(Replica& rep, Seq* seq, Seconds now) {
  RequestRecord& rec = seq->record;
  rec.finish_s = now;
  rec.peak_kv_bytes = static_cast<Bytes>(static_cast<double>(seq->peak_tokens) *
                                         setup_.roofline.KvWriteBytesPerToken() * gpus_);
  if (!setup_.layout.Single()) {
    rec.peak_kv_bytes = seq->peak_pages * setup_.layout.page_bytes * gpus_;
  }
  const int slot = seq->task;
  TaskState& task = tasks_[slot];
  const bool has_next = static_cast<std::size_t>(seq->req + 1) < task.fed.requests.size();
  if (has_next && config_.pin_during_tool_s > 0) {
    rep.cache->ReleasePinned(seq->id);
    task.pin_replica = rep.index;
    task.pin_seq = seq->id;
    rep.pins.emplace_back(slot, seq->id);
    PushExternal(now + config_.pin_during_tool_s, PinExpiry{rep.index, seq->id, slot});
  } else {
    rep.cache->Release(seq->id);
  }
  rep.running.erase(std::find(rep.running.begin(), rep.running.end(), seq));
  Track(rep, seq, false);
  if (has_next) {
    const Request& next = task.fed.requests[static_cast<std::size_t>(seq->req + 1)];
    Seconds at = now + seq->request->tool_s;
    if (config_.release == ReleaseRule::kRecorded && next.recorded_time_s) {
      const auto& first = task.fed.requests.front().recorded_time_s;
      const Seconds offset = *next.recorded_time_s - (first ? *first : 0);
      at = std::max(now, task.arrival + offset);
    } else if (seq->request->tool_s_from_start) {
      // The recorded gap between call starts already holds this call's
      // generation: the next is sent that long after this one was, or as
      // soon as this one finishes if that is later.
      at = std::max(now, rec.release_s + seq->request->tool_s);
    }
    PushExternal(at, Release{slot, seq->req + 1});
  }
  last_finish_ = std::max(last_finish_, rec.finish_s);
  paid_ += rec.cost_usd;
  sink_.OnRequest(std::move(rec));  // the record is not read again
  // Its names are in the pool and in the task's chain now: free them, or a
  // task's finished requests hold O(turns^2) runs in all.
  seq->ForgetNames();
  free_seqs_.push_back(seq);
  if (!has_next) tasks_.Done(slot, now);
}

}  // namespace engine

Result<SimulationTotals> RunSimulation(const SimulationConfig& config, TaskFeed& feed,
                                       RecordSink& sink) {
  auto setup = engine::SetUpEngine(config);
  if (!setup) return setup.error();
  engine::Engine engine(config, std::move(*setup), feed, sink);
  return engine.Run();
}

}  // namespace kvbill
