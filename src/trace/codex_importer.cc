// Codex CLI rollouts (docs/importers.md#codex): one task per session, one
// turn per token_count event. Streams: one session in memory.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvbill/trace/importers.h"
#include "trace/codex_usage.h"
#include "trace/json_fields.h"
#include "trace/line_reader.h"
#include "trace/timestamp.h"

namespace kvbill {
namespace {

class CodexReader : public TraceReader {
 public:
  CodexReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : TraceReader(options), lines_(std::move(in), std::move(name)) {}

  Result<bool> Next(Task* task) override {
    std::string line;
    while (lines_.Next(&line)) {
      auto started = ReadLine(line);
      if (!started) {
        const Error error = lines_.At(started.error());
        if (!SkipBadLine(error)) return error;
        continue;
      }
      if (!*started) continue;
      auto flushed = Flush(task);
      if (!flushed) return flushed.error();
      if (*flushed) return true;
    }
    if (lines_.failed()) return Error(lines_.name() + ": read failed");
    return Flush(task);
  }

 private:
  // The lines a session came from: the one that started it, and each call's.
  struct SessionLines {
    std::int64_t start = 0;
    std::vector<std::int64_t> calls;
  };

  // Moves the session read so far into *task; false when it has no calls,
  // or when it fails TraceReader::CheckTask and bad lines are skipped.
  Result<bool> Flush(Task* task) {
    if (!session_ || session_->turns.empty()) return false;
    *task = std::move(*session_);
    const SessionLines lines = std::move(session_lines_);
    session_.reset();
    session_lines_ = {};
    if (pending_) {
      session_ = std::move(*pending_);
      session_lines_ = {pending_start_, {}};
      pending_.reset();
    }
    const auto row = [this](std::int64_t line) {
      return lines_.name() + ":" + std::to_string(line);
    };
    return CheckTask(*task, row(lines.start),
                     [&](std::size_t turn) { return row(lines.calls[turn]); });
  }

  // Reads one line; true when it starts a new session after one with calls
  // (the caller then returns the finished one).
  Result<bool> ReadLine(const std::string& line) {
    auto json = ParseJsonObject(line);
    if (!json) return json.error();
    auto type = GetOptionalString(*json, "type");
    if (!type) return type.error();
    if (!*type) return false;
    const auto payload = json->find("payload");
    if (payload == json->end() || !payload->is_object()) return false;
    auto time_text = GetString(*json, "timestamp");
    if (!time_text) return time_text.error();
    auto time = ParseTimestamp(*time_text);
    if (!time) return time.error();
    if (!origin_) origin_ = *time;
    if (**type == "session_meta") return StartSession(*payload, *time);
    if (**type == "event_msg") return ReadEvent(*payload, *time, *time_text);
    if (**type == "turn_context") {
      // The model of the calls that follow (as `kvbill bill` reads it).
      auto model = GetOptionalString(*payload, "model");
      if (!model) return model.error().Within("payload");
      if (*model) model_ = **model;
    }
    return false;
  }

  Result<bool> StartSession(const Json& payload, const Timestamp& time) {
    auto id = GetString(payload, "id");
    if (!id) return id.error().Within("payload");
    Task task;
    task.id = *id;
    task.arrival_s = time.Since(*origin_);
    task.tool_s_from_start = true;  // tool_s: the gap between calls' times
    ResetSessionState();
    // A session's calls name its own model, not the last session's (as
    // `kvbill bill` reads them): session_meta's, else the turn contexts'.
    model_.clear();
    auto model = GetOptionalString(payload, "model");
    if (model && *model) model_ = **model;
    if (session_ && !session_->turns.empty()) {
      pending_ = std::move(task);
      pending_start_ = lines_.line_number();
      return true;
    }
    session_ = std::move(task);
    session_lines_ = {lines_.line_number(), {}};
    return false;
  }

  void ResetSessionState() {
    last_total_.reset();
    last_time_.reset();
    last_time_text_.clear();
  }

