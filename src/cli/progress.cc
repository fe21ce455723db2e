#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "kvbill/util/units.h"

namespace kvbill::cli {

ProgressLine::ProgressLine(std::string command, std::string what, bool enabled, std::ostream& out,
                           std::chrono::milliseconds delay, std::string unit)
    : command_(std::move(command)),
      what_(std::move(what)),
      unit_(std::move(unit)),
      out_(out),
      delay_(delay),
      start_(std::chrono::steady_clock::now()) {
  if (enabled) thread_ = std::thread([this] { Run(); });
}

ProgressLine::ProgressLine(std::string command, std::string what, std::string unit)
    : ProgressLine(std::move(command), std::move(what), StderrIsTerminal(), std::cerr,
                   std::chrono::seconds(1), std::move(unit)) {}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (drawn_) {
    out_ << "\r" << std::string(drawn_width_, ' ') << "\r" << std::flush;
  }
}

void ProgressLine::Set(std::int64_t done, std::int64_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = done;
  total_ = total;
}

bool ProgressLine::Drawn() {
  std::lock_guard<std::mutex> lock(mutex_);
  return drawn_;
}

bool ProgressLine::StderrIsTerminal() { return ::isatty(STDERR_FILENO) != 0; }

std::string ProgressLine::Text(std::chrono::steady_clock::duration elapsed) const {
  std::string text = "kvbill " + command_ + ": ";
  if (done_ >= 0) {
    text += FormatWithSeparators(done_) + "/" + FormatWithSeparators(total_) +
            (unit_.empty() ? "" : " " + unit_);
  } else {
    text += what_;
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  return text + " ... " + std::to_string(seconds) + " s";
}

void ProgressLine::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_until(lock, start_ + delay_, [this] { return stop_; })) return;
  while (!stop_) {
    const std::string text = Text(std::chrono::steady_clock::now() - start_);
    // Pad over a longer line drawn before.
    const std::size_t width = std::max(text.size(), drawn_width_);
    out_ << "\r" << text << std::string(width - text.size(), ' ') << std::flush;
    drawn_ = true;
    drawn_width_ = width;
    wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; });
  }
}

}  // namespace kvbill::cli
