// What the engine reports: one record per request it served, in the order
// requests finished. Metrics aggregate these per task and in total.
#ifndef KVBILL_ENGINE_RECORDS_H_
#define KVBILL_ENGINE_RECORDS_H_

#include <cstdint>
#include <string>

#include "kvbill/util/units.h"

namespace kvbill {

struct RequestRecord {
  std::string task_id;
  int task_index = 0;  // position of the task in the input
  int index = 0;       // position of the request in its task
  int turn = 0;
  bool is_summary = false;
  int replica = 0;
  Seconds release_s = 0;  // when the client sent it
  // When it reached its replica's scheduler: release_s + frontend_s +
  // frontend_wait_s, but the time the engine had then, not that sum (whose
  // rounding differs from it by ~1e-16 s).
  Seconds arrived_s = 0;
  Seconds admitted_s = 0;  // first admission into the running batch
  // Its own time in the API server and on the way (the frontend's work on
  // it and the request latency): between release and admission, but spent
  // being served, not waiting.
  Seconds frontend_s = 0;
  // Of its queueing delay, the part spent waiting for the API server (busy
  // with the requests sent before it) before its own work began.
  Seconds frontend_wait_s = 0;
  Seconds first_token_s = 0;  // end of the iteration that completed its prefill
  Seconds finish_s = 0;
  Tokens prompt_tokens = 0;
  Tokens cached_tokens = 0;       // prefix-cache hits at first admission, both tiers
  Tokens offload_hit_tokens = 0;  // of which reloaded from the host tier
  Tokens prefill_tokens = 0;      // prompt tokens computed, recomputation included
  Tokens output_tokens = 0;
  int preemptions = 0;
  long double kv_read_bytes = 0;     // decode and prefill, all GPUs of the replica
  long double kv_written_bytes = 0;  // all GPUs of the replica
  Bytes peak_kv_bytes = 0;           // largest block-rounded KV held, all GPUs
  long double gpu_seconds = 0;       // its share of iteration time x GPUs
  long double cost_usd = 0;          // its share of the rental
};

}  // namespace kvbill

#endif  // KVBILL_ENGINE_RECORDS_H_
