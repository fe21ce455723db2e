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
      auto keep = CheckTask(*decoded, lines_.name() + ":" + std::to_string(lines_.line_number()));
      if (!keep) return keep.error();
      if (!*keep) continue;
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
  return PopChecked(
      &tasks_, &rows_,
      [this](const Task& t, const TaskRows& rows) {
        return CheckTask(
            t, rows.arrival, [&rows](std::size_t turn) { return rows.turns[turn]; },
            [&rows](std::size_t turn) {
              return rows.waits.empty() ? rows.turns[turn] : rows.waits[turn];
            });
      },
      task);
}

std::string GroupingLineReader::Where(std::int64_t line) const {
  return lines_.name() + ":" + std::to_string(line);
}

void GroupingLineReader::AddTask(std::deque<Task>* tasks, Task task, TaskRows rows) {
  tasks->push_back(std::move(task));
  rows_.push_back(std::move(rows));
}

}  // namespace kvbill
