// Fitting per-GPU operator curves (cost/kernel_curves.h) to a measured
// kernel database laid out as shared/data/kernels is: one directory per GPU
// (a100_sxm, h100_sxm, h200_sxm), then <engine>/<version>/<table>.txt, each
// a CSV of aiconfigurator's columns (the database's README lists them).
//
// For each table the newest version directory holding it is used. Rows
// are fitted on relative error (every row weighs alike); each curve records
// its row count and error. docs/validation.md#kernels describes the forms.
#ifndef KVBILL_CALIBRATE_KERNEL_FIT_H_
#define KVBILL_CALIBRATE_KERNEL_FIT_H_

#include <string>

#include "kvbill/cost/kernel_curves.h"
#include "kvbill/util/result.h"

namespace kvbill {

// Fits every GPU directory under `dir` that kvbill's GPU catalog knows.
// Errors name the file and line of a malformed row, or a missing table.
Result<KernelCurveSet> FitKernelCurves(const std::string& dir);

// A Markdown table of every curve's fit (GPU, operator, kernel, rows,
// median and p90 error, share within +-25%).
std::string KernelFitTable(const KernelCurveSet& set);

}  // namespace kvbill

#endif  // KVBILL_CALIBRATE_KERNEL_FIT_H_
