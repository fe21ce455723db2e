// The scanning fast paths of the hot readers (src/trace/json_scan.h) must
// give exactly what the nlohmann/json DOM path gives, or give up. These tests
// check that on plain lines, on hand-made corner cases, and on a few thousand
// seeded random mutations of real lines, with the DOM path as the oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kvbill/bill/usage_log.h"
#include "kvbill/trace/importers.h"
#include "trace/claude_line.h"
#include "trace/json_fields.h"
#include "trace/json_scan.h"
#include "trace/native_codec.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::TraceFixture;

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Up to three random edits (delete, insert, replace, repeat a piece) drawn
// from characters that matter to JSON.
std::string Mutate(const std::string& line, std::mt19937_64* rng) {
  static const std::string kChars = "\"\\{}[],:0-+.eE19 tnulfx/\t\x80\xbf\xc3\xed\xf4\xff";
  std::string out = line;
  const int edits = 1 + static_cast<int>((*rng)() % 3);
  for (int e = 0; e < edits && !out.empty(); ++e) {
    const std::size_t at = (*rng)() % out.size();
    const char c = kChars[(*rng)() % kChars.size()];
    switch ((*rng)() % 6) {
      case 0:
        out.erase(at, 1);
        break;
      case 1:
        out.insert(at, 1, c);
        break;
      case 2:
        out[at] = c;
        break;
      case 3:  // a digit for a digit, or a space anywhere: often still valid
        if (out[at] >= '0' && out[at] <= '9') {
          out[at] = static_cast<char>('0' + (*rng)() % 10);
        } else {
          out.insert(at, 1, ' ');
        }
        break;
      case 4:
        out.insert(at, 1, static_cast<char>('0' + (*rng)() % 10));
        break;
      default: {
        const std::size_t length = 1 + (*rng)() % 24;
        out.insert(at, out.substr(at, length));
        break;
      }
    }
  }
  return out;
}

// The DOM path of the native reader for one line.
Result<Task> DomDecode(const std::string& line) {
  auto json = ParseJsonObject(line);
  if (!json) return json.error();
  return DecodeTask(*json);
}

// A JSON array of `elements` that the readers can only read with the DOM
// path: its first element, ignored by every reader (an unknown "type"),
// holds a float that underflows to zero, which nlohmann accepts (as 0) and
// the scanner gives up on by design.
std::string DomOnlyArray(const std::string& elements) {
  return R"([{"type":"x","n":1e-400},)" + elements + "]";
}

void ExpectSameSigns(const Task& a, const Task& b) {
  EXPECT_EQ(std::signbit(a.arrival_s), std::signbit(b.arrival_s));
  for (std::size_t i = 0; i < a.turns.size() && i < b.turns.size(); ++i) {
    EXPECT_EQ(std::signbit(a.turns[i].tool_s), std::signbit(b.turns[i].tool_s));
    EXPECT_EQ(std::signbit(a.turns[i].time_s.value_or(0)),
              std::signbit(b.turns[i].time_s.value_or(0)));
  }
}

TEST(JsonFastPathTest, NativeFastPathTakesEveryPlainLine) {
  const auto lines = Lines(TraceFixture("native_small.jsonl"));
  ASSERT_GT(lines.size(), 2u);
  for (std::size_t i = 1; i < lines.size(); ++i) {  // line 1 is the header
    Task fast;
    ASSERT_TRUE(FastDecodeTask(lines[i], &fast)) << lines[i];
    auto dom = DomDecode(lines[i]);
    ASSERT_TRUE(dom.ok()) << dom.error().message();
    EXPECT_EQ(fast, *dom) << lines[i];
  }
}

TEST(JsonFastPathTest, NativeFastPathGivesUpOnWhatItDoesNotModel) {
  for (const std::string line : {
           R"({"id":"a","id":"b","turns":[{"out":1}]})",                // repeated key
           R"({"id":"\u0061","turns":[{"out":1}]})",                    // escape in a value
           R"({"i\u0064":"a","turns":[{"out":1}]})",                    // escape in a key
           R"({"id":"a","turns":[{"out":1}],"x":1})",                   // unknown key
           R"({"id":"a","turns":[{"out":-0}]})",                        // -0 is a count of 0
           R"({"id":"a","turns":[{"out":1.0}]})",                       // a float is not
           R"({"id":"a","turns":[{"out":1099511627777}]})",             // 2^40 + 1
           R"({"id":"a","turns":[{"out":1}]} x)",                       // trailing text
           "\xEF\xBB\xBF{\"id\":\"a\",\"turns\":[{\"out\":1}]}",        // byte order mark
           "{\"id\":\"\xC3\",\"turns\":[{\"out\":1}]}",                 // cut UTF-8
           R"({"id":"a","turns":[{"out":1,"out_placeholder":null}]})",  // null where rejected
           R"({"id":"a","turns":[{"out":1,"t":1e999}]})",               // overflow
       }) {
    Task task;
    EXPECT_FALSE(FastDecodeTask(line, &task)) << line;
  }
}

