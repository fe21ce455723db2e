// Reads a scenario file. The format, with every key, its type, default and
// range, is docs/scenario-format.md; keep the two in step.
#include "kvbill/scenario/scenario.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbill/cost/price_sheet.h"
#include "kvbill/cost/provider_cache.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/scenario/budget.h"
#include "kvbill/trace/generator.h"
#include "kvbill/trace/importers.h"
#include "kvbill/util/file.h"

namespace kvbill {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr Tokens kMaxTokens = Tokens{1} << 40;  // as ParseTokenCount

// One reference token of a JSON pointer (RFC 6901): "~" -> "~0", "/" -> "~1".
std::string EscapeKey(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// A value as compact JSON text for messages, at most 40 characters.
std::string Show(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

std::string Quote(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string JoinChoices(std::initializer_list<const char*> choices) {
  std::string out;
  for (const char* c : choices) out += (out.empty() ? "" : "|") + std::string(c);
  return out;
}

// Line and column of byte offset `pos` in `text`, both from 1.
std::string LineColumn(std::string_view text, std::size_t pos) {
  pos = std::min(pos, text.size());
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// Finds the first key repeated within one object (nlohmann/json would keep
// the last silently) while the document is parsed, and its JSON pointer.
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        stack_.push_back(Frame{event == json::parse_event_t::object_start, {}, "", 0});
        break;
      case json::parse_event_t::key: {
        Frame& top = stack_.back();
        top.key = EscapeKey(parsed.get<std::string>());
        if (!top.keys.insert(top.key).second && !duplicate_) duplicate_ = Pointer();
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack_.pop_back();
        ChildDone();
        break;
      case json::parse_event_t::value:
        ChildDone();
        break;
    }
    return true;
  }

  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool is_object;
    std::set<std::string> keys;
    std::string key;    // objects: the current member's escaped key
    std::size_t index;  // arrays: the current element's index
  };

  void ChildDone() {
    if (!stack_.empty() && !stack_.back().is_object) ++stack_.back().index;
  }

  std::string Pointer() const {
    std::string pointer;
    for (const Frame& f : stack_) pointer += "/" + (f.is_object ? f.key : std::to_string(f.index));
    return pointer;
  }

  std::vector<Frame> stack_;
  std::optional<std::string> duplicate_;
};

// The scenario file: names it in errors and anchors relative paths.
class Source {
 public:
  explicit Source(std::string name)
      : name_(std::move(name)), directory_(std::filesystem::path(name_).parent_path()) {}

  Error Bad(const std::string& pointer, const std::string& message) const {
    return Error(name_ + "#" + pointer + ": " + message);
  }

  // `path` relative to the scenario's directory (absolute paths unchanged).
  std::string Resolve(const std::string& path) const {
    const std::filesystem::path p(path);
    if (p.is_absolute()) return p.lexically_normal().string();
    return (directory_ / p).lexically_normal().string();
  }

  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::filesystem::path directory_;
};

enum class Range { kPositive, kNonNegative, kFraction };

// Reads the members of one JSON object at `pointer`. Every read checks type
// and range; the first failure is kept and later reads do nothing, so a
// section reads as a list of fields followed by one status check. Absent
// members leave the output at its default.
class ObjectReader {
 public:
  // Fails unless `value` is an object. With `known` non-empty, fails on the
  // first member (in key order) not in it.
  ObjectReader(const json& value, std::string pointer, const Source& source,
               std::initializer_list<const char*> known)
      : pointer_(std::move(pointer)), source_(source) {
    if (!value.is_object()) {
      Fail(pointer_, "must be an object, got " + Show(value));
      return;
    }
    object_ = &value;
    for (auto it = value.begin(); it != value.end() && known.size() > 0; ++it) {
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; })) {
        Fail(At(it.key()), "unknown key");
        return;
      }
    }
  }

  // The member `key`, or nullptr when absent (or when reading has failed).
  const json* Find(const std::string& key) const {
    if (object_ == nullptr || error_) return nullptr;
    auto it = object_->find(key);
    return it == object_->end() ? nullptr : &*it;
  }

  // An integer in [min, max].
  void Integer(const char* key, std::int64_t min, std::int64_t max, std::int64_t* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    const bool too_big =
        v->is_number_unsigned() &&
        v->get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()};
    if (!v->is_number_integer() || (!too_big && v->get<std::int64_t>() < min)) {
      return Fail(At(key), "must be " + DescribeInteger(min) + ", got " + Show(*v));
    }
    if (too_big || v->get<std::int64_t>() > max) {
      return Fail(At(key), "must be at most " + std::to_string(max) + ", got " + Show(*v));
    }
    *out = v->get<std::int64_t>();
  }

  void Int(const char* key, std::int64_t min, int* out) {
    std::int64_t value = *out;
    Integer(key, min, kMaxInt, &value);
    *out = static_cast<int>(value);
  }

  // A token count: an integer >= min, or a string ParseTokenCount accepts.
  void TokenCount(const char* key, Tokens min, Tokens* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (v->is_string()) {
      auto tokens = ParseTokenCount(v->get<std::string>());
      if (!tokens) return Fail(At(key), tokens.error().message());
      *out = *tokens;
    } else if (v->is_number_integer()) {
      Integer(key, min, kMaxTokens, out);
    } else {
      Fail(At(key),
           "must be " + DescribeInteger(min) + " or a token count like \"32k\", got " + Show(*v));
    }
  }

  void Number(const char* key, Range range, double* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    const double value = v->is_number() ? v->get<double>() : std::nan("");
    const bool ok = std::isfinite(value) &&
                    (range == Range::kNonNegative ? value >= 0 : value > 0) &&
                    (range != Range::kFraction || value <= 1);
    if (!ok) return Fail(At(key), "must be " + DescribeNumber(range) + ", got " + Show(*v));
    *out = value;
  }

  // A number, or null for "not set".
  void OptionalNumber(const char* key, Range range, std::optional<double>* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (v->is_null()) {
      *out = std::nullopt;
      return;
    }
    double value = 0;
    Number(key, range, &value);
    if (ok()) *out = value;
  }

  void Bool(const char* key, bool* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return Fail(At(key), "must be true or false, got " + Show(*v));
    *out = v->get<bool>();
  }

  // A non-empty string.
  void String(const char* key, std::string* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_string() || v->get<std::string>().empty()) {
      return Fail(At(key), "must be a non-empty string, got " + Show(*v));
    }
    *out = v->get<std::string>();
  }

  // One of `choices`; `what` names the kind of thing in the error.
  void Choice(const char* key, const char* what, std::initializer_list<const char*> choices,
              std::string* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_string()) {
      return Fail(At(key), "must be one of " + JoinChoices(choices) + ", got " + Show(*v));
    }
    const std::string value = v->get<std::string>();
    if (std::none_of(choices.begin(), choices.end(), [&](const char* c) { return value == c; })) {
      return Fail(At(key), std::string("unknown ") + what + " " + Quote(value) + " (one of " +
                               JoinChoices(choices) + ")");
    }
    *out = value;
  }

  // A non-negative integer up to 2^64 - 1.
  void Unsigned(const char* key, std::uint64_t* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_number_unsigned()) {
      return Fail(At(key), "must be a non-negative integer, got " + Show(*v));
    }
    *out = v->get<std::uint64_t>();
  }

  void Fail(Error error) {
    if (!error_) error_ = std::move(error);
  }
  void Fail(const std::string& pointer, const std::string& message) {
    Fail(source_.Bad(pointer, message));
  }

  bool ok() const { return !error_; }
  Status status() const {
    if (error_) return *error_;
    return OkStatus();
  }
  std::string At(const std::string& key) const { return pointer_ + "/" + EscapeKey(key); }

 private:
  static std::string DescribeInteger(std::int64_t min) {
    if (min == 1) return "a positive integer";
    if (min == 0) return "a non-negative integer";
    return "an integer >= " + std::to_string(min);
  }
  static std::string DescribeNumber(Range range) {
    switch (range) {
      case Range::kPositive:
        return "a positive number";
      case Range::kNonNegative:
        return "a non-negative number";
      case Range::kFraction:
        return "a number in (0, 1]";
    }
    return "";
  }

  const json* object_ = nullptr;
  std::string pointer_;
  const Source& source_;
  std::optional<Error> error_;
};

