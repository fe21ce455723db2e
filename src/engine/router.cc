#include "kvbill/engine/router.h"

#include <algorithm>
#include <array>

namespace kvbill {
namespace {

constexpr std::array<std::pair<RouterKind, std::string_view>, 4> kRouters = {{
    {RouterKind::kRoundRobin, "round_robin"},
    {RouterKind::kPrefixAffinity, "prefix_affinity"},
    {RouterKind::kLeastLoaded, "least_loaded"},
    {RouterKind::kSessionAffinity, "session_affinity"},
}};

// The replica with the fewest requests; ties to the lowest index.
int LeastLoaded(std::span<const std::int64_t> loads) {
  return static_cast<int>(std::min_element(loads.begin(), loads.end()) - loads.begin());
}

class RoundRobin final : public Router {
 public:
  explicit RoundRobin(int replicas) : replicas_(replicas) {}
  int Route(std::span<const std::int64_t>, int*) override {
    return static_cast<int>(next_++ % replicas_);
  }

 private:
  int replicas_;
  std::int64_t next_ = 0;
};

class PrefixAffinity final : public Router {
 public:
  explicit PrefixAffinity(int replicas) : replicas_(replicas) {}
  int Route(std::span<const std::int64_t>, int* task_replica) override {
    if (*task_replica < 0) *task_replica = static_cast<int>(next_++ % replicas_);
    return *task_replica;
  }

 private:
  int replicas_;
  std::int64_t next_ = 0;  // counts tasks
};

class LeastLoadedRouter final : public Router {
 public:
  int Route(std::span<const std::int64_t> loads, int*) override { return LeastLoaded(loads); }
};

class SessionAffinity final : public Router {
 public:
  explicit SessionAffinity(std::int64_t load_cap) : load_cap_(load_cap) {}
  int Route(std::span<const std::int64_t> loads, int* task_replica) override {
    if (*task_replica < 0 || loads[static_cast<std::size_t>(*task_replica)] >= load_cap_) {
      *task_replica = LeastLoaded(loads);
    }
    return *task_replica;
  }

 private:
  std::int64_t load_cap_;
};

}  // namespace

std::string_view RouterName(RouterKind kind) {
  for (const auto& [k, name] : kRouters) {
    if (k == kind) return name;
  }
  return "round_robin";
}

std::string RouterChoices() {
  std::string out;
  for (const auto& [k, name] : kRouters) out += (out.empty() ? "" : "|") + std::string(name);
  return out;
}

Result<RouterKind> ParseRouterKind(std::string_view name) {
  for (const auto& [k, n] : kRouters) {
    if (n == name) return k;
  }
  return Error("unknown router \"" + std::string(name) + "\" (one of " + RouterChoices() + ")");
}

std::unique_ptr<Router> MakeRouter(RouterKind kind, int replicas, std::int64_t load_cap) {
  switch (kind) {
    case RouterKind::kPrefixAffinity:
      return std::make_unique<PrefixAffinity>(replicas);
    case RouterKind::kLeastLoaded:
      return std::make_unique<LeastLoadedRouter>();
    case RouterKind::kSessionAffinity:
      return std::make_unique<SessionAffinity>(load_cap);
    case RouterKind::kRoundRobin:
      break;
  }
  return std::make_unique<RoundRobin>(replicas);
}

}  // namespace kvbill
