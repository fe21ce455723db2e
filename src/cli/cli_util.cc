#include "cli/cli_util.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/standard_output.h"
#include "kvbill/cache/block_hash.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"
#include "kvbill/util/names.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {
namespace {

// The value name of option `name` in `options` ("FILE", "DIR", "arg"), or ""
// when there is no such option.
std::string ValueName(const po::options_description& options, const std::string& name) {
  const po::option_description* d = options.find_nothrow(name, false);
  return d == nullptr ? "" : d->semantic()->name();
}

struct Synonym {
  std::string alias;      // without "--"
  std::string canonical;  // the option it stands for
};

std::vector<Synonym> SynonymsOf(const po::options_description& options) {
  const bool has_out = !ValueName(options, "out").empty();
  const bool has_output = !ValueName(options, "output").empty();
  std::vector<Synonym> out;
  if (has_out && !has_output) out.push_back({"output", "out"});
  if (has_output && !has_out) out.push_back({"out", "output"});
  if (has_out && ValueName(options, "out") == "DIR" && ValueName(options, "out-dir").empty()) {
    out.push_back({"out-dir", "out"});
  }
  return out;
}

// `args` with each synonym written as its canonical flag ("--output=x" ->
// "--out=x"); nothing after a "--" is touched.
Args Canonical(const Args& args, const std::vector<Synonym>& synonyms) {
  Args out;
  bool options_end = false;
  for (const std::string& a : args) {
    std::string arg = a;
    if (a == "--") options_end = true;
    for (const Synonym& s : synonyms) {
      if (options_end) break;
      const std::string flag = "--" + s.alias;
      if (a == flag || a.starts_with(flag + "=")) {
        arg = "--" + s.canonical + a.substr(flag.size());
        break;
      }
    }
    out.push_back(arg);
  }
  return out;
}

// The long flags of `options`, without "--".
std::vector<std::string> LongFlags(const po::options_description& options) {
  std::vector<std::string> out;
  for (const auto& d : options.options()) {
    if (!d->long_name().empty()) out.push_back(d->long_name());
  }
  return out;
}

}  // namespace

std::optional<int> ParseOptions(const Args& args, const std::string& command,
                                const std::string& usage, po::options_description& options,
                                po::variables_map& vm,
                                const po::positional_options_description* positional,
                                const po::options_description* hidden) {
  options.add_options()("help,h", "show this help");
  const std::vector<Synonym> synonyms = SynonymsOf(options);
  std::vector<std::string> flags = LongFlags(options);
  for (const Synonym& s : synonyms) flags.push_back(s.alias);
  try {
    po::options_description all;
    all.add(options);
    if (hidden != nullptr) all.add(*hidden);
    po::command_line_parser parser(Canonical(args, synonyms));
    parser.options(all);
    // No abbreviations (Boost's default guesses --form for --format): a
    // script's abbreviation would turn ambiguous, or mean another option,
    // the day an option is added.
    parser.style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing);
    // A command without positional arguments still gets an (empty)
    // description, so a stray argument is an error instead of being ignored.
    const po::positional_options_description none;
    parser.positional(positional != nullptr ? *positional : none);
    po::store(parser.run(), vm);
    if (vm.count("help") != 0) {
      std::cout << usage << "\n" << options;
      for (const Synonym& s : synonyms) {
        std::cout << "  --" << s.alias << " is the same as --" << s.canonical << "\n";
      }
      std::cout << "\n";
      return 0;
    }
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    const std::string typed = e.get_option_name();
    const std::string hint =
        typed.starts_with("--") ? DidYouMean(typed.substr(2), flags, "--") : "";
    std::cerr << "kvbill " << command << ": unrecognised option '" << typed << "'"
              << (hint.empty() ? "" : "; " + hint) << "\n"
              << "run `kvbill " << command << " --help` for the options\n";
    return Error::kInputExitStatus;
  } catch (const po::error& e) {
    std::cerr << "kvbill " << command << ": " << e.what() << "\n"
              << "run `kvbill " << command << " --help` for the options\n";
    return Error::kInputExitStatus;
  }
  // An empty value is a mistake (an unset shell variable), never "not
  // given": `--trace ""` ran the scenario's own workload, `-o ""` wrote to
  // standard output.
  for (const auto& [name, value] : vm) {
    if (value.defaulted()) continue;
    bool empty = false;
    if (value.value().type() == typeid(std::string)) {
      empty = value.as<std::string>().empty();
    } else if (value.value().type() == typeid(std::vector<std::string>)) {
      const auto& list = value.as<std::vector<std::string>>();
      empty = std::find(list.begin(), list.end(), std::string()) != list.end();
    }
    if (!empty) continue;
    // Each command names one positional argument.
    const bool positional_name = positional != nullptr && positional->max_total_count() > 0 &&
                                 positional->name_for_position(0) == name;
    std::cerr << "kvbill " << command << ": "
              << (positional_name ? "an empty argument" : "--" + name + ": an empty value")
              << " (give one, or leave it out)\n";
    return Error::kInputExitStatus;
  }
  // A bad output path fails now, before the work (docs/robustness.md).
  for (const char* name : {"out", "output"}) {
    const po::option_description* option = options.find_nothrow(name, false);
    if (option == nullptr || vm.count(name) == 0 || vm[name].value().type() != typeid(std::string))
      continue;
    const std::string& path = vm[name].as<std::string>();
    if (path.empty() || path == "-") continue;
    std::optional<Error> bad;
    if (option->semantic()->name() == "DIR") {
      if (Status s = CheckOutputDirectory(path); !s) bad = s.error();
    } else if (auto kind = CheckOutputPath(path); !kind) {
      bad = kind.error();
    }
    if (bad) {
      std::cerr << "kvbill " << command << ": " << bad->message() << "\n";
      return bad->exit_status();
    }
  }
  return std::nullopt;
}

