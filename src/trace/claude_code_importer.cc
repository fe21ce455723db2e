// Claude Code transcripts (docs/importers.md#claude-code): assistant lines
// carry message.id and message.usage; one API call may be written as several
// lines (one per content block), so calls are de-duplicated by message.id.
#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kvbill/trace/importers.h"
#include "trace/claude_line.h"
#include "trace/json_fields.h"
#include "trace/line_reader.h"
#include "trace/timestamp.h"

namespace kvbill {
namespace {

struct Call {
  std::string session;
  std::string chain;  // "" for the main chain, else the subagent's key
  bool sidechain = false;
  std::string agent_id;  // "agentId" when the line has one
  Timestamp time;
  std::string time_text;
  RecordedUsage usage;
  std::string model;     // message.model; empty when the line names none
  std::string where;     // "name:line" for errors
  std::size_t file = 0;  // index of the source it was read from
  // Tool-result lines of its chain (ChainKey) read before it: more than the
  // call before it had means its prompt grew by tool results.
  std::int64_t tool_results_before = 0;
  // A line of its message holds a "tool_use" content block: its answer is a
  // tool call.
  bool tool_call = false;
};

// The chain a line belongs to before BuildTasks numbers sidechains:
// session, sidechain flag and agent id.
std::string ChainKey(std::string_view session, bool sidechain, std::string_view agent) {
  std::string key(session);
  key += sidechain ? "\x01" : "\x02";
  key += agent;
  return key;
}

// True when copy `a` of a repeated message is kept over copy `b`: the
// order `kvbill bill` keeps (src/bill/bill.cc KeepsOver), so a what-if's
// recorded usage is the bill's: the most output tokens (streaming stubs
// record 1 to 10), then the earliest time, then the session and the place
// ("name:line") that sort first.
bool KeepsOver(const Call& a, const Call& b) {
  if (a.usage.output != b.usage.output) return a.usage.output > b.usage.output;
  if (a.time != b.time) return a.time < b.time;
  if (a.session != b.session) return a.session < b.session;
  return a.where < b.where;
}

class ClaudeCodeReader : public TraceReader {
 public:
  ClaudeCodeReader(std::vector<NamedStream> sources, ReaderOptions options)
      : TraceReader(options), sources_(std::move(sources)) {}

  Result<bool> Next(Task* task) override {
    if (!loaded_) {
      loaded_ = true;
      if (auto s = Load(); !s) return s.error();
    }
    return PopChecked(
        &tasks_, &task_rows_,
        [this](const Task& t, const std::vector<std::string>& rows) {
          return CheckTask(t, rows.front(), [&rows](std::size_t turn) { return rows[turn]; });
        },
        task);
  }

 private:
  // Reads every line of every source, then builds all tasks.
  Status Load() {
    for (file_ = 0; file_ < sources_.size(); ++file_) {
      in_ = std::move(sources_[file_].in);
      name_ = sources_[file_].name;
      if (auto s = LoadSource(); !s) return s;
    }
    return BuildTasks();
  }

  Status LoadSource() {
    SkipByteOrderMark(*in_);
    while (in_->peek() == ' ' || in_->peek() == '\n' || in_->peek() == '\r' ||
           in_->peek() == '\t') {
      in_->get();
    }
    if (in_->peek() == '[') {
      if (auto s = LoadArray(); !s) return s;
    } else {
      LineReader lines(std::move(in_), name_);
      std::string line;
      while (lines.Next(&line)) {
        if (AddPlainLine(line, lines.line_number(), /*element=*/false)) continue;
        const std::string where = Where(lines.line_number(), /*element=*/false);
        if (auto s = AddLine(line, where); !s) return s;
      }
      if (lines.failed()) return Error(name_ + ": read failed");
    }
    return OkStatus();
  }

