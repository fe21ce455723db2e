// End-to-end runs of `kvbill trace` on the fixtures in tests/data/traces/.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_test_util.h"

namespace KVBILL_TEST_FILE_ID {
namespace {

using kvbill::testing::Slurp;

using CommandResult = kvbill::testing::RunResult;

// Runs `kvbill ARGS` from the source root, so fixture paths are relative.
CommandResult Kvbill(const std::string& args) {
  return kvbill::testing::RunKvbillInSourceDir(args);
}

TEST(TraceCliTest, StatsJsonHasTheDocumentedFields) {
  const CommandResult run =
      Kvbill("trace stats tests/data/traces/native_small.jsonl --format json");
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["tasks"], 2);
  EXPECT_EQ(json["requests"], 4);
  // Worked in tests/trace/stats_test.cc.
  EXPECT_EQ(
      json["input_tokens"],
      nlohmann::json::parse(
          R"({"mean":1325,"p50":1200,"p90":1600,"p99":1600,"max":1600,"sum":5300,"count":4})"));
  EXPECT_EQ(json["output_tokens"]["mean"], 45);
  EXPECT_EQ(json["gap_s"]["mean"], 1.75);
  for (const char* key : {"turns_per_task", "appended_tokens", "context_growth_tokens"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  // Single-turn tasks (a Mooncake trace) have no gap and no context growth:
  // null statistics and a count of 0, "none" in the table, not zeros.
  const CommandResult single =
      Kvbill("trace stats tests/data/traces/mooncake_small.jsonl --format json");
  ASSERT_EQ(single.exit_status, 0) << single.err;
  const auto one = nlohmann::json::parse(single.out);
  for (const char* key : {"gap_s", "context_growth_tokens"}) {
    EXPECT_EQ(one[key]["count"], 0) << key;
    EXPECT_TRUE(one[key]["mean"].is_null()) << key;
    EXPECT_TRUE(one[key]["p90"].is_null()) << key;
    EXPECT_EQ(one[key]["sum"], 0) << key;
  }
  const CommandResult table = Kvbill("trace stats tests/data/traces/mooncake_small.jsonl");
  EXPECT_NE(table.out.find("gap s                             none          none"),
            std::string::npos)
      << table.out;
}

// A Claude Code log of user lines only holds no call: no tasks, an error
// (as simulate gives it), and convert writes nothing.
TEST(TraceCliTest, AFileWithNoCallsIsAnError) {
  const std::string file = ::testing::TempDir() + "/user_only.jsonl";
  std::ofstream(file)
      << R"({"type":"user","sessionId":"s1","timestamp":"2026-01-12T07:40:28.613Z",)"
      << R"("message":{"role":"user","content":"hi"}})"
      << "\n";
  const CommandResult stats = Kvbill("trace stats " + file);
  EXPECT_EQ(stats.exit_status, 2);
  EXPECT_EQ(stats.err, "kvbill trace stats: " + file +
                           ": no tasks (nothing in it the reader turns into a request)\n");
  const std::string out = ::testing::TempDir() + "/user_only.native.jsonl";
  std::filesystem::remove(out);
  const CommandResult convert = Kvbill("trace convert " + file + " --to native -o " + out);
  EXPECT_EQ(convert.exit_status, 2);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A wrong --from that finds nothing (the Codex reader skips a Claude Code
// log's lines) said only "no tasks": it now says what detection reads the
// file as. Under the --from detection would pick, nothing is added.
TEST(TraceCliTest, NoTasksUnderAWrongFromNamesTheDetectedFormat) {
  const std::string claude = "tests/data/traces/claude_code_small.jsonl";
  const CommandResult stats = Kvbill("trace stats " + claude + " --from codex");
  EXPECT_EQ(stats.exit_status, 2);
  EXPECT_EQ(stats.err, "kvbill trace stats: " + claude +
                           ": no tasks (nothing in it the reader turns into a request); detection "
                           "reads it as claude-code, not codex (try --from claude-code, or leave "
                           "--from out)\n");
  const std::string mooncake = "tests/data/traces/mooncake_small.jsonl";
  const CommandResult convert =
      Kvbill("trace convert " + mooncake + " --from claude-code --to native -o -");
  EXPECT_EQ(convert.exit_status, 2);
  EXPECT_EQ(convert.out, "");
  EXPECT_EQ(convert.err, "kvbill trace convert: " + mooncake +
                             ": no tasks (nothing in it the reader turns into a request); "
                             "detection reads it as mooncake, not claude-code (try --from "
                             "mooncake, or leave --from out)\n");
  const std::string file = ::testing::TempDir() + "/user_only_from.jsonl";
  std::ofstream(file)
      << R"({"type":"user","sessionId":"s1","timestamp":"2026-01-12T07:40:28.613Z",)"
      << R"("message":{"role":"user","content":"hi"}})"
      << "\n";
  EXPECT_EQ(Kvbill("trace stats " + file + " --from claude-code").err,
            "kvbill trace stats: " + file +
                ": no tasks (nothing in it the reader turns into a request)\n");
}

// The cache-write split is checked as `kvbill bill` checks it: 38,085 5-minute
// + 0 1-hour writes against a total of 38,086 is an error in both.
TEST(TraceCliTest, ClaudeUsageIsCheckedAsBillChecksIt) {
  const std::string file = ::testing::TempDir() + "/split_mismatch.jsonl";
  std::ofstream(file)
      << R"({"type": "assistant", "sessionId": "s", "timestamp": "2026-01-12T07:40:28.613Z",)"
      << R"( "message": {"id": "msg_1", "model": "claude-opus-4-5-20251101", "role": "assistant",)"
      << R"( "usage": {"input_tokens": 9, "cache_creation_input_tokens": 38086,)"
      << R"( "cache_read_input_tokens": 0, "output_tokens": 396, "cache_creation":)"
      << R"( {"ephemeral_5m_input_tokens": 38085, "ephemeral_1h_input_tokens": 0}}}})"
      << "\n";
  const std::string why =
      "cache_creation: ephemeral_5m_input_tokens 38085 + ephemeral_1h_input_tokens 0 differ "
      "from \"cache_creation_input_tokens\" 38086\n";
  const CommandResult stats = Kvbill("trace stats " + file);
  EXPECT_EQ(stats.exit_status, 2);
  EXPECT_EQ(stats.err, "kvbill trace stats: " + file + ":1: usage: " + why);
  const CommandResult bill = Kvbill("bill " + file);
  EXPECT_EQ(bill.exit_status, 2);
  EXPECT_TRUE(bill.err.ends_with(why)) << bill.err;
}

TEST(TraceCliTest, StatsTableShowsCounts) {
  const CommandResult run = Kvbill("trace stats tests/data/traces/mooncake_small.jsonl");
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_NE(run.out.find("requests   4\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("block reuse share          9.1%"), std::string::npos) << run.out;
}

// A prompt of 2^40 tokens (the largest count read) printed as
// "1,099,511,627,776.001,099,511,627,776": the columns ran together. Each
// column is now two spaces wider than its widest cell (at least 14).
TEST(TraceCliTest, StatsTableColumnsNeverRunTogether) {
  const std::string file = ::testing::TempDir() + "/huge_prompt.jsonl";
  std::ofstream(file)
      << R"({"kvbill_trace": 1})"
      << "\n"
      << R"({"id": "a", "turns": [{"spans": [{"kind": "user", "tokens": 1099511627776}], "out": 10}]})"
      << "\n";
  const CommandResult run = Kvbill("trace stats " + file);
  ASSERT_EQ(run.exit_status, 0) << run.err;
  // mean "1,099,511,627,776.00" is 20 characters: a 22-wide column; the
  // others "1,099,511,627,776", 17: 19 wide. The name column stays 24.
  const std::string big = "  1,099,511,627,776";
  EXPECT_NE(run.out.find("per request                               mean                p50"
                         "                p90                p99                max"
                         "                sum\n"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("prompt tokens             1,099,511,627,776.00" + big + big + big + big +
                         big + "\n"),
            std::string::npos)
      << run.out;
  // A small row keeps its cells right-aligned in the widened columns.
  EXPECT_NE(run.out.find("output tokens                            10.00" + std::string(17, ' ') +
                         "10" + std::string(17, ' ') + "10"),
            std::string::npos)
      << run.out;
}

TEST(TraceCliTest, BadInputGivesFileLineMessageAndExit2) {
  CommandResult run = Kvbill("trace stats tests/data/traces/mooncake_negative.jsonl");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "kvbill trace stats: tests/data/traces/mooncake_negative.jsonl:2: \"input_length\" "
            "must be a non-negative integer, got -5\n");

  run = Kvbill("trace stats tests/data/traces/unknown_format.jsonl");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "kvbill trace stats: tests/data/traces/unknown_format.jsonl:1: unrecognised trace "
            "format (use --from "
            "native|mooncake|dynamo|claude-code|codex|openai|tracelab|tracelab-csv|azure)\n");

  run = Kvbill("trace stats tests/data/traces/mooncake_small.jsonl --from csv");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "kvbill trace stats: --from: unknown trace format \"csv\" (one of "
            "native|mooncake|dynamo|claude-code|codex|openai|tracelab|tracelab-csv|azure)\n");
}

// A Dynamo trace whose first row has no session was read as Mooncake and
// its session's two rows counted as two tasks (exit 0): now exit 2, nothing
// on stdout, and the message says to read it as Dynamo (which gives 2 tasks).
TEST(TraceCliTest, ADynamoTraceDetectedAsMooncakeIsAnErrorNamingTheFix) {
  const std::string file = ::testing::TempDir() + "/mixdet.jsonl";
  std::ofstream(file)
      << R"({"timestamp":0,"input_length":1000,"output_length":10,"hash_ids":[1,2]})"
      << "\n"
      << R"({"session_id":"s","timestamp":100,"input_length":1000,"output_length":10,)"
      << R"("hash_ids":[3,4]})"
      << "\n"
      << R"({"session_id":"s","timestamp":200,"input_length":1600,"output_length":10,)"
      << R"("hash_ids":[3,4,5,6],"delay":5})"
      << "\n";
  CommandResult run = Kvbill("trace stats " + file);
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "kvbill trace stats: " + file +
                         ":2: \"session_id\" is a Dynamo field, not a Mooncake one: this looks "
                         "like a Dynamo trace (use --from dynamo)\n");
  run = Kvbill("trace stats " + file + " --from dynamo --format json");
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["tasks"], 2);
}

TEST(TraceCliTest, SkipBadCountsAndReportsBadLines) {
  const CommandResult run =
      Kvbill("trace stats tests/data/traces/mooncake_negative.jsonl --skip-bad");
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_NE(run.out.find("requests   2\n"), std::string::npos) << run.out;
  EXPECT_EQ(run.err,
            "kvbill trace stats: skipped 1 bad line\n"
            "  tests/data/traces/mooncake_negative.jsonl:2: \"input_length\" must be a "
            "non-negative integer, got -5\n");
}

TEST(TraceCliTest, ConvertWritesNativeThatReadsBackToTheSameStats) {
  const std::string out = ::testing::TempDir() + "trace_cli_converted.jsonl";
  std::filesystem::remove(out);
  CommandResult run = Kvbill(
      "trace convert tests/data/traces/claude_code_small.jsonl --to native -o '" + out + "'");
  ASSERT_EQ(run.exit_status, 0) << run.err;
  EXPECT_EQ(Slurp(out).substr(0, 19), "{\"kvbill_trace\":1}\n");
  const CommandResult original =
      Kvbill("trace stats tests/data/traces/claude_code_small.jsonl --format json");
  const CommandResult converted = Kvbill("trace stats '" + out + "' --format json");
  ASSERT_EQ(converted.exit_status, 0) << converted.err;
  EXPECT_EQ(converted.out, original.out);
  std::filesystem::remove(out);
}

TEST(TraceCliTest, ConvertLeavesNoOutputFileOnBadInput) {
  const std::string out = ::testing::TempDir() + "trace_cli_partial.jsonl";
  std::filesystem::remove(out);
  const CommandResult run = Kvbill(
      "trace convert tests/data/traces/mooncake_truncated.jsonl --to native -o '" + out + "'");
  EXPECT_EQ(run.exit_status, 2);
  EXPECT_EQ(run.err,
            "kvbill trace convert: tests/data/traces/mooncake_truncated.jsonl:2: truncated JSON\n");
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
