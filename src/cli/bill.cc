// kvbill bill: price recorded agent logs (Claude Code, Codex) exactly as the
// provider reported their usage; docs/billing.md.
#include "kvbill/bill/bill.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include "cli/bill_report.h"
#include "cli/cli_util.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/util/file.h"
#include "kvbill/util/names.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kUsage[] =
    "usage: kvbill bill [LOG...] [OPTIONS]\n\n"
    "Prices the API usage recorded in Claude Code transcripts (JSONL or a JSON array),\n"
    "headless result lines and Codex rollouts, per session, day, week, month, model,\n"
    "5-hour block or call.\n"
    "A LOG may be a file or a directory (read recursively). Without LOG: the\n"
    "projects/ of $CLAUDE_CONFIG_DIR (comma-separated) or ~/.config/claude and\n"
    "~/.claude, and $CODEX_HOME/sessions or ~/.codex/sessions.\n"
    "Money is exact (whole pico-dollars); dates are UTC unless --timezone. See docs/billing.md.";

struct Options {
  std::vector<std::string> logs;
  std::string by = "session";
  std::string since, until;
  std::string format = "table";
  bool json = false;  // --json: --format json
  std::string mode = "auto";
  std::string order;
  std::string start_of_week = "sunday";
  std::string prices;
  std::vector<std::string> price_overrides;
  std::string output;
  bool skip_unreadable = false;
  std::string timezone = "UTC";
  TimeZone zone;  // parsed --timezone
};

// "2026-01-12" or "20260112" as "2026-01-12".
Result<std::string> ParseDate(const std::string& flag, const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (c != '-') digits += c;
  }
  const bool shape = (text.size() == 10 && text[4] == '-' && text[7] == '-') || text.size() == 8;
  if (!shape || digits.size() != 8 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Error("--" + flag + ": \"" + text + "\" is not a date (YYYY-MM-DD or YYYYMMDD)");
  }
  // A day of its month: 2025-02-30 and 2026-04-31 are not dates, 2024-02-29 is.
  const std::chrono::year_month_day date{
      std::chrono::year{std::stoi(digits.substr(0, 4))},
      std::chrono::month{static_cast<unsigned>(std::stoi(digits.substr(4, 2)))},
      std::chrono::day{static_cast<unsigned>(std::stoi(digits.substr(6, 2)))}};
  if (!date.ok()) {
    return Error("--" + flag + ": \"" + text +
                 "\" is not a date (YYYY-MM-DD or YYYYMMDD, a day its month has)");
  }
  return digits.substr(0, 4) + "-" + digits.substr(4, 2) + "-" + digits.substr(6, 2);
}

// A directory or file under a LOG directory that cannot be opened: an error
// naming it (the default), or with --skip-unreadable a warning on stderr and
// the walk goes on. A LOG named on the command line is always read.
struct Unreadable {
  bool skip = false;

  Status Handle(const Error& error) const {
    if (!skip) {
      return Error(error.message() + " (--skip-unreadable skips what cannot be read)");
    }
    std::cerr << "kvbill bill: warning: " << error.message() << "; skipped\n";
    return OkStatus();
  }
};

// Appends the files under `dir` with one of the extensions, recursively (not
// into links to directories). `dir` itself must open.
Status CollectFiles(const fs::path& dir, const std::vector<std::string>& exts,
                    const Unreadable& unreadable, std::vector<std::string>* files) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return Error(dir.string() + ": cannot open directory: " + ec.message());
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_symlink(entry_ec) && it->is_directory(entry_ec)) {
      if (auto s = CollectFiles(it->path(), exts, unreadable, files); !s) {
        if (auto h = unreadable.Handle(s.error()); !h) return h;
      }
      continue;
    }
    if (!it->is_regular_file(entry_ec)) continue;
    const std::string ext = it->path().extension().string();
    if (std::find(exts.begin(), exts.end(), ext) != exts.end())
      files->push_back(it->path().string());
  }
  if (ec) return Error(dir.string() + ": cannot read directory: " + ec.message());
  return OkStatus();
}