std::string CatalogModelNames() {
  std::string names;
  for (const CatalogModel& m : ModelCatalog()) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

bool IsCatalogModel(const std::string& name) {
  const auto& catalog = ModelCatalog();
  return std::any_of(catalog.begin(), catalog.end(),
                     [&](const CatalogModel& m) { return m.name == name; });
}

bool IsFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

// "model": a catalog name or config path, or {"name": ..., "set": {...}}.
Status ReadModel(const json& value, const Source& source, ScenarioModel* model) {
  std::string name_pointer = "/model";
  if (value.is_string()) {
    if (value.get<std::string>().empty()) {
      return source.Bad("/model", "must be a non-empty string, got \"\"");
    }
    model->name = value.get<std::string>();
  } else if (value.is_object()) {
    ObjectReader r(value, "/model", source, {"name", "set"});
    r.String("name", &model->name);
    if (r.Find("name") != nullptr) name_pointer = "/model/name";
    if (const json* set = r.Find("set")) {
      if (!set->is_object()) r.Fail("/model/set", "must be an object, got " + Show(*set));
      for (auto it = set->begin(); r.ok() && it != set->end(); ++it) {
        std::string key = it.key();
        if (key.starts_with("text_config.")) {
          key = key.substr(std::string_view("text_config.").size());
        }
        if (key.empty() || key.find('.') != std::string::npos) {
          r.Fail("/model/set/" + EscapeKey(it.key()),
                 "expected a top-level key of the text config");
        }
        model->set[it.key()] = it->dump();
      }
    }
    if (!r.ok()) return r.status();
  } else {
    return source.Bad(
        "/model", "must be a model name or {\"name\": ..., \"set\": {...}}, got " + Show(value));
  }

  if (!IsCatalogModel(model->name)) {
    const std::string path = source.Resolve(model->name);
    if (!IsFile(path)) {
      return source.Bad(name_pointer, "unknown model " + Quote(model->name) + " (catalog: " +
                                          CatalogModelNames() + "; or a path to a config.json)");
    }
    model->name = path;
  }
  std::vector<ConfigOverride> overrides;
  for (const auto& [key, text] : model->set) overrides.push_back(ConfigOverride{key, text});
  auto loaded = LoadModel(model->name, overrides);
  if (!loaded) {
    // Blame the overrides when the model loads without them.
    const bool set_is_bad = !overrides.empty() && LoadModel(model->name).ok();
    return loaded.error().Within(source.name() + "#" + (set_is_bad ? "/model/set" : name_pointer));
  }
  return OkStatus();
}

std::string GpuIds() {
  std::string ids;
  for (const GpuSpec& g : GpuCatalog()) ids += (ids.empty() ? "" : ", ") + g.id;
  return ids;
}

Status ReadDeployment(const json& value, const Source& source, ScenarioDeployment* d) {
  ObjectReader r(
      value, "/deployment", source,
      {"gpu", "gpus_per_replica", "replicas", "memory_fraction", "activation_reserve_gib",
       "usd_per_gpu_hour", "bandwidth_efficiency", "compute_efficiency", "iteration_overhead_s"});
  r.String("gpu", &d->gpu);
  r.Int("gpus_per_replica", 1, &d->gpus_per_replica);
  r.Int("replicas", 1, &d->replicas);
  r.Number("memory_fraction", Range::kFraction, &d->memory_fraction);
  r.Number("activation_reserve_gib", Range::kNonNegative, &d->activation_reserve_gib);
  r.OptionalNumber("usd_per_gpu_hour", Range::kPositive, &d->usd_per_gpu_hour);
  r.Number("bandwidth_efficiency", Range::kFraction, &d->bandwidth_efficiency);
  r.Number("compute_efficiency", Range::kFraction, &d->compute_efficiency);
  r.Number("iteration_overhead_s", Range::kNonNegative, &d->iteration_overhead_s);
  if (!r.ok()) return r.status();

  const auto& catalog = GpuCatalog();
  if (std::any_of(catalog.begin(), catalog.end(),
                  [&](const GpuSpec& g) { return g.id == d->gpu; })) {
    return OkStatus();
  }
  const std::string path = source.Resolve(d->gpu);
  if (!IsFile(path)) {
    return source.Bad("/deployment/gpu", "unknown GPU " + Quote(d->gpu) + " (catalog: " + GpuIds() +
                                             "; or a path to a GPU JSON file)");
  }
  auto gpu = LookupGpu(path);
  if (!gpu) return gpu.error().Within(source.name() + "#/deployment/gpu");
  d->gpu = path;
  return OkStatus();
}

Status ReadEngine(const json& value, const Source& source, ScenarioEngine* e) {
  ObjectReader r(value, "/engine", source,
                 {"max_num_batched_tokens", "max_num_seqs", "router", "mode"});
  r.TokenCount("max_num_batched_tokens", 1, &e->max_num_batched_tokens);
  r.Int("max_num_seqs", 1, &e->max_num_seqs);
  r.Choice("router", "router", {"round_robin", "prefix_affinity"}, &e->router);
  r.Choice("mode", "mode", {"event", "step"}, &e->mode);
  return r.status();
}

// The engine cannot reuse a linear-state (SSM / linear attention) layer's
// state from a block prefix cache (docs/engine.md, "The KV pool"): say so at
// the field, before any run. (A sweep or lever that turns caching on for
// such a model meets the same error from the engine.)
Status CheckPrefixCacheFitsModel(const Scenario& s, const Source& source) {
  if (!s.prefix_cache.enabled) return OkStatus();
  std::vector<ConfigOverride> overrides;
  for (const auto& [key, text] : s.model.set) overrides.push_back(ConfigOverride{key, text});
  auto model = LoadModel(s.model.name, overrides);
  if (!model || model->CountLayers(LayerKind::kLinearState) == 0) return OkStatus();
  return source.Bad("/prefix_cache/enabled",
                    "model " + Quote(model->name) +
                        " has linear-state (SSM / linear attention) layers, whose state a block "
                        "prefix cache cannot reuse: set it to false");
}

Status ReadPrefixCache(const json& value, const Source& source, ScenarioPrefixCache* c) {
  ObjectReader r(value, "/prefix_cache", source,
                 {"enabled", "block_size", "capacity_tokens", "pin_during_tool_s", "offload"});
  r.Bool("enabled", &c->enabled);
  r.TokenCount("block_size", 1, &c->block_size);
  if (const json* capacity = r.Find("capacity_tokens")) {
    if (capacity->is_null()) {
      c->capacity_tokens = std::nullopt;
    } else if (capacity->is_string() && capacity->get<std::string>() == "unlimited") {
      c->capacity_tokens = ScenarioPrefixCache::kUnlimited;
    } else if (capacity->is_string() || capacity->is_number_integer()) {
      Tokens tokens = 0;
      r.TokenCount("capacity_tokens", 1, &tokens);
      if (r.ok()) c->capacity_tokens = tokens;
    } else {
      r.Fail("/prefix_cache/capacity_tokens",
             "must be a positive integer, a token count like \"3M\", \"unlimited\" or null, got " +
                 Show(*capacity));
    }
  }
  r.Number("pin_during_tool_s", Range::kNonNegative, &c->pin_during_tool_s);
  if (const json* offload = r.Find("offload")) {
    ObjectReader o(*offload, "/prefix_cache/offload", source, {"capacity_gib", "link_gb_s"});
    o.Number("capacity_gib", Range::kNonNegative, &c->offload_capacity_gib);
    o.Number("link_gb_s", Range::kPositive, &c->offload_link_gb_s);
    if (!o.ok()) return o.status();
  }
  return r.status();
}

// One parameter of a context policy: its name, its least value and where it goes.
struct PolicyParam {
  const char* name;
  std::int64_t min;
  bool token_count;  // accepts "32k"; else a plain integer (a number of turns)
  void (*store)(ContextPolicyParams&, std::int64_t);
};

struct PolicyKind {
  const char* kind;
  std::vector<PolicyParam> params;  // every one required
};

// The kinds of include/kvbill/policy/context_policy.h and their parameters.
const std::vector<PolicyKind>& PolicyKinds() {
  using P = ContextPolicyParams;
  static const std::vector<PolicyKind> kinds = {
      {"keep_all", {}},
      {"sliding_window",
       {{"window_tokens", 1, true, [](P& p, std::int64_t v) { p.window_tokens = v; }}}},
      {"drop_tool_results",
       {{"older_than_turns", 0, false,
         [](P& p, std::int64_t v) { p.older_than_turns = static_cast<int>(v); }},
        {"stub_tokens", 0, true, [](P& p, std::int64_t v) { p.stub_tokens = v; }}}},
      {"summarise",
       {{"threshold_tokens", 1, true, [](P& p, std::int64_t v) { p.threshold_tokens = v; }},
        {"summary_tokens", 1, true, [](P& p, std::int64_t v) { p.summary_tokens = v; }},
        {"keep_recent_tokens", 0, true, [](P& p, std::int64_t v) { p.keep_recent_tokens = v; }}}},
      {"sinks_recent",
       {{"sink_tokens", 0, true, [](P& p, std::int64_t v) { p.sink_tokens = v; }},
        {"recent_tokens", 1, true, [](P& p, std::int64_t v) { p.recent_tokens = v; }}}},
  };
  return kinds;
}

std::string PolicyKindChoices() {
  std::string out;
  for (const PolicyKind& k : PolicyKinds()) out += (out.empty() ? "" : "|") + std::string(k.kind);
  return out;
}

Status ReadContextPolicy(const json& value, const Source& source, ContextPolicyParams* params) {
  ObjectReader r(value, "/context_policy", source, {});
  const PolicyKind* kind = &PolicyKinds().front();
  if (const json* name = r.Find("kind")) {
    const auto& kinds = PolicyKinds();
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const PolicyKind& k) {
      return name->is_string() && name->get<std::string>() == k.kind;
    });
    if (!name->is_string()) {
      r.Fail("/context_policy/kind",
             "must be one of " + PolicyKindChoices() + ", got " + Show(*name));
    } else if (it == kinds.end()) {
      r.Fail("/context_policy/kind", "unknown context policy " + Quote(name->get<std::string>()) +
                                         " (one of " + PolicyKindChoices() + ")");
    } else {
      kind = &*it;
    }
  }
  if (!r.ok()) return r.status();
  params->kind = kind->kind;

  std::string own;
  for (const PolicyParam& p : kind->params) own += (own.empty() ? "" : ", ") + std::string(p.name);
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() == "kind") continue;
    const bool own_param = std::any_of(kind->params.begin(), kind->params.end(),
                                       [&](const PolicyParam& p) { return it.key() == p.name; });
    if (own_param) continue;
    bool other_param = false;
    for (const PolicyKind& k : PolicyKinds()) {
      for (const PolicyParam& p : k.params) other_param = other_param || it.key() == p.name;
    }
    if (!other_param) return source.Bad(r.At(it.key()), "unknown key");
    return source.Bad(r.At(it.key()), "not a parameter of " + std::string(kind->kind) + " (" +
                                          (own.empty() ? "it has none" : "its parameters: " + own) +
                                          ")");
  }
  for (const PolicyParam& p : kind->params) {
    if (r.Find(p.name) == nullptr) {
      return source.Bad(r.At(p.name), "missing (required by " + std::string(kind->kind) + ")");
    }
    std::int64_t v = 0;
    if (p.token_count) {
      r.TokenCount(p.name, p.min, &v);
    } else {
      r.Integer(p.name, p.min, kMaxInt, &v);
    }
    if (!r.ok()) return r.status();
    p.store(*params, v);
  }
  // A summary must leave the context below the threshold, or every turn
  // would summarise again.
  if (params->kind == "summarise" &&
      params->summary_tokens + params->keep_recent_tokens >= params->threshold_tokens) {
    return source.Bad("/context_policy",
                      "summary_tokens + keep_recent_tokens (" +
                          std::to_string(params->summary_tokens + params->keep_recent_tokens) +
                          ") must be below threshold_tokens (" +
                          std::to_string(params->threshold_tokens) + ")");
  }
  return OkStatus();
}

