#include "kvbill/trace/reader.h"

namespace kvbill {

bool TraceReader::SkipBadLine(const Error& error) {
  if (!options_.skip_bad) return false;
  ++bad_lines_.count;
  if (bad_lines_.first_messages.size() < BadLineReport::kMaxMessages) {
    bad_lines_.first_messages.push_back(error.message());
  }
  return true;
}

}  // namespace kvbill