// The files of a directory, recursively, with one of the extensions, sorted.
Result<std::vector<std::string>> FilesUnder(const fs::path& dir,
                                            const std::vector<std::string>& exts,
                                            const Unreadable& unreadable) {
  std::vector<std::string> files;
  if (auto s = CollectFiles(dir, exts, unreadable, &files); !s) return s.error();
  std::sort(files.begin(), files.end());
  return files;
}

// Where Claude Code and Codex keep their logs.
std::vector<std::string> DefaultLogDirs() {
  std::vector<std::string> dirs;
  const char* home = std::getenv("HOME");
  const std::string home_dir = home != nullptr ? home : "";
  if (const char* config = std::getenv("CLAUDE_CONFIG_DIR"); config != nullptr && *config != 0) {
    std::stringstream list(config);
    std::string dir;
    while (std::getline(list, dir, ',')) {
      if (!dir.empty()) dirs.push_back(dir + "/projects");
    }
  } else if (!home_dir.empty()) {
    dirs.push_back(home_dir + "/.config/claude/projects");
    dirs.push_back(home_dir + "/.claude/projects");
  }
  if (const char* codex = std::getenv("CODEX_HOME"); codex != nullptr && *codex != 0) {
    dirs.push_back(std::string(codex) + "/sessions");
  } else if (!home_dir.empty()) {
    dirs.push_back(home_dir + "/.codex/sessions");
  }
  return dirs;
}

// Reads one file into *log; *had_usage says whether it held any call or run.
// `unreadable`: a file found in a directory (nullptr: one named on the
// command line, which must open).
Status ReadOne(const std::string& path, UsageLog* log, bool* had_usage,
               const Unreadable* unreadable) {
  *had_usage = false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return unreadable != nullptr ? unreadable->Handle(OpenError(path)) : OpenError(path);
  NoteInputFile(path);
  const std::size_t before = log->calls.size() + log->runs.size();
  if (auto s = ReadUsageLog(in, path, log); !s) return s;
  *had_usage = log->calls.size() + log->runs.size() > before;
  return OkStatus();
}

Result<UsageLog> ReadLogs(const Options& options, std::int64_t* skipped_files) {
  UsageLog log;
  bool had_usage = false;
  const Unreadable unreadable{options.skip_unreadable};
  if (options.logs.empty()) {
    const std::vector<std::string> dirs = DefaultLogDirs();
    std::int64_t files = 0;
    for (const std::string& dir : dirs) {
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) continue;
      auto found = FilesUnder(dir, {".jsonl"}, unreadable);
      if (!found) return found.error();
      for (const std::string& file : *found) {
        ++files;
        if (auto s = ReadOne(file, &log, &had_usage, &unreadable); !s) return s.error();
        if (!had_usage) ++*skipped_files;
      }
    }
    if (files == 0) {
      std::string looked;
      for (const std::string& dir : dirs) looked += (looked.empty() ? "" : ", ") + dir;
      return Error("no logs found (looked in " + looked + "); name a LOG");
    }
    return log;
  }
  for (const std::string& path : options.logs) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      auto found = FilesUnder(path, {".jsonl", ".json"}, unreadable);
      if (!found) return found.error();
      bool any_usage = false;
      for (const std::string& file : *found) {
        if (auto s = ReadOne(file, &log, &had_usage, &unreadable); !s) return s.error();
        if (!had_usage) ++*skipped_files;
        any_usage = any_usage || had_usage;
      }
      // A LOG named on the command line must bill something: a directory
      // with no log in it is a wrong path, not a $0 bill.
      if (!any_usage) {
        return Error(path + ": no usage found under it (" + std::to_string(found->size()) +
                     " .jsonl/.json file" + (found->size() == 1 ? "" : "s") +
                     "; none with a Claude Code assistant line with message.usage, a result "
                     "line with total_cost_usd or a Codex token_count event)");
      }
      continue;
    }
    if (auto s = ReadOne(path, &log, &had_usage, nullptr); !s) return s.error();
    if (!had_usage) {
      // A kvbill trace converted from a log keeps the usage per turn but
      // not the provider's lines, dates and ids that bill groups by.
      std::ifstream in(path);
      std::string first;
      std::getline(in, first);
      const bool native = first.find("\"kvbill_trace\"") != std::string::npos;
      return Error(path +
                   ": no usage found (no Claude Code assistant line with message.usage, no "
                   "result line with total_cost_usd, no Codex token_count event)" +
                   (native ? std::string("; it is a kvbill trace: bill the provider's log it was "
                                         "converted from, or price the trace's recorded usage "
                                         "with `kvbill whatif`")
                           : std::string()));
    }
  }
  return log;
}

