#include "cli/cli_util.h"

#include <iostream>
#include <sstream>

#include "kvbill/util/file.h"

namespace kvbill::cli {

std::optional<int> ParseOptions(const Args& args, const std::string& command,
                                const std::string& usage, po::options_description& options,
                                po::variables_map& vm,
                                const po::positional_options_description* positional) {
  options.add_options()("help,h", "show this help");
  try {
    po::command_line_parser parser(args);
    parser.options(options);
    // A command without positional arguments still gets an (empty)
    // description, so a stray argument is an error instead of being ignored.
    const po::positional_options_description none;
    parser.positional(positional != nullptr ? *positional : none);
    po::store(parser.run(), vm);
    if (vm.count("help") != 0) {
      std::cout << usage << "\n" << options << "\n";
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kvbill " << command << ": " << e.what() << "\n"
              << "run `kvbill " << command << " --help` for the options\n";
    return Error::kInputExitStatus;
  }
  return std::nullopt;
}

int ReportError(const std::string& command, const Error& error) {
  std::cerr << "kvbill " << command << ": " << error.message() << "\n";
  return error.exit_status();
}

Status EmitOutput(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    return OkStatus();
  }
  return WriteFileAtomically(path, text);
}

Status CheckChoice(const std::string& flag, const std::string& value, const std::string& allowed) {
  std::stringstream ss(allowed);
  std::string choice;
  while (std::getline(ss, choice, '|')) {
    if (choice == value) return OkStatus();
  }
  return Error("--" + flag + ": \"" + value + "\" is not one of " + allowed);
}

}  // namespace kvbill::cli
