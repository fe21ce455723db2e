// Mooncake FAST'25 request traces: {"timestamp": ms, "input_length",
// "output_length", "hash_ids": [...]} per line (docs/importers.md).
#include <utility>

#include "kvbill/trace/importers.h"
#include "trace/json_fields.h"
#include "trace/line_task_reader.h"

namespace kvbill {
namespace {

constexpr Tokens kMooncakeBlockTokens = 512;
constexpr double kMillisecondsPerSecond = 1000.0;

class MooncakeReader : public StreamingLineReader {
 public:
  MooncakeReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : StreamingLineReader(std::move(in), std::move(name), options, /*has_header=*/false) {}

 private:
  // A row is a one-request task named by its row number (bad rows count too).
  Result<Task> DecodeLine(const std::string& line) override {
    const std::int64_t row = row_++;
    auto decoded = Decode(line);
    if (decoded) decoded->id = std::to_string(row);
    return decoded;
  }

  static Result<Task> Decode(const std::string& line) {
    auto json = ParseJsonObject(line);
    if (!json) return json.error();
    auto timestamp_ms = GetNumber(*json, "timestamp");
    if (!timestamp_ms) return timestamp_ms.error();
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
    turn.blocks = std::move(blocks);
    Task task;
    task.arrival_s = *turn.time_s;
    task.turns.push_back(std::move(turn));
    return task;
  }

  std::int64_t row_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> NewMooncakeReader(std::unique_ptr<std::istream> in, std::string name,
                                               ReaderOptions options) {
  return std::make_unique<MooncakeReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
