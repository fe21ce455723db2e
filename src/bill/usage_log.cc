// Reading the billable facts of Claude Code and Codex logs
// (docs/billing.md#logs).
#include "kvbill/bill/usage_log.h"

#include <cmath>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/claude_line.h"
#include "trace/codex_usage.h"
#include "trace/json_fields.h"
#include "trace/timestamp.h"

namespace kvbill {
namespace {

bool IsCodexType(const Json& type) {
  return type == "session_meta" || type == "event_msg" || type == "response_item" ||
         type == "turn_context";
}

Result<std::optional<std::int64_t>> ReadTime(const Json& line) {
  auto text = GetOptionalString(line, "timestamp");
  if (!text) return text.error();
  if (!*text) return std::optional<std::int64_t>();
  auto time = ParseTimestamp(**text);
  if (!time) return time.error();
  return std::optional<std::int64_t>(time->ns);
}

// Claude Code's message.usage from its counts (the DOM path and the fast
// path both fill a ClaudeUsage; ClaudeCacheWrites checks the cache-write
// split as the trace importer does). Precondition: input and output are set.
Result<CallUsage> UsageFromCounts(const ClaudeUsage& c) {
  auto writes = ClaudeCacheWrites(c);
  if (!writes) return writes.error();
  CallUsage result;
  result.input = *c.input;
  result.cache_write_5m = writes->first - writes->second;
  result.cache_write_1h = writes->second;
  result.cache_read = c.cache_read.value_or(0);
  result.output = *c.output;
  result.web_searches = c.web_searches.value_or(0);
  return result;
}

Result<CallUsage> ReadClaudeUsage(const Json& usage) {
  auto counts = ReadClaudeUsageCounts(usage);
  if (!counts) return counts.error();
  return UsageFromCounts(*counts);
}

// usage.speed: true for "fast"; absent, null and "standard" are standard.
Result<bool> ReadFast(const Json& usage) {
  const auto it = usage.find("speed");
  if (it == usage.end() || it->is_null() || *it == "standard") return false;
  if (*it == "fast") return true;
  return Error("\"speed\" must be \"standard\" or \"fast\", got " + Quote(*it));
}

// The line's "costUSD" in pico-dollars, or nullopt when absent or null.
Result<std::optional<Money>> ReadRecordedCost(const Json& line) {
  const auto it = line.find("costUSD");
  if (it == line.end() || it->is_null()) return std::optional<Money>();
  // At most $9,000,000: the range of an amount.
  if (!it->is_number() || !(it->get<double>() >= 0) || !(it->get<double>() <= 9e6)) {
    return Error("\"costUSD\" must be a non-negative number of dollars, got " + Quote(*it));
  }
  return std::optional<Money>(Money{std::llround(it->get<double>() * 1e12)});
}

CallUsage ToCallUsage(const CodexUsage& u) {
  CallUsage usage;
  usage.input = u.input - u.cached;  // OpenAI's input_tokens include the cached ones
  usage.cache_read = u.cached;
  usage.output = u.output;
  return usage;
}

// The file name without its directory and ".jsonl": a Codex rollout's
// session when it has no session_meta line.
std::string FileStem(const std::string& name) {
  std::string stem =
      name.substr(name.find_last_of('/') == std::string::npos ? 0 : name.find_last_of('/') + 1);
  for (const char* ext : {".jsonl", ".json"}) {
    const std::string e = ext;
    if (stem.size() > e.size() && stem.compare(stem.size() - e.size(), e.size(), e) == 0) {
      stem.resize(stem.size() - e.size());
      break;
    }
  }
  return stem;
}

class LogParser {
 public:
  LogParser(UsageLog* log, const std::string& name) : log_(log), codex_session_(FileStem(name)) {}

