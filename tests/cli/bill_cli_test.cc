// End-to-end runs of `kvbill bill`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;
namespace fs = std::filesystem;

const std::string kExcerpt =
    std::string(KVBILL_SOURCE_DIR) + "/tests/data/bill/headless_two_runs.jsonl";

fs::path TempDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("kvbill_bill_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(BillCliTest, JsonOfTheTwoRunExcerpt) {
  const auto r = RunKvbill("bill " + kExcerpt + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sessions"].size(), 2u);
  const auto& run00 = j["sessions"][0];
  EXPECT_EQ(run00["id"], "run-00");
  EXPECT_EQ(run00["calls"], 4);
  // Opus 4.5 calls: 1 x 5 + 19,686 x 6.25 + 92,986 x 0.5 + 1,004 x 25 = 194,635.5 micro-dollars.
  EXPECT_DOUBLE_EQ(run00["cost_usd"].get<double>(), 0.1946355);
  EXPECT_DOUBLE_EQ(run00["reported_cost_usd"].get<double>(), 0.35941625);
  // modelUsage: Opus 339,799.25 + Haiku 19,617 (2 x 1 + 190 x 5 + 14,932 x 1.25) = 359,416.25.
  EXPECT_DOUBLE_EQ(run00["reported_usage_cost_usd"].get<double>(), 0.35941625);
  EXPECT_DOUBLE_EQ(
      run00["by_model"]["claude-haiku-4-5-20251001"]["reported_usage_cost_usd"].get<double>(),
      0.019617);
  EXPECT_EQ(run00["by_model"]["claude-haiku-4-5-20251001"]["calls"], 0);
  // Calls of both runs: 194,635.5 + 55,001.4 = 249,636.9 micro-dollars.
  EXPECT_DOUBLE_EQ(j["total_cost_usd"].get<double>(), 0.2496369);
  // Reported: 0.35941625 + 0.0718863.
  EXPECT_NEAR(j["reported_cost_usd"].get<double>(), 0.43130255, 1e-15);
  EXPECT_EQ(j["calls"], 6);
  EXPECT_EQ(j["unpriced_calls"], 0);
}

// Calls whose kept copy records only a streaming placeholder output are
// counted and warned of: s1's m1 keeps its 200-token copy, m2 (3 tokens)
// and m3 (10) are placeholders, m4 (11) is not: 2 of 4 calls.
TEST(BillCliTest, PlaceholderOutputsAreWarnedOf) {
  const fs::path dir = TempDir("placeholder");
  {
    std::ofstream out(dir / "log.jsonl");
    int minute = 0;
    for (const auto& [id, output] : std::vector<std::pair<std::string, int>>{
             {"m1", 2}, {"m1", 200}, {"m2", 3}, {"m3", 10}, {"m4", 11}}) {
      out << R"({"type":"assistant","sessionId":"s1","timestamp":"2025-12-12T15:2)" << minute++
          << R"(:00Z","message":{"id":")" << id
          << R"(","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":10,)"
          << R"("output_tokens":)" << output << "}}}\n";
    }
  }
  const std::string message =
      "2 of 4 calls kept only a streaming placeholder output (10 tokens or fewer: Claude Code "
      "logged no final count for them); their output tokens and cost are understated";
  const auto json = RunKvbill("bill " + (dir / "log.jsonl").string() + " --format json");
  ASSERT_EQ(json.exit_status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["calls"], 4);
  EXPECT_EQ(j["placeholder_output_calls"], 2);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["code"], "placeholder_outputs");
  EXPECT_EQ(j["warnings"][0]["message"], message);
  const auto table = RunKvbill("bill " + (dir / "log.jsonl").string());
  ASSERT_EQ(table.exit_status, 0) << table.err;
  EXPECT_NE(table.out.find("warning [placeholder_outputs]: " + message), std::string::npos)
      << table.out;
  // CSV holds rows only: the warning goes to standard error.
  const auto csv = RunKvbill("bill " + (dir / "log.jsonl").string() + " --format csv");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  EXPECT_EQ(csv.out.find("placeholder"), std::string::npos) << csv.out;
  EXPECT_NE(csv.err.find("kvbill bill: warning [placeholder_outputs]: " + message),
            std::string::npos)
      << csv.err;
  fs::remove_all(dir);
}

// A prompt above the model's window: Claude Opus 4.5's is 200,000 tokens in
// the sheet; 100 + 300,000 read = 300,100 is above it, 100 + 150,000 is not.
// The call is billed as recorded and the bill warns context_limit.
TEST(BillCliTest, PromptsAboveTheModelsWindowAreWarnedOf) {
  const fs::path dir = TempDir("over_window");
  {
    std::ofstream out(dir / "log.jsonl");
    int minute = 0;
    for (const auto& [id, read] :
         std::vector<std::pair<std::string, int>>{{"m1", 150000}, {"m2", 300000}}) {
      out << R"({"type":"assistant","sessionId":"s1","timestamp":"2025-12-12T15:2)" << minute++
          << R"(:00Z","message":{"id":")" << id
          << R"(","model":"claude-opus-4-5","usage":{"input_tokens":100,)"
          << R"("cache_read_input_tokens":)" << read << R"(,"output_tokens":50}}})"
          << "\n";
    }
  }
  const auto json = RunKvbill("bill " + (dir / "log.jsonl").string() + " --format json");
  ASSERT_EQ(json.exit_status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["warnings"].size(), 1u) << json.out;
  EXPECT_EQ(j["warnings"][0]["code"], "context_limit");
  EXPECT_EQ(j["warnings"][0]["message"].get<std::string>().rfind(
                "1 call sent a prompt above the model's context window in the price sheet (the "
                "largest 300,100 tokens to claude-opus-4-5, whose window is 200,000 tokens)",
                0),
            0u)
      << j["warnings"][0]["message"];
  // Both calls are billed: 200 input x $5 + 450,000 read x $0.50 + 100
  // output x $25 per Mtok = $0.001 + $0.225 + $0.0025 = $0.2285.
  EXPECT_NEAR(j["total_cost_usd"].get<double>(), 0.2285, 1e-12) << json.out;
  fs::remove_all(dir);
}

