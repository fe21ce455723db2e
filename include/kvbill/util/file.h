// Narrow file helpers: whole-file reads with errors that name the file, and
// writes that never leave a partial output behind (temporary file + rename).
#ifndef KVBILL_UTIL_FILE_H_
#define KVBILL_UTIL_FILE_H_

#include <cstddef>
#include <string>

#include "kvbill/util/result.h"

namespace kvbill {

// Reads a whole file. Error: "<path>: file not found" when it does not exist,
// else "<path>: cannot open: <reason>" (OpenError). The file is an input of
// the run (NoteInputFile) unless `to_rewrite`: a file the command reads in
// order to replace it (`scenario docs FILE --write`, a profile refitted in
// place).
Result<std::string> ReadFile(const std::string& path, bool to_rewrite = false);

// ReadFile with a bound: "<path>: more than <N>, more than kvbill reads
// whole ..." past `max_bytes` (ReadFile's is 1 GiB: a device that never
// ends, /dev/zero, fails before it takes all memory).
Result<std::string> ReadFileUpTo(const std::string& path, std::size_t max_bytes,
                                 bool to_rewrite = false);

// Remembers a regular file this process reads as an input, so that no
// output is written over it (CheckNotAnInput). Thread-safe.
void NoteInputFile(const std::string& path);

// Error "<path>: is an input of this run; ..." when `path` is a regular file
// NoteInputFile saw (the same device and inode, whatever the name): an
// output written there would replace what the run read. OK otherwise.
Status CheckNotAnInput(const std::string& path);

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
// Errors: CheckNotAnInput's, "<path>: is a directory", "<path>: is a symbolic link; kvbill does
// not write through links (give the file it points to)", "<path>: cannot
// create: <reason>" (a missing or unwritable directory).
Result<OutputKind> CheckOutputPath(const std::string& path);

// /dev/stdout, /dev/fd/1 or /proc/self/fd/1: the process's standard output,
// written through it as "-" is (its offset and append mode kept, whatever
// the shell redirected it to).
bool IsStandardOutputPath(const std::string& path);

// Writes `contents` to `path`: a new path or a regular file through a
// temporary file in the same directory that is renamed over `path` only once
// fully written and flushed (an existing file keeps its permission bits), so
// a failure leaves no partial file; a device or FIFO directly. A file the
// run read is never replaced (CheckNotAnInput). Error names the path.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace kvbill

#endif  // KVBILL_UTIL_FILE_H_
