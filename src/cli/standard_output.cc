#include "cli/standard_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

namespace kvbill::cli {

StandardOutput::StandardOutput() : buffer_(64 << 10) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  previous_ = std::cout.rdbuf(this);
}

StandardOutput::~StandardOutput() {
  Drain();
  std::cout.rdbuf(previous_);
}

StandardOutput::int_type StandardOutput::overflow(int_type c) {
  if (!Drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int StandardOutput::sync() { return Drain() ? 0 : -1; }

bool StandardOutput::Drain() {
  const char* data = pbase();
  std::size_t left = static_cast<std::size_t>(pptr() - pbase());
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  if (error_ != 0) return false;
  while (left > 0) {
    const ssize_t written = write(STDOUT_FILENO, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      error_ = written < 0 ? errno : EIO;
      return false;
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  return true;
}

Status FlushStandardOutput() {
  std::cout.flush();
  if (std::cout) return OkStatus();
  const auto* installed = dynamic_cast<const StandardOutput*>(std::cout.rdbuf());
  const int error = installed != nullptr ? installed->error() : 0;
  return Error(std::string("standard output: write failed") +
               (error != 0 ? std::string(": ") + std::strerror(error) : ""));
}

}  // namespace kvbill::cli
