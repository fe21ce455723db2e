// One replica of the deployment as the engine holds it, and the work of one
// iteration on it.
//
// Contract. A replica has its KV pool (and host tier, when configured), the
// requests it runs in admission order (`running`) and those waiting in queue
// order (`waiting`), and at most one iteration in flight: `work`, one entry
// per scheduled sequence, with `fused_steps` > 0 when it is a fused block of
// decode steps. `busy` is true from the moment an iteration is due until it
// ends. The release horizon is the earliest time a request finishing here
// could release work to any replica: the iteration's natural end plus the
// smallest tool wait of the tasks served here, or their next recorded
// release; other replicas' fused blocks must not run past it.
#ifndef KVBILL_ENGINE_REPLICA_H_
#define KVBILL_ENGINE_REPLICA_H_

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "engine/request_state.h"
#include "kvbill/cache/kv_groups.h"
#include "kvbill/cache/offload_tier.h"
#include "kvbill/util/units.h"

namespace kvbill::engine {

inline constexpr Seconds kNever = std::numeric_limits<Seconds>::infinity();

// What one scheduled sequence does in an iteration (or a fused block).
struct Work {
  Seq* seq = nullptr;
  Tokens tokens = 0;         // tokens computed (a fused block: its steps)
  long double kv_read = 0;   // bytes, one GPU
  long double kv_write = 0;  // bytes, one GPU
  long double share_s = 0;   // its share of the iteration time
  long double reload_s = 0;  // host-tier reload before it runs, charged to it
  bool verify = false;       // a speculative verification step of `tokens` = k + 1
};

// An iteration with speculative verification steps as the deployment would
// run it without speculation (SpeculationTotals): `plain_s` the same work with
// every verification step a one-token decode step and no draft, `decode_s` a
// decode step of the verifying sequences alone (`sequences` of them). Zeros
// when no entry verifies.
struct PlainIteration {
  long double plain_s = 0;
  long double decode_s = 0;
  std::int64_t sequences = 0;
};

struct Replica {
  int index = 0;
  std::unique_ptr<KvPool> cache;
  std::unique_ptr<OffloadTier> offload;  // host tier, when configured
  std::vector<Seq*> running;
  std::deque<Seq*> waiting;
  // Finished requests whose blocks are pinned here (task slot, request), in
  // the order they were pinned, which is the order their pins expire;
  // entries whose pin was dropped since are skipped.
  std::deque<std::pair<int, SeqId>> pins;
  bool busy = false;  // an iteration is in flight or about to start
  // The iteration in flight.
  std::vector<Work> work;
  Tokens fused_steps = 0;  // > 0: a fused decode block of that many steps
  Seconds started = 0;
  Seconds duration = 0;
  // The iteration in flight without speculation (its verification steps as
  // decode steps), when it verifies: what SpeculationTotals compares.
  PlainIteration plain;
  // When the iteration in flight would end if no other replica limited it:
  // the earliest time this replica can finish a request and so release work.
  Seconds natural_end = 0;
  Seconds release_horizon = kNever;  // as last set by the coordinator
  // Tool waits (after_finish) and recorded release times of the next
  // requests of the tasks whose current request is here.
  std::multiset<Seconds> tool_waits;
  std::multiset<Seconds> recorded_releases;
  long double busy_s = 0;
  Seconds frontend_free_s = 0;  // when its API server is next free
  // Requests routed here still in its API server (or on the wire): the
  // router counts them, as a production router counts requests in flight.
  std::int64_t in_frontend = 0;
  // SGLang's new_token_ratio (SglangScheduling): the share of their
  // remaining output the running requests reserve at admission, set to
  // ratio_start (at the start, when idle, after a retraction) and decayed
  // by every decode batch since (counted, so that fused and single steps
  // give the same number).
  long double ratio_start = 0;
  Tokens ratio_steps = 0;

  // Requests held: running, waiting and still in the API server (what
  // routers weigh).
  std::int64_t Load() const {
    return static_cast<std::int64_t>(running.size() + waiting.size()) + in_frontend;
  }

  // The release horizon now (see above): no request here finishes before
  // natural_end; one that finishes releases its task's next request no
  // earlier than its tool wait later, or than its recorded time.
  Seconds ReleaseHorizon() const {
    Seconds horizon = kNever;
    if (!tool_waits.empty()) horizon = natural_end + *tool_waits.begin();
    if (!recorded_releases.empty()) {
      horizon = std::min(horizon, std::max(natural_end, *recorded_releases.begin()));
    }
    return horizon;
  }
};

}  // namespace kvbill::engine

#endif  // KVBILL_ENGINE_REPLICA_H_
