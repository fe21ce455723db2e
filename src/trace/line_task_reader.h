// The two shapes of line-based trace readers, so that each importer writes
// only how it decodes a line (private to src/trace/).
//
// StreamingLineReader: one task per line (native, Mooncake, Azure). Next()
// decodes lines until one gives a task; memory is bounded by one line. A
// format with a header line checks it first; a bad header always fails.
//
// GroupingLineReader: formats whose tasks span many lines in any order
// (sessions: Dynamo, OpenAI usage, TraceLab). The first Next() reads every
// line through ParseLine, then Build() makes all the tasks, each with the
// rows it came from (AddTask), which TraceReader::CheckTask names.
//
// Both report a bad line as "file:line: what is wrong", or count and skip it
// under ReaderOptions::skip_bad (TraceReader::SkipBadLine).
#ifndef KVBILL_SRC_TRACE_LINE_TASK_READER_H_
#define KVBILL_SRC_TRACE_LINE_TASK_READER_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "kvbill/trace/reader.h"
#include "trace/line_reader.h"

namespace kvbill {

class StreamingLineReader : public TraceReader {
 public:
  StreamingLineReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options,
                      bool has_header)
      : TraceReader(options), lines_(std::move(in), std::move(name)), header_(has_header) {}

  Result<bool> Next(Task* task) final;

 protected:
  // The first non-blank line, when the format has a header.
  virtual Status CheckHeader(const std::string& /*line*/) { return OkStatus(); }
  // One data line as a task; the error says what is wrong with the line.
  virtual Result<Task> DecodeLine(const std::string& line) = 0;

 private:
  LineReader lines_;
  bool header_;
  std::string line_;  // the buffer Next() reads lines into
};

class GroupingLineReader : public TraceReader {
 public:
  GroupingLineReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : TraceReader(options), lines_(std::move(in), std::move(name)) {}

  Result<bool> Next(Task* task) final;

 protected:
  // Records one line; the error says what is wrong with it.
  virtual Status ParseLine(const std::string& line) = 0;
  // The rows a task came from, "file:line" each: its arrival's, each
  // turn's (as many as its turns), and, when not the turn's own, the row
  // that gave each turn's tool_s (empty: the turn's).
  struct TaskRows {
    std::string arrival;
    std::vector<std::string> turns;
    std::vector<std::string> waits = {};
  };
  // Makes every task from what the lines recorded, in output order, each
  // given to AddTask.
  virtual Status Build(std::deque<Task>* tasks) = 0;
  void AddTask(std::deque<Task>* tasks, Task task, TaskRows rows);
  // The line being parsed (for "file:line" in later messages).
  const LineReader& lines() const { return lines_; }
  // "file:line" of line `line` of the input.
  std::string Where(std::int64_t line) const;

 private:
  LineReader lines_;
  bool loaded_ = false;
  std::deque<Task> tasks_;
  std::deque<TaskRows> rows_;  // of tasks_, one for one
};

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_LINE_TASK_READER_H_