Status ReadTrace(const json& value, const Source& source, ScenarioTrace* t) {
  ObjectReader r(value, "/trace", source, {"file", "format", "release", "generator", "tasks"});
  if (!r.ok()) return r.status();
  const bool has_file = r.Find("file") != nullptr, has_generator = r.Find("generator") != nullptr;
  if (has_file == has_generator) {
    return source.Bad("/trace", has_file ? "has both \"file\" and \"generator\" (give one)"
                                         : "needs \"file\" or \"generator\"");
  }
  r.Choice("release", "release", {"after_finish", "recorded"}, &t->release);
  if (has_file) {
    r.String("file", &t->file);
    if (r.Find("tasks") != nullptr) r.Fail(r.At("tasks"), "only with \"generator\"");
    if (const json* format = r.Find("format")) {
      std::string choices = "auto|" + TraceFormatChoices();
      if (!format->is_string()) {
        r.Fail(r.At("format"), "must be one of " + choices + ", got " + Show(*format));
      } else if (format->get<std::string>() != "auto" &&
                 !ParseTraceFormat(format->get<std::string>()).ok()) {
        r.Fail(r.At("format"), "unknown trace format " + Quote(format->get<std::string>()) +
                                   " (one of " + choices + ")");
      } else {
        t->format = format->get<std::string>();
      }
    }
    if (!r.ok()) return r.status();
    t->file = source.Resolve(t->file);
    return OkStatus();
  }
  r.String("generator", &t->generator);
  if (r.Find("format") != nullptr) r.Fail(r.At("format"), "only with \"file\"");
  if (r.ok() && r.Find("tasks") == nullptr) {
    r.Fail(r.At("tasks"), "missing (the number of tasks to generate)");
  }
  r.Integer("tasks", 1, kMaxInt, &t->tasks);
  if (!r.ok()) return r.status();
  auto preset = FindGeneratorPreset(t->generator);
  if (!preset) return preset.error().Within(source.name() + "#/trace/generator");
  return OkStatus();
}

