// `kvbill bill`'s output: the bill as an aligned table, JSON or CSV, in one
// of its views (docs/billing.md#kvbill-bill). Pure functions of the bill.
#ifndef KVBILL_CLI_BILL_REPORT_H_
#define KVBILL_CLI_BILL_REPORT_H_

#include <string>
#include <vector>

#include "kvbill/bill/bill.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/scenario/warnings.h"

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

// The warning of calls whose kept copy records only a streaming placeholder
// output, or "" when there are none.
std::string PlaceholderWarning(const Bill& bill);

// The bill's warnings (placeholder_outputs), as JSON gives them and CSV
// prints them on standard error.
std::vector<RunWarning> BillWarnings(const Bill& bill);

// The notes for stderr: one line per model and reason its calls were not
// billed, naming the flag that fixes it.
std::vector<std::string> UnpricedNotes(const Bill& bill, const PriceSheet& sheet);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_BILL_REPORT_H_
