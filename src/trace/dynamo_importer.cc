// NVIDIA Dynamo agentic Mooncake rows (docs/importers.md#dynamo): rows
// grouped by session_id, one turn per row. Rows of one session may
// interleave with others, so the whole input's rows (numbers and ids, no
// content) are held in memory.
#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbill/trace/importers.h"
#include "kvbill/util/units.h"
#include "trace/dynamo_fields.h"
#include "trace/format_number.h"
#include "trace/json_fields.h"
#include "trace/line_task_reader.h"

namespace kvbill {
namespace {

// Tokens per hash id. The rows do not say; Dynamo's converter prints its
// block size and its replay takes it as --trace-block-size (see docs).
constexpr Tokens kDynamoBlockTokens = 512;

// Every field of Dynamo's MooncakeRow / AgenticMooncakeRow, with aliases.
// Anything else is rejected (docs/importers.md#dynamo lists what is read).
constexpr std::array<std::string_view, 22> kKnownFields = {
    "request_id",    "session_id",         "input_length", "input_tokens", "output_length",
    "output_tokens", "output_token_ids",   "hash_ids",     "timestamp",    "created_time",
    "delay",         "delay_ms",           "wait_for",     "branches",     "prefix_reset",
    "tool_wait_ms",  "tool_events",        "request_kind", "priority",     "strict_priority",
    "policy_class",  "routing_constraints"};

// One request row, as much of it as kvbill uses.
struct Row {
  std::string where;  // "file:line", for errors found after grouping
  Tokens prompt = 0;
  Tokens output = 0;
  std::optional<double> timestamp_ms;
  double wait_ms = 0;  // delay + tool_wait_ms: the wait before this row
  bool prefix_reset = false;
  std::optional<std::vector<std::uint64_t>> hashes;
  std::vector<std::string> wait_for;  // kept for a session's first row only
};

struct Session {
  std::string id;
  std::vector<Row> rows;
};

// The key present among `key` and its serde alias (nullptr when neither).
Result<const char*> PickAlias(const Json& json, const char* key, const char* alias) {
  const bool has_key = json.contains(key);
  const bool has_alias = json.contains(alias);
  if (has_key && has_alias) {
    return Error(std::string("both \"") + key + "\" and its alias \"" + alias + "\"");
  }
  if (has_alias) return alias;
  return has_key ? key : nullptr;
}

// An optional number of milliseconds, >= 0.
Result<std::optional<double>> GetOptionalMilliseconds(const Json& json, const char* key) {
  auto value = GetOptionalNumber(json, key);
  if (!value) return value.error();
  if (value->has_value() && **value < 0) {
    return Error(std::string("\"") + key + "\" must be a non-negative number, got " +
                 FormatNumber(**value));
  }
  return value;
}

class DynamoReader : public GroupingLineReader {
 public:
  DynamoReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : GroupingLineReader(std::move(in), std::move(name), options) {}

