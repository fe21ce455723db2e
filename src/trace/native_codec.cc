#include "trace/native_codec.h"

#include <initializer_list>
#include <string_view>

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
    return Error(
        "\"kind\" must be one of system|tools|user|tool_result|assistant|summary|other, "
        "got \"" +
        *kind_name + "\"");
  }
  auto tokens = GetTokens(json, "tokens");
  if (!tokens) return tokens.error();
  auto id = GetOptionalString(json, "id");
  if (!id) return id.error();
  return Span{*kind, *tokens, *id};
}

Result<RecordedUsage> DecodeUsage(const Json& json) {
  if (!json.is_object()) return Error("\"usage\" must be an object, got " + Quote(json));
  if (auto s = CheckKeys(json, {"input", "cache_creation", "cache_read", "output"}); !s) {
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
  return usage;
}

Result<Turn> DecodeTurn(const Json& json) {
  if (!json.is_object()) return Error("expected an object, got " + Quote(json));
  if (auto s = CheckKeys(json, {"t", "keep", "spans", "out", "out_placeholder", "tool_s", "usage",
                                "block_size", "hashes"});
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

}  // namespace

Result<Task> DecodeTask(const Json& json) {
  if (auto s = CheckKeys(json, {"id", "parent", "arrival_s", "turns"}); !s) return s.error();
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
    }
    if (turn.blocks) {
      t["block_size"] = turn.blocks->block_size;
      t["hashes"] = turn.blocks->hashes;
    }
    turns.push_back(std::move(t));
  }
  json["turns"] = std::move(turns);
  return json.dump();
}

}  // namespace kvbill
