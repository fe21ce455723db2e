// Shared bodies of the libFuzzer targets in fuzz/ (docs/fuzzing.md).
//
// A target hands the fuzzer's bytes to one reader as the whole content of a
// file. Whatever the bytes, the reader must return a value or an Error: a
// crash, a sanitizer report, a hang or a huge allocation is a finding. Where
// a reader promises more (a trace reader's tasks satisfy ValidateTask), the
// target checks it and aborts with the broken promise.
#ifndef KVBILL_FUZZ_FUZZ_UTIL_H_
#define KVBILL_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "kvbill/trace/reader.h"
#include "kvbill/trace/trace.h"

namespace kvbill::fuzz {

// The fuzzer's bytes as a string.
inline std::string Text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Stops the run with `what`: libFuzzer saves the input that got here.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "kvbill fuzz: %s\n", what.c_str());
  std::abort();
}

using TraceReaderFactory = std::unique_ptr<TraceReader> (*)(std::unique_ptr<std::istream> in,
                                                            std::string name,
                                                            ReaderOptions options);

// Reads every task of the input, once stopping at the first bad line and
// once skipping bad lines. Every task must satisfy ValidateTask; its prompts
// are then computed (PromptTokens), so that an overflow shows under UBSan.
inline void ReadAllTasks(TraceReaderFactory make_reader, const std::uint8_t* data,
                         std::size_t size) {
  for (const bool skip_bad : {false, true}) {
    std::unique_ptr<TraceReader> reader =
        make_reader(std::make_unique<std::istringstream>(Text(data, size)), "fuzz.trace",
                    ReaderOptions{.skip_bad = skip_bad});
    Task task;
    for (;;) {
      Result<bool> next = reader->Next(&task);
      if (!next || !*next) break;
      if (Status valid = ValidateTask(task); !valid) {
        Fail("task \"" + task.id + "\" breaks ValidateTask: " + valid.error().message());
      }
      (void)PromptTokens(task);
    }
  }
}

}  // namespace kvbill::fuzz

#endif  // KVBILL_FUZZ_FUZZ_UTIL_H_
