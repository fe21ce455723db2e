// The scenario reader: an interpreter over the rows of keys.h.
//
// For each object of the file, in this order (the first error wins):
//   1. not an object: its shorthand (a string for "model"), else an error;
//   2. the `kind` of a section with parameter rows (context_policy);
//   3. each member, in key order, is a row, a row's vLLM synonym, or an
//      error ("unknown key", with "did you mean" from the rows; "not a
//      parameter of" another kind);
//   4. a key given twice (itself and its synonym), exactly-one-of members,
//      "only with" and required members;
//   5. the scalars' types and ranges, then their domains (catalogs, files),
//      stored through each row's field;
//   6. subsections and maps, in row order, each followed by the cross-key
//      rules that run after it (rules.cc).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "kvbill/util/units.h"
#include "scenario/keys.h"
#include "util/json_input.h"

namespace kvbill::scenario_keys {
namespace {

constexpr const char* kTag = "kind";  // picks the parameter rows of a section

std::string Join(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

std::vector<std::string> ChoiceNames(const Key& key) {
  if (key.choice_names != nullptr) return key.choice_names();
  std::vector<std::string> names;
  for (const Choice& c : key.choices) names.push_back(c.name);
  return names;
}

std::string DescribeInteger(std::int64_t min) {
  if (min == 1) return "a positive integer";
  if (min == 0) return "a non-negative integer";
  return "an integer >= " + std::to_string(min);
}

std::string DescribeNumber(Range range) {
  switch (range) {
    case Range::kPositive:
      return "a positive number";
    case Range::kNonNegative:
      return "a non-negative number";
    case Range::kFraction:
      return "a number in (0, 1]";
    case Range::kAny:
      break;
  }
  return "a number";
}

// "at least 0.01", "at most 1e+06", "in [0.001, 1e+06]" (as %g writes them).
std::string NumberBounds(const Key& key) {
  return json_input::RangeText(key.least > 0 ? key.least : -std::numeric_limits<double>::infinity(),
                               key.most);
}

// Edit distance with adjacent transpositions (optimal string alignment).
std::size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The member names a row answers to: its own, and its vLLM synonym.
bool AnswersTo(const Key& key, const std::string& member) {
  return key.Name() == member || (key.vllm != nullptr && member == key.vllm);
}

// "unknown key", with a suggestion: a key of this object a typo or two
// away (fewer edits than a third of the longer name's length), else the
// same name in another section.
std::string UnknownKey(const std::string& member, const std::vector<const Key*>& rows) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const Key* k : rows) {
    for (const std::string& name : {k->Name(), std::string(k->vllm ? k->vllm : "")}) {
      if (name.empty()) continue;
      const std::size_t d = Distance(member, name);
      if (d > 0 && 3 * d < std::max(member.size(), name.size()) && d < best_distance) {
        best = name;
        best_distance = d;
      }
    }
  }
  if (!best.empty()) return "unknown key; did you mean " + Quote(best) + "?";
  for (const Key& k : ScenarioKeys()) {
    if (k.type != Type::kSection && AnswersTo(k, member)) {
      return "unknown key here; did you mean " + Quote(k.pointer) + "?";
    }
  }
  return "unknown key";
}

class Reader : public ReadState {
 public:
  Reader(const Source& source, Scenario* scenario, bool collect_not_runnable)
      : source_(source), scenario_(scenario), collect_not_runnable_(collect_not_runnable) {}

  const Source& source() const override { return source_; }
  bool Given(const std::string& key_pointer) const override {
    return origin_.count(key_pointer) > 0;
  }
  std::set<std::string> GivenPointers() const {
    std::set<std::string> out;
    for (const auto& [pointer, at] : origin_) out.insert(pointer);
    return out;
  }
  std::string At(const std::string& key_pointer) const override {
    for (std::string p = key_pointer;; p = p.substr(0, p.rfind('/'))) {
      if (auto it = origin_.find(p); it != origin_.end()) return it->second;
      if (p.empty()) return key_pointer.substr(0, key_pointer.rfind('/'));
    }
  }

  // Reads the object at `pointer` (the section row `section`; nullptr at
  // the top), written at `at` in the file.
  Status ReadObject(const std::string& pointer, const Key* section, const json& value,
                    const std::string& at);

 private:
  Error Bad(const std::string& at, const std::string& message) const {
    return source_.Bad(at, message);
  }
  // The value of `key` as given at `at`, checked and converted for its field.
  Result<json> Scalar(const Key& key, const json& value, const std::string& at) const;
  Result<json> Integer(const json& v, std::int64_t min, std::int64_t max,
                       const std::string& at) const;
  Result<json> FromSynonym(const Key& key, const json& value, const std::string& at) const;
  Status RunRules(const std::string& after);

