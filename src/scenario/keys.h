// The scenario keys, defined once.
//
// Every key a scenario file may hold is one row of ScenarioKeys(): its JSON
// pointer, type and range, unit, default, meaning, and the vLLM engine
// argument of the same meaning. Three things are made from the rows and
// from nothing else:
//   - the reader (reader.cc), a small interpreter: for each object it checks
//     the members against the rows (unknown keys, with "did you mean"),
//     reads each row's value by its type and range, maps a vLLM synonym
//     onto its row, checks the row's domain (a catalog, a file) and stores
//     the value through the row's field;
//   - docs/scenario-format.md's key tables (`kvbill scenario docs`, docs.cc);
//   - the JSON Schema for editors (`kvbill scenario schema`, schema.cc).
// Rules that tie several keys together (the sum of a summary's sizes, a
// linear-state model with prefix caching on, a provider's cache options)
// are listed in one place, rules.cc; nothing else checks a key by hand.
//
// Adding a key is adding a row (and its field in scenario.h): the reader,
// the docs and the schema follow.
#ifndef KVBILL_SRC_SCENARIO_KEYS_H_
#define KVBILL_SRC_SCENARIO_KEYS_H_

#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kvbill/scenario/scenario.h"
#include "kvbill/util/result.h"

namespace kvbill::scenario_keys {

using nlohmann::json;

inline constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

enum class Type {
  kSection,   // an object whose members are the rows under its pointer
  kMap,       // an object of free-form members, each read by the row's `entry`
  kString,    // a non-empty string
  kChoice,    // one of `choices` (or of `choice_names()`)
  kBool,      // true or false
  kInteger,   // a JSON integer in [min, max]
  kUnsigned,  // a JSON integer in [0, 2^64)
  kTokens,    // an integer in [min, 2^40] or a token count string ("32k" = 32,768)
  kNumber,    // a finite number in `range`
  kText,      // a string or a list of strings, for people; kvbill does not read it
  kRates,     // a number in [0, 1) or a non-empty list of them; stored as a list
};

enum class Range { kAny, kPositive, kNonNegative, kFraction };

// One allowed value of a kChoice row, with what it means (for the docs).
struct Choice {
  const char* name;
  const char* meaning = "";
};

// A string accepted beside a row's type, and the value it stands for
// ("unlimited" for a capacity).
struct Keyword {
  const char* text;
  std::int64_t stands_for;
};

// A vLLM value of a synonym and the kvbill value it maps to (kv_cache_dtype
// "fp8_e5m2" -> "fp8-e5m2"); `kvbill` null: no kvbill equivalent.
struct SynonymValue {
  const char* vllm;
  const char* kvbill;
};

// The scenario file being read: names it in errors and anchors relative paths.
class Source {
 public:
  explicit Source(std::string name)
      : name_(std::move(name)), directory_(std::filesystem::path(name_).parent_path()) {}

  // "s.json#/pointer: message".
  Error Bad(const std::string& pointer, const std::string& message) const {
    return Error(name_ + "#" + pointer + ": " + message);
  }
  // `path` relative to the scenario's directory (absolute paths unchanged).
  std::string Resolve(const std::string& path) const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::filesystem::path directory_;
};

// Checks a string value against a catalog or the file system, and may
// rewrite it (a path resolved against the scenario). Errors name `pointer`.
using Domain = Status (*)(const Source& source, const std::string& pointer, std::string* value);

// Reads one member of a kMap row into the scenario.
using Entry = Status (*)(const Source& source, const std::string& key, const json& value,
                         const std::string& pointer, Scenario* scenario);

// Where a row's value lives in Scenario: `store` writes a value read from
// the file (already checked and converted: token counts are integers,
// keywords the value they stand for), `load` reads the in-class default
// (for the docs and the schema).
struct Field {
  void (*store)(Scenario&, const json&) = nullptr;
  json (*load)(const Scenario&) = nullptr;
};

struct Key {
  const char* pointer;  // "/deployment/gpus_per_replica"
  Type type;
  const char* meaning;         // one line for the docs and the schema
  Field field = {};            // nothing for sections and text
  std::int64_t min = 1;        // kInteger, kTokens
  std::int64_t max = kMaxInt;  // kInteger
  Range range = Range::kAny;   // kNumber
  // kNumber: documented bounds beside the range, so that absurd values
  // (an overhead of 1e300 s, a bandwidth of 1e-300) stop before any work.
  double least = 0;                                       // when > 0: x >= least
  double most = std::numeric_limits<double>::infinity();  // x <= most
  bool nullable = false;  // null is accepted and stored as "not set"
  std::vector<Keyword> keywords = {};
  std::vector<Choice> choices = {};
  std::vector<std::string> (*choice_names)() = nullptr;  // choices from a catalog
  const char* what = nullptr;  // kChoice: the noun of `unknown router "x"`
  Domain domain = nullptr;
  Entry entry = nullptr;                       // kMap
  json (*schema)() = nullptr;                  // kMap: the JSON Schema of its value
  const char* unit = "";                       // "GPUs", "tokens", "s", "GiB"
  const char* default_text = nullptr;          // the docs' default when not the struct's
  const char* type_text = nullptr;             // the docs' type, and "must be ..." in errors
  const char* vllm = nullptr;                  // the vLLM engine argument of the same meaning
  std::vector<SynonymValue> vllm_values = {};  // when vLLM spells the values otherwise
  const char* shorthand = nullptr;             // kSection: a string stands for {shorthand: string}
  const char* variant = nullptr;               // a parameter of this `kind` only, required there
  const char* only_with = nullptr;             // a sibling that must be present ("generator")
  const char* required_with = nullptr;         // required when this sibling is present
  bool required = false;
  const char* missing = "missing";       // the error when required and absent
  const char* doc_section = nullptr;     // kSection: the docs' heading, when it has one
  std::vector<const char*> one_of = {};  // kSection: exactly one of these members

