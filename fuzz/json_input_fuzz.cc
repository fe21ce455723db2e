// libFuzzer target: the JSON front door (src/util/json_input.h) every reader
// parses through (docs/robustness.md#json-input). Beyond not crashing, it
// checks the door's promises: nothing nested deeper than kMaxDepth is
// accepted, and what a message quotes is bounded.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "util/json_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace json_input = kvbill::json_input;
  const std::string text = kvbill::fuzz::Text(data, size);
  json_input::Problem problem;
  const auto doc = json_input::Parse(text, &problem);
  if (doc) {
    if (json_input::FindTooDeep(text)) kvbill::fuzz::Fail("accepted text nested beyond the limit");
    if (json_input::Quote(*doc).size() > json_input::kMaxQuote + 3) {
      kvbill::fuzz::Fail("a quote beyond its bound");
    }
  } else if (problem.reason.size() > json_input::kMaxReason + 3) {
    kvbill::fuzz::Fail("an unbounded reason: " + problem.reason.substr(0, 200));
  }
  (void)json_input::ParseOrdered(text, &problem, {.allow_duplicate_keys = true});
  return 0;
}
