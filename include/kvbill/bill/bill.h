// Bill: recorded usage priced exactly as the provider reported it, per call,
// per session, per model, per day, week, month and 5-hour block and in
// total, beside the provider's own cost where the log has one. A pure
// function of a UsageLog and a PriceSheet (docs/billing.md#bill).
//
// Invariants: a call (LoggedCall::key) counts once however many lines or
// files repeat it; the total is the exact sum of the billed calls; a call
// that cannot be billed (its model has no price, its fast mode has none, or
// in display mode it recorded no cost) is counted in `unpriced_calls` and
// adds nothing, never a silent zero: its line says "unpriced". Weeks and
// months are sums of days; blocks partition the timestamped calls.
#ifndef KVBILL_BILL_BILL_H_
#define KVBILL_BILL_BILL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/bill/time_zone.h"
#include "kvbill/bill/usage_log.h"
#include "kvbill/cost/api_bill.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/util/result.h"

namespace kvbill {

// Where a call's dollars come from when its line recorded a "costUSD"
// (older Claude Code versions): ccusage's three modes.
enum class CostMode {
  kAuto,       // the recorded cost where the line has one, else the price sheet's
  kCalculate,  // always the price sheet's
  kDisplay,    // only the recorded cost; a call without one is unpriced
};

// Order of the rows. kLog: sessions in order of first appearance, dates and
// blocks ascending (the default). kAscending / kDescending: sessions by last
// activity, dates and blocks by date; rows without a timestamp stay last.
enum class BillOrder { kLog, kAscending, kDescending };

// A 5-hour block: as ccusage's "blocks" (v18.0.11 _session-blocks.ts), the
// first call starts a block at its time floored to the UTC hour; a call more
// than 5 hours after its block's start, or more than 5 hours after the
// previous call, starts the next block.
inline constexpr std::int64_t kBlockSeconds = 5 * 3'600;

struct BillOptions {
  // Inclusive dates "YYYY-MM-DD" in `time_zone`. With either set, calls and
  // runs without a timestamp are left out.
  std::optional<std::string> since;
  std::optional<std::string> until;
  // The zone of the dates above and of `days`, `weeks`, `months`: UTC unless set.
  TimeZone time_zone;
  CostMode mode = CostMode::kCalculate;
  BillOrder order = BillOrder::kLog;
  int start_of_week = 0;  // first day of a week: 0 = Sunday (ccusage's default) ... 6 = Saturday
  bool blocks = false;    // make `blocks` (a sort of the calls by time)
};

// Calls of one model within a group (session, day, ..., or the whole bill).
// Fast-mode calls of a model form a group entry of their own, keyed
// "<model>-fast" as ccusage shows them.
struct ModelBill {
  std::string priced_as;  // the sheet entry's id; empty when no call was priced by the sheet
  std::int64_t calls = 0;
  std::int64_t long_context_calls = 0;
  std::int64_t unpriced_calls = 0;       // calls that could not be billed
  std::int64_t recorded_cost_calls = 0;  // calls billed at their line's costUSD
  std::int64_t assumed_model_calls = 0;  // Codex calls naming no model (kLegacyCodexModel)
  bool fast = false;                     // fast-mode calls (usage.speed "fast")
  CallUsage usage;
  Money cost;  // of the billed calls
  // From the provider's result lines, when the group has them:
  std::optional<double> reported_cost_usd;   // the provider's cost
  std::optional<CallUsage> reported_usage;   // the provider's per-model totals
  std::optional<Money> reported_usage_cost;  // kvbill's price of reported_usage

  // True when some call was billed (or, without calls, the model has a price).
  bool priced() const { return calls == 0 ? !priced_as.empty() : unpriced_calls < calls; }
};

struct GroupBill {
  // Session id; "YYYY-MM-DD" (day), the week's first day, "YYYY-MM" (month),
  // the block's start "YYYY-MM-DDTHH:00:00Z"; "unknown" without a
  // timestamp; or "total".
  std::string id;
  std::int64_t calls = 0;
  std::int64_t unpriced_calls = 0;
  Money cost;
  std::optional<double> reported_cost_usd;  // Σ total_cost_usd of the result lines
  // kvbill's price of every reported model's usage; absent when a reported
  // model has no price.
  std::optional<Money> reported_usage_cost;
  std::map<std::string, ModelBill> by_model;  // by model id as logged
  std::string project;                        // sessions: the first working directory logged
  std::optional<std::int64_t> first_ns;       // time of the first and last timestamped call
  std::optional<std::int64_t> last_ns;
  std::optional<std::int64_t> start_ns;  // blocks: the block's start (it ends kBlockSeconds later)
};

// Why a call is unpriced.
enum class Unpriced { kNo, kNoPrice, kNoFastPrice, kNoRecordedCost };

// One billed call, in log order.
struct CallBill {
  const LoggedCall* call = nullptr;  // into the UsageLog the bill was made from
  std::string_view priced_as;        // the sheet entry's id (into the PriceSheet), when priced
  CallCost cost;
  Unpriced unpriced = Unpriced::kNo;
  bool recorded = false;  // cost is the line's costUSD
};

struct Bill {
  std::vector<GroupBill> sessions;   // in `order`
  std::vector<GroupBill> days;       // by date in the time zone; "unknown" (no timestamp) last
  std::vector<GroupBill> weeks;      // the days summed by week, id = the week's first day
  std::vector<GroupBill> months;     // the days summed by month
  std::vector<GroupBill> blocks;     // with BillOptions::blocks; "unknown" last
  GroupBill total;                   // by_model: per model over everything
  std::vector<CallBill> calls;       // the distinct calls kept
  std::int64_t duplicate_lines = 0;  // lines that repeated a call already counted
  // Claude Code calls in the bill whose kept copy records only a streaming
  // placeholder output (IsClaudeCodePlaceholderOutput): their output tokens
  // and cost are understated.
  std::int64_t placeholder_output_calls = 0;
  // Calls whose prompt (input + cache writes + cache reads) is above their
  // model's context window in the sheet (InputLimit): a request the
  // provider refuses, so a corrupt log or a mislabelled model. The largest
  // such prompt, its model and that model's window.
  std::int64_t over_window_calls = 0;
  Tokens over_window_prompt = 0;
  std::string over_window_model;
  Tokens over_window_limit = 0;
  // With --since / --until: calls without a timestamp, and result lines
  // (Claude Code's run totals, which carry none), left out of the window.
  std::int64_t undated_left_out = 0;
};

// Prices `log` with `sheet`; the bill points into both, which must outlive
// it. Duplicated calls keep the copy with the most output tokens (Claude
// Code writes streaming placeholders on early lines).
// Error only when an amount overflows its range, naming the call.
Result<Bill> MakeBill(const UsageLog& log, const PriceSheet& sheet, const BillOptions& options);

// "YYYY-MM-DD" of a time in ns since the Unix epoch, in UTC.
std::string UtcDate(std::int64_t time_ns);

// "YYYY-MM-DDTHH:MM:SSZ" of a time in ns since the Unix epoch (seconds floored).
std::string UtcTime(std::int64_t time_ns);

// The first day of the week holding "YYYY-MM-DD", weeks starting on
// `start_of_week` (0 = Sunday): "2024-01-14" for "2024-01-15" (a Monday).
std::string WeekOf(const std::string& date, int start_of_week);

}  // namespace kvbill

#endif  // KVBILL_BILL_BILL_H_
