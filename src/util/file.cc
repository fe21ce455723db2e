#include "kvbill/util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "kvbill/util/units.h"

namespace kvbill {

namespace {

// Regular files read as inputs, by device and inode.
std::mutex& InputsMutex() {
  static std::mutex mutex;
  return mutex;
}
std::set<std::pair<dev_t, ino_t>>& Inputs() {
  static std::set<std::pair<dev_t, ino_t>> inputs;
  return inputs;
}

}  // namespace

void NoteInputFile(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const std::lock_guard<std::mutex> lock(InputsMutex());
  Inputs().emplace(st.st_dev, st.st_ino);
}

Status CheckNotAnInput(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return OkStatus();
  const std::lock_guard<std::mutex> lock(InputsMutex());
  if (Inputs().count({st.st_dev, st.st_ino}) == 0) return OkStatus();
  return Error(path +
               ": is an input of this run; kvbill does not write its output over a file it "
               "reads (give another output path)");
}

Result<std::string> ReadFile(const std::string& path, bool to_rewrite) {
  return ReadFileUpTo(path, std::size_t{1} << 30, to_rewrite);
}

Result<std::string> ReadFileUpTo(const std::string& path, std::size_t max_bytes, bool to_rewrite) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return OpenError(path);
  if (std::error_code ec; std::filesystem::is_directory(path, ec)) {
    return Error(path + ": a directory, not a file");
  }
  if (!to_rewrite) NoteInputFile(path);
  // Read in chunks up to a bound: a device that never ends (/dev/zero) or
  // a runaway file would otherwise take all memory before any error.
  std::string text;
  std::string chunk(1 << 16, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      return Error(path + ": more than " + FormatBinaryBytes(static_cast<double>(max_bytes)) +
                   ", more than kvbill reads whole (a scenario, model config, price sheet or "
                   "log is far smaller)");
    }
  }
  if (in.bad()) return Error(path + ": read failed");
  return text;
}

Error OpenError(const std::string& path) {
  const int error = errno;
  if (error == ENOENT) return Error(path + ": file not found");
  return Error(path + ": cannot open: " + std::strerror(error));
}

Result<OutputKind> CheckOutputPath(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Error(path + ": cannot create: " + std::strerror(errno));
    // A new file: its directory must exist and take new files.
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
    struct stat dir_st {};
    if (stat(dir.c_str(), &dir_st) != 0) {
      return Error(path + ": cannot create: " + std::strerror(errno));
    }
    if (!S_ISDIR(dir_st.st_mode))
      return Error(path + ": cannot create: " + dir + " is not a directory");
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      return Error(path + ": cannot create: " + std::strerror(errno));
    }
    return OutputKind::kNew;
  }
  if (S_ISLNK(st.st_mode)) {
    // The process's own descriptors (/dev/stdout, /dev/fd/N,
    // /proc/self/fd/N) are whatever the shell opened, a file of a
    // redirection included: written in place, as "-" is. Another link to a
    // terminal, pipe or socket is written as a device named directly is; a
    // link to a file stays refused.
    for (const char* own : {"/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/"}) {
      const std::string_view prefix(own);
      if (prefix.back() == '/' ? path.starts_with(prefix) : path == prefix) {
        return OutputKind::kDirect;
      }
    }
    struct stat target {};
    if (stat(path.c_str(), &target) == 0 && !S_ISREG(target.st_mode) && !S_ISDIR(target.st_mode)) {
      return OutputKind::kDirect;
    }
    return Error(path +
                 ": is a symbolic link; kvbill does not write through links (give the file it "
                 "points to)");
  }
  if (S_ISDIR(st.st_mode)) return Error(path + ": is a directory");
  if (!S_ISREG(st.st_mode)) return OutputKind::kDirect;
  if (auto input = CheckNotAnInput(path); !input) return input.error();
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return Error(path + ": cannot create: " + std::strerror(errno));
  }
  return OutputKind::kRegular;
}

namespace {

// Writes all of `contents` to fd: the reason on failure.
std::optional<std::string> WriteAll(int fd, const std::string& contents) {
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::string(std::strerror(errno));
    }
    written += static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

}  // namespace

bool IsStandardOutputPath(const std::string& path) {
  return path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1";
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  auto kind = CheckOutputPath(path);
  if (!kind) return kind.error();
  if (IsStandardOutputPath(path)) {
    std::cout << contents << std::flush;
    if (!std::cout) return Error(path + ": write failed");
    return OkStatus();
  }
  if (*kind == OutputKind::kDirect) {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return Error(path + ": cannot open: " + std::strerror(errno));
    const auto failed = WriteAll(fd, contents);
    const bool closed = close(fd) == 0;
    if (failed) return Error(path + ": write failed: " + *failed);
    if (!closed) return Error(path + ": write failed: " + std::strerror(errno));
    return OkStatus();
  }
  // An existing file keeps its permission bits; a new one gets what the
  // umask allows (mkstemp creates 0600).
  mode_t mode = 0;
  if (*kind == OutputKind::kRegular) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;
  }
  if (mode == 0) {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return Error(path + ": cannot create: " + std::strerror(errno));
  if (const auto failed = WriteAll(fd, contents)) {
    close(fd);
    unlink(tmp.c_str());
    return Error(path + ": write failed: " + *failed);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    unlink(tmp.c_str());
    return Error(path + ": write failed: " + reason);
  }
  chmod(tmp.c_str(), mode);
  if (auto input = CheckNotAnInput(path); !input) {
    unlink(tmp.c_str());
    return input.error();
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    unlink(tmp.c_str());
    return Error(path + ": cannot rename into place: " + reason);
  }
  return OkStatus();
}

}  // namespace kvbill
