// Narrow file helpers: whole-file reads with errors that name the file, and
// writes that never leave a partial output behind (temporary file + rename).
#ifndef KVBILL_UTIL_FILE_H_
#define KVBILL_UTIL_FILE_H_

#include <string>

#include "kvbill/util/result.h"

namespace kvbill {

// Reads a whole file. Error: "<path>: file not found" when it does not exist,
// else "<path>: cannot open: <reason>" (OpenError).
Result<std::string> ReadFile(const std::string& path);

// The error for a file that failed to open, from errno as the failed open
// left it: "<path>: file not found" for ENOENT, else "<path>: cannot open:
// <reason>".
Error OpenError(const std::string& path);

// Writes `contents` to `path` through a temporary file in the same directory
// that is renamed over `path` only once fully written and flushed, so a
// failure leaves no partial file. Error names the path.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace kvbill

#endif  // KVBILL_UTIL_FILE_H_
