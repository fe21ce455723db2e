// libFuzzer target: price sheets (cost/price_sheet.h): kvbill's own format,
// or LiteLLM's when the object is not one (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "kvbill/cost/price_sheet.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)kvbill::ParsePriceSheet(kvbill::fuzz::Text(data, size), "prices.json");
  return 0;
}
