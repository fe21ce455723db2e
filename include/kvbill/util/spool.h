// Spool: text written now and read back once, later, without holding it in
// memory. It lives in a temporary file of Directory() that is unlinked as
// soon as it is made (so it is gone when the spool is destroyed or the
// process ends, and never left behind), so a
// command can stream an output of any size and still write nothing until
// the run has succeeded.
//
// Contract. Append adds bytes in order; CopyTo writes everything appended so
// far to `out`, from the start, and may be called more than once (appending
// may continue after it). Errors name the directory and what failed
// ("/tmp: temporary file: cannot write: No space left on device").
#ifndef KVBILL_UTIL_SPOOL_H_
#define KVBILL_UTIL_SPOOL_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "kvbill/util/result.h"

namespace kvbill {

class Spool {
 public:
  // Creates the temporary file in Directory(). Error: "<dir>: temporary
  // file: cannot create: <reason>".
  static Result<Spool> Create();
  // $TMPDIR, or /tmp when it is unset or empty.
  static std::string Directory();

  Status Append(std::string_view text);
  Status CopyTo(std::ostream& out);
  std::int64_t size() const { return size_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  explicit Spool(std::string dir) : dir_(std::move(dir)) {}
  Error FileError(const char* what) const;
  std::string dir_;
  std::unique_ptr<std::FILE, Closer> file_;
  std::int64_t size_ = 0;
  bool at_end_ = true;  // the file position is at the end
};

}  // namespace kvbill

#endif  // KVBILL_UTIL_SPOOL_H_
