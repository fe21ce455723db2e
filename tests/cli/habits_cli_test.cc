// The command line as people use it: names in the forms they type, "did you
// mean" for what matched nothing, flag synonyms, help text, the line naming
// each written file, and no progress line when stderr is not a terminal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

namespace fs = std::filesystem;
using testing::RunKvbillInSourceDir;

fs::path FreshDir(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("kvbill_habits_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(HabitsCliTest, UnknownCommandSuggestsTheClosest) {
  const auto r = RunKvbillInSourceDir("simulte");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill: unknown command \"simulte\"; did you mean simulate? (`kvbill help` lists "
            "them all)\n");
  const auto far = RunKvbillInSourceDir("frobnicate");
  EXPECT_EQ(far.exit_status, 2);
  EXPECT_EQ(far.err, "kvbill: unknown command \"frobnicate\"; run `kvbill help`\n");
  EXPECT_EQ(RunKvbillInSourceDir("help simluate").err,
            "kvbill: unknown command \"simluate\"; did you mean simulate? (`kvbill help` lists "
            "them all)\n");
  // Help on help is the command list, as `help` alone.
  const auto plain = RunKvbillInSourceDir("help");
  for (const char* args : {"help help", "help --help", "help -h"}) {
    const auto h = RunKvbillInSourceDir(args);
    EXPECT_EQ(h.exit_status, 0) << args << ": " << h.err;
    EXPECT_EQ(h.out, plain.out) << args;
  }
}

TEST(HabitsCliTest, UnknownSubcommandSuggestsTheClosest) {
  const auto r = RunKvbillInSourceDir("trace stat x.jsonl");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill trace: unknown subcommand \"stat\"; did you mean stats? (`kvbill trace "
            "--help` lists them all)\n");
}

TEST(HabitsCliTest, UnknownFlagSuggestsTheClosest) {
  const auto r = RunKvbillInSourceDir("kv --model qwen3-8b --contxt 32k");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill kv: unrecognised option '--contxt'; did you mean --context?\n"
            "run `kvbill kv --help` for the options\n");
}

TEST(HabitsCliTest, ChoiceSuggestsTheClosest) {
  const auto r = RunKvbillInSourceDir("kv --model qwen3-8b --format jsn");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill kv: --format: \"jsn\" is not one of table|json|csv; did you mean json?\n");
}

// Every name form gives exactly the output of the catalog name.
TEST(HabitsCliTest, ModelAndGpuByAnyNameFormGiveTheSameAnswer) {
  const auto reference =
      RunKvbillInSourceDir("fit --model qwen3-32b --gpu h100-sxm --context 32k --format json");
  ASSERT_EQ(reference.exit_status, 0) << reference.err;
  for (const char* flags : {"--model Qwen/Qwen3-32B --gpu h100", "--model Qwen3-32B --gpu H100-SXM",
                            "--model qwen/qwen3-32b --gpu 'NVIDIA H100 80GB HBM3'",
                            "--model QWEN3-32B --gpu 'H100 80GB HBM3'"}) {
    const auto r =
        RunKvbillInSourceDir(std::string("fit ") + flags + " --context 32k --format json");
    EXPECT_EQ(r.exit_status, 0) << flags << ": " << r.err;
    EXPECT_EQ(r.out, reference.out) << flags;
  }
}

TEST(HabitsCliTest, UnknownModelAndGpuSuggestTheClosest) {
  // "qwen3-4b" is 1 edit from qwen3-8b, 2 from qwen3-32b and 3 from
  // qwen3.5-9b (+'.', +'5', 4->9), all within the 3 allowed for names of 8-10
  // characters.
  const auto model = RunKvbillInSourceDir("kv --model qwen3-4b");
  EXPECT_EQ(model.exit_status, 2);
  EXPECT_EQ(model.err.rfind("kvbill kv: --model \"qwen3-4b\": not a bundled model nor a file; did "
                            "you mean qwen3-8b, qwen3-32b or qwen3.5-9b? (catalog: ",
                            0),
            0u)
      << model.err;
  const auto gpu = RunKvbillInSourceDir("fit --model qwen3-8b --gpu h900 --context 8k");
  EXPECT_EQ(gpu.exit_status, 2);
  EXPECT_EQ(gpu.err.rfind("kvbill fit: --gpu \"h900\": unknown GPU; did you mean h200 or h100? "
                          "(catalog: ",
                          0),
            0u)
      << gpu.err;
}

