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

namespace kvbill {
namespace {

using nlohmann::json;
using scenario_keys::EscapeKey;

// Line and column of byte offset `pos` in `text`, both from 1.
std::string LineColumn(std::string_view text, std::size_t pos) {
  pos = std::min(pos, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// Finds the first key repeated within one object (nlohmann/json would keep
// the last silently) while the document is parsed, and its JSON pointer.
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        stack_.push_back(Frame{event == json::parse_event_t::object_start, {}, "", 0});
        break;
      case json::parse_event_t::key: {
        Frame& top = stack_.back();
        top.key = EscapeKey(parsed.get<std::string>());
        if (!top.keys.insert(top.key).second && !duplicate_) duplicate_ = Pointer();
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack_.pop_back();
        ChildDone();
        break;
      case json::parse_event_t::value:
        ChildDone();
        break;
    }
    return true;
  }

  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool is_object;
    std::set<std::string> keys;
    std::string key;    // objects: the current member's escaped key
    std::size_t index;  // arrays: the current element's index
  };

  void ChildDone() {
    if (!stack_.empty() && !stack_.back().is_object) ++stack_.back().index;
  }

  std::string Pointer() const {
    std::string pointer;
    for (const Frame& f : stack_) pointer += "/" + (f.is_object ? f.key : std::to_string(f.index));
    return pointer;
  }

  std::vector<Frame> stack_;
  std::optional<std::string> duplicate_;
};

// Parses the text, rejecting syntax errors and repeated keys.
Result<json> ParseDocument(const std::string& text, const std::string& source) {
  DuplicateKeyFinder duplicates;
  json doc;
  try {
    doc = json::parse(text, std::ref(duplicates));
  } catch (const json::parse_error& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line L,
    // column C: REASON"; keep the reason.
    std::string reason = e.what();
    const std::size_t colon = reason.find(": ", reason.find("column"));
    reason = colon == std::string::npos ? "" : ": " + reason.substr(colon + 2);
    return Error(source + ":" + LineColumn(text, e.byte > 0 ? e.byte - 1 : 0) + ": not valid JSON" +
                 reason);
  } catch (const json::out_of_range& e) {
    // A number beyond a double (1e999): "[json.exception.out_of_range.406] number
    // overflow parsing '1e999'"; the parser gives no position.
    const std::string what = e.what();
    const std::size_t start = what.find("] ");
    return Error(source + ": not valid JSON: " +
                 (start == std::string::npos ? what : what.substr(start + 2)));
  }
  if (duplicates.duplicate())
    return Error(source + "#" + *duplicates.duplicate() + ": repeated key");
  return doc;
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& json_text, const std::string& source_name) {
  auto doc = ParseDocument(json_text, source_name);
  if (!doc) return doc.error();
  Scenario s;
  s.source = source_name;
  s.name = std::filesystem::path(source_name).stem().string();
  const scenario_keys::Source source(source_name);
  if (Status status = scenario_keys::ReadScenarioKeys(*doc, source, &s); !status) {
    return status.error();
  }
  return s;
}

Result<Scenario> LoadScenario(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return text.error();
  return ParseScenario(*text, path);
}

}  // namespace kvbill