TEST(JsonFastPathTest, NativeFastPathReadsNumbersAsNlohmannDoes) {
  // nlohmann keeps -0 as the integer 0, so it reads as +0.0; "-0.0" is a
  // float and keeps its sign; 1e2 is the float 100; a tool wait of 2^64
  // overflows uint64 and is read as the double 18446744073709551616.
  const std::string line =
      R"({"id":"a","arrival_s":-0,"turns":[{"t":-0.0,"out":3,"tool_s":18446744073709551616},)"
      R"({"t":1e2,"out":0}]})";
  Task task;
  ASSERT_TRUE(FastDecodeTask(line, &task));
  EXPECT_EQ(task.arrival_s, 0.0);
  EXPECT_FALSE(std::signbit(task.arrival_s));
  EXPECT_TRUE(std::signbit(*task.turns[0].time_s));
  EXPECT_EQ(task.turns[0].tool_s, 18446744073709551616.0);
  EXPECT_EQ(*task.turns[1].time_s, 100.0);
  auto dom = DomDecode(line);
  ASSERT_TRUE(dom.ok());
  EXPECT_EQ(task, *dom);
  ExpectSameSigns(task, *dom);
}

TEST(JsonFastPathTest, ScannerValidatesStringsAsNlohmannDoes) {
  // Table 3-7 of the Unicode standard: E0 needs A0..BF next, ED 80..9F,
  // F4 80..8F; a high surrogate escape needs a low one after it.
  const std::vector<std::pair<std::string, bool>> cases = {
      {"\"\xE2\x82\xAC\"", true},     {"\"\xE0\x9F\xBF\"", false},
      {"\"\xED\xA0\x80\"", false},    {"\"\xF4\x90\x80\x80\"", false},
      {"\"\xF0\x9F\x98\x80\"", true}, {R"("\ud83d\ude00")", true},
      {R"("\ud83d")", false},         {R"("\ude00")", false},
      {R"("\u00e9\n\t\/")", true},    {R"("\x")", false},
      {"\"a\x01\"", false},           {"\"0123456789abcdef\x7f\"", true},
      {"\"0123456789abcdef\"", true}, {"\"0123456789abcde", false},
  };
  for (const auto& [text, valid] : cases) {
    JsonScanner scan(text);
    EXPECT_EQ(scan.Skip() && scan.AtEnd(), valid) << text;
    EXPECT_EQ(ParseJson(text).ok(), valid) << text;
  }
}

// Skipping validates as strictly as the JSON front door (ParseJson: nlohmann
// with repeated keys refused): never accepts what it rejects (a bad skipped
// value must not pass), and rejects what it accepts only where it gives up
// on purpose (a leading byte order mark, a float that underflows to zero, an
// escape in a key: those texts are not counted).
TEST(JsonFastPathTest, ScannerAcceptsWhatNlohmannAccepts) {
  std::vector<std::string> lines;
  for (const char* name : {"claude_code_small.jsonl", "native_small.jsonl", "mooncake_small.jsonl",
                           "codex_small.jsonl"}) {
    for (const std::string& line : Lines(TraceFixture(name))) lines.push_back(line);
  }
  // Found by this test: a float beyond a double's range inside a skipped value.
  lines.push_back(R"({"a":{"b":[1e650]}})");
  std::mt19937_64 rng(19);
  int disagree = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string text = Mutate(lines[static_cast<std::size_t>(i) % lines.size()], &rng);
    JsonScanner scan(text);
    const bool scanner = scan.Skip() && scan.AtEnd();
    const bool nlohmann = ParseJson(text).ok();
    if (scanner) {
      EXPECT_TRUE(nlohmann) << text;
    }
    if (scanner != nlohmann && text.find('\\') == std::string::npos) ++disagree;
  }
  EXPECT_LT(disagree, 20);
  JsonScanner overflow(R"({"a":{"b":[1e650]}})");
  EXPECT_FALSE(overflow.Skip());
}