Status ReadBudgets(const json& value, const Source& source, std::vector<Budget>* out) {
  ObjectReader r(value, "/budgets", source, {});
  if (!r.ok()) return r.status();
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string at = r.At(it.key());
    if (!IsBudgetMetric(it.key())) {
      return source.Bad(at, "unknown metric (one of " + BudgetMetricChoices() + ")");
    }
    ObjectReader limit(it.value(), at, source, {"max", "min"});
    Budget b;
    b.metric = it.key();
    double v = 0;
    for (const char* key : {"max", "min"}) {
      const json* x = limit.Find(key);
      if (x == nullptr) continue;
      if (!x->is_number() || !std::isfinite(x->get<double>())) {
        return source.Bad(limit.At(key), "must be a number, got " + Show(*x));
      }
      v = x->get<double>();
      (std::string(key) == "max" ? b.max : b.min) = v;
    }
    if (!limit.ok()) return limit.status();
    if (!b.max && !b.min) return source.Bad(at, "needs \"max\" or \"min\"");
    out->push_back(b);
  }
  return OkStatus();
}

Status ReadSweep(const json& value, const Source& source, std::vector<SweepAxis>* out) {
  ObjectReader r(value, "/sweep", source, {});
  if (!r.ok()) return r.status();
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string at = r.At(it.key());
    const std::string& path = it.key();
    if (path.empty() || path[0] != '/' || path.starts_with("/sweep") ||
        path.starts_with("/budgets")) {
      return source.Bad(at, "must be a JSON pointer into the scenario, like \"/kv_format\"");
    }
    if (!it.value().is_array() || it.value().empty()) {
      return source.Bad(at, "must be a non-empty list of values, got " + Show(it.value()));
    }
    SweepAxis axis;
    axis.path = path;
    for (const json& v : it.value()) axis.values.push_back(v.dump());
    out->push_back(axis);
  }
  return OkStatus();
}