  // The fast path of ParseJsonObject + Add for a line of text: true when the
  // line was valid and used or ignored exactly as Add would; false (nothing
  // recorded) when it must go through Add: Codex and result lines, anything
  // malformed or unusual.
  bool AddPlain(std::string_view text, const std::string& name, std::int64_t number, bool element) {
    ClaudeLine line;
    if (!ScanClaudeLine(text, &line) || line.type.HasEscape()) return false;
    if (line.has_payload || line.type.Is("result")) return false;
    // Lines without "type" that carry message.usage are calls too (older
    // Claude Code versions); their costUSD goes through Add.
    const bool typeless = line.type.absent() || line.type.null();
    if (!(line.type.Is("assistant") || typeless) || !line.message_is_object) return true;
    // AddAssistant's conditions on raw values.
    if (line.usage.absent() || line.usage.null()) return true;
    if (!line.cost_usd.absent() && !line.cost_usd.null()) return false;
    const auto optional_string = [](const RawJson& raw, std::optional<std::string_view>* out) {
      if (raw.absent() || raw.null()) return true;
      std::string_view value;
      if (!raw.PlainString(&value)) return false;
      *out = value;
      return true;
    };
    std::optional<std::string_view> model, session, id, request, time_text;
    if (!optional_string(line.model, &model) || !optional_string(line.session_id, &session) ||
        !optional_string(line.message_id, &id) || !optional_string(line.request_id, &request) ||
        !optional_string(line.timestamp, &time_text)) {
      return false;
    }
    if (model == "<synthetic>") return true;
    LoggedCall call;
    if (time_text) {
      auto time = ParseTimestamp(*time_text);
      if (!time) return false;
      call.time_ns = time->ns;
    }
    ClaudeUsage usage;
    if (!ScanClaudeUsage(line.usage.text, &usage) || !usage.input || !usage.output) return false;
    auto counted = UsageFromCounts(usage);
    if (!counted) return false;
    call.usage = *counted;
    if (!usage.speed.absent() && !usage.speed.null() && !usage.speed.Is("standard")) {
      if (!usage.speed.Is("fast")) return false;
      call.fast = true;
    }
    const std::optional<bool> us_only = UsOnlyOf(usage.inference_geo);
    if (!us_only) return false;
    call.us_only = *us_only;
    if (!ProjectOfRaw(line.cwd, &call.project)) return false;
    call.model = model ? std::string(*model) : "unknown";
    call.session = session ? std::string(*session) : "unknown";
    call.where = name + (element ? ": element " : ":") + std::to_string(number);
    call.claude_code = true;
    if (id) {
      call.key.append("msg:").append(*id);
    } else if (request) {
      call.key.append("req:").append(*request);
    } else {
      call.key = "line:" + call.where;
    }
    log_->calls.push_back(std::move(call));
    return true;
  }

  // One line object; `where` is "file:line".
  Status Add(const Json& line, const std::string& where) {
    if (!line.is_object()) return Error(where + ": expected a JSON object");
    const Json type = line.value("type", Json());
    Status status = OkStatus();
    if (line.contains("payload") && IsCodexType(type)) {
      status = AddCodex(line, type, where);
    } else if (type == "assistant" || (type.is_null() && line.contains("message"))) {
      status = AddAssistant(line, where);
    } else if (type == "result") {
      status = AddResult(line, where);
    }
    if (!status) return status.error().Within(where);
    return OkStatus();
  }

 private:
  Status AddAssistant(const Json& line, const std::string& where) {
    const auto message = line.find("message");
    if (message == line.end() || !message->is_object()) return OkStatus();
    const auto usage = message->find("usage");
    if (usage == message->end() || usage->is_null()) return OkStatus();
    auto model = GetOptionalString(*message, "model");
    if (!model) return model.error().Within("message");
    if (*model == "<synthetic>") return OkStatus();
    LoggedCall call;
    call.claude_code = true;
    call.model = model->value_or("unknown");
    auto session = GetOptionalString(line, "sessionId");
    if (!session) return session.error();
    call.session = session->value_or("unknown");
    auto id = GetOptionalString(*message, "id");
    if (!id) return id.error().Within("message");
    auto request = GetOptionalString(line, "requestId");
    if (!request) return request.error();
    if (*id) {
      call.key = "msg:" + **id;
    } else if (*request) {
      call.key = "req:" + **request;
    } else {
      call.key = "line:" + where;
    }
    auto time = ReadTime(line);
    if (!time) return time.error();
    call.time_ns = *time;
    auto parsed = ReadClaudeUsage(*usage);
    if (!parsed) return parsed.error().Within("message.usage");
    call.usage = *parsed;
    auto fast = ReadFast(*usage);
    if (!fast) return fast.error().Within("message.usage");
    call.fast = *fast;
    auto us_only = ReadUsOnly(*usage);
    if (!us_only) return us_only.error().Within("message.usage");
    call.us_only = *us_only;
    auto recorded = ReadRecordedCost(line);
    if (!recorded) return recorded.error();
    call.recorded_cost = *recorded;
    auto cwd = GetOptionalString(line, "cwd");
    if (!cwd) return cwd.error();
    if (*cwd) call.project = Project(**cwd);
    call.where = where;
    log_->calls.push_back(std::move(call));
    return OkStatus();
  }

