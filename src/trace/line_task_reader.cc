#include "trace/line_task_reader.h"

namespace kvbill {

Result<bool> StreamingLineReader::Next(Task* task) {
  std::string& line = line_;  // reused: no allocation per line once it is long enough
  while (lines_.Next(&line)) {
    if (header_) {
      header_ = false;
      if (auto s = CheckHeader(line); !s) return lines_.At(s.error());
      continue;
    }
    auto decoded = DecodeLine(line);
    if (decoded) {
      *task = std::move(*decoded);
      return true;
    }
    const Error error = lines_.At(decoded.error());
    if (!SkipBadLine(error)) return error;
  }
  if (lines_.failed()) return Error(lines_.name() + ": read failed");
  return false;
}

Result<bool> GroupingLineReader::Next(Task* task) {
  if (!loaded_) {
    loaded_ = true;
    std::string line;
    while (lines_.Next(&line)) {
      if (auto s = ParseLine(line); !s) {
        const Error error = lines_.At(s.error());
        if (!SkipBadLine(error)) return error;
      }
    }
    if (lines_.failed()) return Error(lines_.name() + ": read failed");
    if (auto s = Build(&tasks_); !s) return s.error();
  }
  if (tasks_.empty()) return false;
  *task = std::move(tasks_.front());
  tasks_.pop_front();
  return true;
}

}  // namespace kvbill
