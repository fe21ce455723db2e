// TraceLab per-call rows (round_trace.jsonl) and its simulator CSV
// (docs/importers.md#tracelab). Rows are grouped by session, so the whole
// input's rows (numbers only) are held in memory.
#include <algorithm>
#include <charconv>
#include <deque>
#include <functional>
#include <map>
#include <utility>

#include "kvbill/trace/importers.h"
#include "kvbill/util/units.h"
#include "trace/json_fields.h"
#include "trace/line_task_reader.h"
#include "trace/timestamp.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

// One call of a session, as both TraceLab formats describe it.
struct Row {
  std::int64_t round = 0;
  Tokens prompt = 0;
  Tokens prefix = 0;  // cached (jsonl) or carried-over (csv) prefix of the prompt
  Tokens output = 0;
  std::optional<Timestamp> start;      // jsonl: first timing event
  std::optional<Seconds> arrival_s;    // csv: session arrival
  std::optional<Seconds> tool_wait_s;  // csv: wait after the call
  std::optional<RecordedUsage> usage;
  std::string model;      // jsonl: the call's model ("" unknown)
  std::int64_t line = 0;  // where it was read
};

// Rows grouped by session in order of first appearance.
class SessionRows {
 public:
  // Adds a row read on `line`. Error (the row not added) when its session
  // already has a row of that round: `round_key` names the column.
  Status Add(const std::string& session, Row row, const char* round_key, std::int64_t line) {
    const auto [first, fresh] = round_lines_.emplace(std::pair{session, row.round}, line);
    if (!fresh) {
      return Error("session \"" + session + "\": " + round_key + " " + std::to_string(row.round) +
                   " appears twice (first on line " + std::to_string(first->second) + ")");
    }
    row.line = line;
    const auto [it, inserted] = index_.emplace(session, sessions_.size());
    if (inserted) sessions_.push_back({session, {}});
    sessions_[it->second].second.push_back(std::move(row));
    return OkStatus();
  }

  // One task per session, given to `add` with the line of each of its
  // turns; `csv` selects how the prefix is read (see docs). Error when a
  // session's rounds start in another order than their indices.
  Status Build(bool csv,
               const std::function<void(Task, const std::vector<std::int64_t>& lines)>& add) {
    std::optional<Timestamp> origin;
    for (const auto& [id, rows] : sessions_) {
      for (const Row& row : rows) {
        if (row.start && (!origin || *row.start < *origin)) origin = row.start;
      }
    }
    for (auto& [id, rows] : sessions_) {
      std::stable_sort(rows.begin(), rows.end(),
                       [](const Row& a, const Row& b) { return a.round < b.round; });
      Task task;
      task.id = id;
      // Rows with timing events: tool_s is the gap between their starts.
      task.tool_s_from_start = rows.size() > 1;
      Tokens previous = 0;
      const Row* last_timed = nullptr;
      std::vector<std::int64_t> lines;
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const Row& row = rows[k];
        if (row.start) {
          if (last_timed != nullptr && *row.start < *last_timed->start) {
            return Error("session \"" + id + "\": round_index " + std::to_string(row.round) +
                         " starts before round_index " + std::to_string(last_timed->round) +
                         " (time runs backwards)");
          }
          last_timed = &row;
        }
        Turn turn;
        if (k > 0 && (csv ? row.prefix < previous : row.prompt < previous)) {
          turn.keep = std::min(row.prefix, previous);
        }
        Tokens appended = row.prompt - turn.keep.value_or(previous);
        if (csv && k > 0 && !turn.keep && row.prefix > previous) {
          // The carried-over prefix includes the previous answer.
          turn.spans.push_back(Span{SpanKind::kAssistant, row.prefix - previous, std::nullopt});
          appended -= row.prefix - previous;
        } else if (!csv && k > 0 && !turn.keep) {
          // The growth opens with the previous answer, fed back (at most the
          // growth; the assumption the other agent-log importers make).
          const Tokens answer = std::min(rows[k - 1].output, appended);
          if (answer > 0) turn.spans.push_back(Span{SpanKind::kAssistant, answer, std::nullopt});
          appended -= answer;
        }
        if (appended > 0 || turn.spans.empty()) {
          turn.spans.push_back(Span{SpanKind::kOther, appended, std::nullopt});
        }
        turn.output = row.output;
        turn.usage = row.usage;
        turn.model = row.model;
        if (row.start && origin) turn.time_s = row.start->Since(*origin);
        if (row.tool_wait_s) turn.tool_s = *row.tool_wait_s;
        if (k > 0 && row.start && rows[k - 1].start) {
          task.turns.back().tool_s = row.start->Since(*rows[k - 1].start);
        } else if (k > 0) {
          task.tool_s_from_start = false;  // a wait after the answer (tool_wait_after_ms)
        }
        task.turns.push_back(std::move(turn));
        lines.push_back(row.line);
        previous = row.prompt;
      }
      task.arrival_s = rows.front().arrival_s.value_or(task.turns.front().time_s.value_or(0));
      add(std::move(task), lines);
    }
    return OkStatus();
  }

 private:
  std::vector<std::pair<std::string, std::vector<Row>>> sessions_;
  std::map<std::string, std::size_t> index_;
  // The line of each (session, round) read.
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> round_lines_;
};