  Status AddResult(const Json& line, const std::string& where) {
    ReportedRun run;
    auto session = GetString(line, "session_id");
    if (!session) return session.error();
    run.session = *session;
    const auto total = line.find("total_cost_usd");
    if (total == line.end()) return OkStatus();  // a result without cost says nothing to bill
    auto cost = GetNumber(line, "total_cost_usd");
    if (!cost) return cost.error();
    run.total_cost_usd = *cost;
    if (const auto models = line.find("modelUsage"); models != line.end()) {
      if (!models->is_object()) return Error("\"modelUsage\" must be an object");
      for (const auto& [model, entry] : models->items()) {
        const std::string at = "modelUsage." + model;
        if (!entry.is_object()) return Error(at + ": must be an object");
        ReportedModel reported;
        const std::pair<const char*, Tokens*> fields[] = {
            {"inputTokens", &reported.usage.input},
            {"cacheCreationInputTokens", &reported.usage.cache_write_5m},
            {"cacheReadInputTokens", &reported.usage.cache_read},
            {"outputTokens", &reported.usage.output},
            {"webSearchRequests", &reported.usage.web_searches}};
        for (const auto& [key, field] : fields) {
          auto value = GetOptionalTokens(entry, key);
          if (!value) return value.error().Within(at);
          *field = value->value_or(0);
        }
        auto model_cost = GetNumber(entry, "costUSD");
        if (!model_cost) return model_cost.error().Within(at);
        reported.cost_usd = *model_cost;
        run.by_model.emplace(model, reported);
      }
    }
    run.key = line.dump();
    run.where = where;
    log_->runs.push_back(std::move(run));
    return OkStatus();
  }

  Status AddCodex(const Json& line, const Json& type, const std::string& where) {
    const Json& payload = line["payload"];
    if (!payload.is_object()) return OkStatus();
    if (type == "session_meta") {
      auto id = GetString(payload, "id");
      if (!id) return id.error().Within("payload");
      codex_session_ = *id;
      codex_model_.reset();
      codex_previous_total_.reset();
      if (auto model = GetOptionalString(payload, "model"); model && *model) codex_model_ = **model;
      return CodexCwd(payload);
    }
    if (type == "turn_context") {
      auto model = GetOptionalString(payload, "model");
      if (!model) return model.error().Within("payload");
      if (*model) codex_model_ = **model;
      return CodexCwd(payload);
    }
    if (type != "event_msg" || payload.value("type", Json()) != "token_count") return OkStatus();
    const auto info = payload.find("info");
    if (info == payload.end() || info->is_null()) return OkStatus();  // rate limits only
    if (!info->is_object()) return Error("payload: \"info\" must be an object");
    auto count = ReadCodexTokenCount(*info, codex_previous_total_);
    if (!count) return count.error();
    LoggedCall call;
    call.usage = ToCallUsage(count->call);
    const std::optional<CodexUsage>& total = count->total;
    if (total) codex_previous_total_ = *total;
    if (auto model = CodexEventModel(payload, *info)) codex_model_ = *model;
    call.session = codex_session_.empty() ? "unknown" : codex_session_;
    if (codex_model_) {
      call.model = *codex_model_;
    } else {
      call.model = kLegacyCodexModel;
      call.assumed_model = true;
    }
    call.project = codex_project_;
    // Codex repeats a token_count when only its rate limits change: the
    // running totals identify the call.
    if (total) {
      const CodexUsage& t = *total;
      call.key = "codex:" + call.session + ":" + std::to_string(t.input) + ":" +
                 std::to_string(t.cached) + ":" + std::to_string(t.output);
    } else {
      call.key = "line:" + where;
    }
    auto time = ReadTime(line);
    if (!time) return time.error();
    call.time_ns = *time;
    call.where = where;
    log_->calls.push_back(std::move(call));
    return OkStatus();
  }

