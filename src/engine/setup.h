// What a run needs before its first event: the checked configuration, the
// KV bytes arithmetic, the KV cache groups and the pool size of a replica,
// and the cost model.
//
// Contract. Errors name what does not fit: replicas or GPUs below 1, a block
// size below 1, a model with more than 254 KV cache groups, linear-state
// layers with prefix caching on, the host tier with windowed layers, weights
// that leave no room for KV. The pool holds what is left of memory_fraction
// of the GPU after the activation reserve and the weights, in pages
// (kv_groups.h): capacity_tokens, when set, replaces it (kUnlimitedTokens:
// never evict); memory_pool_pages keeps what memory holds (0 when the
// weights leave no room, an error without an override).
#ifndef KVBILL_ENGINE_SETUP_H_
#define KVBILL_ENGINE_SETUP_H_

#include <memory>

#include "kvbill/cache/kv_groups.h"
#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/engine/simulator.h"
#include "kvbill/util/result.h"

namespace kvbill::engine {

struct EngineSetup {
  Roofline roofline;  // KV bytes read and written, for the records
  std::shared_ptr<const CostModel> cost;
  KvGroupLayout layout;
  std::int64_t pool_pages = 0;  // per replica
  // What the memory left holds, per replica: pool_pages unless a capacity
  // override (capacity_tokens) replaced it.
  std::int64_t memory_pool_pages = 0;
};

Result<EngineSetup> SetUpEngine(const SimulationConfig& config);

}  // namespace kvbill::engine

#endif  // KVBILL_ENGINE_SETUP_H_