  Result<bool> ReadEvent(const Json& payload, const Timestamp& time, const std::string& time_text) {
    // (find + get_ref: GCC 12 warns, wrongly, on json == "text" inlined here.)
    const auto event = payload.find("type");
    if (event == payload.end() || !event->is_string() ||
        event->get_ref<const std::string&>() != "token_count") {
      return false;
    }
    const auto info = payload.find("info");
    if (info == payload.end() || info->is_null()) return false;  // rate limits only
    if (!info->is_object()) return Error("payload: \"info\" must be an object");
    if (auto model = CodexEventModel(payload, *info)) model_ = *model;
    // The call as `kvbill bill` reads it: last_token_usage, or in older
    // rollouts the difference of the running totals.
    auto count = ReadCodexTokenCount(*info, last_total_);
    if (!count) return count.error();
    // Codex repeats a token_count when only the rate limits change: a call
    // is new only when the running totals moved.
    const auto same = [](const CodexUsage& a, const CodexUsage& b) {
      return a.input == b.input && a.cached == b.cached && a.output == b.output;
    };
    if (count->total && last_total_ && same(*last_total_, *count->total)) return false;
    if (last_time_ && time < *last_time_) {
      return Error("time runs backwards: " + time_text + " is before the previous call's " +
                   last_time_text_);
    }
    if (!session_) {
      Task task;
      task.id = "session-" + std::to_string(++unnamed_sessions_);
      task.arrival_s = time.Since(*origin_);
      task.tool_s_from_start = true;
      session_ = std::move(task);
      session_lines_ = {lines_.line_number(), {}};
    }
    AddTurn(count->call, time);
    if (count->total) last_total_ = *count->total;
    last_time_ = time;
    last_time_text_ = time_text;
    return false;
  }

  void AddTurn(const CodexUsage& usage, const Timestamp& time) {
    std::vector<Turn>& turns = session_->turns;
    const Tokens prompt = usage.input;
    Turn turn;
    Tokens appended = prompt;
    if (!turns.empty()) {
      if (prompt < previous_prompt_) {
        // The context shrank (compaction): the cached part is a kept prefix.
        turn.keep = std::min(usage.cached, previous_prompt_);
        appended = prompt - *turn.keep;
      } else {
        appended = prompt - previous_prompt_;
        const Tokens answer = std::min(previous_answer_, appended);
        if (answer > 0) turn.spans.push_back(Span{SpanKind::kAssistant, answer, std::nullopt});
        appended -= answer;
      }
      turns.back().tool_s = time.Since(*last_time_);
    }
    if (appended > 0 || turn.spans.empty()) {
      turn.spans.push_back(Span{SpanKind::kOther, appended, std::nullopt});
    }
    turn.output = usage.output;
    turn.time_s = time.Since(*origin_);
    RecordedUsage recorded;
    recorded.input = usage.input - usage.cached;
    recorded.cache_read = usage.cached;
    recorded.output = usage.output;
    turn.usage = recorded;
    turn.model = model_;
    turns.push_back(std::move(turn));
    session_lines_.calls.push_back(lines_.line_number());
    previous_prompt_ = prompt;
    previous_answer_ = usage.output - usage.reasoning_output;
  }

  LineReader lines_;
  std::optional<Timestamp> origin_;  // the first timestamp of the input
  std::optional<Task> session_;      // being read
  SessionLines session_lines_;       // of session_
  std::optional<Task> pending_;      // started by a session_meta while session_ was returned
  std::int64_t pending_start_ = 0;   // the line of pending_'s session_meta
  std::optional<CodexUsage> last_total_;
  std::optional<Timestamp> last_time_;
  std::string last_time_text_;
  Tokens previous_prompt_ = 0;
  Tokens previous_answer_ = 0;
  std::int64_t unnamed_sessions_ = 0;
  std::string model_;  // the latest turn_context's model; empty before one
};

}  // namespace

std::unique_ptr<TraceReader> NewCodexReader(std::unique_ptr<std::istream> in, std::string name,
                                            ReaderOptions options) {
  return std::make_unique<CodexReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