TEST(HabitsCliTest, MissingFilesSayFileNotFound) {
  EXPECT_EQ(RunKvbillInSourceDir("kv --model ./no/such/config.json").err,
            "kvbill kv: --model \"./no/such/config.json\": file not found\n");
  EXPECT_EQ(RunKvbillInSourceDir("trace stats no/such/trace.jsonl").err,
            "kvbill trace stats: no/such/trace.jsonl: file not found\n");
  const auto dir = RunKvbillInSourceDir("trace stats tests");
  EXPECT_EQ(dir.exit_status, 2);
  EXPECT_EQ(dir.err, "kvbill trace stats: tests: a directory, not a trace file\n");
  // A scenario's trace.file that names a directory: the field, then the path.
  const std::string scenario = ::testing::TempDir() + "/trace_dir.json";
  std::ofstream(scenario) << R"({"model": "qwen3-8b", "trace": {"file": "."}})";
  const auto sim = RunKvbillInSourceDir("simulate --scenario " + scenario);
  EXPECT_EQ(sim.exit_status, 2);
  EXPECT_EQ(sim.err.rfind("kvbill simulate: " + scenario + "#/trace/file: ", 0), 0u) << sim.err;
  EXPECT_TRUE(sim.err.ends_with(": a directory, not a trace file\n")) << sim.err;
}

// A scenario's trace.file that names nothing is the field's error, as a
// directory is: it said "kvbill simulate: nope.jsonl: file not found",
// naming neither the scenario nor the key. Engine runs (simulate) and API
// runs (check of a scenario with "pricing") read the trace on two paths.
TEST(HabitsCliTest, AScenarioTraceThatIsMissingIsBlamedOnTheField) {
  const std::string dir = ::testing::TempDir() + "habits_missing_trace";
  std::filesystem::create_directories(dir);
  const std::string engine = dir + "/trace_missing.json";
  std::ofstream(engine) << R"({"model": "qwen3-8b", "trace": {"file": "nope.jsonl"}})";
  const std::string api = dir + "/trace_missing_api.json";
  std::ofstream(api) << R"({"trace": {"file": "nope.jsonl"}, )"
                        R"("pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"}, )"
                        R"("budgets": {"cost_usd": {"max": 1}}})";
  // A relative trace.file is the scenario directory's (docs/robustness.md#paths).
  const auto sim = RunKvbillInSourceDir("simulate --scenario " + engine);
  EXPECT_EQ(sim.exit_status, 2);
  EXPECT_EQ(sim.out, "");
  EXPECT_EQ(sim.err, "kvbill simulate: " + engine + "#/trace/file: " + dir +
                         "/nope.jsonl: file not found\n");
  const auto check = RunKvbillInSourceDir("check --scenario " + api);
  EXPECT_EQ(check.exit_status, 2);
  EXPECT_EQ(check.err,
            "kvbill check: " + api + "#/trace/file: " + dir + "/nope.jsonl: file not found\n");
}

// --trace naming a directory was blamed on scenarios/default.json#/trace/file
// (simulate, compare, plan), a key the user never wrote, or named the path
// alone (check, report): every command that takes --trace now names the
// flag, for a directory and for a path naming nothing ("no/such.jsonl: file
// not found").
TEST(HabitsCliTest, ATraceFlagNamingADirectoryIsBlamedOnTheFlag) {
  const std::string out = ::testing::TempDir() + "/trace_dir_report";
  for (const auto& [trace, why] : {std::pair{"tests", "a directory, not a trace file"},
                                   std::pair{"no/such.jsonl", "file not found"}}) {
    for (const std::string& command : std::vector<std::string>{
             "simulate", "compare", "plan", "check --scenario scenarios/coding-agent.json",
             "report -o " + out}) {
      const auto run = RunKvbillInSourceDir(command + " --trace " + trace);
      const std::string name = command.substr(0, command.find(' '));
      EXPECT_EQ(run.exit_status, 2) << command;
      EXPECT_EQ(run.out, "") << command;
      EXPECT_EQ(run.err, "kvbill " + name + ": --trace: " + trace + ": " + why + "\n") << command;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(out + "/report.html"));
}

// Every flag README's synopses and examples give a command is listed by
// that command's --help (calibrate's help printed no options at all, while
// README gave it --no-lomo, --grid-rounds, --max-evaluations, ...).
TEST(HabitsCliTest, EveryFlagReadmeGivesACommandIsInItsHelp) {
  std::ifstream readme(std::string(KVBILL_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(readme);
  const std::map<std::string, std::set<std::string>> subcommands = {
      {"trace", {"stats", "convert", "gen"}},
      {"scenario", {"schema", "docs", "from-vllm"}},
      {"calibrate", {"kernels"}},
      {"plot", {"memory"}}};
  const std::regex synopsis(R"(^    (?:\$ )?kvbill ([a-z-]+)(?: ([a-z-]+))?(.*))");
  const std::regex flag(R"((?:^|[^\w-])(--[a-z][a-z0-9-]*))");
  std::map<std::string, std::set<std::string>> flags;  // command -> flags README gives it
  std::string line, command;
  while (std::getline(readme, line)) {
    std::smatch m;
    std::string rest;
    if (std::regex_match(line, m, synopsis)) {
      command = m[1];
      const auto sub = subcommands.find(command);
      if (sub != subcommands.end() && sub->second.count(m[2]) != 0) {
        command += " " + m[2].str();
        rest = m[3];
      } else {
        rest = m[2].str() + m[3].str();
      }
    } else if (!command.empty() && line.starts_with("        ") &&
               line.find_first_not_of(' ') != std::string::npos &&
               (line[line.find_first_not_of(' ')] == '[' ||
                line[line.find_first_not_of(' ')] == '-')) {
      rest = line;  // a synopsis's continuation line
    } else {
      command.clear();
      continue;
    }
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), flag);
         it != std::sregex_iterator(); ++it) {
      flags[command].insert((*it)[1]);
    }
  }
  ASSERT_TRUE(flags.count("calibrate") != 0 && flags["calibrate"].count("--no-lomo") != 0);
  for (const auto& [name, given] : flags) {
    const auto help = RunKvbillInSourceDir(name + " --help");
    EXPECT_EQ(help.exit_status, 0) << name;
    for (const std::string& f : given) {
      EXPECT_NE(help.out.find(f), std::string::npos) << "kvbill " << name << " --help lacks " << f;
    }
  }
}

