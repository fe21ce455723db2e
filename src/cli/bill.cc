// kvbill bill: price recorded agent logs (Claude Code, Codex) exactly as the
// provider reported their usage; docs/billing.md.
#include "kvbill/bill/bill.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_util.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/util/file.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {
namespace {

namespace fs = std::filesystem;
using OJson = nlohmann::ordered_json;

constexpr char kUsage[] =
    "usage: kvbill bill [LOG...] [OPTIONS]\n\n"
    "Prices the API usage recorded in Claude Code transcripts (JSONL or a JSON array),\n"
    "headless result lines and Codex rollouts, per session, day, model or call.\n"
    "A LOG may be a file or a directory (read recursively). Without LOG: the\n"
    "projects/ of $CLAUDE_CONFIG_DIR (comma-separated) or ~/.config/claude and\n"
    "~/.claude, and $CODEX_HOME/sessions or ~/.codex/sessions.\n"
    "Money is exact (whole pico-dollars); dates are UTC unless --timezone. See docs/billing.md.";

struct Options {
  std::vector<std::string> logs;
  std::string by = "session";
  std::string since, until;
  std::string format = "table";
  std::string prices;
  std::vector<std::string> price_overrides;
  std::string output;
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
  const int month = std::stoi(digits.substr(4, 2));
  const int day = std::stoi(digits.substr(6, 2));
  if (month < 1 || month > 12 || day < 1 || day > 31) {
    return Error("--" + flag + ": \"" + text + "\" is not a date (YYYY-MM-DD or YYYYMMDD)");
  }
  return digits.substr(0, 4) + "-" + digits.substr(4, 2) + "-" + digits.substr(6, 2);
}

// The files of a directory, recursively, with one of the extensions, sorted.
std::vector<std::string> FilesUnder(const fs::path& dir, const std::vector<std::string>& exts) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it =
           fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string ext = it->path().extension().string();
    if (std::find(exts.begin(), exts.end(), ext) != exts.end())
      files.push_back(it->path().string());
  }
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
Status ReadOne(const std::string& path, UsageLog* log, bool* had_usage) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(path + ": cannot open: " + std::strerror(errno));
  const std::size_t before = log->calls.size() + log->runs.size();
  if (auto s = ReadUsageLog(in, path, log); !s) return s;
  *had_usage = log->calls.size() + log->runs.size() > before;
  return OkStatus();
}

Result<UsageLog> ReadLogs(const Options& options, std::int64_t* skipped_files) {
  UsageLog log;
  bool had_usage = false;
  if (options.logs.empty()) {
    const std::vector<std::string> dirs = DefaultLogDirs();
    std::int64_t files = 0;
    for (const std::string& dir : dirs) {
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) continue;
      for (const std::string& file : FilesUnder(dir, {".jsonl"})) {
        ++files;
        if (auto s = ReadOne(file, &log, &had_usage); !s) return s.error();
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
      for (const std::string& file : FilesUnder(path, {".jsonl", ".json"})) {
        if (auto s = ReadOne(file, &log, &had_usage); !s) return s.error();
        if (!had_usage) ++*skipped_files;
      }
      continue;
    }
    if (auto s = ReadOne(path, &log, &had_usage); !s) return s.error();
    if (!had_usage) {
      return Error(path +
                   ": no usage found (no Claude Code assistant line with message.usage, no "
                   "result line with total_cost_usd, no Codex token_count event)");
    }
  }
  return log;
}

OJson TokensJson(const CallUsage& u) {
  return {{"input", u.input},
          {"cache_write_5m", u.cache_write_5m},
          {"cache_write_1h", u.cache_write_1h},
          {"cache_read", u.cache_read},
          {"output", u.output}};
}

OJson ModelJson(const ModelBill& m) {
  OJson j;
  if (m.priced()) {
    j["priced_as"] = m.priced_as;
  } else {
    j["unpriced"] = true;
  }
  j["calls"] = m.calls;
  if (m.long_context_calls > 0) j["long_context_calls"] = m.long_context_calls;
  j["tokens"] = TokensJson(m.usage);
  j["cost_usd"] = m.priced() ? OJson(m.cost.usd()) : OJson(nullptr);
  if (m.reported_cost_usd) j["reported_cost_usd"] = *m.reported_cost_usd;
  if (m.reported_usage) {
    j["reported_tokens"] = TokensJson(*m.reported_usage);
    j["reported_usage_cost_usd"] =
        m.reported_usage_cost ? OJson(m.reported_usage_cost->usd()) : OJson(nullptr);
  }
  return j;
}

