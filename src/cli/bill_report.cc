// Rendering of `kvbill bill` (docs/billing.md#kvbill-bill).
#include "cli/bill_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <vector>

#include "cli/cli_util.h"
#include "cost/price_json.h"
#include "cost/provider_caches.h"
#include "kvbill/trace/importers.h"
#include "kvbill/util/units.h"

namespace kvbill::cli {
namespace {

using OJson = nlohmann::ordered_json;

const std::vector<GroupBill>& GroupsOf(const Bill& bill, BillView view) {
  switch (view) {
    case BillView::kDay:
      return bill.days;
    case BillView::kWeek:
      return bill.weeks;
    case BillView::kMonth:
      return bill.months;
    case BillView::kBlock:
      return bill.blocks;
    default:
      return bill.sessions;
  }
}

// The JSON key of a view's rows ("days", ...), empty for views without one.
std::string JsonKey(BillView view) {
  switch (view) {
    case BillView::kDay:
      return "days";
    case BillView::kWeek:
      return "weeks";
    case BillView::kMonth:
      return "months";
    case BillView::kBlock:
      return "blocks";
    default:
      return "";
  }
}

// "gpt-5 (assumed)" when every call of the row is priced at an assumed
// model, "gpt-5 (1 of 3 assumed)" when some are.
std::string ModelLabel(const std::string& id, const ModelBill& m) {
  if (m.assumed_model_calls <= 0) return id;
  if (m.assumed_model_calls >= m.calls) return id + " (assumed)";
  return id + " (" + FormatWithSeparators(m.assumed_model_calls) + " of " +
         FormatWithSeparators(m.calls) + " assumed)";
}

std::string LastActivity(const GroupBill& g, const TimeZone& zone) {
  return g.last_ns ? zone.Date(*g.last_ns) : "";
}

OJson TokensJson(const CallUsage& u) {
  OJson j = {{"input", u.input},
             {"cache_write_5m", u.cache_write_5m},
             {"cache_write_1h", u.cache_write_1h},
             {"cache_read", u.cache_read},
             {"output", u.output}};
  // Server-side web searches, billed per search: only where there are some.
  if (u.web_searches > 0) j["web_search_requests"] = u.web_searches;
  return j;
}

OJson ModelJson(const ModelBill& m) {
  OJson j;
  if (!m.priced_as.empty()) j["priced_as"] = m.priced_as;
  if (!m.priced()) j["unpriced"] = true;
  if (m.fast) j["speed"] = "fast";
  j["calls"] = m.calls;
  if (m.priced() && m.unpriced_calls > 0) j["unpriced_calls"] = m.unpriced_calls;
  if (m.recorded_cost_calls > 0) j["recorded_cost_calls"] = m.recorded_cost_calls;
  if (m.assumed_model_calls > 0) j["assumed_model_calls"] = m.assumed_model_calls;
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

OJson GroupJson(const GroupBill& g, bool with_id, BillView kind, const TimeZone& zone) {
  OJson j;
  if (with_id) j["id"] = g.id;
  if (kind == BillView::kSession) {
    if (!g.project.empty()) j["project"] = g.project;
    if (g.last_ns) j["last_activity"] = LastActivity(g, zone);
  }
  if (kind == BillView::kBlock && g.start_ns) {
    j["start"] = g.id;
    j["end"] = UtcTime(*g.start_ns + kBlockSeconds * 1'000'000'000);
    j["last_activity"] = UtcTime(*g.last_ns);
  }
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

std::string DateText(const LoggedCall& call, const TimeZone& zone) {
  return call.time_ns ? zone.Date(*call.time_ns) : "";
}

std::string ModeName(CostMode mode) {
  switch (mode) {
    case CostMode::kAuto:
      return "auto";
    case CostMode::kCalculate:
      return "calculate";
    default:
      return "display";
  }
}

// The model key a call is grouped under.
std::string CallModel(const LoggedCall& call) {
  return call.fast ? call.model + "-fast" : call.model;
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

std::string Pad(const std::string& text, std::size_t width, bool left) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return left ? text + fill : fill + text;
}

// A column of the bill table: its usual width (spacing included) and side.
struct TableColumn {
  std::size_t width;
  bool left;
};

// The rows as lines: each column widened to hold its widest cell with two
// spaces after it (left-aligned) or one before it (right-aligned).
std::string LayOut(const std::vector<std::vector<std::string>>& rows,
                   std::vector<TableColumn> columns) {
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size() && i < columns.size(); ++i) {
      columns[i].width = std::max(columns[i].width, row[i].size() + (columns[i].left ? 2 : 1));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size() && i < columns.size(); ++i) {
      out += Pad(row[i], columns[i].width, columns[i].left);
    }
    out += "\n";
  }
  return out;
}

// A long working directory as its last `width` characters.
std::string Shorten(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  return "..." + text.substr(text.size() - (width - 3));
}

}  // namespace

std::string RenderBillJson(const Bill& bill, const UsageLog& log, const PriceSheet& sheet,
                           const BillReportOptions& options) {
  (void)log;
  OJson j;
  j["price_sheet"] = {{"as_of", sheet.as_of()}, {"source", sheet.source()}};
  if (!sheet.skipped().empty()) {
    j["price_sheet"]["skipped_entries"] = static_cast<std::int64_t>(sheet.skipped().size());
  }
  if (!options.zone.is_utc()) j["time_zone"] = options.zone.name();
  if (options.mode_matters) j["cost_mode"] = ModeName(options.mode);
  OJson sessions = OJson::array();
  for (const GroupBill& g : bill.sessions) {
    sessions.push_back(GroupJson(g, true, BillView::kSession, options.zone));
  }
  j["sessions"] = sessions;
  if (const std::string key = JsonKey(options.view); !key.empty()) {
    OJson rows = OJson::array();
    for (const GroupBill& g : GroupsOf(bill, options.view)) {
      rows.push_back(GroupJson(g, true, options.view, options.zone));
    }
    j[key] = rows;
  }
  if (options.view == BillView::kCall) {
    OJson calls = OJson::array();
    for (const CallBill& c : bill.calls) {
      OJson row = {{"session", c.call->session},
                   {"model", c.call->model},
                   {"date", DateText(*c.call, options.zone)},
                   {"where", c.call->where},
                   {"tokens", TokensJson(c.call->usage)}};
      row["cost_usd"] = c.unpriced != Unpriced::kNo ? OJson(nullptr) : OJson(c.cost.cost.usd());
      if (c.cost.long_context) row["long_context"] = true;
      if (c.call->fast) row["speed"] = "fast";
      if (c.call->us_only) row["inference_geo"] = "us";
      if (c.recorded) row["recorded_cost"] = true;
      if (c.call->assumed_model) row["assumed_model"] = true;
      calls.push_back(row);
    }
    j["per_call"] = calls;
  }
  const GroupBill& t = bill.total;
  j["calls"] = t.calls;
  j["unpriced_calls"] = t.unpriced_calls;
  j["duplicate_lines"] = bill.duplicate_lines;
  j["placeholder_output_calls"] = bill.placeholder_output_calls;
  if (bill.undated_left_out > 0) j["undated_left_out"] = bill.undated_left_out;
  j["by_model"] = GroupJson(t, false, BillView::kModel, options.zone)["by_model"];
  j["total_cost_usd"] = t.cost.usd();
  if (t.reported_cost_usd) j["reported_cost_usd"] = *t.reported_cost_usd;
  if (t.reported_usage_cost) j["reported_usage_cost_usd"] = t.reported_usage_cost->usd();
  if (const auto warnings = BillWarnings(bill); !warnings.empty()) {
    j["warnings"] = WarningsJson(warnings);
  }
  return j.dump(2) + "\n";
}

std::string PlaceholderWarning(const Bill& bill) {
  const std::int64_t n = bill.placeholder_output_calls;
  if (n == 0) return "";
  return FormatWithSeparators(n) + " of " + FormatWithSeparators(bill.total.calls) +
         " calls kept only a streaming placeholder output (" +
         std::to_string(kClaudeCodePlaceholderMaxOutput) +
         " tokens or fewer: Claude Code logged no final count for them); their output tokens "
         "and cost are understated";
}

std::vector<RunWarning> BillWarnings(const Bill& bill) {
  std::vector<RunWarning> out;
  if (bill.over_window_calls > 0) {
    out.push_back(RunWarning{
        "context_limit",
        FormatWithSeparators(bill.over_window_calls) +
            (bill.over_window_calls == 1 ? " call sent a prompt" : " calls sent prompts") +
            " above the model's context window in the price sheet (the largest " +
            FormatWithSeparators(bill.over_window_prompt) + " tokens to " + bill.over_window_model +
            ", whose window is " + FormatWithSeparators(bill.over_window_limit) +
            " tokens): the provider refuses such a request, so the log is damaged, names "
            "another model than the one that served the call, or the call ran with a longer "
            "(beta) window the sheet does not list; billed as recorded"});
  }
  if (std::string w = PlaceholderWarning(bill); !w.empty()) {
    out.push_back(RunWarning{"placeholder_outputs", std::move(w)});
  }
  // GPT-5.6 bills cache writes at 1.25x input; a Codex rollout reports no
  // writes (only cached input), so a call of such a model with an uncached
  // part past OpenAI's 1,024-token minimum is priced without its writes.
  std::int64_t unreported = 0;
  Tokens uncached = 0;
  for (const CallBill& c : bill.calls) {
    const std::string_view model =
        c.priced_as.empty() ? std::string_view(c.call->model) : c.priced_as;
    if (!OpenAiChargesCacheWrites(model) || c.call->usage.cache_write() > 0 ||
        c.call->usage.input < 1024) {
      continue;
    }
    ++unreported;
    uncached += c.call->usage.input;
  }
  if (unreported > 0) {
    out.push_back(RunWarning{
        "cache_writes_unreported",
        FormatWithSeparators(unreported) +
            " call(s) of a model that bills cache writes (GPT-5.6: 1.25x the input rate) report "
            "none (a Codex rollout logs only cached input), though " +
            FormatWithSeparators(uncached) +
            " uncached input tokens past OpenAI's 1,024-token minimum were likely written: "
            "billed as uncached input, their cost here is low by up to a quarter of those "
            "tokens' input price; `kvbill whatif`'s predicted column infers the writes"});
  }
  return out;
}

std::string RenderBillCsv(const Bill& bill, const UsageLog& log, const BillReportOptions& options) {
  (void)log;
  std::ostringstream out;
  const std::string tokens =
      "input_tokens,cache_write_5m_tokens,cache_write_1h_tokens,cache_read_tokens,output_tokens";
  if (options.view == BillView::kCall) {
    out << "session,model,date,where," << tokens << ",cost_usd,long_context,assumed_model\n";
    for (const CallBill& c : bill.calls) {
      out << CsvField(c.call->session) << "," << CsvField(CallModel(*c.call)) << ","
          << DateText(*c.call, options.zone) << "," << CsvField(c.call->where) << ","
          << TokenCells(c.call->usage) << ","
          << (c.unpriced != Unpriced::kNo ? "unpriced" : FormatUsdExact(c.cost.cost)) << ","
          << (c.cost.long_context ? 1 : 0) << "," << (c.call->assumed_model ? 1 : 0) << "\n";
    }
    return out.str();
  }
  const bool session = options.view == BillView::kSession;
  // By model the group is the model: one column for it, not two.
  const bool by_model = options.view == BillView::kModel;
  out << (by_model ? "" : options.view_name + ",") << "model,calls," << tokens
      << ",cost_usd,reported_usage_cost_usd,reported_cost_usd"
      << (session ? ",project,last_activity" : "") << ",assumed_model_calls\n";
  const auto row = [&](const GroupBill& g, const std::string& group, const std::string& model,
                       const ModelBill& m) {
    if (!by_model) out << CsvField(group) << ",";
    out << CsvField(model) << "," << m.calls << "," << TokenCells(m.usage) << ","
        << (m.priced() ? FormatUsdExact(m.cost) : "unpriced") << ","
        << (m.reported_usage_cost ? FormatUsdExact(*m.reported_usage_cost) : "") << ","
        << (m.reported_cost_usd ? Num(*m.reported_cost_usd) : "");
    if (session) out << "," << CsvField(g.project) << "," << LastActivity(g, options.zone);
    out << "," << m.assumed_model_calls << "\n";
  };
  if (options.view == BillView::kModel) {
    for (const auto& [id, m] : bill.total.by_model) row(bill.total, id, id, m);
    return out.str();
  }
  for (const GroupBill& g : GroupsOf(bill, options.view)) {
    for (const auto& [id, m] : g.by_model) row(g, g.id, id, m);
  }
  return out.str();
}

std::string RenderBillTable(const Bill& bill, const UsageLog& log, const PriceSheet& sheet,
                            const BillReportOptions& options) {
  (void)log;
  std::ostringstream out;
  out << "prices: " << sheet.source() << " (as of " << sheet.as_of() << ")\n";
  if (!options.zone.is_utc()) out << "dates in " << options.zone.name() << "\n";
  if (options.mode_matters) {
    out << "costs: "
        << (options.mode == CostMode::kAuto        ? "the costUSD a line recorded, else priced"
            : options.mode == CostMode::kCalculate ? "priced from tokens (recorded costUSD ignored)"
                                                   : "only the costUSD each line recorded")
        << " (--mode " << ModeName(options.mode) << ")\n";
  }
  out << "\n";
  const BillView view = options.view;
  const bool session = view == BillView::kSession;
  const bool by_model = view == BillView::kModel;
  const bool per_call = view == BillView::kCall;  // with each call's date and file:line
  const std::string head = view == BillView::kCall ? "session" : options.view_name;
  const std::vector<GroupBill>& groups = GroupsOf(bill, view);
  std::size_t key_width = head.size(), model_width = 5, project_width = 7;
  for (const GroupBill& g : groups) {
    key_width = std::max(key_width, g.id.size());
    project_width = std::max(project_width, g.project.size());
  }
  for (const auto& [id, m] : bill.total.by_model) {
    std::size_t& width = by_model ? key_width : model_width;
    width = std::max(width, ModelLabel(id, m).size());
  }
  if (by_model) model_width = 0;
  key_width = std::min<std::size_t>(key_width, 40);
  project_width = std::min<std::size_t>(project_width, 30);
  std::size_t where_width = 5;
  if (per_call) {
    for (const CallBill& c : bill.calls) where_width = std::max(where_width, c.call->where.size());
  }
  where_width = std::min<std::size_t>(where_width, 50);
  // The rows are laid out once every cell is known: a column is as wide as
  // its usual width or, when a cell needs more (a 2^40-token count, a
  // million-dollar cost, a key past 40 characters), as that cell and its
  // spacing, so that cells never run together. An empty row is a blank line.
  std::vector<TableColumn> columns = {{key_width + 2, true}};
  if (session) columns.insert(columns.end(), {{project_width + 2, true}, {15, true}});
  if (per_call) columns.insert(columns.end(), {{12, true}, {where_width + 2, true}});
  columns.insert(columns.end(), {{model_width + 2, true},
                                 {7, false},
                                 {12, false},
                                 {13, false},
                                 {14, false},
                                 {11, false},
                                 {12, false},
                                 {14, false},
                                 {12, false}});
  std::vector<std::vector<std::string>> rows;
  const auto line = [&](const std::string& key, const GroupBill* g, const std::string& model,
                        std::int64_t calls, const CallUsage& u, const std::string& cost,
                        const std::string& usage_cost, const std::string& reported,
                        const LoggedCall* call = nullptr) {
    std::vector<std::string> cells = {key};
    if (session) {
      cells.push_back(g != nullptr ? Shorten(g->project, project_width) : "");
      cells.push_back(g != nullptr ? LastActivity(*g, options.zone) : "");
    }
    if (per_call) {
      cells.push_back(call != nullptr ? DateText(*call, options.zone) : "");
      cells.push_back(call != nullptr ? Shorten(call->where, where_width) : "");
    }
    cells.insert(cells.end(),
                 {model, FormatWithSeparators(calls), FormatWithSeparators(u.input),
                  FormatWithSeparators(u.cache_write()), FormatWithSeparators(u.cache_read),
                  FormatWithSeparators(u.output), cost, usage_cost, reported});
    rows.push_back(std::move(cells));
  };
  const auto money = [](const std::optional<Money>& m) { return m ? FormatUsd(*m, 4) : ""; };
  const auto reported = [](const std::optional<double>& usd) {
    return usd ? FormatUsd(Money{std::llround(*usd * 1e12)}, 4) : "";
  };
  const auto group_cost = [](const GroupBill& g) {
    if (g.calls > 0 && g.unpriced_calls == g.calls) return std::string("unpriced");
    return FormatUsd(g.cost, 4) + (g.unpriced_calls > 0 ? "+?" : "");
  };
  const auto model_cost = [](const ModelBill& m) {
    if (!m.priced()) return std::string("unpriced");
    return FormatUsd(m.cost, 4) + (m.unpriced_calls > 0 ? "+?" : "");
  };
  {
    std::vector<std::string> header = {head};
    if (session) header.insert(header.end(), {"project", "last activity"});
    if (per_call) header.insert(header.end(), {"date", "where"});
    header.insert(header.end(), {by_model ? "" : "model", "calls", "input", "cache write",
                                 "cache read", "output", "cost", "result usage", "reported"});
    rows.push_back(std::move(header));
  }
  // A group of one model is one row; a group of several, a row and one
  // below it per model.
  const auto group_rows = [&](const GroupBill& g, const std::string& key) {
    if (g.by_model.size() == 1) {
      const auto& [id, m] = *g.by_model.begin();
      line(key, &g, ModelLabel(id, m), g.calls, m.usage, group_cost(g),
           money(g.reported_usage_cost), reported(g.reported_cost_usd));
      return;
    }
    CallUsage usage;
    for (const auto& [id, m] : g.by_model) usage += m.usage;
    line(key, &g, "", g.calls, usage, group_cost(g), money(g.reported_usage_cost),
         reported(g.reported_cost_usd));
    for (const auto& [id, m] : g.by_model) {
      line("", nullptr, ModelLabel(id, m), m.calls, m.usage, model_cost(m),
           money(m.reported_usage_cost), reported(m.reported_cost_usd));
    }
  };
  if (view == BillView::kCall) {
    for (const CallBill& c : bill.calls) {
      std::string cost = c.unpriced != Unpriced::kNo ? "unpriced" : FormatUsd(c.cost.cost, 4);
      if (c.cost.long_context) cost += " L";
      if (c.recorded) cost += " R";
      line(c.call->session, nullptr,
           CallModel(*c.call) + (c.call->assumed_model ? " (assumed)" : ""), 1, c.call->usage, cost,
           "", "", c.call);
    }
  } else if (by_model) {
    for (const auto& [id, m] : bill.total.by_model) {
      line(ModelLabel(id, m), nullptr, "", m.calls, m.usage, model_cost(m),
           money(m.reported_usage_cost), reported(m.reported_cost_usd));
    }
  } else {
    for (const GroupBill& g : groups) group_rows(g, g.id);
  }
  rows.emplace_back();
  const GroupBill& t = bill.total;
  if (by_model || view == BillView::kCall || t.by_model.size() != 1) {
    CallUsage usage;
    for (const auto& [id, m] : t.by_model) usage += m.usage;
    line("total", nullptr, "", t.calls, usage, group_cost(t), money(t.reported_usage_cost),
         reported(t.reported_cost_usd));
    if (!by_model && view != BillView::kCall) {
      for (const auto& [id, m] : t.by_model) {
        line("", nullptr, ModelLabel(id, m), m.calls, m.usage, model_cost(m),
             money(m.reported_usage_cost), reported(m.reported_cost_usd));
      }
    }
  } else {
    group_rows(t, "total");
  }
  out << LayOut(rows, columns);
  // An empty window reads as a bill of $0: say the logs' calls are outside it.
  if (t.calls == 0 && !log.calls.empty()) {
    out << "\nno call falls in the window (--since / --until): the logs' "
        << FormatWithSeparators(static_cast<std::int64_t>(log.calls.size()))
        << " call line(s) lie outside it\n";
  }
  if (t.unpriced_calls > 0) {
    out << "\n+? : plus " << FormatWithSeparators(t.unpriced_calls)
        << " unpriced call(s), see the \"unpriced\" lines\n";
  }
  if (bill.undated_left_out > 0) {
    out << "\n"
        << FormatWithSeparators(bill.undated_left_out)
        << " call(s) or result line(s) without a timestamp were left out: --since / --until\n"
           "cannot place them in the window\n";
  }
  for (const RunWarning& w : BillWarnings(bill)) {
    out << "\nwarning [" << w.code << "]: " << w.message << "\n";
  }
  if (bill.duplicate_lines > 0) {
    out << "\n"
        << FormatWithSeparators(bill.duplicate_lines)
        << " line(s) repeated a call already counted (same message id, request id or Codex\n"
           "running totals) and were not billed again\n";
  }
  std::int64_t recorded = 0, assumed = 0, fast = 0, searches = 0;
  Tokens writes_1h = 0;
  for (const auto& [id, m] : t.by_model) {
    recorded += m.recorded_cost_calls;
    assumed += m.assumed_model_calls;
    fast += m.fast ? m.calls : 0;
    searches += m.usage.web_searches;
    writes_1h += m.usage.cache_write_1h;
  }
  // Result lines report what the provider billed; calls the transcript
  // does not hold (or a price the sheet does not know) make the logged
  // calls' cost differ from it.
  // Only sessions with result lines: an interactive session beside headless
  // runs has calls and no reported cost.
  double logged = 0, billed = 0;
  bool priced = true;
  for (const GroupBill& run : bill.sessions) {
    if (!run.reported_cost_usd) continue;
    logged += run.cost.usd();
    billed += *run.reported_cost_usd;
    priced = priced && run.unpriced_calls == 0;
  }
  if (billed > 0 && priced) {
    if (std::fabs(logged - billed) > 0.02 * billed) {
      out << "\nthe logged calls of the sessions with result lines cost $" << FormatFixed(logged, 4)
          << ", " << FormatFixed(100 * logged / billed, 1) << "% of the $" << FormatFixed(billed, 4)
          << " the provider reported on its result lines: the transcripts do not hold every "
             "call the runs billed (or hold calls the runs did not), so \"reported\" and "
             "\"result usage\" are the runs' totals\n";
    }
  }
  // The table's "cache write" column sums both lifetimes, priced apart.
  if (writes_1h > 0) {
    out << "\ncache write: 5-minute and 1-hour writes together; " << FormatWithSeparators(writes_1h)
        << " of them 1-hour writes, at the 1-hour rate (2x input at Anthropic; JSON and CSV give "
           "the split)\n";
  }
  if (searches > 0) {
    out << "\n"
        << FormatWithSeparators(searches)
        << " web search(es) the provider's server ran (usage.server_tool_use) are in the costs,\n"
           "each at the sheet's web_search_usd or the provider's list price (Anthropic: $10 per\n"
           "1,000)\n";
  }
  if (recorded > 0) {
    out << "\n"
        << FormatWithSeparators(recorded)
        << " call(s) billed at the costUSD their line recorded (older Claude Code versions)"
        << (view == BillView::kCall ? "; R on their rows" : "") << "\n";
  }
  if (fast > 0) {
    out << "\n-fast: calls in Anthropic's fast mode (usage.speed \"fast\"), priced at the sheet's\n"
           "fast_multiplier times every rate\n";
  }
  if (assumed > 0) {
    out << "\n(assumed): " << FormatWithSeparators(assumed)
        << " Codex call(s) from logs that name no model, priced as " << kLegacyCodexModel
        << "\n(the fallback ccusage uses for such legacy logs)\n";
  }
  if (view == BillView::kBlock) {
    out << "\nblocks: 5-hour windows, each from a call's time floored to the UTC hour, as "
           "ccusage's\n"
           "blocks; a call more than 5 hours after its block's start or the previous call starts\n"
           "the next\n";
  }
  out << "\ncost: kvbill's price of the logged calls; result usage: kvbill's price of the\n"
         "per-model usage on the provider's result lines; reported: the provider's own cost.\n";
  return out.str();
}

std::vector<std::string> UnpricedNotes(const Bill& bill, const PriceSheet& sheet) {
  std::map<std::pair<std::string, Unpriced>, std::int64_t> counts;
  for (const CallBill& c : bill.calls) {
    if (c.unpriced != Unpriced::kNo) ++counts[{c.call->model, c.unpriced}];
  }
  std::vector<std::string> notes;
  for (const auto& [key, n] : counts) {
    const auto& [model, why] = key;
    const std::string calls = std::to_string(n) + " " +
                              (why == Unpriced::kNoFastPrice ? "fast-mode " : "") + "call" +
                              (n == 1 ? "" : "s");
    std::string note = "kvbill bill: " + calls + " of model \"" + model + "\" ";
    if (why == Unpriced::kNoPrice) {
      if (const SkippedPrice* skipped = sheet.FindSkipped(model)) {
        note += "unpriced: the price file's entry \"" + skipped->id + "\" has no " +
                skipped->missing + " (add the prices with --price " + model +
                ":input=...,output=...)";
      } else if (!NamesClaudeModel(model)) {
        // A model --price does not take for Claude is a custom entry, whose
        // cache reads and 5-minute writes cost its input price unless given
        // (1-hour writes twice it): a log's cached tokens (Claude Code's, a
        // call naming no model) need them.
        note += "unpriced: no price in the sheet (add one with --price " + model +
                ":input=...,output=...,cache_read=...,cache_write_5m=...,cache_write_1h=... or "
                "--prices FILE; without the cache fields such an entry prices cache reads and "
                "5-minute writes at its input price, where Anthropic's are 0.1x and 1.25x)";
      } else {
        note += "unpriced: no price in the sheet (add one with --price " + model +
                ":input=...,output=... or --prices FILE)";
      }
    } else if (why == Unpriced::kNoFastPrice) {
      note += "unpriced: no fast-mode price in the sheet (add one with --price " + model +
              ":fast_multiplier=...)";
    } else {
      note +=
          "unpriced: no costUSD recorded and --mode display bills only recorded costs (--mode "
          "auto prices them)";
    }
    notes.push_back(note);
  }
  return notes;
}

}  // namespace kvbill::cli
