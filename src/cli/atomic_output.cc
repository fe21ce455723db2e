#include "cli/atomic_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <utility>

#include "cli/remove_on_signal.h"
#include "cli/standard_output.h"
#include "kvbill/util/file.h"

namespace kvbill::cli {

Result<std::unique_ptr<AtomicOutputFile>> AtomicOutputFile::Create(const std::string& path) {
  if (path == "-" || IsStandardOutputPath(path)) {
    return std::unique_ptr<AtomicOutputFile>(new AtomicOutputFile("-", "", -1, 0));
  }
  auto kind = CheckOutputPath(path);
  if (!kind) return kind.error();
  if (*kind == OutputKind::kDirect) {
    // A device or FIFO: written in place (a rename would replace the node).
    std::unique_ptr<AtomicOutputFile> file(new AtomicOutputFile(path, "", -1, 0));
    if (!file->file_) return Error(path + ": cannot open: " + std::strerror(errno));
    return file;
  }
  // An existing file keeps its permission bits; a new one gets what the
  // umask allows (mkstemp creates 0600).
  mode_t mode = 0;
  struct stat st {};
  if (*kind == OutputKind::kRegular && stat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;
  if (mode == 0) {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  std::string temp_path = path + ".tmp.XXXXXX";
  const int fd = mkstemp(temp_path.data());
  if (fd < 0) return Error(path + ": cannot create: " + std::strerror(errno));
  std::unique_ptr<AtomicOutputFile> file(new AtomicOutputFile(path, temp_path, fd, mode));
  if (!file->file_) return Error(path + ": cannot create: cannot open " + temp_path);
  return file;
}

AtomicOutputFile::AtomicOutputFile(std::string path, std::string temp_path, int fd, mode_t mode)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd), mode_(mode) {
  if (path_ == "-") return;
  if (!temp_path_.empty()) on_signal_ = RemoveOnSignal::Add(temp_path_, false);
  file_.open(temp_path_.empty() ? path_ : temp_path_, std::ios::binary | std::ios::trunc);
}

std::ostream& AtomicOutputFile::stream() {
  if (path_ == "-") return std::cout;
  return file_;
}

AtomicOutputFile::~AtomicOutputFile() {
  if (committed_ || temp_path_.empty()) return;
  file_.close();
  if (fd_ >= 0) close(fd_);
  unlink(temp_path_.c_str());
  RemoveOnSignal::Drop(on_signal_);
}

Status AtomicOutputFile::Commit() {
  if (path_ == "-") {
    committed_ = true;
    return FlushStandardOutput();
  }
  if (temp_path_.empty()) {
    // In place: the stream's failure is the write's (ENOSPC on /dev/full).
    file_.close();
    if (file_.fail()) return Error(path_ + ": write failed: " + std::strerror(errno));
    committed_ = true;
    return OkStatus();
  }
  file_.close();
  if (file_.fail()) return Error(path_ + ": write failed");
  const int fd = fd_;
  fd_ = -1;
  const bool synced = fsync(fd) == 0;
  const int sync_errno = errno;
  if (close(fd) != 0 || !synced) {
    return Error(path_ + ": write failed: " + std::strerror(synced ? errno : sync_errno));
  }
  chmod(temp_path_.c_str(), mode_);
  if (auto input = CheckNotAnInput(path_); !input) return input.error();
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return Error(path_ + ": cannot rename into place: " + std::strerror(errno));
  }
  RemoveOnSignal::Drop(on_signal_);  // the name is now the output's
  committed_ = true;
  return OkStatus();
}

}  // namespace kvbill::cli
