// ProgressLine: one line on stderr that tells the person at a terminal that a
// long command is still working, and how far it is when it can count. It
// appears only when stderr is a terminal and only once the work has taken
// `delay` (1 s): a pipe, a file or a CI log never sees it, and quick commands
// print nothing. The line is redrawn in place ("\r") a few times a second and
// erased when the ProgressLine is destroyed, so the command's own output and
// errors start on a clean line.
//
//   kvbill simulate: simulating default ... 12 s
//   kvbill sweep: 17/40 points ... 8 s
#ifndef KVBILL_CLI_PROGRESS_H_
#define KVBILL_CLI_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>

namespace kvbill::cli {

class ProgressLine {
 public:
  // Draws "kvbill COMMAND: WHAT … N s" on `out` when `enabled`. `unit` names
  // what Set() counts ("points"); it is unused until Set() is called.
  ProgressLine(std::string command, std::string what, bool enabled, std::ostream& out,
               std::chrono::milliseconds delay = std::chrono::seconds(1), std::string unit = "");
  // The usual case: on std::cerr, enabled when stderr is a terminal.
  ProgressLine(std::string command, std::string what, std::string unit = "");
  ~ProgressLine();  // stops drawing and erases the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Reports `done` of `total` units; thread-safe.
  void Set(std::int64_t done, std::int64_t total);

  // Whether the line has been drawn at least once; thread-safe (for tests).
  bool Drawn();

  // Whether stderr is a terminal.
  static bool StderrIsTerminal();

 private:
  void Run();
  std::string Text(std::chrono::steady_clock::duration elapsed) const;  // mutex_ held

  std::string command_;
  std::string what_;
  std::string unit_;
  std::ostream& out_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool drawn_ = false;
  std::size_t drawn_width_ = 0;
  std::int64_t done_ = -1;  // -1: nothing counted yet
  std::int64_t total_ = 0;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_PROGRESS_H_