Status ReadPricing(const json& value, const Source& source, ScenarioPricing* p) {
  ObjectReader r(value, "/pricing", source, {"provider", "model", "per_call_models", "cache"});
  for (const char* key : {"provider", "model"}) {
    if (r.ok() && r.Find(key) == nullptr) r.Fail(r.At(key), "missing");
  }
  std::string choices;
  for (const std::string& name : ProviderCacheNames())
    choices += (choices.empty() ? "" : "|") + name;
  if (const json* provider = r.Find("provider")) {
    const auto names = ProviderCacheNames();
    if (!provider->is_string() ||
        std::find(names.begin(), names.end(), provider->get<std::string>()) == names.end()) {
      r.Fail(r.At("provider"), "unknown provider " + Show(*provider) + " (one of " + choices + ")");
    }
  }
  r.String("provider", &p->provider);
  r.String("model", &p->model);
  r.Bool("per_call_models", &p->per_call_models);
  std::string warm_start = "recorded";
  if (const json* cache = r.Find("cache")) {
    ObjectReader c(*cache, "/pricing/cache", source,
                   {"enabled", "ttl_s", "min_cacheable_tokens", "warm_start", "mode",
                    "prefix_tokens", "write_fee"});
    c.Bool("enabled", &p->cache_enabled);
    c.Number("ttl_s", Range::kPositive, &p->ttl_s);
    c.TokenCount("min_cacheable_tokens", 1, &p->min_cacheable_tokens);
    c.Choice("warm_start", "warm start", {"recorded", "none"}, &warm_start);
    // Provider cache variants (docs/billing.md#provider-caching-rules).
    std::string mode = "implicit";
    c.Choice("mode", "cache mode", {"implicit", "explicit"}, &mode);
    p->explicit_cache = mode == "explicit";
    if (const json* prefix = c.Find("prefix_tokens");
        prefix == nullptr || *prefix != "first_request") {
      c.TokenCount("prefix_tokens", 1, &p->prefix_tokens);
    }
    if (c.Find("write_fee") != nullptr) {
      bool write_fee = false;
      c.Bool("write_fee", &write_fee);
      p->write_fee = write_fee ? WriteFee::kOn : WriteFee::kOff;
    }
    if (!c.ok()) return c.status();
  }
  if (!r.ok()) return r.status();
  p->warm_start_from_recorded = warm_start == "recorded";
  auto sheet = BundledPriceSheet();
  if (!sheet) return sheet.error();
  const ModelPrice* price = sheet->Find(p->model);
  if (price == nullptr) {
    return source.Bad("/pricing/model",
                      "no price for model " + Quote(p->model) + " in the bundled price sheet");
  }
  auto cache =
      MakeProviderCache(p->provider, price->id,
                        ProviderCacheOptions{p->ttl_s, p->min_cacheable_tokens, p->write_fee,
                                             p->explicit_cache, p->prefix_tokens});
  if (!cache) return cache.error().Within(source.name() + "#/pricing/cache");
  return OkStatus();
}

