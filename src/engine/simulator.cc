// The engine's coordinator: event loop, per-replica scheduling, event
// skipping and accounting. docs/engine.md explains the model; the header
// states the rules this file implements.
#include "kvbill/engine/simulator.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <sstream>
#include <variant>

#include "kvbill/cache/block_hash.h"
#include "kvbill/cache/kv_groups.h"
#include "kvbill/cache/offload_tier.h"
#include "kvbill/cache/prefix_cache.h"
#include "kvbill/cost/roofline_cost_model.h"
#include "kvbill/engine/event_queue.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"

namespace kvbill {
namespace {

constexpr Seconds kNever = std::numeric_limits<Seconds>::infinity();

Tokens CeilDiv(Tokens a, Tokens b) { return (a + b - 1) / b; }

// The longest stretch of simulated time: 10^9 s (31.7 years). Times are
// doubles in seconds, whose spacing there is 1.2e-7 s, so iteration times of
// microseconds still add up; at 10^16 s the spacing is 2 s and a whole task
// would take no time at all.
constexpr Seconds kMaxSimulatedSeconds = 1e9;

// A task's arrival (after the shift to the first) and the gaps it asks for
// must stay within kMaxSimulatedSeconds.
Status CheckTimeSpan(const Task& task, Seconds arrival, const std::vector<Request>& requests) {
  auto beyond = [&](const std::string& what, Seconds s) {
    std::ostringstream text;
    text << "task \"" << task.id << "\": " << what << " " << s
         << " s is beyond the 1e9 s (31.7 years) a simulation can time";
    return Error(text.str());
  };
  if (!(arrival <= kMaxSimulatedSeconds)) return beyond("arrival", arrival);
  Seconds waits = 0;
  for (const Request& r : requests) {
    waits += r.tool_s;
    if (!(waits <= kMaxSimulatedSeconds)) return beyond("tool waits add up to", waits);
    if (r.recorded_time_s && requests.front().recorded_time_s) {
      const Seconds offset = *r.recorded_time_s - *requests.front().recorded_time_s;
      if (!(offset <= kMaxSimulatedSeconds)) return beyond("recorded time", offset);
    }
  }
  return OkStatus();
}

// One request in service.
struct Seq {
  SeqId id = 0;
  int task = 0;
  int req = 0;
  const Request* request = nullptr;
  int replica = 0;
  Tokens prompt = 0;
  Tokens output = 0;
  Tokens computed = 0;        // tokens whose KV is cached
  Tokens generated = 0;       // output tokens sampled
  Tokens prefill_target = 0;  // tokens to compute before decoding (re)starts
  bool admitted_once = false;
  bool explicit_hashes = false;
  // From the trace, when it gave block hashes.
  std::vector<BlockRun> explicit_runs;
  std::vector<std::int64_t> explicit_ends;
  RunHasher hasher{16};
  Tokens hashed_output = 0;     // output tokens appended to the hasher
  std::int64_t committed = 0;   // leading blocks committed to the cache
  Tokens peak_tokens = 0;       // most block-rounded tokens held
  std::int64_t peak_pages = 0;  // most KV pool pages held (grouped pools)
  RequestRecord record;

  bool InPrefill() const { return computed < prefill_target; }
  // Runs of the full blocks of the tokens known so far.
  BlockRunList hashes() const {
    return explicit_hashes ? BlockRunList{explicit_runs, explicit_ends} : hasher.list();
  }
};

struct StartIteration {
  int replica;
};
struct IterationEnd {
  int replica;
};
struct Release {
  int task;
  int req;
  // Set once the request has passed the replica's API server (frontend):
  // the replica it was routed to and when the client sent it.
  int replica = -1;
  Seconds sent_s = 0;
};
struct PinExpiry {
  int replica;
  SeqId seq;
};
using Event = std::variant<StartIteration, IterationEnd, Release, PinExpiry>;

// What one scheduled sequence does in an iteration (or a fused block).
struct Work {
  Seq* seq = nullptr;
  Tokens tokens = 0;         // tokens computed (per step for fused blocks: 1)
  long double kv_read = 0;   // bytes, one GPU
  long double kv_write = 0;  // bytes, one GPU
  long double share_s = 0;   // its share of the iteration time
  long double reload_s = 0;  // host-tier reload before it runs, charged to it
};

struct Replica {
  int index = 0;
  std::unique_ptr<KvPool> cache;
  std::unique_ptr<OffloadTier> offload;  // host tier, when configured
  std::vector<Seq*> running;
  std::deque<Seq*> waiting;
  bool busy = false;  // an iteration is in flight or about to start
  // The iteration in flight.
  std::vector<Work> work;
  Tokens fused_steps = 0;  // > 0: a fused decode block of that many steps
  Seconds started = 0;
  Seconds duration = 0;
  // When the iteration in flight would end if no other replica limited it:
  // the earliest time this replica can finish a request and so release work.
  Seconds natural_end = 0;
  // The earliest time a request finishing here can release work to any
  // replica: natural_end plus the smallest tool wait of its requests.
  Seconds release_horizon = kNever;
  // Tool waits (after_finish) and recorded release times of the next
  // requests of the tasks whose current request is here.
  std::multiset<Seconds> tool_waits;
  std::multiset<Seconds> recorded_releases;
  long double busy_s = 0;
  Seconds frontend_free_s = 0;  // when its API server is next free
};

class Engine {
 public:
  Engine(const SimulationConfig& config, const std::vector<Task>& tasks,
         const std::vector<std::vector<Request>>& requests, Roofline roofline,
         std::shared_ptr<const CostModel> cost, std::int64_t pool_blocks, KvGroupLayout layout)
      : config_(config),
        tasks_(tasks),
        requests_(requests),
        roofline_(std::move(roofline)),
        cost_owner_(std::move(cost)),
        cost_(cost_owner_.get()),
        pool_blocks_(pool_blocks),
        layout_(std::move(layout)),
        bs_(config.block_size),
        usd_per_gpu_s_(config.usd_per_gpu_hour / 3600.0),
        gpus_(config.gpus_per_replica) {}

