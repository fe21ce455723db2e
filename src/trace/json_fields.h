// Field access for the JSON-based trace readers, with the error texts that
// docs/trace-format.md and the tests rely on. nlohmann/json stays inside
// src/trace/.
#ifndef KVBILL_SRC_TRACE_JSON_FIELDS_H_
#define KVBILL_SRC_TRACE_JSON_FIELDS_H_

#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

using Json = nlohmann::json;

// Parses one JSON text through the front door (src/util/json_input.h).
// Errors: "truncated JSON" when the text ends before the value does,
// "number out of range: 1e999" for a number beyond a double, "repeated key at
// #/a/b" for a key repeated within an object, else "invalid JSON at column N"
// (a text of several lines: "invalid JSON at line L, column N"), followed by
// ": nested deeper than 256 levels" when that is the reason.
Result<Json> ParseJson(std::string_view text);

// Parses one line that must hold a JSON object ("expected a JSON object").
Result<Json> ParseJsonObject(std::string_view text);

// A required integer field in [0, kMaxTokenCount] (2^40). Errors:
// "missing \"key\"", "\"key\" must be a non-negative integer, got -5",
// "\"key\" must be at most 2^40, got 2000000000000".
Result<Tokens> GetTokens(const Json& object, const char* key);
// The same for an optional field: nullopt when absent or null.
Result<std::optional<Tokens>> GetOptionalTokens(const Json& object, const char* key);

// A finite number field: "\"key\" must be a number, got \"x\"".
Result<double> GetNumber(const Json& object, const char* key);
Result<std::optional<double>> GetOptionalNumber(const Json& object, const char* key);

// A string field: "\"key\" must be a string, got 3".
Result<std::string> GetString(const Json& object, const char* key);
Result<std::optional<std::string>> GetOptionalString(const Json& object, const char* key);

// Skips a UTF-8 byte order mark at the stream's position (a file's start),
// so that the readers that look at the first byte (a JSON array or lines?)
// see what follows it; other bytes are left in place.
void SkipByteOrderMark(std::istream& in);

// The model a Codex token_count event names, looked for where ccusage
// looks: info.model, info.model_name, info.metadata.model, payload.model,
// payload.metadata.model (non-empty strings); nullopt when none does. The
// bill (src/bill/usage_log.cc) and the trace importer read models alike.
std::optional<std::string> CodexEventModel(const Json& payload, const Json& info);

// The value as compact JSON text, shortened to 40 characters, for messages
// (only that prefix is printed, whatever the value's size).
std::string Quote(const Json& value);

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_JSON_FIELDS_H_
