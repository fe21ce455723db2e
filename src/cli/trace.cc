// kvbill trace stats | convert | gen: read a trace in any supported format,
// summarise it or write it in the native format; gen is in trace_gen.cc.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/trace_gen.h"
#include "kvbill/trace/importers.h"
#include "kvbill/trace/stats.h"
#include "kvbill/trace/writer.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {
namespace {

constexpr char kTraceUsage[] =
    "usage: kvbill trace SUBCOMMAND [OPTIONS]\n\n"
    "subcommands:\n"
    "  stats FILE      tasks, requests, prompt / appended / output tokens, gaps, reuse\n"
    "  convert IN      write a trace in the native format (docs/trace-format.md)\n"
    "  gen             write a synthetic trace from a preset (docs/generator.md)\n\n"
    "Run `kvbill trace SUBCOMMAND --help` for its options.";

struct ReadOptions {
  std::string from;
  bool skip_bad = false;
};

void AddReadOptions(po::options_description& options, ReadOptions* read) {
  options.add_options()(
      "from", po::value(&read->from),
      ("input format, detected from the content when absent: " + TraceFormatChoices()).c_str())(
      "skip-bad", po::bool_switch(&read->skip_bad),
      "count and skip malformed lines instead of failing on the first one");
}

Result<std::unique_ptr<TraceReader>> Open(const std::string& path, const ReadOptions& read) {
  std::optional<TraceFormat> format;
  if (!read.from.empty()) {
    auto parsed = ParseTraceFormat(read.from);
    if (!parsed) return parsed.error().Within("--from");
    format = *parsed;
  }
  return OpenTrace(path, format, ReaderOptions{read.skip_bad});
}

// Prints the skipped-line report to stderr, when lines were skipped.
void ReportSkipped(const std::string& command, const TraceReader& reader) {
  const BadLineReport& bad = reader.bad_lines();
  if (bad.count == 0) return;
  std::cerr << "kvbill " << command << ": skipped " << bad.count << " bad line"
            << (bad.count == 1 ? "" : "s") << "\n";
  for (const std::string& message : bad.first_messages) std::cerr << "  " << message << "\n";
  if (bad.count > static_cast<std::int64_t>(bad.first_messages.size())) {
    std::cerr << "  ...\n";
  }
}

nlohmann::ordered_json Number(double value) {
  constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53
  if (value == static_cast<double>(static_cast<std::int64_t>(value)) &&
      value < kExactIntegerLimit && value > -kExactIntegerLimit) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

// A distribution of no sample (single-turn tasks have no gap and no
// growth) has null statistics, a sum of 0 and a count of 0.
nlohmann::ordered_json SummaryJson(const Summary& s) {
  auto stat = [&](double v) { return s.count > 0 ? Number(v) : nlohmann::ordered_json(nullptr); };
  return {{"mean", stat(s.mean)}, {"p50", stat(s.p50)}, {"p90", stat(s.p90)},
          {"p99", stat(s.p99)},   {"max", stat(s.max)}, {"sum", Number(s.sum)},
          {"count", s.count}};
}

std::string StatsJson(const TraceStats& stats, std::int64_t skipped) {
  nlohmann::ordered_json json;
  json["tasks"] = stats.tasks;
  json["requests"] = stats.requests;
  json["turns_per_task"] = SummaryJson(stats.turns_per_task);
  json["input_tokens"] = SummaryJson(stats.input_tokens);
  json["appended_tokens"] = SummaryJson(stats.appended_tokens);
  json["output_tokens"] = SummaryJson(stats.output_tokens);
  json["context_growth_tokens"] = SummaryJson(stats.context_growth_tokens);
  json["gap_s"] = SummaryJson(stats.gap_s);
  json["placeholder_outputs"] = stats.placeholder_outputs;
  json["task_prefix_reuse_share"] = stats.task_prefix_reuse_share;
  json["block_reuse_share"] =
      stats.block_reuse_share ? nlohmann::ordered_json(*stats.block_reuse_share) : nullptr;
  // false: beyond kExactBlockHashes distinct hashes, estimated with a Bloom
  // filter (docs/robustness.md#memory-of-trace-stats).
  json["block_reuse_exact"] = stats.block_reuse_exact;
  json["skipped_lines"] = skipped;
  return json.dump(2) + "\n";
}

std::string Pad(const std::string& text, std::size_t width, bool left) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return left ? text + fill : fill + text;
}

std::string StatsTable(const TraceStats& stats, const std::string& path) {
  std::ostringstream out;
  out << "trace      " << path << "\n"
      << "tasks      " << FormatWithSeparators(stats.tasks) << "\n"
      << "requests   " << FormatWithSeparators(stats.requests) << "\n\n";
  // Columns keep their usual 14 characters and widen to two spaces more than
  // their widest cell, so large numbers never run together
  // (docs/robustness.md#table-columns).
  const std::vector<std::string> heads = {"mean", "p50", "p90", "p99", "max", "sum"};
  const struct {
    const char* name;
    const Summary* summary;
    int decimals;
  } rows[] = {
      {"turns per task", &stats.turns_per_task, 0},
      {"prompt tokens", &stats.input_tokens, 0},
      {"appended tokens", &stats.appended_tokens, 0},
      {"output tokens", &stats.output_tokens, 0},
      {"context growth tokens", &stats.context_growth_tokens, 0},
      {"gap s", &stats.gap_s, 2},
  };
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : rows) {
    const Summary& s = *row.summary;
    // No sample (single-turn tasks have no gap and no growth): "none", not
    // 0, for the statistics; the sum of nothing is 0, as JSON gives it.
    if (s.count == 0) {
      std::vector<std::string> none(heads.size() - 1, "none");
      none.push_back(FormatFixed(0, row.decimals));
      cells.push_back(std::move(none));
      continue;
    }
    std::vector<std::string> line = {FormatFixed(s.mean, 2)};
    for (double v : {s.p50, s.p90, s.p99, s.max, s.sum}) {
      line.push_back(FormatFixed(v, row.decimals));
    }
    cells.push_back(std::move(line));
  }
  constexpr std::size_t kMinWidth = 14, kGap = 2;
  std::vector<std::size_t> widths(heads.size(), kMinWidth);
  for (const auto& line : cells) {
    for (std::size_t c = 0; c < line.size(); ++c) {
      widths[c] = std::max(widths[c], line[c].size() + kGap);
    }
  }
  out << Pad("per request", 24, true);
  for (std::size_t c = 0; c < heads.size(); ++c) out << Pad(heads[c], widths[c], false);
  out << "\n";
  for (std::size_t r = 0; r < cells.size(); ++r) {
    out << Pad(rows[r].name, 24, true);
    for (std::size_t c = 0; c < cells[r].size(); ++c) out << Pad(cells[r][c], widths[c], false);
    out << "\n";
  }
  out << "\nplaceholder outputs        " << FormatWithSeparators(stats.placeholder_outputs) << "\n"
      << "task prefix reuse share    " << FormatFixed(stats.task_prefix_reuse_share * 100, 1)
      << "%\n";
  if (stats.block_reuse_share) {
    out << "block reuse share          " << FormatFixed(*stats.block_reuse_share * 100, 1) << "%"
        << (stats.block_reuse_exact
                ? ""
                : " (estimated: more than " + FormatWithSeparators(kExactBlockHashes) +
                      " distinct block hashes, held in a Bloom filter)")
        << "\n";
  }
  return out.str();
}