  Result<SimulationResult> Run();

 private:
  void OnRelease(Seconds now, const Release& e);
  void OnStart(Seconds now, int r);
  void OnEnd(Seconds now, int r);
  Status Schedule(Replica& rep);
  bool TryFuse(Replica& rep, Seconds now);
  void Finish(Replica& rep, Seq* seq, Seconds now);
  void Preempt(Replica& rep, Seq* seq);
  void ExtendHashes(Seq* seq, Tokens tokens);
  void CommitFull(Replica& rep, Seq* seq);
  std::int64_t BlocksFor(Tokens tokens) const { return CeilDiv(tokens, bs_); }
  // How a waiting request would be admitted with `budget` tokens left: GPU
  // prefix hits, host-tier blocks worth reloading, its first chunk.
  struct Admission {
    std::span<const BlockRun> runs;  // its blocks; the first gpu_hits are the GPU hits
    std::int64_t gpu_hits = 0;
    std::int64_t host_hits = 0;
    Tokens hit_tokens = 0;
    Tokens chunk = 0;
    std::int64_t blocks_needed = 0;
    double reload_s = 0;
  };
  Admission PlanAdmission(const Replica& rep, const Seq* seq, Tokens budget) const;
  bool CanAdmit(Replica& rep, Seq* seq, Tokens budget) const;
  // The most decode steps (up to k_max) during which the pages windowed
  // groups free cannot let the waiting request in.
  Tokens StepsBeforeAdmission(Replica& rep, Tokens k_max) const;
  // Moves blocks the pool evicted into the host tier, in eviction order.
  void DrainEvictions(Replica& rep);
  Seconds ReleaseHorizon(const Replica& rep) const;
  // Sets rep.release_horizon to ReleaseHorizon(rep), counting the replicas
  // whose horizon is finite: while no other replica's is, TryFuse need not
  // scan them (traces of one request per task have none).
  void SetReleaseHorizon(Replica& rep) {
    const Seconds horizon = ReleaseHorizon(rep);
    finite_horizons_ += (horizon < kNever ? 1 : 0) - (rep.release_horizon < kNever ? 1 : 0);
    rep.release_horizon = horizon;
  }
  int finite_horizons_ = 0;
  std::optional<std::pair<bool, Seconds>> NextRelease(const Seq* s) const;
  // Adds or removes a request's next release from its replica's horizon sets.
  void Track(Replica& rep, const Seq* s, bool add);
  void Kick(Seconds now, int r);