  Status CodexCwd(const Json& payload) {
    auto cwd = GetOptionalString(payload, "cwd");
    if (!cwd) return cwd.error().Within("payload");
    if (*cwd) codex_project_ = Project(**cwd);
    return OkStatus();
  }

  // The index of a working directory in log_->projects, added when new.
  std::int32_t Project(const std::string& path) {
    if (last_project_ >= 0 && log_->projects[static_cast<std::size_t>(last_project_)] == path) {
      return last_project_;
    }
    const auto [it, inserted] =
        project_index_.try_emplace(path, static_cast<std::int32_t>(log_->projects.size()));
    if (inserted) log_->projects.push_back(path);
    last_project_ = it->second;
    return last_project_;
  }

  // The fast path's "cwd": false when its text needs the DOM path.
  bool ProjectOfRaw(const RawJson& raw, std::int32_t* project) {
    if (raw.absent() || raw.null()) return true;
    std::string_view path;
    if (!raw.PlainString(&path)) return false;
    if (last_project_ >= 0 && log_->projects[static_cast<std::size_t>(last_project_)] == path) {
      *project = last_project_;
      return true;
    }
    *project = Project(std::string(path));
    return true;
  }

  UsageLog* log_;
  std::string codex_session_;  // session_meta's id, else the file's name
  std::optional<std::string> codex_model_;
  std::optional<CodexUsage> codex_previous_total_;
  std::int32_t codex_project_ = -1;
  std::unordered_map<std::string, std::int32_t> project_index_;
  std::int32_t last_project_ = -1;  // the project found last
};

}  // namespace

Status ReadUsageLog(std::istream& in, const std::string& name, UsageLog* log) {
  LogParser parser(log, name);
  SkipByteOrderMark(in);
  while (in.peek() == ' ' || in.peek() == '\n' || in.peek() == '\r' || in.peek() == '\t') {
    in.get();
  }
  if (in.peek() == '[') {
    std::ostringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    // Fast path: each element as a line, through the DOM only when unusual.
    if (std::vector<std::string_view> elements; SplitJsonArray(all, &elements)) {
      for (std::size_t i = 0; i < elements.size(); ++i) {
        const auto number = static_cast<std::int64_t>(i + 1);
        if (parser.AddPlain(elements[i], name, number, /*element=*/true)) continue;
        const std::string where = name + ": element " + std::to_string(number);
        auto element = ParseJson(elements[i]);  // valid: the scanner accepts less than nlohmann
        if (!element) return element.error().Within(where);
        if (auto s = parser.Add(*element, where); !s) return s;
      }
      return OkStatus();
    }
    auto json = ParseJson(all);
    if (!json) return json.error().Within(name);
    if (!json->is_array()) return Error(name + ": expected a JSON array of transcript lines");
    for (std::size_t i = 0; i < json->size(); ++i) {
      const std::string where = name + ": element " + std::to_string(i + 1);
      if (auto s = parser.Add((*json)[i], where); !s) return s;
    }
    return OkStatus();
  }
  std::string line;
  std::int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (parser.AddPlain(line, name, number, /*element=*/false)) continue;
    const std::string where = name + ":" + std::to_string(number);
    auto json = ParseJsonObject(line);
    if (!json) return json.error().Within(where);
    if (auto s = parser.Add(*json, where); !s) return s;
  }
  if (in.bad()) return Error(name + ": read failed");
  return OkStatus();
}

}  // namespace kvbill