 private:
  Status ParseLine(const std::string& line) override {
    const std::int64_t row_number = rows_read_++;
    auto json = ParseJsonObject(line);
    if (!json) return json.error();
    for (const auto& [key, value] : json->items()) {
      if (!IsDynamoField(key)) return Error("unknown field \"" + key + "\"");
    }
    auto request_id = GetOptionalString(*json, "request_id");
    if (!request_id) return request_id.error();
    auto session_id = GetOptionalString(*json, "session_id");
    if (!session_id) return session_id.error();

    Row row;
    row.where = lines().name() + ":" + std::to_string(lines().line_number());
    auto input_key = PickAlias(*json, "input_length", "input_tokens");
    if (!input_key) return input_key.error();
    auto prompt = GetTokens(*json, *input_key ? *input_key : "input_length");
    if (!prompt) return prompt.error();
    row.prompt = *prompt;
    auto output_key = PickAlias(*json, "output_length", "output_tokens");
    if (!output_key) return output_key.error();
    auto output = GetTokens(*json, *output_key ? *output_key : "output_length");
    if (!output) return output.error();
    row.output = *output;

    auto time_key = PickAlias(*json, "timestamp", "created_time");
    if (!time_key) return time_key.error();
    if (*time_key) {
      auto timestamp = GetOptionalMilliseconds(*json, *time_key);
      if (!timestamp) return timestamp.error();
      row.timestamp_ms = *timestamp;
    }
    auto delay_key = PickAlias(*json, "delay", "delay_ms");
    if (!delay_key) return delay_key.error();
    if (*delay_key) {
      auto delay = GetOptionalMilliseconds(*json, *delay_key);
      if (!delay) return delay.error();
      row.wait_ms += delay->value_or(0);
    }
    auto tool_wait = GetOptionalMilliseconds(*json, "tool_wait_ms");
    if (!tool_wait) return tool_wait.error();
    row.wait_ms += tool_wait->value_or(0);

    if (const auto reset = json->find("prefix_reset"); reset != json->end() && !reset->is_null()) {
      if (!reset->is_boolean()) {
        return Error("\"prefix_reset\" must be true or false, got " + Quote(*reset));
      }
      row.prefix_reset = reset->get<bool>();
    }
    if (const auto hashes = json->find("hash_ids"); hashes != json->end() && !hashes->is_null()) {
      if (!hashes->is_array()) return Error("\"hash_ids\" must be an array, got " + Quote(*hashes));
      std::vector<std::uint64_t> ids;
      ids.reserve(hashes->size());
      for (const Json& h : *hashes) {
        if (!h.is_number_unsigned()) {
          return Error("\"hash_ids\" must hold non-negative integers, got " + Quote(h));
        }
        ids.push_back(h.get<std::uint64_t>());
      }
      // The rows do not say their block size; a smaller one than the 512
      // assumed gives more ids than the prompt's 512-token blocks. Those
      // past them stand for none of its tokens here: dropped, not refused
      // (docs/importers.md#dynamo).
      const auto blocks =
          static_cast<std::size_t>((row.prompt + kDynamoBlockTokens - 1) / kDynamoBlockTokens);
      if (ids.size() > blocks) ids.resize(blocks);
      if (std::string problem =
              BlockCoverageProblem(BlockHashes{kDynamoBlockTokens, ids}, row.prompt, "hash_ids");
          !problem.empty()) {
        return Error(problem);
      }
      row.hashes = std::move(ids);
    }
    std::vector<std::string> wait_for;
    if (const auto deps = json->find("wait_for"); deps != json->end() && !deps->is_null()) {
      if (!deps->is_array()) {
        return Error("\"wait_for\" must be an array of request ids, got " + Quote(*deps));
      }
      for (const Json& d : *deps) {
        if (!d.is_string()) {
          return Error("\"wait_for\" must be an array of request ids, got " + Quote(d));
        }
        wait_for.push_back(d.get<std::string>());
      }
    }

    // A row without session_id is a one-turn task of its own.
    const std::string id = session_id->value_or(request_id->value_or(std::to_string(row_number)));
    const auto known = session_id->has_value() ? index_.find(id) : index_.end();
    const std::size_t index = known != index_.end() ? known->second : sessions_.size();
    if (known == index_.end()) {
      if (!row.timestamp_ms) return Error("missing \"timestamp\" on the first row of a session");
      row.wait_for = std::move(wait_for);
      if (session_id->has_value()) index_.emplace(id, index);
      sessions_.push_back(Session{id, {}});
    }
    if (request_id->has_value()) task_of_request_[**request_id] = index;
    sessions_[index].rows.push_back(std::move(row));
    return OkStatus();
  }

  // Drops rows whose timestamp runs backwards in their session (an error
  // unless bad lines are skipped).
  Status DropBackwardTimes(Session* session) {
    std::vector<Row> kept;
    std::optional<double> last_ms;
    for (Row& row : session->rows) {
      if (row.timestamp_ms && last_ms && *row.timestamp_ms < *last_ms) {
        const Error error(row.where + ": session \"" + session->id +
                          "\": time runs backwards: " + FormatNumber(*row.timestamp_ms) +
                          " ms is before the previous row's " + FormatNumber(*last_ms) + " ms");
        if (!SkipBadLine(error)) return error;
        continue;
      }
      if (row.timestamp_ms) last_ms = row.timestamp_ms;
      kept.push_back(std::move(row));
    }
    session->rows = std::move(kept);
    return OkStatus();
  }

