// kvbill scenario: the scenario format itself — its JSON Schema, the
// generated tables of docs/scenario-format.md, and scenarios made from a
// vLLM serve command line.
#include <algorithm>
#include <iostream>

#include "cli/cli_util.h"
#include "kvbill/hardware/catalog_names.h"
#include "kvbill/scenario/from_vllm.h"
#include "kvbill/scenario/scenario_keys.h"
#include "kvbill/util/file.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill scenario schema [-o FILE]\n"
    "       kvbill scenario docs FILE [--write | --check]\n"
    "       kvbill scenario from-vllm [--gpu G] [-o FILE] -- [NAME=VALUE ...] vllm serve MODEL "
    "[FLAGS]\n\n"
    "schema     the JSON Schema (draft 2020-12) of scenario files, for editors\n"
    "           (docs/scenario-format.md#editors)\n"
    "docs       FILE with its generated key tables rewritten from the key table: printed,\n"
    "           written back (--write), or compared (--check: exit 1 when FILE differs)\n"
    "from-vllm  a scenario from a vLLM serve command line; flags kvbill cannot express are\n"
    "           listed on stderr and under \"notes\" "
    "(docs/scenario-format.md#from-a-vllm-command-line)\n";

int RunSchema(const Args& args) {
  const std::string command = "scenario schema";
  std::string output;
  po::options_description options("options");
  options.add_options()("output,o", FileValue(&output), "write to FILE instead of stdout");
  po::variables_map vm;
  if (auto stop =
          ParseOptions(args, command, "usage: kvbill scenario schema [-o FILE]", options, vm)) {
    return *stop;
  }
  if (auto s = EmitOutput(command, ScenarioJsonSchema(), output); !s)
    return ReportError(command, s.error());
  return 0;
}

int RunDocs(const Args& args) {
  const std::string command = "scenario docs";
  std::string file;
  bool write = false, check = false;
  po::options_description options("options");
  options.add_options()("file", FileValue(&file)->required(),
                        "the doc, e.g. docs/scenario-format.md")("write", po::bool_switch(&write),
                                                                 "rewrite FILE in place")(
      "check", po::bool_switch(&check), "exit 1 when FILE differs from what --write writes");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  if (auto stop =
          ParseOptions(args, command, "usage: kvbill scenario docs FILE [--write | --check]",
                       options, vm, &positional)) {
    return *stop;
  }
  if (write && check) return ReportError(command, Error("give --write or --check, not both"));
  auto text = ReadFile(file, /*to_rewrite=*/true);
  if (!text) return ReportError(command, text.error());
  auto generated = WithGeneratedScenarioDocs(*text);
  if (!generated) return ReportError(command, generated.error().Within(file));
  if (check) {
    if (*generated == *text) return 0;
    std::cerr << "kvbill " << command << ": " << file
              << " differs from the key table: run `kvbill scenario docs " << file
              << " --write` and commit it\n";
    return 1;
  }
  if (write) {
    if (auto s = WriteFileAtomically(file, *generated); !s) return ReportError(command, s.error());
    NoteWritten(command, file);
    return 0;
  }
  std::cout << *generated;
  return 0;
}

int RunFromVllm(const Args& args) {
  const std::string command = "scenario from-vllm";
  const auto dashes = std::find(args.begin(), args.end(), "--");
  const Args own(args.begin(), dashes);
  std::string gpu, output;
  po::options_description options("options");
  options.add_options()("gpu", po::value(&gpu), "deployment.gpu (the command line does not say)")(
      "output,o", FileValue(&output), "write to FILE instead of stdout (atomically)");
  po::variables_map vm;
  if (auto stop = ParseOptions(own, command,
                               "usage: kvbill scenario from-vllm [--gpu G] [-o FILE] -- "
                               "[NAME=VALUE ...] vllm serve MODEL [FLAGS]",
                               options, vm)) {
    return *stop;
  }
  if (dashes == args.end()) {
    return ReportError(command, Error("expected `-- vllm serve MODEL [FLAGS]` after the options"));
  }
  if (!gpu.empty()) {
    auto id = ResolveGpuName(gpu);
    if (!id) return ReportError(command, id.error());
    gpu = *id;
  }
  auto scenario = ScenarioFromVllm(Args(dashes + 1, args.end()), FromVllmOptions{gpu});
  if (!scenario) return ReportError(command, scenario.error());
  for (const std::string& note : scenario->notes) {
    std::cerr << "kvbill " << command << ": note: " << note << "\n";
  }
  if (auto s = EmitOutput(command, scenario->json_text, output); !s)
    return ReportError(command, s.error());
  return 0;
}

}  // namespace

int RunScenarioCommand(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? Error::kInputExitStatus : 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "schema") return RunSchema(rest);
  if (args[0] == "docs") return RunDocs(rest);
  if (args[0] == "from-vllm") return RunFromVllm(rest);
  return UnknownSubcommand("scenario", args[0], {"schema", "docs", "from-vllm"});
}

}  // namespace kvbill::cli
