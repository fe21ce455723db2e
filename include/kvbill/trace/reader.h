// TraceReader: a stream of tasks, one at a time.
//
// Contract: Next() fills *task with the next task and returns true, returns
// false at the end, or returns an Error that names the input and line
// ("trace.jsonl:42: task \"s1\": turn 3: ...") and ends the stream. Readers of
// line-per-task formats hold one task in memory, never the whole file; the
// importers that must group rows by session say so in importers.h.
//
// With ReaderOptions::skip_bad a malformed line is counted in bad_lines() and
// skipped instead of ending the stream; errors that are not about one line
// (an unreadable file) still end it.
//
// Every reader returns only tasks a simulation can take: each passes
// CheckServable (trace.h: no empty prompt, recorded times and summed tool
// waits within 10^9 s), its id is not the id of a task returned before it
// (ids are unique within a trace: docs/trace-format.md), and its arrival is
// within 10^9 s of every task's returned before it. A task that fails is an
// error at the row of the turn at fault (the arrival's: its first turn's),
// "trace.jsonl:3: task \"b\": arrives 2e+09 s after task \"a\", beyond the
// 1e9 s (31.7 years) a simulation can time", "trace.jsonl:9: task \"a\":
// repeated task id (first at trace.jsonl:2; ids are unique within a
// trace)", or a bad line under skip_bad.
//
// The native format (one task per JSON line) is specified in
// docs/trace-format.md; writer.h writes it.
#ifndef KVBILL_TRACE_READER_H_
#define KVBILL_TRACE_READER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvbill/trace/trace.h"
#include "kvbill/util/result.h"

namespace kvbill {

struct ReaderOptions {
  // Count and skip malformed lines instead of failing on the first one.
  bool skip_bad = false;
};

// The lines a reader skipped under ReaderOptions::skip_bad.
struct BadLineReport {
  static constexpr std::size_t kMaxMessages = 10;

  std::int64_t count = 0;
  std::vector<std::string> first_messages;  // at most kMaxMessages, "file:line: ..."
};

class TraceReader {
 public:
  explicit TraceReader(ReaderOptions options) : options_(options) {}
  virtual ~TraceReader() = default;
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  // See the contract above. Precondition: task != nullptr.
  virtual Result<bool> Next(Task* task) = 0;

  const BadLineReport& bad_lines() const { return bad_lines_; }

 protected:
  // Records `error` and returns true when bad lines are skipped; returns false
  // when the caller must fail with it.
  bool SkipBadLine(const Error& error);

  // For readers that name each task by its row number (Mooncake, Azure):
  // their ids cannot repeat, so CheckTask keeps no map of them (a
  // 3-million-row Mooncake trace would hold hundreds of MB of ids).
  void IdsAreRowNumbers() { ids_are_row_numbers_ = true; }

  // The checks of the contract above, made on each task before it is
  // returned. `turn_row(k)` names the row of turn k ("file:line"),
  // `arrival_row` the row that gave the arrival, `wait_row(k)` (when given;
  // else turn_row) the row that gave turn k's tool_s. Returns true to return the
  // task; false when it failed and bad lines are skipped (counted; the task
  // is dropped and its arrival forgotten); or the error, "ROW: task \"id\":
  // ...".
  Result<bool> CheckTask(const Task& task, const std::string& arrival_row,
                         const std::function<std::string(std::size_t turn)>& turn_row,
                         const std::function<std::string(std::size_t turn)>& wait_row = {});
  // The same for a task read from one row.
  Result<bool> CheckTask(const Task& task, const std::string& row) {
    return CheckTask(task, row, [&row](std::size_t) { return row; });
  }
  // For readers that build their tasks before returning them: pops tasks
  // (with their rows, one for one) until one passes `check(task, rows)` (a
  // CheckTask verdict), moved to *task; false when none is left.
  template <typename Rows, typename Check>
  Result<bool> PopChecked(std::deque<Task>* tasks, std::deque<Rows>* rows, Check check,
                          Task* task) {
    while (!tasks->empty()) {
      const Rows front = std::move(rows->front());
      rows->pop_front();
      const Result<bool> keep = check(tasks->front(), front);
      if (!keep) return keep.error();
      const bool kept = *keep;
      if (kept) *task = std::move(tasks->front());
      tasks->pop_front();
      if (kept) return true;
    }
    return false;
  }

 private:
  ReaderOptions options_;
  BadLineReport bad_lines_;
  // The arrival row of each task returned, by id (empty when ids are row
  // numbers: ids_are_row_numbers_).
  std::unordered_map<std::string, std::string> row_of_id_;
  bool ids_are_row_numbers_ = false;
  // The earliest and latest arrivals returned, and their tasks' ids.
  std::optional<Seconds> earliest_s_, latest_s_;
  std::string earliest_id_, latest_id_;
};

// The first line of a native trace; readers detect the format by it.
inline constexpr char kNativeHeader[] = R"({"kvbill_trace":1})";

// Reads the native format from `in`; `name` prefixes error messages.
std::unique_ptr<TraceReader> NewNativeReader(std::unique_ptr<std::istream> in, std::string name,
                                             ReaderOptions options = {});

}  // namespace kvbill

#endif  // KVBILL_TRACE_READER_H_
