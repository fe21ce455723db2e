// The tasks in flight, and the arrivals of the next ones.
//
// Contract. Tasks come from a TaskFeed in order of arrival; the table looks
// one task ahead (the next arrival, which bounds fused blocks) and checks
// each task as it comes: its arrival since the first task's and its summed
// tool waits or recorded times within 10^9 s (31.7 years, where double
// seconds stop timing microseconds), no empty prompt. A task with no
// requests is done at once. An arrived task has a slot holding what the
// coordinator keeps of it (its requests, the router's sticky replica, the
// blocks pinned for it, its prompt chain) until Done(slot), which tells the
// sink and the feed, so that memory follows the tasks in flight. With a
// max_model_len, a task's requests end before the first whose prompt plus
// output exceeds it (refused; the ones after it never sent), counted in
// rejected() and unsent().
#ifndef KVBILL_ENGINE_TASK_TABLE_H_
#define KVBILL_ENGINE_TASK_TABLE_H_

#include <algorithm>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "engine/request_state.h"
#include "kvbill/engine/simulator.h"
#include "kvbill/util/result.h"

namespace kvbill::engine {

// What the coordinator keeps of a task in flight.
struct TaskState {
  FedTask fed;
  Seconds arrival = 0;  // since the run's start
  int replica = -1;     // the router's sticky replica
  int pin_replica = 0;  // a finished request's blocks pinned there, when pin_seq >= 0
  SeqId pin_seq = -1;
  PromptChain chain;
};

// The checks a task passes when it arrives (errors name the task).
Status CheckTimeSpan(std::string_view id, Seconds arrival, std::span<const Request> requests);
Status CheckPrompts(std::string_view id, std::span<const Request> requests);

class TaskTable {
 public:
  // `load` (> 0) divides each arrival's time since the first
  // (SimulationConfig::load); `max_model_len` (0: none) refuses requests
  // past it (SimulationConfig::max_model_len).
  // `max_in_flight` (0: none) caps the tasks arrived and not done
  // (SimulationConfig::client_max_tasks).
  TaskTable(TaskFeed& feed, RecordSink& sink, double load = 1, Tokens max_model_len = 0,
            int max_in_flight = 0)
      : feed_(feed),
        sink_(sink),
        load_(load),
        max_model_len_(max_model_len),
        max_in_flight_(max_in_flight) {}

  // Takes the next task from the feed as the pending arrival (none at the
  // end). Errors: the feed's, or the checks above.
  Status Pull();
  // A pending task that may start: there is one and the cap leaves room.
  bool pending() const { return pending_ && !held(); }
  // A pending task waits at the client because the cap is reached: only a
  // task finishing can let it start (then at that time).
  bool held() const { return pending_ && max_in_flight_ > 0 && in_flight_ >= max_in_flight_; }
  // When the pending task starts (since the start): its arrival, or when the
  // task that made room for it finished, whichever is later.
  Seconds pending_arrival() const { return std::max(pending_arrival_, freed_s_); }
  // The pending task arrives: returns its slot and pulls the next.
  Result<int> Arrive();

  TaskState& operator[](int slot) { return tasks_[static_cast<std::size_t>(slot)]; }
  const TaskState& operator[](int slot) const { return tasks_[static_cast<std::size_t>(slot)]; }
  // Every request of the task in `slot` has finished (at `now`): its slot is
  // freed.
  void Done(int slot, Seconds now);

  std::int64_t rejected() const { return rejected_; }
  std::int64_t unsent() const { return unsent_; }
  // Tasks whose first request was refused: they served nothing.
  std::int64_t unserved() const { return unserved_; }
  const std::vector<std::string>& unserved_ids() const { return unserved_ids_; }
  Tokens longest_rejected() const { return longest_rejected_; }
  // Replaces the limit with SGLang's (before the first Pull), from its
  // scheduler's max_req_len = min(context length, pool tokens) - 1 (>= 1):
  // a prompt of max_req_len - 5 tokens or more is refused
  // (max_req_input_len), and an output is cut to max_req_len - prompt - 1
  // tokens, so a request whose prompt plus output exceeds max_req_len - 1
  // is refused too (kvbill refuses what SGLang would cut short).
  void ApplySglangLimits(Tokens max_req_len) {
    max_model_len_ = std::max<Tokens>(max_req_len - 1, 1);
    max_prompt_len_ = std::max<Tokens>(max_req_len - 6, 1);
  }
  // Of the requests served (ApplyModelLimit cut the rest): edited by the
  // policy, placeholder outputs.
  std::int64_t edited() const { return edited_; }
  std::int64_t placeholders() const { return placeholders_; }
  Seconds last_arrival() const { return last_arrival_; }  // of the tasks pulled, since the first

 private:
  TaskFeed& feed_;
  RecordSink& sink_;
  double load_ = 1;
  Tokens max_model_len_ = 0;
  Tokens max_prompt_len_ = 0;  // 0: none (ApplySglangLimits)
  int max_in_flight_ = 0;
  int in_flight_ = 0;    // tasks arrived and not done
  Seconds freed_s_ = 0;  // when the cap last made room (0 without a cap)
  std::int64_t rejected_ = 0;
  std::int64_t unsent_ = 0;
  std::int64_t unserved_ = 0;
  std::vector<std::string> unserved_ids_;  // in arrival order
  Tokens longest_rejected_ = 0;
  std::int64_t edited_ = 0;
  std::int64_t placeholders_ = 0;
  Seconds last_arrival_ = 0;
  bool pending_ = false;
  FedTask pending_task_;
  Seconds pending_arrival_ = 0;
  std::optional<Seconds> origin_;  // the first task's arrival
  std::vector<TaskState> tasks_;   // slots; free ones listed in free_
  std::vector<int> free_;

  // Cuts the pending task's requests before the first over max_model_len.
  void ApplyModelLimit();
};

}  // namespace kvbill::engine

#endif  // KVBILL_ENGINE_TASK_TABLE_H_
