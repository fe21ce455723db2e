// libFuzzer target: the TraceLab simulator CSV importer (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "kvbill/trace/importers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kvbill::fuzz::ReadAllTasks(&kvbill::NewTraceLabCsvReader, data, size);
  return 0;
}
