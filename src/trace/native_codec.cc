#include "trace/native_codec.h"

#include <initializer_list>
#include <string_view>

#include "trace/json_scan.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

Status CheckKeys(const Json& object, std::initializer_list<std::string_view> allowed) {
  for (const auto& item : object.items()) {
    bool known = false;
    for (std::string_view key : allowed) known = known || item.key() == key;
    if (!known) return Error("unknown field \"" + item.key() + "\"");
  }
  return OkStatus();
}

Result<Span> DecodeSpan(const Json& json) {
  if (!json.is_object()) return Error("expected an object, got " + Quote(json));
  if (auto s = CheckKeys(json, {"kind", "tokens", "id"}); !s) return s.error();
  auto kind_name = GetString(json, "kind");
  if (!kind_name) return kind_name.error();
  const auto kind = ParseSpanKind(*kind_name);
  if (!kind) {
    return Error("\"kind\" must be one of " + SpanKindChoices() + ", got \"" +
                 json_input::Bounded(*kind_name) + "\"");
  }
  auto tokens = GetTokens(json, "tokens");
  if (!tokens) return tokens.error();
  auto id = GetOptionalString(json, "id");
  if (!id) return id.error();
  return Span{*kind, *tokens, *id};
}

Result<RecordedUsage> DecodeUsage(const Json& json) {
  if (!json.is_object()) return Error("\"usage\" must be an object, got " + Quote(json));
  if (auto s = CheckKeys(json, {"input", "cache_creation", "cache_read", "output",
                                "cache_creation_1h", "speed", "inference_geo", "web_searches"});
      !s) {
    return s.error().Within("usage");
  }
  RecordedUsage usage;
  for (auto [key, field] :
       {std::pair{"input", &usage.input}, std::pair{"cache_creation", &usage.cache_creation},
        std::pair{"cache_read", &usage.cache_read}, std::pair{"output", &usage.output}}) {
    auto value = GetTokens(json, key);
    if (!value) return value.error().Within("usage");
    *field = *value;
  }
  auto one_hour = GetOptionalTokens(json, "cache_creation_1h");
  if (!one_hour) return one_hour.error().Within("usage");
  usage.cache_creation_1h = one_hour->value_or(0);
  auto searches = GetOptionalTokens(json, "web_searches");
  if (!searches) return searches.error().Within("usage");
  usage.web_searches = searches->value_or(0);
  if (const auto speed = json.find("speed"); speed != json.end()) {
    if (*speed != "standard" && *speed != "fast") {
      return Error("\"speed\" must be \"standard\" or \"fast\", got " + Quote(*speed))
          .Within("usage");
    }
    usage.fast = *speed == "fast";
  }
  if (const auto geo = json.find("inference_geo"); geo != json.end()) {
    if (*geo != "global" && *geo != "us") {
      return Error("\"inference_geo\" must be \"global\" or \"us\", got " + Quote(*geo))
          .Within("usage");
    }
    usage.us_only = *geo == "us";
  }
  if (usage.cache_creation_1h > usage.cache_creation) {
    return Error("\"cache_creation_1h\" " + std::to_string(usage.cache_creation_1h) +
                 " exceeds \"cache_creation\" " + std::to_string(usage.cache_creation))
        .Within("usage");
  }
  return usage;
}

