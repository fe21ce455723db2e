// Format names, detection from content, and OpenTrace.
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "kvbill/trace/importers.h"
#include "kvbill/util/file.h"
#include "trace/json_fields.h"
#include "trace/line_reader.h"

namespace kvbill {
namespace {

using ReaderFactory = std::unique_ptr<TraceReader> (*)(std::unique_ptr<std::istream>, std::string,
                                                       ReaderOptions);

struct FormatEntry {
  TraceFormat format;
  std::string_view name;
  ReaderFactory make;
};

constexpr std::array<FormatEntry, 9> kFormats = {{
    {TraceFormat::kNative, "native", NewNativeReader},
    {TraceFormat::kMooncake, "mooncake", NewMooncakeReader},
    {TraceFormat::kDynamo, "dynamo", NewDynamoReader},
    {TraceFormat::kClaudeCode, "claude-code", NewClaudeCodeReader},
    {TraceFormat::kCodex, "codex", NewCodexReader},
    {TraceFormat::kOpenAi, "openai", NewOpenAiReader},
    {TraceFormat::kTraceLab, "tracelab", NewTraceLabReader},
    {TraceFormat::kTraceLabCsv, "tracelab-csv", NewTraceLabCsvReader},
    {TraceFormat::kAzure, "azure", NewAzureReader},
}};

const FormatEntry& Entry(TraceFormat format) {
  for (const FormatEntry& e : kFormats) {
    if (e.format == format) return e;
  }
  return kFormats[0];
}

// A Chat Completions or Responses object, or a usage object (nested or bare).
bool IsOpenAiObject(const Json& json) {
  const Json object = json.value("object", Json());
  if (object == "chat.completion" || object == "response") return true;
  const auto usage = json.find("usage");
  const Json& counts = usage != json.end() && usage->is_object() ? *usage : json;
  return counts.contains("prompt_tokens") || counts.contains("input_tokens");
}

}  // namespace

std::string_view TraceFormatName(TraceFormat format) { return Entry(format).name; }

std::string TraceFormatChoices() {
  std::string out;
  for (const FormatEntry& e : kFormats) {
    if (!out.empty()) out += "|";
    out += e.name;
  }
  return out;
}

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (const FormatEntry& e : kFormats) {
    if (e.name == name) return e.format;
  }
  return Error("unknown trace format \"" + std::string(name) + "\" (one of " +
               TraceFormatChoices() + ")");
}

Result<TraceFormat> DetectTraceFormat(std::string_view first_line, const std::string& name,
                                      std::int64_t line_number) {
  const std::size_t start = first_line.find_first_not_of(" \t");
  const std::string_view line =
      start == std::string_view::npos ? std::string_view() : first_line.substr(start);
  if (line.starts_with("TIMESTAMP,ContextTokens,GeneratedTokens")) return TraceFormat::kAzure;
  if (line.starts_with("session_id,") && line.find(",prefix_len,") != std::string_view::npos) {
    return TraceFormat::kTraceLabCsv;
  }
  if (line.starts_with("[")) return TraceFormat::kClaudeCode;
  if (line.starts_with("{")) {
    auto json = ParseJsonObject(line);
    if (json) {
      if (json->contains("kvbill_trace")) return TraceFormat::kNative;
      if (json->contains("hash_ids") || json->contains("input_length")) {
        for (const char* key :
             {"request_id", "session_id", "wait_for", "prefix_reset", "tool_wait_ms", "delay"}) {
          if (json->contains(key)) return TraceFormat::kDynamo;
        }
        return TraceFormat::kMooncake;
      }
      if (json->contains("round_index") && json->contains("input_tokens_total")) {
        return TraceFormat::kTraceLab;
      }
      const std::string type = json->value("type", Json()).is_string() ? (*json)["type"] : "";
      if (json->contains("payload") && (type == "session_meta" || type == "event_msg" ||
                                        type == "response_item" || type == "turn_context")) {
        return TraceFormat::kCodex;
      }
      if (json->contains("sessionId") || type == "user" || type == "assistant" ||
          type == "system" || type == "summary") {
        return TraceFormat::kClaudeCode;
      }
      if (IsOpenAiObject(*json)) return TraceFormat::kOpenAi;
    }
  }
  return Error(name + ":" + std::to_string(line_number) +
               ": unrecognised trace format (use --from " + TraceFormatChoices() + ")");
}

Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& path,
                                               std::optional<TraceFormat> format,
                                               ReaderOptions options) {
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in) return OpenError(path);
  if (!format) {
    LineReader probe(std::make_unique<std::ifstream>(path, std::ios::binary), path);
    std::string first;
    if (!probe.Next(&first)) return Error(path + ": empty trace");
    auto detected = DetectTraceFormat(first, path, probe.line_number());
    if (!detected) return detected.error();
    format = *detected;
  } else {
    // A file of nothing but blank lines is no trace in any format, whether
    // or not the format was given.
    int c = in->get();
    while (c == ' ' || c == '\t' || c == '\r' || c == '\n') c = in->get();
    if (c == std::char_traits<char>::eof()) return Error(path + ": empty trace");
    in->clear();
    in->seekg(0);
  }
  return Entry(*format).make(std::move(in), path, options);
}

Result<std::vector<Task>> ReadTraceTasks(const std::string& path, std::optional<TraceFormat> format,
                                         ReaderOptions options) {
  auto reader = OpenTrace(path, format, options);
  if (!reader) return reader.error();
  std::vector<Task> tasks;
  Task task;
  while (true) {
    auto more = (*reader)->Next(&task);
    if (!more) return more.error();
    if (!*more) return tasks;
    tasks.push_back(task);
  }
}

}  // namespace kvbill
