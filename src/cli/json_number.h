// JsonNumber: a number as the CLI writes it in JSON (and CSV cells made from
// JSON), so that counts stay exact.
//
// The engine sums bytes and tokens as long double (a 64-bit mantissa: every
// integer up to 2^64 exact). A whole number within the int64 range is
// written as that integer, digit for digit (18971233111719936, not
// 1.8971233111719936e+16, whose double has lost the last bits beyond 2^53);
// any other value as the double nearest it, at full precision.
#ifndef KVBILL_SRC_CLI_JSON_NUMBER_H_
#define KVBILL_SRC_CLI_JSON_NUMBER_H_

#include <nlohmann/json.hpp>

namespace kvbill::cli {

nlohmann::json JsonNumber(long double v);

}  // namespace kvbill::cli

#endif  // KVBILL_SRC_CLI_JSON_NUMBER_H_
