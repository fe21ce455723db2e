#include "cli/sweep_shard.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "util/json_input.h"

namespace kvbill::cli {
namespace {

// The value as compact JSON, shortened to 40 characters, for messages.
std::string Quote(const nlohmann::ordered_json& value) { return json_input::Quote(value, 40); }

// An integer in [low, high): nlohmann keeps 3 as an integer and 3.0 as a float.
bool IsIntegerIn(const nlohmann::ordered_json& value, std::int64_t low, std::int64_t high) {
  if (value.is_number_unsigned()) {
    const std::uint64_t v = value.get<std::uint64_t>();
    return v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) &&
           static_cast<std::int64_t>(v) >= low && static_cast<std::int64_t>(v) < high;
  }
  if (!value.is_number_integer()) return false;
  const std::int64_t v = value.get<std::int64_t>();
  return v >= low && v < high;
}

}  // namespace

Result<std::pair<int, int>> ParseShard(const std::string& text) {
  const std::size_t slash = text.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t a = 0, b = 0;
      const int i = std::stoi(text.substr(0, slash), &a);
      const int n = std::stoi(text.substr(slash + 1), &b);
      if (a == slash && b == text.size() - slash - 1 && n >= 1 && i >= 0 && i < n) {
        return std::make_pair(i, n);
      }
    }
  } catch (const std::exception&) {
  }
  return Error("--shard: expected i/n with 0 <= i < n, got \"" + text + "\"");
}

Status CheckSweepShard(const nlohmann::ordered_json& doc, const std::string& path,
                       std::span<const char* const> columns) {
  if (!doc.is_object() || !doc.contains("points") || !doc.contains("axes") ||
      !doc.contains("total_points") || !doc.contains("scenario")) {
    return Error(path + ": not the JSON output of kvbill sweep");
  }
  auto bad = [&](const std::string& pointer, const std::string& what) {
    return Error(path + "#" + pointer + ": " + what);
  };
  if (!doc["scenario"].is_string()) {
    return bad("/scenario", "must be a string, got " + Quote(doc["scenario"]));
  }
  const auto& axes = doc["axes"];
  if (!axes.is_array()) return bad("/axes", "must be an array, got " + Quote(axes));
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (!axes[a].is_string()) {
      return bad("/axes/" + std::to_string(a), "must be a string, got " + Quote(axes[a]));
    }
  }
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (!IsIntegerIn(doc["total_points"], 1, kMax)) {
    return bad("/total_points", "must be a positive integer, got " + Quote(doc["total_points"]));
  }
  const std::int64_t total = doc["total_points"].get<std::int64_t>();
  const auto& points = doc["points"];
  if (!points.is_array()) return bad("/points", "must be an array, got " + Quote(points));
  for (std::size_t k = 0; k < points.size(); ++k) {
    const std::string at = "/points/" + std::to_string(k);
    const auto& p = points[k];
    if (!p.is_object()) return bad(at, "must be an object, got " + Quote(p));
    for (const char* key : {"index", "values", "summary"}) {
      if (!p.contains(key)) return bad(at + "/" + key, "missing");
    }
    if (!IsIntegerIn(p["index"], 0, total)) {
      return bad(at + "/index", "must be an integer in [0, " + std::to_string(total) + "), got " +
                                    Quote(p["index"]));
    }
    const auto& values = p["values"];
    if (!values.is_object()) return bad(at + "/values", "must be an object, got " + Quote(values));
    for (const auto& axis : axes) {
      if (!values.contains(axis.get<std::string>())) {
        return bad(at + "/values", "missing the axis " + Quote(axis));
      }
    }
    const auto& summary = p["summary"];
    if (!summary.is_object()) {
      return bad(at + "/summary", "must be an object, got " + Quote(summary));
    }
    for (const char* column : columns) {
      if (!summary.contains(column)) return bad(at + "/summary/" + column, "missing");
    }
  }
  return OkStatus();
}

}  // namespace kvbill::cli