  Status LoadArray() {
    std::ostringstream text;
    text << in_->rdbuf();
    // Fast path: each element as a line, through the DOM only when unusual.
    std::vector<std::string_view> elements;
    const std::string all = text.str();
    if (SplitJsonArray(all, &elements)) {
      for (std::size_t i = 0; i < elements.size(); ++i) {
        const auto number = static_cast<std::int64_t>(i + 1);
        if (AddPlainLine(elements[i], number, /*element=*/true)) continue;
        auto json = ParseJson(elements[i]);  // valid: the scanner accepts less than nlohmann
        if (!json) return json.error().Within(Where(number, /*element=*/true));
        if (auto s = AddObject(*json, Where(number, /*element=*/true)); !s) return s;
      }
      return OkStatus();
    }
    auto json = ParseJson(all);
    if (!json) return json.error().Within(name_);
    if (!json->is_array()) return Error(name_ + ": expected a JSON array of transcript lines");
    for (std::size_t i = 0; i < json->size(); ++i) {
      const std::string where = name_ + ": element " + std::to_string(i + 1);
      if (auto s = AddObject((*json)[i], where); !s) return s;
    }
    return OkStatus();
  }

  // "name:line", or "name: element N" in a JSON array.
  std::string Where(std::int64_t number, bool element) const {
    return name_ + (element ? ": element " : ":") + std::to_string(number);
  }

  // The fast path of AddLine (or of AddObject for an array element): true
  // when the line was valid and used or ignored exactly as AddLine would;
  // false (nothing recorded) when AddLine must read it.
  bool AddPlainLine(std::string_view line, std::int64_t line_number, bool element) {
    ClaudeLine fields;
    if (!ScanClaudeLine(line, &fields)) return false;
    // The conditions of AddObject, on raw values.
    if (fields.type.HasEscape()) return false;
    if (fields.type.Is("user") && line.find("\"tool_result\"") != std::string_view::npos) {
      std::string_view session, agent;
      if (!fields.session_id.PlainString(&session)) return false;
      if (!fields.agent_id.absent() && !fields.agent_id.null() &&
          !fields.agent_id.PlainString(&agent)) {
        return false;
      }
      ++tool_results_[ChainKey(session, fields.is_sidechain.text == "true", agent)];
      return true;
    }
    // Lines without "type" that carry message.usage (older Claude Code
    // versions), and calls keyed by requestId or by nothing, take the DOM
    // path, as `kvbill bill` reads them.
    if (fields.type.absent() || fields.type.null()) return false;
    if (!fields.type.Is("assistant") || !fields.message_is_object) return true;
    std::string_view message_id;
    if (fields.message_id.HasEscape() || fields.model.HasEscape()) return false;
    if (fields.usage.absent() || fields.usage.null()) return true;
    if (!fields.message_id.PlainString(&message_id)) return false;
    if (fields.model.Is("<synthetic>")) return true;
    // Content blocks are read by AddObject (HasContentBlock).
    if (line.find("\"tool_use\"") != std::string_view::npos) return false;
    // ParseCall's checks; any failure goes to the DOM path for its message.
    Call call;
    std::string_view session;
    std::string_view time_text;
    if (!fields.session_id.PlainString(&session) || !fields.timestamp.PlainString(&time_text)) {
      return false;
    }
    auto time = ParseTimestamp(time_text);
    if (!time) return false;
    std::string_view model;
    if (!fields.model.absent() && !fields.model.null() && !fields.model.PlainString(&model)) {
      return false;
    }
    std::string_view agent;
    if (!fields.agent_id.absent() && !fields.agent_id.null() &&
        !fields.agent_id.PlainString(&agent)) {
      return false;
    }
    ClaudeUsage usage;
    if (!ScanClaudeUsage(fields.usage.text, &usage) || !usage.input || !usage.output) return false;
    auto writes = ClaudeCacheWrites(usage);
    if (!writes) return false;  // the DOM path says why
    call.session = std::string(session);
    call.time = *time;
    call.time_text = std::string(time_text);
    call.sidechain = fields.is_sidechain.text == "true";
    call.agent_id = std::string(agent);
    call.model = std::string(model);
    call.usage.input = *usage.input;
    call.usage.cache_creation = writes->first;
    call.usage.cache_creation_1h = writes->second;
    call.usage.cache_read = usage.cache_read.value_or(0);
    call.usage.web_searches = usage.web_searches.value_or(0);
    call.usage.output = *usage.output;
    if (!usage.speed.absent() && !usage.speed.null() && !usage.speed.Is("standard")) {
      if (!usage.speed.Is("fast")) return false;  // the DOM path says why
      call.usage.fast = true;
    }
    const std::optional<bool> us_only = UsOnlyOf(usage.inference_geo);
    if (!us_only) return false;  // the DOM path says why
    call.usage.us_only = *us_only;
    call.where = Where(line_number, element);
    call.file = file_;
    Record(std::string(message_id), std::move(call));
    return true;
  }

