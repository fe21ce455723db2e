// Inputs that used to be accepted without a word (issue 17's list): each is
// now an error that says what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "kvbill/trace/importers.h"
#include "kvbill/trace/reader.h"
#include "trace/timestamp.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(SilentAcceptanceTest, ImpossibleDatesAreErrors) {
  // November has 30 days: 2023-11-31 was silently December 1st.
  EXPECT_EQ(ParseTimestamp("2023-11-31T00:00:00Z").error().message(),
            "bad timestamp \"2023-11-31T00:00:00Z\"");
  EXPECT_TRUE(ParseTimestamp("2023-11-30T00:00:00Z").ok());
  // February: 29 days in years divisible by 4, except centuries not
  // divisible by 400 (2100 is not a leap year, 2000 was).
  EXPECT_TRUE(ParseTimestamp("2024-02-29T12:00:00Z").ok());
  EXPECT_FALSE(ParseTimestamp("2023-02-29T12:00:00Z").ok());
  EXPECT_FALSE(ParseTimestamp("2100-02-29T12:00:00Z").ok());
  EXPECT_TRUE(ParseTimestamp("2000-02-29T12:00:00Z").ok());
  EXPECT_FALSE(ParseTimestamp("2024-04-31T12:00:00Z").ok());
  EXPECT_TRUE(ParseTimestamp("2024-12-31T23:59:59Z").ok());
  // A long bad timestamp is quoted by its first 40 characters.
  EXPECT_EQ(ParseTimestamp(std::string(1000, '9')).error().message(),
            "bad timestamp \"" + std::string(40, '9') + "...\"");
}

TEST(SilentAcceptanceTest, RepeatedTaskIdsInANativeTraceAreAnError) {
  const std::string trace =
      "{\"kvbill_trace\":1}\n"
      "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":1}],\"out\":1}]}\n"
      "{\"id\":\"b\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":1}],\"out\":1}]}\n"
      "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":1}],\"out\":2}]}\n";
  auto reader = NewNativeReader(std::make_unique<std::istringstream>(trace), "t.jsonl");
  std::string error;
  const auto tasks = testing::ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(tasks.size(), 2u);
  EXPECT_EQ(error,
            "t.jsonl:4: task \"a\": repeated task id (first at t.jsonl:2; ids are unique within "
            "a trace)");
}

// Format detection reads the first line; when it opens an object but is
// not valid JSON, the error is the JSON fault at that line, as a reader
// given --from names it (until 2026-12: "unrecognised trace format").
// Column 71 of the trailing-comma line is its closing brace.
TEST(SilentAcceptanceTest, AFirstLineThatIsNotValidJsonIsNamedNotCalledUnknown) {
  const auto detect = [](const std::string& line) {
    auto format = DetectTraceFormat(line, "t.jsonl", 1);
    return format ? std::string("detected") : format.error().message();
  };
  EXPECT_EQ(detect(R"({"timestamp":0,"input_length":1000,"output_length":5,"hash_ids":[1,2],)"
                   R"("input_length":2000})"),
            "t.jsonl:1: repeated key at #/input_length");
  EXPECT_EQ(detect(R"({"timestamp": 0, "input_length": 40160, "output_le)"),
            "t.jsonl:1: truncated JSON");
  EXPECT_EQ(detect(R"({"timestamp":0,"input_length":1000,"output_length":5,"hash_ids":[1,2],})"),
            "t.jsonl:1: invalid JSON at column 71");
  // A compressed file (gzip's 1f 8b, zstd's 28 b5 2f fd magic) says so.
  EXPECT_EQ(detect(std::string("\x1f\x8b\x08\x00\x00\x00", 6)),
            "t.jsonl: gzip-compressed; kvbill reads traces uncompressed (gunzip it first)");
  EXPECT_EQ(detect(std::string("\x28\xb5\x2f\xfd\x00", 5)),
            "t.jsonl: zstd-compressed; kvbill reads traces uncompressed (unzstd it first)");
  // Valid JSON of no known format is still that.
  EXPECT_EQ(detect(R"({"prompt": "hello"})"),
            "t.jsonl:1: unrecognised trace format (use --from "
            "native|mooncake|dynamo|claude-code|codex|openai|tracelab|tracelab-csv|azure)");
}

// Every line format's fixture, rewritten by `edit` into `dir`, reads as the
// same trace as the fixture: the same tasks, turns and last outputs.
void ReadsAsTheSameTrace(const std::string& dir_name,
                         const std::function<std::string(const std::string&)>& edit) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / (dir_name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name :
       {"azure_small.csv", "tracelab_sim_small.csv", "mooncake_small.jsonl", "native_small.jsonl",
        "claude_code_small.jsonl", "codex_small.jsonl", "dynamo_small.jsonl", "openai_small.jsonl",
        "tracelab_round_small.jsonl"}) {
    SCOPED_TRACE(name);
    const std::string plain = testing::TraceFixture(name);
    std::ifstream in(plain, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::filesystem::path edited = dir / name;
    std::ofstream(edited, std::ios::binary) << edit(text.str());
    auto want = ReadTraceTasks(plain, std::nullopt);
    auto got = ReadTraceTasks(edited.string(), std::nullopt);
    ASSERT_TRUE(want.ok()) << want.error().message();
    ASSERT_TRUE(got.ok()) << got.error().message();
    ASSERT_EQ(got->size(), want->size());
    for (std::size_t i = 0; i < want->size(); ++i) {
      EXPECT_EQ((*got)[i].id, (*want)[i].id);
      ASSERT_EQ((*got)[i].turns.size(), (*want)[i].turns.size());
      EXPECT_EQ((*got)[i].turns.back().output, (*want)[i].turns.back().output);
    }
  }
  std::filesystem::remove_all(dir);
}

// A UTF-8 byte order mark at the start of a file (spreadsheet programs
// write one before CSV) reads as the same trace without it, in every line
// format: before, the Azure CSV's header line did not match and the other
// readers saw a damaged first line.
TEST(SilentAcceptanceTest, AByteOrderMarkReadsAsTheSameTrace) {
  ReadsAsTheSameTrace("kvbill_bom", [](const std::string& text) { return "\xEF\xBB\xBF" + text; });
}

// CRLF line ends (a file saved on Windows) read as the same trace in every
// line format: the Azure CSV's header once did not match ("expected the
// header TIMESTAMP,...", which was there).
TEST(SilentAcceptanceTest, CrlfLineEndsReadAsTheSameTrace) {
  ReadsAsTheSameTrace("kvbill_crlf", [](const std::string& text) {
    std::string crlf;
    for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    return crlf;
  });
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
