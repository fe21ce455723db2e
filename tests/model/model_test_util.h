// Helpers for model tests: load a catalog model or inline config, failing the
// test with the error message when it does not load.
#ifndef KVBILL_TESTS_MODEL_MODEL_TEST_UTIL_H_
#define KVBILL_TESTS_MODEL_MODEL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"

namespace kvbill {

inline ModelShape Catalog(const std::string& name, std::vector<ConfigOverride> overrides = {}) {
  auto m = LoadModel(name, overrides);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
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