// GPT-5.6 bills cache writes (1.25x input), which a Codex rollout does not
// report: two calls, 10,000 uncached input tokens and then 2,016 (12,000 -
// 9,984 cached), both past 1,024, are billed as uncached input, and the
// bill says so (12,016 tokens).
TEST(BillCliTest, UnreportedCacheWritesOfAWriteFeeModelAreWarnedOf) {
  const fs::path dir = TempDir("codex56");
  {
    std::ofstream out(dir / "rollout.jsonl");
    out << R"({"timestamp":"2026-02-01T10:00:00.000Z","type":"session_meta","payload":)"
           R"({"id":"cx1","cwd":"/p"}})"
           "\n"
           R"({"timestamp":"2026-02-01T10:00:00.500Z","type":"turn_context","payload":)"
           R"({"model":"gpt-5.6"}})"
           "\n";
    for (const auto& [time, input, cached, output, total_in, total_cached, total_out] :
         std::vector<std::tuple<const char*, int, int, int, int, int, int>>{
             {"05", 10000, 0, 500, 10000, 0, 500}, {"15", 12000, 9984, 300, 22000, 9984, 800}}) {
      out << R"({"timestamp":"2026-02-01T10:00:)" << time
          << R"(.000Z","type":"event_msg","payload":{"type":"token_count","info":)"
          << R"({"total_token_usage":{"input_tokens":)" << total_in << R"(,"cached_input_tokens":)"
          << total_cached << R"(,"output_tokens":)" << total_out
          << R"(},"last_token_usage":{"input_tokens":)" << input << R"(,"cached_input_tokens":)"
          << cached << R"(,"output_tokens":)" << output << "}}}}\n";
    }
  }
  const auto json = RunKvbill("bill " + (dir / "rollout.jsonl").string() + " --format json");
  ASSERT_EQ(json.exit_status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["warnings"].size(), 1u) << json.out;
  EXPECT_EQ(j["warnings"][0]["code"], "cache_writes_unreported");
  EXPECT_EQ(j["warnings"][0]["message"].get<std::string>().rfind(
                "2 call(s) of a model that bills cache writes (GPT-5.6: 1.25x the input rate) "
                "report none (a Codex rollout logs only cached input), though 12,016 uncached",
                0),
            0u)
      << j["warnings"][0]["message"];
  fs::remove_all(dir);
}

// A window with no call is said, not shown as a bill of $0 alone; a model
// row of which only some calls are priced at an assumed model says how
// many (the whole row was marked "(assumed)").
TEST(BillCliTest, AnEmptyWindowAndPartlyAssumedRowsAreSaid) {
  const fs::path dir = TempDir("empty_window");
  {
    std::ofstream out(dir / "log.jsonl");
    out << R"({"type":"assistant","sessionId":"s1","timestamp":"2025-12-12T15:20:00Z",)"
        << R"("message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":100,)"
        << R"("output_tokens":50}}})"
        << "\n";
  }
  const auto r = RunKvbill("bill " + (dir / "log.jsonl").string() + " --since 2030-01-01");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("\nno call falls in the window (--since / --until): the logs' 1 call "
                       "line(s) lie outside it\n"),
            std::string::npos)
      << r.out;
  const auto in = RunKvbill("bill " + (dir / "log.jsonl").string());
  EXPECT_EQ(in.out.find("no call falls in the window"), std::string::npos) << in.out;
  {
    // Codex: one session naming gpt-5, then one naming none (assumed gpt-5).
    std::ofstream out(dir / "rollout.jsonl");
    const auto count = [&](const char* time, int total_in, int in_tokens) {
      out << R"({"timestamp":"2026-02-01T10:00:)" << time
          << R"(.000Z","type":"event_msg","payload":{"type":"token_count","info":)"
          << R"({"total_token_usage":{"input_tokens":)" << total_in
          << R"(,"cached_input_tokens":0,"output_tokens":10},"last_token_usage":)"
          << R"({"input_tokens":)" << in_tokens
          << R"(,"cached_input_tokens":0,"output_tokens":10}}}})"
          << "\n";
    };
    out << R"({"timestamp":"2026-02-01T10:00:00.000Z","type":"session_meta","payload":)"
        << R"({"id":"a","cwd":"/p"}})"
        << "\n"
        << R"({"timestamp":"2026-02-01T10:00:00.500Z","type":"turn_context","payload":)"
        << R"({"model":"gpt-5"}})"
        << "\n";
    count("05", 100, 100);
    count("06", 300, 200);
    out << R"({"timestamp":"2026-02-01T10:00:10.000Z","type":"session_meta","payload":)"
        << R"({"id":"b","cwd":"/p"}})"
        << "\n";
    count("15", 50, 50);
  }
  const auto by_model = RunKvbill("bill " + (dir / "rollout.jsonl").string() + " --by model");
  ASSERT_EQ(by_model.exit_status, 0) << by_model.err;
  EXPECT_NE(by_model.out.find("gpt-5 (1 of 3 assumed)"), std::string::npos) << by_model.out;
  fs::remove_all(dir);
}