  // Keeps a new call; a repeated message id keeps its first place (its
  // session, time and chain) with the usage and model of the copy
  // KeepsOver prefers.
  void Record(std::string message_id, Call call) {
    const auto [it, inserted] = index_.emplace(std::move(message_id), calls_.size());
    if (inserted) {
      if (auto seen = tool_results_.find(ChainKey(call.session, call.sidechain, call.agent_id));
          seen != tool_results_.end()) {
        call.tool_results_before = seen->second;
      }
      calls_.push_back(std::move(call));
    } else {
      Call& kept = calls_[it->second];
      kept.tool_call = kept.tool_call || call.tool_call;
      Call& best = winners_.try_emplace(it->second, kept).first->second;
      if (KeepsOver(call, best)) best = call;
      kept.usage = best.usage;
      kept.model = best.model;
    }
  }

  Status AddLine(const std::string& line, const std::string& where) {
    auto json = ParseJsonObject(line);
    if (!json) return Bad(json.error().Within(where));
    return AddObject(*json, where);
  }

  // Returns an error to stop on, or OkStatus when the line was used,
  // ignored, or skipped as bad.
  Status Bad(const Error& error) {
    if (SkipBadLine(error)) return OkStatus();
    return error;
  }

  Status AddObject(const Json& json, const std::string& where) {
    if (!json.is_object()) return Bad(Error("expected a JSON object").Within(where));
    if (json.value("type", Json()) == "user") {
      CountToolResults(json);
      return OkStatus();
    }
    // A call as `kvbill bill` reads one (docs/billing.md#logs): an
    // "assistant" line, or one without "type" (older Claude Code versions),
    // whose message carries usage (null: none); one call per message id,
    // else per requestId, else the line is one.
    const Json type = json.value("type", Json());
    if (!(type == "assistant" || type.is_null())) return OkStatus();
    const auto message = json.find("message");
    if (message == json.end() || !message->is_object()) return OkStatus();
    const auto usage_json = message->find("usage");
    if (usage_json == message->end() || usage_json->is_null()) return OkStatus();
    const auto id = message->find("id");
    const auto request = json.find("requestId");
    const std::string key = id != message->end() && id->is_string() ? id->get<std::string>()
                            : request != json.end() && request->is_string()
                                ? "req:" + request->get<std::string>()
                                : "line:" + where;
    if (message->value("model", Json()) == "<synthetic>") return OkStatus();
    auto model = GetOptionalString(*message, "model");
    if (!model) return Bad(model.error().Within("message").Within(where));
    auto call = ParseCall(json, *usage_json);
    if (!call) return Bad(call.error().Within(where));
    call->model = model->value_or("");
    call->tool_call = HasContentBlock(*message, "tool_use");
    call->where = where;
    call->file = file_;
    Record(key, std::move(*call));
    return OkStatus();
  }

  // True when `message` is an object whose "content" array holds an object
  // with "type": `type` ("tool_result", "tool_use").
  static bool HasContentBlock(const Json& message, const char* type) {
    if (!message.is_object()) return false;
    const auto content = message.find("content");
    if (content == message.end() || !content->is_array()) return false;
    return std::any_of(content->begin(), content->end(), [type](const Json& part) {
      return part.is_object() && part.value("type", Json()) == type;
    });
  }

  // A user line whose message content holds a tool result counts for its
  // chain (a line without a readable session counts for none).
  void CountToolResults(const Json& line) {
    const auto message = line.find("message");
    if (message == line.end() || !HasContentBlock(*message, "tool_result")) return;
    const auto session = line.find("sessionId");
    if (session == line.end() || !session->is_string()) return;
    const auto agent = line.find("agentId");
    const std::string agent_id =
        agent != line.end() && agent->is_string() ? agent->get<std::string>() : "";
    ++tool_results_[ChainKey(session->get<std::string>(), line.value("isSidechain", Json()) == true,
                             agent_id)];
  }