TEST(HabitsCliTest, HelpShowsDefaultsAsWrittenAndWhetherAFlagTakesAFileOrADirectory) {
  const auto fit = RunKvbillInSourceDir("fit --help");
  EXPECT_EQ(fit.exit_status, 0);
  EXPECT_NE(fit.out.find("--memory-fraction arg (=0.9)"), std::string::npos) << fit.out;
  EXPECT_EQ(fit.out.find("0.9000"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("-o [ --out ] FILE"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("--output is the same as --out"), std::string::npos) << fit.out;
  const auto simulate = RunKvbillInSourceDir("simulate --help");
  EXPECT_NE(simulate.out.find("-o [ --out ] DIR"), std::string::npos) << simulate.out;
  EXPECT_NE(simulate.out.find("--out-dir is the same as --out"), std::string::npos) << simulate.out;
  const auto bill = RunKvbillInSourceDir("bill --help");
  EXPECT_NE(bill.out.find("-o [ --output ] FILE"), std::string::npos) << bill.out;
  EXPECT_NE(bill.out.find("--out is the same as --output"), std::string::npos) << bill.out;
}

TEST(HabitsCliTest, OutAndOutputAreTheSameFlag) {
  const fs::path dir = FreshDir("out_output");
  const std::string a = (dir / "a.txt").string(), b = (dir / "b.txt").string();
  const auto with_out = RunKvbillInSourceDir("kv --model qwen3-8b --out " + a);
  const auto with_output = RunKvbillInSourceDir("kv --model qwen3-8b --output=" + b);
  ASSERT_EQ(with_out.exit_status, 0) << with_out.err;
  ASSERT_EQ(with_output.exit_status, 0) << with_output.err;
  EXPECT_EQ(testing::RunCommand("cmp '" + a + "' '" + b + "'").exit_status, 0);
  fs::remove_all(dir);
}

TEST(HabitsCliTest, OutDirIsSimulatesOut) {
  const fs::path dir = FreshDir("out_dir");
  const auto r = RunKvbillInSourceDir(
      "simulate --scenario tests/data/scenarios/small_sweep.json --out-dir " + dir.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "simulate.json"));
  EXPECT_TRUE(fs::exists(dir / "tasks.csv"));
  // Each written file is named on stderr, with its size.
  EXPECT_NE(r.err.find("kvbill simulate: wrote " + (dir / "simulate.json").string() + " ("),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("kvbill simulate: wrote " + (dir / "tasks.csv").string() + " ("),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

TEST(HabitsCliTest, PlotWritesWithJustOut) {
  const fs::path dir = FreshDir("plot");
  const std::string svg = (dir / "x.svg").string();
  const auto r = RunKvbillInSourceDir("plot --out " + svg);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  // "kvbill plot: wrote PATH (N KiB)": the size as FormatBinaryBytes gives it.
  EXPECT_EQ(r.err.rfind("kvbill plot: wrote " + svg + " (", 0), 0u) << r.err;
  EXPECT_TRUE(r.err.ends_with(" KiB)\n")) << r.err;
  EXPECT_TRUE(fs::exists(svg));
  const auto memory = RunKvbillInSourceDir("plot memory --output " + svg);
  EXPECT_EQ(memory.exit_status, 0) << memory.err;
  const auto typo = RunKvbillInSourceDir("plot memroy --out " + svg);
  EXPECT_EQ(typo.exit_status, 2);
  EXPECT_EQ(typo.err,
            "kvbill plot: unknown chart \"memroy\"; did you mean memory? (known: memory)\n");
  fs::remove_all(dir);
}

TEST(HabitsCliTest, NoProgressLineWhenStderrIsNotATerminal) {
  // Here stderr is a file: whatever the run's length, no "\r" line appears.
  const auto r = RunKvbillInSourceDir("simulate --scenario tests/data/scenarios/small_sweep.json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("simulating"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