Status CheckOutputDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(dir, ec);
  if (fs::is_directory(status)) {
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      return Error(dir + ": cannot write into: " + std::strerror(errno));
    }
    return OkStatus();
  }
  // Something else already there: reported when the output is written, so
  // that an input error found first keeps its message.
  if (fs::exists(status)) return OkStatus();
  // Created later with its missing parents: the nearest existing one must
  // be a directory that takes new entries.
  fs::path parent = fs::path(dir).parent_path();
  while (!parent.empty() && !fs::exists(parent, ec)) parent = parent.parent_path();
  const std::string at = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(at, ec))
    return Error(dir + ": cannot create: " + at + " is not a directory");
  if (access(at.c_str(), W_OK | X_OK) != 0) {
    return Error(dir + ": cannot create: " + std::strerror(errno));
  }
  return OkStatus();
}

Status CheckShare(const std::string& flag, double value) {
  if (value >= 0.01 && value <= 1) return OkStatus();
  return Error("--" + flag + ": must be in [0.01, 1], got " + ShortestDecimal(value));
}

po::typed_value<double>* DoubleValue(double* target, double value) {
  return po::value(target)->default_value(value, ShortestDecimal(value));
}

po::typed_value<std::string>* FileValue(std::string* target) {
  return po::value(target)->value_name("FILE");
}

po::typed_value<std::string>* DirValue(std::string* target) {
  return po::value(target)->value_name("DIR");
}

int ReportError(const std::string& command, const Error& error) {
  std::cerr << "kvbill " << command << ": " << error.message() << "\n";
  return error.exit_status();
}

Status EmitOutput(const std::string& command, const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return FlushStandardOutput();
  }
  if (Status s = WriteFileAtomically(path, text); !s) return s;
  NoteWritten(command, path);
  return OkStatus();
}

void NoteWritten(const std::string& command, const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  std::cerr << "kvbill " << command << ": wrote " << path;
  if (!ec) std::cerr << " (" << FormatBinaryBytes(static_cast<double>(size)) << ")";
  std::cerr << "\n";
}

int UnknownSubcommand(const std::string& command, const std::string& typed,
                      const std::vector<std::string>& known) {
  const std::string hint = DidYouMean(typed, known);
  const std::string help = "`kvbill " + command + " --help`";
  std::cerr << "kvbill " << command << ": unknown subcommand \"" << typed << "\"; "
            << (hint.empty() ? "run " + help : hint + " (" + help + " lists them all)") << "\n";
  return Error::kInputExitStatus;
}

Status CheckChoice(const std::string& flag, const std::string& value, const std::string& allowed) {
  std::stringstream ss(allowed);
  std::string choice;
  std::vector<std::string> choices;
  while (std::getline(ss, choice, '|')) {
    if (choice == value) return OkStatus();
    choices.push_back(choice);
  }
  const std::string hint = DidYouMean(value, choices);
  return Error("--" + flag + ": \"" + value + "\" is not one of " + allowed +
               (hint.empty() ? "" : "; " + hint));
}