Result<Turn> DecodeTurn(const Json& json) {
  if (!json.is_object()) return Error("expected an object, got " + Quote(json));
  if (auto s = CheckKeys(json, {"t", "keep", "spans", "out", "out_placeholder", "tool_s", "usage",
                                "block_size", "hashes", "model"});
      !s) {
    return s.error();
  }
  Turn turn;
  auto keep = GetOptionalTokens(json, "keep");
  if (!keep) return keep.error();
  turn.keep = *keep;
  if (const auto it = json.find("spans"); it != json.end()) {
    if (!it->is_array()) return Error("\"spans\" must be an array, got " + Quote(*it));
    for (std::size_t i = 0; i < it->size(); ++i) {
      auto span = DecodeSpan((*it)[i]);
      if (!span) return span.error().Within("span " + std::to_string(i + 1));
      turn.spans.push_back(std::move(*span));
    }
  }
  auto out = GetTokens(json, "out");
  if (!out) return out.error();
  turn.output = *out;
  if (const auto it = json.find("out_placeholder"); it != json.end()) {
    if (!it->is_boolean()) {
      return Error("\"out_placeholder\" must be true or false, got " + Quote(*it));
    }
    turn.output_is_placeholder = it->get<bool>();
  }
  auto tool_s = GetOptionalNumber(json, "tool_s");
  if (!tool_s) return tool_s.error();
  if (tool_s->value_or(0) < 0) {
    return Error("\"tool_s\" must be a non-negative number, got " + Quote(json["tool_s"]));
  }
  turn.tool_s = tool_s->value_or(0);
  auto t = GetOptionalNumber(json, "t");
  if (!t) return t.error();
  turn.time_s = *t;
  if (const auto it = json.find("usage"); it != json.end()) {
    auto usage = DecodeUsage(*it);
    if (!usage) return usage.error();
    turn.usage = *usage;
  }
  auto model = GetOptionalString(json, "model");
  if (!model) return model.error();
  turn.model = model->value_or("");
  const auto hashes = json.find("hashes");
  auto block_size = GetOptionalTokens(json, "block_size");
  if (!block_size) return block_size.error();
  if (hashes != json.end() || block_size->has_value()) {
    if (hashes == json.end() || !block_size->has_value()) {
      return Error("\"block_size\" and \"hashes\" go together");
    }
    if (!hashes->is_array()) return Error("\"hashes\" must be an array, got " + Quote(*hashes));
    BlockHashes blocks;
    blocks.block_size = **block_size;
    blocks.hashes.reserve(hashes->size());
    for (const Json& h : *hashes) {
      if (!h.is_number_unsigned()) {
        return Error("\"hashes\" must hold non-negative integers, got " + Quote(h));
      }
      blocks.hashes.push_back(h.get<std::uint64_t>());
    }
    turn.blocks = std::move(blocks);
  }
  return turn;
}

// The fast path mirrors DecodeSpan/DecodeTurn/DecodeTask above field by field;
// a duplicate key, an unknown key, a null where DecodeTurn would reject it,
// or any value of the wrong type gives up (the DOM path then reports it).

// Bit `i` set when member `i` of a list was seen; false on a repeat.
bool Mark(std::uint32_t* seen, int i) {
  const std::uint32_t bit = 1U << i;
  if ((*seen & bit) != 0) return false;
  *seen |= bit;
  return true;
}

// An optional string: absent or null is nullopt.
bool FastOptionalString(JsonScanner* scan, std::optional<std::string>* out) {
  if (scan->Peek() == 'n') return scan->Null();
  std::string_view text;
  if (!scan->String(&text)) return false;
  *out = std::string(text);
  return true;
}

bool FastDecodeSpan(JsonScanner* scan, Span* span) {
  std::uint32_t seen = 0;
  bool has_kind = false;
  bool has_tokens = false;
  const bool ok = scan->Object([&](std::string_view key) {
    if (key == "kind") {
      std::string_view name;
      if (!Mark(&seen, 0) || !scan->String(&name)) return false;
      const auto kind = ParseSpanKind(name);
      if (!kind) return false;
      span->kind = *kind;
      has_kind = true;
      return true;
    }
    if (key == "tokens") {
      has_tokens = true;
      return Mark(&seen, 1) && scan->Count(&span->tokens);
    }
    if (key == "id") return Mark(&seen, 2) && FastOptionalString(scan, &span->content_id);
    return false;
  });
  return ok && has_kind && has_tokens;
}

