// The discrete-event engine: replays requests of agent tasks on the replicas
// of a deployment with continuous batching, a block prefix cache per replica
// and an iteration cost from a CostModel (the roofline unless the config
// names another). Spec: docs/engine.md, whose "Where the code is" maps each
// rule below to the file that implements it (src/engine/: the coordinator
// simulator.cc, scheduler, step_fuser, accounting, replica, request_state,
// router).
//
// Time. Tasks arrive at their trace arrival (shifted so the first is at 0).
// A task's requests are released one after another: the next when the
// previous has finished plus its tool wait (release "after_finish"), or at
// its recorded time but never before the previous finished ("recorded").
//
// Batching (each replica, as vLLM v1 schedules): every iteration has a token
// budget and a cap on running sequences. Running sequences are served first,
// in admission order: a decode takes one token, an unfinished prefill the
// next chunk that fits the budget. Then waiting requests are admitted in
// arrival order while the budget and the cap allow and the KV pool can hold
// their first chunk; the first that does not fit stops admission. A request
// hits the longest cached prefix of its prompt's full blocks (always leaving
// at least its last token to compute). A decode that needs a new block when
// the pool is full preempts the most recently admitted running sequence,
// which returns to the front of the waiting queue and later recomputes its
// prompt and generated tokens (hitting whatever is still cached). The
// iteration that completes a prefill samples the first output token.
// With scheduler "sglang" batches form as SGLang's scheduler forms them
// (docs/engine.md, "Batching, SGLang"): a prefill batch, when anything can
// be admitted, runs alone, ahead of the decodes; admission reserves KV for
// the running requests' future output.
//
// Event skipping. When every running sequence is decoding and no waiting
// request can be admitted, the batch stays fixed until a sequence finishes,
// a block cannot be allocated, or the next event arrives; the iterations up
// to that point are summed in closed form (step time is piecewise linear in
// the step index). Mode "step" advances one iteration at a time: the
// reference the tests compare with.
//
// Bill. An iteration of t seconds on a replica of G GPUs costs
// t x G x $/GPU-second. Each sequence in it pays the time to move its own KV
// bytes (reads and writes) at the achieved bandwidth, and the rest of t
// (weights, compute beyond memory time, overhead) is shared in proportion to
// the tokens each computed in the iteration. Time with nothing running is
// idle; tasks plus idle equal replicas x G x $/GPU-second x simulated time.
#ifndef KVBILL_ENGINE_SIMULATOR_H_
#define KVBILL_ENGINE_SIMULATOR_H_

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/roofline.h"
#include "kvbill/engine/records.h"
#include "kvbill/engine/router.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/policy/context_policy.h"
#include "kvbill/trace/trace.h"
#include "kvbill/util/result.h"