  static Result<Call> ParseCall(const Json& line, const Json& usage) {
    Call call;
    auto session = GetString(line, "sessionId");
    if (!session) return session.error();
    call.session = *session;
    auto time_text = GetString(line, "timestamp");
    if (!time_text) return time_text.error();
    auto time = ParseTimestamp(*time_text);
    if (!time) return time.error();
    call.time = *time;
    call.time_text = *time_text;
    call.sidechain = line.value("isSidechain", Json()) == true;
    auto agent = GetOptionalString(line, "agentId");
    if (!agent) return agent.error();
    call.agent_id = agent->value_or("");
    // As `kvbill bill` reads it (docs/billing.md#pricing-rules): the same
    // counts and the same check of the cache-write split.
    auto counts = ReadClaudeUsageCounts(usage);
    if (!counts) return counts.error().Within("usage");
    auto writes = ClaudeCacheWrites(*counts);
    if (!writes) return writes.error().Within("usage");
    call.usage.input = *counts->input;
    call.usage.cache_creation = writes->first;
    call.usage.cache_creation_1h = writes->second;
    call.usage.cache_read = counts->cache_read.value_or(0);
    call.usage.web_searches = counts->web_searches.value_or(0);
    call.usage.output = *counts->output;
    // usage.speed, as `kvbill bill` reads it: "fast" is Anthropic's fast mode.
    if (const auto speed = usage.find("speed");
        speed != usage.end() && !speed->is_null() && *speed != "standard") {
      if (*speed != "fast") {
        return Error("\"speed\" must be \"standard\" or \"fast\", got " + Quote(*speed))
            .Within("usage");
      }
      call.usage.fast = true;
    }
    auto us_only = ReadUsOnly(usage);
    if (!us_only) return us_only.error().Within("usage");
    call.usage.us_only = *us_only;
    return call;
  }

