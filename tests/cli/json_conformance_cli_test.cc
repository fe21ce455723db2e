// One JSON front door (src/util/json_input.h, docs/robustness.md#json-input):
// every reader of JSON the command line exposes gets the same hostile inputs
// and must answer them the same way.
//
// Each reader starts from a valid file that it accepts. From it the test
// makes four variants by inserting a member right after the first "{" of the
// file's last line holding one (for a JSONL file: a record; for a document:
// some object of it):
//   deep  "zz": 100,000 nested arrays  -> exit 2, one bounded line naming the
//         file and "nested deeper than 256 levels" (it was a segfault);
//   dup   "zz":1,"zz":2                -> exit 2, "repeated key" (model
//         configs excepted: Python's json keeps the last, so they accept it
//         and print what they print for the original);
//   nul   "zz":"a<NUL>b"               -> exit 2 naming the file (a raw
//         control character is not JSON); and the file followed by a NUL
//         byte and more -> exit 2 naming the file and the NUL byte;
//   bom   the original behind a UTF-8 byte order mark -> exactly the
//         original's exit status and output (decision: a BOM at the start of
//         a file is accepted by every reader).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::Slurp;

namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// `text` with `member` + "," inserted after the first '{' of its last line
// that holds one.
std::string Insert(const std::string& text, const std::string& member) {
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t begin = text.rfind('\n', end - 1);
    const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
    const std::size_t brace = text.find('{', from);
    if (brace != std::string::npos && brace < end) {
      return text.substr(0, brace + 1) + member + "," + text.substr(brace + 1);
    }
    if (begin == std::string::npos) break;
    end = begin;
  }
  ADD_FAILURE() << "no '{' in the fixture";
  return text;
}

struct Reader {
  std::string name;     // the file's name in the temporary directory
  std::string command;  // kvbill arguments; {FILE} is the file
  std::string fixture;  // the valid original (its text)
  bool duplicates_allowed = false;
};

std::string Fixture(const std::string& relative) {
  return Slurp(fs::path(KVBILL_SOURCE_DIR) / relative);
}

std::vector<Reader> Readers() {
  const std::string views = std::string(KVBILL_SOURCE_DIR) + "/tests/data/bill/views.jsonl";
  std::vector<Reader> readers = {
      {"native.jsonl", "trace stats --from native {FILE}",
       Fixture("tests/data/traces/native_small.jsonl")},
      {"mooncake.jsonl", "trace stats --from mooncake {FILE}",
       Fixture("tests/data/traces/mooncake_small.jsonl")},
      {"dynamo.jsonl", "trace stats --from dynamo {FILE}",
       Fixture("tests/data/traces/dynamo_small.jsonl")},
      {"claude.jsonl", "trace stats --from claude-code {FILE}",
       Fixture("tests/data/traces/claude_code_small.jsonl")},
      {"claude_array.json", "trace stats --from claude-code {FILE}",
       Fixture("tests/data/traces/claude_code_array.json")},
      {"codex.jsonl", "trace stats --from codex {FILE}",
       Fixture("tests/data/traces/codex_small.jsonl")},
      {"openai.jsonl", "trace stats --from openai {FILE}",
       Fixture("tests/data/traces/openai_small.jsonl")},
      {"tracelab.jsonl", "trace stats --from tracelab {FILE}",
       Fixture("tests/data/traces/tracelab_round_small.jsonl")},
      {"log.jsonl", "bill {FILE} --format json", Fixture("tests/data/bill/views.jsonl")},
      {"prices.json", "bill " + views + " --prices {FILE} --format json",
       "{\"kvbill_prices\": 1, \"as_of\": \"2026-07\", \"currency\": \"USD\",\n"
       " \"unit\": \"USD per million tokens\", \"source\": \"test\",\n"
       " \"models\": {\"claude-opus-4-6\": {\"provider\": \"anthropic\", \"input\": 5, "
       "\"output\": 25, \"cache_read\": 0.5, \"cache_write_5m\": 6.25, \"cache_write_1h\": "
       "10, \"source\": \"test\"}}}\n"},
      {"scenario.json", "simulate -s {FILE} --format csv",
       Fixture("tests/data/scenarios/tight_budget.json")},
      {"config.json", "kv --model {FILE} --format json",
       Fixture("tests/data/configs/gemma-2-9b.json"), /*duplicates_allowed=*/true},
      {"gpu.json", "fit --model qwen3-8b --gpu {FILE} --context 32k --format json",
       "{\"id\": \"my-gpu\", \"name\": \"test\", \"memory_gb\": 80, \"usable_memory_gib\": 79.6, "
       "\"hbm_bandwidth_tb_s\": 3.35, \"dense_tflops\": {\"bf16\": 989, \"fp8\": 1979}, "
       "\"usd_per_gpu_hour\": 2.95, \"architecture\": \"hopper\"}\n"},
  };
  return readers;
}

