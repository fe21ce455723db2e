// The native trace reader: a header line, then one task per line.
#include <string>
#include <utility>

#include "kvbill/trace/reader.h"
#include "trace/line_task_reader.h"
#include "trace/native_codec.h"

namespace kvbill {
namespace {

class NativeReader : public StreamingLineReader {
 public:
  NativeReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : StreamingLineReader(std::move(in), std::move(name), options, /*has_header=*/true) {}

 private:
  Status CheckHeader(const std::string& line) override {
    // Exactly {"kvbill_trace":1}: another key, or 1.0, is not this
    // version's header (docs/trace-format.md).
    auto header = ParseJsonObject(line);
    if (!header || header->size() != 1 || !header->contains("kvbill_trace") ||
        !(*header)["kvbill_trace"].is_number_integer() || (*header)["kvbill_trace"] != 1) {
      return Error("not a kvbill trace: the first line must be " + std::string(kNativeHeader));
    }
    return OkStatus();
  }

  Result<Task> DecodeLine(const std::string& line) override {
    Result<Task> task = Task();
    if (!FastDecodeTask(line, &*task)) {
      // Not a plain valid line: the DOM path decodes it or says what is wrong.
      auto json = ParseJsonObject(line);
      if (!json) return json.error();
      task = DecodeTask(*json);
      if (!task) return task;
    }
    if (auto valid = ValidateTask(*task); !valid) {
      return valid.error().Within("task \"" + task->id + "\"");
    }
    // Ids are unique within a trace (docs/trace-format.md): TraceReader's
    // CheckTask refuses a repeat, as for every importer.
    return task;
  }
};

}  // namespace

std::unique_ptr<TraceReader> NewNativeReader(std::unique_ptr<std::istream> in, std::string name,
                                             ReaderOptions options) {
  return std::make_unique<NativeReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
