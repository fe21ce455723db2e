// AtomicOutputFile: a file written as a stream and put in place only when
// complete. Bytes go to a temporary file next to the target ("PATH.tmp.XXXXXX");
// Commit() flushes it to disk and renames it over the target. Destroying an
// uncommitted file removes the temporary one, so a failed command never leaves
// a partial output. The streaming counterpart of WriteFileAtomically, for
// outputs too large to build in memory first.
#ifndef KVBILL_CLI_ATOMIC_OUTPUT_H_
#define KVBILL_CLI_ATOMIC_OUTPUT_H_

#include <fstream>
#include <memory>
#include <string>

#include "kvbill/util/result.h"

namespace kvbill::cli {

class AtomicOutputFile {
 public:
  // Creates the temporary file. Error: "<path>: cannot create: <reason>".
  static Result<std::unique_ptr<AtomicOutputFile>> Create(const std::string& path);

  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  std::ostream& stream() { return out_; }

  // Flushes, syncs and renames into place. Error names the path; the
  // temporary file is then removed. Call at most once.
  Status Commit();

 private:
  AtomicOutputFile(std::string path, std::string temp_path, int fd);

  std::string path_;
  std::string temp_path_;
  int fd_;  // kept open for fsync; closed by Commit or the destructor
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_ATOMIC_OUTPUT_H_