// The table's "cache write" column sums both lifetimes; a note says how
// many were 1-hour writes: tests/data/traces/claude_code_1h.jsonl's calls
// write 10,000 (msg_h1) and 36,000 (msg_h3) tokens for an hour, 46,000.
TEST(BillCliTest, OneHourWritesInTheTableAreCounted) {
  const auto r = RunKvbill("bill tests/data/traces/claude_code_1h.jsonl");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("\ncache write: 5-minute and 1-hour writes together; 46,000 of them "
                       "1-hour writes"),
            std::string::npos)
      << r.out;
}

// Result lines report what the provider billed; logged calls that come to
// much less say the transcript misses calls: one Sonnet 4.5 call of 1,000
// input and 100 output tokens (1,000 x 3 + 100 x 15 = 4,500 micro-dollars)
// against a reported $0.01: 45.0%.
TEST(BillCliTest, LoggedCallsShortOfTheReportedCostAreSaid) {
  const fs::path dir = TempDir("short_of_reported");
  std::ofstream(dir / "log.jsonl")
      << R"({"type":"assistant","sessionId":"s","timestamp":"2026-01-01T10:00:00Z",)"
      << R"("message":{"id":"m","model":"claude-sonnet-4-5","usage":{"input_tokens":1000,)"
      << R"("output_tokens":100}}})"
      << "\n"
      << R"({"type":"result","session_id":"s","total_cost_usd":0.01})"
      << "\n";
  const auto r = RunKvbill("bill " + (dir / "log.jsonl").string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("\nthe logged calls of the sessions with result lines cost $0.0045, 45.0% "
                       "of the $0.0100 the provider "
                       "reported on its result lines"),
            std::string::npos)
      << r.out;
  fs::remove_all(dir);
}

TEST(BillCliTest, TableShowsKvbillsCostBesideTheReportedOne) {
  const auto r = RunKvbill("bill " + kExcerpt);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // run-24: 2 calls (6 input, 8,870 written, 42,853 read, 591 output) cost
  // $0.0550; its result line says $0.0719, and kvbill's price of it too. No
  // project (the lines carry no cwd) or last activity (no timestamps).
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex("\\nrun-24 +2 +6 +8,870 +42,853 +591 +\\$0\\.0550 "
                                          "+\\$0\\.0719 +\\$0\\.0719\\n")))
      << r.out;
}

TEST(BillCliTest, CsvByModelHasExactDecimals) {
  const auto r = RunKvbill("bill " + kExcerpt + " --by model --format csv");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // The model once: the group of --by model is the model.
  EXPECT_EQ(r.out.rfind("model,calls,input_tokens,", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nclaude-sonnet-4-5-20250929,2,6,8870,0,42853,591,"
                       "0.0550014,0.0550014,0.0550014,0\n"),
            std::string::npos)
      << r.out;
}

TEST(BillCliTest, ReadsClaudeProjectsUnderHomeWithoutLogArguments) {
  const fs::path home = TempDir("home");
  fs::create_directories(home / ".claude/projects/-work-x");
  fs::copy_file(kExcerpt, home / ".claude/projects/-work-x/run.jsonl");
  // A transcript without calls (only a user line) is skipped, not an error.
  std::ofstream(home / ".claude/projects/-work-x/empty.jsonl") << "{\"type\":\"user\"}\n";
  // The child inherits the environment: point HOME at the fake one.
  const char* old_home = std::getenv("HOME");
  const std::string saved = old_home != nullptr ? old_home : "";
  ::setenv("HOME", home.c_str(), 1);
  ::unsetenv("CLAUDE_CONFIG_DIR");
  ::unsetenv("CODEX_HOME");
  const auto r = RunKvbill("bill --format json");
  ::setenv("HOME", saved.c_str(), 1);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(r.out)["total_cost_usd"].get<double>(), 0.2496369);
  fs::remove_all(home);
}

TEST(BillCliTest, LogWithoutUsageIsAnError) {
  const fs::path dir = TempDir("nousage");
  const fs::path file = dir / "chat.jsonl";
  std::ofstream(file) << "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n";
  const auto r = RunKvbill("bill " + file.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill bill: " + file.string() +
                       ": no usage found (no Claude Code assistant line with message.usage, no "
                       "result line with total_cost_usd, no Codex token_count event)\n");
  fs::remove_all(dir);
}

