// libFuzzer target: the native trace reader (trace/reader.h) (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "kvbill/trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kvbill::fuzz::ReadAllTasks(&kvbill::NewNativeReader, data, size);
  return 0;
}