  // The last reference token of the pointer ("gpus_per_replica").
  std::string Name() const;
  // The pointer of the object holding the key ("/deployment"; "" at the top).
  std::string Parent() const;
};

// Every key, in reading order: a section's scalars before its subsections.
const std::vector<Key>& ScenarioKeys();

// The row at `pointer`, or nullptr.
const Key* FindKey(const std::string& pointer);

// The rows directly under `parent` ("" for the top level).
std::vector<const Key*> ChildKeys(const std::string& parent);

// What the reader knows when a cross-key rule runs.
class ReadState {
 public:
  virtual ~ReadState() = default;
  virtual const Source& source() const = 0;
  // Whether the file gives the key at `key_pointer` (itself or by its synonym).
  virtual bool Given(const std::string& key_pointer) const = 0;
  // The pointer in the file the key's value came from: its vLLM synonym's,
  // the section's for a shorthand ("model": "x"), else the nearest given parent's.
  virtual std::string At(const std::string& key_pointer) const = 0;
};

// A rule between keys: checked once the section `after` has been read
// (present or not; "" = the whole file), in the order of CrossKeyRules().
struct Rule {
  const char* after;
  const char* text;  // for the docs
  Status (*check)(const ReadState& state, Scenario* scenario);
  // Whether an engine can run the deployment at all (formats on the GPU,
  // heads over the GPUs): a sweep point records its error as not runnable.
  bool runnable = false;
};

// Every cross-key rule: the only checks outside the rows (rules.cc).
const std::vector<Rule>& CrossKeyRules();

// Reads a parsed scenario document into `scenario` by the rows and the
// rules. `scenario` holds the defaults and the name; the first error is returned.
// With `collect_not_runnable`, the first failing `runnable` rule's error
// goes to scenario->not_runnable and reading goes on.
Status ReadScenarioKeys(const json& doc, const Source& source, Scenario* scenario,
                        bool collect_not_runnable = false);

// ---- Fields: a row's place in Scenario, by member pointers.

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <typename T>
void StoreValue(T& out, const json& value) {
  if constexpr (IsOptional<T>::value) {
    if (value.is_null()) {
      out = std::nullopt;
    } else {
      out = value.get<typename T::value_type>();
    }
  } else {
    out = value.get<T>();
  }
}

template <typename T>
json LoadValue(const T& value) {
  if constexpr (IsOptional<T>::value) {
    return value ? json(*value) : json(nullptr);
  } else {
    return json(value);
  }
}

// A member of Scenario: Top<&Scenario::seed>().
template <auto Member>
Field Top() {
  return Field{[](Scenario& s, const json& v) { StoreValue(s.*Member, v); },
               [](const Scenario& s) { return LoadValue(s.*Member); }};
}

// A member of a section of Scenario, which may be optional (pricing):
// In<&Scenario::deployment, &ScenarioDeployment::replicas>().
template <auto Section, auto Member>
Field In() {
  return Field{[](Scenario& s, const json& v) {
                 auto& section = s.*Section;
                 if constexpr (IsOptional<std::remove_reference_t<decltype(section)>>::value) {
                   StoreValue((*section).*Member, v);
                 } else {
                   StoreValue(section.*Member, v);
                 }
               },
               [](const Scenario& s) {
                 using SectionType = std::remove_cvref_t<decltype(s.*Section)>;
                 if constexpr (IsOptional<SectionType>::value) {
                   return LoadValue(typename SectionType::value_type{}.*Member);
                 } else {
                   return LoadValue((s.*Section).*Member);
                 }
               }};
}

// ---- Shared by the reader, the rules and the domains.

// A value as compact JSON text for messages, at most 40 characters.
std::string Show(const json& value);
std::string Quote(const std::string& text);
bool IsFile(const std::string& path);

}  // namespace kvbill::scenario_keys

#endif  // KVBILL_SRC_SCENARIO_KEYS_H_