OJson GroupJson(const GroupBill& g, bool with_id) {
  OJson j;
  if (with_id) j["id"] = g.id;
  j["calls"] = g.calls;
  if (g.unpriced_calls > 0) j["unpriced_calls"] = g.unpriced_calls;
  j["cost_usd"] = g.cost.usd();
  if (g.reported_cost_usd) j["reported_cost_usd"] = *g.reported_cost_usd;
  if (g.reported_usage_cost) j["reported_usage_cost_usd"] = g.reported_usage_cost->usd();
  OJson models = OJson::object();
  for (const auto& [id, m] : g.by_model) models[id] = ModelJson(m);
  j["by_model"] = models;
  return j;
}

std::string TimeText(const LoggedCall& call, const TimeZone& zone) {
  return call.time_ns ? zone.Date(*call.time_ns) : "";
}

std::string RenderJson(const Bill& bill, const PriceSheet& sheet, const Options& options) {
  OJson j;
  j["price_sheet"] = {{"as_of", sheet.as_of()}, {"source", sheet.source()}};
  if (!options.zone.is_utc()) j["time_zone"] = options.zone.name();
  OJson sessions = OJson::array();
  for (const GroupBill& g : bill.sessions) sessions.push_back(GroupJson(g, true));
  j["sessions"] = sessions;
  if (options.by == "day") {
    OJson days = OJson::array();
    for (const GroupBill& g : bill.days) days.push_back(GroupJson(g, true));
    j["days"] = days;
  }
  if (options.by == "call") {
    OJson calls = OJson::array();
    for (const CallBill& c : bill.calls) {
      OJson row = {{"session", c.call->session},
                   {"model", c.call->model},
                   {"date", TimeText(*c.call, options.zone)},
                   {"where", c.call->where},
                   {"tokens", TokensJson(c.call->usage)}};
      row["cost_usd"] = c.priced_as.empty() ? OJson(nullptr) : OJson(c.cost.cost.usd());
      if (c.cost.long_context) row["long_context"] = true;
      calls.push_back(row);
    }
    j["per_call"] = calls;
  }
  const GroupBill& t = bill.total;
  j["calls"] = t.calls;
  j["unpriced_calls"] = t.unpriced_calls;
  j["duplicate_lines"] = bill.duplicate_lines;
  j["by_model"] = GroupJson(t, false)["by_model"];
  j["total_cost_usd"] = t.cost.usd();
  if (t.reported_cost_usd) j["reported_cost_usd"] = *t.reported_cost_usd;
  if (t.reported_usage_cost) j["reported_usage_cost_usd"] = t.reported_usage_cost->usd();
  return j.dump(2) + "\n";
}

// A double as JSON prints it (shortest text that reads back the same).
std::string Num(double value) { return OJson(value).dump(); }

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string TokenCells(const CallUsage& u) {
  return std::to_string(u.input) + "," + std::to_string(u.cache_write_5m) + "," +
         std::to_string(u.cache_write_1h) + "," + std::to_string(u.cache_read) + "," +
         std::to_string(u.output);
}

std::string RenderCsv(const Bill& bill, const Options& options) {
  std::ostringstream out;
  const std::string tokens =
      "input_tokens,cache_write_5m_tokens,cache_write_1h_tokens,cache_read_tokens,output_tokens";
  if (options.by == "call") {
    out << "session,model,date,where," << tokens << ",cost_usd,long_context\n";
    for (const CallBill& c : bill.calls) {
      out << CsvField(c.call->session) << "," << CsvField(c.call->model) << ","
          << TimeText(*c.call, options.zone) << "," << CsvField(c.call->where) << ","
          << TokenCells(c.call->usage) << ","
          << (c.priced_as.empty() ? "unpriced" : FormatUsdExact(c.cost.cost)) << ","
          << (c.cost.long_context ? 1 : 0) << "\n";
    }
    return out.str();
  }
  out << options.by << ",model,calls," << tokens
      << ",cost_usd,reported_usage_cost_usd,reported_cost_usd\n";
  const auto row = [&](const std::string& group, const std::string& model, const ModelBill& m) {
    out << CsvField(group) << "," << CsvField(model) << "," << m.calls << "," << TokenCells(m.usage)
        << "," << (m.priced() ? FormatUsdExact(m.cost) : "unpriced") << ","
        << (m.reported_usage_cost ? FormatUsdExact(*m.reported_usage_cost) : "") << ","
        << (m.reported_cost_usd ? Num(*m.reported_cost_usd) : "") << "\n";
  };
  const std::vector<GroupBill>& groups = options.by == "day" ? bill.days
                                         : options.by == "session"
                                             ? bill.sessions
                                             : std::vector<GroupBill>{bill.total};
  for (const GroupBill& g : groups) {
    for (const auto& [id, m] : g.by_model) row(options.by == "model" ? id : g.id, id, m);
  }
  return out.str();
}