  // Assigns chains, checks time order, and turns each chain into a task.
  Status BuildTasks() {
    // Chains in order of first appearance; each holds indices into calls_.
    std::vector<std::pair<std::string, std::vector<std::size_t>>> chains;
    std::map<std::pair<std::string, std::string>, std::size_t> chain_index;
    std::map<std::string, std::int64_t> subagents_per_session;
    // (file, session) -> sidechain?, prompt
    std::map<std::pair<std::size_t, std::string>, std::pair<bool, Tokens>> last_in_session;
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      Call& call = calls_[i];
      if (call.sidechain) {
        if (!call.agent_id.empty()) {
          call.chain = "agent-" + call.agent_id;
        } else {
          // A new subagent starts after a main-chain call, or when the prompt
          // shrinks below the previous subagent call's.
          const auto last = last_in_session.find({call.file, call.session});
          const bool continues = last != last_in_session.end() && last->second.first &&
                                 call.usage.prompt() >= last->second.second;
          std::int64_t& n = subagents_per_session[call.session];
          if (!continues) ++n;
          call.chain = "sidechain-" + std::to_string(n);
        }
      }
      last_in_session[{call.file, call.session}] = {call.sidechain, call.usage.prompt()};
      const auto key = std::make_pair(call.session, call.chain);
      const auto [it, inserted] = chain_index.emplace(key, chains.size());
      if (inserted) chains.push_back({call.session, {}});
      chains[it->second].second.push_back(i);
    }
    if (calls_.empty()) return OkStatus();
    Timestamp origin = calls_.front().time;
    for (const Call& call : calls_) origin = std::min(origin, call.time);
    for (auto& [session, members] : chains) {
      if (auto s = DropBackwardTimes(&members); !s) return s;
      if (members.empty()) continue;
      // A session resumed or repeated in another file: its calls in time
      // order (each file's already are).
      std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
        return calls_[a].time < calls_[b].time;
      });
      tasks_.push_back(MakeTask(members, origin));
      std::vector<std::string>& rows = task_rows_.emplace_back();
      for (std::size_t i : members) rows.push_back(calls_[i].where);
    }
    return OkStatus();
  }

  // Within each file: a call before the previous call of its chain.
  Status DropBackwardTimes(std::vector<std::size_t>* members) {
    std::vector<std::size_t> kept;
    std::map<std::size_t, std::size_t> last;  // file -> its last kept call
    for (std::size_t i : *members) {
      const auto previous = last.find(calls_[i].file);
      if (previous != last.end() && calls_[i].time < calls_[previous->second].time) {
        const Call& before = calls_[previous->second];
        const Error error(calls_[i].where + ": session \"" + calls_[i].session +
                          "\": time runs backwards: " + calls_[i].time_text +
                          " is before the previous call's " + before.time_text);
        if (!SkipBadLine(error)) return error;
        continue;
      }
      last[calls_[i].file] = i;
      kept.push_back(i);
    }
    *members = std::move(kept);
    return OkStatus();
  }

  Task MakeTask(const std::vector<std::size_t>& members, const Timestamp& origin) const {
    const Call& head = calls_[members.front()];
    Task task;
    task.id = head.chain.empty() ? head.session : head.session + "/" + head.chain;
    if (!head.chain.empty()) task.parent_id = head.session;
    task.arrival_s = head.time.Since(origin);
    task.tool_s_from_start = true;  // tool_s: the gap between calls' times
    Tokens previous_prompt = 0;
    for (std::size_t k = 0; k < members.size(); ++k) {
      const Call& call = calls_[members[k]];
      const Tokens prompt = call.usage.prompt();
      Turn turn;
      if (k > 0 && prompt < previous_prompt) {
        // The context shrank: what was read from the cache is a kept prefix.
        turn.keep = std::min(call.usage.cache_read, previous_prompt);
      }
      Tokens appended = prompt - turn.keep.value_or(previous_prompt);
      if (k > 0 && !turn.keep) {
        const Turn& before = task.turns.back();
        if (!before.output_is_placeholder) {
          const Tokens answer = std::min(before.output, appended);
          // An answer that called a tool is fed back as that call.
          const SpanKind kind =
              calls_[members[k - 1]].tool_call ? SpanKind::kToolCall : SpanKind::kAssistant;
          if (answer > 0) turn.spans.push_back(Span{kind, answer, std::nullopt});
          appended -= answer;
        }
      }
      if (k == 0 && call.usage.cache_read > 0 && call.usage.cache_read < appended) {
        // The first call's cache read is a prefix an earlier session cached:
        // the system prompt and tool definitions, which a context policy
        // keeps (summarise, sliding_window), unlike the session's own text.
        turn.spans.push_back(Span{
            SpanKind::kSystem, call.usage.cache_read,
            "claude-code/system/" + call.model + (head.chain.empty() ? "/main" : "/subagent")});
        appended -= call.usage.cache_read;
      }
      if (appended > 0 || turn.spans.empty()) {
        // Tool results read since the call before: the growth is theirs.
        const bool tool = k > 0 && !turn.keep && appended > 0 &&
                          call.tool_results_before > calls_[members[k - 1]].tool_results_before;
        turn.spans.push_back(
            Span{tool ? SpanKind::kToolResult : SpanKind::kOther, appended, std::nullopt});
      }
      turn.output = call.usage.output;
      turn.output_is_placeholder = IsClaudeCodePlaceholderOutput(call.usage.output);
      turn.time_s = call.time.Since(origin);
      turn.usage = call.usage;
      turn.model = call.model;
      if (k > 0) task.turns.back().tool_s = call.time.Since(calls_[members[k - 1]].time);
      task.turns.push_back(std::move(turn));
      previous_prompt = prompt;
    }
    return task;
  }

  std::vector<NamedStream> sources_;
  std::size_t file_ = 0;  // the source being read
  std::unique_ptr<std::istream> in_;
  std::string name_;
  bool loaded_ = false;
  std::vector<Call> calls_;
  // calls_ index -> the copy of a repeated message KeepsOver prefers
  std::unordered_map<std::size_t, Call> winners_;
  std::unordered_map<std::string, std::size_t> index_;          // message.id -> calls_ index
  std::unordered_map<std::string, std::int64_t> tool_results_;  // ChainKey -> tool-result lines
  std::deque<Task> tasks_;
  std::deque<std::vector<std::string>> task_rows_;  // of tasks_: each turn's call's "name:line"
};

}  // namespace

std::unique_ptr<TraceReader> NewClaudeCodeReader(std::unique_ptr<std::istream> in, std::string name,
                                                 ReaderOptions options) {
  std::vector<NamedStream> sources;
  sources.push_back(NamedStream{std::move(in), std::move(name)});
  return std::make_unique<ClaudeCodeReader>(std::move(sources), options);
}

std::unique_ptr<TraceReader> NewClaudeCodeReader(std::vector<NamedStream> sources,
                                                 ReaderOptions options) {
  return std::make_unique<ClaudeCodeReader>(std::move(sources), options);
}

}  // namespace kvbill
