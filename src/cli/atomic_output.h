// AtomicOutputFile: a file written as a stream and put in place only when
// complete. Bytes go to a temporary file next to the target ("PATH.tmp.XXXXXX");
// Commit() flushes it to disk and renames it over the target, keeping an
// existing file's permission bits. Destroying an uncommitted file removes the
// temporary one, so a failed command never leaves a partial output, nor does
// SIGINT or SIGTERM (remove_on_signal.h). The
// streaming counterpart of WriteFileAtomically, for outputs too large to build
// in memory first. "-" is standard output, and a device or FIFO is written in
// place (CheckOutputPath); a symbolic link or a directory is refused.
#ifndef KVBILL_CLI_ATOMIC_OUTPUT_H_
#define KVBILL_CLI_ATOMIC_OUTPUT_H_

#include <sys/types.h>

#include <fstream>
#include <memory>
#include <string>

#include "kvbill/util/result.h"

namespace kvbill::cli {

class AtomicOutputFile {
 public:
  // Checks the path (CheckOutputPath) and creates the temporary file. Error:
  // "<path>: cannot create: <reason>" and CheckOutputPath's.
  static Result<std::unique_ptr<AtomicOutputFile>> Create(const std::string& path);

  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  std::ostream& stream();

  // Flushes, syncs and renames into place. Error names the path; the
  // temporary file is then removed. Call at most once.
  Status Commit();

 private:
  AtomicOutputFile(std::string path, std::string temp_path, int fd, mode_t mode);

  std::string path_;       // "-": standard output
  std::string temp_path_;  // empty: written in place (stdout, a device, a FIFO)
  int fd_;                 // kept open for fsync; closed by Commit or the destructor
  mode_t mode_;            // the permission bits the file gets
  std::ofstream file_;
  bool committed_ = false;
  int on_signal_ = -1;  // the temporary file's RemoveOnSignal registration
};

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_ATOMIC_OUTPUT_H_