// A kvbill trace converted from a log keeps its usage per turn, not the
// provider's lines: bill refuses it and says where its price is.
TEST(BillCliTest, AKvbillTraceNamesTheWayToPriceIt) {
  const fs::path dir = TempDir("native");
  const fs::path native = dir / "native.jsonl";
  ASSERT_EQ(RunKvbill("trace convert tests/data/traces/claude_code_small.jsonl --to native -o " +
                      native.string())
                .exit_status,
            0);
  const auto r = RunKvbill("bill " + native.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("; it is a kvbill trace: bill the provider's log it was converted from, "
                       "or price the trace's recorded usage with `kvbill whatif`"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

// A directory named as a LOG that holds no usage is an error, not a $0
// bill (a file without usage inside a directory with some is skipped).
TEST(BillCliTest, DirectoryWithoutUsageIsAnError) {
  const fs::path dir = TempDir("nousage_dir");
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "chat.jsonl") << "{\"type\":\"user\"}\n";
  std::ofstream(dir / "readme.txt") << "not a log\n";
  const auto r = RunKvbill("bill " + dir.string() + " --format json");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("kvbill bill: " + dir.string() +
                            ": no usage found under it (1 .jsonl/.json file; none with",
                        0),
            0u)
      << r.err;
  fs::copy_file(kExcerpt, dir / "sub" / "run.jsonl");
  EXPECT_EQ(RunKvbill("bill " + dir.string() + " --format json").exit_status, 0);
  fs::remove_all(dir);
}

TEST(BillCliTest, MalformedLineNamesFileAndLine) {
  const fs::path dir = TempDir("bad");
  const fs::path file = dir / "bad.jsonl";
  std::ofstream(file) << "{\"type\":\"user\"}\n{\"type\":\"assistant\",\"message\":{\"id\":\"m\","
                         "\"usage\":{\"input_tokens\":\"x\",\"output_tokens\":1}}}\n";
  const auto r = RunKvbill("bill " + file.string());
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill bill: " + file.string() +
                ":2: message.usage: \"input_tokens\" must be a non-negative integer, got \"x\"\n");
  fs::remove_all(dir);
}

// A count or a cost wider than its column's usual width widens the column
// instead of running into the next cell.
TEST(BillCliTest, TableColumnsNeverRunTogether) {
  const fs::path dir = TempDir("wide");
  const fs::path file = dir / "wide.jsonl";
  // One Opus 4.5 call reading 10^12 cached tokens ("1,000,000,000,000": 17
  // characters in a 14-wide column) at $0.50 per Mtok: $500,000, plus 10
  // input tokens at $5 and 5 output at $25 per Mtok: $0.000175, shown as
  // "$500,000.0002" (13 characters in a 12-wide column).
  std::ofstream(file) << R"({"type":"assistant","sessionId":"s","message":{"id":"m1",)"
                         R"("model":"claude-opus-4-5-20251101","usage":{"input_tokens":10,)"
                         R"("cache_creation_input_tokens":0,)"
                         R"("cache_read_input_tokens":1000000000000,"output_tokens":5}}})"
                      << "\n";
  const auto r = RunKvbill("bill " + file.string() + " --by model");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string row;
  while (std::getline(lines, row) && row.rfind("claude-opus-4-5", 0) != 0) {
  }
  std::istringstream cells(row);
  std::vector<std::string> words;
  for (std::string w; cells >> w;) words.push_back(w);
  EXPECT_EQ(words, (std::vector<std::string>{"claude-opus-4-5-20251101", "1", "10", "0",
                                             "1,000,000,000,000", "5", "$500,000.0002"}))
      << r.out;
  fs::remove_all(dir);
}

// Runs kvbill as a user that permissions stop: as root, through setpriv as
// nobody (root reads a 0 mode directory anyway); otherwise as ourselves.
std::string AsUnprivileged() {
  return ::geteuid() == 0 ? "setpriv --reuid=nobody --regid=nogroup --clear-groups " : "";
}

// A log tree that the unprivileged user reads, but for one 0 mode entry:
// DIR/a/run.jsonl (the two-run excerpt) and DIR/LOCKED (a directory holding
// a log, or a log). Fails the test when the entry can still be read.
fs::path TreeWithALockedEntry(const std::string& name, bool locked_is_directory) {
  const fs::path dir = TempDir(name);
  fs::create_directories(dir / "a");
  fs::copy_file(kExcerpt, dir / "a" / "run.jsonl");
  const fs::path locked = dir / (locked_is_directory ? "locked" : "a/locked.jsonl");
  if (locked_is_directory) {
    fs::create_directories(locked);
    fs::copy_file(kExcerpt, locked / "run.jsonl");
  } else {
    fs::copy_file(kExcerpt, locked);
  }
  for (const fs::path& d : {dir, dir / "a"}) fs::permissions(d, fs::perms(0755));
  fs::permissions(dir / "a" / "run.jsonl", fs::perms(0644));
  fs::permissions(locked, fs::perms::none);
  // The case is arranged only if the user kvbill runs as cannot read it.
  const fs::path probe_file = locked_is_directory ? locked / "run.jsonl" : locked;
  const auto probe =
      testing::RunCommand(AsUnprivileged() + "cat '" + probe_file.string() + "' >/dev/null");
  EXPECT_NE(probe.exit_status, 0) << "cannot make " << locked << " unreadable to kvbill";
  const auto readable = testing::RunCommand(AsUnprivileged() + "cat '" +
                                            (dir / "a" / "run.jsonl").string() + "' >/dev/null");
  EXPECT_EQ(readable.exit_status, 0)
      << "the unprivileged user cannot read the tree: " << readable.err;
  return dir;
}