// A file its reader turns into no task (a Claude Code log of user lines
// only, an empty list): an error, as simulate gives it, not an empty answer.
// Under a --from that detection would not have picked, the error says what
// detection reads the file as (a wrong --from is the likelier cause).
Error NoTasks(const std::string& file, const ReadOptions& read) {
  std::string hint;
  if (!read.from.empty()) {
    const std::optional<TraceFormat> detected = DetectTraceFileFormat(file);
    if (detected && TraceFormatName(*detected) != read.from) {
      const std::string name(TraceFormatName(*detected));
      hint = "; detection reads it as " + name + ", not " + read.from + " (try --from " + name +
             ", or leave --from out)";
    }
  }
  return Error(file + ": no tasks (nothing in it the reader turns into a request)" + hint);
}

int RunTraceStats(const Args& args) {
  const std::string command = "trace stats";
  std::string file, format = "table", output;
  ReadOptions read;
  po::options_description options("options");
  options.add_options()("file", FileValue(&file)->required(), "the trace file to read")(
      "format", po::value(&format), "table|json (default table)")(
      "output,o", FileValue(&output), "write to FILE instead of stdout (atomically)");
  AddReadOptions(options, &read);
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  if (auto stop = ParseOptions(args, command, "usage: kvbill trace stats FILE [OPTIONS]", options,
                               vm, &positional)) {
    return *stop;
  }
  if (auto s = CheckChoice("format", format, "table|json"); !s) {
    return ReportError(command, s.error());
  }
  auto reader = Open(file, read);
  if (!reader) return ReportError(command, reader.error());
  auto stats = ComputeTraceStats(reader->get());
  if (!stats) return ReportError(command, stats.error());
  if (stats->tasks == 0) return ReportError(command, NoTasks(file, read));
  ReportSkipped(command, **reader);
  const std::string text =
      format == "json" ? StatsJson(*stats, (*reader)->bad_lines().count) : StatsTable(*stats, file);
  if (auto s = EmitOutput(command, text, output); !s) return ReportError(command, s.error());
  return 0;
}

int RunTraceConvert(const Args& args) {
  const std::string command = "trace convert";
  std::string in, to, output;
  ReadOptions read;
  po::options_description options("options");
  options.add_options()("in", FileValue(&in)->required(), "the trace file to read")(
      "to", po::value(&to)->required(), "output format: native")(
      "output,o", FileValue(&output)->required(),
      "output file (\"-\" for stdout); written only when the whole input is good");
  AddReadOptions(options, &read);
  po::positional_options_description positional;
  positional.add("in", 1);
  po::variables_map vm;
  if (auto stop =
          ParseOptions(args, command, "usage: kvbill trace convert IN --to native -o OUT [OPTIONS]",
                       options, vm, &positional)) {
    return *stop;
  }
  if (auto s = CheckChoice("to", to, "native"); !s) return ReportError(command, s.error());
  auto reader = Open(in, read);
  if (!reader) return ReportError(command, reader.error());
  std::ostringstream text;
  TraceWriter writer(&text);
  Task task;
  std::int64_t tasks = 0;
  while (true) {
    auto more = (*reader)->Next(&task);
    if (!more) return ReportError(command, more.error());
    if (!*more) break;
    if (auto s = writer.Write(task); !s) return ReportError(command, s.error().Within(in));
    ++tasks;
  }
  if (tasks == 0) return ReportError(command, NoTasks(in, read));
  ReportSkipped(command, **reader);
  if (auto s = EmitOutput(command, text.str(), output); !s) return ReportError(command, s.error());
  return 0;
}

}  // namespace

int RunTrace(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? std::cerr : std::cout) << kTraceUsage << "\n";
    return args.empty() ? Error::kInputExitStatus : 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "stats") return RunTraceStats(rest);
  if (args[0] == "convert") return RunTraceConvert(rest);
  if (args[0] == "gen") return RunTraceGen(rest);
  return UnknownSubcommand("trace", args[0], {"stats", "convert", "gen"});
}

}  // namespace kvbill::cli
