// LineReader: the lines of an input stream with their numbers, for readers
// whose errors must say "file:line: ...". Lines are read one at a time;
// a trailing '\r' is dropped.
#ifndef KVBILL_SRC_TRACE_LINE_READER_H_
#define KVBILL_SRC_TRACE_LINE_READER_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <utility>

#include "kvbill/util/result.h"

namespace kvbill {

class LineReader {
 public:
  LineReader(std::unique_ptr<std::istream> in, std::string name)
      : in_(std::move(in)), name_(std::move(name)) {}

  // Reads the next line that is not blank into *line. False at the end.
  // A UTF-8 byte order mark at the start of the stream (as spreadsheet
  // programs write CSV) is not part of the first line.
  bool Next(std::string* line) {
    while (std::getline(*in_, *line)) {
      ++line_number_;
      if (line_number_ == 1 && line->starts_with("\xEF\xBB\xBF")) line->erase(0, 3);
      if (!line->empty() && line->back() == '\r') line->pop_back();
      if (line->find_first_not_of(" \t") != std::string::npos) return true;
    }
    return false;
  }

  // True when the stream stopped on a read error rather than at its end.
  bool failed() const { return in_->bad(); }

  std::int64_t line_number() const { return line_number_; }
  const std::string& name() const { return name_; }

  // "name:line: what", for the line last returned by Next().
  Error At(const std::string& what) const {
    return Error(name_ + ":" + std::to_string(line_number_) + ": " + what);
  }
  Error At(const Error& error) const { return At(error.message()); }

 private:
  std::unique_ptr<std::istream> in_;
  std::string name_;
  std::int64_t line_number_ = 0;
};

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_LINE_READER_H_