std::string Pad(const std::string& text, std::size_t width, bool left) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return left ? text + fill : fill + text;
}

std::string RenderTable(const Bill& bill, const PriceSheet& sheet, const Options& options) {
  std::ostringstream out;
  out << "prices: " << sheet.source() << " (as of " << sheet.as_of() << ")\n";
  if (!options.zone.is_utc()) out << "dates in " << options.zone.name() << "\n";
  out << "\n";
  const std::string head = options.by == "call" ? "session" : options.by;
  const bool by_model = options.by == "model";
  std::size_t key_width = head.size(), model_width = 5;
  const std::vector<GroupBill>& groups = options.by == "day" ? bill.days : bill.sessions;
  for (const GroupBill& g : groups) key_width = std::max(key_width, g.id.size());
  for (const auto& [id, m] : bill.total.by_model) {
    std::size_t& width = by_model ? key_width : model_width;
    width = std::max(width, id.size());
  }
  if (by_model) model_width = 0;
  key_width = std::min<std::size_t>(key_width, 40);
  const auto line = [&](const std::string& key, const std::string& model, std::int64_t calls,
                        const CallUsage& u, const std::string& cost, const std::string& usage_cost,
                        const std::string& reported) {
    out << Pad(key, key_width + 2, true) << Pad(model, model_width + 2, true)
        << Pad(FormatWithSeparators(calls), 7, false)
        << Pad(FormatWithSeparators(u.input), 12, false)
        << Pad(FormatWithSeparators(u.cache_write()), 13, false)
        << Pad(FormatWithSeparators(u.cache_read), 14, false)
        << Pad(FormatWithSeparators(u.output), 11, false) << Pad(cost, 12, false)
        << Pad(usage_cost, 14, false) << Pad(reported, 12, false) << "\n";
  };
  const auto money = [](const std::optional<Money>& m) { return m ? FormatUsd(*m, 4) : ""; };
  const auto reported = [](const std::optional<double>& usd) {
    return usd ? FormatUsd(Money{std::llround(*usd * 1e12)}, 4) : "";
  };
  out << Pad(head, key_width + 2, true) << Pad(by_model ? "" : "model", model_width + 2, true)
      << Pad("calls", 7, false) << Pad("input", 12, false) << Pad("cache write", 13, false)
      << Pad("cache read", 14, false) << Pad("output", 11, false) << Pad("cost", 12, false)
      << Pad("result usage", 14, false) << Pad("reported", 12, false) << "\n";
  const auto group_rows = [&](const GroupBill& g, const std::string& key, bool models_only) {
    if (!models_only) {
      CallUsage usage;
      for (const auto& [id, m] : g.by_model) usage += m.usage;
      line(key, "", g.calls, usage, FormatUsd(g.cost, 4) + (g.unpriced_calls > 0 ? "+?" : ""),
           money(g.reported_usage_cost), reported(g.reported_cost_usd));
    }
    for (const auto& [id, m] : g.by_model) {
      line(models_only ? id : "", models_only ? "" : id, m.calls, m.usage,
           m.priced() ? FormatUsd(m.cost, 4) : "unpriced", money(m.reported_usage_cost),
           reported(m.reported_cost_usd));
    }
  };
  if (options.by == "call") {
    for (const CallBill& c : bill.calls) {
      line(c.call->session, c.call->model, 1, c.call->usage,
           c.priced_as.empty() ? "unpriced"
                               : FormatUsd(c.cost.cost, 4) + (c.cost.long_context ? " L" : ""),
           "", "");
    }
  } else if (options.by == "model") {
    group_rows(bill.total, "", true);
  } else {
    for (const GroupBill& g : groups) group_rows(g, g.id, false);
  }
  out << "\n";
  if (by_model) {
    CallUsage usage;
    for (const auto& [id, m] : bill.total.by_model) usage += m.usage;
    const GroupBill& t = bill.total;
    line("total", "", t.calls, usage, FormatUsd(t.cost, 4) + (t.unpriced_calls > 0 ? "+?" : ""),
         money(t.reported_usage_cost), reported(t.reported_cost_usd));
  } else {
    group_rows(bill.total, "total", false);
  }
  if (bill.total.unpriced_calls > 0) {
    out << "\n+? : plus " << FormatWithSeparators(bill.total.unpriced_calls)
        << " unpriced call(s), see the \"unpriced\" lines\n";
  }
  if (bill.duplicate_lines > 0) {
    out << "\n"
        << FormatWithSeparators(bill.duplicate_lines)
        << " line(s) repeated a call already counted (same message id, request id or Codex\n"
           "running totals) and were not billed again\n";
  }
  out << "\ncost: kvbill's price of the logged calls; result usage: kvbill's price of the\n"
         "per-model usage on the provider's result lines; reported: the provider's own cost.\n";
  return out.str();
}

}  // namespace

