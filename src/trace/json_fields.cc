#include "trace/json_fields.h"

#include <cmath>

namespace kvbill {

Result<Json> ParseJson(std::string_view text) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    if (std::string_view(e.what()).find("unexpected end of input") != std::string_view::npos) {
      return Error("truncated JSON");
    }
    return Error("invalid JSON at column " + std::to_string(e.byte));
  }
}

Result<Json> ParseJsonObject(std::string_view text) {
  auto json = ParseJson(text);
  if (!json) return json;
  if (!json->is_object()) return Error("expected a JSON object");
  return json;
}

std::string Quote(const Json& value) {
  std::string text = value.dump();
  constexpr std::size_t kMax = 40;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

Result<std::optional<Tokens>> GetOptionalTokens(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<Tokens>();
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    if (value <= static_cast<std::uint64_t>(INT64_MAX)) {
      return std::optional<Tokens>(static_cast<Tokens>(value));
    }
  } else if (it->is_number_integer() && it->get<std::int64_t>() >= 0) {
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

}  // namespace kvbill
