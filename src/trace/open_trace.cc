// Format names, detection from content, and OpenTrace.
#include "trace/open_trace.h"

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "kvbill/trace/importers.h"
#include "kvbill/util/file.h"
#include "trace/dynamo_fields.h"
#include "trace/json_fields.h"
#include "trace/line_reader.h"

namespace kvbill {
namespace {

// A stream that gives `prefix` back, then the rest of `source`: what format
// detection read from a pipe is not lost.
class ReplayStream : public std::istream {
 public:
  ReplayStream(std::string prefix, std::unique_ptr<std::istream> source)
      : std::istream(nullptr),
        buffer_(std::move(prefix), source.get()),
        source_(std::move(source)) {
    rdbuf(&buffer_);
  }

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::string prefix, std::istream* source)
        : prefix_(std::move(prefix)), source_(source), chunk_(1 << 16) {
      setg(prefix_.data(), prefix_.data(), prefix_.data() + prefix_.size());
    }

   protected:
    int_type underflow() override {
      if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
      source_->read(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
      const std::streamsize n = source_->gcount();
      if (n <= 0) return traits_type::eof();
      setg(chunk_.data(), chunk_.data(), chunk_.data() + n);
      return traits_type::to_int_type(*gptr());
    }

   private:
    std::string prefix_;
    std::istream* source_;
    std::vector<char> chunk_;
  };

  Buffer buffer_;
  std::unique_ptr<std::istream> source_;
};

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

// A Dynamo row spelled with the aliases (input_tokens, output_tokens): every
// key a Dynamo field, and one of them a field OpenAI's bare usage objects do
// not have (all but session_id and the two counts: request_id, timestamp,
// delay, tool_wait_ms, wait_for, ...), so the row is not a usage object.
bool IsDynamoAliasRow(const Json& json) {
  if (!json.contains("input_tokens")) return false;
  bool dynamo_only = false;
  for (const auto& [key, value] : json.items()) {
    if (!IsDynamoField(key)) return false;
    if (key != "session_id" && key != "input_tokens" && key != "output_tokens") dynamo_only = true;
  }
  return dynamo_only;
}

// A Chat Completions or Responses object, or a usage object (nested or bare).
bool IsOpenAiObject(const Json& json) {
  const Json object = json.value("object", Json());
  if (object == "chat.completion" || object == "response") return true;
  const auto usage = json.find("usage");
  const Json& counts = usage != json.end() && usage->is_object() ? *usage : json;
  return counts.contains("prompt_tokens") || counts.contains("input_tokens");
}

// A compressed file is read as it is: said so (with or without --from),
// not "unrecognised" or a reader's parse error.
std::optional<Error> CompressedTrace(std::string_view first_bytes, const std::string& name) {
  if (first_bytes.starts_with("\x1f\x8b")) {
    return Error(name + ": gzip-compressed; kvbill reads traces uncompressed (gunzip it first)");
  }
  if (first_bytes.starts_with("\x28\xb5\x2f\xfd")) {
    return Error(name + ": zstd-compressed; kvbill reads traces uncompressed (unzstd it first)");
  }
  return std::nullopt;
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
  // A UTF-8 byte order mark at the start is accepted, as by the readers.
  if (first_line.starts_with("\xEF\xBB\xBF")) first_line.remove_prefix(3);
  const std::size_t start = first_line.find_first_not_of(" \t");
  const std::string_view line =
      start == std::string_view::npos ? std::string_view() : first_line.substr(start);
  if (line.starts_with("TIMESTAMP,ContextTokens,GeneratedTokens")) return TraceFormat::kAzure;
  if (line.starts_with("session_id,") && line.find(",prefix_len,") != std::string_view::npos) {
    return TraceFormat::kTraceLabCsv;
  }
  if (line.starts_with("[")) return TraceFormat::kClaudeCode;
  if (auto compressed = CompressedTrace(first_line, name)) return *compressed;
  if (line.starts_with("{")) {
    // A line that opens an object but is not valid JSON: its fault is the
    // message (every JSON format would stop at it), not an unknown format.
    auto json = ParseJsonObject(line);
    if (!json) return json.error().Within(name + ":" + std::to_string(line_number));
    if (json->contains("kvbill_trace")) return TraceFormat::kNative;
    if (json->contains("hash_ids") || json->contains("input_length")) {
      for (const char* key :
           {"request_id", "session_id", "wait_for", "prefix_reset", "tool_wait_ms", "delay"}) {
        if (json->contains(key)) return TraceFormat::kDynamo;
      }
      return TraceFormat::kMooncake;
    }
    if (IsDynamoAliasRow(*json)) return TraceFormat::kDynamo;
    if (json->contains("round_index") && json->contains("input_tokens_total")) {
      return TraceFormat::kTraceLab;
    }
    const std::string type = json->value("type", Json()).is_string() ? (*json)["type"] : "";
    if (json->contains("payload") && (type == "session_meta" || type == "event_msg" ||
                                      type == "response_item" || type == "turn_context")) {
      return TraceFormat::kCodex;
    }
    // Claude Code's lines: a transcript may open with a file-history
    // snapshot or a queue operation, neither of which has a sessionId.
    if (json->contains("sessionId") || type == "user" || type == "assistant" || type == "system" ||
        type == "summary" || type == "file-history-snapshot" || type == "queue-operation") {
      return TraceFormat::kClaudeCode;
    }
    if (IsOpenAiObject(*json)) return TraceFormat::kOpenAi;
  }
  return Error(name + ":" + std::to_string(line_number) +
               ": unrecognised trace format (use --from " + TraceFormatChoices() + ")");
}

Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& path,
                                               std::optional<TraceFormat> format,
                                               ReaderOptions options) {
  // Opened once and read once, as a stream: "-", /dev/stdin, a FIFO or a
  // pipe work like a file (docs/robustness.md#pipes).
  std::unique_ptr<std::istream> in;
  if (path == "-") {
    in = std::make_unique<std::istream>(std::cin.rdbuf());
  } else {
    auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
    if (!*file) return OpenError(path);
    if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
      return Error(path + ": a directory, not a trace file");
    }
    NoteInputFile(path);
    in = std::move(file);
  }
  return OpenTraceStream(std::move(in), path, format, options);
}

