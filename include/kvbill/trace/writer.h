// TraceWriter: writes tasks in the native format (docs/trace-format.md).
//
// The header line is written on construction, then one line per Write().
// Output is deterministic (keys in a fixed order, doubles in their shortest
// round-trip form), so reading it back gives tasks equal to those written.
#ifndef KVBILL_TRACE_WRITER_H_
#define KVBILL_TRACE_WRITER_H_

#include <ostream>

#include "kvbill/trace/trace.h"
#include "kvbill/util/result.h"

namespace kvbill {

class TraceWriter {
 public:
  // Writes the header line to `out`, which must outlive the writer.
  explicit TraceWriter(std::ostream* out);

  // Appends one task. Fails when the task breaks ValidateTask (the error
  // names the task id) or the stream fails.
  Status Write(const Task& task);

 private:
  std::ostream* out_;
};

}  // namespace kvbill

#endif  // KVBILL_TRACE_WRITER_H_