// An unreadable directory or file under a LOG directory is an error naming
// it; with --skip-unreadable a warning, and the bill is that of the rest.
TEST(BillCliTest, AnUnreadableEntryIsAnErrorOrWithSkipUnreadableAWarning) {
  for (const bool is_directory : {true, false}) {
    SCOPED_TRACE(is_directory ? "directory" : "file");
    const fs::path dir = TreeWithALockedEntry("locked", is_directory);
    const std::string locked = (dir / (is_directory ? "locked" : "a/locked.jsonl")).string();
    const std::string what = is_directory ? ": cannot open directory: Permission denied"
                                          : ": cannot open: Permission denied";
    const std::string run =
        AsUnprivileged() + "'" + KVBILL_BINARY + "' bill '" + dir.string() + "' --format json";

    const auto refused = testing::RunCommand(run);
    EXPECT_EQ(refused.exit_status, 2);
    EXPECT_EQ(refused.out, "");
    EXPECT_EQ(refused.err,
              "kvbill bill: " + locked + what + " (--skip-unreadable skips what cannot be read)\n");

    const auto skipped = testing::RunCommand(run + " --skip-unreadable");
    ASSERT_EQ(skipped.exit_status, 0) << skipped.err;
    EXPECT_EQ(skipped.err, "kvbill bill: warning: " + locked + what + "; skipped\n");
    // The readable copy alone: the 6 calls of JsonOfTheTwoRunExcerpt,
    // $0.2496369 (worked out there).
    const auto j = nlohmann::json::parse(skipped.out);
    EXPECT_EQ(j["calls"], 6);
    EXPECT_DOUBLE_EQ(j["total_cost_usd"].get<double>(), 0.2496369);
    fs::permissions(locked, fs::perms(0755));
    fs::remove_all(dir);
  }
}

TEST(BillCliTest, UnpricedModelIsAnExplicitLineAndAWarning) {
  const fs::path dir = TempDir("unpriced");
  const fs::path file = dir / "s.jsonl";
  std::ofstream(file)
      << R"({"type":"assistant","sessionId":"s","message":{"id":"m","model":"mystery-9","usage":{"input_tokens":100,"output_tokens":1}}})"
      << "\n";
  const auto r = RunKvbill("bill " + file.string());
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_NE(r.out.find("unpriced"), std::string::npos) << r.out;
  EXPECT_EQ(r.err,
            "kvbill bill: 1 call of model \"mystery-9\" unpriced: no price in the sheet (add one "
            "with --price mystery-9:input=...,output=...,cache_read=...,cache_write_5m=...,"
            "cache_write_1h=... or --prices FILE; without the cache fields such an entry prices "
            "cache reads and 5-minute writes at its input price, where Anthropic's are 0.1x and "
            "1.25x)\n");
  // With a price it is billed: 100 x $2 + 1 x $8 per Mtok = 208 micro-dollars.
  const auto priced =
      RunKvbill("bill " + file.string() + " --price mystery-9:input=2,output=8 --format json");
  ASSERT_EQ(priced.exit_status, 0) << priced.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(priced.out)["total_cost_usd"].get<double>(), 0.000208);
  fs::remove_all(dir);
}

TEST(BillCliTest, DaysInAnotherTimeZone) {
  const fs::path dir = TempDir("timezone");
  const fs::path file = dir / "s.jsonl";
  // 22:30Z on the 11th is 00:30 on the 12th at +02:00; 09:00Z stays on the 12th.
  std::ofstream(file)
      << R"({"type":"assistant","sessionId":"s","timestamp":"2026-01-11T22:30:00Z","message":{"id":"a","model":"claude-haiku-4-5","usage":{"input_tokens":1000,"output_tokens":0}}})"
      << "\n"
      << R"({"type":"assistant","sessionId":"s","timestamp":"2026-01-12T09:00:00Z","message":{"id":"b","model":"claude-haiku-4-5","usage":{"input_tokens":2000,"output_tokens":0}}})"
      << "\n";
  const auto utc = RunKvbill("bill " + file.string() + " --by day --format json");
  ASSERT_EQ(utc.exit_status, 0) << utc.err;
  const auto u = nlohmann::json::parse(utc.out);
  EXPECT_FALSE(u.contains("time_zone"));  // UTC output unchanged
  ASSERT_EQ(u["days"].size(), 2u);
  EXPECT_EQ(u["days"][0]["id"], "2026-01-11");
  const auto east =
      RunKvbill("bill " + file.string() + " --by day --format json --timezone +02:00");
  ASSERT_EQ(east.exit_status, 0) << east.err;
  const auto e = nlohmann::json::parse(east.out);
  EXPECT_EQ(e["time_zone"], "+02:00");
  ASSERT_EQ(e["days"].size(), 1u);
  EXPECT_EQ(e["days"][0]["id"], "2026-01-12");
  // Haiku 4.5 at $1 per Mtok: 3,000 tokens = $0.003.
  EXPECT_DOUBLE_EQ(e["days"][0]["cost_usd"].get<double>(), 0.003);
  const auto table = RunKvbill("bill " + file.string() + " --by day --timezone +02:00");
  EXPECT_NE(table.out.find("dates in +02:00\n"), std::string::npos) << table.out;
  const auto bad = RunKvbill("bill " + file.string() + " --timezone Mars/Olympus");
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_EQ(bad.err.rfind("kvbill bill: --timezone: time zone \"Mars/Olympus\": not UTC, an "
                          "offset like +02:00, or a zone of the time zone database (",
                          0),
            0u)
      << bad.err;
  fs::remove_all(dir);
}

