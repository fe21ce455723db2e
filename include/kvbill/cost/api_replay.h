// API replay: the requests of a trace served by a provider's prompt cache
// (provider_cache.h) and priced at list (api_bill.h), in time order across
// all tasks (the cache is shared, as it is per organisation).
//
// Per-call models: a request may name its model (Request::model, from the
// log). The provider keys its cache by model (a Haiku call neither reads nor
// writes the Sonnet cache), so the replay asks an ApiModelLookup for each
// request's price and cache: requests of one model share one cache, requests
// of different models never do, and each request (its prediction and its
// recorded usage) is priced at its own model. The overload with one price and
// one cache prices every request at that model, whatever it names.
//
// A request's time is its trace turn's recorded start when it has one, else
// the previous request's time plus that request's tool wait (the first
// request: the task's arrival). Requests at the same time keep task order,
// then request order.
//
// When a request carries recorded usage, the prediction is compared with it:
// the recorded bill prices the writes the log records as 1-hour writes
// (RecordedUsage::cache_creation_1h) at the 1-hour rate and the other
// recorded cache writes at the replay's lifetime (one_hour_writes), and a
// call's cache read is "within 1%" when |predicted - recorded| <= 1% of
// recorded (both 0 counts).
//
// Warm start: a log starts with the provider cache already holding the
// prefix that earlier, unlogged calls wrote (Claude Code keeps a breakpoint
// after its system prompt and tools, shared by every session). With
// warm_start_from_recorded, the first request of each task that recorded a
// cache read of R tokens first seeds the cache with its first R tokens.
//
// Breakpoint before the recorded input: with a cache whose breakpoints the
// client places (ProviderCache::ClientBreakpoints, anthropic) and
// breakpoint_before_recorded_input, a request with recorded usage has its
// breakpoint where the client put it: before its last recorded `input`
// tokens (Anthropic's usage reports as input_tokens the tokens after the
// last breakpoint). Those tokens are predicted as input, neither written
// nor read. Without recorded usage the breakpoint is at the prompt's end.
// docs/billing.md#api-mode.
#ifndef KVBILL_COST_API_REPLAY_H_
#define KVBILL_COST_API_REPLAY_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/cost/api_bill.h"
#include "kvbill/cost/money.h"
#include "kvbill/cost/price_sheet.h"
#include "kvbill/cost/provider_cache.h"
#include "kvbill/policy/context_policy.h"
#include "kvbill/trace/trace.h"
#include "kvbill/util/result.h"

namespace kvbill {

struct ApiReplayOptions {
  bool warm_start_from_recorded = true;  // see above
  // Price all recorded cache writes at the 1-hour rate; when false, only
  // the recorded 1-hour writes (RecordedUsage::cache_creation_1h).
  bool one_hour_writes = false;
  bool breakpoint_before_recorded_input = true;  // see above
  // Price a call its recorded usage marks fast (Anthropic's fast mode) at
  // its model's fast rates (FastModePrice); false when every call is
  // repriced at another model.
  bool fast_mode_from_usage = true;
};

struct ApiRequestOutcome {
  std::string task;
  int index = 0;      // the request's index in its task
  std::string model;  // the sheet id of the model it was priced at
  Seconds time_s = 0;
  CallUsage predicted;  // output = the request's output tokens
  Money cost;
  std::optional<RecordedUsage> recorded;
  Money recorded_cost;  // 0 without recorded usage
};

struct ApiTaskOutcome {
  std::string id;
  int requests = 0;
  CallUsage predicted;
  Money cost;
};

struct ApiReplayOutcome {
  std::vector<ApiTaskOutcome> tasks;        // in task order
  std::vector<ApiRequestOutcome> requests;  // task order, then request order
  CallUsage predicted;                      // summed over all requests
  Money cost;                               // the requests' + cache_creations.total
  // Explicit caches created during the replay (gemini; zero otherwise),
  // charged outside the requests: PriceCacheCreations.
  CacheCreationCost cache_creations;
  // Over the requests with recorded usage only:
  int recorded_calls = 0;
  int cache_read_within_1pct = 0;
  CallUsage recorded;               // recorded usage in CallUsage fields
  CallUsage predicted_of_recorded;  // the predictions of those requests
  Money recorded_cost;
  Money predicted_cost_of_recorded;
  // Requests whose prompt is above their model's window (InputLimit): the
  // provider refuses them; priced here as if it served them.
  int over_input_limit = 0;
  Tokens longest_over_limit = 0;           // the longest such prompt
  std::string over_limit_model;            // its model's sheet id
  Tokens over_limit = 0;                   // and that model's window
  bool over_limit_is_tier_window = false;  // the long-context tier's, not max_input_tokens
};

// A model's list price and the provider cache its calls go through.
struct ApiModel {
  const ModelPrice* price = nullptr;  // non-null
  ProviderCache* cache = nullptr;     // non-null; the same object for every call of the model
};

// The price and cache of a request's model (Request::model; "" when the
// request names none). Called once per request; an error (e.g. a model
// with no price) stops the replay. Pointers stay valid until the replay
// returns.
using ApiModelLookup = std::function<Result<ApiModel>(const std::string& model)>;

// A call's recorded usage in CallUsage fields: the writes the log records as
// 1-hour writes at the 1-hour rate, the other writes 5-minute, or 1-hour too
// when `one_hour_writes` (a replay at a 1-hour lifetime).
CallUsage RecordedCallUsage(const RecordedUsage& r, bool one_hour_writes = false);

// Replays `requests` (requests[i] of tasks[i], as PlanRequests gives them),
// each through the cache of its model and priced at its model's price, as
// `lookup` gives them. Explicit cache creations are priced per cache at its
// model's price, in order of first use. Errors: the lookup's, prefixed with
// `task "T": request N: ` (N from 1), and overflow of an amount.
// Precondition: every task validated.
Result<ApiReplayOutcome> ReplayApi(const std::vector<Task>& tasks,
                                   const std::vector<std::vector<Request>>& requests,
                                   const ApiModelLookup& lookup, const ApiReplayOptions& options);

// Every request through `cache`, priced at `price`, whatever model it names.
Result<ApiReplayOutcome> ReplayApi(const std::vector<Task>& tasks,
                                   const std::vector<std::vector<Request>>& requests,
                                   const ModelPrice& price, ProviderCache& cache,
                                   const ApiReplayOptions& options);

}  // namespace kvbill

#endif  // KVBILL_COST_API_REPLAY_H_