  const Source& source_;
  Scenario* scenario_;
  bool collect_not_runnable_ = false;
  std::map<std::string, std::string> origin_;  // key pointer -> pointer in the file
};

Result<json> Reader::Integer(const json& v, std::int64_t min, std::int64_t max,
                             const std::string& at) const {
  // A number with no fractional part is an integer, as JSON Schema's
  // "integer" (scenario schema) says: 2.0 is 2, 1e9 is 1,000,000,000. The
  // bounds are checked on the number as written, and errors show it so.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d)) {
      if (d < static_cast<double>(min)) {
        return Bad(at, "must be " + DescribeInteger(min) + ", got " + Show(v));
      }
      // 2^63 itself does not convert: past int64 is past every maximum.
      if (d > static_cast<double>(max) || d >= 9223372036854775808.0) {
        return Bad(at, "must be at most " + std::to_string(max) + ", got " + Show(v));
      }
      return json(static_cast<std::int64_t>(d));
    }
  }
  const bool too_big =
      v.is_number_unsigned() &&
      v.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()};
  if (!v.is_number_integer() || (!too_big && v.get<std::int64_t>() < min)) {
    return Bad(at, "must be " + DescribeInteger(min) + ", got " + Show(v));
  }
  if (too_big || v.get<std::int64_t>() > max) {
    return Bad(at, "must be at most " + std::to_string(max) + ", got " + Show(v));
  }
  return json(v.get<std::int64_t>());
}

Result<json> Reader::Scalar(const Key& key, const json& v, const std::string& at) const {
  if (key.nullable && v.is_null()) return json(nullptr);
  switch (key.type) {
    case Type::kString:
      if (!v.is_string() || v.get<std::string>().empty()) {
        return Bad(at, "must be a non-empty string, got " + Show(v));
      }
      return v;
    case Type::kText: {
      const bool strings = v.is_array() && std::all_of(v.begin(), v.end(),
                                                       [](const json& x) { return x.is_string(); });
      if (!v.is_string() && !strings) {
        return Bad(at, "must be a string or a list of strings, got " + Show(v));
      }
      return v;
    }
    case Type::kBool:
      if (!v.is_boolean()) return Bad(at, "must be true or false, got " + Show(v));
      return v;
    case Type::kRates: {
      auto rate = [](const json& x) {
        return x.is_number() && x.get<double>() >= 0 && x.get<double>() < 1;
      };
      const std::string must = "must be a number in [0, 1) or a non-empty list of them, got ";
      if (v.is_array()) {
        if (v.empty()) return Bad(at, must + Show(v));
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (!rate(v[i])) {
            return Bad(at + "/" + std::to_string(i),
                       "must be a number in [0, 1), got " + Show(v[i]));
          }
        }
        json list = json::array();
        for (const json& x : v) list.push_back(x.get<double>());
        return list;
      }
      if (!rate(v)) return Bad(at, must + Show(v));
      return json::array({v.get<double>()});
    }
    case Type::kChoice: {
      const std::vector<std::string> names = ChoiceNames(key);
      const std::string list = Join(names, "|");
      if (!v.is_string()) return Bad(at, "must be one of " + list + ", got " + Show(v));
      if (std::find(names.begin(), names.end(), v.get<std::string>()) == names.end()) {
        return Bad(at, std::string("unknown ") + key.what + " " + Quote(v.get<std::string>()) +
                           " (one of " + list + ")");
      }
      return v;
    }
    case Type::kInteger:
      return Integer(v, key.min, key.max, at);
    case Type::kUnsigned:
      if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() < 18446744073709551616.0 &&
          v.get<double>() == std::floor(v.get<double>())) {
        return json(static_cast<std::uint64_t>(v.get<double>()));  // 1.0 is 1, as for kInteger
      }
      if (v.is_number_float() && v.get<double>() >= 18446744073709551616.0) {
        // Past 2^64 - 1 the JSON reader has only a double to give.
        return Bad(at, "must be at most 18446744073709551615 (2^64 - 1), got " + Show(v));
      }
      if (!v.is_number_unsigned()) {
        return Bad(at, "must be a non-negative integer, got " + Show(v));
      }
      return v;
    case Type::kTokens:
      if (v.is_string()) {
        for (const Keyword& k : key.keywords) {
          if (v.get<std::string>() == k.text) return json(k.stands_for);
        }
        auto tokens = ParseTokenCount(v.get<std::string>());
        if (!tokens) return Bad(at, tokens.error().message());
        return json(*tokens);
      }
      if (v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                    v.get<double>() == std::floor(v.get<double>()))) {
        return Integer(v, key.min, kMaxTokenCount, at);
      }
      return Bad(at, "must be " +
                         (key.type_text != nullptr
                              ? std::string(key.type_text)
                              : DescribeInteger(key.min) + " or a token count like \"32k\"") +
                         ", got " + Show(v));
    case Type::kNumber: {
      const double x = v.is_number() ? v.get<double>() : std::nan("");
      const bool ok =
          std::isfinite(x) &&
          (key.range == Range::kAny || (key.range == Range::kNonNegative ? x >= 0 : x > 0)) &&
          (key.range != Range::kFraction || x <= 1);
      if (!ok) return Bad(at, "must be " + DescribeNumber(key.range) + ", got " + Show(v));
      if (x < key.least || x > key.most) {
        return Bad(at,
                   "must be " + NumberBounds(key) + " (docs/scenario-format.md), got " + Show(v));
      }
      return json(x);
    }
    case Type::kSection:
    case Type::kMap:
      break;
  }
  return Bad(at, "not a value");
}

