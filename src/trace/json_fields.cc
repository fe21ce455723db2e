#include "trace/json_fields.h"

#include <algorithm>
#include <cmath>

namespace kvbill {

Result<Json> ParseJson(std::string_view text) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // The text ended inside a value: the parser read past its last byte (an
    // unclosed string) or asked for more.
    if (e.byte > text.size() ||
        std::string_view(e.what()).find("unexpected end of input") != std::string_view::npos) {
      return Error("truncated JSON");
    }
    // One line (a JSONL record): the byte is the column. A whole file: say
    // which line, so the position can be found.
    const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    const std::size_t last_newline = text.substr(0, std::min(byte, text.size())).rfind('\n');
    if (last_newline == std::string_view::npos) {
      return Error("invalid JSON at column " + std::to_string(e.byte));
    }
    const auto line = 1 + std::count(text.begin(), text.begin() + last_newline + 1, '\n');
    return Error("invalid JSON at line " + std::to_string(line) + ", column " +
                 std::to_string(byte - last_newline));
  } catch (const Json::out_of_range& e) {
    // A number beyond a double's range: "... number overflow parsing '1e999'".
    std::string number(
        std::string_view(e.what()).substr(std::string_view(e.what()).find('\'') + 1));
    if (!number.empty() && number.back() == '\'') number.pop_back();
    constexpr std::size_t kMax = 40;
    if (number.size() > kMax) number = number.substr(0, kMax) + "...";
    return Error("number out of range: " + number);
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

}  // namespace kvbill
