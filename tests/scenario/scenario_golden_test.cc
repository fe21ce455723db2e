// The scenario reader's results, pinned: every bundled scenario and test
// fixture parses to the same Scenario, and a corpus of edited scenarios
// (every key set to values of the wrong type, out of range, or unknown keys
// added) gives the same error text, as recorded in
// tests/data/scenarios/parse_golden.txt.
//
// That file was written by the hand-written reader that preceded the key
// table (src/scenario/keys.cc), before the table replaced it, so the two
// readers agree on every case it lists. Regenerate it only for a deliberate
// change, with the reason in the commit message:
//   KVBILL_WRITE_GOLDEN=1 build/tests/kvbill_tests --gtest_filter='ScenarioGoldenTest.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kvbill/scenario/scenario.h"
#include "kvbill/util/file.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

const std::string kSourceDir = KVBILL_SOURCE_DIR;
const std::string kGolden = kSourceDir + "/tests/data/scenarios/parse_golden.txt";

// Paths under the source tree print as $SRC/..., so the text does not
// depend on where the tree is checked out.
std::string Relative(std::string text) {
  for (std::size_t at = text.find(kSourceDir); at != std::string::npos;
       at = text.find(kSourceDir, at)) {
    text.replace(at, kSourceDir.size(), "$SRC");
  }
  return text;
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// An optional value, "none" when absent (the default decided later).
template <typename T>
std::string Opt(const std::optional<T>& v) {
  if (!v) return "none";
  if constexpr (std::is_floating_point_v<T>) {
    return Num(*v);
  } else {
    return std::to_string(*v);
  }
}

// Every field of a parsed scenario, one "path = value" line each.
std::string Canonical(const Scenario& s) {
  std::ostringstream o;
  o << "name = " << s.name << "\n";
  o << "source = " << s.source << "\n";
  o << "model.name = " << s.model.name << "\n";
  for (const auto& [key, text] : s.model.set) o << "model.set." << key << " = " << text << "\n";
  o << "model.text_only = " << s.model.text_only << "\n";
  o << "kv_format = " << s.kv_format << "\n";
  o << "weight_format = " << s.weight_format << "\n";
  const ScenarioDeployment& d = s.deployment;
  o << "deployment.gpu = " << d.gpu << "\n";
  o << "deployment.gpus_per_replica = " << d.gpus_per_replica << "\n";
  o << "deployment.replicas = " << d.replicas << "\n";
  // The reader before the key table read an absent fraction as 0.9.
  o << "deployment.memory_fraction = " << Num(d.memory_fraction.value_or(0.9)) << "\n";
  o << "deployment.engine = " << d.engine << "\n";
  o << "deployment.profile = " << d.profile << "\n";
  o << "deployment.async_scheduling = "
    << (d.async_scheduling ? (*d.async_scheduling ? "true" : "false") : "engine default") << "\n";
  o << "deployment.activation_reserve_gib = " << Opt(d.activation_reserve_gib) << "\n";
  o << "deployment.usd_per_gpu_hour = " << (d.usd_per_gpu_hour ? Num(*d.usd_per_gpu_hour) : "none")
    << "\n";
  o << "deployment.bandwidth_efficiency = " << Opt(d.bandwidth_efficiency) << "\n";
  o << "deployment.compute_efficiency = " << Opt(d.compute_efficiency) << "\n";
  o << "deployment.iteration_overhead_s = " << Opt(d.iteration_overhead_s) << "\n";
  if (d.speculative) {
    o << "deployment.speculative = " << d.speculative->method << " model=" << d.speculative->model
      << " k=" << Opt(d.speculative->num_speculative_tokens) << " acceptance=";
    for (double a : d.speculative->acceptance_rate) o << Num(a) << " ";
    o << "\n";
  } else {
    o << "deployment.speculative = off\n";
  }
  const ScenarioEngine& e = s.engine;
  o << "engine.max_num_batched_tokens = " << Opt(e.max_num_batched_tokens) << "\n";
  o << "engine.max_num_seqs = " << Opt(e.max_num_seqs) << "\n";
  o << "engine.max_model_len = " << Opt(e.max_model_len) << "\n";
  o << "engine.router = " << e.router << "\n";
  o << "engine.mode = " << e.mode << "\n";
  const ScenarioPrefixCache& c = s.prefix_cache;
  o << "prefix_cache.enabled = " << c.enabled << "\n";
  o << "prefix_cache.block_size = " << c.block_size << "\n";
  o << "prefix_cache.capacity_tokens = "
    << (c.capacity_tokens ? std::to_string(*c.capacity_tokens) : "none") << "\n";
  o << "prefix_cache.pin_during_tool_s = " << Num(c.pin_during_tool_s) << "\n";
  o << "prefix_cache.offload_capacity_gib = " << Num(c.offload_capacity_gib) << "\n";
  o << "prefix_cache.offload_link_gb_s = " << Num(c.offload_link_gb_s) << "\n";
  const ContextPolicyParams& p = s.context_policy;
  o << "context_policy.kind = " << p.kind << "\n";
  o << "context_policy.params = " << p.window_tokens << " " << p.older_than_turns << " "
    << p.stub_tokens << " " << p.threshold_tokens << " " << p.summary_tokens << " "
    << p.keep_recent_tokens << " " << p.sink_tokens << " " << p.recent_tokens << "\n";
  o << "trace.file = " << s.trace.file << "\n";
  o << "trace.format = " << s.trace.format << "\n";
  o << "trace.release = " << s.trace.release << "\n";
  o << "trace.generator = " << s.trace.generator << "\n";
  o << "trace.tasks = " << s.trace.tasks << "\n";
  o << "seed = " << s.seed << "\n";
  for (const Budget& b : s.budgets) {
    o << "budget " << b.metric << " = " << (b.max ? Num(*b.max) : "none") << " "
      << (b.min ? Num(*b.min) : "none") << "\n";
  }
  for (const SloTarget& t : s.slo) o << "slo " << t.metric << " = " << Num(t.max) << "\n";
  for (const SweepAxis& a : s.sweep) {
    o << "sweep " << a.path << " =";
    for (const std::string& v : a.values) o << " " << v;
    o << "\n";
  }
  if (s.pricing) {
    const ScenarioPricing& r = *s.pricing;
    o << "pricing = " << r.provider << " " << r.model << " ttl_s=" << Num(r.ttl_s)
      << " min_cacheable=" << r.min_cacheable_tokens << " warm=" << r.warm_start_from_recorded
      << " enabled=" << r.cache_enabled << " explicit=" << r.explicit_cache
      << " prefix=" << r.prefix_tokens << " write_fee=" << static_cast<int>(r.write_fee)
      << " per_call=" << r.per_call_models << "\n";
  }
  return Relative(o.str());
}

// One case: what the reader gives for `text` read as `source`.
std::string Outcome(const std::string& text, const std::string& source) {
  auto s = ParseScenario(text, source);
  if (!s) return "error: " + Relative(s.error().message()) + "\n";
  return Canonical(*s);
}

// Bundled scenarios and scenario fixtures, by path under the source tree.
std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"scenarios", "scenarios/examples", "scenarios/claims",
                          "tests/data/scenarios", "tests/data/malformed", "fuzz/corpus/scenario"}) {
    for (const auto& entry : fs::directory_iterator(kSourceDir + "/" + dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string name = entry.path().filename().string();
      const bool is_scenario =
          std::string(dir) == "fuzz/corpus/scenario" ||
          (entry.path().extension() == ".json" && name != "gpus.json" && name != "prices.json" &&
           (std::string(dir) != "tests/data/malformed" || name.starts_with("scenario_")));
      if (is_scenario) files.push_back(std::string(dir) + "/" + name);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Values that each key is set to in turn: wrong types, zero, negatives,
// fractions, huge numbers, empty and odd strings, token counts.
const std::vector<ordered_json>& Probes() {
  static const std::vector<ordered_json> probes = {nullptr,
                                                   true,
                                                   false,
                                                   0,
                                                   -1,
                                                   1,
                                                   2,
                                                   0.5,
                                                   1.5,
                                                   1e20,
                                                   "",
                                                   "x",
                                                   "32k",
                                                   "8q",
                                                   "unlimited",
                                                   "first_request",
                                                   "auto",
                                                   "none",
                                                   "fp8",
                                                   ordered_json::array(),
                                                   ordered_json::array({1}),
                                                   ordered_json::object(),
                                                   ordered_json::object({{"max", 1}})};
  return probes;
}

// Every value in `doc` (objects and leaves), by JSON pointer.
void Pointers(const ordered_json& doc, const std::string& at, std::vector<std::string>* out) {
  if (!at.empty()) out->push_back(at);
  if (!doc.is_object()) return;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    std::string key;
    for (char ch : it.key()) key += ch == '/' ? std::string("~1") : std::string(1, ch);
    Pointers(it.value(), at + "/" + key, out);
  }
}

// Base scenarios the probes edit: one with every engine-side key, one of
// each context policy kind, one with every pricing key.
const std::vector<std::string>& Bases() {
  static const std::vector<std::string> bases = {
      R"({"name": "everything",
          "model": {"name": "qwen3-32b", "set": {"num_key_value_heads": 64}},
          "kv_format": "fp8", "weight_format": "auto",
          "deployment": {"gpu": "h200", "gpus_per_replica": 2, "replicas": 3,
                         "memory_fraction": 0.85, "activation_reserve_gib": 4,
                         "usd_per_gpu_hour": 3.1, "bandwidth_efficiency": 0.7,
                         "compute_efficiency": 0.5, "iteration_overhead_s": 0.002,
                         "speculative": {"method": "eagle", "num_speculative_tokens": 3,
                                         "acceptance_rate": [0.8, 0.7, 0.6]}},
          "engine": {"max_num_batched_tokens": "16k", "max_num_seqs": 128,
                     "router": "prefix_affinity", "mode": "event"},
          "prefix_cache": {"enabled": true, "block_size": 16, "capacity_tokens": "unlimited",
                           "pin_during_tool_s": 30,
                           "offload": {"capacity_gib": 256, "link_gb_s": 25}},
          "context_policy": {"kind": "summarise", "threshold_tokens": "96k",
                             "summary_tokens": 2000, "keep_recent_tokens": "8k"},
          "trace": {"file": "traces/agents.jsonl", "format": "native", "release": "after_finish"},
          "seed": 7,
          "budgets": {"hit_rate": {"min": 0.5}, "cost_per_task_usd.p90": {"max": 1}},
          "sweep": {"/kv_format": ["bf16", "fp8"], "/seed": [1, 2]}})",
      R"({"context_policy": {"kind": "sliding_window", "window_tokens": 4096},
          "trace": {"generator": "coding-agent", "tasks": 3, "release": "recorded"}})",
      R"({"context_policy": {"kind": "drop_tool_results", "older_than_turns": 3,
                             "stub_tokens": 50}})",
      R"({"context_policy": {"kind": "sinks_recent", "sink_tokens": 4, "recent_tokens": 4096}})",
      R"({"model": "qwen3-8b", "context_policy": {"kind": "keep_all"}})",
      R"({"pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5",
                      "per_call_models": false,
                      "cache": {"enabled": true, "ttl_s": 3600, "min_cacheable_tokens": 2048,
                                "warm_start": "none"}}})",
      R"({"pricing": {"provider": "gemini", "model": "gemini-2.5-pro",
                      "cache": {"mode": "explicit", "prefix_tokens": 4096}}})",
      R"({"pricing": {"provider": "openai", "model": "gpt-5",
                      "cache": {"write_fee": true, "ttl_s": 1800}}})",
  };
  return bases;
}