TEST(JsonFastPathTest, NativeMutationsDecodeAsTheDomPathOrGiveUp) {
  auto lines = Lines(TraceFixture("native_small.jsonl"));
  lines.erase(lines.begin());  // the header
  // Every field of a turn, with spaces and unusual but valid numbers.
  lines.push_back(
      R"({ "id" : "cé", "parent" : null, "arrival_s" : 1.5e3, "turns" : [ { "t" : 0.25, )"
      R"("keep" : null, "spans" : [ ], "out" : 7, "out_placeholder" : true, "tool_s" : 0, )"
      R"("usage" : { "input" : 1, "cache_creation" : 2, "cache_read" : 3, "output" : 4 }, )"
      R"("block_size" : 16, "hashes" : [ 0, 18446744073709551615, 12 ] } ] } )");
  lines.push_back(
      R"({"id":"d","turns":[{"t":1,"spans":[{"kind":"tools","tokens":5,"id":null}],"out":0,)"
      R"("block_size":null},{"t":2,"keep":3,"spans":[{"kind":"other","tokens":9}],"out":1,)"
      R"("out_placeholder":false,"tool_s":-0.0,"usage":{"output":1,"input":2,"cache_read":0,)"
      R"("cache_creation":0}}]})");
  lines.push_back(
      R"({"id":"h","turns":[{"out":1,"usage":{"input":1,"cache_creation":9,"cache_read":0,)"
      R"("output":1,"cache_creation_1h":4}},{"out":1,"usage":{"cache_creation_1h":null,)"
      R"("input":1,"cache_creation":2,"cache_read":3,"output":1}}]})");
  std::mt19937_64 rng(7);
  int taken = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string line = Mutate(lines[static_cast<std::size_t>(i) % lines.size()], &rng);
    Task fast;
    if (!FastDecodeTask(line, &fast)) continue;
    ++taken;
    auto dom = DomDecode(line);
    ASSERT_TRUE(dom.ok()) << line << "\n" << dom.error().message();
    EXPECT_EQ(fast, *dom) << line;
    ExpectSameSigns(fast, *dom);
  }
  EXPECT_GT(taken, 300);  // the mutations do not all break the line
}

// A Mooncake row read by the reader (fast path first) against the row as
// nlohmann parses it, checked here field by field (docs/importers.md).
TEST(JsonFastPathTest, MooncakeMutationsReadAsNlohmannParsesThem) {
  auto lines = Lines(TraceFixture("mooncake_small.jsonl"));
  lines.push_back(R"({"hash_ids":[],"output_length":0,"timestamp":2.5e1,"input_length":0})");
  std::mt19937_64 rng(17);
  int taken = 0;
  for (int i = 0; i < 6000; ++i) {
    const std::string line = Mutate(lines[static_cast<std::size_t>(i) % lines.size()], &rng);
    auto reader = NewMooncakeReader(std::make_unique<std::istringstream>(line), "m.jsonl", {});
    std::string error;
    const auto tasks = ReadAllTasks(reader.get(), &error);
    const auto json = ParseJsonObject(line);
    const auto count = [&](const char* key) {
      return json && json->contains(key) &&
             ((*json)[key].is_number_unsigned() ||
              ((*json)[key].is_number_integer() && (*json)[key].get<std::int64_t>() >= 0));
    };
    bool valid = json && json->contains("timestamp") && (*json)["timestamp"].is_number() &&
                 (*json)["timestamp"].get<double>() >= 0 && count("input_length") &&
                 count("output_length") && json->contains("hash_ids") &&
                 (*json)["hash_ids"].is_array() && json->size() == 4;  // no other field
    if (valid && (*json)["input_length"].get<std::uint64_t>() > INT64_MAX) valid = false;
    // A request of no prompt tokens is no request (CheckServable).
    if (valid && (*json)["input_length"].get<std::uint64_t>() == 0) valid = false;
    if (valid && (*json)["output_length"].get<std::uint64_t>() > INT64_MAX) valid = false;
    if (valid) {
      for (const auto& h : (*json)["hash_ids"]) valid = valid && h.is_number_unsigned();
      // A hash for every full 512-token block of the input, and none past
      // its last, partial block.
      const std::uint64_t input = (*json)["input_length"].get<std::uint64_t>();
      valid = valid && (*json)["hash_ids"].size() >= input / 512 &&
              (*json)["hash_ids"].size() <= input / 512 + (input % 512 != 0 ? 1 : 0);
    }
    if (!valid) {
      EXPECT_NE(error, "") << line;
      continue;
    }
    ++taken;
    ASSERT_EQ(error, "") << line;
    ASSERT_EQ(tasks.size(), 1u) << line;
    const Turn& turn = tasks[0].turns.at(0);
    EXPECT_EQ(turn.spans.at(0).tokens, (*json)["input_length"].get<Tokens>()) << line;
    EXPECT_EQ(turn.output, (*json)["output_length"].get<Tokens>()) << line;
    EXPECT_EQ(*turn.time_s, (*json)["timestamp"].get<double>() / 1000) << line;
    EXPECT_EQ(tasks[0].arrival_s, *turn.time_s) << line;
    EXPECT_EQ(turn.blocks->hashes, (*json)["hash_ids"].get<std::vector<std::uint64_t>>()) << line;
  }
  EXPECT_GT(taken, 300);
}

