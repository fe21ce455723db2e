// OpenTrace on a stream already open (internal): for a caller that reads
// the same bytes twice (whatif: as tasks and as usage) from one read of a
// pipe.
#ifndef KVBILL_SRC_TRACE_OPEN_TRACE_H_
#define KVBILL_SRC_TRACE_OPEN_TRACE_H_

#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/trace/importers.h"

namespace kvbill {

// As OpenTrace, reading `in` once; `name` names it in errors.
Result<std::unique_ptr<TraceReader>> OpenTraceStream(std::unique_ptr<std::istream> in,
                                                     const std::string& name,
                                                     std::optional<TraceFormat> format,
                                                     ReaderOptions options = {});

// As ReadTraceTasks, from `in`.
Result<std::vector<Task>> ReadTraceTasksFrom(std::unique_ptr<std::istream> in,
                                             const std::string& name,
                                             std::optional<TraceFormat> format,
                                             ReaderOptions options = {});

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_OPEN_TRACE_H_