  Status Build(std::deque<Task>* tasks) override {
    for (std::size_t s = 0; s < sessions_.size(); ++s) {
      Session& session = sessions_[s];
      if (auto status = DropBackwardTimes(&session); !status) return status;
      Task task;
      task.id = session.id;
      task.arrival_s = session.rows.front().timestamp_ms.value_or(0) / kMillisecondsPerSecond;
      // A session that starts after another session's request is its child.
      for (const std::string& dependency : session.rows.front().wait_for) {
        const auto it = task_of_request_.find(dependency);
        if (it != task_of_request_.end() && it->second != s) {
          task.parent_id = sessions_[it->second].id;
          break;
        }
      }
      // A row's delay and tool_wait_ms are the wait before it: turn k's
      // tool_s comes from row k + 1 (the last turn's, 0, from its own row).
      TaskRows rows{session.rows.front().where, {}};
      for (std::size_t k = 0; k < session.rows.size(); ++k) {
        task.turns.push_back(MakeTurn(session.rows, k));
        if (k > 0) task.turns[k - 1].tool_s = session.rows[k].wait_ms / kMillisecondsPerSecond;
        rows.turns.push_back(session.rows[k].where);
        rows.waits.push_back(session.rows[std::min(k + 1, session.rows.size() - 1)].where);
      }
      session.rows.clear();
      AddTask(tasks, std::move(task), std::move(rows));
    }
    sessions_.clear();
    return OkStatus();
  }

  // Row k of a session as a turn: the prompt growth since row k-1, or a kept
  // prefix when the context was reset or shrank.
  static Turn MakeTurn(const std::vector<Row>& rows, std::size_t k) {
    const Row& row = rows[k];
    Turn turn;
    Tokens appended = row.prompt;
    if (k > 0) {
      const Row& previous = rows[k - 1];
      if (row.prefix_reset) {
        turn.keep = 0;
      } else if (row.prompt < previous.prompt) {
        turn.keep = std::min({SharedPrefixTokens(previous, row), row.prompt, previous.prompt});
        appended = row.prompt - *turn.keep;
      } else {
        appended = row.prompt - previous.prompt;
        const Tokens answer = std::min(previous.output, appended);
        if (answer > 0) turn.spans.push_back(Span{SpanKind::kAssistant, answer, std::nullopt});
        appended -= answer;
      }
    }
    if (appended > 0 || turn.spans.empty()) {
      turn.spans.push_back(Span{SpanKind::kOther, appended, std::nullopt});
    }
    turn.output = row.output;
    if (row.timestamp_ms) turn.time_s = *row.timestamp_ms / kMillisecondsPerSecond;
    if (row.hashes) {
      BlockHashes blocks;
      blocks.block_size = kDynamoBlockTokens;
      blocks.hashes = *row.hashes;
      turn.blocks = std::move(blocks);
    }
    return turn;
  }

  // Tokens of the leading hash ids two rows share (0 without hashes).
  static Tokens SharedPrefixTokens(const Row& a, const Row& b) {
    if (!a.hashes || !b.hashes) return 0;
    const auto [ia, ib] =
        std::mismatch(a.hashes->begin(), a.hashes->end(), b.hashes->begin(), b.hashes->end());
    return static_cast<Tokens>(ia - a.hashes->begin()) * kDynamoBlockTokens;
  }

  std::int64_t rows_read_ = 0;
  std::vector<Session> sessions_;  // in order of first appearance
  std::map<std::string, std::size_t> index_;
  std::map<std::string, std::size_t> task_of_request_;  // request_id -> index in sessions_
};

}  // namespace

bool IsDynamoField(std::string_view key) {
  return std::find(kKnownFields.begin(), kKnownFields.end(), key) != kKnownFields.end();
}

std::unique_ptr<TraceReader> NewDynamoReader(std::unique_ptr<std::istream> in, std::string name,
                                             ReaderOptions options) {
  return std::make_unique<DynamoReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