Status CheckTraceFlag(const std::string& trace) {
  if (trace.empty() || trace == "-") return OkStatus();
  std::error_code ec;
  if (std::filesystem::is_directory(trace, ec)) {
    return Error("--trace: " + trace + ": a directory, not a trace file");
  }
  if (!std::filesystem::exists(trace, ec)) return Error("--trace: " + trace + ": file not found");
  return OkStatus();
}

Result<ScenarioText> ReadScenarioText(const std::string& scenario_path, const std::string& trace) {
  if (auto s = CheckTraceFlag(trace); !s) return s.error();
  ScenarioText s{"", scenario_path, ""};
  if (scenario_path == "default") {
    s.text = std::string(EmbeddedFile("default.json").value_or(""));
    s.source = "scenarios/default.json";
  } else if (auto path = CheckScenarioPath(scenario_path); !path) {
    return path.error().Within("--scenario");
  } else {
    auto read = ReadFile(scenario_path);
    if (!read) return read.error().Within("--scenario");
    s.text = std::move(*read);
  }
  s.as_read = s.text;
  if (!trace.empty()) {
    const std::string file = trace == "-" ? trace : std::filesystem::absolute(trace).string();
    auto edited = WithSetting(s.text, "/trace", nlohmann::json({{"file", file}}).dump());
    if (!edited) return edited.error().Within("--trace");
    s.text = std::move(*edited);
  }
  return s;
}

// "0.25,1,4" -> {0.25, 1, 4}; each a positive number.
Result<std::vector<double>> ParseLoads(const std::string& list) {
  std::vector<double> loads;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, comma - start);
    const std::optional<double> v = ParsePositiveNumber(item);
    if (!v) {
      return Error("--load: \"" + item + "\" is not a positive number (a list like 0.25,1,4)");
    }
    // trace.load's own range (the key's, docs/scenario-format.md): the flag
    // is refused itself, not blamed on the scenario it is written into.
    if (*v < 1e-6 || *v > 1e6) {
      return Error("--load: \"" + item + "\" is outside trace.load's range [1e-06, 1e+06]");
    }
    // The same load twice would run and print the same comparison twice.
    if (std::find(loads.begin(), loads.end(), *v) != loads.end()) {
      return Error("--load: \"" + item + "\" is given twice");
    }
    loads.push_back(*v);
    start = comma + 1;
  }
  return loads;
}

Status CheckBlockSize(std::int64_t block_size) {
  if (block_size < 1 || block_size > (std::int64_t{1} << 20)) {
    return Error("--block-size: must be in [1, 1048576], got " + std::to_string(block_size));
  }
  return OkStatus();
}

nlohmann::ordered_json WarningsJson(const std::vector<RunWarning>& warnings) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const RunWarning& w : warnings) out.push_back({{"code", w.code}, {"message", w.message}});
  return out;
}

void WarnOnStandardError(std::string_view command, const std::vector<RunWarning>& warnings,
                         std::string_view what) {
  for (const RunWarning& w : warnings) {
    std::cerr << "kvbill " << command << ": " << what << (what.empty() ? "" : ": ") << "warning ["
              << w.code << "]: " << w.message << "\n";
  }
}

void AddFilesRead(const Scenario& s, std::set<std::string>* files) {
  std::vector<std::string> named = {s.trace.file, s.model.name, s.deployment.gpu,
                                    s.deployment.profile};
  if (s.deployment.speculative) named.push_back(s.deployment.speculative->model);
  std::error_code ec;
  for (const std::string& f : named) {
    if (!f.empty() && std::filesystem::is_regular_file(f, ec)) files->insert(f);
  }
}

Result<std::string> InputsFingerprint(const std::string& scenario_text,
                                      const std::set<std::string>& files) {
  std::vector<std::uint64_t> contents;
  for (const std::string& f : files) {
    auto bytes = ReadFile(f);
    if (!bytes) return bytes.error();
    contents.push_back(HashString(*bytes));
  }
  std::sort(contents.begin(), contents.end());
  std::uint64_t h = HashString(scenario_text);
  for (std::uint64_t c : contents) h = HashCombine(h, c);
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return std::string(text);
}

}  // namespace kvbill::cli
