// The native trace reader: a header line, then one task per line.
#include <utility>

#include "kvbill/trace/reader.h"
#include "trace/line_reader.h"
#include "trace/native_codec.h"

namespace kvbill {
namespace {

class NativeReader : public TraceReader {
 public:
  NativeReader(std::unique_ptr<std::istream> in, std::string name, ReaderOptions options)
      : TraceReader(options), lines_(std::move(in), std::move(name)) {}

  Result<bool> Next(Task* task) override {
    std::string line;
    while (lines_.Next(&line)) {
      if (!header_seen_) {
        header_seen_ = true;
        auto header = ParseJsonObject(line);
        if (!header || header->value("kvbill_trace", Json()) != 1) {
          return lines_.At("not a kvbill trace: the first line must be " +
                           std::string(kNativeHeader));
        }
        continue;
      }
      auto decoded = Decode(line);
      if (decoded) {
        *task = std::move(*decoded);
        return true;
      }
      const Error error = lines_.At(decoded.error());
      if (!SkipBadLine(error)) return error;
    }
    if (lines_.failed()) return Error(lines_.name() + ": read failed");
    return false;
  }

 private:
  static Result<Task> Decode(const std::string& line) {
    auto json = ParseJsonObject(line);
    if (!json) return json.error();
    auto task = DecodeTask(*json);
    if (!task) return task;
    if (auto valid = ValidateTask(*task); !valid) {
      return valid.error().Within("task \"" + task->id + "\"");
    }
    return task;
  }

  LineReader lines_;
  bool header_seen_ = false;
};

}  // namespace

std::unique_ptr<TraceReader> NewNativeReader(std::unique_ptr<std::istream> in, std::string name,
                                             ReaderOptions options) {
  return std::make_unique<NativeReader>(std::move(in), std::move(name), options);
}

}  // namespace kvbill
