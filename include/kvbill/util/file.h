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

// How an output path is written (docs/robustness.md#atomic-outputs).
enum class OutputKind {
  kNew,      // nothing there yet: temporary file + rename
  kRegular,  // a regular file: temporary file + rename, keeping its mode
  kDirect,   // a device, FIFO or socket (/dev/null, /dev/stdout, a pipe):
             // written in place, write errors reported
};

// Checks an output path before any work, so that a bad -o fails fast.
// Errors: "<path>: is a directory", "<path>: is a symbolic link; kvbill does
// not write through links (give the file it points to)", "<path>: cannot
// create: <reason>" (a missing or unwritable directory).
Result<OutputKind> CheckOutputPath(const std::string& path);

// Writes `contents` to `path`: a new path or a regular file through a
// temporary file in the same directory that is renamed over `path` only once
// fully written and flushed (an existing file keeps its permission bits), so
// a failure leaves no partial file; a device or FIFO directly. Error names
// the path.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace kvbill

#endif  // KVBILL_UTIL_FILE_H_
