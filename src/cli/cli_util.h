// Shared plumbing of the subcommands: option parsing with Boost.Program_options
// (errors exit 2), error printing, output to stdout or an atomically written
// file, and the line that names each file a command wrote.
#ifndef KVBILL_CLI_CLI_UTIL_H_
#define KVBILL_CLI_CLI_UTIL_H_

#include <boost/program_options.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "kvbill/scenario/scenario.h"
#include "kvbill/scenario/warnings.h"
#include "kvbill/util/result.h"

namespace kvbill::cli {

namespace po = boost::program_options;

// Parses `args` against `options` (plus an implicit --help/-h), `hidden`
// options (parsed, not listed in the help; e.g. the option a positional
// argument fills) and positional names. Returns an exit status when the
// command should stop now: 0 after printing help (`usage` then the options),
// 2 after printing a parse error (an unknown flag gets "did you mean").
// Returns nullopt when parsing succeeded and the command should run.
//
// Synonyms, so that one spelling works everywhere: where a command has --out
// and no --output, --output means --out, and the reverse; where its --out
// takes a directory (value name "DIR"), --out-dir means --out too. The help
// lists them.
std::optional<int> ParseOptions(const Args& args, const std::string& command,
                                const std::string& usage, po::options_description& options,
                                po::variables_map& vm,
                                const po::positional_options_description* positional = nullptr,
                                const po::options_description* hidden = nullptr);

// A value with a default shown in the help as written ("0.9", not
// "0.90000000000000002"): the shortest text that reads back as `value`.
po::typed_value<double>* DoubleValue(double* target, double value);

// A value that names a file or a directory, shown so in the help
// ("--out FILE", "--out DIR").
po::typed_value<std::string>* FileValue(std::string* target);
po::typed_value<std::string>* DirValue(std::string* target);

// Prints "kvbill COMMAND: message" to stderr and returns the error's exit status.
int ReportError(const std::string& command, const Error& error);

// Writes `text` to stdout when `path` is empty or "-", else atomically to
// `path` and then says so on stderr (NoteWritten).
// Checks an output directory before the work: an existing directory kvbill
// may write into, or a path whose nearest existing parent is one. (Output
// files: CheckOutputPath; ParseOptions checks -o/--out of every command.)
Status CheckOutputDirectory(const std::string& dir);

Status EmitOutput(const std::string& command, const std::string& text, const std::string& path);

// Prints "kvbill COMMAND: wrote PATH (SIZE)" to stderr: every file a command
// writes is named once, on stderr so that stdout stays the command's output.
void NoteWritten(const std::string& command, const std::string& path);

// Prints 'kvbill COMMAND: unknown subcommand "stat"; did you mean stats?
// (`kvbill COMMAND --help` lists them all)' (or, when nothing in `known` is
// close, '...; run `kvbill COMMAND --help`') to stderr and returns 2.
int UnknownSubcommand(const std::string& command, const std::string& typed,
                      const std::vector<std::string>& known);

// Validates a --format value against the allowed list ("table|json|csv");
// the error suggests the closest allowed value.
Status CheckChoice(const std::string& flag, const std::string& value, const std::string& allowed);

// A share of the GPU (--memory-fraction, --bandwidth-efficiency,
// --compute-efficiency) in [0.01, 1], the range a scenario's keys take:
// "--FLAG: must be in [0.01, 1], got X".
Status CheckShare(const std::string& flag, double value);

// Checks --trace before the scenario is read, so that a directory is blamed
// on the flag the user gave, not on the scenario key it replaces. Error:
// "--trace: DIR: a directory, not a trace file". An empty value, "-" and a
// path that does not exist pass (the trace reader names the last).
Status CheckTraceFlag(const std::string& trace);

// A scenario as the commands that run one read it: its text and the name
// its errors carry. "default" is the bundled scenarios/default.json; a
// --trace on the command line replaces the scenario's workload, as a path
// of the working directory (the scenario's own paths are its directory's).
// Errors: "--scenario: PATH: file not found", "--trace: ...".
struct ScenarioText {
  std::string text;
  std::string source;
  std::string as_read;  // the scenario's own text, before a --trace was written into it
};
Result<ScenarioText> ReadScenarioText(const std::string& scenario_path, const std::string& trace);

// The files a scenario reads beside itself: its trace, a model, draft or GPU
// given as a file, a profile given as a file (catalog and bundled names are
// not files and add nothing).
void AddFilesRead(const Scenario& s, std::set<std::string>* files);

// What a shard of a sweep or a plan was computed from, as 16 hex digits of
// HashString: the scenario's text and the bytes of each file it reads
// (`files`, AddFilesRead). Shards re-run after an edit of any of them carry
// another fingerprint, and merge refuses to join them. The files' contents
// count, not their paths, so shards run from other checkouts of the same
// inputs still merge. Errors: a file that cannot be read.
Result<std::string> InputsFingerprint(const std::string& scenario_text,
                                      const std::set<std::string>& files);

// The --load list of compare and report: "0.25,1,4" -> {0.25, 1, 4}, each a
// number in trace.load's range [1e-6, 1e6]. Errors: '--load: "x" is not a
// positive number (a list like 0.25,1,4)', '--load: "1e9" is outside
// trace.load's range [1e-06, 1e+06]'.
Result<std::vector<double>> ParseLoads(const std::string& list);

// --block-size of kv, fit and plot: 1 to 1,048,576 tokens (vLLM's blocks
// are 16 to a few thousand, a hybrid model's enlarged ones included; a
// larger figure is a typo that would inflate every footprint). Error:
// "--block-size: must be in [1, 1048576], got N".
Status CheckBlockSize(std::int64_t block_size);

// A run's warnings as every JSON output gives them: [{"code", "message"}].
nlohmann::ordered_json WarningsJson(const std::vector<RunWarning>& warnings);

// CSV holds rows only: a run's warnings go to standard error instead, one
// line each, "kvbill COMMAND: warning [CODE]: MESSAGE" (`what`, when given,
// names the part of the run they belong to: "kvbill whatif: self_hosted:
// warning [...]").
void WarnOnStandardError(std::string_view command, const std::vector<RunWarning>& warnings,
                         std::string_view what = "");

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_CLI_UTIL_H_
