// Bill: recorded usage priced exactly as the provider reported it, per call,
// per session, per model, per day and in total, beside the provider's own
// cost where the log has one. A pure function of a UsageLog and a
// PriceSheet (docs/billing.md#bill).
//
// Invariants: a call (LoggedCall::key) counts once however many lines or
// files repeat it; the total is the exact sum of the priced calls; a call
// whose model has no price is counted in `unpriced_calls` and adds nothing,
// never a silent zero: its line says "unpriced".
#ifndef KVBILL_BILL_BILL_H_
#define KVBILL_BILL_BILL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/bill/time_zone.h"
#include "kvbill/bill/usage_log.h"
#include "kvbill/cost/api_bill.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/util/result.h"

namespace kvbill {

struct BillOptions {
  // Inclusive dates "YYYY-MM-DD" in `time_zone`. With either set, calls and
  // runs without a timestamp are left out.
  std::optional<std::string> since;
  std::optional<std::string> until;
  // The zone of the dates above and of `days`: UTC unless set.
  TimeZone time_zone;
};

// Calls of one model within a group (session, day, or the whole bill).
struct ModelBill {
  std::string priced_as;  // the sheet entry's id; empty when unpriced
  std::int64_t calls = 0;
  std::int64_t long_context_calls = 0;
  CallUsage usage;
  Money cost;  // of the priced calls
  // From the provider's result lines, when the group has them:
  std::optional<double> reported_cost_usd;   // the provider's cost
  std::optional<CallUsage> reported_usage;   // the provider's per-model totals
  std::optional<Money> reported_usage_cost;  // kvbill's price of reported_usage

  bool priced() const { return !priced_as.empty(); }
};

struct GroupBill {
  std::string id;  // session id, "YYYY-MM-DD" (or "unknown"), or "total"
  std::int64_t calls = 0;
  std::int64_t unpriced_calls = 0;
  Money cost;
  std::optional<double> reported_cost_usd;  // Σ total_cost_usd of the result lines
  // kvbill's price of every reported model's usage; absent when a reported
  // model has no price.
  std::optional<Money> reported_usage_cost;
  std::map<std::string, ModelBill> by_model;  // by model id as logged
};

// One priced call, in log order.
struct CallBill {
  const LoggedCall* call = nullptr;  // into the UsageLog the bill was made from
  std::string priced_as;             // empty when unpriced
  CallCost cost;
};

struct Bill {
  std::vector<GroupBill> sessions;   // in order of first appearance
  std::vector<GroupBill> days;       // by date in the time zone; "unknown" (no timestamp) last
  GroupBill total;                   // by_model: per model over everything
  std::vector<CallBill> calls;       // the distinct calls kept
  std::int64_t duplicate_lines = 0;  // lines that repeated a call already counted
};

// Prices `log` with `sheet`. Duplicated calls keep the copy with the most
// output tokens (Claude Code writes streaming placeholders on early lines).
// Error only when an amount overflows its range, naming the call.
Result<Bill> MakeBill(const UsageLog& log, const PriceSheet& sheet, const BillOptions& options);

// "YYYY-MM-DD" of a time in ns since the Unix epoch, in UTC.
std::string UtcDate(std::int64_t time_ns);

}  // namespace kvbill

#endif  // KVBILL_BILL_BILL_H_
