// Routers: which replica a released request goes to. Spec: docs/engine.md
// ("Routing").
//
// Contract: Route is called once per released request, in release order,
// with the requests each replica holds at that moment (running and waiting)
// and the task's sticky replica (-1 before the task's first request; the
// router may set it). It returns a replica in [0, replicas). Routers are
// deterministic: the same calls give the same answers; ties go to the lowest
// replica index.
//
//   round_robin       every request to the next replica in turn.
//   prefix_affinity   a task's first request to the next replica in turn
//                     (counting tasks), its later requests to the same one.
//   least_loaded      every request to the replica holding the fewest
//                     requests (vLLM production-stack's router without a
//                     session key routes by the lowest load; llm-d's
//                     active-request scorer counts requests in flight).
//   session_affinity  a task's requests stay on the replica that served its
//                     previous one while that replica holds fewer than
//                     `load_cap` requests; otherwise (and for a task's first
//                     request) to the least loaded one, where the session
//                     then stays (llm-d's session-affinity scorer weighed
//                     against its load-aware scorer's queue threshold;
//                     SGLang's router leaves cache affinity for the shortest
//                     queue past a balance threshold). The engine's cap is
//                     the replica's max_num_seqs: a request that would queue
//                     behind a full batch moves.
#ifndef KVBILL_ENGINE_ROUTER_H_
#define KVBILL_ENGINE_ROUTER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kvbill/util/result.h"

namespace kvbill {

enum class RouterKind { kRoundRobin, kPrefixAffinity, kLeastLoaded, kSessionAffinity };

// The scenario's name of a router ("round_robin", ...).
std::string_view RouterName(RouterKind kind);
// "round_robin|prefix_affinity|least_loaded|session_affinity".
std::string RouterChoices();
// The router called `name`. Error: unknown router "x" (one of ...).
Result<RouterKind> ParseRouterKind(std::string_view name);

class Router {
 public:
  virtual ~Router() = default;
  // The replica for a released request. `loads[r]`: requests replica r holds
  // (running and waiting); `*task_replica`: the task's sticky replica, -1
  // before its first request.
  virtual int Route(std::span<const std::int64_t> loads, int* task_replica) = 0;
};

// A router of `kind` over `replicas` (>= 1) replicas; load_cap is
// session_affinity's (>= 1).
std::unique_ptr<Router> MakeRouter(RouterKind kind, int replicas, std::int64_t load_cap);

}  // namespace kvbill

#endif  // KVBILL_ENGINE_ROUTER_H_