// A value given under the key's vLLM name, in vLLM's spelling when it has one.
Result<json> Reader::FromSynonym(const Key& key, const json& v, const std::string& at) const {
  if (key.vllm_values.empty()) return Scalar(key, v, at);
  std::vector<std::string> names;
  for (const SynonymValue& s : key.vllm_values) {
    if (s.kvbill != nullptr) names.push_back(s.vllm);
  }
  const std::string list = Join(names, "|");
  if (!v.is_string()) return Bad(at, "must be one of " + list + ", got " + Show(v));
  for (const SynonymValue& s : key.vllm_values) {
    if (v.get<std::string>() != s.vllm) continue;
    if (s.kvbill == nullptr) {
      return Bad(at, "vLLM's " + Quote(s.vllm) + " has no kvbill equivalent; give " + key.Name() +
                         " instead (one of its values: docs/scenario-format.md)");
    }
    return Scalar(key, json(s.kvbill), at);
  }
  return Bad(at, "unknown " + std::string(key.vllm) + " " + Quote(v.get<std::string>()) +
                     " (one of " + list + ")");
}

Status Reader::RunRules(const std::string& after) {
  for (const Rule& rule : CrossKeyRules()) {
    if (rule.after != after) continue;
    if (Status s = rule.check(*this, scenario_); !s) {
      if (!rule.runnable || !collect_not_runnable_) return s;
      if (scenario_->not_runnable.empty()) scenario_->not_runnable = s.error().message();
    }
  }
  return OkStatus();
}