// The view a --by value names.
BillView ViewOf(const std::string& by) {
  static const std::map<std::string, BillView> kViews = {
      {"session", BillView::kSession}, {"day", BillView::kDay},     {"week", BillView::kWeek},
      {"month", BillView::kMonth},     {"model", BillView::kModel}, {"block", BillView::kBlock},
      {"call", BillView::kCall}};
  return kViews.at(by);
}

// 0 = Sunday ... 6 = Saturday.
int WeekdayNumber(const std::string& name) {
  static const char* const kDays[] = {"sunday",   "monday", "tuesday", "wednesday",
                                      "thursday", "friday", "saturday"};
  return static_cast<int>(std::find(std::begin(kDays), std::end(kDays), name) - std::begin(kDays));
}

}  // namespace

int RunBill(const Args& args) {
  const std::string command = "bill";
  Options options;
  po::options_description desc("options");
  desc.add_options()("log", po::value(&options.logs)->value_name("FILE|DIR"),
                     "log files or directories")(
      "by", po::value(&options.by),
      "session|day|week|month|model|block|call (default session; block: 5-hour windows)")(
      "since", po::value(&options.since), "first date to bill, YYYY-MM-DD or YYYYMMDD")(
      "until", po::value(&options.until), "last date to bill, YYYY-MM-DD or YYYYMMDD")(
      "timezone", po::value(&options.timezone),
      "dates (--by day/week/month, --since, --until) in this zone: UTC (default), an offset "
      "like +02:00, an IANA name like Europe/Berlin, or local")(
      "format", po::value(&options.format), "table|json|csv (default table)")(
      "json", po::bool_switch(&options.json), "the same as --format json")(
      "mode", po::value(&options.mode),
      "auto|calculate|display: for lines that recorded a costUSD, use it (auto, the default), "
      "always price the tokens (calculate), or bill only recorded costs (display)")(
      "order", po::value(&options.order),
      "asc|desc: sessions by last activity, dates and blocks by date (default: sessions as "
      "logged, dates ascending)")(
      "start-of-week", po::value(&options.start_of_week),
      "first day of a week for --by week: sunday (default) ... saturday")(
      "prices", FileValue(&options.prices),
      "price sheet to use instead of the bundled one: kvbill's format or LiteLLM's "
      "model_prices_and_context_window.json")(
      "price", po::value(&options.price_overrides)->composing(),
      "override or add a price, $ per Mtok: MODEL:field=value[,field=value] "
      "(fields: input output cache_read cache_write_5m cache_write_1h fast_multiplier ...)")(
      "skip-unreadable", po::bool_switch(&options.skip_unreadable),
      "a file or directory under a LOG directory that cannot be read: warn and go on "
      "(default: an error)")("output,o", FileValue(&options.output),
                             "write to FILE instead of stdout (atomically)");
  po::positional_options_description positional;
  positional.add("log", -1);
  po::variables_map vm;
  if (auto stop = ParseOptions(args, command, kUsage, desc, vm, &positional)) return *stop;
  // A day's name in any case: "Monday" is monday.
  options.start_of_week = LowerAscii(options.start_of_week);

  for (const auto& [flag, value, allowed] :
       {std::tuple<std::string, std::string, std::string>{
            "by", options.by, "session|day|week|month|model|block|call"},
        {"format", options.format, "table|json|csv"},
        {"mode", options.mode, "auto|calculate|display"},
        {"start-of-week", options.start_of_week,
         "sunday|monday|tuesday|wednesday|thursday|friday|saturday"}}) {
    if (auto s = CheckChoice(flag, value, allowed); !s) return ReportError(command, s.error());
  }
  if (!options.order.empty()) {
    if (auto s = CheckChoice("order", options.order, "asc|desc"); !s) {
      return ReportError(command, s.error());
    }
  }
  if (options.json) {
    if (vm.count("format") > 0 && options.format != "json") {
      return ReportError(command, Error("--json and --format " + options.format + " disagree"));
    }
    options.format = "json";
  }
  auto zone = TimeZone::Parse(options.timezone);
  if (!zone) return ReportError(command, zone.error().Within("--timezone"));
  options.zone = *zone;
  BillOptions bill_options;
  bill_options.time_zone = *zone;
  bill_options.mode = options.mode == "auto"        ? CostMode::kAuto
                      : options.mode == "calculate" ? CostMode::kCalculate
                                                    : CostMode::kDisplay;
  bill_options.order = options.order.empty()    ? BillOrder::kLog
                       : options.order == "asc" ? BillOrder::kAscending
                                                : BillOrder::kDescending;
  bill_options.start_of_week = WeekdayNumber(options.start_of_week);
  bill_options.blocks = options.by == "block";
  for (auto [flag, text, target] : {std::tuple{"since", &options.since, &bill_options.since},
                                    std::tuple{"until", &options.until, &bill_options.until}}) {
    if (text->empty()) continue;
    auto date = ParseDate(flag, *text);
    if (!date) return ReportError(command, date.error());
    *target = *date;
  }
  // Both dates are inclusive: --since after --until bills nothing, which is
  // a mistake in the flags, not an empty bill.
  if (bill_options.since && bill_options.until && *bill_options.since > *bill_options.until) {
    return ReportError(command, Error("--since " + *bill_options.since + " is after --until " +
                                      *bill_options.until + " (both dates are billed)"));
  }
  Result<PriceSheet> sheet = Error("");
  if (options.prices.empty()) {
    sheet = BundledPriceSheet();
  } else {
    auto text = ReadFile(options.prices);
    if (!text) return ReportError(command, text.error().Within("--prices"));
    sheet = ParsePriceSheet(*text, options.prices);
  }
  if (!sheet) return ReportError(command, sheet.error());
  if (auto s = ApplyPriceOverrides(options.price_overrides, &*sheet); !s) {
    return ReportError(command, s.error());
  }
  std::int64_t skipped_files = 0;
  auto log = ReadLogs(options, &skipped_files);
  if (!log) return ReportError(command, log.error());
  auto bill = MakeBill(*log, *sheet, bill_options);
  if (!bill) return ReportError(command, bill.error());

  BillReportOptions report;
  report.view = ViewOf(options.by);
  report.view_name = options.by;
  report.zone = options.zone;
  report.mode = bill_options.mode;
  report.mode_matters = bill_options.mode != CostMode::kAuto ||
                        std::any_of(log->calls.begin(), log->calls.end(), [](const LoggedCall& c) {
                          return c.recorded_cost.has_value();
                        });
  std::string text;
  if (options.format == "json") {
    text = RenderBillJson(*bill, *log, *sheet, report);
  } else if (options.format == "csv") {
    text = RenderBillCsv(*bill, *log, report);
  } else {
    text = RenderBillTable(*bill, *log, *sheet, report);
  }
  if (auto s = EmitOutput(command, text, options.output); !s)
    return ReportError(command, s.error());
  if (!sheet->skipped().empty()) {
    const auto& skipped = sheet->skipped();
    std::string examples;
    for (std::size_t i = 0; i < skipped.size() && i < 3; ++i) {
      examples += (i > 0 ? ", \"" : "\"") + skipped[i].id + "\"";
    }
    std::cerr << "kvbill bill: " << options.prices << ": " << skipped.size() << " entr"
              << (skipped.size() == 1 ? "y" : "ies")
              << " skipped for want of input_cost_per_token or output_cost_per_token (" << examples
              << (skipped.size() > 3 ? ", ..." : "") << ")\n";
  }
  for (const std::string& note : UnpricedNotes(*bill, *sheet)) std::cerr << note << "\n";
  if (options.format == "csv") WarnOnStandardError(command, BillWarnings(*bill));
  return 0;
}

}  // namespace kvbill::cli