namespace kvbill {

// When a task's next request is released (trace.release in a scenario).
enum class ReleaseRule {
  kAfterFinish,  // "after_finish": the previous one's finish plus its tool wait
  kRecorded,     // "recorded": its recorded time, never before the previous finished
};
// "after_finish" or "recorded"; error otherwise.
Result<ReleaseRule> ParseReleaseRule(std::string_view name);

// Speculative decoding (docs/engine.md, "Speculative decoding"): a running
// sequence past its prefill takes k + 1 tokens of the budget (a tree
// draft's num_draft_tokens: verify_tokens) for a verification step (priced by the cost model, which
// adds the draft) and advances by E tokens on average: with a credit c of the sequence (1/2 at
// release), each step adds E to c, advances floor(c) tokens (at least 1, at
// most the tokens verified and what its output lacks) and keeps the
// fraction. So after j steps round(j x E) tokens have advanced (halves up),
// a request whose decode needs n tokens takes ceil((n - 1/2) / E) steps,
// the same for any seed, and as α -> 1 every step advances k + 1.
// Verification steps are never fused (event skipping steps through them).
struct SpeculativeDecoding {
  int num_speculative_tokens = 0;   // k; 0: off
  long double expected_tokens = 1;  // E per verification step, in [1, k + 1]
  // Query tokens of a verification step: a tree draft's num_draft_tokens
  // (cost/speculative.h); 0: k + 1, the chain's.
  int verify_tokens = 0;
  // Taken from each GPU's KV pool: the draft's weights (bytes per GPU) and
  // its KV (bytes per token per GPU, held for every token a sequence holds).
  long double draft_weight_bytes = 0;
  long double draft_kv_bytes_per_token = 0;
};

// Whose batches the engine forms (docs/engine.md, "Batching").
enum class SchedulerKind {
  kVllm,    // vLLM V1: decodes first, prefill chunks fill the budget, one mixed batch
  kSglang,  // SGLang: prefill batches apart from decode batches, prefill first
};

// SGLang's admission and retraction rule (python/sglang/srt/managers/
// schedule_policy.py and scheduler.py at the v0.5.3 release, commit
// a4a3d82; docs/engine.md, "Batching, SGLang"). A waiting request is
// admitted when its uncomputed prompt plus min(max_new, clip) stays below
// the free and evictable KV tokens less, for every running request,
// min(max_new - generated, clip) x new_token_ratio. The ratio starts at
// init_ratio, falls by (init_ratio - min_ratio) / decay_steps per decode
// batch down to min_ratio, returns to init_ratio when the replica idles and
// is re-estimated after a retraction.
struct SglangScheduling {
  long double init_ratio = 0.7L;         // SGLANG_INIT_NEW_TOKEN_RATIO x conservativeness 1.0
  long double min_ratio = 0.7L * 0.14L;  // x SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
  Tokens decay_steps = 600;              // SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
  Tokens clip_max_new = 4096;            // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
  Tokens retract_decode_steps = 20;      // tokens a retraction's new ratio allows per request
  Tokens max_prefill_tokens = 16384;     // input tokens of a prefill batch (the first may exceed)
  long double Decay() const {
    return (init_ratio - min_ratio) / static_cast<long double>(decay_steps);
  }
  // The ratio `steps` decode batches after it was set to `start`: each
  // batch takes max(ratio - decay, min_ratio).
  long double Ratio(long double start, Tokens steps) const {
    if (steps == 0) return start;
    return std::max(min_ratio, start - Decay() * static_cast<long double>(steps));
  }
};

struct SimulationConfig {
  ModelShape model;
  ElementFormat kv_format;
  std::string weight_format = "auto";
  GpuSpec gpu;
  int gpus_per_replica = 1;
  int replicas = 1;
  double memory_fraction = 0.9;
  double activation_reserve_gib = 0;
  double usd_per_gpu_hour = 0;
  RooflineParams roofline;
  // What prices an iteration (cost/cost_model.h). Null: the roofline of
  // `roofline` on `gpu` with gpus_per_replica as the tensor-parallel degree.
  std::shared_ptr<const CostModel> cost_model;
  // vLLM: the token budget of every iteration. SGLang: chunked_prefill_size,
  // the budget of a prefill batch (a decode batch has none).
  Tokens max_num_batched_tokens = 8192;
  // vLLM: max_num_seqs. SGLang: max_running_requests.
  int max_num_seqs = 256;
  SchedulerKind scheduler = SchedulerKind::kVllm;
  SglangScheduling sglang;
  RouterKind router = RouterKind::kRoundRobin;
  bool step_mode = false;
  bool prefix_caching = true;
  Tokens block_size = 16;
  // KV pool capacity in tokens: 0 = what memory holds; kUnlimitedTokens = never evict.
  Tokens capacity_tokens = 0;
  Seconds pin_during_tool_s = 0;
  // Host-memory offload tier per replica: blocks evicted from the GPU pool
  // are kept there (LRU) and reloaded over the link when that is faster than
  // recomputing them. 0: no tier.
  Tokens offload_capacity_tokens = 0;
  double offload_link_bytes_per_s = 50e9;
  ReleaseRule release = ReleaseRule::kAfterFinish;
  // Load factor (> 0): a task arrives (arrival - first arrival) / load after
  // the run's start; its requests keep their gaps (tool waits, recorded
  // times relative to its first). 2 = tasks start twice as often.
  double load = 1;
  // The client sends at most this many tasks at once (0: no cap): a task
  // that arrives while that many are in flight waits at the client, first
  // come first served, and is sent when one finishes; its requests are
  // released from then on (RequestRecord::release_s is when it was sent, so
  // the wait at the client is in no latency). How guidellm drives a server
  // (docs/engine.md, "Client concurrency cap").
  int client_max_tasks = 0;
  // The replica's API server (tokenisation, request handling) serves
  // requests one at a time before its scheduler sees them: each takes
  // frontend_per_request_s + frontend_per_token_s x prompt tokens. 0: none.
  Seconds frontend_per_request_s = 0;
  Seconds frontend_per_token_s = 0;
  // Latency between the client and the scheduler that queues nothing
  // (network, hand-off to the engine process), added after the API server.
  Seconds request_latency_s = 0;
  // The longest sequence a request may reach (vLLM's max_model_len): a
  // request whose prompt plus output tokens exceed it is refused with an
  // error response, as vLLM's API server refuses prompt + max_tokens over
  // the limit, and its task ends there (the agent gets no reply to go on
  // with). 0: no limit.
  Tokens max_model_len = 0;
  SpeculativeDecoding speculative;
};
inline constexpr Tokens kUnlimitedTokens = -1;

// What speculative decoding did in a run (deployment.speculative), and what
// it gained: each iteration with verification steps is priced a second time
// as the same deployment without speculation would run it (its verification
// steps as plain decode steps, no draft), and a plain decode step of the
// verifying sequences alone. Speculation cost the iteration minus the plain
// one plus that decode step; without it, the tokens it advanced would have
// taken (advanced / sequences) such decode steps. decode_speedup is the
// ratio of the sums (docs/engine.md#speculative-decoding).
struct SpeculationTotals {
  std::int64_t verification_steps = 0;  // iterations that verified drafts
  std::int64_t verified_sequences = 0;  // sequence-steps verified
  Tokens advanced_tokens = 0;           // tokens those steps advanced
  long double speculative_s = 0;        // their decode time with speculation
  long double plain_s = 0;              // the same tokens' time without it

