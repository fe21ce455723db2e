#include "cli/atomic_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace kvbill::cli {

Result<std::unique_ptr<AtomicOutputFile>> AtomicOutputFile::Create(const std::string& path) {
  std::string temp_path = path + ".tmp.XXXXXX";
  const int fd = mkstemp(temp_path.data());
  if (fd < 0) return Error(path + ": cannot create: " + std::strerror(errno));
  std::unique_ptr<AtomicOutputFile> file(new AtomicOutputFile(path, temp_path, fd));
  if (!file->out_) return Error(path + ": cannot create: cannot open " + temp_path);
  return file;
}

AtomicOutputFile::AtomicOutputFile(std::string path, std::string temp_path, int fd)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      fd_(fd),
      out_(temp_path_, std::ios::binary | std::ios::trunc) {}

AtomicOutputFile::~AtomicOutputFile() {
  if (committed_) return;
  out_.close();
  if (fd_ >= 0) close(fd_);
  unlink(temp_path_.c_str());
}

Status AtomicOutputFile::Commit() {
  out_.close();
  if (out_.fail()) return Error(path_ + ": write failed");
  const int fd = fd_;
  fd_ = -1;
  const bool synced = fsync(fd) == 0;
  const int sync_errno = errno;
  if (close(fd) != 0 || !synced) {
    return Error(path_ + ": write failed: " + std::strerror(synced ? errno : sync_errno));
  }
  // mkstemp creates 0600; outputs are ordinary files.
  const mode_t mask = umask(0);
  umask(mask);
  chmod(temp_path_.c_str(), 0666 & ~mask);
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return Error(path_ + ": cannot rename into place: " + std::strerror(errno));
  }
  committed_ = true;
  return OkStatus();
}

}  // namespace kvbill::cli