TEST(JsonConformanceCliTest, EveryReaderAnswersHostileJsonTheSameWay) {
  const fs::path dir =
      fs::temp_directory_path() / ("kvbill_json_conformance_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const Reader& reader : Readers()) {
    SCOPED_TRACE(reader.name);
    const fs::path file = dir / reader.name;
    auto run = [&](const std::string& text) {
      Write(file, text);
      std::string args = reader.command;
      args.replace(args.find("{FILE}"), 6, file.string());
      return testing::RunKvbill(args);
    };
    const auto original = run(reader.fixture);
    ASSERT_NE(original.exit_status, 2) << original.err;

    const auto too_deep = run(Insert(reader.fixture, "\"zz\":" + deep));
    EXPECT_EQ(too_deep.exit_status, 2);
    EXPECT_EQ(std::count(too_deep.err.begin(), too_deep.err.end(), '\n'), 1) << too_deep.err;
    EXPECT_NE(too_deep.err.find(reader.name), std::string::npos) << too_deep.err;
    EXPECT_NE(too_deep.err.find("nested deeper than 256 levels"), std::string::npos)
        << too_deep.err.substr(0, 300);
    EXPECT_LT(too_deep.err.size(), 400u);
    EXPECT_EQ(too_deep.out, "");

    const auto dup = run(Insert(reader.fixture, "\"zz\":1,\"zz\":2"));
    if (reader.duplicates_allowed) {
      EXPECT_EQ(dup.exit_status, original.exit_status) << dup.err;
      EXPECT_EQ(dup.out, original.out);
    } else {
      EXPECT_EQ(dup.exit_status, 2);
      EXPECT_NE(dup.err.find(reader.name), std::string::npos) << dup.err;
      EXPECT_NE(dup.err.find("repeated key"), std::string::npos) << dup.err;
      EXPECT_EQ(dup.out, "");
    }

    const auto nul = run(Insert(reader.fixture, std::string("\"zz\":\"a\0b\"", 10)));
    EXPECT_EQ(nul.exit_status, 2) << nul.err;
    EXPECT_NE(nul.err.find(reader.name), std::string::npos) << nul.err;
    EXPECT_EQ(nul.out, "");

    // A NUL byte after a complete document (or line) ended nlohmann's
    // input there: the rest was dropped and the file accepted.
    const auto trailing = run(reader.fixture + std::string("\0junk{{{", 8));
    EXPECT_EQ(trailing.exit_status, 2) << trailing.err;
    EXPECT_NE(trailing.err.find(reader.name), std::string::npos) << trailing.err;
    EXPECT_NE(trailing.err.find("a NUL byte"), std::string::npos) << trailing.err;
    EXPECT_EQ(trailing.out, "");

    const auto bom = run("\xEF\xBB\xBF" + reader.fixture);
    EXPECT_EQ(bom.exit_status, original.exit_status) << bom.err;
    EXPECT_EQ(bom.out, original.out);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
