// The engine's coordinator (the one long file of the engine, as leveldb
// keeps db_impl): the event loop, tasks arriving from the feed, releases,
// pins and finishes. Batches are formed by the scheduler, fused by the step
// fuser, priced by accounting, placed by the router; the KV pool and the
// cost model are behind their own interfaces (docs/engine.md, "Where the
// code is").
//
// Contract. Events are ordered by (time, push order): an arrival is taken
// before queued events at its time; a release or a pin expiry is an
// "external" event, which bounds every replica's fused blocks, as does a
// request finishing on another replica (its release horizon). A request
// that finishes releases its task's next one (after_finish: its tool wait
// later; recorded: at its recorded time, never before) or, with pinning,
// keeps its blocks referenced until the next one is admitted or the pin
// expires. Records go to the sink in finishing order; a task is done when
// its last request finishes. The bill: replicas x GPUs x $/GPU-second x
// the last finish; idle = bill - what the requests paid.
#ifndef KVBILL_ENGINE_ENGINE_H_
#define KVBILL_ENGINE_ENGINE_H_

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <utility>
#include <variant>
#include <vector>

#include "engine/replica.h"
#include "engine/request_state.h"
#include "engine/scheduler.h"
#include "engine/setup.h"
#include "engine/step_fuser.h"
#include "engine/task_table.h"
#include "kvbill/engine/event_queue.h"
#include "kvbill/engine/router.h"
#include "kvbill/engine/simulator.h"

namespace kvbill::engine {

struct StartIteration {
  int replica;
};
struct IterationEnd {
  int replica;
};
struct Release {
  int task;  // slot in the task table
  int req;
  // Set once the request has passed the replica's API server (frontend):
  // the replica it was routed to and when the client sent it.
  int replica = -1;
  Seconds sent_s = 0;
};
struct PinExpiry {
  int replica;
  SeqId seq;
  int task;  // slot (perhaps reused since: the sequence id tells)
};
using Event = std::variant<StartIteration, IterationEnd, Release, PinExpiry>;

class Engine {
 public:
  Engine(const SimulationConfig& config, EngineSetup setup, TaskFeed& feed, RecordSink& sink)
      : config_(config),
        setup_(std::move(setup)),
        sink_(sink),
        tasks_(feed, sink, config.load, config.max_model_len, config.client_max_tasks),
        bs_(config.block_size),
        usd_per_gpu_s_(config.usd_per_gpu_hour / 3600.0),
        gpus_(config.gpus_per_replica),
        router_(MakeRouter(config.router, config.replicas, config.max_num_seqs)),
        scheduler_(
            config, *setup_.cost, setup_.roofline, [this](Seq* s) { DropPin(s); },
            [this](Replica& rep) { return YieldPin(rep); }),
        fuser_(config, *setup_.cost, setup_.roofline, setup_.layout, scheduler_) {}

  Result<SimulationTotals> Run();

 private:
  void OnArrival();
  void OnRelease(Seconds now, const Release& e);
  // The API server's own work on a request (it takes them one at a time);
  // a request that went through it (Release::replica set) also carries
  // config_.request_latency_s.
  Seconds FrontendWork(const Request& request) const;
  std::optional<Tokens> SglangPoolLimit(const KvPool& pool) const;
  void OnStart(Seconds now, int r);
  void OnEnd(Seconds now, int r);
  void OnPinExpiry(Seconds now, const PinExpiry& e);
  bool TryFuse(Replica& rep, Seconds now);
  void Finish(Replica& rep, Seq* seq, Seconds now);
  void DropPin(Seq* seq);  // the task's next request is admitted: unpin
  // Unpins the oldest live pin on the replica; false when it holds none.
  bool YieldPin(Replica& rep);
  void Kick(Seconds now, int r);
  // Sets rep.release_horizon, counting the replicas whose horizon is
  // finite: while no other replica's is, TryFuse need not scan them
  // (traces of one request per task have none).
  void SetReleaseHorizon(Replica& rep) {
    const Seconds horizon = rep.ReleaseHorizon();
    finite_horizons_ += (horizon < kNever ? 1 : 0) - (rep.release_horizon < kNever ? 1 : 0);
    rep.release_horizon = horizon;
  }
  // When seq finishing releases its task's next request: (recorded?, time
  // or tool wait); nullopt when the task ends.
  std::optional<std::pair<bool, Seconds>> NextRelease(const Seq* s) const;
  // Adds or removes a request's next release from its replica's horizon sets.
  void Track(Replica& rep, const Seq* s, bool add);
  void PushExternal(Seconds t, Event e) {
    external_.push(t);
    queue_.Push(t, std::move(e));
  }
  // What can next change a replica's batch from outside: a queued release or
  // pin expiry, or the next arrival.
  Seconds NextExternal() const {
    Seconds t = external_.empty() ? kNever : external_.top();
    if (tasks_.pending()) t = std::min(t, tasks_.pending_arrival());
    return t;
  }
  Seq* NewSeq();

  const SimulationConfig& config_;
  EngineSetup setup_;
  RecordSink& sink_;
  TaskTable tasks_;
  Tokens bs_;
  double usd_per_gpu_s_;
  int gpus_;
  std::unique_ptr<Router> router_;
  Scheduler scheduler_;
  StepFuser fuser_;
  EventQueue<Event> queue_;
  // Times of queued releases of later turns and pin expiries, a min-heap
  // (they leave in time order).
  std::priority_queue<Seconds, std::vector<Seconds>, std::greater<>> external_;
  std::vector<Replica> replicas_;
  std::vector<std::int64_t> loads_;  // the router's view
  int finite_horizons_ = 0;
  // Requests in service live here (pointers stay valid); finished ones are
  // reused, so the storage grows with the requests in flight.
  std::deque<Seq> seq_storage_;
  std::vector<Seq*> free_seqs_;
  SeqId next_seq_id_ = 0;
  // Buffers kept from call to call.
  std::vector<Work> fuse_work_;
  std::vector<ScheduledWork> iter_work_;
  std::vector<long double> iter_own_;
  std::vector<Seq*> finished_;
  std::vector<BlockRun> commit_runs_;
  // Totals, accumulated in finishing order.
  Seconds last_finish_ = 0;
  long double paid_ = 0;
  SimulationTotals totals_;
  Status error_ = OkStatus();
};

}  // namespace kvbill::engine

#endif  // KVBILL_ENGINE_ENGINE_H_
