#include "kvbill/trace/reader.h"

#include "trace/format_number.h"
#include "util/json_input.h"

namespace kvbill {

bool TraceReader::SkipBadLine(const Error& error) {
  if (!options_.skip_bad) return false;
  ++bad_lines_.count;
  if (bad_lines_.first_messages.size() < BadLineReport::kMaxMessages) {
    bad_lines_.first_messages.push_back(error.message());
  }
  return true;
}

Result<bool> TraceReader::CheckTask(const Task& task, const std::string& arrival_row,
                                    const std::function<std::string(std::size_t turn)>& turn_row,
                                    const std::function<std::string(std::size_t turn)>& wait_row) {
  const std::string name = "task \"" + json_input::Bounded(task.id) + "\"";
  std::optional<Error> error;
  if (auto turn = CheckServable(task)) {
    const bool by_wait_row = turn->tool_wait && wait_row;
    error = turn->error.Within((by_wait_row ? wait_row : turn_row)(turn->turn) + ": " + name);
  } else if (const auto first = ids_are_row_numbers_ ? row_of_id_.end() : row_of_id_.find(task.id);
             first != row_of_id_.end()) {
    // One place for every importer: a format that gives two tasks one id
    // (a Codex session_meta id repeated, a Dynamo request_id equal to
    // another row's session_id) made a trace its own reader refused.
    error = Error(arrival_row + ": " + name + ": repeated task id (first at " + first->second +
                  "; ids are unique within a trace)");
  } else if (earliest_s_) {
    // The span of every arrival so far, with this one: a later one than the
    // latest, or an earlier one than the earliest, may widen it.
    const bool later = task.arrival_s > *latest_s_;
    const Seconds span = later ? task.arrival_s - *earliest_s_ : *latest_s_ - task.arrival_s;
    if (!(span <= kMaxSimulatedSeconds)) {
      error = Error(arrival_row + ": " + name + ": arrives " + FormatNumber(span) + " s " +
                    (later ? "after" : "before") + " task \"" +
                    json_input::Bounded(later ? earliest_id_ : latest_id_) +
                    "\", beyond the 1e9 s (31.7 years) a simulation can time");
    }
  }
  if (error) {
    if (!SkipBadLine(*error)) return *error;
    return false;
  }
  if (!ids_are_row_numbers_) row_of_id_.emplace(task.id, arrival_row);
  if (!earliest_s_ || task.arrival_s < *earliest_s_) {
    earliest_s_ = task.arrival_s;
    earliest_id_ = task.id;
  }
  if (!latest_s_ || task.arrival_s > *latest_s_) {
    latest_s_ = task.arrival_s;
    latest_id_ = task.id;
  }
  return true;
}

}  // namespace kvbill