Status Reader::ReadObject(const std::string& pointer, const Key* section, const json& value,
                          const std::string& at) {
  // 1. An object, or a section's shorthand: errors then name the section.
  json expanded;
  const json* object = &value;
  const bool shorthand = section != nullptr && section->shorthand != nullptr && value.is_string();
  if (shorthand) {
    expanded = json::object({{section->shorthand, value}});
    object = &expanded;
  } else if (!value.is_object()) {
    const std::string must_be =
        section != nullptr && section->type_text != nullptr ? section->type_text : "an object";
    return Bad(at, "must be " + must_be + ", got " + Show(value));
  }
  const std::vector<const Key*> rows = ChildKeys(pointer);
  auto member_at = [&](const std::string& member) {
    return shorthand ? at : at + "/" + json_input::EscapePointerKey(member);
  };
  auto given = [&](const Key& k) -> const json* {
    for (auto it = object->begin(); it != object->end(); ++it) {
      if (AnswersTo(k, it.key())) return &*it;
    }
    return nullptr;
  };
  auto given_name = [&](const Key& k) {
    return object->contains(k.Name()) ? k.Name() : std::string(k.vllm);
  };

  // 2. The kind that picks the parameter rows.
  const Key* tag = nullptr;
  for (const Key* k : rows) {
    if (k->variant != nullptr) tag = FindKey(pointer + "/" + kTag);
  }
  std::string kind;
  if (tag != nullptr) {
    kind = tag->field.load(Scenario{}).get<std::string>();
    if (const json* v = given(*tag)) {
      auto read = Scalar(*tag, *v, member_at(kTag));
      if (!read) return read.error();
      kind = read->get<std::string>();
    }
  }

  // 3. Every member is a row of this object.
  for (auto it = object->begin(); it != object->end(); ++it) {
    auto row = std::find_if(rows.begin(), rows.end(),
                            [&](const Key* k) { return AnswersTo(*k, it.key()); });
    if (row == rows.end()) return Bad(member_at(it.key()), UnknownKey(it.key(), rows));
    if ((*row)->variant != nullptr && (*row)->variant != kind) {
      std::string own;
      for (const Key* k : rows) {
        if (k->variant != nullptr && k->variant == kind)
          own += (own.empty() ? "" : ", ") + k->Name();
      }
      return Bad(member_at(it.key()), "not a parameter of " + kind + " (" +
                                          (own.empty() ? "it has none" : "its parameters: " + own) +
                                          ")");
    }
  }

  // 4. Keys given twice, exactly one of, only with, required.
  for (const Key* k : rows) {
    if (k->vllm != nullptr && k->Name() != k->vllm && object->contains(k->Name()) &&
        object->contains(k->vllm)) {
      return Bad(at, "has both " + Quote(k->Name()) + " and its vLLM name " + Quote(k->vllm) +
                         " (give one)");
    }
  }
  if (section != nullptr && !section->one_of.empty()) {
    std::vector<std::string> present;
    for (const char* name : section->one_of) {
      if (object->contains(name)) present.push_back(name);
    }
    if (present.size() > 1) {
      return Bad(at, "has both " + Quote(present[0]) + " and " + Quote(present[1]) + " (give one)");
    }
    if (present.empty()) {
      std::vector<std::string> quoted;
      for (const char* name : section->one_of) quoted.push_back(Quote(name));
      return Bad(at, "needs " + Join(quoted, " or "));
    }
  }
  for (const Key* k : rows) {
    const bool present = given(*k) != nullptr;
    if (present && k->only_with != nullptr && !object->contains(k->only_with)) {
      return Bad(member_at(given_name(*k)), "only with " + Quote(k->only_with));
    }
  }
  for (const Key* k : rows) {
    if (given(*k) != nullptr) continue;
    const bool required =
        k->required || (k->required_with != nullptr && object->contains(k->required_with));
    if (required) return Bad(member_at(k->Name()), k->missing);
    if (k->variant != nullptr && k->variant == kind) {
      return Bad(member_at(k->Name()), "missing (required by " + kind + ")");
    }
  }

  // 5. Scalars: types and ranges, then domains; then stored.
  struct Read {
    const Key* key;
    json value;
    std::string at;
  };
  std::vector<Read> reads;
  for (const Key* k : rows) {
    const json* v = given(*k);
    if (v == nullptr || k->type == Type::kSection || k->type == Type::kMap) continue;
    const std::string name = given_name(*k);
    const std::string where = member_at(name);
    auto read = name == k->Name() ? Scalar(*k, *v, where) : FromSynonym(*k, *v, where);
    if (!read) return read.error();
    reads.push_back(Read{k, std::move(*read), where});
  }
  for (Read& r : reads) {
    if (r.key->domain == nullptr || !r.value.is_string()) continue;
    std::string text = r.value.get<std::string>();
    if (Status s = r.key->domain(source_, r.at, &text); !s) return s;
    r.value = text;
  }
  for (const Read& r : reads) {
    origin_[r.key->pointer] = r.at;
    if (r.key->field.store != nullptr) r.key->field.store(*scenario_, r.value);
  }

  // 6. Subsections and maps, each followed by its rules.
  for (const Key* k : rows) {
    if (k->type != Type::kSection && k->type != Type::kMap) continue;
    if (const json* v = given(*k)) {
      if (v->is_null() && k->nullable) continue;  // a nullable section: null = absent
      const std::string where = member_at(k->Name());
      origin_[k->pointer] = where;
      if (k->field.store != nullptr) k->field.store(*scenario_, *v);
      if (k->type == Type::kSection) {
        if (Status s = ReadObject(k->pointer, k, *v, where); !s) return s;
      } else {
        if (!v->is_object()) return Bad(where, "must be an object, got " + Show(*v));
        for (auto it = v->begin(); it != v->end(); ++it) {
          if (Status s = k->entry(source_, it.key(), it.value(),
                                  where + "/" + json_input::EscapePointerKey(it.key()), scenario_);
              !s) {
            return s;
          }
        }
      }
    }
    if (Status s = RunRules(k->pointer); !s) return s;
  }
  if (section == nullptr) return RunRules("");
  return OkStatus();
}

}  // namespace

Status ReadScenarioKeys(const json& doc, const Source& source, Scenario* scenario,
                        bool collect_not_runnable) {
  Reader reader(source, scenario, collect_not_runnable);
  Status read = reader.ReadObject("", nullptr, doc, "");
  scenario->given = reader.GivenPointers();
  return read;
}

}  // namespace kvbill::scenario_keys
