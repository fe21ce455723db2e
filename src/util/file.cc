#include "kvbill/util/file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kvbill {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return OpenError(path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error(path + ": read failed");
  return buffer.str();
}

Error OpenError(const std::string& path) {
  const int error = errno;
  if (error == ENOENT) return Error(path + ": file not found");
  return Error(path + ": cannot open: " + std::strerror(error));
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) return Error(path + ": cannot create: " + std::strerror(errno));
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string reason = std::strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      return Error(path + ": write failed: " + reason);
    }
    written += static_cast<std::size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    unlink(tmp.c_str());
    return Error(path + ": write failed: " + reason);
  }
  // mkstemp creates 0600; outputs are ordinary files.
  const mode_t mask = umask(0);
  umask(mask);
  chmod(tmp.c_str(), 0666 & ~mask);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    unlink(tmp.c_str());
    return Error(path + ": cannot rename into place: " + reason);
  }
  return OkStatus();
}

}  // namespace kvbill