TEST(BillCliTest, BadFlagsExitTwo) {
  auto r = RunKvbill("bill " + kExcerpt + " --by year");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill bill: --by: \"year\" is not one of session|day|week|month|model|block|call\n");
  r = RunKvbill("bill " + kExcerpt + " --mode guess");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill bill: --mode: \"guess\" is not one of auto|calculate|display\n");
  r = RunKvbill("bill " + kExcerpt + " --json --format csv");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill bill: --json and --format csv disagree\n");
  r = RunKvbill("bill " + kExcerpt + " --order up");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill bill: --order: \"up\" is not one of asc|desc\n");
  r = RunKvbill("bill " + kExcerpt + " --since 2026-13-01");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill bill: --since: \"2026-13-01\" is not a date (YYYY-MM-DD or YYYYMMDD, a day "
            "its month has)\n");
  // February 2025 has 28 days, April 30; 2024 is a leap year.
  for (const char* day : {"2025-02-29", "2025-02-30", "20260431"}) {
    r = RunKvbill("bill " + kExcerpt + " --until " + day);
    EXPECT_EQ(r.exit_status, 2) << day;
    EXPECT_EQ(r.err, std::string("kvbill bill: --until: \"") + day +
                         "\" is not a date (YYYY-MM-DD or YYYYMMDD, a day its month has)\n");
  }
  EXPECT_EQ(RunKvbill("bill " + kExcerpt + " --since 2024-02-29").exit_status, 0);
  r = RunKvbill("bill " + kExcerpt + " --since 2026-03-02 --until 20260301");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill bill: --since 2026-03-02 is after --until 2026-03-01 (both dates are "
            "billed)\n");
  // One day: since = until is a day's bill.
  EXPECT_EQ(RunKvbill("bill " + kExcerpt + " --since 2026-03-01 --until 2026-03-01").exit_status,
            0);
}

// tests/data/bill/views.jsonl, worked by hand (list prices per Mtok):
//   s-1 in /home/u/proj-a, Monday 2026-03-02: Opus 4.6 at 09:10, 1,000 input,
//     2,000 written, 500 output: 1,000 x 5 + 2,000 x 6.25 + 500 x 25 = 30,000
//     micro-dollars; at 11:30 in fast mode (6x): 10 input x 30 + 3,000 read
//     x 3 + 200 output x 150 = 39,300.
//   s-2 in /home/u/proj-b, Monday 2026-03-09: Haiku 4.5 at 15:00, 2,000 x 1 +
//     100 x 5 = 2,500; Sonnet 4.5 at 21:00, 1,000 x 3 + 100 x 15 = 4,500.
//   s-3 in /home/u/proj-a, Friday 2026-02-27 08:00: a line without "type"
//     that recorded costUSD $0.125 (priced: 100 x 3 + 10 x 15 = 450).
const std::string kViews = std::string(KVBILL_SOURCE_DIR) + "/tests/data/bill/views.jsonl";

nlohmann::json Json(const std::string& args) {
  const auto r = RunKvbill("bill " + kViews + " " + args);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

std::vector<std::string> RowIds(const nlohmann::json& rows) {
  std::vector<std::string> ids;
  for (const auto& row : rows) ids.push_back(row["id"]);
  return ids;
}

TEST(BillCliTest, JsonIsFormatJson) {
  const auto a = RunKvbill("bill " + kViews + " --json");
  const auto b = RunKvbill("bill " + kViews + " --format json");
  ASSERT_EQ(a.exit_status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  // Auto mode: 30,000 + 39,300 + 2,500 + 4,500 micro-dollars priced, plus
  // the recorded $0.125 = $0.2013.
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_DOUBLE_EQ(j["total_cost_usd"].get<double>(), 0.2013);
  EXPECT_EQ(j["cost_mode"], "auto");
}

TEST(BillCliTest, SessionsShowProjectAndLastActivity) {
  const auto j = Json("--json");
  ASSERT_EQ(j["sessions"].size(), 3u);
  const auto& s1 = j["sessions"][0];
  EXPECT_EQ(s1["id"], "s-1");
  EXPECT_EQ(s1["project"], "/home/u/proj-a");
  EXPECT_EQ(s1["last_activity"], "2026-03-02");
  EXPECT_DOUBLE_EQ(s1["cost_usd"].get<double>(), 0.0693);  // 30,000 + 39,300
  EXPECT_EQ(s1["by_model"]["claude-opus-4-6-fast"]["speed"], "fast");
  EXPECT_DOUBLE_EQ(s1["by_model"]["claude-opus-4-6-fast"]["cost_usd"].get<double>(), 0.0393);
  EXPECT_EQ(j["sessions"][1]["project"], "/home/u/proj-b");
  EXPECT_EQ(j["sessions"][2]["by_model"]["claude-sonnet-4-5"]["recorded_cost_calls"], 1);

  const auto table = RunKvbill("bill " + kViews);
  ASSERT_EQ(table.exit_status, 0) << table.err;
  // A session of one model is one row: s-3's.
  EXPECT_TRUE(std::regex_search(
      table.out, std::regex("\\ns-3 +/home/u/proj-a +2026-02-27 +claude-sonnet-4-5 +1 +100 +0 +0 "
                            "+10 +\\$0\\.1250 *\\n")))
      << table.out;
  // A session of two is a row and one per model below it.
  EXPECT_TRUE(std::regex_search(
      table.out,
      std::regex("\\ns-1 +/home/u/proj-a +2026-03-02 +2 +1,010 +2,000 +3,000 +700 "
                 "+\\$0\\.0693 *\\n +claude-opus-4-6 +1 +1,000 +2,000 +0 +500 +\\$0\\.0300 *\\n "
                 "+claude-opus-4-6-fast +1 +10 +0 +3,000 +200 +\\$0\\.0393 *\\n")))
      << table.out;
}

// --since / --until leave out calls without a timestamp and say how many:
// of two Sonnet 4.5 calls of 1,000 input and 100 output tokens, the dated
// one is billed (1,000 x $3 + 100 x $15 per million = $0.0045) and the
// undated one is counted as left out.
TEST(BillCliTest, AWindowCountsTheUndatedCallsItLeavesOut) {
  const std::string log = ::testing::TempDir() + "/undated.jsonl";
  const std::string usage =
      R"("model": "claude-sonnet-4-5", "role": "assistant", "usage": {"input_tokens": 1000,)"
      R"( "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 100}}})";
  std::ofstream(log) << R"({"type": "assistant", "sessionId": "s1", "timestamp": )"
                     << R"("2025-03-01T10:00:00Z", "message": {"id": "msg_a", )" << usage << "\n"
                     << R"({"type": "assistant", "sessionId": "s1", "message": {"id": "msg_b", )"
                     << usage << "\n";
  const auto r = RunKvbill("bill " + log + " --since 2025-01-01 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["calls"], 1);
  EXPECT_EQ(j["undated_left_out"], 1);
  EXPECT_DOUBLE_EQ(j["total_cost_usd"].get<double>(), 0.0045);
  const auto table = RunKvbill("bill " + log + " --since 2025-01-01");
  EXPECT_NE(table.out.find("1 call(s) or result line(s) without a timestamp were left out"),
            std::string::npos)
      << table.out;
  // Without a window both are billed and nothing is left out.
  const auto all = nlohmann::json::parse(RunKvbill("bill " + log + " --format json").out);
  EXPECT_EQ(all["calls"], 2);
  EXPECT_FALSE(all.contains("undated_left_out"));
}

