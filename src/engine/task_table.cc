#include "engine/task_table.h"

#include <algorithm>
#include <sstream>
#include <string>

namespace kvbill::engine {

Status CheckTimeSpan(std::string_view id, Seconds arrival, std::span<const Request> requests) {
  // Trace readers hold tasks to the same limit (trace.h CheckServable), naming
  // the row; a generated trace, a load that stretches arrivals or a policy's
  // plan is checked only here.
  auto beyond = [&](const std::string& what) {
    return Error("task \"" + std::string(id) + "\": " + what +
                 ", beyond the 1e9 s (31.7 years) a simulation can time");
  };
  auto seconds = [](Seconds s) {
    std::ostringstream text;
    text << s << " s";
    return text.str();
  };
  if (!(arrival <= kMaxSimulatedSeconds)) return beyond("arrival " + seconds(arrival));
  Seconds waits = 0;
  for (const Request& r : requests) {
    waits += r.tool_s;
    if (!(waits <= kMaxSimulatedSeconds)) {
      return beyond("the tool waits add up to " + seconds(waits));
    }
    if (r.recorded_time_s && requests.front().recorded_time_s) {
      const Seconds offset = *r.recorded_time_s - *requests.front().recorded_time_s;
      if (!(offset <= kMaxSimulatedSeconds)) {
        return beyond("a recorded time " + seconds(offset) + " after the first request's");
      }
    }
  }
  return OkStatus();
}

Status CheckPrompts(std::string_view id, std::span<const Request> requests) {
  for (const Request& r : requests) {
    if (r.PromptTokens() < 1) {
      return Error("task \"" + std::string(id) + "\": turn " + std::to_string(r.turn + 1) +
                   ": an empty prompt (0 tokens; a request sends at least one)");
    }
  }
  return OkStatus();
}

Status TaskTable::Pull() {
  while (true) {
    auto more = feed_.Next(&pending_task_);
    if (!more) return more.error();
    pending_ = *more;
    if (!pending_) return OkStatus();
    if (!origin_) origin_ = pending_task_.arrival_s;
    pending_arrival_ = (pending_task_.arrival_s - *origin_) / load_;
    last_arrival_ = std::max(last_arrival_, pending_arrival_);
    if (auto s = CheckTimeSpan(pending_task_.id, pending_arrival_, pending_task_.requests); !s) {
      return s;
    }
    if (auto s = CheckPrompts(pending_task_.id, pending_task_.requests); !s) return s;
    ApplyModelLimit();
    if (!pending_task_.requests.empty()) return OkStatus();
    sink_.OnTaskDone(pending_task_.index);  // nothing to serve
    feed_.Done(pending_task_.index);
  }
}

void TaskTable::ApplyModelLimit() {
  std::span<const Request> requests = pending_task_.requests;
  for (std::size_t i = 0; max_model_len_ > 0 && i < requests.size(); ++i) {
    const Tokens prompt = requests[i].PromptTokens();
    const Tokens length = prompt + requests[i].output;
    if (length <= max_model_len_ && (max_prompt_len_ <= 0 || prompt <= max_prompt_len_)) continue;
    rejected_ += 1;
    if (i == 0) {
      ++unserved_;
      unserved_ids_.emplace_back(pending_task_.id);
    }
    unsent_ += static_cast<std::int64_t>(requests.size() - i - 1);
    longest_rejected_ = std::max(longest_rejected_, length);
    sink_.OnTaskCut(pending_task_.index, static_cast<int>(requests.size() - i));
    pending_task_.requests = requests.first(i);
    break;
  }
  // Edits and placeholders of the requests served: a policy that changes
  // only prompts after a refused request changed nothing that ran.
  for (const Request& r : pending_task_.requests) {
    edited_ += r.edited ? 1 : 0;
    placeholders_ += r.output_is_placeholder ? 1 : 0;
  }
}

Result<int> TaskTable::Arrive() {
  int slot = 0;
  if (free_.empty()) {
    slot = static_cast<int>(tasks_.size());
    tasks_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  TaskState& task = (*this)[slot];
  task = TaskState{};
  task.fed = pending_task_;
  task.arrival = pending_arrival();
  ++in_flight_;
  if (auto s = Pull(); !s) return s.error();
  return slot;
}

void TaskTable::Done(int slot, Seconds now) {
  TaskState& task = (*this)[slot];
  --in_flight_;
  if (max_in_flight_ > 0) freed_s_ = now;
  sink_.OnTaskDone(task.fed.index);
  feed_.Done(task.fed.index);
  task = TaskState{};
  free_.push_back(slot);
}

}  // namespace kvbill::engine
