// Shortest text that reads back as the same double ("12.5", "3", "0.1"), for
// error messages and the native writer's checks.
#ifndef KVBILL_SRC_TRACE_FORMAT_NUMBER_H_
#define KVBILL_SRC_TRACE_FORMAT_NUMBER_H_

#include <charconv>
#include <string>

namespace kvbill {

inline std::string FormatNumber(double value) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "?";
  return std::string(buf, end);
}

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_FORMAT_NUMBER_H_
