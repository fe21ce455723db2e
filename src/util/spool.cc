#include "kvbill/util/spool.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace kvbill {

std::string Spool::Directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

Error Spool::FileError(const char* what) const {
  return Error(dir_ + ": temporary file: " + what + ": " + std::strerror(errno));
}

Result<Spool> Spool::Create() {
  Spool spool(Directory());
  std::string path = spool.dir_ + "/kvbill-spool.XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return spool.FileError("cannot create");
  unlink(path.c_str());  // anonymous from now on: gone when closed
  spool.file_.reset(fdopen(fd, "w+b"));
  if (!spool.file_) {
    const Error error = spool.FileError("cannot create");
    close(fd);
    return error;
  }
  return spool;
}

Status Spool::Append(std::string_view text) {
  if (!at_end_) {  // CopyTo read from the start
    if (std::fseek(file_.get(), 0, SEEK_END) != 0) return FileError("cannot seek");
    at_end_ = true;
  }
  if (std::fwrite(text.data(), 1, text.size(), file_.get()) != text.size()) {
    return FileError("cannot write");
  }
  size_ += static_cast<std::int64_t>(text.size());
  return OkStatus();
}

Status Spool::CopyTo(std::ostream& out) {
  if (std::fflush(file_.get()) != 0) return FileError("cannot write");
  if (std::fseek(file_.get(), 0, SEEK_SET) != 0) return FileError("cannot read back");
  at_end_ = false;
  std::vector<char> buffer(1 << 16);
  std::int64_t left = size_;
  while (left > 0) {
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::int64_t>(left, static_cast<std::int64_t>(buffer.size())));
    const std::size_t got = std::fread(buffer.data(), 1, want, file_.get());
    if (got == 0) return FileError("cannot read back");
    out.write(buffer.data(), static_cast<std::streamsize>(got));
    left -= static_cast<std::int64_t>(got);
  }
  if (!out) return Error("cannot write the output");
  return OkStatus();
}

}  // namespace kvbill
