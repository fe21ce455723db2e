// Mooncake FAST'25 request traces: {"timestamp": ms, "input_length",
// "output_length", "hash_ids": [...]} per line (docs/importers.md). Any other
// field is an error, so that a Dynamo trace detected as Mooncake (its first
// row without a Dynamo field) fails instead of losing its sessions.
#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbill/trace/importers.h"
#include "kvbill/util/units.h"
#include "trace/dynamo_fields.h"
#include "trace/format_number.h"
#include "trace/json_fields.h"
#include "trace/json_scan.h"
#include "trace/line_task_reader.h"

namespace kvbill {
namespace {

constexpr Tokens kMooncakeBlockTokens = 512;

// Every field of a row in the published traces (conversation, toolagent,
// synthetic, and the arXiv release's mooncake_trace.jsonl).
constexpr std::array<std::string_view, 4> kFields = {"timestamp", "input_length", "output_length",
                                                     "hash_ids"};

bool IsMooncakeField(std::string_view key) {
  return std::find(kFields.begin(), kFields.end(), key) != kFields.end();
}

// The error for a field a Mooncake row does not have: a Dynamo field says
// which reader to use.
Error UnknownField(const std::string& key) {
  if (IsDynamoField(key)) {
    return Error("\"" + key +
                 "\" is a Dynamo field, not a Mooncake one: this looks like a Dynamo trace "
                 "(use --from dynamo)");
  }
  return Error("unknown field \"" + key +
               "\" (a Mooncake row has timestamp, input_length, output_length, hash_ids)");
}

class MooncakeReader : public StreamingLineReader {
 public:
  MooncakeReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : StreamingLineReader(std::move(in), std::move(name), options, /*has_header=*/false) {
    IdsAreRowNumbers();
  }

 private:
  // A row is a one-request task named by its row number (bad rows count too).
  // Rows are requests in arrival order (the published traces are sorted), so
  // a timestamp before the previous good row's is an error, not a reordering.
  Result<Task> DecodeLine(const std::string& line) override {
    const std::int64_t row = row_++;
    auto decoded = Decode(line);
    if (!decoded) return decoded;
    decoded->id = std::to_string(row);
    const double ms = *decoded->turns[0].time_s * kMillisecondsPerSecond;
    if (ms < previous_ms_) {
      return Error("time runs backwards: " + FormatNumber(ms) +
                   " ms is before the previous row's " + FormatNumber(previous_ms_) + " ms");
    }
    previous_ms_ = ms;
    return decoded;
  }

  static Result<Task> Decode(const std::string& line) {
    if (Task task; FastDecode(line, &task)) return task;
    auto json = ParseJsonObject(line);
    if (!json) return json.error();
    for (const auto& [key, value] : json->items()) {
      if (!IsMooncakeField(key)) return UnknownField(key);
    }
    auto timestamp_ms = GetNumber(*json, "timestamp");
    if (!timestamp_ms) return timestamp_ms.error();
    if (*timestamp_ms < 0) {
      return Error("\"timestamp\" must be a non-negative number, got " +
                   Quote(json->at("timestamp")));
    }
    auto input = GetTokens(*json, "input_length");
    if (!input) return input.error();
    auto output = GetTokens(*json, "output_length");
    if (!output) return output.error();
    const auto hashes = json->find("hash_ids");
    if (hashes == json->end()) return Error("missing \"hash_ids\"");
    if (!hashes->is_array()) return Error("\"hash_ids\" must be an array, got " + Quote(*hashes));
    Turn turn;
    turn.spans.push_back(Span{SpanKind::kOther, *input, std::nullopt});
    turn.output = *output;
    turn.time_s = *timestamp_ms / kMillisecondsPerSecond;
    BlockHashes blocks;
    blocks.block_size = kMooncakeBlockTokens;
    blocks.hashes.reserve(hashes->size());
    for (const Json& h : *hashes) {
      if (!h.is_number_unsigned()) {
        return Error("\"hash_ids\" must hold non-negative integers, got " + Quote(h));
      }
      blocks.hashes.push_back(h.get<std::uint64_t>());
    }
    if (std::string problem = BlockCoverageProblem(blocks, *input, "hash_ids"); !problem.empty()) {
      return Error(problem);
    }
    turn.blocks = std::move(blocks);
    Task task;
    task.arrival_s = *turn.time_s;
    task.turns.push_back(std::move(turn));
    return task;
  }

  // Decode's result for a plain valid row (json_scan.h), or false to let
  // Decode read the row and say what is wrong.
  static bool FastDecode(std::string_view line, Task* task) {
    JsonScanner scan(line);
    std::optional<double> timestamp_ms;
    std::optional<Tokens> input, output;
    std::optional<std::vector<std::uint64_t>> hashes;
    const auto once = [&](auto* field, auto read) {
      if (field->has_value()) return false;  // a repeated key
      field->emplace();
      return read(&**field);
    };
    const bool ok = scan.Object([&](std::string_view key) {
      if (key == "timestamp") return once(&timestamp_ms, [&](double* v) { return scan.Double(v); });
      if (key == "input_length") return once(&input, [&](Tokens* v) { return scan.Count(v); });
      if (key == "output_length") return once(&output, [&](Tokens* v) { return scan.Count(v); });
      if (key == "hash_ids") {
        return once(&hashes, [&](std::vector<std::uint64_t>* v) {
          return scan.Array([&] {
            std::uint64_t h = 0;
            if (!scan.Unsigned(&h)) return false;
            v->push_back(h);
            return true;
          });
        });
      }
      return false;  // an unknown field: Decode names it
    });
    if (!ok || !scan.AtEnd() || !timestamp_ms || *timestamp_ms < 0 || !input || !output ||
        !hashes) {
      return false;
    }
    BlockHashes blocks{kMooncakeBlockTokens, std::move(*hashes)};
    if (!BlockCoverageProblem(blocks, *input, "hash_ids").empty()) return false;
    Turn turn;
    turn.spans.push_back(Span{SpanKind::kOther, *input, std::nullopt});
    turn.output = *output;
    turn.time_s = *timestamp_ms / kMillisecondsPerSecond;
    turn.blocks = std::move(blocks);
    task->arrival_s = *turn.time_s;
    task->turns.push_back(std::move(turn));
    return true;
  }

  std::int64_t row_ = 0;
  double previous_ms_ = 0;  // the last good row's timestamp
};

}  // namespace

std::unique_ptr<TraceReader> NewMooncakeReader(std::unique_ptr<std::istream> in, std::string name,
                                               ReaderOptions options) {
  return std::make_unique<MooncakeReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
