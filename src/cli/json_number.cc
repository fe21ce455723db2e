#include "cli/json_number.h"

#include <cmath>
#include <cstdint>

namespace kvbill::cli {

nlohmann::json JsonNumber(long double v) {
  // [-2^63, 2^63): the int64 range, both bounds exact in a long double.
  constexpr long double kTwoTo63 = 9223372036854775808.0L;
  if (std::isfinite(v) && std::floor(v) == v && v >= -kTwoTo63 && v < kTwoTo63) {
    return static_cast<std::int64_t>(v);
  }
  return static_cast<double>(v);
}

}  // namespace kvbill::cli