  const SimulationConfig& config_;
  const std::vector<Task>& tasks_;
  const std::vector<std::vector<Request>>& requests_;
  Roofline roofline_;  // KV bytes read and written, for the records
  std::shared_ptr<const CostModel> cost_owner_;
  const CostModel* cost_;  // iteration times
  std::int64_t pool_blocks_;
  KvGroupLayout layout_;  // KV cache groups and page size
  Tokens bs_;
  double usd_per_gpu_s_;
  int gpus_;
  EventQueue<Event> queue_;
  Seconds now_ = 0;  // time of the event being handled
  // Tasks' first requests in arrival order (equal times in task order), fed
  // to the loop one at a time. Queuing them all at the start (as the first
  // events, so first at equal times, an order kept here) made the heap as
  // deep as the trace is long, and every push and pop pay for that.
  struct Arrival {
    Seconds time;
    int task;
  };
  std::vector<Arrival> arrivals_;
  std::size_t next_arrival_ = 0;
  // Times of queued releases of later turns and pin expiries, a min-heap
  // (they leave in time order): with the next arrival, what can change a
  // replica's batch from outside.
  std::priority_queue<Seconds, std::vector<Seconds>, std::greater<>> external_;
  void PushExternal(Seconds t, Event e) {
    external_.push(t);
    queue_.Push(t, std::move(e));
  }
  Seconds NextExternal() const {
    Seconds t = external_.empty() ? kNever : external_.top();
    if (next_arrival_ < arrivals_.size()) t = std::min(t, arrivals_[next_arrival_].time);
    return t;
  }
  std::vector<Replica> replicas_;
  // TryFuse's buffers, kept from call to call so that fusing allocates nothing.
  std::vector<Work> fuse_work_;
  std::vector<long double> fuse_kv0_, fuse_kv_slope_, fuse_own_;
  std::vector<Tokens> fuse_contexts_;
  DecodeLines fuse_lines_;
  // OnStart's buffers for one iteration.
  std::vector<ScheduledWork> iter_work_;
  std::vector<long double> iter_own_;
  std::vector<Seq*> finished_;         // OnEnd's
  std::vector<BlockRun> commit_runs_;  // CommitFull's
  std::vector<std::unique_ptr<Seq>> seqs_;
  std::vector<int> task_replica_;
  struct Pin {
    int replica = 0;
    SeqId seq = -1;
  };
  std::vector<Pin> task_pin_;
  // The hash chain of each task's latest prompt, to continue from.
  struct PromptChain {
    int request = -1;
    const Prompt* prompt = nullptr;
    RunHasher hasher{1};
  };
  std::vector<PromptChain> task_chain_;
  std::vector<Seconds> task_arrival_;
  std::int64_t next_round_robin_ = 0;
  SimulationResult result_;
  Status error_ = OkStatus();
};

Result<SimulationResult> Engine::Run() {
  replicas_.resize(static_cast<std::size_t>(config_.replicas));
  for (int i = 0; i < config_.replicas; ++i) {
    replicas_[static_cast<std::size_t>(i)].index = i;
    Replica& rep = replicas_[static_cast<std::size_t>(i)];
    rep.cache = std::make_unique<KvPool>(layout_, pool_blocks_, config_.prefix_caching);
    if (config_.offload_capacity_tokens > 0 && config_.prefix_caching) {
      rep.offload = std::make_unique<OffloadTier>(config_.offload_capacity_tokens / bs_);
      rep.cache->TrackEvictions(true);
    }
  }
  task_replica_.assign(tasks_.size(), -1);
  task_pin_.assign(tasks_.size(), Pin{});
  task_chain_.resize(tasks_.size());
  Seconds origin = kNever;
  for (const Task& t : tasks_) origin = std::min(origin, t.arrival_s);
  if (tasks_.empty()) origin = 0;
  task_arrival_.resize(tasks_.size());
  std::size_t request_count = 0;
  for (const auto& r : requests_) request_count += r.size();
  result_.requests.reserve(request_count);
  seqs_.reserve(request_count);  // one Seq per request
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    task_arrival_[i] = tasks_[i].arrival_s - origin;
    if (auto s = CheckTimeSpan(tasks_[i], task_arrival_[i], requests_[i]); !s) {
      error_ = s.error();
      break;
    }
    if (!requests_[i].empty()) arrivals_.push_back(Arrival{task_arrival_[i], static_cast<int>(i)});
  }
  std::stable_sort(arrivals_.begin(), arrivals_.end(),
                   [](const Arrival& a, const Arrival& b) { return a.time < b.time; });
  while (error_.ok()) {
    if (next_arrival_ < arrivals_.size() &&
        (queue_.empty() || arrivals_[next_arrival_].time <= queue_.NextTime())) {
      const Arrival a = arrivals_[next_arrival_++];
      now_ = a.time;
      OnRelease(now_, Release{a.task, 0});
      continue;
    }
    if (queue_.empty()) break;
    auto entry = queue_.Pop();
    const Seconds now = entry.time;
    now_ = now;
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
            Replica& rep = replicas_[static_cast<std::size_t>(e.replica)];
            const std::size_t task =
                static_cast<std::size_t>(seqs_[static_cast<std::size_t>(e.seq)]->task);
            if (task_pin_[task].seq == e.seq) {
              rep.cache->Unpin(e.seq);
              task_pin_[task].seq = -1;
            }
            Kick(now, e.replica);
          }
        },
        entry.event);
  }
  if (!error_.ok()) return error_.error();
  for (const Replica& rep : replicas_) {
    if (!rep.running.empty() || !rep.waiting.empty()) {
      const Seq* s = rep.running.empty() ? rep.waiting.front() : rep.running.front();
      return Error("internal: the simulation stopped with request " +
                   std::to_string(s->record.index) + " of task \"" + s->record.task_id +
                   "\" unserved");
    }
  }
  Seconds end = 0;
  for (const RequestRecord& r : result_.requests) end = std::max(end, r.finish_s);
  result_.simulated_s = end;
  result_.bill_usd = static_cast<long double>(end) * config_.replicas * gpus_ * usd_per_gpu_s_;
  long double paid = 0;
  for (const RequestRecord& r : result_.requests) paid += r.cost_usd;
  result_.idle_usd = result_.bill_usd - paid;
  result_.kv_pool_blocks = pool_blocks_;
  result_.cost_model = cost_->Describe();
  result_.kv_cache_groups = std::max(1, static_cast<int>(layout_.groups.size()));
  for (const Replica& rep : replicas_) {
    result_.evicted_blocks += rep.cache->stats().evicted_blocks;
    result_.busy_gpu_seconds += rep.busy_s * gpus_;
  }
  return std::move(result_);
}

