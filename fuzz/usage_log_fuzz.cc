// libFuzzer target: the usage-log reader of `kvbill bill` (bill/usage_log.h;
// docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_util.h"
#include "kvbill/bill/usage_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(kvbill::fuzz::Text(data, size));
  kvbill::UsageLog log;
  (void)kvbill::ReadUsageLog(in, "usage.jsonl", &log);
  return 0;
}