// The Claude Code importer reads JSONL through the fast path and a JSON array
// of the same line objects through the DOM path only: both must agree.
TEST(JsonFastPathTest, DomOnlyArrayKeepsTheReadersOnTheDomPath) {
  std::vector<std::string_view> elements;
  EXPECT_FALSE(SplitJsonArray(DomOnlyArray("{}"), &elements));
  EXPECT_TRUE(ParseJson(DomOnlyArray("{}")).ok());
  EXPECT_TRUE(SplitJsonArray("[{}, 1]", &elements));
  EXPECT_EQ(elements, (std::vector<std::string_view>{"{}", "1"}));
}

TEST(JsonFastPathTest, ClaudeCodeLinesReadAsTheirJsonArray) {
  auto lines = Lines(TraceFixture("claude_code_small.jsonl"));
  // The 1-hour split, nested and direct.
  for (const std::string& line : Lines(TraceFixture("claude_code_1h.jsonl"))) {
    lines.push_back(line);
  }
  std::mt19937_64 rng(11);
  int compared = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string line = lines[static_cast<std::size_t>(i) % lines.size()];
    if (i >= static_cast<int>(lines.size())) line = Mutate(line, &rng);
    const auto object = ParseJsonObject(line);
    std::string jsonl_error;
    auto jsonl = NewClaudeCodeReader(std::make_unique<std::istringstream>(line), "m.jsonl", {});
    const auto from_jsonl = ReadAllTasks(jsonl.get(), &jsonl_error);
    if (!object) {
      EXPECT_NE(jsonl_error, "") << line;  // never accepted silently
      continue;
    }
    std::string array_error;
    auto array = NewClaudeCodeReader(std::make_unique<std::istringstream>(DomOnlyArray(line)),
                                     "m.jsonl", {});
    const auto from_array = ReadAllTasks(array.get(), &array_error);
    EXPECT_EQ(from_jsonl, from_array) << line;
    if (array_error.rfind("m.jsonl: element 2", 0) == 0) array_error.replace(7, 11, ":1");
    EXPECT_EQ(jsonl_error, array_error) << line;
    ++compared;
  }
  EXPECT_GT(compared, 300);
}

