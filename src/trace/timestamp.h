// Calendar timestamps of imported traces, as seconds since the Unix epoch.
#ifndef KVBILL_SRC_TRACE_TIMESTAMP_H_
#define KVBILL_SRC_TRACE_TIMESTAMP_H_

#include <compare>
#include <cstdint>
#include <string_view>

#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

// A calendar time in whole nanoseconds since the Unix epoch, so that
// differences of nearby times are exact before the one rounding to Seconds.
struct Timestamp {
  std::int64_t ns = 0;

  // Seconds from `origin` to this time.
  Seconds Since(const Timestamp& origin) const {
    return static_cast<Seconds>(ns - origin.ns) / 1e9;
  }
  auto operator<=>(const Timestamp&) const = default;
};

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]"; a space may stand
// for the 'T' and a missing zone means UTC; fraction
// digits after the ninth are ignored. Error: "bad timestamp \"...\"", with
// ": outside the years 1970 to 2261" for a year whose nanoseconds (or their
// difference with another time) would not fit in 64 bits.
Result<Timestamp> ParseTimestamp(std::string_view text);

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_TIMESTAMP_H_
