#include "kvbill/cost/api_replay.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>

namespace kvbill {
namespace {

struct Timed {
  Seconds time_s;
  std::size_t task;
  std::size_t request;
};

std::vector<ContentPiece> Pieces(const Request& request) {
  std::vector<ContentPiece> pieces;
  pieces.reserve(request.prompt.size());
  for (const PromptPiece& p : request.prompt) pieces.push_back(p.content);
  return pieces;
}

// The first `tokens` tokens of `pieces`. Precondition: 0 <= tokens <= their sum.
std::vector<ContentPiece> Cut(std::vector<ContentPiece> pieces, Tokens tokens) {
  std::size_t kept = 0;
  for (; kept < pieces.size() && tokens > 0; ++kept) {
    pieces[kept].tokens = std::min(pieces[kept].tokens, tokens);
    tokens -= pieces[kept].tokens;
  }
  pieces.resize(kept);
  return pieces;
}

Error Overflow() {
  return Error("api replay: a dollar amount overflows the $9,223,372 range of an amount");
}

}  // namespace

CallUsage RecordedCallUsage(const RecordedUsage& r, bool one_hour_writes) {
  CallUsage u;
  u.input = r.input;
  const Tokens other_writes = r.cache_creation - r.cache_creation_1h;
  u.cache_write_5m = one_hour_writes ? 0 : other_writes;
  u.cache_write_1h = r.cache_creation_1h + (one_hour_writes ? other_writes : 0);
  u.cache_read = r.cache_read;
  u.output = r.output;
  u.web_searches = r.web_searches;
  return u;
}

Result<ApiReplayOutcome> ReplayApi(const std::vector<Task>& tasks,
                                   const std::vector<std::vector<Request>>& requests,
                                   const ModelPrice& price, ProviderCache& cache,
                                   const ApiReplayOptions& options) {
  const ApiModelLookup lookup = [&](const std::string& /*model*/) -> Result<ApiModel> {
    return ApiModel{&price, &cache};
  };
  return ReplayApi(tasks, requests, lookup, options);
}

Result<ApiReplayOutcome> ReplayApi(const std::vector<Task>& tasks,
                                   const std::vector<std::vector<Request>>& requests,
                                   const ApiModelLookup& lookup, const ApiReplayOptions& options) {
  std::vector<Timed> order;
  for (std::size_t t = 0; t < requests.size(); ++t) {
    Seconds clock = t < tasks.size() ? tasks[t].arrival_s : 0;
    for (std::size_t r = 0; r < requests[t].size(); ++r) {
      const Request& request = requests[t][r];
      if (request.recorded_time_s) clock = *request.recorded_time_s;
      order.push_back({clock, t, r});
      clock += request.tool_s;
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Timed& a, const Timed& b) { return a.time_s < b.time_s; });

  ApiReplayOutcome out;
  std::vector<std::vector<ApiRequestOutcome>> by_task(requests.size());
  for (std::size_t t = 0; t < requests.size(); ++t) by_task[t].resize(requests[t].size());
  std::vector<ApiModel> used;  // each cache once, in order of first use
  for (const Timed& timed : order) {
    const Request& request = requests[timed.task][timed.request];
    auto model = lookup(request.model);
    if (!model) {
      return model.error().Within("task \"" + request.task_id + "\": request " +
                                  std::to_string(request.index + 1));
    }
    // A call the log records in fast mode ran at the fast rates: it is
    // priced so (the cache rules are the model's).
    std::optional<ModelPrice> fast;
    if (options.fast_mode_from_usage && request.usage && request.usage->fast) {
      auto f = FastModePrice(*model->price);
      if (!f) {
        return f.error().Within("task \"" + request.task_id + "\": request " +
                                std::to_string(request.index + 1) + " (usage.speed \"fast\")");
      }
      fast = std::move(*f);
    }
    // US-only inference (usage.inference_geo "us"): the sheet's us_multiplier.
    std::optional<ModelPrice> us_only;
    if (options.fast_mode_from_usage && request.usage && request.usage->us_only) {
      auto us = UsOnlyPrice(fast ? *fast : *model->price);
      if (!us) {
        return us.error().Within("task \"" + request.task_id + "\": request " +
                                 std::to_string(request.index + 1));
      }
      us_only = std::move(*us);
    }
    const ModelPrice& price = us_only ? *us_only : fast ? *fast : *model->price;
    ProviderCache& cache = *model->cache;
    if (std::none_of(used.begin(), used.end(),
                     [&](const ApiModel& m) { return m.cache == model->cache; })) {
      used.push_back(*model);
    }
    std::vector<ContentPiece> pieces = Pieces(request);
    const Tokens prompt = request.PromptTokens();
    Tokens after_breakpoint = 0;
    if (options.breakpoint_before_recorded_input && cache.ClientBreakpoints() && request.usage) {
      after_breakpoint = std::clamp<Tokens>(request.usage->input, 0, prompt);
    }
    if (options.warm_start_from_recorded && timed.request == 0 && request.usage &&
        request.usage->cache_read > 0) {
      cache.Seed(timed.time_s, pieces, std::min(request.usage->cache_read, prompt));
    }
    if (after_breakpoint > 0) pieces = Cut(std::move(pieces), prompt - after_breakpoint);
    ApiRequestOutcome& o = by_task[timed.task][timed.request];
    o.task = request.task_id;
    o.index = request.index;
    o.model = price.id;
    o.time_s = timed.time_s;
    if (const Tokens window = InputLimit(price); window > 0 && prompt > window) {
      ++out.over_input_limit;
      if (prompt > out.longest_over_limit) {
        out.longest_over_limit = prompt;
        out.over_limit_model = price.id;
        out.over_limit = window;
        out.over_limit_is_tier_window = window != price.max_input_tokens;
      }
    }
    o.predicted = cache.Serve(timed.time_s, pieces);
    o.predicted.input += after_breakpoint;
    o.predicted.output = request.output;
    // The call's searches, whatever its cache: billed in every what-if.
    if (request.usage) o.predicted.web_searches = request.usage->web_searches;
    auto cost = PriceCall(price, o.predicted);
    if (!cost) return cost.error();
    o.cost = cost->cost;
    if (request.usage) {
      o.recorded = request.usage;
      auto recorded_cost =
          PriceCall(price, RecordedCallUsage(*request.usage, options.one_hour_writes));
      if (!recorded_cost) return recorded_cost.error();
      o.recorded_cost = recorded_cost->cost;
    }
  }

  for (std::size_t t = 0; t < by_task.size(); ++t) {
    ApiTaskOutcome task;
    task.id = t < tasks.size() ? tasks[t].id : "";
    for (ApiRequestOutcome& o : by_task[t]) {
      ++task.requests;
      task.predicted += o.predicted;
      if (!AddMoney(o.cost, &task.cost)) return Overflow();
      if (o.recorded) {
        ++out.recorded_calls;
        const double recorded_read = static_cast<double>(o.recorded->cache_read);
        const double diff = std::fabs(static_cast<double>(o.predicted.cache_read) - recorded_read);
        if (diff <= 0.01 * recorded_read) ++out.cache_read_within_1pct;
        out.recorded += RecordedCallUsage(*o.recorded, options.one_hour_writes);
        out.predicted_of_recorded += o.predicted;
        if (!AddMoney(o.recorded_cost, &out.recorded_cost) ||
            !AddMoney(o.cost, &out.predicted_cost_of_recorded)) {
          return Overflow();
        }
      }
      out.requests.push_back(std::move(o));
    }
    out.predicted += task.predicted;
    if (!AddMoney(task.cost, &out.cost)) return Overflow();
    out.tasks.push_back(std::move(task));
  }
  for (const ApiModel& m : used) {
    auto creations = PriceCacheCreations(*m.price, m.cache->Creations());
    if (!creations) return creations.error();
    CacheCreationCost& sum = out.cache_creations;
    sum.creations += creations->creations;
    sum.created_tokens += creations->created_tokens;
    sum.storage_token_hours += creations->storage_token_hours;
    if (!AddMoney(creations->creation, &sum.creation) ||
        !AddMoney(creations->storage, &sum.storage) || !AddMoney(creations->total, &sum.total) ||
        !AddMoney(creations->total, &out.cost)) {
      return Overflow();
    }
  }
  return out;
}

}  // namespace kvbill
