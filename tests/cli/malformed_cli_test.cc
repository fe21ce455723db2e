// The malformed-input contract (docs/robustness.md), end to end: every reader
// the command line exposes, fed each file of tests/data/malformed/ (truncated
// lines, wrong types, negative and huge counts, NaN and infinity, time running
// backwards, unknown keys, empty files, binary junk), exits 2 with exactly one
// message that names the file and line (or the JSON pointer or field), and
// leaves no output behind: no new file at the -o/--out path, an existing one
// untouched, and no temporary file next to it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_test_util.h"
#include "kvbill/util/spool.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::Slurp;

namespace fs = std::filesystem;

using CommandResult = testing::RunResult;

// Runs `kvbill ARGS` from the source root, so paths in messages are relative.
// `prefix` goes before the command in the shell (e.g. a ulimit).
CommandResult Kvbill(const std::string& args, const std::string& prefix = "") {
  return testing::RunKvbillInSourceDir(args, prefix);
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("kvbill_malformed_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// One row: the arguments after `kvbill`, where {OUT} stands for an output
// path, and the whole expected stderr. A message starting with "~" is a
// regular expression instead (for the rows generated per format).
struct Case {
  std::string args;
  std::string message;
};

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

const std::string kDir = "tests/data/malformed/";

std::vector<Case> TraceCases() {
  // Each file: the message `kvbill trace stats` and `trace convert` give.
  const std::vector<std::pair<std::string, std::string>> files = {
      {"native_truncated.jsonl", ":3: truncated JSON"},
      {"native_wrong_type.jsonl",
       ":3: task \"b\": turn 1: \"out\" must be a non-negative integer, got \"ten\""},
      {"native_negative.jsonl",
       ":2: task \"a\": turn 1: span 1: \"tokens\" must be a non-negative integer, got -5"},
      // 99999999999999999999 is above 2^64: JSON keeps it as the double 1e20.
      {"native_huge_count.jsonl",
       ":2: task \"a\": turn 1: span 1: \"tokens\" must be a non-negative integer, got 1e+20"},
      {"native_1e300.jsonl",
       ":3: task \"b\": turn 1: \"out\" must be a non-negative integer, got 1e+300"},
      {"native_nan_string.jsonl", ":2: task \"a\": \"arrival_s\" must be a number, got \"NaN\""},
      // `{"id":"a","arrival_s":` is 22 characters: the N is the 23rd.
      {"native_nan_literal.jsonl", ":2: invalid JSON at column 23"},
      {"native_infinity.jsonl", ":2: number out of range: 1e999"},
      {"native_time_backwards.jsonl",
       ":2: task \"a\": turn 2: time runs backwards: 4 s is before the previous turn's 5 s"},
      {"native_unknown_key.jsonl", ":2: task \"a\": turn 1: unknown field \"otu\""},
      // Two spans of 2^40 and 1 tokens: one token above the limit.
      {"native_prompt_overflow.jsonl", ":2: task \"a\": turn 1: the prompt is above 2^40 tokens"},
      {"native_empty.jsonl", ": empty trace"},
      {"mooncake_wrong_type.jsonl",
       ":2: \"input_length\" must be a non-negative integer, got \"600\""},
      // 18446744073709551616 = 2^64 does not fit 64 bits: the double 1.8446744073709552e19.
      {"mooncake_huge_count.jsonl",
       ":1: \"input_length\" must be a non-negative integer, got 1.8446744073709552e+19"},
      {"mooncake_above_2_40.jsonl", ":1: \"input_length\" must be at most 2^40, got 2000000000000"},
      {"mooncake_negative_time.jsonl", ":1: \"timestamp\" must be a non-negative number, got -5"},
      {"mooncake_nan_string.jsonl", ":1: \"timestamp\" must be a number, got \"NaN\""},
      {"mooncake_infinity.jsonl", ":2: number out of range: -1e999"},
      {"mooncake_time_backwards.jsonl",
       ":2: time runs backwards: 1000 ms is before the previous row's 3000 ms"},
      {"mooncake_hash_wrong_type.jsonl",
       ":1: \"hash_ids\" must hold non-negative integers, got \"x\""},
      {"dynamo_unknown_key.jsonl", ":1: unknown field \"extra\""},
      {"dynamo_time_backwards.jsonl",
       ":2: session \"s\": time runs backwards: 500 ms is before the previous row's 1000 ms"},
      {"dynamo_negative.jsonl", ":2: \"delay\" must be a non-negative number, got -5"},
      {"claude_code_truncated.jsonl", ":2: truncated JSON"},
      {"claude_code_negative.jsonl",
       ":1: usage: \"input_tokens\" must be a non-negative integer, got -4"},
      {"claude_code_wrong_type.jsonl",
       ":1: usage: \"input_tokens\" must be a non-negative integer, got \"4\""},
      {"claude_code_nan_string.jsonl",
       ":1: usage: \"output_tokens\" must be a non-negative integer, got \"NaN\""},
      {"claude_code_bad_time.jsonl", ":1: bad timestamp \"yesterday\""},
      {"claude_code_huge_count.jsonl",
       ":1: usage: \"cache_read_input_tokens\" must be a non-negative integer, got 1e+300"},
      {"codex_wrong_type.jsonl",
       ":2: payload.info: total_token_usage: \"input_tokens\" must be a non-negative integer, got "
       "\"many\""},
      {"codex_negative.jsonl",
       ":2: payload.info: last_token_usage: \"input_tokens\" must be a non-negative integer, got "
       "-100"},
      {"openai_negative.jsonl",
       ":1: usage: \"input_tokens\" must be a non-negative integer, got -5000"},
      {"openai_nan_string.jsonl", ":1: \"created_at\" must be a number, got \"NaN\""},
      {"tracelab_wrong_type.jsonl",
       ":1: \"round_index\" must be a non-negative integer, got \"zero\""},
      {"tracelab_sim_negative.csv", ":3: input_len must be a non-negative integer, got \"-128\""},
      {"tracelab_sim_nan.csv", ":2: arrival_time must be a non-negative integer, got \"NaN\""},
      {"tracelab_sim_short_row.csv", ":2: expected 7 fields, got 5"},
      {"azure_negative.csv", ":3: ContextTokens must be a non-negative integer, got \"-396\""},
      {"azure_nan.csv", ":2: ContextTokens must be a non-negative integer, got \"NaN\""},
      {"azure_infinity.csv", ":2: GeneratedTokens must be a non-negative integer, got \"inf\""},
      {"azure_huge_count.csv",
       ":2: ContextTokens must be a non-negative integer, got \"99999999999999999999\""},
      {"azure_1e300.csv", ":2: ContextTokens must be a non-negative integer, got \"1e300\""},
      {"azure_time_backwards.csv",
       ":3: time runs backwards: 2023-11-16 18:15:46.0000000 is before the previous row's "
       "2023-11-16 18:15:50.0000000"},
      {"azure_truncated.csv", ":3: expected 3 comma-separated fields"},
      {"binary_junk.bin",
       ":1: unrecognised trace format (use "
       "--from native|mooncake|dynamo|claude-code|codex|openai|tracelab|tracelab-csv|azure)"},
  };
  std::vector<Case> cases;
  for (const auto& [file, what] : files) {
    cases.push_back({"trace stats " + kDir + file + " --format json -o {OUT}",
                     "kvbill trace stats: " + kDir + file + what + "\n"});
    cases.push_back({"trace convert " + kDir + file + " --to native -o {OUT}",
                     "kvbill trace convert: " + kDir + file + what + "\n"});
  }
  // Every reader, forced with --from, on binary junk and on an empty file.
  for (const char* format : {"native", "mooncake", "dynamo", "claude-code", "codex", "openai",
                             "tracelab", "tracelab-csv", "azure"}) {
    cases.push_back(
        {"trace stats " + kDir + "binary_junk.bin --from " + format + " -o {OUT}",
         "~kvbill trace stats: tests/data/malformed/binary_junk\\.bin:[0-9]+: [^\\n]+\\n"});
    cases.push_back({"trace stats " + kDir + "native_empty.jsonl --from " + format + " -o {OUT}",
                     "kvbill trace stats: tests/data/malformed/native_empty.jsonl: empty trace\n"});
  }
  return cases;
}

std::vector<Case> ScenarioAndModelCases() {
  const std::string sim = "kvbill simulate: " + kDir;
  return {
      {"simulate --scenario " + kDir + "scenario_truncated.json --out {OUT}",
       sim + "scenario_truncated.json:2:1: not valid JSON: syntax error while parsing object - "
             "unexpected end of input; expected '}'\n"},
      {"simulate --scenario " + kDir + "scenario_empty.json --out {OUT}",
       sim + "scenario_empty.json:1:1: not valid JSON: syntax error while parsing value - "
             "unexpected end of input; expected '[', '{', or a literal\n"},
      {"simulate --scenario " + kDir + "scenario_wrong_type.json --out {OUT}",
       sim + "scenario_wrong_type.json#/deployment/gpus_per_replica: must be a positive integer, "
             "got \"two\"\n"},
      {"simulate --scenario " + kDir + "scenario_negative.json --out {OUT}",
       sim + "scenario_negative.json#/deployment/replicas: must be a positive integer, got -1\n"},
      {"simulate --scenario " + kDir + "scenario_huge_count.json --out {OUT}",
       sim + "scenario_huge_count.json#/trace/tasks: must be at most 1000000, got 1e+20\n"},
      {"simulate --scenario " + kDir + "scenario_1e300.json --out {OUT}",
       sim + "scenario_1e300.json#/trace/tasks: must be at most 1000000, got 1e+300\n"},
      {"simulate --scenario " + kDir + "scenario_nan_string.json --out {OUT}",
       sim + "scenario_nan_string.json#/deployment/bandwidth_efficiency: must be a number in (0, "
             "1], got \"NaN\"\n"},
      {"simulate --scenario " + kDir + "scenario_infinity.json --out {OUT}",
       sim + "scenario_infinity.json:3:42: not valid JSON: number out of range: 1e999\n"},
      {"simulate --scenario " + kDir + "scenario_unknown_key.json --out {OUT}",
       sim + "scenario_unknown_key.json#/deployment/gpu_count: unknown key\n"},
      {"simulate --scenario " + kDir + "scenario_bad_trace.json --out {OUT}",
       sim + "native_negative.jsonl:2: task \"a\": turn 1: span 1: \"tokens\" must be a "
             "non-negative integer, got -5\n"},
      {"simulate --scenario " + kDir + "scenario_bad_model.json --out {OUT}",
       sim + "scenario_bad_model.json#/model: " + kDir +
           "config_wrong_type.json: num_hidden_layers: must be a positive integer, got "
           "\"thirty-two\"\n"},
      {"simulate --scenario " + kDir + "scenario_bad_model_huge.json --out {OUT}",
       sim + "scenario_bad_model_huge.json#/model: " + kDir +
           "config_huge.json: num_key_value_heads: must be a positive integer, got 1e+20\n"},
      {"simulate --scenario " + kDir + "scenario_bad_model_negative.json --out {OUT}",
       sim + "scenario_bad_model_negative.json#/model: " + kDir +
           "config_negative.json: num_key_value_heads: must be a positive integer, got -8\n"},
      {"simulate --trace " + kDir + "native_wrong_type.jsonl --out {OUT}",
       sim + "native_wrong_type.jsonl:3: task \"b\": turn 1: \"out\" must be a non-negative "
             "integer, got \"ten\"\n"},
      // Rows 0 and 1 arrive 1e300 ms = 1e297 s apart: beyond what double
      // seconds can time (at 1e16 s their spacing is already 2 s). The row
      // at fault is the second, line 2 (task "1": Mooncake tasks are named
      // by their 0-based row), not the scenario that names no trace.
      {"simulate --trace " + kDir + "mooncake_1e300.jsonl --out {OUT}",
       sim + "mooncake_1e300.jsonl:2: task \"1\": arrives 1e+297 s after task \"0\", beyond "
             "the 1e9 s (31.7 years) a simulation can time\n"},
      {"sweep --scenario " + kDir + "scenario_wrong_type.json -o {OUT}",
       "kvbill sweep: " + kDir +
           "scenario_wrong_type.json#/deployment/gpus_per_replica: must be a positive integer, got "
           "\"two\"\n"},
      {"report --scenario " + kDir + "scenario_unknown_key.json --out {OUT}",
       "kvbill report: " + kDir + "scenario_unknown_key.json#/deployment/gpu_count: unknown key\n"},
      {"compare --scenario " + kDir + "scenario_negative.json",
       "kvbill compare: " + kDir +
           "scenario_negative.json#/deployment/replicas: must be a positive integer, got -1\n"},
      {"check --scenario " + kDir + "scenario_nan_string.json",
       "kvbill check: " + kDir +
           "scenario_nan_string.json#/deployment/bandwidth_efficiency: must be a number in (0, 1], "
           "got \"NaN\"\n"},
      {"kv --model " + kDir + "config_wrong_type.json -o {OUT}",
       "kvbill kv: " + kDir +
           "config_wrong_type.json: num_hidden_layers: must be a positive integer, got "
           "\"thirty-two\"\n"},
      {"kv --model " + kDir + "config_huge.json -o {OUT}",
       "kvbill kv: " + kDir +
           "config_huge.json: num_key_value_heads: must be a positive integer, got 1e+20\n"},
      {"kv --model " + kDir + "config_infinity.json -o {OUT}",
       "kvbill kv: " + kDir +
           "config_infinity.json:8:17: not valid JSON: number out of range: 1e999\n"},
      {"kv --model " + kDir + "config_1e300.json -o {OUT}",
       "kvbill kv: " + kDir +
           "config_1e300.json: hidden_size: must be a positive integer, got 1e+300\n"},
      // Line 8 is `  "rope_theta": NaN`: the N is its 17th character.
      {"kv --model " + kDir + "config_nan.json -o {OUT}",
       "kvbill kv: " + kDir +
           "config_nan.json: num_key_value_heads: must be a positive integer, got NaN\n"},
      {"fit --model " + kDir + "config_negative.json --gpu h100-sxm --context 32k -o {OUT}",
       "kvbill fit: " + kDir +
           "config_negative.json: num_key_value_heads: must be a positive integer, got -8\n"},
      // A RoPE factor that is no number is refused, not read as 1 (the
      // limit 40,960 instead of 32,768 x 4).
      {"kv --model " + kDir + "config_rope_factor_string.json -o {OUT}",
       "kvbill kv: " + kDir +
           "config_rope_factor_string.json: rope_scaling.factor: must be a positive number, got "
           "\"4\"\n"},
      // A text_config that is no object is refused, not replaced by the class defaults.
      {"fit --model " + kDir +
           "config_text_config_string.json --gpu h100-sxm --context 32k "
           "-o {OUT}",
       "kvbill fit: " + kDir +
           "config_text_config_string.json: text_config: must be an object, got \"gemma\"\n"},
      {"plot memory --model " + kDir + "config_wrong_type.json -o {OUT}",
       "kvbill plot: " + kDir +
           "config_wrong_type.json: num_hidden_layers: must be a positive integer, got "
           "\"thirty-two\"\n"},
  };
}

std::vector<Case> BillAndMergeCases() {
  const std::string bill = "kvbill bill: " + kDir;
  const std::string log = "tests/data/bill/headless_two_runs.jsonl";
  const std::string sonnet = "#/claude-sonnet-4-20250514/";
  std::vector<Case> cases = {
      {"bill " + kDir + "claude_code_negative.jsonl -o {OUT}",
       bill + "claude_code_negative.jsonl:1: message.usage: \"input_tokens\" must be a "
              "non-negative integer, got -4\n"},
      {"bill " + kDir + "claude_code_truncated.jsonl -o {OUT}",
       bill + "claude_code_truncated.jsonl:2: truncated JSON\n"},
      {"bill " + kDir + "claude_code_wrong_type.jsonl -o {OUT}",
       bill + "claude_code_wrong_type.jsonl:1: message.usage: \"input_tokens\" must be a "
              "non-negative integer, got \"4\"\n"},
      {"bill " + kDir + "claude_code_bad_time.jsonl -o {OUT}",
       bill + "claude_code_bad_time.jsonl:1: bad timestamp \"yesterday\"\n"},
      {"bill " + kDir + "claude_code_huge_count.jsonl -o {OUT}",
       bill + "claude_code_huge_count.jsonl:1: message.usage: \"cache_read_input_tokens\" must be "
              "a non-negative integer, got 1e+300\n"},
      {"bill " + kDir + "codex_negative.jsonl -o {OUT}",
       bill + "codex_negative.jsonl:2: payload.info: last_token_usage: \"input_tokens\" must be a "
              "non-negative integer, got -100\n"},
      {"bill " + kDir + "binary_junk.bin -o {OUT}",
       bill + "binary_junk.bin:1: invalid JSON at column 1\n"},
      {"bill " + kDir + "native_empty.jsonl -o {OUT}",
       bill + "native_empty.jsonl: no usage found (no Claude Code assistant line with "
              "message.usage, no result line with total_cost_usd, no Codex token_count event)\n"},
      {"bill " + log + " --prices " + kDir + "prices_truncated.json -o {OUT}",
       bill + "prices_truncated.json: invalid JSON at line 4, column 25\n"},
      {"bill " + log + " --prices " + kDir + "prices_empty.json -o {OUT}",
       bill + "prices_empty.json: truncated JSON\n"},
      {"bill " + log + " --prices " + kDir + "prices_wrong_type.json -o {OUT}",
       bill + "prices_wrong_type.json" + sonnet +
           "input_cost_per_token: must be a number of dollars per token, got \"cheap\"\n"},
      {"bill " + log + " --prices " + kDir + "prices_nan_string.json -o {OUT}",
       bill + "prices_nan_string.json" + sonnet +
           "input_cost_per_token: must be a number of dollars per token, got \"NaN\"\n"},
      {"bill " + log + " --prices " + kDir + "prices_negative.json -o {OUT}",
       bill + "prices_negative.json" + sonnet +
           // As written, in $/token: -3e-06 (it showed the -3 $/Mtok it
           // converts to, beside a pointer to a $/token field).
           "input_cost_per_token: must be a non-negative number, got -3e-06\n"},
      {"bill " + log + " --prices " + kDir + "prices_1e300.json -o {OUT}",
       bill + "prices_1e300.json" + sonnet +
           "input_cost_per_token: is above $100,000,000 per Mtok ($100 per token)\n"},
      // 1e303 $/token is 1e309 $/Mtok, beyond a double (~1.8e308): above the
      // bound too, not "must be a non-negative number, got inf".
      {"bill " + log + " --prices " + kDir + "prices_1e303.json -o {OUT}",
       bill + "prices_1e303.json" + sonnet +
           "input_cost_per_token: is above $100,000,000 per Mtok ($100 per token)\n"},
      {"bill " + log + " --prices " + kDir + "prices_infinity.json -o {OUT}",
       bill + "prices_infinity.json: number out of range: 1e999\n"},
      {"bill " + log + " --prices " + kDir + "prices_huge_tier.json -o {OUT}",
       bill + "prices_huge_tier.json" + sonnet +
           "input_cost_per_token_above_99999999999999999999k_tokens: the tier's threshold is "
           "above 2^40 tokens\n"},
  };
  const std::string merge = "kvbill merge: " + kDir;
  for (const auto& [file, what] : std::vector<std::pair<std::string, std::string>>{
           // JSON errors say where, as a scenario's do (merge said only
           // "not the JSON output of kvbill sweep or kvbill plan"). The text
           // ends after "[" and its newline: line 2, column 1.
           {"shard_not_json.json",
            ":2:1: not valid JSON: syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal"},
           // The ']' after "}," is column 65 of line 2.
           {"shard_trailing_comma.json",
            ":2:65: not valid JSON: syntax error while parsing value - unexpected ']'; expected "
            "'[', '{', or a literal"},
           {"shard_repeated_key.json", "#/total_points: repeated key"},
           // `{"scenario": "s", "axes": ` is 26 characters, then 300 '[': the
           // k-th '[' is column 26 + k and opens level k + 1 (the object is
           // level 1), so level 257 is the 256th, column 282.
           {"shard_too_deep.json", ":1:282: not valid JSON: nested deeper than 256 levels"},
           {"shard_bad_index.json", "#/points/0/index: must be an integer in [0, 2), got \"zero\""},
           {"shard_negative_total.json", "#/total_points: must be a positive integer, got -3"},
           {"shard_missing_column.json", "#/points/0/summary/requests: missing"},
           {"shard_points_not_array.json", "#/points: must be an array, got {\"index\":0}"},
           // A string where a number belongs would sort and sum as nothing.
           {"shard_string_value.json",
            "#/points/0/summary/cost_usd: must be a number, got \"cheap\""},
           // Every column counts, costs or times something: none is negative.
           {"shard_negative_cost.json",
            "#/points/0/summary/cost_usd: must be a non-negative number, got -5"},
       }) {
    cases.push_back({"merge " + kDir + file + " -o {OUT}", merge + file + what + "\n"});
  }
  return cases;
}

// Runs one case: once with no output at {OUT}, once with a file already there.
void Check(const Case& c, const fs::path& dir) {
  SCOPED_TRACE("kvbill " + c.args);
  const fs::path out = dir / "out";
  const std::string args = Replace(c.args, "{OUT}", out.string());
  for (bool existing : {false, true}) {
    SCOPED_TRACE(existing ? "output exists" : "no output yet");
    fs::remove_all(out);
    if (existing) std::ofstream(out) << "previous\n";
    const CommandResult run = Kvbill(args);
    EXPECT_EQ(run.exit_status, 2);
    if (c.message.rfind("~", 0) == 0) {
      EXPECT_TRUE(std::regex_match(run.err, std::regex(c.message.substr(1)))) << run.err;
    } else {
      EXPECT_EQ(run.err, c.message);
    }
    EXPECT_EQ(run.out, "");
    if (existing) {
      EXPECT_EQ(Slurp(out), "previous\n");
      EXPECT_EQ(Listing(dir), std::vector<std::string>{"out"});
    } else {
      EXPECT_TRUE(Listing(dir).empty()) << Listing(dir).front();
    }
    if (c.args.find("{OUT}") == std::string::npos) break;
  }
}

TEST(MalformedCliTest, EveryTraceReaderExitsTwoNamingFileAndLine) {
  const fs::path dir = FreshDir("trace");
  for (const Case& c : TraceCases()) Check(c, dir);
  fs::remove_all(dir);
}

TEST(MalformedCliTest, ScenariosAndModelConfigsExitTwoNamingThePointer) {
  const fs::path dir = FreshDir("scenario");
  for (const Case& c : ScenarioAndModelCases()) Check(c, dir);
  fs::remove_all(dir);
}

TEST(MalformedCliTest, BillLogsPriceSheetsAndShardsExitTwoNamingWhere) {
  const fs::path dir = FreshDir("bill");
  for (const Case& c : BillAndMergeCases()) Check(c, dir);
  fs::remove_all(dir);
}

// A write that fails half way (the file-size limit is hit: with SIGXFSZ
// ignored, write() returns EFBIG) leaves nothing at the output path and no
// temporary file, for the streaming writer (trace gen) and for the commands
// that write a finished text (trace convert, simulate --out, report --out).
// An empty value (an unset shell variable) is an error in every command,
// never "the option was not given": --trace "" ran the scenario's own
// workload, -o "" printed to standard output, an empty log name read
// nothing.
TEST(MalformedCliTest, AnEmptyValueIsAnErrorNotAnAbsentOption) {
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"simulate --trace ''", "kvbill simulate: --trace: an empty value"},
           {"compare --trace ''", "kvbill compare: --trace: an empty value"},
           {"kv --model qwen3-8b -o ''", "kvbill kv: --out: an empty value"},
           {"bill ''", "kvbill bill: an empty argument"},
           {"trace stats ''", "kvbill trace stats: an empty argument"},
           {"plan --gpus ''", "kvbill plan: --gpus: an empty value"}}) {
    const auto r = testing::RunKvbill(args);
    EXPECT_EQ(r.exit_status, 2) << args;
    EXPECT_EQ(r.err, said + " (give one, or leave it out)\n") << args;
    EXPECT_EQ(r.out, "") << args;
  }
}