// Parses the text, rejecting syntax errors and repeated keys.
Result<json> ParseDocument(const std::string& text, const std::string& source) {
  DuplicateKeyFinder duplicates;
  json doc;
  try {
    doc = json::parse(text, std::ref(duplicates));
  } catch (const json::parse_error& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line L,
    // column C: REASON"; keep the reason.
    std::string reason = e.what();
    const std::size_t colon = reason.find(": ", reason.find("column"));
    reason = colon == std::string::npos ? "" : ": " + reason.substr(colon + 2);
    return Error(source + ":" + LineColumn(text, e.byte > 0 ? e.byte - 1 : 0) + ": not valid JSON" +
                 reason);
  } catch (const json::out_of_range& e) {
    // A number beyond a double (1e999): "[json.exception.out_of_range.406] number
    // overflow parsing '1e999'"; the parser gives no position.
    const std::string what = e.what();
    const std::size_t start = what.find("] ");
    return Error(source + ": not valid JSON: " +
                 (start == std::string::npos ? what : what.substr(start + 2)));
  }
  if (duplicates.duplicate())
    return Error(source + "#" + *duplicates.duplicate() + ": repeated key");
  return doc;
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& json_text, const std::string& source_name) {
  auto doc = ParseDocument(json_text, source_name);
  if (!doc) return doc.error();
  const Source source(source_name);
  Scenario s;
  s.source = source_name;
  s.name = std::filesystem::path(source_name).stem().string();

  ObjectReader top(
      *doc, "", source,
      {"name", "model", "kv_format", "weight_format", "deployment", "engine", "prefix_cache",
       "context_policy", "trace", "seed", "budgets", "sweep", "pricing"});
  top.String("name", &s.name);
  top.String("kv_format", &s.kv_format);
  top.String("weight_format", &s.weight_format);
  top.Unsigned("seed", &s.seed);
  if (!top.ok()) return top.status().error();
  if (auto kv = ParseElementFormat(s.kv_format); !kv)
    return source.Bad("/kv_format", kv.error().message());
  if (s.weight_format != "auto") {
    if (auto w = ParseElementFormat(s.weight_format); !w) {
      return source.Bad("/weight_format", w.error().message() + "; or \"auto\"");
    }
  }

  Status status = OkStatus();
  if (const json* v = top.Find("model")) status = ReadModel(*v, source, &s.model);
  if (!status) return status.error();
  if (const json* v = top.Find("deployment")) status = ReadDeployment(*v, source, &s.deployment);
  if (!status) return status.error();
  if (const json* v = top.Find("engine")) status = ReadEngine(*v, source, &s.engine);
  if (!status) return status.error();
  if (const json* v = top.Find("prefix_cache")) {
    status = ReadPrefixCache(*v, source, &s.prefix_cache);
  }
  if (!status) return status.error();
  if (const json* v = top.Find("context_policy")) {
    status = ReadContextPolicy(*v, source, &s.context_policy);
  }
  if (!status) return status.error();
  if (const json* v = top.Find("trace")) status = ReadTrace(*v, source, &s.trace);
  if (!status) return status.error();
  if (const json* v = top.Find("budgets")) status = ReadBudgets(*v, source, &s.budgets);
  if (!status) return status.error();
  if (const json* v = top.Find("sweep")) status = ReadSweep(*v, source, &s.sweep);
  if (!status) return status.error();
  if (const json* v = top.Find("pricing")) {
    s.pricing.emplace();
    status = ReadPricing(*v, source, &*s.pricing);
  }
  if (!status) return status.error();
  if (!s.pricing) status = CheckPrefixCacheFitsModel(s, source);  // API runs have no engine
  if (!status) return status.error();
  return s;
}

Result<Scenario> LoadScenario(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return text.error();
  return ParseScenario(*text, path);
}

}  // namespace kvbill
