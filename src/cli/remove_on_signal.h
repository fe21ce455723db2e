// Temporary paths a command removes when SIGINT or SIGTERM ends it: the
// partial output of AtomicOutputFile (a `trace gen` of gigabytes stopped with
// Ctrl-C), plan's window directory. A path is registered while it exists and
// dropped when its owner removes or renames it. The handler unlinks the
// registered files, then removes the registered directories, restores the
// signal's default action and raises it again, so the process still dies of
// the signal; it does only async-signal-safe work on paths copied in when
// they were registered.
#ifndef KVBILL_CLI_REMOVE_ON_SIGNAL_H_
#define KVBILL_CLI_REMOVE_ON_SIGNAL_H_

#include <string>

namespace kvbill::cli {

class RemoveOnSignal {
 public:
  // Registers `path` (a directory: removed after the files, when empty) and
  // installs the handler on first use. Returns the registration, or -1 when
  // the path is too long or every slot is taken (then it is not removed on
  // a signal; the owner still removes it on a normal exit).
  static int Add(const std::string& path, bool directory);
  // Forgets a registration of Add (no-op for -1).
  static void Drop(int registration);
};

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_REMOVE_ON_SIGNAL_H_
