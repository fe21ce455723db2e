#include "trace/json_fields.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "util/json_input.h"

namespace kvbill {

Result<Json> ParseJson(std::string_view text) {
  json_input::Problem problem;
  auto json = json_input::Parse(text, &problem);
  if (json) return std::move(*json);
  using Kind = json_input::Problem::Kind;
  switch (problem.kind) {
    case Kind::kTruncated:
      return Error("truncated JSON");
    case Kind::kNumberRange:
      return Error(problem.reason);
    case Kind::kDuplicateKey:
      return Error("repeated key at #" + problem.pointer);
    case Kind::kSyntax:
    case Kind::kTooDeep:
      break;
  }
  // One line (a JSONL record): the byte gives the column. A whole file: say
  // which line, so the position can be found.
  const std::size_t byte = std::min(problem.byte, text.size());
  const bool nul = byte < text.size() && text[byte] == '\0';
  const std::string detail = problem.kind == Kind::kTooDeep || nul ? ": " + problem.reason : "";
  const std::size_t last_newline = text.substr(0, byte).rfind('\n');
  if (last_newline == std::string_view::npos) {
    return Error("invalid JSON at column " + std::to_string(byte + 1) + detail);
  }
  const auto line = 1 + std::count(text.begin(), text.begin() + last_newline + 1, '\n');
  return Error("invalid JSON at line " + std::to_string(line) + ", column " +
               std::to_string(byte - last_newline) + detail);
}

Result<Json> ParseJsonObject(std::string_view text) {
  auto json = ParseJson(text);
  if (!json) return json;
  if (!json->is_object()) return Error("expected a JSON object");
  return json;
}

void SkipByteOrderMark(std::istream& in) {
  if (in.peek() != 0xEF) return;
  char bytes[3] = {};
  in.read(bytes, 3);
  if (in.gcount() == 3 && bytes[1] == '\xBB' && bytes[2] == '\xBF') return;
  // Not a mark: give the bytes back (the stream buffers what it just read).
  in.clear();
  for (std::streamsize i = in.gcount(); i > 0; --i) in.putback(bytes[i - 1]);
}

std::string Quote(const Json& value) { return json_input::Quote(value, 40); }

Result<std::optional<Tokens>> GetOptionalTokens(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<Tokens>();
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value <= static_cast<std::uint64_t>(kMaxTokenCount)) {
      return std::optional<Tokens>(static_cast<Tokens>(value));
    }
    return Error("\"" + std::string(key) + "\" must be at most 2^40, got " + Quote(*it));
  } else if (it->is_number_integer() && it->get<std::int64_t>() >= 0 &&
             it->get<std::int64_t>() <= kMaxTokenCount) {
    return std::optional<Tokens>(it->get<std::int64_t>());
  }
  return Error("\"" + std::string(key) + "\" must be a non-negative integer, got " + Quote(*it));
}

Result<Tokens> GetTokens(const Json& object, const char* key) {
  auto value = GetOptionalTokens(object, key);
  if (!value) return value.error();
  if (!value->has_value()) return Error("missing \"" + std::string(key) + "\"");
  return **value;
}

Result<std::optional<double>> GetOptionalNumber(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<double>();
  if (!it->is_number() || !std::isfinite(it->get<double>())) {
    return Error("\"" + std::string(key) + "\" must be a number, got " + Quote(*it));
  }
  return std::optional<double>(it->get<double>());
}

Result<double> GetNumber(const Json& object, const char* key) {
  auto value = GetOptionalNumber(object, key);
  if (!value) return value.error();
  if (!value->has_value()) return Error("missing \"" + std::string(key) + "\"");
  return **value;
}

Result<std::optional<std::string>> GetOptionalString(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) {
    return Error("\"" + std::string(key) + "\" must be a string, got " + Quote(*it));
  }
  return std::optional<std::string>(it->get<std::string>());
}

Result<std::string> GetString(const Json& object, const char* key) {
  auto value = GetOptionalString(object, key);
  if (!value) return value.error();
  if (!value->has_value()) return Error("missing \"" + std::string(key) + "\"");
  return **value;
}

namespace {

// A non-empty string at object[key], or nullopt.
std::optional<std::string> NonEmptyString(const Json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

}  // namespace

std::optional<std::string> CodexEventModel(const Json& payload, const Json& info) {
  for (const Json* object : {&info, &payload}) {
    if (auto m = NonEmptyString(*object, "model")) return m;
    if (object == &info) {
      if (auto m = NonEmptyString(*object, "model_name")) return m;
    }
    if (object->is_object()) {
      if (const auto meta = object->find("metadata"); meta != object->end()) {
        if (auto m = NonEmptyString(*meta, "model")) return m;
      }
    }
  }
  return std::nullopt;
}

}  // namespace kvbill
