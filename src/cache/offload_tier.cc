#include "kvbill/cache/offload_tier.h"

namespace kvbill {

void OffloadTier::Insert(std::uint64_t hash) {
  if (capacity_ <= 0) return;
  auto it = where_.find(hash);
  if (it != where_.end()) {
    order_.splice(order_.begin(), order_, it->second);
    return;
  }
  order_.push_front(hash);
  where_[hash] = order_.begin();
  while (static_cast<std::int64_t>(order_.size()) > capacity_) {
    where_.erase(order_.back());
    order_.pop_back();
  }
}

std::int64_t OffloadTier::RunFrom(std::span<const std::uint64_t> hashes, std::int64_t from,
                                  std::int64_t end) const {
  std::int64_t n = 0;
  for (std::int64_t i = from; i < end && i < static_cast<std::int64_t>(hashes.size()); ++i) {
    if (where_.find(hashes[static_cast<std::size_t>(i)]) == where_.end()) break;
    ++n;
  }
  return n;
}

void OffloadTier::Touch(std::span<const std::uint64_t> hashes, std::int64_t from, std::int64_t n) {
  for (std::int64_t i = from; i < from + n; ++i) {
    auto it = where_.find(hashes[static_cast<std::size_t>(i)]);
    if (it != where_.end()) order_.splice(order_.begin(), order_, it->second);
  }
}

}  // namespace kvbill