Result<TraceFormat> DetectStreamFormat(std::istream& in, const std::string& name) {
  std::string line;
  for (std::int64_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string_view text(line);
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    return DetectTraceFormat(line, name, number);
  }
  return Error(name + ": empty trace");
}

std::optional<TraceFormat> DetectTraceFileFormat(const std::string& path) {
  if (path == "-") return std::nullopt;
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  auto format = DetectStreamFormat(in, path);
  if (!format) return std::nullopt;
  return *format;
}

Result<std::unique_ptr<TraceReader>> OpenTraceStream(std::unique_ptr<std::istream> in,
                                                     const std::string& path,
                                                     std::optional<TraceFormat> format,
                                                     ReaderOptions options) {
  // Up to the first line that is not blank: the detection reads it, then the
  // reader gets it back ahead of the rest.
  std::string prefix, line;
  std::size_t first_start = 0, first_size = 0;  // the first line that is not blank
  std::int64_t line_number = 0;
  while (first_size == 0 && std::getline(*in, line)) {
    ++line_number;
    const std::size_t start = prefix.size();
    if (prefix.empty()) {
      prefix = std::move(line);  // no copy of a long first line
    } else {
      prefix += line;
    }
    std::string_view text(prefix.data() + start, prefix.size() - start);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") != std::string_view::npos) {
      first_start = start;
      first_size = text.size();
    }
    if (!in->eof()) prefix += '\n';
  }
  if (in->bad()) return Error(path + ": read failed");
  if (first_size == 0) return Error(path + ": empty trace");
  if (auto compressed = CompressedTrace(prefix, path)) return *compressed;
  if (!format) {
    const std::string_view first(prefix.data() + first_start, first_size);
    auto detected = DetectTraceFormat(first, path, line_number);
    if (!detected) return detected.error();
    format = *detected;
  }
  in->clear();
  return Entry(*format).make(std::make_unique<ReplayStream>(std::move(prefix), std::move(in)), path,
                             options);
}

namespace {

// Every task a reader gives, in order.
Result<std::vector<Task>> ReadAll(TraceReader& reader) {
  std::vector<Task> tasks;
  Task task;
  while (true) {
    auto more = reader.Next(&task);
    if (!more) return more.error();
    if (!*more) return tasks;
    tasks.push_back(task);
  }
}

}  // namespace

Result<std::vector<Task>> ReadTraceTasks(const std::string& path, std::optional<TraceFormat> format,
                                         ReaderOptions options) {
  auto reader = OpenTrace(path, format, options);
  if (!reader) return reader.error();
  return ReadAll(**reader);
}

}  // namespace kvbill

namespace kvbill {

Result<std::vector<Task>> ReadTraceTasksFrom(std::unique_ptr<std::istream> in,
                                             const std::string& name,
                                             std::optional<TraceFormat> format,
                                             ReaderOptions options) {
  auto reader = OpenTraceStream(std::move(in), name, format, options);
  if (!reader) return reader.error();
  return ReadAll(**reader);
}

}  // namespace kvbill
