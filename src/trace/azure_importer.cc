// Azure LLM inference trace 2023: CSV "TIMESTAMP,ContextTokens,GeneratedTokens"
// (docs/importers.md#azure-2023).
#include <charconv>
#include <utility>

#include "kvbill/trace/importers.h"
#include "trace/line_task_reader.h"
#include "trace/timestamp.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

constexpr std::string_view kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";

Result<Tokens> ParseCount(std::string_view text, const char* column) {
  Tokens value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return Error(std::string(column) + " must be a non-negative integer, got \"" +
                 json_input::Bounded(text) + "\"");
  }
  if (value > kMaxTokenCount) {
    return Error(std::string(column) + " must be at most 2^40, got \"" + json_input::Bounded(text) +
                 "\"");
  }
  return value;
}

class AzureReader : public StreamingLineReader {
 public:
  AzureReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : StreamingLineReader(std::move(in), std::move(name), options, /*has_header=*/true) {
    IdsAreRowNumbers();
  }

 private:
  // A file saved with CRLF line ends (a spreadsheet on Windows) ends each
  // line with '\r': not part of the last field.
  static std::string_view WithoutCr(std::string_view line) {
    if (line.ends_with('\r')) line.remove_suffix(1);
    return line;
  }

  Status CheckHeader(const std::string& line) override {
    if (WithoutCr(line) != kAzureHeader) {
      return Error("expected the header " + std::string(kAzureHeader));
    }
    return OkStatus();
  }

  Result<Task> DecodeLine(const std::string& line) override { return Decode(WithoutCr(line)); }

  Result<Task> Decode(std::string_view line) {
    const std::size_t c1 = line.find(',');
    const std::size_t c2 = c1 == std::string_view::npos ? c1 : line.find(',', c1 + 1);
    if (c2 == std::string_view::npos || line.find(',', c2 + 1) != std::string_view::npos) {
      return Error("expected 3 comma-separated fields");
    }
    auto time = ParseTimestamp(line.substr(0, c1));
    if (!time) return time.error();
    auto context = ParseCount(line.substr(c1 + 1, c2 - c1 - 1), "ContextTokens");
    if (!context) return context.error();
    auto generated = ParseCount(line.substr(c2 + 1), "GeneratedTokens");
    if (!generated) return generated.error();
    // Rows are requests in arrival order (the published files are sorted): a
    // row before the previous good one would arrive before it, or before 0.
    if (previous_ && *time < *previous_) {
      return Error("time runs backwards: " + json_input::Bounded(line.substr(0, c1)) +
                   " is before the previous row's " + previous_text_);
    }
    previous_ = *time;
    previous_text_.assign(line.substr(0, c1));  // reuses its capacity
    if (!origin_) origin_ = *time;
    Turn turn;
    turn.spans.push_back(Span{SpanKind::kOther, *context, std::nullopt});
    turn.output = *generated;
    turn.time_s = time->Since(*origin_);
    Task task;
    task.id = std::to_string(row_++);
    task.arrival_s = *turn.time_s;
    task.turns.push_back(std::move(turn));
    return task;
  }

  std::optional<Timestamp> origin_;
  std::optional<Timestamp> previous_;  // the last good row's time
  std::string previous_text_;
  std::int64_t row_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> NewAzureReader(std::unique_ptr<std::istream> in, std::string name,
                                            ReaderOptions options) {
  return std::make_unique<AzureReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