int RunBill(const Args& args) {
  const std::string command = "bill";
  Options options;
  po::options_description desc("options");
  desc.add_options()("log", po::value(&options.logs), "log files or directories")(
      "by", po::value(&options.by), "session|day|model|call (default session)")(
      "since", po::value(&options.since), "first UTC date to bill, YYYY-MM-DD")(
      "until", po::value(&options.until), "last UTC date to bill, YYYY-MM-DD")(
      "timezone", po::value(&options.timezone),
      "dates (--by day, --since, --until) in this zone: UTC (default), an offset like +02:00, "
      "an IANA name like Europe/Berlin, or local")("format", po::value(&options.format),
                                                   "table|json|csv (default table)")(
      "prices", po::value(&options.prices),
      "price sheet to use instead of the bundled one: kvbill's format or LiteLLM's "
      "model_prices_and_context_window.json")(
      "price", po::value(&options.price_overrides)->composing(),
      "override or add a price, $ per Mtok: MODEL:field=value[,field=value] "
      "(fields: input output cache_read cache_write_5m cache_write_1h ...)")(
      "output,o", po::value(&options.output), "write here instead of stdout (atomically)");
  po::positional_options_description positional;
  positional.add("log", -1);
  po::variables_map vm;
  if (auto stop = ParseOptions(args, command, kUsage, desc, vm, &positional)) return *stop;

  if (auto s = CheckChoice("by", options.by, "session|day|model|call"); !s) {
    return ReportError(command, s.error());
  }
  if (auto s = CheckChoice("format", options.format, "table|json|csv"); !s) {
    return ReportError(command, s.error());
  }
  auto zone = TimeZone::Parse(options.timezone);
  if (!zone) return ReportError(command, zone.error().Within("--timezone"));
  options.zone = *zone;
  BillOptions bill_options;
  bill_options.time_zone = *zone;
  for (auto [flag, text, target] : {std::tuple{"since", &options.since, &bill_options.since},
                                    std::tuple{"until", &options.until, &bill_options.until}}) {
    if (text->empty()) continue;
    auto date = ParseDate(flag, *text);
    if (!date) return ReportError(command, date.error());
    *target = *date;
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

  std::string text;
  if (options.format == "json") {
    text = RenderJson(*bill, *sheet, options);
  } else if (options.format == "csv") {
    text = RenderCsv(*bill, options);
  } else {
    text = RenderTable(*bill, *sheet, options);
  }
  if (auto s = EmitOutput(text, options.output); !s) return ReportError(command, s.error());
  for (const auto& [id, m] : bill->total.by_model) {
    if (m.priced() || m.calls == 0) continue;
    std::cerr << "kvbill bill: " << m.calls << " call" << (m.calls == 1 ? "" : "s")
              << " of model \"" << id << "\" unpriced: no price in the sheet (add one with --price "
              << id << ":input=...,output=... or --prices FILE)\n";
  }
  return 0;
}

}  // namespace kvbill::cli
