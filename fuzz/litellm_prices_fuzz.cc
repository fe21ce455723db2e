// libFuzzer target: LiteLLM's model_prices_and_context_window.json import
// (cost/price_sheet.h ImportLiteLlmPrices; docs/fuzzing.md).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "kvbill/cost/price_sheet.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)kvbill::ImportLiteLlmPrices(kvbill::fuzz::Text(data, size), "litellm.json");
  return 0;
}
