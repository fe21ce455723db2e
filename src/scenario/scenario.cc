// Reads a scenario file: JSON syntax and repeated keys here, every key by
// the table of src/scenario/keys.h (its reader is src/scenario/reader.cc).
#include "kvbill/scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbill/util/file.h"
#include "scenario/keys.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

using nlohmann::json;

// Parses the text through the front door (src/util/json_input.h), rejecting
// syntax errors, nesting beyond its limit and repeated keys.
Result<json> ParseDocument(const std::string& text, const std::string& source) {
  json_input::Problem problem;
  auto doc = json_input::Parse(text, &problem);
  if (!doc) return Error(json_input::Describe(source, text, problem));
  return std::move(*doc);
}

}  // namespace

namespace {

Result<Scenario> Parse(const std::string& json_text, const std::string& source_name,
                       bool collect_not_runnable) {
  auto doc = ParseDocument(json_text, source_name);
  if (!doc) return doc.error();
  Scenario s;
  s.source = source_name;
  s.name = std::filesystem::path(source_name).stem().string();
  const scenario_keys::Source source(source_name);
  if (Status status = scenario_keys::ReadScenarioKeys(*doc, source, &s, collect_not_runnable);
      !status) {
    return status.error();
  }
  return s;
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& json_text, const std::string& source_name) {
  return Parse(json_text, source_name, false);
}

Result<Scenario> ParseSweepPointScenario(const std::string& json_text,
                                         const std::string& source_name) {
  return Parse(json_text, source_name, true);
}

Status CheckScenarioPath(const std::string& path) {
  if (path != "-") return OkStatus();
  // A scenario names files relative to itself: it is read from a file.
  return Error(
      "-: standard input, which a scenario is not read from (its relative paths are "
      "its file's); give the scenario's path");
}

Result<Scenario> LoadScenario(const std::string& path) {
  if (auto s = CheckScenarioPath(path); !s) return s.error();
  auto text = ReadFile(path);
  if (!text) return text.error();
  return ParseScenario(*text, path);
}

}  // namespace kvbill
