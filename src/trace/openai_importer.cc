// OpenAI Chat Completions and Responses objects, one per line
// (docs/importers.md#openai). Calls are grouped into tasks by session field or
// previous_response_id chain, so the whole input's calls (numbers and ids, no
// content) are held in memory.
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "kvbill/trace/importers.h"
#include "trace/format_number.h"
#include "trace/json_fields.h"
#include "trace/line_task_reader.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

// The usage field names of the two APIs.
struct UsageDialect {
  const char* prompt;
  const char* output;
  const char* prompt_details;
  const char* output_details;
  const char* created;  // the object's creation time, Unix seconds
};
constexpr UsageDialect kChatCompletions = {"prompt_tokens", "completion_tokens",
                                           "prompt_tokens_details", "completion_tokens_details",
                                           "created"};
constexpr UsageDialect kResponses = {"input_tokens", "output_tokens", "input_tokens_details",
                                     "output_tokens_details", "created_at"};

// One call. prompt includes cached; output includes reasoning.
struct Call {
  std::string where;  // "file:line", for errors found after grouping
  Tokens prompt = 0;
  Tokens cached = 0;
  // Written to the cache (input_tokens_details.cache_write_tokens: the
  // GPT-5.6 family bills them at 1.25x input); part of prompt, not of cached.
  Tokens written = 0;
  Tokens output = 0;
  Tokens reasoning = 0;
  std::optional<double> created_s;  // Unix seconds
  std::string model;                // "model" as logged; empty when absent
};

struct Group {
  std::string id;
  std::vector<Call> calls;
};

// details.key when `details` is present: an optional count.
Result<Tokens> GetDetail(const Json& usage, const char* details, const char* key) {
  const auto it = usage.find(details);
  if (it == usage.end() || it->is_null()) return Tokens{0};
  if (!it->is_object()) return Error(std::string("\"") + details + "\" must be an object");
  auto value = GetOptionalTokens(*it, key);
  if (!value) return value.error().Within(details);
  return value->value_or(0);
}

Result<Call> ReadUsage(const Json& usage, const UsageDialect& d) {
  Call call;
  auto prompt = GetTokens(usage, d.prompt);
  if (!prompt) return prompt.error();
  auto output = GetTokens(usage, d.output);
  if (!output) return output.error();
  auto cached = GetDetail(usage, d.prompt_details, "cached_tokens");
  if (!cached) return cached.error();
  auto reasoning = GetDetail(usage, d.output_details, "reasoning_tokens");
  if (!reasoning) return reasoning.error();
  if (*cached > *prompt) {
    return Error(std::string(d.prompt_details) + ": \"cached_tokens\" " + std::to_string(*cached) +
                 " exceeds \"" + d.prompt + "\" " + std::to_string(*prompt));
  }
  auto written = GetDetail(usage, d.prompt_details, "cache_write_tokens");
  if (!written) return written.error();
  if (*cached + *written > *prompt) {
    return Error(std::string(d.prompt_details) + ": \"cached_tokens\" " + std::to_string(*cached) +
                 " and \"cache_write_tokens\" " + std::to_string(*written) + " exceed \"" +
                 d.prompt + "\" " + std::to_string(*prompt));
  }
  call.prompt = *prompt;
  call.output = *output;
  call.cached = *cached;
  call.written = *written;
  call.reasoning = std::min(*reasoning, *output);
  return call;
}

// session_id, else metadata.session_id.
Result<std::optional<std::string>> GetSession(const Json& json) {
  auto session = GetOptionalString(json, "session_id");
  if (!session || session->has_value()) return session;
  const auto metadata = json.find("metadata");
  if (metadata == json.end() || !metadata->is_object()) return std::optional<std::string>();
  auto nested = GetOptionalString(*metadata, "session_id");
  if (!nested) return nested.error().Within("metadata");
  return nested;
}

class OpenAiReader : public GroupingLineReader {
 public:
  OpenAiReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : GroupingLineReader(std::move(in), std::move(name), options) {}