// Both TraceLab formats group rows by session; `csv` selects how the rows
// become turns.
class GroupingReader : public GroupingLineReader {
 public:
  GroupingReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options,
                 bool csv)
      : GroupingLineReader(std::move(in), std::move(name), options), csv_(csv) {}

 protected:
  Status Build(std::deque<Task>* tasks) override {
    auto add = [&](Task task, const std::vector<std::int64_t>& turn_lines) {
      TaskRows rows{Where(turn_lines.front()), {}};
      for (std::int64_t line : turn_lines) rows.turns.push_back(Where(line));
      AddTask(tasks, std::move(task), std::move(rows));
    };
    if (Status s = rows_.Build(csv_, add); !s) return s.error().Within(lines().name());
    return OkStatus();
  }
  SessionRows rows_;

 private:
  bool csv_;
};

class RoundTraceReader : public GroupingReader {
 public:
  RoundTraceReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : GroupingReader(std::move(in), std::move(name), options, false) {}

 private:
  Status ParseLine(const std::string& line) override {
    auto json = ParseJsonObject(line);
    if (!json) return json.error();
    auto session = GetString(*json, "session_id");
    if (!session) return session.error();
    Row row;
    auto round = GetTokens(*json, "round_index");
    if (!round) return round.error();
    row.round = *round;
    for (auto [key, field] :
         {std::pair{"input_tokens_total", &row.prompt}, std::pair{"prefix_tokens", &row.prefix},
          std::pair{"output_tokens", &row.output}}) {
      auto value = GetTokens(*json, key);
      if (!value) return value.error();
      *field = *value;
    }
    if (row.prefix > row.prompt) return Error("\"prefix_tokens\" exceeds \"input_tokens_total\"");
    auto uncached = GetOptionalTokens(*json, "claude_uncached_input_tokens");
    auto creation = GetOptionalTokens(*json, "claude_cache_creation_input_tokens");
    auto read = GetOptionalTokens(*json, "claude_cache_read_input_tokens");
    for (const auto* r : {&uncached, &creation, &read}) {
      if (!*r) return r->error();
    }
    if (uncached->has_value() && creation->has_value() && read->has_value()) {
      row.usage = RecordedUsage{**uncached, **creation, **read, row.output};
    } else {
      row.usage = RecordedUsage{row.prompt - row.prefix, 0, row.prefix, row.output};
    }
    auto model = GetOptionalString(*json, "model");
    if (!model) return model.error();
    row.model = model->value_or("");
    if (const auto events = json->find("timing_events");
        events != json->end() && events->is_array()) {
      for (const Json& event : *events) {
        if (!event.is_object()) continue;
        auto text = GetString(event, "timestamp");
        if (!text) return text.error().Within("timing_events");
        auto time = ParseTimestamp(*text);
        if (!time) return time.error().Within("timing_events");
        if (!row.start || *time < *row.start) row.start = *time;
      }
    }
    return rows_.Add(*session, std::move(row), "round_index", lines().line_number());
  }
};

