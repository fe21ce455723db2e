// A discrete-event queue ordered by (time, sequence number): events at the
// same time leave in the order they were pushed. Time never runs backwards:
// pushing an event earlier than the last one popped is a programming error
// (asserted). Events are typed values (std::variant), never void*.
#ifndef KVBILL_ENGINE_EVENT_QUEUE_H_
#define KVBILL_ENGINE_EVENT_QUEUE_H_

#include <cassert>
#include <cstdint>
#include <queue>
#include <vector>

#include "kvbill/util/units.h"

namespace kvbill {

template <typename Event>
class EventQueue {
 public:
  struct Entry {
    Seconds time;
    std::uint64_t seq;
    Event event;
  };

  void Push(Seconds time, Event event) {
    assert(time >= now_);
    heap_.push(Entry{time, next_seq_++, std::move(event)});
  }
  bool empty() const { return heap_.empty(); }
  // Precondition: !empty().
  Seconds NextTime() const { return heap_.top().time; }
  Entry Pop() {
    Entry e = heap_.top();
    heap_.pop();
    now_ = e.time;
    return e;
  }
  Seconds now() const { return now_; }

 private:
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;
  std::uint64_t next_seq_ = 0;
  Seconds now_ = 0;
};

}  // namespace kvbill

#endif  // KVBILL_ENGINE_EVENT_QUEUE_H_