// What was taken without a word and is now refused, each with its reason:
// an abbreviated option (Boost guessed --form for --format, which a new
// option could turn ambiguous), a config key --set twice, a chart named
// for another image format, a native header with more than its version,
// a task naming itself as its parent, a scenario doc with no generated
// region (--check passed any file).
TEST(MalformedCliTest, GuessesOnceTakenSilentlyAreRefused) {
  const fs::path dir = FreshDir("guesses");
  std::ofstream(dir / "header.jsonl")
      << "{\"kvbill_trace\":1,\"created_by\":\"me\"}\n"
         "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":1}],\"out\":1}]}\n";
  std::ofstream(dir / "self.jsonl")
      << "{\"kvbill_trace\":1}\n"
         "{\"id\":\"a\",\"parent\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\","
         "\"tokens\":1}],\"out\":1}]}\n";
  std::ofstream(dir / "notes.md") << "# notes\n";
  const std::string d = dir.string();
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"kv --model qwen3-8b --form json",
            "kvbill kv: unrecognised option '--form'; did you mean --format?\n"
            "run `kvbill kv --help` for the options\n"},
           {"kv --model qwen3-8b --set num_hidden_layers=8 --set num_hidden_layers=4",
            "kvbill kv: --set: num_hidden_layers is set twice\n"},
           {"plot memory --model qwen3-8b -o " + d + "/chart.png",
            "kvbill plot: --out: " + d + "/chart.png: plot writes SVG; name the file .svg\n"},
           {"trace stats " + d + "/header.jsonl",
            "kvbill trace stats: " + d +
                "/header.jsonl:1: not a kvbill trace: the first line must be "
                "{\"kvbill_trace\":1}\n"},
           {"trace stats " + d + "/self.jsonl",
            "kvbill trace stats: " + d +
                "/self.jsonl:2: task \"a\": \"parent\" names the task itself (it is the task "
                "that started this one)\n"},
           {"scenario docs " + d + "/notes.md --check",
            "kvbill scenario docs: " + d +
                "/notes.md: no generated region (a line \"<!-- generated by `kvbill scenario "
                "docs`: NAME -->\"): not docs/scenario-format.md\n"}}) {
    const auto r = testing::RunKvbill(args);
    EXPECT_EQ(r.exit_status, 2) << args;
    EXPECT_EQ(r.err, said) << args;
    EXPECT_EQ(r.out, "") << args;
  }
  EXPECT_FALSE(fs::exists(dir / "chart.png"));
  fs::remove_all(dir);
}

