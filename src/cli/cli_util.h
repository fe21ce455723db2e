// Shared plumbing of the subcommands: option parsing with Boost.Program_options
// (errors exit 2), error printing, and output to stdout or an atomically
// written file.
#ifndef KVBILL_CLI_CLI_UTIL_H_
#define KVBILL_CLI_CLI_UTIL_H_

#include <boost/program_options.hpp>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "kvbill/util/result.h"

namespace kvbill::cli {

namespace po = boost::program_options;

// Parses `args` against `options` (plus an implicit --help/-h) and positional
// names. Returns an exit status when the command should stop now: 0 after
// printing help (`usage` then the options), 2 after printing a parse error.
// Returns nullopt when parsing succeeded and the command should run.
std::optional<int> ParseOptions(const Args& args, const std::string& command,
                                const std::string& usage, po::options_description& options,
                                po::variables_map& vm,
                                const po::positional_options_description* positional = nullptr);

// Prints "kvbill COMMAND: message" to stderr and returns the error's exit status.
int ReportError(const std::string& command, const Error& error);

// Writes `text` to stdout when `path` is empty or "-", else atomically to `path`.
Status EmitOutput(const std::string& text, const std::string& path);

// Validates a --format value against the allowed list ("table|json|csv").
Status CheckChoice(const std::string& flag, const std::string& value, const std::string& allowed);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_CLI_UTIL_H_
