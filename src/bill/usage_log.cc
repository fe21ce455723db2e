// Reading the billable facts of Claude Code and Codex logs
// (docs/billing.md#logs).
#include "kvbill/bill/usage_log.h"

#include <sstream>
#include <string_view>
#include <vector>

#include "trace/claude_line.h"
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

// Claude Code's message.usage. The 1-hour share of the cache writes is
// "cache_creation.ephemeral_1h_input_tokens" (or the same key directly in
// usage); the rest are 5-minute writes.
Result<CallUsage> ReadClaudeUsage(const Json& usage) {
  if (!usage.is_object()) return Error("\"usage\" must be an object, got " + Quote(usage));
  CallUsage result;
  auto input = GetTokens(usage, "input_tokens");
  if (!input) return input.error();
  auto write = GetOptionalTokens(usage, "cache_creation_input_tokens");
  if (!write) return write.error();
  auto read = GetOptionalTokens(usage, "cache_read_input_tokens");
  if (!read) return read.error();
  auto output = GetTokens(usage, "output_tokens");
  if (!output) return output.error();
  Result<std::optional<Tokens>> one_hour = std::optional<Tokens>();
  if (const auto split = usage.find("cache_creation"); split != usage.end() && split->is_object()) {
    one_hour = GetOptionalTokens(*split, "ephemeral_1h_input_tokens");
    if (!one_hour) return one_hour.error().Within("cache_creation");
  }
  if (!one_hour->has_value()) one_hour = GetOptionalTokens(usage, "ephemeral_1h_input_tokens");
  if (!one_hour) return one_hour.error();
  const Tokens writes = write->value_or(0);
  const Tokens writes_1h = one_hour->value_or(0);
  if (writes_1h > writes) {
    return Error("1-hour cache writes " + std::to_string(writes_1h) +
                 " exceed \"cache_creation_input_tokens\" " + std::to_string(writes));
  }
  result.input = *input;
  result.cache_write_5m = writes - writes_1h;
  result.cache_write_1h = writes_1h;
  result.cache_read = read->value_or(0);
  result.output = *output;
  return result;
}

class LogParser {
 public:
  explicit LogParser(UsageLog* log) : log_(log) {}

  // The fast path of ParseJsonObject + Add for a line of text: true when the
  // line was valid and used or ignored exactly as Add would; false (nothing
  // recorded) when it must go through Add: Codex and result lines, anything
  // malformed or unusual.
  bool AddPlain(std::string_view text, const std::string& name, std::int64_t number, bool element) {
    ClaudeLine line;
    if (!ScanClaudeLine(text, &line) || line.type.HasEscape()) return false;
    if (line.has_payload || line.type.Is("result")) return false;
    if (!line.type.Is("assistant") || !line.message_is_object) return true;
    // AddAssistant's conditions on raw values.
    if (line.usage.absent() || line.usage.null()) return true;
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
    const Tokens writes = usage.cache_creation.value_or(0);
    const Tokens writes_1h = usage.nested_1h ? *usage.nested_1h : usage.direct_1h.value_or(0);
    if (writes_1h > writes) return false;
    call.usage.input = *usage.input;
    call.usage.cache_write_5m = writes - writes_1h;
    call.usage.cache_write_1h = writes_1h;
    call.usage.cache_read = usage.cache_read.value_or(0);
    call.usage.output = *usage.output;
    call.model = model ? std::string(*model) : "unknown";
    call.session = session ? std::string(*session) : "unknown";
    call.where = name + (element ? ": element " : ":") + std::to_string(number);
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
    } else if (type == "assistant") {
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
            {"outputTokens", &reported.usage.output}};
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
      codex_model_ = "unknown";
      if (auto model = GetOptionalString(payload, "model"); model && *model) codex_model_ = **model;
      return OkStatus();
    }
    if (type == "turn_context") {
      auto model = GetOptionalString(payload, "model");
      if (!model) return model.error().Within("payload");
      if (*model) codex_model_ = **model;
      return OkStatus();
    }
    if (type != "event_msg" || payload.value("type", Json()) != "token_count") return OkStatus();
    const auto info = payload.find("info");
    if (info == payload.end() || info->is_null()) return OkStatus();  // rate limits only
    if (!info->is_object()) return Error("payload: \"info\" must be an object");
    const auto read = [](const Json& object, const char* key) -> Result<CallUsage> {
      const auto it = object.find(key);
      if (it == object.end() || !it->is_object()) {
        return Error(std::string("missing \"") + key + "\" object");
      }
      auto input = GetTokens(*it, "input_tokens");
      if (!input) return input.error().Within(key);
      auto cached = GetOptionalTokens(*it, "cached_input_tokens");
      if (!cached) return cached.error().Within(key);
      auto output = GetTokens(*it, "output_tokens");
      if (!output) return output.error().Within(key);
      const Tokens hits = cached->value_or(0);
      if (hits > *input) {
        return Error(std::string(key) + ": \"cached_input_tokens\" " + std::to_string(hits) +
                     " exceeds \"input_tokens\" " + std::to_string(*input));
      }
      CallUsage usage;
      usage.input = *input - hits;  // OpenAI's input_tokens include the cached ones
      usage.cache_read = hits;
      usage.output = *output;  // reasoning included
      return usage;
    };
    auto last = read(*info, "last_token_usage");
    if (!last) return last.error().Within("payload.info");
    auto total = read(*info, "total_token_usage");
    if (!total) return total.error().Within("payload.info");
    // Codex repeats a token_count when only its rate limits change: the
    // running totals identify the call.
    LoggedCall call;
    call.session = codex_session_.empty() ? "unknown" : codex_session_;
    call.model = codex_model_;
    call.key = "codex:" + call.session + ":" + std::to_string(total->prompt()) + ":" +
               std::to_string(total->cache_read) + ":" + std::to_string(total->output);
    auto time = ReadTime(line);
    if (!time) return time.error();
    call.time_ns = *time;
    call.usage = *last;
    call.where = where;
    log_->calls.push_back(std::move(call));
    return OkStatus();
  }

  UsageLog* log_;
  std::string codex_session_;
  std::string codex_model_ = "unknown";
};

}  // namespace

Status ReadUsageLog(std::istream& in, const std::string& name, UsageLog* log) {
  LogParser parser(log);
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