class SimulatorCsvReader : public GroupingReader {
 public:
  SimulatorCsvReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : GroupingReader(std::move(in), std::move(name), options, true) {}

 private:
  static constexpr const char* kColumns[] = {"session_id",        "arrival_time", "round_idx",
                                             "prefix_len",        "input_len",    "output_len",
                                             "tool_wait_after_ms"};

  static std::vector<std::string> Split(const std::string& line) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = line.find(',', start);
      out.push_back(line.substr(start, comma == std::string::npos ? comma : comma - start));
      if (comma == std::string::npos) return out;
      start = comma + 1;
    }
  }

  Status ParseLine(const std::string& line) override {
    const std::vector<std::string> fields = Split(line);
    if (column_.empty()) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (!column_.emplace(fields[i], i).second) {
          bad_header_ = "column \"" + fields[i] + "\" appears twice";
          return Error(bad_header_);
        }
      }
      for (const char* name : kColumns) {
        if (column_.count(name) == 0 && std::string(name) != "arrival_time") {
          bad_header_ = std::string("missing column ") + name;
          return Error(bad_header_);
        }
      }
      return OkStatus();
    }
    // Rows after a bad header (read on under skip_bad) cannot be decoded.
    if (!bad_header_.empty()) return Error(bad_header_ + " in the header");
    if (fields.size() != column_.size()) {
      return Error("expected " + std::to_string(column_.size()) + " fields, got " +
                   std::to_string(fields.size()));
    }
    auto number = [&](const char* name) -> Result<std::int64_t> {
      const std::string& text = fields[column_.at(name)];
      std::int64_t value = 0;
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
        return Error(std::string(name) + " must be a non-negative integer, got \"" +
                     json_input::Bounded(text) + "\"");
      }
      if (value > kMaxTokenCount) {
        return Error(std::string(name) + " must be at most 2^40, got \"" +
                     json_input::Bounded(text) + "\"");
      }
      return value;
    };
    Row row;
    std::int64_t input = 0, wait_ms = 0;
    for (auto [name, field] :
         {std::pair{"round_idx", &row.round}, std::pair{"prefix_len", &row.prefix},
          std::pair{"input_len", &input}, std::pair{"output_len", &row.output},
          std::pair{"tool_wait_after_ms", &wait_ms}}) {
      auto value = number(name);
      if (!value) return value.error();
      *field = *value;
    }
    row.prompt = row.prefix + input;
    row.tool_wait_s = static_cast<double>(wait_ms) / kMillisecondsPerSecond;
    if (column_.count("arrival_time") != 0) {
      auto arrival = number("arrival_time");
      if (!arrival) return arrival.error();
      row.arrival_s = static_cast<double>(*arrival) / kMillisecondsPerSecond;
    }
    return rows_.Add(fields[column_.at("session_id")], std::move(row), "round_idx",
                     lines().line_number());
  }

  std::map<std::string, std::size_t> column_;
  std::string bad_header_;  // what is wrong with the header, when something is
};

}  // namespace

std::unique_ptr<TraceReader> NewTraceLabReader(std::unique_ptr<std::istream> in, std::string name,
                                               ReaderOptions options) {
  return std::make_unique<RoundTraceReader>(std::move(in), std::move(name), options);
}

std::unique_ptr<TraceReader> NewTraceLabCsvReader(std::unique_ptr<std::istream> in,
                                                  std::string name, ReaderOptions options) {
  return std::make_unique<SimulatorCsvReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