void Engine::OnRelease(Seconds now, const Release& e) {
  const std::size_t t = static_cast<std::size_t>(e.task);
  const Request& request = requests_[t][static_cast<std::size_t>(e.req)];
  int r = e.replica;
  if (r < 0) {
    if (config_.router == "prefix_affinity") {
      if (task_replica_[t] < 0) {
        task_replica_[t] = static_cast<int>(next_round_robin_++ % config_.replicas);
      }
      r = task_replica_[t];
    } else {
      r = static_cast<int>(next_round_robin_++ % config_.replicas);
    }
    // The replica's API server takes requests one at a time before they
    // reach its scheduler.
    const Seconds work = config_.frontend_per_request_s +
                         config_.frontend_per_token_s * static_cast<double>(request.PromptTokens());
    if (work > 0 || config_.request_latency_s > 0) {
      Seconds& free_at = replicas_[static_cast<std::size_t>(r)].frontend_free_s;
      free_at = std::max(free_at, now) + work;
      PushExternal(free_at + config_.request_latency_s, Release{e.task, e.req, r, now});
      return;
    }
  }
  const Seconds sent = e.replica < 0 ? now : e.sent_s;
  auto seq = std::make_unique<Seq>();
  seq->id = static_cast<SeqId>(seqs_.size());
  seq->task = e.task;
  seq->req = e.req;
  seq->request = &request;
  seq->replica = r;
  seq->prompt = request.PromptTokens();
  seq->output = request.output;
  seq->prefill_target = seq->prompt;
  // Before hashing the prompt: hashing costs time and memory in proportion to
  // it, and a prompt that can never fit must fail at once, not after that.
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  const Tokens kv_tokens = seq->prompt + std::max<Tokens>(seq->output - 1, 0);
  if (rep.cache->PeakPages(kv_tokens, config_.max_num_batched_tokens) >
      rep.cache->capacity_blocks()) {
    error_ = Error("request " + std::to_string(request.index) + " of task \"" + tasks_[t].id +
                   "\" needs KV for " + FormatWithSeparators(kv_tokens) + " tokens (prompt " +
                   FormatWithSeparators(seq->prompt) +
                   " + output), more than a replica's KV pool holds (" +
                   FormatWithSeparators(rep.cache->capacity_tokens()) +
                   " tokens): use more GPUs per replica, a smaller KV format, or a context policy "
                   "that bounds the context");
    return;
  }
  seq->hasher = RunHasher(bs_);
  if (request.explicit_blocks) {
    seq->explicit_hashes =
        BlockRunsFromTrace(request.explicit_blocks->hashes, request.explicit_blocks->block_size,
                           seq->prompt, bs_, &seq->explicit_runs, &seq->explicit_ends)
            .ok();
  }
  if (!seq->explicit_hashes) {
    // An agent's next prompt usually extends the previous one: continue the
    // previous prompt's hash chain instead of rehashing the whole context
    // (the same runs, by RunHasher's contract).
    PromptChain& chain = task_chain_[t];
    std::size_t first = 0;
    if (chain.request == e.req - 1 && chain.prompt != nullptr &&
        request.prompt.StartsWith(*chain.prompt)) {
      seq->hasher = chain.hasher;
      first = chain.prompt->size();
    }
    for (std::size_t i = first; i < request.prompt.size(); ++i) {
      seq->hasher.Append(request.prompt[i].content);
    }
    const bool has_next = static_cast<std::size_t>(e.req + 1) < requests_[t].size();
    chain = has_next ? PromptChain{e.req, &request.prompt, seq->hasher} : PromptChain{};
  }
  RequestRecord& rec = seq->record;
  rec.task_id = tasks_[t].id;
  rec.task_index = e.task;
  rec.index = request.index;
  rec.turn = request.turn;
  rec.is_summary = request.is_summary;
  rec.replica = r;
  rec.release_s = sent;
  rec.prompt_tokens = seq->prompt;
  rec.output_tokens = seq->output;
  rep.waiting.push_back(seq.get());
  Track(rep, seq.get(), true);
  seqs_.push_back(std::move(seq));
  // A newcomer may have a shorter tool wait than the requests the horizon
  // was computed from.
  if (rep.busy) SetReleaseHorizon(rep);
  Kick(now, r);
}

void Engine::Kick(Seconds now, int r) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  if (rep.busy || (rep.running.empty() && rep.waiting.empty())) return;
  rep.busy = true;
  rep.natural_end = now;  // unknown until it starts: bound others conservatively
  SetReleaseHorizon(rep);
  queue_.Push(now, StartIteration{r});
}

void Engine::ExtendHashes(Seq* seq, Tokens tokens) {
  if (seq->explicit_hashes) return;
  const Tokens want_output = std::max<Tokens>(0, tokens - seq->prompt);
  if (want_output > seq->hashed_output) {
    seq->hasher.Append(ContentPiece{seq->request->output_identity, seq->hashed_output,
                                    want_output - seq->hashed_output});
    seq->hashed_output = want_output;
  }
}

void Engine::CommitFull(Replica& rep, Seq* seq) {
  ExtendHashes(seq, seq->computed);
  const std::int64_t full = std::min<std::int64_t>(seq->computed / bs_, seq->hashes().blocks());
  if (full > seq->committed) {
    commit_runs_.clear();
    seq->hashes().Slice(seq->committed, full, &commit_runs_);
    rep.cache->CommitRange(seq->id, seq->committed, commit_runs_);
  }
  seq->committed = std::max(seq->committed, full);
}

void Engine::DrainEvictions(Replica& rep) {
  if (!rep.offload) return;
  for (const std::uint64_t h : rep.cache->TakeEvictedHashes()) rep.offload->Insert(h);
}

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

