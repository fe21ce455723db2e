#include "cli/trace_gen.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include "cli/atomic_output.h"
#include "cli/cli_util.h"
#include "cli/standard_output.h"
#include "kvbill/trace/generator.h"
#include "kvbill/trace/writer.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {
namespace {

// The latest arrival a simulation times (the engine's bound, 31.7 years).
constexpr Seconds kLatestArrivalSeconds = 1e9;

// Writes `tasks` generated tasks to `out` (none when null); a task past the
// latest arrival is an error naming the rate.
Status Generate(TraceGenerator* generator, std::int64_t tasks, std::ostream* out) {
  std::optional<TraceWriter> writer;
  if (out != nullptr) writer.emplace(out);
  for (std::int64_t i = 0; i < tasks; ++i) {
    const Task task = generator->Next();
    if (!(task.arrival_s <= kLatestArrivalSeconds)) {
      return Error("--arrivals-per-s: task " + std::to_string(i + 1) +
                   " would arrive beyond the 1e9 s (31.7 years) a simulation can time: a "
                   "higher rate");
    }
    if (writer) {
      if (auto s = writer->Write(task); !s) return s;
    }
  }
  if (out == nullptr) return OkStatus();
  out->flush();
  if (!*out) return Error("write failed");
  return OkStatus();
}

}  // namespace

int RunTraceGen(const Args& args) {
  const std::string command = "trace gen";
  std::string preset_name, output;
  std::int64_t tasks = 0;
  std::string seed_text = "1";
  double arrivals_per_s = 0;
  po::options_description options("options");
  options.add_options()("preset", po::value(&preset_name)->required(),
                        ("workload preset: " + GeneratorPresetChoices()).c_str())(
      "tasks", po::value(&tasks)->required(), "number of tasks (agent sessions), > 0")(
      "seed", po::value(&seed_text),
      "random seed, an integer in [0, 2^64); the same seed gives the same file (default 1)")(
      "arrivals-per-s", po::value(&arrivals_per_s),
      "Poisson rate of task arrivals, > 0 (default: the preset's)")(
      "output,o", FileValue(&output)->required(),
      "output file (\"-\" for stdout), native format, written atomically");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, command,
                               "usage: kvbill trace gen --preset NAME --tasks N [--seed S] -o OUT",
                               options, vm)) {
    return *stop;
  }
  auto preset = FindGeneratorPreset(preset_name);
  if (!preset) return ReportError(command, preset.error().Within("--preset"));
  if (tasks <= 0) {
    return ReportError(command,
                       Error("--tasks: must be a positive integer, got " + std::to_string(tasks)));
  }
  if (tasks > kMaxGeneratedTasks) {
    return ReportError(
        command, Error("--tasks: at most " + FormatWithSeparators(kMaxGeneratedTasks) + ", got " +
                       FormatWithSeparators(tasks)));
  }
  // Read as text: a negative seed would wrap around to a huge one.
  std::uint64_t seed = 0;
  if (const auto [end, error] =
          std::from_chars(seed_text.data(), seed_text.data() + seed_text.size(), seed);
      error != std::errc() || end != seed_text.data() + seed_text.size()) {
    return ReportError(command,
                       Error("--seed: must be an integer in [0, 2^64), got \"" + seed_text + "\""));
  }
  if (vm.count("arrivals-per-s") != 0) {
    if (!(arrivals_per_s > 0 && std::isfinite(arrivals_per_s))) {
      std::ostringstream got;
      got << arrivals_per_s;
      return ReportError(
          command, Error("--arrivals-per-s: must be a positive finite rate, got " + got.str()));
    }
    preset->arrivals_per_s = arrivals_per_s;
  }
  if (output == "-") {
    // Standard output cannot be taken back: a first pass over the same
    // seed checks every arrival before the first byte is written.
    TraceGenerator check(*preset, seed);
    if (auto s = Generate(&check, tasks, nullptr); !s) return ReportError(command, s.error());
    TraceGenerator generator(std::move(*preset), seed);
    if (auto s = Generate(&generator, tasks, &std::cout); !s) {
      // A failed write stops the generation: said as main says it.
      if (auto written = FlushStandardOutput(); !written)
        return ReportError(command, written.error());
      return ReportError(command, s.error().Within("stdout"));
    }
    return 0;
  }
  TraceGenerator generator(std::move(*preset), seed);
  auto file = AtomicOutputFile::Create(output);
  if (!file) return ReportError(command, file.error());
  if (auto s = Generate(&generator, tasks, &(*file)->stream()); !s) {
    return ReportError(command, s.error().Within(output));
  }
  if (auto s = (*file)->Commit(); !s) return ReportError(command, s.error());
  NoteWritten(command, output);
  return 0;
}

}  // namespace kvbill::cli
