// libFuzzer target: config.json interpretation (model/hf_config.h), then the
// KV, state and weight arithmetic on the shape it accepts (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/weight_bytes.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kvbill;
  Result<ModelShape> shape = ParseHfConfig(fuzz::Text(data, size), "config.json", "fuzz");
  if (!shape) return 0;
  // A shape the loader accepts must size a 1M-token sequence without overflow.
  Result<ElementFormat> bf16 = ParseElementFormat("bf16");
  if (!bf16) fuzz::Fail("bf16: " + bf16.error().message());
  (void)BytesPerToken(*shape, *bf16);
  (void)PeakFootprint(*shape, *bf16, Tokens{1} << 20, 16);
  (void)StateBytesPerSequence(*shape);
  // Weight bytes of the checkpoint's own quantization and of a uniform format.
  (void)ComputeWeightBytes(*shape, "auto");
  (void)ComputeWeightBytes(*shape, "fp8");
  return 0;
}