  long double TokensPerStep() const {
    return verified_sequences > 0 ? static_cast<long double>(advanced_tokens) /
                                        static_cast<long double>(verified_sequences)
                                  : 0;
  }
  long double MeanBatch() const {
    return verification_steps > 0 ? static_cast<long double>(verified_sequences) /
                                        static_cast<long double>(verification_steps)
                                  : 0;
  }
  // Decode tokens a second with speculation over without it (1: no effect).
  long double DecodeSpeedup() const { return speculative_s > 0 ? plain_s / speculative_s : 1; }
};

// What a run adds up to, besides its request records.
struct SimulationTotals {
  Seconds simulated_s = 0;           // first arrival to last finish
  long double bill_usd = 0;          // replicas x GPUs x $/GPU-second x simulated_s
  long double idle_usd = 0;          // bill minus what the requests paid
  long double busy_gpu_seconds = 0;  // sum of iteration times x GPUs, all replicas
  std::int64_t iterations = 0;       // engine iterations simulated (fused ones count each)
  std::int64_t steps_advanced = 0;   // scheduler passes (fused blocks count once)
  std::int64_t kv_pool_blocks = 0;   // per replica: pages of one KV cache group
  int kv_cache_groups = 1;           // attention KV cache groups (kv_groups.h)
  std::int64_t evicted_blocks = 0;   // over all replicas
  // Pins (pin_during_tool_s) dropped before they expired because a replica
  // would otherwise have idled with requests waiting (engine.md).
  std::int64_t pins_yielded = 0;
  CostModelInfo cost_model;  // what the iteration times rest on
  // Requests refused over max_model_len (one per task cut short), the later
  // requests of those tasks that were never sent, and the longest refused
  // sequence (prompt + output tokens).
  std::int64_t rejected_requests = 0;
  std::int64_t unsent_requests = 0;
  Tokens longest_rejected_tokens = 0;
  // Tasks refused at their first request: they served nothing and have no
  // row (RunSummary::tasks counts the others).
  std::int64_t unserved_tasks = 0;
  // Their ids, in the order they arrived.
  std::vector<std::string> unserved_task_ids;
  // Of the planned requests of every task (refused and unsent included): how
  // many the context policy edited (Request::edited) and how many stand for
  // trace turns whose output is a placeholder.
  std::int64_t edited_requests = 0;
  std::int64_t placeholder_outputs = 0;
  Tokens max_model_len = 0;        // the limit applied (SimulationConfig), 0: none
  Tokens model_max_model_len = 0;  // the model's own (ModelShape::max_model_len)
  Seconds last_arrival_s = 0;      // the last task's arrival, since the first's
  // What one replica's KV pool holds, in tokens of a sequence, and whether a
  // request of max_model_len tokens fits it: vLLM refuses to start when it
  // does not (check_enough_kv_cache_memory).
  Tokens pool_tokens = 0;
  bool max_model_len_fits_pool = true;
  // The longest sequence one replica's pool holds alone, computing
  // max_num_batched_tokens an iteration (KvPool::LongestSequence: windowed
  // and chunked groups hold at most their window or chunk, state pages
  // count): the length admission and max_model_len_fits_pool judge by, and
  // the figure the context_limit warning quotes. pool_tokens with one group
  // and no state; above it with windowed groups.
  Tokens pool_sequence_tokens = 0;
  // The longest prompt plus output served (0: no limit): max_model_len on
  // vLLM; on SGLang its scheduler's max_req_len - 1, where max_req_len =
  // min(context length, pool tokens) - 1 (outputs are cut to end below
  // max_req_len; prompts of max_req_len - 5 tokens or more are refused too).
  Tokens request_len_limit = 0;
  // SGLang starts whatever its pool holds: when the pool, not
  // max_model_len, sets its max_req_len, request_len_limit (0: not so).
  Tokens pool_context_len = 0;
  // What the memory left after weights and the activation reserve holds, in
  // the same unit: pool_tokens unless capacity_tokens replaced the pool
  // (kUnlimitedBlocks for a model whose pages take no bytes).
  Tokens memory_pool_tokens = 0;
  SpeculationTotals speculation;  // all zero without deployment.speculative
};

// A task cut short at the model's context (RecordSink::OnTaskCut).
struct TaskCut {
  int task_index = 0;
  int unserved_requests = 0;
};

struct SimulationResult : SimulationTotals {
  std::vector<RequestRecord> requests;  // in finishing order
  std::vector<TaskCut> cut_tasks;       // in the order the tasks arrived
};

// One task as the engine takes it from a TaskFeed.
struct FedTask {
  int index = 0;                      // its position in the input (RequestRecord::task_index)
  std::string_view id;                // valid until the engine calls TaskFeed::Done(index)
  Seconds arrival_s = 0;              // on the trace clock
  std::span<const Request> requests;  // planned (ContextPolicy::Plan); valid until Done(index)
};

// The tasks of a run, in order of arrival: arrival_s never decreases, ties
// in input order. The first task's arrival is the run's time 0.
class TaskFeed {
 public:
  virtual ~TaskFeed() = default;
  // Fills *task and returns true, returns false at the end, or an error
  // (an input that cannot be read), which ends the run.
  virtual Result<bool> Next(FedTask* task) = 0;
  // The engine no longer reads task `index`: every request of it finished,
  // or it had none.
  virtual void Done(int index) = 0;
};

// Where a run's results go as they happen.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // A request finished (records come in finishing order).
  virtual void OnRequest(RequestRecord&& record) = 0;
  // Every request of task `index` has finished (or it had none); after its
  // records.
  virtual void OnTaskDone(int index) = 0;
  // Task `index` is cut short at the model's context (max_model_len, or
  // SGLang's request limit): its last `unserved` requests, the first one
  // beyond it and every later one, are not served. Said once, when the task
  // is read, before any of its records.
  virtual void OnTaskCut(int index, int unserved) = 0;
};

