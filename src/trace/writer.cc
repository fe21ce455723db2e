#include "kvbill/trace/writer.h"

#include "kvbill/trace/reader.h"
#include "trace/native_codec.h"

namespace kvbill {

TraceWriter::TraceWriter(std::ostream* out) : out_(out) { *out_ << kNativeHeader << '\n'; }

Status TraceWriter::Write(const Task& task) {
  if (task.id.empty()) return Error("a task needs a non-empty id");
  if (auto valid = ValidateTask(task); !valid) {
    return valid.error().Within("task \"" + task.id + "\"");
  }
  *out_ << EncodeTask(task) << '\n';
  if (!*out_) return Error("write failed");
  return OkStatus();
}

}  // namespace kvbill
