// Helpers for model tests: load a catalog model or inline config, failing the
// test with the error message when it does not load.
#ifndef KVBILL_TESTS_MODEL_MODEL_TEST_UTIL_H_
#define KVBILL_TESTS_MODEL_MODEL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"

namespace kvbill {

inline ModelShape Catalog(const std::string& name, std::vector<ConfigOverride> overrides = {}) {
  auto m = LoadModel(name, overrides);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

// An inline config.json text read as "c.json", and the error it gives
// ("(loaded)" when it loads).
inline ModelShape InlineConfig(const std::string& text) {
  auto m = ParseHfConfig(text, "c.json", "c");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}
inline std::string InlineError(const std::string& text) {
  auto m = ParseHfConfig(text, "c.json", "c");
  return m.ok() ? std::string("(loaded)") : m.error().message();
}

inline ElementFormat Fmt(const std::string& name) {
  auto f = ParseElementFormat(name);
  EXPECT_TRUE(f.ok());
  return f.ok() ? *f : ElementFormat{};
}

inline constexpr Tokens k32k = 32768;
inline constexpr Tokens k128k = 131072;
inline constexpr Tokens k1M = 1048576;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace kvbill

#endif  // KVBILL_TESTS_MODEL_MODEL_TEST_UTIL_H_