// The whole corpus: a header line per case, then its outcome.
std::string Corpus() {
  std::string out;
  for (const std::string& file : ScenarioFiles()) {
    auto text = ReadFile(kSourceDir + "/" + file);
    out += "## file " + file + "\n";
    out += text ? Outcome(*text, kSourceDir + "/" + file) : "unreadable\n";
  }
  for (std::size_t b = 0; b < Bases().size(); ++b) {
    const ordered_json base = ordered_json::parse(Bases()[b]);
    out += "## base " + std::to_string(b) + "\n" + Outcome(base.dump(), "runs/s.json");
    std::vector<std::string> pointers;
    Pointers(base, "", &pointers);
    for (const std::string& pointer : pointers) {
      for (const ordered_json& probe : Probes()) {
        ordered_json doc = base;
        doc[ordered_json::json_pointer(pointer)] = probe;
        out += "## base " + std::to_string(b) + " " + pointer + " = " + probe.dump() + "\n";
        out += Outcome(doc.dump(), "runs/s.json");
      }
      // An unknown key beside the value, and one inside it when it is an object.
      const std::size_t slash = pointer.rfind('/');
      for (const std::string& at : {pointer.substr(0, slash), pointer}) {
        ordered_json doc = base;
        ordered_json& target = at.empty() ? doc : doc[ordered_json::json_pointer(at)];
        if (!target.is_object()) continue;
        target["zz_unknown"] = 1;
        out += "## base " + std::to_string(b) + " " + at + "/zz_unknown = 1\n";
        out += Outcome(doc.dump(), "runs/s.json");
      }
    }
  }
  return out;
}

TEST(ScenarioGoldenTest, EveryScenarioAndEditParsesAsRecorded) {
  const std::string corpus = Corpus();
  if (std::getenv("KVBILL_WRITE_GOLDEN") != nullptr) {
    std::ofstream(kGolden, std::ios::binary) << corpus;
    GTEST_SKIP() << "wrote " << kGolden;
  }
  auto golden = ReadFile(kGolden);
  ASSERT_TRUE(golden.ok()) << golden.error().message();
  if (*golden == corpus) return;
  // Report the first differing case with its header.
  std::istringstream want(*golden), got(corpus);
  std::string want_line, got_line, header;
  for (int line = 1;; ++line) {
    const bool more_want = static_cast<bool>(std::getline(want, want_line));
    const bool more_got = static_cast<bool>(std::getline(got, got_line));
    if (!more_want && !more_got) break;
    if (more_want && want_line.starts_with("## ")) header = want_line;
    if (!more_want || !more_got || want_line != got_line) {
      FAIL() << "parse_golden.txt:" << line << " (" << header << ")\n  recorded: " << want_line
             << "\n  now:      " << got_line;
    }
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