TEST(BillCliTest, WeeksStartOnSundayOrTheGivenDay) {
  const auto j = Json("--by week --json");
  EXPECT_EQ(RowIds(j["weeks"]),
            (std::vector<std::string>{"2026-02-22", "2026-03-01", "2026-03-08"}));
  EXPECT_DOUBLE_EQ(j["weeks"][1]["cost_usd"].get<double>(), 0.0693);
  EXPECT_EQ(j["weeks"][2]["calls"], 2);
  const auto monday = Json("--by week --start-of-week monday --json");
  EXPECT_EQ(RowIds(monday["weeks"]),
            (std::vector<std::string>{"2026-02-23", "2026-03-02", "2026-03-09"}));
  // A day's name is read in any case.
  EXPECT_EQ(RowIds(Json("--by week --start-of-week Monday --json")["weeks"]),
            RowIds(monday["weeks"]));
  const auto desc = Json("--by week --order desc --json");
  EXPECT_EQ(RowIds(desc["weeks"]),
            (std::vector<std::string>{"2026-03-08", "2026-03-01", "2026-02-22"}));
}

TEST(BillCliTest, MonthsAsCsv) {
  const auto r = RunKvbill("bill " + kViews + " --by month --format csv");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // February: the recorded $0.125; March's Haiku call: 2,500 micro-dollars.
  EXPECT_NE(r.out.find("2026-02,claude-sonnet-4-5,1,100,0,0,0,10,0.125,,,0\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2026-03,claude-haiku-4-5,1,2000,0,0,0,100,0.0025,,,0\n"), std::string::npos)
      << r.out;
}

// codex_small.jsonl's second session (019a-s2) names no model: its one call
// (line 10: 9,000 input, 40 output) is priced as gpt-5, 9,000 x 1.25 + 40 x
// 10 = 11,650 micro-dollars, and marked assumed in every format: the CSV
// in a column of its own (until 2026-12 it dropped the mark). The table of
// calls names each call's date and file:line, as the JSON does.
TEST(BillCliTest, AssumedModelInCsvAndCallsTableWithDateAndPlace) {
  const std::string log = std::string(KVBILL_SOURCE_DIR) + "/tests/data/traces/codex_small.jsonl";
  const auto calls = RunKvbill("bill " + log + " --by call --format csv");
  ASSERT_EQ(calls.exit_status, 0) << calls.err;
  EXPECT_NE(calls.out.find(",cost_usd,long_context,assumed_model\n"), std::string::npos)
      << calls.out;
  EXPECT_NE(calls.out.find("\n019a-s2,gpt-5,2025-11-18," + log + ":10,9000,0,0,0,40,0.01165,0,1\n"),
            std::string::npos)
      << calls.out;
  EXPECT_NE(calls.out.find("\n019a-s1,gpt-5-codex,2025-11-18," + log + ":4,"), std::string::npos)
      << calls.out;
  const auto sessions = RunKvbill("bill " + log + " --format csv");
  ASSERT_EQ(sessions.exit_status, 0) << sessions.err;
  EXPECT_NE(sessions.out.find(",project,last_activity,assumed_model_calls\n"), std::string::npos)
      << sessions.out;
  EXPECT_NE(sessions.out.find("\n019a-s2,gpt-5,1,9000,0,0,0,40,0.01165,,,/work,2025-11-18,1\n"),
            std::string::npos)
      << sessions.out;
  const auto table = RunKvbill("bill " + log + " --by call");
  ASSERT_EQ(table.exit_status, 0) << table.err;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("session +date +where +model ")))
      << table.out;
  EXPECT_TRUE(std::regex_search(
      table.out,
      std::regex("019a-s2 +2025-11-18 +\\S*codex_small\\.jsonl:10 +gpt-5 \\(assumed\\)")))
      << table.out;
}

