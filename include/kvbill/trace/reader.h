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
// The native format (one task per JSON line) is specified in
// docs/trace-format.md; writer.h writes it.
#ifndef KVBILL_TRACE_READER_H_
#define KVBILL_TRACE_READER_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
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

 private:
  ReaderOptions options_;
  BadLineReport bad_lines_;
};

// The first line of a native trace; readers detect the format by it.
inline constexpr char kNativeHeader[] = R"({"kvbill_trace":1})";

// Reads the native format from `in`; `name` prefixes error messages.
std::unique_ptr<TraceReader> NewNativeReader(std::unique_ptr<std::istream> in, std::string name,
                                             ReaderOptions options = {});

}  // namespace kvbill

#endif  // KVBILL_TRACE_READER_H_
