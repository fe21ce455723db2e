// kvbill: what an agent task costs, and which KV-cache policy makes it cheaper.
// main parses the subcommand name and hands the rest to the command.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/standard_output.h"
#include "kvbill/util/names.h"

namespace kvbill::cli {
namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
};

constexpr Command kCommands[] = {
    {"simulate", "replay a trace under a scenario; per-task tokens, KV reads, GPU time, dollars",
     RunSimulate},
    {"compare", "the levers (quantization, prefix cache, eviction, summaries, architecture) ranked",
     RunCompare},
    {"sweep", "run a scenario's sweep axes in parallel; --shard i/n for CI matrices",
     RunSweepCommand},
    {"merge", "join sweep or plan shards into exactly what one run prints", RunMerge},
    {"plan",
     "the cheapest deployment (GPU, parallelism, formats, replicas) meeting latency targets",
     RunPlan},
    {"breakeven", "the longest context served profitably at a token price, by KV format",
     RunBreakeven},
    {"check", "exit 1 when a scenario breaks its budgets (for CI)", RunCheck},
    {"report", "one self-contained HTML page of charts and tables for a scenario",
     RunReportCommand},
    {"kv", "KV bytes per token and one sequence's footprint at given contexts", RunKv},
    {"fit", "does a model + context + batch fit a GPU; max context, max batch, GPUs needed",
     RunFit},
    {"plot", "SVG charts (plot memory: KV memory against context with the GPU line)", RunPlot},
    {"models", "list the bundled model catalog", RunModels},
    {"gpus", "list the bundled GPU catalog", RunGpus},
    {"trace", "trace stats | convert | gen: summarise, convert or generate agent traces", RunTrace},
    {"bill", "price recorded Claude Code / Codex usage per session, day, week, month, 5-h block",
     RunBill},
    {"whatif", "one recorded log priced as recorded, with 1-h writes, other models, self-hosted",
     RunWhatif},
    {"calibrate", "fit the cost model: operator curves from kernel timings, engine profiles",
     RunCalibrate},
    {"scenario", "scenario schema | docs | from-vllm: JSON Schema, doc tables, from a vLLM command",
     RunScenarioCommand},
};

void PrintHelp(std::ostream& out) {
  out << "kvbill — what an LLM agent task costs, and which KV-cache policy makes it cheaper\n\n"
         "usage: kvbill COMMAND [OPTIONS]\n\ncommands:\n";
  for (const Command& c : kCommands) {
    std::string name = c.name;
    name.resize(10, ' ');
    out << "  " << name << c.summary << "\n";
  }
  out << "  help      this text; `kvbill help COMMAND` or `kvbill COMMAND --help` for one command\n"
         "\nexit status: 0 ok, 1 a check failed (does not fit, budget broken), 2 bad input,\n"
         "3 the run could not finish (out of memory, an internal error)\n"
         "units: GiB = 2^30 bytes, GB = 10^9 bytes; 32k = 32,768 tokens, 1M = 1,048,576;\n"
         "prices per Mtok are per 10^6 tokens, as providers quote them\n";
}

// The error for a name not in kCommands: 'unknown command "simulte"; did
// you mean simulate? (`kvbill help` lists them all)'.
std::string UnknownCommand(const std::string& name) {
  std::vector<std::string> names = {"help"};
  for (const Command& c : kCommands) names.emplace_back(c.name);
  const std::string hint = DidYouMean(name, names);
  return "kvbill: unknown command \"" + name + "\"; " +
         (hint.empty() ? "run `kvbill help`" : hint + " (`kvbill help` lists them all)") + "\n";
}

}  // namespace
}  // namespace kvbill::cli

namespace kvbill::cli {
namespace {

// Exit status of a run that could not finish: out of memory, or an error
// inside kvbill (docs/robustness.md#fatal-conditions).
constexpr int kFatalExitStatus = 3;

// "kvbill COMMAND: " (or "kvbill: " before a command is known).
std::string g_prefix = "kvbill: ";

[[noreturn]] void Fatal(const std::string& what) {
  std::cerr << g_prefix << what << "\n" << std::flush;
  std::_Exit(kFatalExitStatus);
}

std::string Describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return "out of memory (the input needs more memory than the system gives; "
           "see docs/robustness.md#fatal-conditions)";
  } catch (const std::exception& x) {
    return std::string("internal error: ") + x.what();
  } catch (...) {
    return "internal error: an unknown exception";
  }
}

// An exception that escapes a worker thread (or a noexcept function) ends
// here rather than in the runtime's "terminate called ..." and an abort.
[[noreturn]] void OnTerminate() {
  if (const std::exception_ptr e = std::current_exception()) Fatal(Describe(e));
  Fatal("internal error: terminated");
}

int Run(const std::vector<std::string>& args);

}  // namespace
}  // namespace kvbill::cli

int main(int argc, char** argv) {
  std::set_terminate(kvbill::cli::OnTerminate);
  kvbill::cli::StandardOutput standard_output;
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    // The prefix of the command's own errors: "kvbill trace convert: ".
    if (!args.empty() && !args[0].starts_with("-")) {
      kvbill::cli::g_prefix = "kvbill " + args[0];
      if ((args[0] == "trace" || args[0] == "scenario") && args.size() > 1 &&
          !args[1].starts_with("-")) {
        kvbill::cli::g_prefix += " " + args[1];
      }
      kvbill::cli::g_prefix += ": ";
    }
    const int status = kvbill::cli::Run(args);
    // A command that succeeded (or found a check broken) but whose output
    // did not reach standard output has failed: exit 2 and the reason. A
    // command that failed has said why already.
    if (auto written = kvbill::cli::FlushStandardOutput(); !written && status < 2) {
      std::cerr << kvbill::cli::g_prefix << written.error().message() << "\n";
      return written.error().exit_status();
    }
    return status;
  } catch (...) {
    kvbill::cli::Fatal(kvbill::cli::Describe(std::current_exception()));
  }
}

namespace kvbill::cli {
namespace {

int Run(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    // `help help`, `help --help`: this text, as `help` alone prints it.
    if (args.size() >= 2 && args[0] == "help" && args[1] != "help" && args[1] != "--help" &&
        args[1] != "-h") {
      for (const auto& c : kCommands) {
        if (args[1] == c.name) return c.run({"--help"});
      }
      std::cerr << kvbill::cli::UnknownCommand(args[1]);
      return 2;
    }
    kvbill::cli::PrintHelp(args.empty() ? std::cerr : std::cout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "kvbill 0.1.0\n";
    return 0;
  }
  for (const auto& c : kCommands) {
    if (args[0] == c.name) {
      return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  std::cerr << kvbill::cli::UnknownCommand(args[0]);
  return 2;
}

}  // namespace
}  // namespace kvbill::cli
