#include "trace/claude_line.h"

#include "trace/json_scan.h"

namespace kvbill {
namespace {

// Records the value's text once; false on a repeated key.
bool Capture(JsonScanner* scan, RawJson* field) {
  if (!field->absent()) return false;
  return scan->Skip(&field->text);
}

// An optional count: null leaves *out nullopt; a repeat gives up.
bool Count(JsonScanner* scan, bool* seen, std::optional<Tokens>* out) {
  if (*seen) return false;
  *seen = true;
  if (scan->Peek() == 'n') return scan->Null();
  Tokens value = 0;
  if (!scan->Count(&value)) return false;
  *out = value;
  return true;
}

}  // namespace

bool ScanClaudeLine(std::string_view line, ClaudeLine* out) {
  JsonScanner scan(line);
  bool seen_payload = false;
  bool seen_message = false;
  const bool ok = scan.Object([&](std::string_view key) {
    if (key == "type") return Capture(&scan, &out->type);
    if (key == "sessionId") return Capture(&scan, &out->session_id);
    if (key == "timestamp") return Capture(&scan, &out->timestamp);
    if (key == "isSidechain") return Capture(&scan, &out->is_sidechain);
    if (key == "agentId") return Capture(&scan, &out->agent_id);
    if (key == "requestId") return Capture(&scan, &out->request_id);
    if (key == "cwd") return Capture(&scan, &out->cwd);
    if (key == "costUSD") return Capture(&scan, &out->cost_usd);
    if (key == "payload") {
      if (seen_payload) return false;
      seen_payload = true;
      out->has_payload = true;
      return scan.Skip();
    }
    if (key != "message") return scan.Skip();
    if (seen_message) return false;
    seen_message = true;
    if (scan.Peek() != '{') return scan.Skip();
    out->message_is_object = true;
    return scan.Object([&](std::string_view member) {
      if (member == "id") return Capture(&scan, &out->message_id);
      if (member == "model") return Capture(&scan, &out->model);
      if (member == "usage") return Capture(&scan, &out->usage);
      return scan.Skip();
    });
  });
  return ok && scan.AtEnd();
}

bool SplitJsonArray(std::string_view text, std::vector<std::string_view>* elements) {
  JsonScanner scan(text);
  const bool ok = scan.Array([&] {
    std::string_view element;
    if (!scan.Skip(&element)) return false;
    elements->push_back(element);
    return true;
  });
  return ok && scan.AtEnd();
}

bool ScanClaudeUsage(std::string_view usage, ClaudeUsage* out) {
  JsonScanner scan(usage);
  bool seen[6] = {};
  const bool ok = scan.Object([&](std::string_view key) {
    if (key == "input_tokens") return Count(&scan, &seen[0], &out->input);
    if (key == "cache_creation_input_tokens") return Count(&scan, &seen[1], &out->cache_creation);
    if (key == "cache_read_input_tokens") return Count(&scan, &seen[2], &out->cache_read);
    if (key == "output_tokens") return Count(&scan, &seen[3], &out->output);
    if (key == "ephemeral_1h_input_tokens") return Count(&scan, &seen[4], &out->direct_1h);
    if (key == "speed") return Capture(&scan, &out->speed);
    if (key == "inference_geo") return Capture(&scan, &out->inference_geo);
    if (key == "server_tool_use") {
      if (scan.Peek() != '{') return scan.Skip();
      bool seen_searches = false;
      return scan.Object([&](std::string_view member) {
        if (member == "web_search_requests") {
          return Count(&scan, &seen_searches, &out->web_searches);
        }
        return scan.Skip();
      });
    }
    if (key != "cache_creation") return scan.Skip();
    if (seen[5]) return false;
    seen[5] = true;
    if (scan.Peek() != '{') return scan.Skip();
    bool seen_1h = false;
    bool seen_5m = false;
    return scan.Object([&](std::string_view member) {
      if (member == "ephemeral_1h_input_tokens") return Count(&scan, &seen_1h, &out->nested_1h);
      if (member == "ephemeral_5m_input_tokens") return Count(&scan, &seen_5m, &out->nested_5m);
      return scan.Skip();
    });
  });
  return ok && scan.AtEnd();
}

std::optional<bool> UsOnlyOf(const RawJson& geo) {
  if (geo.absent() || geo.null() || geo.Is("global") || geo.Is("not_available")) return false;
  if (geo.Is("us")) return true;
  return std::nullopt;
}

Result<bool> ReadUsOnly(const Json& usage) {
  const auto it = usage.find("inference_geo");
  if (it == usage.end() || it->is_null() || *it == "global" || *it == "not_available") {
    return false;
  }
  if (*it == "us") return true;
  return Error("\"inference_geo\" must be \"global\", \"us\" or \"not_available\", got " +
               Quote(*it));
}

Result<ClaudeUsage> ReadClaudeUsageCounts(const Json& usage) {
  if (!usage.is_object()) return Error("\"usage\" must be an object, got " + Quote(usage));
  ClaudeUsage c;
  auto input = GetTokens(usage, "input_tokens");
  if (!input) return input.error();
  c.input = *input;
  auto output = GetTokens(usage, "output_tokens");
  if (!output) return output.error();
  c.output = *output;
  const std::pair<const char*, std::optional<Tokens>*> optional[] = {
      {"cache_creation_input_tokens", &c.cache_creation},
      {"cache_read_input_tokens", &c.cache_read},
      {"ephemeral_1h_input_tokens", &c.direct_1h}};
  for (const auto& [key, field] : optional) {
    auto value = GetOptionalTokens(usage, key);
    if (!value) return value.error();
    *field = *value;
  }
  if (const auto tools = usage.find("server_tool_use");
      tools != usage.end() && tools->is_object()) {
    auto searches = GetOptionalTokens(*tools, "web_search_requests");
    if (!searches) return searches.error().Within("server_tool_use");
    c.web_searches = *searches;
  }
  if (const auto split = usage.find("cache_creation"); split != usage.end() && split->is_object()) {
    for (const auto& [key, field] : {std::pair{"ephemeral_5m_input_tokens", &c.nested_5m},
                                     std::pair{"ephemeral_1h_input_tokens", &c.nested_1h}}) {
      auto value = GetOptionalTokens(*split, key);
      if (!value) return value.error().Within("cache_creation");
      *field = *value;
    }
  }
  return c;
}

Result<std::pair<Tokens, Tokens>> ClaudeCacheWrites(const ClaudeUsage& c) {
  const Tokens writes_1h = c.nested_1h ? *c.nested_1h : c.direct_1h.value_or(0);
  Tokens writes = c.cache_creation.value_or(0);
  if (c.nested_5m) {
    if (!c.cache_creation) writes = *c.nested_5m + writes_1h;
    if (*c.nested_5m + writes_1h != writes) {
      return Error("cache_creation: ephemeral_5m_input_tokens " + std::to_string(*c.nested_5m) +
                   " + ephemeral_1h_input_tokens " + std::to_string(writes_1h) +
                   " differ from \"cache_creation_input_tokens\" " + std::to_string(writes));
    }
  }
  // Without "cache_creation_input_tokens" the 1-hour share alone is all
  // that is known written (the 5-minute share absent: none).
  if (!c.cache_creation && !c.nested_5m) writes = writes_1h;
  if (writes_1h > writes) {
    return Error("1-hour cache writes " + std::to_string(writes_1h) +
                 " exceed \"cache_creation_input_tokens\" " + std::to_string(writes));
  }
  return std::make_pair(writes, writes_1h);
}

}  // namespace kvbill
