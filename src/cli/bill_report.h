// `kvbill bill`'s output: the bill as an aligned table, JSON or CSV, in one
// of its views (docs/billing.md#kvbill-bill). Pure functions of the bill.
#ifndef KVBILL_CLI_BILL_REPORT_H_
#define KVBILL_CLI_BILL_REPORT_H_

#include <string>
#include <vector>

#include "kvbill/bill/bill.h"
#include "kvbill/cost/price_sheet.h"

namespace kvbill::cli {

// The rows a bill is shown by (--by).
enum class BillView { kSession, kDay, kWeek, kMonth, kModel, kBlock, kCall };

struct BillReportOptions {
  BillView view = BillView::kSession;
  std::string view_name = "session";  // as given to --by
  TimeZone zone;
  CostMode mode = CostMode::kAuto;
  bool mode_matters = false;  // the log records costs, or the mode is not auto: say which
};

std::string RenderBillTable(const Bill& bill, const UsageLog& log, const PriceSheet& sheet,
                            const BillReportOptions& options);
std::string RenderBillJson(const Bill& bill, const UsageLog& log, const PriceSheet& sheet,
                           const BillReportOptions& options);
std::string RenderBillCsv(const Bill& bill, const UsageLog& log, const BillReportOptions& options);

// The notes for stderr: one line per model and reason its calls were not
// billed, naming the flag that fixes it.
std::vector<std::string> UnpricedNotes(const Bill& bill, const PriceSheet& sheet);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_BILL_REPORT_H_