Engine::Admission Engine::PlanAdmission(const Replica& rep, const Seq* seq, Tokens budget) const {
  Admission a;
  const std::int64_t max_hit = std::max<std::int64_t>(0, (seq->prefill_target - 1) / bs_);
  const BlockRunList blocks = seq->hashes();
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
      const double recompute_s = cost_->RecomputeSeconds(a.gpu_hits * bs_, tokens);
      if (reload_s < recompute_s) {
        a.host_hits = run;
        a.reload_s = reload_s;
      }
    }
  }
  a.hit_tokens = (a.gpu_hits + a.host_hits) * bs_;
  a.chunk = std::min(seq->prefill_target - a.hit_tokens, budget);
  a.blocks_needed = BlocksFor(a.hit_tokens + a.chunk);
  return a;
}

bool Engine::CanAdmit(Replica& rep, Seq* seq, Tokens budget) const {
  if (budget <= 0 || static_cast<int>(rep.running.size()) >= config_.max_num_seqs) return false;
  const Admission a = PlanAdmission(rep, seq, budget);
  return rep.cache->CanAdmit(a.runs, a.gpu_hits, a.blocks_needed);
}

Tokens Engine::StepsBeforeAdmission(Replica& rep, Tokens k_max) const {
  const Tokens budget = config_.max_num_batched_tokens - static_cast<Tokens>(rep.running.size());
  if (rep.waiting.empty() || budget <= 0 ||
      static_cast<int>(rep.running.size()) >= config_.max_num_seqs) {
    return k_max;
  }
  // Only freed pages can make room: allocations and evictions only take it.
  const Admission a = PlanAdmission(rep, rep.waiting.front(), budget);
  const std::int64_t deficit = rep.cache->AdmissionDeficit(a.runs, a.gpu_hits, a.blocks_needed);
  auto freed = [&](Tokens steps) {
    std::int64_t f = 0;
    for (Seq* s : rep.running) f += rep.cache->FreedDuring(s->id, s->computed, steps);
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

Seconds Engine::ReleaseHorizon(const Replica& rep) const {
  // No request here finishes before natural_end; one that finishes releases
  // its task's next request no earlier than its tool wait later (or, with
  // recorded releases, than the next request's recorded time).
  Seconds horizon = kNever;
  if (!rep.tool_waits.empty()) horizon = rep.natural_end + *rep.tool_waits.begin();
  if (!rep.recorded_releases.empty()) {
    horizon = std::min(horizon, std::max(rep.natural_end, *rep.recorded_releases.begin()));
  }
  return horizon;
}

// When a request served here finishing would release its task's next request:
// a tool wait after the finish, or a recorded time. nullopt: the task ends.
std::optional<std::pair<bool, Seconds>> Engine::NextRelease(const Seq* s) const {
  const std::size_t t = static_cast<std::size_t>(s->task);
  const std::size_t next = static_cast<std::size_t>(s->req + 1);
  if (next >= requests_[t].size()) return std::nullopt;
  if (config_.release == "recorded" && requests_[t][next].recorded_time_s) {
    const auto& first = requests_[t].front().recorded_time_s;
    return std::make_pair(
        true, task_arrival_[t] + *requests_[t][next].recorded_time_s - (first ? *first : 0));
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

void Engine::Preempt(Replica& rep, Seq* seq) {
  rep.cache->Release(seq->id);
  seq->computed = 0;
  seq->committed = 0;
  seq->prefill_target = seq->generated > 0 ? seq->prompt + seq->generated - 1 : seq->prompt;
  ExtendHashes(seq, seq->prefill_target);
  seq->record.preemptions += 1;
  rep.running.erase(std::find(rep.running.begin(), rep.running.end(), seq));
  rep.waiting.push_front(seq);
}

Status Engine::Schedule(Replica& rep) {
  rep.work.clear();
  rep.fused_steps = 0;
  Tokens budget = config_.max_num_batched_tokens;
  bool preempted = false;
  for (std::size_t i = 0; i < rep.running.size() && budget > 0;) {
    Seq* seq = rep.running[i];
    const Tokens n = seq->InPrefill() ? std::min(seq->prefill_target - seq->computed, budget) : 1;
    bool ok = rep.cache->Reserve(seq->id, seq->computed, seq->computed + n);
    while (!ok) {
      Seq* victim = rep.running.back();
      Preempt(rep, victim);
      preempted = true;
      if (victim == seq) break;
      ok = rep.cache->Reserve(seq->id, seq->computed, seq->computed + n);
    }
    if (!ok) break;  // preempted itself: nothing further in running
    rep.work.push_back(Work{seq, n, 0, 0, 0});
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
      HostRun(*rep.offload, seq->hashes(), a.gpu_hits, a.gpu_hits + a.host_hits, &reloaded);
      rep.offload->Touch(reloaded, 0, a.host_hits);
      CommitFull(rep, seq);  // reloaded blocks are full and findable again
    }
    if (!seq->admitted_once) {
      seq->admitted_once = true;
      seq->record.cached_tokens = seq->computed;
      seq->record.offload_hit_tokens = a.host_hits * bs_;
      seq->record.admitted_s = now_;
      // The task's previous request may still hold pinned blocks: drop them
      // now that this request holds its hits.
      auto& pin = task_pin_[static_cast<std::size_t>(seq->task)];
      if (pin.seq >= 0) {
        replicas_[static_cast<std::size_t>(pin.replica)].cache->Unpin(pin.seq);
        pin.seq = -1;
      }
    }
    rep.running.push_back(seq);
    rep.work.push_back(Work{seq, n, 0, 0, 0, a.reload_s});
    budget -= n;
  }
  return OkStatus();
}

// Fuses decode steps when the batch cannot change before the next event.
bool Engine::TryFuse(Replica& rep, Seconds now) {
  if (config_.step_mode || rep.running.empty()) return false;
  const Tokens batch = static_cast<Tokens>(rep.running.size());
  if (batch > config_.max_num_batched_tokens) return false;
  for (Seq* s : rep.running) {
    if (s->InPrefill() || s->generated >= s->output) return false;
  }
  if (!rep.waiting.empty() &&
      CanAdmit(rep, rep.waiting.front(), config_.max_num_batched_tokens - batch)) {
    return false;
  }
  // Steps until the first sequence has all its output.
  Tokens k_max = kNoBreak;
  for (Seq* s : rep.running) k_max = std::min(k_max, s->output - s->generated);
  // Steps the free blocks allow: step k needs ceil((c + k + 1) / bs) blocks.
  const std::int64_t free = rep.cache->free_blocks();
  auto demand = [&](Tokens steps) {
    std::int64_t d = 0;
    for (Seq* s : rep.running) d += rep.cache->DecodeDemand(s->id, s->computed, steps);
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
  if (k_max < 2) return false;
  // Sums up to k_max steps, stopping at the first step that ends at or after
  // `bound`; fills per-sequence accounting in *work.
  auto sum_steps = [&](Seconds next_event, std::vector<Work>* out, long double* out_elapsed) {
    // Sum the steps line by line: the cost model gives step time (and each
    // sequence's own time) as lines in the step index; within a line every
    // sequence's KV read is linear in the step index too (a line never
    // crosses a KV breakpoint).
    const long double write = roofline_.KvWriteBytesPerToken();
    std::vector<Work>& work = *out;
    work.clear();
    for (Seq* s : rep.running) work.push_back(Work{s, 1, 0, 0, 0});
    long double elapsed = 0;
    Tokens done = 0;
    bool stop = false;
    std::vector<long double>& kv0 = fuse_kv0_;
    std::vector<long double>& kv_slope = fuse_kv_slope_;
    std::vector<Tokens>& contexts = fuse_contexts_;
    kv0.resize(work.size());
    kv_slope.resize(work.size());
    contexts.resize(work.size());
    const std::size_t n_seqs = work.size();
    while (done < k_max && !stop) {
      for (std::size_t i = 0; i < n_seqs; ++i) {
        const Tokens c = work[i].seq->computed + done;
        contexts[i] = c;
        kv0[i] = roofline_.KvReadBytes(c);
        kv_slope[i] = roofline_.KvPiece(c).slope;
      }
      cost_->DecodeLinesFor(contexts, k_max - done, &fuse_lines_);
      const std::vector<StepLine>& lines = fuse_lines_.lines;
      for (std::size_t p = 0; p < lines.size() && !stop; ++p) {
        const Tokens j0 = lines[p].begin, j1 = lines[p].end;
        const long double t0 = lines[p].t0, t1 = lines[p].t1;
        auto sum_t = [&](Tokens from, Tokens to) {  // sum of t(j), j in [from, to)
          const long double n = static_cast<long double>(to - from);
          return t0 * n + t1 * (static_cast<long double>(from + to - 1) * n / 2);
        };
        Tokens end = j1;
        if (next_event < kNever) {
          // Smallest m in (j0, j1] with now + elapsed + sum_t(j0, m) >= next_event.
          const long double need = static_cast<long double>(next_event - now) - elapsed;
          if (sum_t(j0, j1) >= need) {
            Tokens lo = j0, hi = j1;  // sum(j0, lo) < need <= sum(j0, hi)
            while (hi - lo > 1) {
              const Tokens mid = lo + (hi - lo) / 2;
              (sum_t(j0, mid) >= need ? hi : lo) = mid;
            }
            end = std::max(hi, j0 + 1);
            stop = true;
          }
        }
        const long double n = static_cast<long double>(end - j0);
        const long double sum_j = static_cast<long double>(j0 + end - 1) * n / 2;
        const long double piece_t = sum_t(j0, end);
        long double own_total = 0;
        std::vector<long double>& own = fuse_own_;
        own.resize(n_seqs);
        const long double* own0 = fuse_lines_.own0.data() + p * n_seqs;
        const long double* own1 = fuse_lines_.own1.data() + p * n_seqs;
        for (std::size_t i = 0; i < n_seqs; ++i) {
          work[i].kv_read += kv0[i] * n + kv_slope[i] * sum_j;
          work[i].kv_write += write * n;
          own[i] = own0[i] * n + own1[i] * sum_j;
          own_total += own[i];
        }
        const long double rest = (piece_t - own_total) / static_cast<long double>(batch);
        for (std::size_t i = 0; i < n_seqs; ++i) work[i].share_s += own[i] + rest;
        elapsed += piece_t;
        done += end - j0;
        if (end < j1) stop = true;
      }
    }
    *out_elapsed = elapsed;
    return done;
  };
  // The natural block: limited only by what can reach this replica from
  // outside (releases, pin expiries). Its end is the earliest time this
  // replica can finish a request, which bounds the other replicas' blocks.
  const Seconds external = NextExternal();
  std::vector<Work>& work = fuse_work_;
  long double elapsed = 0;
  Tokens done = sum_steps(external, &work, &elapsed);
  rep.natural_end = now + static_cast<Seconds>(elapsed);
  SetReleaseHorizon(rep);
  Seconds others = kNever;
  if (finite_horizons_ > (rep.release_horizon < kNever ? 1 : 0)) {  // else all are kNever
    for (const Replica& other : replicas_) {
      if (&other != &rep && other.busy) others = std::min(others, other.release_horizon);
    }
  }
  if (others < rep.natural_end) done = sum_steps(std::min(external, others), &work, &elapsed);
  if (done < 2) return false;
  rep.fused_steps = done;
  std::vector<DecodingSeq> decoding;
  for (Work& w : work) {
    w.tokens = done;
    if (layout_.Windowed()) {
      ExtendHashes(w.seq, w.seq->computed + done);  // commits before frees
      w.seq->peak_pages =
          std::max(w.seq->peak_pages, rep.cache->PeakPagesDuring(w.seq->id, w.seq->computed, done));
    }
    decoding.push_back(DecodingSeq{w.seq->id, w.seq->computed, w.seq->hashes()});
  }
  rep.cache->AdvanceDecode(decoding, done);
  rep.work.swap(work);  // both buffers are kept for reuse
  rep.duration = static_cast<Seconds>(elapsed);
  return true;
}

void Engine::OnStart(Seconds now, int r) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  rep.started = now;
  if (!TryFuse(rep, now)) {
    if (auto s = Schedule(rep); !s.ok()) {
      error_ = s;
      return;
    }
    if (rep.work.empty()) {
      rep.busy = false;
      return;
    }
    // One iteration: the cost model prices it; KV bytes are the records'.
    std::vector<ScheduledWork>& sched = iter_work_;
    std::vector<long double>& own = iter_own_;
    sched.clear();
    Tokens tokens = 0;
    for (Work& w : rep.work) {
      const Tokens c = w.seq->computed;
      sched.push_back(ScheduledWork{c, w.tokens, w.seq->InPrefill()});
      tokens += w.tokens;
      w.kv_read = roofline_.KvReadBytes(c);
      w.kv_write = static_cast<long double>(roofline_.KvWriteBytesPerToken()) *
                   static_cast<long double>(w.tokens);
    }
    own.assign(sched.size(), 0);
    const long double t = cost_->IterationSeconds(sched, own);
    long double own_total = 0;
    for (long double o : own) own_total += o;
    long double reload = 0;
    for (std::size_t i = 0; i < rep.work.size(); ++i) {
      Work& w = rep.work[i];
      w.share_s =
          own[i] +
          (t - own_total) * static_cast<long double>(w.tokens) / static_cast<long double>(tokens) +
          w.reload_s;
      reload += w.reload_s;
    }
    rep.duration = static_cast<Seconds>(t + reload);
    rep.natural_end = now + rep.duration;
    SetReleaseHorizon(rep);
  }
  DrainEvictions(rep);
  queue_.Push(now + rep.duration, IterationEnd{r});
}

void Engine::OnEnd(Seconds now, int r) {
  Replica& rep = replicas_[static_cast<std::size_t>(r)];
  result_.iterations += rep.fused_steps > 0 ? rep.fused_steps : 1;
  result_.steps_advanced += 1;
  rep.busy_s += rep.duration;
  std::vector<Seq*>& finished = finished_;
  finished.clear();
  const long double gpus = gpus_;
  for (Work& w : rep.work) {
    Seq* s = w.seq;
    RequestRecord& rec = s->record;
    rec.kv_read_bytes += w.kv_read * gpus;
    rec.kv_written_bytes += w.kv_write * gpus;
    rec.gpu_seconds += w.share_s * gpus;
    rec.cost_usd += w.share_s * gpus * usd_per_gpu_s_;
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
    } else {
      s->computed += 1;
      s->generated += 1;
    }
    CommitFull(rep, s);
    s->peak_tokens = std::max<Tokens>(s->peak_tokens, rep.cache->BlocksOf(s->id) * bs_);
    s->peak_pages = std::max(s->peak_pages, rep.cache->PagesOf(s->id));
    if (!s->InPrefill() && s->generated >= s->output) finished.push_back(s);
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
                                         roofline_.KvWriteBytesPerToken() * gpus_);
  if (!layout_.Single()) rec.peak_kv_bytes = seq->peak_pages * layout_.page_bytes * gpus_;
  const std::size_t t = static_cast<std::size_t>(seq->task);
  const bool has_next = static_cast<std::size_t>(seq->req + 1) < requests_[t].size();
  if (has_next && config_.pin_during_tool_s > 0) {
    rep.cache->ReleasePinned(seq->id);
    task_pin_[t] = Pin{rep.index, seq->id};
    PushExternal(now + config_.pin_during_tool_s, PinExpiry{rep.index, seq->id});
  } else {
    rep.cache->Release(seq->id);
  }
  rep.running.erase(std::find(rep.running.begin(), rep.running.end(), seq));
  Track(rep, seq, false);
  if (has_next) {
    const Request& next = requests_[t][static_cast<std::size_t>(seq->req + 1)];
    Seconds at = now + seq->request->tool_s;
    if (config_.release == "recorded" && next.recorded_time_s) {
      const auto& first = requests_[t].front().recorded_time_s;
      const Seconds offset = *next.recorded_time_s - (first ? *first : 0);
      at = std::max(now, task_arrival_[t] + offset);
    }
    PushExternal(at, Release{seq->task, seq->req + 1});
  }
  result_.requests.push_back(std::move(rec));  // the record is not read again
  // Its hashes are in the cache and in the task's chain now: free them, or
  // a task's finished requests hold O(turns^2) hashes in all.
  seq->hasher = RunHasher(1);
  seq->explicit_runs = {};
  seq->explicit_ends = {};
}

}  // namespace

Result<SimulationResult> Simulate(const SimulationConfig& config, const std::vector<Task>& tasks,
                                  const std::vector<std::vector<Request>>& requests) {
  if (tasks.size() != requests.size()) return Error("internal: tasks and requests differ in size");
  if (config.replicas < 1 || config.gpus_per_replica < 1) {
    return Error("replicas and gpus_per_replica must be at least 1");
  }
  if (config.block_size < 1) return Error("block_size must be at least 1");
  for (std::size_t t = 0; t < requests.size(); ++t) {
    for (const Request& r : requests[t]) {
      if (r.PromptTokens() < 1) {
        return Error("task \"" + tasks[t].id + "\": request " + std::to_string(r.index) +
                     " has an empty prompt");
      }
    }
  }
  RooflineParams params = config.roofline;
  params.tensor_parallel = config.gpus_per_replica;
  auto roofline =
      Roofline::Make(config.model, config.kv_format, config.weight_format, config.gpu, params);
  if (!roofline) return roofline.error();
  // The KV pool: what is left of the memory fraction after weights, in
  // pages of one KV cache group (kv_groups.h); with one group a page is the
  // block of every per-token layer.
  KvGroupLayout layout =
      MakeKvGroupLayout(config.model, config.kv_format, config.gpus_per_replica, config.block_size);
  if (layout.groups.size() > 254) {
    return Error("the model has " + std::to_string(layout.groups.size()) +
                 " KV cache groups; the engine supports at most 254");
  }
  if (layout.state_bytes > 0 && config.prefix_caching) {
    return Error("model \"" + config.model.name +
                 "\" has constant-state (SSM / linear attention / short convolution) layers, whose "
                 "state a block prefix cache cannot reuse (vLLM serves such models without "
                 "prefix caching unless opted in): set prefix_cache.enabled to false");
  }
  if (layout.Windowed() && config.offload_capacity_tokens > 0 && config.prefix_caching) {
    return Error(
        "the host offload tier (prefix_cache.offload) is not modelled for models with "
        "sliding-window or chunked attention layers");
  }
  auto weights = ComputeWeightBytes(config.model, config.weight_format);
  if (!weights) return weights.error();
  const int tp = config.gpus_per_replica;
  const long double capacity = std::floor(static_cast<long double>(config.gpu.usable_memory_bytes) *
                                          config.memory_fraction) -
                               config.activation_reserve_gib * kBytesPerGiB;
  const long double weights_per_gpu = CeilDiv(weights->total, tp);
  const long double block_bytes =
      static_cast<long double>(roofline->KvWriteBytesPerToken()) * config.block_size;
  std::int64_t pool = 0;
  if (config.capacity_tokens == kUnlimitedTokens) {
    pool = kUnlimitedBlocks;
  } else if (config.capacity_tokens > 0) {
    // Tokens of sequences that keep every block of every group.
    pool = CeilDiv(config.capacity_tokens, config.block_size) *
           std::max<std::int64_t>(1, std::ssize(layout.groups));
  } else {
    if (capacity <= weights_per_gpu) {
      return Error("the model's weights (" +
                   FormatBinaryBytes(static_cast<double>(weights_per_gpu)) +
                   " per GPU) leave no room for KV in " +
                   FormatBinaryBytes(static_cast<double>(capacity)) + " per GPU");
    }
    pool = block_bytes > 0 ? static_cast<std::int64_t>((capacity - weights_per_gpu) / block_bytes)
                           : kUnlimitedBlocks;
    if (!layout.Single()) {
      pool = layout.page_bytes > 0
                 ? static_cast<std::int64_t>((capacity - weights_per_gpu) /
                                             static_cast<long double>(layout.page_bytes))
                 : kUnlimitedBlocks;
    }
  }
  std::shared_ptr<const CostModel> cost = config.cost_model;
  if (!cost) cost = std::make_shared<RooflineCostModel>(*roofline);
  Engine engine(config, tasks, requests, std::move(*roofline), std::move(cost), pool,
                std::move(layout));
  return engine.Run();
}

}  // namespace kvbill
