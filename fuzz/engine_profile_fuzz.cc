// libFuzzer target: engine profile files (cost/engine_profile.h), which a
// scenario names by path (deployment.profile; docs/fuzzing.md). A profile the
// reader accepts must be written back (EngineProfileToJson) as a file that
// reads back to the same text, and its regimes must each be found by their
// keys.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "kvbill/cost/engine_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto profile = kvbill::ParseEngineProfile(kvbill::fuzz::Text(data, size), "profile.json");
  if (!profile) return 0;
  const std::string written = kvbill::EngineProfileToJson(*profile);
  auto again = kvbill::ParseEngineProfile(written, "written.json");
  if (!again) kvbill::fuzz::Fail("a profile read does not read back: " + again.error().message());
  if (kvbill::EngineProfileToJson(*again) != written)
    kvbill::fuzz::Fail("a profile read back writes other text");
  for (const kvbill::ValidationRegime& r : profile->validation_regimes) {
    if (kvbill::FindValidationRegime(*profile, r.gpu, r.moe, r.several_gpus) != &r)
      kvbill::fuzz::Fail("regime " + r.gpu + " is not found by its keys");
  }
  return 0;
}
