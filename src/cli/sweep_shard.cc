#include "cli/sweep_shard.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

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

// A decimal integer in [0, INT_MAX], digits only (no sign, no spaces).
std::optional<int> ParseNonNegative(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::int64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(v);
}

// NAME=value, or NAME=\"value\" when the value is not a plain integer.
std::string Show(const std::string& name, const std::string& value) {
  if (ParseNonNegative(value)) return name + "=" + value;
  return name + "=\"" + value + "\"";
}

// The variable `name` as a non-negative integer; an error when unset or not one.
Result<int> ReadInteger(const EnvironmentLookup& environment, const std::string& name) {
  const std::optional<std::string> value = environment(name);
  if (!value) return Error(name + " is not set");
  const std::optional<int> v = ParseNonNegative(*value);
  if (!v) return Error(Show(name, *value) + " is not a non-negative integer");
  return *v;
}

// This task's slice of a Slurm job array (SLURM_ARRAY_TASK_ID is set); `n`
// is the N of auto/N.
Result<Shard> SlurmShard(const EnvironmentLookup& environment, std::optional<int> n) {
  const std::string kId = "SLURM_ARRAY_TASK_ID", kCount = "SLURM_ARRAY_TASK_COUNT",
                    kMin = "SLURM_ARRAY_TASK_MIN", kMax = "SLURM_ARRAY_TASK_MAX",
                    kStep = "SLURM_ARRAY_TASK_STEP";
  auto id = ReadInteger(environment, kId);
  if (!id) return id.error();
  auto count = ReadInteger(environment, kCount);
  if (!count) return count.error();
  auto min = ReadInteger(environment, kMin);
  if (!min) return min.error();
  auto max = ReadInteger(environment, kMax);
  if (!max) return max.error();
  const auto shown = [&](const std::string& name, int value) {
    return name + "=" + std::to_string(value);
  };
  if (*count < 1) return Error(shown(kCount, *count) + " must be at least 1");
  if (*max < *min) {
    return Error(shown(kMax, *max) + " is below " + shown(kMin, *min));
  }
  int step = 1;
  if (environment(kStep)) {
    auto s = ReadInteger(environment, kStep);
    if (!s) return s.error();
    if (*s < 1) return Error(shown(kStep, *s) + " must be at least 1");
    step = *s;
  } else if (*count > 1) {
    // Older Slurm may leave the step out: the one that spaces COUNT tasks
    // from MIN to MAX, checked below like a given one.
    step = std::max(1, (*max - *min) / (*count - 1));
  }
  const std::int64_t last =
      static_cast<std::int64_t>(*min) + static_cast<std::int64_t>(step) * (*count - 1);
  if (last != *max) {
    return Error("the job array is not evenly spaced: " + shown(kMin, *min) + ", " +
                 shown(kMax, *max) + ", " + shown(kStep, step) +
                 (environment(kStep) ? "" : " (derived)") + ", " + shown(kCount, *count) +
                 " (MAX must be MIN + STEP * (COUNT - 1)); submit --array=A-B or A-B:S");
  }
  if (*id < *min || *id > *max || (*id - *min) % step != 0) {
    return Error(shown(kId, *id) + " is not in the array " + std::to_string(*min) + "-" +
                 std::to_string(*max) + ":" + std::to_string(step));
  }
  if (n && *n != *count) {
    return Error(shown(kCount, *count) + " differs from the N=" + std::to_string(*n) +
                 " of auto/N");
  }
  return Shard{(*id - *min) / step, *count};
}

// This pod's slice of a Kubernetes Indexed Job of `n` completions.
Result<Shard> IndexedJobShard(const EnvironmentLookup& environment, std::optional<int> n) {
  const std::string kIndex = "JOB_COMPLETION_INDEX";
  auto index = ReadInteger(environment, kIndex);
  if (!index) return index.error();
  const std::string shown = kIndex + "=" + std::to_string(*index);
  if (!n) {
    return Error(shown +
                 " is set but not the Job's number of completions: give it as --shard auto/N");
  }
  if (*index >= *n) {
    return Error(shown + " is not below the N=" + std::to_string(*n) + " of auto/N");
  }
  return Shard{*index, *n};
}