TEST(MalformedCliTest, AWriteThatFailsHalfWayLeavesNoFile) {
  const fs::path dir = FreshDir("write_fails");
  const fs::path trace = dir / "in" / "big.jsonl";
  fs::create_directories(trace.parent_path());
  ASSERT_EQ(
      Kvbill("trace gen --preset coding-agent --tasks 100 -o '" + trace.string() + "'").exit_status,
      0);
  ASSERT_GT(fs::file_size(trace), 256u << 10);  // far above the 64 KiB limit below
  const fs::path out = dir / "out";
  const std::string limit = "trap '' XFSZ && ulimit -f 64 && ";  // 64 KiB
  const struct {
    std::string args;
    std::string message;
  } cases[] = {
      {"trace gen --preset coding-agent --tasks 2000 -o '" + out.string() + "'",
       "kvbill trace gen: " + out.string() + ": write failed\n"},
      {"trace convert '" + trace.string() + "' --to native -o '" + out.string() + "'",
       "kvbill trace convert: " + out.string() + ": write failed: File too large\n"},
      {"simulate --trace '" + trace.string() + "' --format csv --out '" + out.string() + "'",
       // simulate writes its rows to a temporary file as tasks finish
       // (docs/engine.md#memory): that file meets the limit first.
       "kvbill simulate: " + Spool::Directory() +
           ": temporary file: cannot write: File too large\n"},
      {"report --scenario tests/data/scenarios/small_sweep.json --jobs 1 --out '" + out.string() +
           "'",
       "kvbill report: " + (out / "report.html").string() + ": write failed: File too large\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    fs::remove_all(out);
    const CommandResult run = Kvbill(c.args, limit);
    EXPECT_EQ(run.exit_status, 2);
    EXPECT_EQ(run.err, c.message);
    // Nothing but the input; simulate and report create their directory,
    // which must hold no file.
    EXPECT_TRUE(!fs::exists(out) || fs::is_empty(out)) << Listing(out).front();
    const std::vector<std::string> expected =
        fs::exists(out) ? std::vector<std::string>{"in", "out"} : std::vector<std::string>{"in"};
    EXPECT_EQ(Listing(dir), expected);
  }
  fs::remove_all(dir);
}

// A 100 MB line (generated here, never committed): a native trace whose
// second line is `{"id":"a",}` followed by 100 MiB of junk, and the same size
// of binary junk without a newline. There is no line limit
// (docs/robustness.md#line-length): the reader holds the whole line, then the
// parser fails at the 11th byte. Memory is bounded by a small multiple of the
// line: each run must succeed within 1 GiB of address space.
TEST(MalformedCliTest, AHundredMegabyteLineFailsClearlyInBoundedMemory) {
  const fs::path dir = FreshDir("long_line");
  const fs::path trace = dir / "long.jsonl";
  {
    std::ofstream out(trace, std::ios::binary);
    out << "{\"kvbill_trace\":1}\n{\"id\":\"a\",}";
    const std::string chunk(1 << 20, 'x');
    for (int i = 0; i < 100; ++i) out << chunk;
    out << "\n";
  }
  // Sanitizer builds reserve terabytes of address space for shadow memory,
  // so the limit only applies to ordinary builds.
#if defined(__SANITIZE_ADDRESS__)
  const std::string limit;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  const std::string limit;
#else
  const std::string limit = "ulimit -v 1048576 && ";
#endif
#else
  const std::string limit = "ulimit -v 1048576 && ";
#endif
  const fs::path out = dir / "out.jsonl";
  const CommandResult run =
      Kvbill("trace convert '" + trace.string() + "' --to native -o '" + out.string() + "'", limit);
  EXPECT_EQ(run.exit_status, 2);
  // `{"id":"a",` is 10 bytes: the parser expects a key and finds '}' at 11.
  EXPECT_EQ(run.err, "kvbill trace convert: " + trace.string() + ":2: invalid JSON at column 11\n");
  EXPECT_FALSE(fs::exists(out));
  // The same line as binary junk without a newline, format detected.
  {
    std::ofstream junk(dir / "junk.bin", std::ios::binary);
    const std::string chunk(1 << 20, '\x01');
    for (int i = 0; i < 100; ++i) junk << chunk;
  }
  const CommandResult detect =
      Kvbill("trace stats '" + (dir / "junk.bin").string() + "' -o '" + out.string() + "'", limit);
  EXPECT_EQ(detect.exit_status, 2);
  EXPECT_EQ(detect.err, "kvbill trace stats: " + (dir / "junk.bin").string() +
                            ":1: unrecognised trace format (use "
                            "--from native|mooncake|dynamo|claude-code|codex|openai|tracelab|"
                            "tracelab-csv|azure)\n");
  EXPECT_FALSE(fs::exists(out));
  // A gzip file says it is compressed, with or without --from.
  {
    std::ofstream gz(dir / "t.jsonl.gz", std::ios::binary);
    gz << std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) << "junk";
  }
  for (const std::string from : {"", "--from native "}) {
    const CommandResult z =
        Kvbill("trace stats " + from + "'" + (dir / "t.jsonl.gz").string() + "'", limit);
    EXPECT_EQ(z.exit_status, 2) << from;
    EXPECT_EQ(z.err, "kvbill trace stats: " + (dir / "t.jsonl.gz").string() +
                         ": gzip-compressed; kvbill reads traces uncompressed (gunzip it first)\n")
        << from;
  }
  fs::remove_all(dir);
}

// A 2^40-token prompt (allowed) is past every model's max_model_len: the
// engine refuses it when its task arrives, before its 2^36 block hashes are
// built (at once, not after minutes and gigabytes), and says so.
TEST(MalformedCliTest, HugePromptIsRefusedOverTheModelsLimitAtOnce) {
  const auto r = Kvbill("simulate --format json --trace " + kDir + "native_huge_prompt.jsonl");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto s = nlohmann::json::parse(r.out)["summary"];
  EXPECT_EQ(s["rejected_requests"], 1);
  EXPECT_EQ(s["requests"], 0);
  EXPECT_EQ(s["warnings"][0]["code"], "context_limit");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
