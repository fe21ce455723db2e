#include "cli/remove_on_signal.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace kvbill::cli {
namespace {

constexpr int kSlots = 8;
constexpr std::size_t kPathBytes = 4096;

struct Slot {
  char path[kPathBytes];
  volatile std::sig_atomic_t directory;
  volatile std::sig_atomic_t armed;
};

Slot g_slots[kSlots];
std::mutex g_mutex;  // Add and Drop; the handler reads only `armed` slots
bool g_installed = false;

void RemoveAndReraise(int sig) {
  for (int pass = 0; pass < 2; ++pass) {  // files first, then their directories
    for (Slot& s : g_slots) {
      if (s.armed == 0 || s.directory != pass) continue;
      if (pass == 0) {
        ::unlink(s.path);
      } else {
        ::rmdir(s.path);
      }
    }
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int RemoveOnSignal::Add(const std::string& path, bool directory) {
  if (path.size() >= kPathBytes) return -1;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    if (s.armed != 0) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.directory = directory ? 1 : 0;
    // The handler may run between any two statements: the path is whole
    // before the slot is armed (no store is moved past the fence).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    s.armed = 1;
    if (!g_installed) {
      struct sigaction action {};
      action.sa_handler = RemoveAndReraise;
      sigemptyset(&action.sa_mask);
      ::sigaction(SIGINT, &action, nullptr);
      ::sigaction(SIGTERM, &action, nullptr);
      g_installed = true;
    }
    return i;
  }
  return -1;
}

void RemoveOnSignal::Drop(int registration) {
  if (registration < 0 || registration >= kSlots) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_slots[registration].armed = 0;
}

}  // namespace kvbill::cli