// The slice of this task of whichever job array the environment shows.
Result<Shard> AutoShard(const EnvironmentLookup& environment, std::optional<int> n) {
  const std::optional<std::string> slurm = environment("SLURM_ARRAY_TASK_ID");
  const std::optional<std::string> indexed = environment("JOB_COMPLETION_INDEX");
  if (slurm && indexed) {
    return Error("both " + Show("SLURM_ARRAY_TASK_ID", *slurm) + " and " +
                 Show("JOB_COMPLETION_INDEX", *indexed) + " are set; give --shard i/n");
  }
  if (slurm) return SlurmShard(environment, n);
  if (indexed) return IndexedJobShard(environment, n);
  return Error(
      "neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes "
      "Indexed Job) is set");
}

}  // namespace

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Result<Shard> ParseShard(const std::string& text, const EnvironmentLookup& environment) {
  if (text == "auto" || text.starts_with("auto/")) {
    std::optional<int> n;
    if (text != "auto") {
      n = ParseNonNegative(std::string_view(text).substr(5));
      if (!n || *n < 1) return Error("--shard: expected auto/N with N >= 1, got \"" + text + "\"");
    }
    auto shard = AutoShard(environment, n);
    if (!shard) return shard.error().Within("--shard " + text);
    return shard;
  }
  const std::size_t slash = text.find('/');
  if (slash != std::string::npos) {
    const std::optional<int> i = ParseNonNegative(std::string_view(text).substr(0, slash));
    const std::optional<int> n = ParseNonNegative(std::string_view(text).substr(slash + 1));
    if (i && n && *i < *n) return Shard{*i, *n};
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
  for (const auto& [key, value] : doc.items()) {
    if (key != "scenario" && key != "fingerprint" && key != "mode" && key != "axes" &&
        key != "total_points" && key != "points") {
      return bad("/" + key, "unknown key (not one kvbill sweep writes)");
    }
  }
  if (!doc["scenario"].is_string()) {
    return bad("/scenario", "must be a string, got " + Quote(doc["scenario"]));
  }
  if (doc.contains("fingerprint") && !doc["fingerprint"].is_string()) {
    return bad("/fingerprint", "must be a string, got " + Quote(doc["fingerprint"]));
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
    for (const auto& [key, value] : p.items()) {
      if (key != "index" && key != "values" && key != "summary" && key != "warnings" &&
          key != "not_runnable") {
        return bad(at + "/" + key,
                   "unknown key (a point has index, values, summary, warnings "
                   "and not_runnable)");
      }
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
    for (const auto& item : summary.items()) {
      const std::string key = item.key();
      if (std::find_if(columns.begin(), columns.end(), [&](const char* c) { return key == c; }) ==
          columns.end()) {
        return bad(at + "/summary/" + key, "unknown column");
      }
    }
    for (const char* column : columns) {
      if (!summary.contains(column)) return bad(at + "/summary/" + column, "missing");
      // Counts are whole.
      const std::string_view name = column;
      const bool count = name == "tasks" || name == "requests" || name == "preemptions" ||
                         name.ends_with("_tokens");
      if (count && summary[column].is_number() && !summary[column].is_number_integer()) {
        return bad(at + "/summary/" + column,
                   "must be a whole number, got " + Quote(summary[column]));
      }
      // A number; null for a point that did not run (not_runnable) or a
      // value that has none (a rate of nothing).
      if (!summary[column].is_number() && !summary[column].is_null()) {
        return bad(at + "/summary/" + column, "must be a number, got " + Quote(summary[column]));
      }
      // Counts, dollars, rates and seconds: none is below 0.
      if (summary[column].is_number() && !(summary[column].get<double>() >= 0)) {
        return bad(at + "/summary/" + column,
                   "must be a non-negative number, got " + Quote(summary[column]));
      }
    }
    if (!p.contains("warnings")) continue;  // shards written before rows had them
    const auto& warnings = p["warnings"];
    if (!warnings.is_array()) {
      return bad(at + "/warnings", "must be an array, got " + Quote(warnings));
    }
    for (std::size_t w = 0; w < warnings.size(); ++w) {
      const std::string wat = at + "/warnings/" + std::to_string(w);
      if (!warnings[w].is_object() || !warnings[w].contains("code") ||
          !warnings[w]["code"].is_string()) {
        return bad(wat, "must be an object with a string \"code\", got " + Quote(warnings[w]));
      }
    }
  }
  return OkStatus();
}

}  // namespace kvbill::cli