// The checks Simulate makes before it simulates anything, for a run whose
// tasks are all known (in input order): replicas, GPUs and block size, no
// empty prompt, the set-up (the model must fit, ...), then every task's
// time span. RunSimulation makes the same checks task by task as tasks
// arrive.
Status CheckRun(const SimulationConfig& config, std::span<const FedTask> tasks);

// CheckRun's checks of the tasks alone (no empty prompt; every task's time
// span), which do not depend on the configuration: made once for tasks that
// are run many times (the first failing task's error, in input order).
struct TaskChecks {
  Status prompts = OkStatus();
  Status time_spans = OkStatus();
};
TaskChecks CheckTasks(std::span<const FedTask> tasks);
// CheckRun with the task checks made already; the same errors, in the same order.
Status CheckRun(const SimulationConfig& config, const TaskChecks& checks);

// One replica's KV pool as a run sizes it, before any event: its pages (of
// one KV cache group), the tokens of a sequence it holds, and whether one
// request of config.max_model_len tokens fits it (SimulationTotals'
// pool_tokens and max_model_len_fits_pool; vLLM refuses to start a
// deployment where it does not). Errors: the set-up's (weights that leave no
// room for KV, ...).
struct ReplicaPoolSize {
  std::int64_t pages = 0;
  Tokens tokens = 0;
  Tokens sequence_tokens = 0;  // SimulationTotals::pool_sequence_tokens
  bool holds_max_model_len = true;
};
Result<ReplicaPoolSize> SizeReplicaPool(const SimulationConfig& config);

// Runs the simulation over the tasks `feed` gives, as they arrive, holding
// only the tasks in flight. Errors as Simulate's; a task's are found when
// it arrives (after the tasks before it were simulated).
Result<SimulationTotals> RunSimulation(const SimulationConfig& config, TaskFeed& feed,
                                       RecordSink& sink);

// Runs the simulation. `requests[i]` are the planned requests of `tasks[i]`
// (ContextPolicy::Plan). Errors: a model that does not fit the deployment, a
// request that can never be admitted (its first chunk larger than the pool),
// an arrival, a task's summed tool waits or a recorded time more than 10^9 s
// (31.7 years) after the start, where double seconds stop timing microseconds.
Result<SimulationResult> Simulate(const SimulationConfig& config, const std::vector<Task>& tasks,
                                  const std::vector<std::vector<Request>>& requests);

}  // namespace kvbill

#endif  // KVBILL_ENGINE_SIMULATOR_H_
