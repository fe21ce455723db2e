// Standard output of a command, and what a failed write to it is.
//
// main gives std::cout a StandardOutput buffer for the run of a command: it
// writes file descriptor 1 with write(2), 64 KiB at a time, and keeps the
// reason of the first write that failed. (The C library's buffer forgets
// it: a failed write drops its bytes, so a later flush has nothing left to
// write and succeeds, and `> /dev/full` of a long output read as success.)
// After a failure the buffer takes no more bytes: std::cout is false from
// then on, so a command writing a long output can stop early.
//
// A failed write to standard output is exit status 2 and one line,
// "kvbill COMMAND: standard output: write failed: No space left on device"
// (docs/robustness.md#atomic-outputs). main says it when the command
// returns 0 or 1; a command that stops on it says it in the same words
// (FlushStandardOutput), and main then adds nothing.
#ifndef KVBILL_CLI_STANDARD_OUTPUT_H_
#define KVBILL_CLI_STANDARD_OUTPUT_H_

#include <streambuf>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill::cli {

class StandardOutput final : public std::streambuf {
 public:
  // Becomes std::cout's buffer until destroyed; then flushes and gives
  // std::cout its previous buffer back.
  StandardOutput();
  ~StandardOutput() override;
  StandardOutput(const StandardOutput&) = delete;
  StandardOutput& operator=(const StandardOutput&) = delete;

  // errno of the first write that failed; 0 while none has.
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  // Writes the buffered bytes and empties the buffer; false once any write
  // has failed (the bytes are then dropped).
  bool Drain();

  std::vector<char> buffer_;
  int error_ = 0;
  std::streambuf* previous_;
};

// Flushes std::cout. OkStatus, or once any write to it has failed,
// Error("standard output: write failed: REASON"), REASON the first
// failure's (without a StandardOutput installed, the words alone).
Status FlushStandardOutput();

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_STANDARD_OUTPUT_H_