bool FastDecodeUsage(JsonScanner* scan, RecordedUsage* usage) {
  std::uint32_t seen = 0;
  const bool ok = scan->Object([&](std::string_view key) {
    if (key == "input") return Mark(&seen, 0) && scan->Count(&usage->input);
    if (key == "cache_creation") return Mark(&seen, 1) && scan->Count(&usage->cache_creation);
    if (key == "cache_read") return Mark(&seen, 2) && scan->Count(&usage->cache_read);
    if (key == "output") return Mark(&seen, 3) && scan->Count(&usage->output);
    if (key == "cache_creation_1h") {
      if (!Mark(&seen, 4)) return false;
      if (scan->Peek() == 'n') return scan->Null();
      return scan->Count(&usage->cache_creation_1h);
    }
    if (key == "speed") {
      std::string_view speed;
      if (!Mark(&seen, 5) || !scan->String(&speed)) return false;
      if (speed != "standard" && speed != "fast") return false;  // the DOM path says why
      usage->fast = speed == "fast";
      return true;
    }
    if (key == "web_searches") return Mark(&seen, 7) && scan->Count(&usage->web_searches);
    if (key == "inference_geo") {
      std::string_view geo;
      if (!Mark(&seen, 6) || !scan->String(&geo)) return false;
      if (geo != "global" && geo != "us") return false;  // the DOM path says why
      usage->us_only = geo == "us";
      return true;
    }
    return false;
  });
  return ok && (seen & 0xF) == 0xF && usage->cache_creation_1h <= usage->cache_creation;
}

bool FastDecodeTurn(JsonScanner* scan, Turn* turn) {
  std::uint32_t seen = 0;
  std::optional<Tokens> block_size;
  bool has_hashes = false;
  std::vector<std::uint64_t> hashes;
  const bool ok = scan->Object([&](std::string_view key) {
    if (key == "t") {
      if (!Mark(&seen, 0)) return false;
      if (scan->Peek() == 'n') return scan->Null();
      double t = 0;
      if (!scan->Double(&t)) return false;
      turn->time_s = t;
      return true;
    }
    if (key == "keep") {
      if (!Mark(&seen, 1)) return false;
      if (scan->Peek() == 'n') return scan->Null();
      Tokens keep = 0;
      if (!scan->Count(&keep)) return false;
      turn->keep = keep;
      return true;
    }
    if (key == "spans") {
      if (!Mark(&seen, 2)) return false;
      return scan->Array([&] {
        Span span;
        if (!FastDecodeSpan(scan, &span)) return false;
        turn->spans.push_back(std::move(span));
        return true;
      });
    }
    if (key == "out") return Mark(&seen, 3) && scan->Count(&turn->output);
    if (key == "out_placeholder") {
      return Mark(&seen, 4) && scan->Bool(&turn->output_is_placeholder);
    }
    if (key == "tool_s") {
      if (!Mark(&seen, 5)) return false;
      if (scan->Peek() == 'n') return scan->Null();
      return scan->Double(&turn->tool_s) && turn->tool_s >= 0;
    }
    if (key == "usage") {
      RecordedUsage usage;
      if (!Mark(&seen, 6) || !FastDecodeUsage(scan, &usage)) return false;
      turn->usage = usage;
      return true;
    }
    if (key == "block_size") {
      if (!Mark(&seen, 7)) return false;
      if (scan->Peek() == 'n') return scan->Null();
      Tokens size = 0;
      if (!scan->Count(&size)) return false;
      block_size = size;
      return true;
    }
    if (key == "hashes") {
      has_hashes = true;
      return Mark(&seen, 8) && scan->Array([&] {
        std::uint64_t h = 0;
        if (!scan->Unsigned(&h)) return false;
        hashes.push_back(h);
        return true;
      });
    }
    if (key == "model") {
      std::optional<std::string> model;
      if (!Mark(&seen, 9) || !FastOptionalString(scan, &model)) return false;
      turn->model = model.value_or("");
      return true;
    }
    return false;
  });
  if (!ok || (seen & (1U << 3)) == 0) return false;
  if (has_hashes != block_size.has_value()) return false;
  if (has_hashes) turn->blocks = BlockHashes{*block_size, std::move(hashes)};
  return true;
}

}  // namespace

bool FastDecodeTask(std::string_view line, Task* task) {
  JsonScanner scan(line);
  std::uint32_t seen = 0;
  const bool ok = scan.Object([&](std::string_view key) {
    if (key == "id") {
      std::string_view id;
      if (!Mark(&seen, 0) || !scan.String(&id) || id.empty()) return false;
      task->id = std::string(id);
      return true;
    }
    if (key == "parent") return Mark(&seen, 1) && FastOptionalString(&scan, &task->parent_id);
    if (key == "arrival_s") {
      if (!Mark(&seen, 2)) return false;
      if (scan.Peek() == 'n') return scan.Null();
      return scan.Double(&task->arrival_s);
    }
    if (key == "tool_s_from_start") return Mark(&seen, 4) && scan.Bool(&task->tool_s_from_start);
    if (key == "turns") {
      return Mark(&seen, 3) && scan.Array([&] {
        Turn turn;
        if (!FastDecodeTurn(&scan, &turn)) return false;
        task->turns.push_back(std::move(turn));
        return true;
      });
    }
    return false;
  });
  return ok && scan.AtEnd() && (seen & 1U) != 0 && (seen & (1U << 3)) != 0;
}

