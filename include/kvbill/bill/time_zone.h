// TimeZone: the zone in which `kvbill bill` dates a call (--by day, --since,
// --until; docs/billing.md#bill). UTC by default, a fixed offset from UTC, or
// a zone of the system's time zone database, as the C library reads it
// (GCC 12's standard library has no std::chrono::locate_zone).
#ifndef KVBILL_BILL_TIME_ZONE_H_
#define KVBILL_BILL_TIME_ZONE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "kvbill/util/result.h"

namespace kvbill {

class TimeZone {
 public:
  TimeZone() = default;  // UTC

  // "UTC" or "Z"; "+HH:MM", "-HH:MM", "+HHMM", "+HH" (at most 18 hours, as
  // ISO 8601 allows); an IANA name ("Europe/Berlin"), which must name a file
  // of the time zone database (under $TZDIR, else /usr/share/zoneinfo) and
  // sets the process's TZ to it; or "local", the machine's zone (TZ, else
  // /etc/localtime). Errors: `time zone "x": not UTC, an offset like +02:00,
  // or a zone of the time zone database (/usr/share/zoneinfo)`.
  static Result<TimeZone> Parse(std::string_view spec);

  // A fixed offset from UTC, seconds east.
  static TimeZone FixedOffset(std::int64_t offset_s, std::string name);

  // The offset from UTC in force at `utc_s` (seconds since the Unix epoch),
  // seconds east: +7,200 in Berlin in summer.
  std::int64_t OffsetAt(std::int64_t utc_s) const;

  // "YYYY-MM-DD" of a time in ns since the Unix epoch, in this zone.
  std::string Date(std::int64_t time_ns) const;

  const std::string& name() const { return name_; }
  bool is_utc() const { return !system_ && offset_s_ == 0; }

 private:
  std::string name_ = "UTC";
  bool system_ = false;  // the C library's zone (localtime_r)
  std::int64_t offset_s_ = 0;
};

}  // namespace kvbill

#endif  // KVBILL_BILL_TIME_ZONE_H_
