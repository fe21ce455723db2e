// libFuzzer target: scenario files (scenario/scenario.h), parsed from text
// (docs/fuzzing.md). Relative paths resolve in a directory that does not
// exist, so only catalog models and GPUs load.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "kvbill/scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)kvbill::ParseScenario(kvbill::fuzz::Text(data, size), "/nonexistent-kvbill-fuzz/s.json");
  return 0;
}
