#include "kvbill/bill/time_zone.h"

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>

#include "kvbill/bill/bill.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

bool AllDigits(std::string_view text) {
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return !text.empty();
}

// "+HH:MM", "+HHMM", "+HH" (or '-') as seconds east, or -1 when not an offset.
bool ParseOffset(std::string_view spec, std::int64_t* offset_s) {
  if (spec.size() < 2 || (spec[0] != '+' && spec[0] != '-')) return false;
  std::string_view rest = spec.substr(1);
  std::string_view hours = rest.substr(0, 2), minutes;
  if (rest.size() == 5 && rest[2] == ':') {
    minutes = rest.substr(3);
  } else if (rest.size() == 4) {
    minutes = rest.substr(2);
  } else if (rest.size() != 2) {
    return false;
  }
  if (!AllDigits(hours) || (!minutes.empty() && !AllDigits(minutes))) return false;
  const int h = std::stoi(std::string(hours));
  const int m = minutes.empty() ? 0 : std::stoi(std::string(minutes));
  if (h > 18 || m > 59 || (h == 18 && m > 0)) return false;
  *offset_s = (spec[0] == '-' ? -1 : 1) * (h * 3'600 + m * 60);
  return true;
}

// The zoneinfo file of an IANA name exists and is a TZif file.
bool IsZoneFile(const std::string& dir, std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find("..") != std::string_view::npos) {
    return false;
  }
  std::ifstream file(dir + "/" + std::string(name), std::ios::binary);
  char magic[4] = {};
  return file.read(magic, 4) && std::string_view(magic, 4) == "TZif";
}

}  // namespace

TimeZone TimeZone::FixedOffset(std::int64_t offset_s, std::string name) {
  TimeZone zone;
  zone.offset_s_ = offset_s;
  zone.name_ = std::move(name);
  return zone;
}

Result<TimeZone> TimeZone::Parse(std::string_view spec) {
  if (spec == "UTC" || spec == "Z") return TimeZone();
  if (std::int64_t offset_s = 0; ParseOffset(spec, &offset_s)) {
    return FixedOffset(offset_s, std::string(spec));
  }
  TimeZone zone;
  zone.system_ = true;
  zone.name_ = std::string(spec);
  const char* tzdir = std::getenv("TZDIR");
  const std::string dir = tzdir != nullptr && *tzdir != '\0' ? tzdir : "/usr/share/zoneinfo";
  if (spec == "local") {
    // TZ, when set, names the zone: the C library reads a name it cannot
    // find as UTC without a word, so a misspelt TZ would date every call
    // in UTC. A zone of the database (":" before it optional) or a POSIX
    // rule ("EST5EDT", "<+03>-3") is taken.
    if (const char* tz = std::getenv("TZ"); tz != nullptr && *tz != '\0') {
      std::string_view name = tz;
      if (name.front() == ':') name.remove_prefix(1);
      std::size_t letters = 0;
      if (!name.empty() && name.front() == '<') {
        letters = name.find('>') == std::string_view::npos ? 0 : name.find('>') + 1;
      } else {
        while (letters < name.size() && std::isalpha(static_cast<unsigned char>(name[letters])))
          ++letters;
        if (letters < 3) letters = 0;
      }
      std::size_t at = letters;
      if (at < name.size() && (name[at] == '+' || name[at] == '-')) ++at;
      const bool posix_rule =
          letters > 0 && at < name.size() && std::isdigit(static_cast<unsigned char>(name[at]));
      if (!posix_rule && !IsZoneFile(dir, name) && name != "UTC") {
        return Error("local: TZ=\"" + std::string(tz) +
                     "\" is not a zone of the time zone database (" + dir +
                     ") nor a POSIX TZ rule; the C library would read it as UTC");
      }
    }
    tzset();
    return zone;
  }
  if (!IsZoneFile(dir, spec)) {
    return Error("time zone \"" + std::string(spec) +
                 "\": not UTC, an offset like +02:00, or a zone of the time zone database (" + dir +
                 ")");
  }
  setenv("TZ", zone.name_.c_str(), 1);
  tzset();
  return zone;
}

std::int64_t TimeZone::OffsetAt(std::int64_t utc_s) const {
  if (!system_) return offset_s_;
  const std::time_t t = static_cast<std::time_t>(utc_s);
  std::tm local{};
  if (localtime_r(&t, &local) == nullptr) return 0;
  return local.tm_gmtoff;
}

std::string TimeZone::Date(std::int64_t time_ns) const {
  if (is_utc()) return UtcDate(time_ns);
  // Floor division: a time before the epoch keeps its second.
  const std::int64_t utc_s = time_ns / kNsPerS - (time_ns % kNsPerS < 0 ? 1 : 0);
  return UtcDate(time_ns + OffsetAt(utc_s) * kNsPerS);
}

}  // namespace kvbill