// The same for the bill's usage-log reader.
TEST(JsonFastPathTest, UsageLogLinesReadAsTheirJsonArray) {
  auto lines = Lines(TraceFixture("claude_code_small.jsonl"));
  // The 1-hour split and a request id without a message id.
  lines.push_back(
      R"({"type":"assistant","sessionId":"s","requestId":"r1","timestamp":"2025-08-07T03:32:45Z",)"
      R"("message":{"model":"m","usage":{"input_tokens":1,"cache_creation_input_tokens":9,)"
      R"("output_tokens":2,"cache_creation":{"ephemeral_1h_input_tokens":4}}}})");
  lines.push_back(R"({"type":"assistant","message":{"usage":{"input_tokens":1,"output_tokens":2,)"
                  R"("cache_creation_input_tokens":3,"ephemeral_1h_input_tokens":3}}})");
  // Fast mode, the 5-minute split, a working directory; a line without
  // "type" that recorded its cost (older Claude Code versions).
  lines.push_back(
      R"({"type":"assistant","cwd":"/w/p","sessionId":"s","message":{"id":"f","model":"m",)"
      R"("usage":{"input_tokens":1,"output_tokens":2,"speed":"fast","cache_creation_input_tokens":7,)"
      R"("cache_creation":{"ephemeral_5m_input_tokens":3,"ephemeral_1h_input_tokens":4}}}})");
  lines.push_back(R"({"timestamp":"2024-01-01T12:00:00Z","costUSD":0.25,"cwd":"/w/q",)"
                  R"("message":{"usage":{"input_tokens":100,"output_tokens":50}}})");
  lines.push_back(R"({"type":null,"cwd":"/w/r","message":{"id":"n","model":"m",)"
                  R"("usage":{"input_tokens":3,"output_tokens":4,"speed":null}}})");
  std::mt19937_64 rng(13);
  int compared = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string line = lines[static_cast<std::size_t>(i) % lines.size()];
    if (i >= static_cast<int>(lines.size())) line = Mutate(line, &rng);
    std::istringstream jsonl_in(line);
    UsageLog from_jsonl;
    const Status jsonl_status = ReadUsageLog(jsonl_in, "m.jsonl", &from_jsonl);
    if (!ParseJsonObject(line)) {
      EXPECT_FALSE(jsonl_status.ok()) << line;
      continue;
    }
    std::istringstream array_in(DomOnlyArray(line));
    UsageLog from_array;
    const Status array_status = ReadUsageLog(array_in, "m.jsonl", &from_array);
    ASSERT_EQ(jsonl_status.ok(), array_status.ok()) << line;
    if (!jsonl_status.ok()) {
      std::string array_error = array_status.error().message();
      if (array_error.rfind("m.jsonl: element 2", 0) == 0) array_error.replace(7, 11, ":1");
      EXPECT_EQ(jsonl_status.error().message(), array_error) << line;
      continue;
    }
    ASSERT_EQ(from_jsonl.calls.size(), from_array.calls.size()) << line;
    for (std::size_t k = 0; k < from_jsonl.calls.size(); ++k) {
      const LoggedCall& a = from_jsonl.calls[k];
      const LoggedCall& b = from_array.calls[k];
      EXPECT_EQ(a.session, b.session) << line;
      EXPECT_EQ(a.model, b.model) << line;
      EXPECT_EQ(a.time_ns, b.time_ns) << line;
      EXPECT_EQ(a.usage, b.usage) << line;
      EXPECT_EQ(a.fast, b.fast) << line;
      EXPECT_EQ(a.recorded_cost, b.recorded_cost) << line;
      const auto project = [](const UsageLog& log, const LoggedCall& c) {
        return c.project < 0 ? std::string("-") : log.projects[static_cast<std::size_t>(c.project)];
      };
      EXPECT_EQ(project(from_jsonl, a), project(from_array, b)) << line;
      EXPECT_EQ(a.where, "m.jsonl:1");
      if (a.key.rfind("line:", 0) == 0) {
        EXPECT_EQ(a.key, "line:m.jsonl:1");
      } else {
        EXPECT_EQ(a.key, b.key) << line;
      }
    }
    EXPECT_EQ(from_jsonl.runs.size(), from_array.runs.size()) << line;
    ++compared;
  }
  EXPECT_GT(compared, 300);
}

// The real transcripts in the shared data directory, saved as JSON arrays:
// read through the DOM path only (DomOnlyArray), through the fast path as
// they are, and with the same elements written one per line, they must give
// the same tasks and the same bill lines.
TEST(JsonFastPathTest, RealTranscriptsReadTheSameOnBothPaths) {
  const std::string dir = testing::SharedTrace("claude-code/raw");
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no shared data";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    std::ostringstream text;
    text << in.rdbuf();
    const auto array = ParseJson(text.str());
    ASSERT_TRUE(array.ok() && array->is_array());
    std::string jsonl, elements;
    for (const Json& element : *array) {
      jsonl += element.dump() + "\n";
      elements += (elements.empty() ? "" : ",") + element.dump();
    }
    const std::vector<std::string> inputs = {DomOnlyArray(elements), text.str(), jsonl};

    std::vector<std::vector<Task>> tasks;
    std::vector<UsageLog> logs;
    for (const std::string& input : inputs) {
      std::string error;
      auto reader = NewClaudeCodeReader(std::make_unique<std::istringstream>(input), "a", {});
      tasks.push_back(ReadAllTasks(reader.get(), &error));
      EXPECT_EQ(error, "");
      std::istringstream log_in(input);
      logs.emplace_back();
      ASSERT_TRUE(ReadUsageLog(log_in, "a", &logs.back()).ok());
    }
    EXPECT_FALSE(tasks[0].empty());
    EXPECT_FALSE(logs[0].calls.empty());
    for (std::size_t v = 1; v < inputs.size(); ++v) {
      EXPECT_EQ(tasks[0], tasks[v]) << entry.path() << " input " << v;
      ASSERT_EQ(logs[0].calls.size(), logs[v].calls.size());
      for (std::size_t k = 0; k < logs[0].calls.size(); ++k) {
        EXPECT_EQ(logs[0].calls[k].key, logs[v].calls[k].key);
        EXPECT_EQ(logs[0].calls[k].model, logs[v].calls[k].model);
        EXPECT_EQ(logs[0].calls[k].session, logs[v].calls[k].session);
        EXPECT_EQ(logs[0].calls[k].time_ns, logs[v].calls[k].time_ns);
        EXPECT_EQ(logs[0].calls[k].usage, logs[v].calls[k].usage);
      }
    }
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