TEST(BillCliTest, FiveHourBlocks) {
  const auto j = Json("--by block --json");
  // 08:00 on the 27th; 09:10 floored to 09:00 on March 2, 11:30 within it;
  // 15:00 on March 9, and 21:00 six hours later starts another.
  EXPECT_EQ(RowIds(j["blocks"]),
            (std::vector<std::string>{"2026-02-27T08:00:00Z", "2026-03-02T09:00:00Z",
                                      "2026-03-09T15:00:00Z", "2026-03-09T21:00:00Z"}));
  const auto& second = j["blocks"][1];
  EXPECT_EQ(second["start"], "2026-03-02T09:00:00Z");
  EXPECT_EQ(second["end"], "2026-03-02T14:00:00Z");
  EXPECT_EQ(second["last_activity"], "2026-03-02T11:30:00Z");
  EXPECT_EQ(second["calls"], 2);
  EXPECT_DOUBLE_EQ(second["cost_usd"].get<double>(), 0.0693);
  const auto table = RunKvbill("bill " + kViews + " --by block");
  EXPECT_TRUE(std::regex_search(
      table.out, std::regex("\\n2026-03-09T15:00:00Z +claude-haiku-4-5 +1 +2,000 +0 +0 +100 "
                            "+\\$0\\.0025 *\\n")))
      << table.out;
}

TEST(BillCliTest, ModesForRecordedCosts) {
  // calculate: 30,000 + 39,300 + 2,500 + 4,500 + 450 = 76,750 micro-dollars.
  const auto calculate = Json("--mode calculate --json");
  EXPECT_DOUBLE_EQ(calculate["total_cost_usd"].get<double>(), 0.07675);
  EXPECT_EQ(calculate["cost_mode"], "calculate");
  // display: only the recorded $0.125; the other four calls are unpriced.
  const auto r = RunKvbill("bill " + kViews + " --mode display --json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto display = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(display["total_cost_usd"].get<double>(), 0.125);
  EXPECT_EQ(display["unpriced_calls"], 4);
  const std::string note =
      "\" unpriced: no costUSD recorded and --mode display bills only recorded costs (--mode auto "
      "prices them)\n";
  EXPECT_EQ(r.err, "kvbill bill: 1 call of model \"claude-haiku-4-5" + note +
                       "kvbill bill: 2 calls of model \"claude-opus-4-6" + note +
                       "kvbill bill: 1 call of model \"claude-sonnet-4-5" + note);
}

TEST(BillCliTest, FastCallWithoutAFastPriceIsUnpricedWithANote) {
  const auto r = RunKvbill("bill " + kViews + " --price claude-opus-4-6:fast_multiplier=0 --json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["unpriced_calls"], 1);
  EXPECT_EQ(r.err,
            "kvbill bill: 1 fast-mode call of model \"claude-opus-4-6\" unpriced: no fast-mode "
            "price in the sheet (add one with --price claude-opus-4-6:fast_multiplier=...)\n");
}

TEST(BillCliTest, LiteLlmEntryWithoutAnOutputPriceIsSkippedWithANote) {
  const fs::path dir = TempDir("skipped");
  const fs::path prices = dir / "prices.json";
  std::ofstream(prices) << R"({"claude-haiku-4-5": {"input_cost_per_token": 1e-06},
      "claude-sonnet-4-5": {"input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05},
      "claude-opus-4-6": {"input_cost_per_token": 5e-06, "output_cost_per_token": 2.5e-05,
                          "provider_specific_entry": {"fast": 6.0}}})";
  const auto r = RunKvbill("bill " + kViews + " --prices " + prices.string() + " --json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["unpriced_calls"], 1);
  EXPECT_EQ(j["price_sheet"]["skipped_entries"], 1);
  // Opus 4.6 without a provider is a Claude model: Anthropic's cache rules,
  // writes at 1.25 x $5 = $6.25, so the same 30,000 + 39,300 micro-dollars.
  EXPECT_DOUBLE_EQ(j["sessions"][0]["cost_usd"].get<double>(), 0.0693);
  EXPECT_EQ(r.err, "kvbill bill: " + prices.string() +
                       ": 1 entry skipped for want of input_cost_per_token or "
                       "output_cost_per_token (\"claude-haiku-4-5\")\n"
                       "kvbill bill: 1 call of model \"claude-haiku-4-5\" unpriced: the price "
                       "file's entry \"claude-haiku-4-5\" has no output_cost_per_token (add the "
                       "prices with --price claude-haiku-4-5:input=...,output=...)\n");
  fs::remove_all(dir);
}

#ifdef KVBILL_SHARED_DATA_DIR
TEST(BillCliTest, AcceptanceRunsWithTheBundledSheetAndWithLiteLlms) {
  const std::string data = KVBILL_SHARED_DATA_DIR;
  const std::string runs = data + "/acceptance/claude-code-headless/runs.jsonl";
  if (!fs::exists(runs)) GTEST_SKIP() << "shared data not present";
  for (const std::string& prices :
       {std::string(),
        " --prices " + data + "/prices/litellm_model_prices_and_context_window.json"}) {
    const auto r = RunKvbill("bill " + runs + " --format json" + prices);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    int matched = 0;
    for (const auto& run : j["sessions"]) {
      bool ok = std::abs(run["reported_usage_cost_usd"].get<double>() -
                         run["reported_cost_usd"].get<double>()) < 1e-9;
      for (const auto& [model, m] : run["by_model"].items()) {
        ok = ok && std::abs(m["reported_usage_cost_usd"].get<double>() -
                            m["reported_cost_usd"].get<double>()) < 1e-9;
      }
      matched += ok ? 1 : 0;
    }
    EXPECT_EQ(j["sessions"].size(), 48u);
    EXPECT_EQ(matched, 48) << prices;
    EXPECT_NEAR(j["reported_usage_cost_usd"].get<double>(), j["reported_cost_usd"].get<double>(),
                1e-9);
  }
}
#endif

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