 private:
  Status ParseLine(const std::string& line) override {
    auto json = ParseJsonObject(line);
    if (!json) return json.error();
    auto object = GetOptionalString(*json, "object");
    if (!object) return object.error();
    if (object->has_value() && **object != "chat.completion" && **object != "response") {
      return Error("\"object\" must be \"chat.completion\" or \"response\", got \"" +
                   json_input::Bounded(**object) + "\"");
    }
    const bool is_object = object->has_value();
    auto id = GetOptionalString(*json, "id");
    if (!id) return id.error();
    if (is_object && !id->has_value()) return Error("missing \"id\"");
    if (id->has_value() && seen_ids_.count(**id) != 0) return OkStatus();  // a repeated copy
    auto session = GetSession(*json);
    if (!session) return session.error();

    // The usage object: the line's "usage", or the line itself (a bare usage).
    const Json* usage = &*json;
    if (const auto it = json->find("usage"); it != json->end()) {
      if (!it->is_object()) return Error("\"usage\" must be an object, got " + Quote(*it));
      usage = &*it;
    } else if (is_object) {
      return Error("missing \"usage\"");
    }
    const UsageDialect* dialect = &kResponses;
    if (is_object ? **object == "chat.completion" : usage->contains("prompt_tokens")) {
      dialect = &kChatCompletions;
    } else if (!is_object && !usage->contains("input_tokens")) {
      return Error("missing \"prompt_tokens\" or \"input_tokens\"");
    }
    auto call = ReadUsage(*usage, *dialect);
    if (!call) return usage == &*json ? call.error() : call.error().Within("usage");
    call->where = lines().name() + ":" + std::to_string(lines().line_number());
    auto created = GetOptionalNumber(*json, dialect->created);
    if (!created) return created.error();
    call->created_s = *created;
    auto model = GetOptionalString(*json, "model");
    if (!model) return model.error();
    call->model = model->value_or("");

    // The task: the session, else the chain of previous_response_id, else
    // the call alone.
    std::string key;
    if (session->has_value()) {
      key = "session:" + **session;
    } else {
      auto previous = GetOptionalString(*json, "previous_response_id");
      if (!previous) return previous.error();
      const auto chained = previous->has_value() ? task_of_id_.find(**previous) : task_of_id_.end();
      if (chained != task_of_id_.end()) {
        key = chained->second;
      } else if (id->has_value()) {
        key = "id:" + **id;
      } else {
        return Error("a bare usage object needs \"session_id\" or \"metadata.session_id\"");
      }
    }
    const auto [it, inserted] = index_.emplace(key, groups_.size());
    if (inserted) {
      groups_.push_back(Group{session->has_value() ? **session : **id, {}});
    }
    groups_[it->second].calls.push_back(std::move(*call));
    if (id->has_value()) {
      task_of_id_[**id] = key;
      seen_ids_.insert(**id);
    }
    return OkStatus();
  }

  // Drops calls created before the previous call of their task (an error
  // unless bad lines are skipped).
  Status DropBackwardTimes(Group* group) {
    std::vector<Call> kept;
    std::optional<double> last;
    for (Call& call : group->calls) {
      if (call.created_s && last && *call.created_s < *last) {
        const Error error(call.where + ": task \"" + group->id +
                          "\": time runs backwards: " + FormatNumber(*call.created_s) +
                          " is before the previous call's " + FormatNumber(*last));
        if (!SkipBadLine(error)) return error;
        continue;
      }
      if (call.created_s) last = call.created_s;
      kept.push_back(std::move(call));
    }
    group->calls = std::move(kept);
    return OkStatus();
  }

  Status Build(std::deque<Task>* tasks) override {
    std::optional<double> origin;
    for (const Group& group : groups_) {
      for (const Call& call : group.calls) {
        if (call.created_s && (!origin || *call.created_s < *origin)) origin = call.created_s;
      }
    }
    for (Group& group : groups_) {
      if (auto s = DropBackwardTimes(&group); !s) return s;
      Task task;
      task.id = group.id;
      task.tool_s_from_start = true;  // tool_s: the gap between calls' times (0 without)
      for (std::size_t k = 0; k < group.calls.size(); ++k) {
        const Call& call = group.calls[k];
        task.turns.push_back(MakeTurn(group.calls, k));
        if (call.created_s) task.turns.back().time_s = *call.created_s - *origin;
        if (k > 0 && call.created_s && group.calls[k - 1].created_s) {
          task.turns[k - 1].tool_s = *call.created_s - *group.calls[k - 1].created_s;
        }
      }
      task.arrival_s = task.turns.front().time_s.value_or(0);
      TaskRows rows{group.calls.front().where, {}};
      for (Call& call : group.calls) rows.turns.push_back(std::move(call.where));
      AddTask(tasks, std::move(task), std::move(rows));
    }
    groups_.clear();
    return OkStatus();
  }

  // Call k of a task as a turn: the prompt growth since call k-1 (the
  // previous visible answer first), or the cached prefix kept when the
  // prompt shrank.
  static Turn MakeTurn(const std::vector<Call>& calls, std::size_t k) {
    const Call& call = calls[k];
    Turn turn;
    Tokens appended = call.prompt;
    if (k > 0) {
      const Call& previous = calls[k - 1];
      if (call.prompt < previous.prompt) {
        turn.keep = std::min(call.cached, previous.prompt);
        appended = call.prompt - *turn.keep;
      } else {
        appended = call.prompt - previous.prompt;
        const Tokens answer = std::min(previous.output - previous.reasoning, appended);
        if (answer > 0) turn.spans.push_back(Span{SpanKind::kAssistant, answer, std::nullopt});
        appended -= answer;
      }
    }
    if (appended > 0 || turn.spans.empty()) {
      turn.spans.push_back(Span{SpanKind::kOther, appended, std::nullopt});
    }
    turn.output = call.output;
    RecordedUsage usage;
    usage.input = call.prompt - call.cached - call.written;
    usage.cache_creation = call.written;
    usage.cache_read = call.cached;
    usage.output = call.output;
    turn.usage = usage;
    turn.model = call.model;
    return turn;
  }

  std::vector<Group> groups_;                      // in order of first appearance
  std::map<std::string, std::size_t> index_;       // task key -> index in groups_
  std::map<std::string, std::string> task_of_id_;  // object id -> task key
  std::set<std::string> seen_ids_;
};

}  // namespace

std::unique_ptr<TraceReader> NewOpenAiReader(std::unique_ptr<std::istream> in, std::string name,
                                             ReaderOptions options) {
  return std::make_unique<OpenAiReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
