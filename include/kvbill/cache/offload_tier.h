// OffloadTier: a host-memory tier below a replica's KV pool. Blocks evicted
// from the GPU pool are copied here (by hash) and kept in LRU order up to a
// capacity; a later request can reload a run of them over the host link
// instead of recomputing them. Deterministic; O(1) per block.
#ifndef KVBILL_CACHE_OFFLOAD_TIER_H_
#define KVBILL_CACHE_OFFLOAD_TIER_H_

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>

namespace kvbill {

class OffloadTier {
 public:
  explicit OffloadTier(std::int64_t capacity_blocks) : capacity_(capacity_blocks) {}

  // Adds (or refreshes) a block; drops the least recently used beyond capacity.
  void Insert(std::uint64_t hash);

  // How many of hashes[from], hashes[from + 1], ... (below `end`) are held,
  // counting until the first that is not. No state change.
  std::int64_t RunFrom(std::span<const std::uint64_t> hashes, std::int64_t from,
                       std::int64_t end) const;

  // Whether the block with this hash is held. No state change.
  bool Contains(std::uint64_t hash) const { return where_.contains(hash); }

  // Marks hashes[from .. from + n) as just used.
  void Touch(std::span<const std::uint64_t> hashes, std::int64_t from, std::int64_t n);

  std::int64_t size() const { return static_cast<std::int64_t>(order_.size()); }
  std::int64_t capacity() const { return capacity_; }

 private:
  std::int64_t capacity_;
  std::list<std::uint64_t> order_;  // front: most recent
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

}  // namespace kvbill

#endif  // KVBILL_CACHE_OFFLOAD_TIER_H_