Result<Task> DecodeTask(const Json& json) {
  if (auto s = CheckKeys(json, {"id", "parent", "arrival_s", "tool_s_from_start", "turns"}); !s) {
    return s.error();
  }
  Task task;
  auto id = GetString(json, "id");
  if (!id) return id.error();
  if (id->empty()) return Error("\"id\" must not be empty");
  task.id = *id;
  const std::string where = "task \"" + task.id + "\"";
  auto parent = GetOptionalString(json, "parent");
  if (!parent) return parent.error().Within(where);
  task.parent_id = *parent;
  auto arrival = GetOptionalNumber(json, "arrival_s");
  if (!arrival) return arrival.error().Within(where);
  task.arrival_s = arrival->value_or(0);
  if (const auto it = json.find("tool_s_from_start"); it != json.end()) {
    if (!it->is_boolean()) {
      return Error("\"tool_s_from_start\" must be true or false, got " + Quote(*it)).Within(where);
    }
    task.tool_s_from_start = it->get<bool>();
  }
  const auto turns = json.find("turns");
  if (turns == json.end()) return Error("missing \"turns\"").Within(where);
  if (!turns->is_array()) return Error("\"turns\" must be an array").Within(where);
  task.turns.reserve(turns->size());
  for (std::size_t i = 0; i < turns->size(); ++i) {
    auto turn = DecodeTurn((*turns)[i]);
    if (!turn) return turn.error().Within(where + ": turn " + std::to_string(i + 1));
    task.turns.push_back(std::move(*turn));
  }
  return task;
}

std::string EncodeTask(const Task& task) {
  using Ordered = nlohmann::ordered_json;
  Ordered json;
  json["id"] = task.id;
  if (task.parent_id) json["parent"] = *task.parent_id;
  json["arrival_s"] = task.arrival_s;
  if (task.tool_s_from_start) json["tool_s_from_start"] = true;
  Ordered turns = Ordered::array();
  for (const Turn& turn : task.turns) {
    Ordered t;
    if (turn.time_s) t["t"] = *turn.time_s;
    if (turn.keep) t["keep"] = *turn.keep;
    Ordered spans = Ordered::array();
    for (const Span& span : turn.spans) {
      Ordered s;
      s["kind"] = SpanKindName(span.kind);
      s["tokens"] = span.tokens;
      if (span.content_id) s["id"] = *span.content_id;
      spans.push_back(std::move(s));
    }
    t["spans"] = std::move(spans);
    t["out"] = turn.output;
    if (turn.output_is_placeholder) t["out_placeholder"] = true;
    if (turn.tool_s != 0) t["tool_s"] = turn.tool_s;
    if (turn.usage) {
      t["usage"] = {{"input", turn.usage->input},
                    {"cache_creation", turn.usage->cache_creation},
                    {"cache_read", turn.usage->cache_read},
                    {"output", turn.usage->output}};
      if (turn.usage->cache_creation_1h != 0) {
        t["usage"]["cache_creation_1h"] = turn.usage->cache_creation_1h;
      }
      if (turn.usage->fast) t["usage"]["speed"] = "fast";
      if (turn.usage->us_only) t["usage"]["inference_geo"] = "us";
      if (turn.usage->web_searches != 0) t["usage"]["web_searches"] = turn.usage->web_searches;
    }
    if (turn.blocks) {
      t["block_size"] = turn.blocks->block_size;
      t["hashes"] = turn.blocks->hashes;
    }
    if (!turn.model.empty()) t["model"] = turn.model;
    turns.push_back(std::move(t));
  }
  json["turns"] = std::move(turns);
  return json.dump();
}

}  // namespace kvbill
