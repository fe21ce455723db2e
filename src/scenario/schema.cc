// The JSON Schema (draft 2020-12) of the scenario format, made from the
// key table (keys.h) for editors: completion, hover text and checks of
// names, types and ranges as a scenario is typed. The reader checks more
// than the schema can say (catalogs, files, the rules between keys of
// rules.cc); a file the schema accepts may still be refused, with the
// reason, by `kvbill simulate`.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kvbill/scenario/scenario_keys.h"
#include "kvbill/util/units.h"
#include "scenario/keys.h"

namespace kvbill {
namespace scenario_keys {
namespace {

// A token count string as ParseTokenCount reads it (util/units.h).
constexpr char kTokenPattern[] = R"(^\s*([0-9]+|[0-9]+(\.[0-9]+)?(k|K|Ki|M|Mi))\s*$)";

std::string Description(const Key& key) {
  std::string text = key.meaning;
  if (*key.unit != '\0') text += " [" + std::string(key.unit) + "]";
  return text;
}

json ValueSchema(const Key& key);

json ObjectSchema(const Key* section, const std::string& pointer) {
  json schema = {{"type", "object"}, {"additionalProperties", false}};
  json properties = json::object();
  json required = json::array();
  json dependent_required = json::object();
  json dependent_schemas = json::object();
  json all_of = json::array();
  std::vector<const Key*> rows = ChildKeys(pointer);
  for (const Key* k : rows) {
    properties[k->Name()] = ValueSchema(*k);
    if (k->vllm != nullptr && k->Name() != k->vllm) {
      json synonym = ValueSchema(*k);
      if (!k->vllm_values.empty()) {
        json values = json::array();
        for (const SynonymValue& v : k->vllm_values) {
          if (v.kvbill != nullptr) values.push_back(v.vllm);
        }
        synonym = {{"enum", values}};
      }
      synonym["description"] = "vLLM's name for `" + k->Name() + "`: " + Description(*k);
      properties[k->vllm] = synonym;
      dependent_schemas[k->vllm] = {{"not", {{"required", {k->Name()}}}}};
    }
    if (k->required) required.push_back(k->Name());
    if (k->only_with != nullptr) dependent_required[k->Name()].push_back(k->only_with);
    if (k->required_with != nullptr) dependent_required[k->required_with].push_back(k->Name());
  }
  // Parameter rows: the kind picks which are required and which are allowed.
  const Key* tag = nullptr;
  for (const Key* k : rows) {
    if (k->variant != nullptr) tag = FindKey(pointer + "/kind");
  }
  if (tag != nullptr) {
    const std::string fallback = tag->field.load(Scenario{}).get<std::string>();
    for (const Choice& c : tag->choices) {
      json when = {{"properties", {{"kind", {{"const", c.name}}}}}};
      if (c.name != fallback) when["required"] = {"kind"};
      json then = {{"properties", json::object()}};
      json needs = json::array();
      for (const Key* k : rows) {
        if (k->variant == nullptr) continue;
        if (k->variant == std::string(c.name)) {
          needs.push_back(k->Name());
        } else {
          then["properties"][k->Name()] = false;
        }
      }
      if (!needs.empty()) then["required"] = needs;
      all_of.push_back({{"if", when}, {"then", then}});
    }
  }
  if (section != nullptr && !section->one_of.empty()) {
    json one_of = json::array();
    for (const char* name : section->one_of) one_of.push_back({{"required", {name}}});
    schema["oneOf"] = one_of;
  }
  schema["properties"] = properties;
  if (!required.empty()) schema["required"] = required;
  if (!dependent_required.empty()) schema["dependentRequired"] = dependent_required;
  if (!dependent_schemas.empty()) schema["dependentSchemas"] = dependent_schemas;
  if (!all_of.empty()) schema["allOf"] = all_of;
  return schema;
}

json ValueSchema(const Key& key) {
  json schema;
  switch (key.type) {
    case Type::kSection:
      schema = ObjectSchema(&key, key.pointer);
      if (key.shorthand != nullptr) {
        schema = {{"anyOf", {{{"type", "string"}, {"minLength", 1}}, schema}}};
      }
      break;
    case Type::kMap:
      schema = key.schema != nullptr ? key.schema() : json{{"type", "object"}};
      break;
    case Type::kString:
      schema = {{"type", "string"}, {"minLength", 1}};
      break;
    case Type::kText:
      schema = {
          {"anyOf", {{{"type", "string"}}, {{"type", "array"}, {"items", {{"type", "string"}}}}}}};
      break;
    case Type::kRates: {
      const json rate = {{"type", "number"}, {"minimum", 0}, {"exclusiveMaximum", 1}};
      schema = {{"anyOf", {rate, {{"type", "array"}, {"items", rate}, {"minItems", 1}}}}};
      break;
    }
    case Type::kBool:
      schema = {{"type", "boolean"}};
      break;
    case Type::kChoice: {
      json names = json::array();
      if (key.choice_names != nullptr) {
        for (const std::string& n : key.choice_names()) names.push_back(n);
      } else {
        for (const Choice& c : key.choices) names.push_back(c.name);
      }
      schema = {{"enum", names}};
      break;
    }
    case Type::kInteger:
      schema = {{"type", "integer"}, {"minimum", key.min}, {"maximum", key.max}};
      break;
    case Type::kUnsigned:
      schema = {{"type", "integer"},
                {"minimum", 0},
                {"maximum", std::numeric_limits<std::uint64_t>::max()}};
      break;
    case Type::kTokens: {
      json any_of = {{{"type", "integer"}, {"minimum", key.min}, {"maximum", kMaxTokenCount}},
                     {{"type", "string"}, {"pattern", kTokenPattern}}};
      for (const Keyword& k : key.keywords) any_of.push_back({{"const", k.text}});
      schema = {{"anyOf", any_of}};
      break;
    }
    case Type::kNumber:
      schema = {{"type", "number"}};
      if (key.range == Range::kPositive || key.range == Range::kFraction) {
        schema["exclusiveMinimum"] = 0;
      }
      if (key.range == Range::kNonNegative) schema["minimum"] = 0;
      if (key.range == Range::kFraction) schema["maximum"] = 1;
      if (key.least > 0) schema["minimum"] = key.least;
      if (std::isfinite(key.most)) schema["maximum"] = key.most;
      break;
  }
  if (key.nullable) schema = {{"anyOf", {schema, {{"type", "null"}}}}};
  schema["description"] = Description(key);
  if (key.default_text == nullptr && key.field.load != nullptr) {
    schema["default"] = key.field.load(Scenario{});
  }
  return schema;
}

}  // namespace
}  // namespace scenario_keys

std::string ScenarioJsonSchema() {
  using scenario_keys::json;
  json schema = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                 {"title", "kvbill scenario"},
                 {"description",
                  "A kvbill simulation set-up (docs/scenario-format.md). Generated by `kvbill "
                  "scenario schema` from the key table; kvbill also checks catalogs, files and "
                  "the rules between keys that a schema cannot express."}};
  const json body = scenario_keys::ObjectSchema(nullptr, "");
  for (auto it = body.begin(); it != body.end(); ++it) schema[it.key()] = it.value();
  return schema.dump(2) + "\n";
}

}  // namespace kvbill
