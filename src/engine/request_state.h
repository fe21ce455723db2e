// A request in service (Seq) and the names of its KV blocks.
//
// Contract. A Seq is one released request of a task from its release to its
// finish: its progress (tokens computed and generated, the prefill target a
// preemption resets), the runs naming its full blocks (block_hash.h) and its
// record. Blocks are named from the trace's block hashes when the request
// has them and the engine's block size divides the trace's (read from the
// request's planned runs when a shared workload made them at this block
// size), else from the prompt's pieces; a prompt that extends the task's previous prompt
// continues that prompt's runs instead of naming it again (the same runs,
// by RunHasher's contract). Output tokens are named as they are computed.
// CommitNamed gives the pool the names of blocks that became full, once
// each, in order.
#ifndef KVBILL_ENGINE_REQUEST_STATE_H_
#define KVBILL_ENGINE_REQUEST_STATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/cache/block_hash.h"
#include "kvbill/cache/kv_groups.h"
#include "kvbill/engine/records.h"
#include "kvbill/policy/context_policy.h"

namespace kvbill::engine {

struct Seq {
  SeqId id = 0;  // the KV pool's sequence id, unique in a run
  int task = 0;  // the task's slot in the coordinator's task table
  int req = 0;   // position in its task's requests
  const Request* request = nullptr;
  int replica = 0;
  Tokens prompt = 0;
  Tokens output = 0;
  Tokens computed = 0;        // tokens whose KV is cached
  Tokens generated = 0;       // output tokens sampled
  Tokens prefill_target = 0;  // tokens to compute before decoding (re)starts
  // Speculative decoding: tokens expected and not yet advanced, from one half
  // (so after j steps round(j x E) tokens have advanced, halves up).
  long double spec_credit = 0.5;
  bool admitted_once = false;
  bool explicit_hashes = false;  // named from the trace's block hashes
  bool planned = false;          // by the request's planned runs (not copied)
  std::vector<BlockRun> explicit_runs;
  std::vector<std::int64_t> explicit_ends;
  RunHasher hasher{1};
  Tokens hashed_output = 0;     // output tokens appended to the hasher
  std::int64_t committed = 0;   // leading blocks committed to the pool
  Tokens peak_tokens = 0;       // most block-rounded tokens held
  std::int64_t peak_pages = 0;  // most KV pool pages held (grouped pools)
  RequestRecord record;

  bool InPrefill() const { return computed < prefill_target; }
  // Runs of the full blocks of the tokens known so far.
  BlockRunList blocks() const {
    if (!explicit_hashes) return hasher.list();
    if (planned) return {request->planned_runs, request->planned_ends};
    return {explicit_runs, explicit_ends};
  }
  // Names the output tokens up to `tokens` tokens in all (prompt + output).
  void NameOutputUpTo(Tokens tokens);
  // Drops the names (after the finish: they are in the pool and the task's chain).
  void ForgetNames();
};

// The runs of a task's latest prompt, to continue from.
struct PromptChain {
  int request = -1;
  const Prompt* prompt = nullptr;
  RunHasher hasher{1};
};

// Names `seq`'s prompt blocks (seq->request, seq->req and seq->prompt set),
// continuing *chain when the prompt extends the chain's; keeps the chain for
// the task's next request when `has_next`.
void NamePrompt(Seq* seq, Tokens block_size, bool has_next, PromptChain* chain);

// Commits to `pool` the names of `seq`'s blocks that are full and not yet
// committed (after naming its output up to what is computed). `scratch` is
// a buffer kept by the caller.
void CommitNamed(KvPool& pool, Seq* seq, Tokens block_size, std::vector<BlockRun>* scratch);

// A request as the engine's errors name it, with the trace turn it serves
// (from 1): `request 3 of task "a" (turn 4)`, or for a context policy's
// summary `request 3 of task "a" (the summary before turn 4)`.
std::string NameRequest(std::string_view task_id, int index, int turn, bool is_summary);

}  // namespace kvbill::engine

#endif  // KVBILL_ENGINE_REQUEST_STATE_H_
