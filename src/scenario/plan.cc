#include "kvbill/scenario/plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "kvbill/cost/cost_model.h"
#include "kvbill/cost/speculative.h"
#include "kvbill/hardware/fit.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/metrics/billing.h"
#include "kvbill/metrics/run_aggregator.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/weight_bytes.h"
#include "kvbill/scenario/levers.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/scenario/warnings.h"
#include "kvbill/trace/writer.h"
#include "scenario/scenario_model.h"

namespace kvbill {
namespace {

std::string Num(double v, int decimals) { return FormatFixed(v, decimals); }

// The peak prefill rate of one replica, tokens per second: the most, over
// iterations of n prompt tokens (n = 1, 2, 4, ... and max_num_batched_tokens,
// the most one iteration computes) split evenly among b sequences (b = 1,
// 2, 4, ... up to n and max_num_seqs), of n / step time with every chunk at
// context 0 (the cheapest chunk of its length).
double PeakPrefillTokensPerS(const SimulationConfig& config) {
  if (!config.cost_model) return 0;
  const Tokens most = std::max<Tokens>(1, config.max_num_batched_tokens);
  const Tokens seqs = std::max(1, config.max_num_seqs);
  std::vector<Tokens> totals;
  for (Tokens n = 1; n < most; n *= 2) totals.push_back(n);
  totals.push_back(most);
  double best = 0;
  for (const Tokens n : totals) {
    std::vector<Tokens> splits;
    for (Tokens b = 1; b < std::min(n, seqs); b *= 2) splits.push_back(b);
    splits.push_back(std::min(n, seqs));
    for (const Tokens b : splits) {
      std::vector<ScheduledWork> work;
      for (Tokens i = 0; i < b; ++i) {
        work.push_back(ScheduledWork{0, n / b + (i < n % b ? 1 : 0), true});
      }
      std::vector<long double> own(work.size(), 0);
      const double t = static_cast<double>(config.cost_model->IterationSeconds(work, own));
      if (t > 0) best = std::max(best, static_cast<double>(n) / t);
    }
  }
  return best;
}

// The fewest replicas that carry `tokens` within the workload's ideal time
// at `peak` tokens per second each; 1 when either is unknown.
int ReplicasToCarry(double tokens, double peak, const WorkloadRate& rate) {
  if (!(peak > 0) || !(rate.ideal_s > 0) || !(tokens > 0)) return 1;
  return std::max(1, static_cast<int>(std::ceil(tokens / (peak * rate.ideal_s) - 1e-12)));
}

// The words of a pruning bound's verdict.
struct BoundWords {
  const char* name;   // "throughput"
  const char* verb;   // "decode"
  const char* needs;  // "the workload needs "
};

// "pruned by the throughput bound: 1 replica(s) decode at most 3,456
// tokens/s, the workload needs 4,190 (2 replicas, 8 GPUs > --max-gpus 4)".
std::string PrunedReason(const BoundWords& words, double peak, double tokens,
                         const WorkloadRate& rate, int replicas, const PlanCandidate& c,
                         const PlanSpace& space) {
  const int most = space.max_gpus / c.tensor_parallel;
  return std::string("pruned by the ") + words.name + " bound: " + std::to_string(most) +
         " replica(s) " + words.verb + " at most " +
         FormatWithSeparators(static_cast<std::int64_t>(std::floor(peak * most))) + " tokens/s, " +
         words.needs +
         FormatWithSeparators(static_cast<std::int64_t>(std::ceil(tokens / rate.ideal_s))) + " (" +
         std::to_string(replicas) + " replicas, " + std::to_string(replicas * c.tensor_parallel) +
         " GPUs > --max-gpus " + std::to_string(space.max_gpus) + ")";
}

// The distinct prompt tokens of a workload that only a prefill computes
// (WorkloadRate::fresh_prompt_tokens), folded request by request.
class FreshPromptTokens {
 public:
  explicit FreshPromptTokens(Tokens block_size) : block_size_(std::max<Tokens>(1, block_size)) {}

  // The requests of one task, in order.
  void AddTask(const std::vector<Request>& requests) {
    const Prompt* previous = nullptr;
    for (const Request& r : requests) {
      outputs_.insert(r.output_identity);
      if (AddExplicit(r)) {
        previous = nullptr;
        continue;
      }
      // An agent's prompt usually extends the previous one: its new pieces only.
      std::size_t first = 0;
      if (previous != nullptr && r.prompt.StartsWith(*previous)) first = previous->size();
      for (std::size_t i = first; i < r.prompt.size(); ++i) {
        const ContentPiece& p = r.prompt[i].content;
        if (p.tokens > 0) pieces_[p.identity].emplace_back(p.offset, p.offset + p.tokens);
      }
      previous = &r.prompt;
    }
  }

  std::int64_t Total() {
    std::int64_t total = 0;
    for (auto& [identity, spans] : pieces_) {
      if (outputs_.count(identity) > 0) continue;  // a request generates it: decode may compute it
      std::sort(spans.begin(), spans.end());
      Tokens end = std::numeric_limits<Tokens>::min();
      for (const auto& [from, to] : spans) {
        const Tokens start = std::max(from, end);
        if (to > start) total += to - start;
        end = std::max(end, to);
      }
    }
    for (const auto& block : blocks_) total += block.second;
    return total;
  }

 private:
  // A prompt published as trace block hashes, named by them as the engine
  // names it (engine/request_state.cc: when the engine's block divides the
  // trace's and every block has a hash): each distinct trace block's full
  // engine blocks, the fewest any request holds. False: named by its pieces.
  bool AddExplicit(const Request& r) {
    if (!r.explicit_blocks) return false;
    const Tokens size = r.explicit_blocks->block_size;
    const Tokens prompt = r.PromptTokens();
    if (size <= 0 || size % block_size_ != 0 ||
        std::ssize(r.explicit_blocks->hashes) < (prompt + size - 1) / size) {
      return false;
    }
    for (Tokens i = 0; i * size < prompt; ++i) {
      const Tokens full = std::min(size, prompt - i * size) / block_size_ * block_size_;
      const std::uint64_t hash = r.explicit_blocks->hashes[static_cast<std::size_t>(i)];
      auto [it, added] = blocks_.emplace(hash, full);
      if (!added) it->second = std::min(it->second, full);
    }
    return true;
  }

  Tokens block_size_;
  std::unordered_set<std::uint64_t> outputs_;
  std::unordered_map<std::uint64_t, std::vector<std::pair<Tokens, Tokens>>> pieces_;
  std::unordered_map<std::uint64_t, Tokens> blocks_;
};

// A run's summary counting only the measured tasks: rate.warmup[i] marks
// task i of the trace (by position) as warm-up, simulated but left out of
// the latencies and of the bill per task. The measured tasks' bill is their
// own cost ("busy" billing) or their cost with their share of the idle time
// as "amortized" billing spreads it (the dedicated bill, shared); the run's
// totals stay the whole run's. No warm-up: the run's own summary.
// What a run says besides its summary: the requests it refused over
// max_model_len (or SGLang's pool cap), and its warnings as simulate would
// list them (of the measured tasks' summary).
struct RunNotes {
  std::int64_t refused = 0;
  Tokens request_len_limit = 0;  // SimulationTotals'
  Tokens pool_context_len = 0;   // SGLang's pool cap, when it was the limit
  std::vector<RunWarning> warnings;
};

Result<RunSummary> RunMeasured(const Scenario& s, WorkloadCache& workloads,
                               const std::vector<bool>& warmup, RunNotes* notes) {
  if (s.pricing || std::find(warmup.begin(), warmup.end(), true) == warmup.end()) {
    auto run = RunScenario(s, workloads);
    if (!run) return run.error();
    *notes = {run->result.rejected_requests, run->result.request_len_limit,
              run->result.pool_context_len, RunWarnings(s, *run)};
    return run->summary;
  }
  auto warm = [&warmup](int i) {
    return i >= 0 && i < std::ssize(warmup) && warmup[static_cast<std::size_t>(i)];
  };
  std::map<int, TaskAccumulator> tasks;  // by position in the trace
  RequestLatencies latencies;
  RunObserver observer;
  observer.on_request = [&](const RequestRecord& r) {
    tasks[r.task_index].Add(r);
    if (!warm(r.task_index)) latencies.Add(r);
  };
  observer.on_restart = [&] {
    tasks.clear();
    latencies = RequestLatencies();
  };
  auto run = RunScenario(s, workloads, observer);
  if (!run) return run.error();
  std::vector<TaskMetrics> all;
  std::vector<bool> measured;
  for (const auto& [index, task] : tasks) {
    all.push_back(task.Metrics(""));
    measured.push_back(!warm(index));
  }
  const BillingRule billing = run->summary.billing;
  if (billing != BillingRule::kBusy) AmortizeIdle(run->totals.idle_usd, &all);
  TaskSums sums;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (measured[i]) sums.Add(all[i]);
  }
  RunSummary summary = sums.Build();
  ApplyTotals(run->totals, &summary);
  latencies.Build(&summary);
  summary.billing = billing;
  summary.idle_gpu_usd = run->summary.idle_gpu_usd;
  summary.idle_usd = 0;
  summary.cost_usd = summary.task_cost_usd;
  *notes = {run->totals.rejected_requests, run->totals.request_len_limit,
            run->totals.pool_context_len, EngineRunWarnings(s, run->totals, summary)};
  return summary;
}

}  // namespace

double PeakDecodeTokensPerS(const SimulationConfig& config) {
  if (!config.cost_model) return 0;
  const SpeculativeDecoding& spec = config.speculative;
  const bool speculating = spec.num_speculative_tokens > 0;
  const Tokens query = !speculating             ? 1
                       : spec.verify_tokens > 0 ? spec.verify_tokens
                                                : spec.num_speculative_tokens + 1;
  const double advance = speculating ? static_cast<double>(spec.expected_tokens) : 1.0;
  const int most = static_cast<int>(
      std::clamp<Tokens>(std::max<Tokens>(1, config.max_num_batched_tokens) / query, 1,
                         std::max(1, config.max_num_seqs)));
  double best = 0;
  std::vector<int> sizes;
  for (int b = 1; b < most; b *= 2) sizes.push_back(b);
  sizes.push_back(most);
  for (int b : sizes) {
    std::vector<ScheduledWork> work(static_cast<std::size_t>(b),
                                    ScheduledWork{1, query, false, speculating});
    std::vector<long double> own(work.size(), 0);
    const double t = static_cast<double>(config.cost_model->IterationSeconds(work, own));
    if (t > 0) best = std::max(best, b * advance / t);
  }
  return best;
}

std::vector<std::pair<std::string, std::string>> CandidateSettings(
    const PlanCandidate& c, int replicas, const std::optional<std::string>& price,
    const std::optional<std::string>& speculative_on) {
  std::vector<std::pair<std::string, std::string>> s = {
      {"/deployment/gpu", nlohmann::json(c.gpu).dump()},
      {"/deployment/gpus_per_replica", std::to_string(c.tensor_parallel)},
      {"/deployment/expert_parallel", std::to_string(c.expert_parallel)},
      {"/deployment/replicas", std::to_string(replicas)},
      {"/weight_format", nlohmann::json(c.weight_format).dump()},
      {"/kv_format", nlohmann::json(c.kv_format).dump()}};
  if (price) s.emplace_back("/deployment/usd_per_gpu_hour", *price);
  if (c.speculative == "off") {
    s.emplace_back("/deployment/speculative", "null");
  } else if (speculative_on) {
    s.emplace_back("/deployment/speculative", *speculative_on);
  }
  return s;
}

std::optional<std::string> SpeculativeOnSetting(const Scenario& scenario) {
  if (scenario.deployment.speculative) return std::nullopt;
  auto model = LoadScenarioModel(scenario);
  const std::string method = model ? DefaultSpeculativeMethod(*model) : "eagle3";
  return nlohmann::json({{"method", method}}).dump();
}

Result<WorkloadRate> MeasureWorkload(const Scenario& scenario, Tokens limit) {
  auto source = TaskSource::Open(scenario);
  if (!source) return source.error();
  auto policy = MakeContextPolicy(scenario.context_policy);
  if (!policy) return policy.error().Within(scenario.source + "#/context_policy");
  WorkloadRate rate;
  std::optional<Seconds> first, last;
  std::vector<std::pair<Seconds, Seconds>> tasks;  // arrival, tool waits
  FreshPromptTokens fresh(scenario.prefix_cache.block_size);
  Task task;
  while (true) {
    auto more = (*source)->Next(&task);
    if (!more) return more.error();
    if (!*more) break;
    Seconds tools = 0;
    const std::vector<Request> requests = (*policy)->Plan(task);
    bool over = false;
    for (const Request& r : requests) {
      rate.output_tokens += r.output;
      tools += r.tool_s;
      const Tokens length = r.PromptTokens() + r.output;
      rate.longest_request = std::max(rate.longest_request, length);
      over = over || (limit > 0 && length > limit);
    }
    rate.tasks_over_limit += over ? 1 : 0;
    fresh.AddTask(requests);
    first = first ? std::min(*first, task.arrival_s) : task.arrival_s;
    last = last ? std::max(*last, task.arrival_s) : task.arrival_s;
    tasks.emplace_back(task.arrival_s, tools);
    ++rate.tasks;
  }
  const double load = scenario.trace.load > 0 ? scenario.trace.load : 1;
  for (const auto& [arrival, tools] : tasks) {
    rate.ideal_s = std::max(rate.ideal_s, (arrival - *first) / load + tools);
    rate.mean_task_s += tools / static_cast<double>(tasks.size());
  }
  if (first) rate.arrival_s = (*last - *first) / load;
  rate.fresh_prompt_tokens = fresh.Total();
  return rate;
}

Result<std::string> WindowScenarioText(const std::string& text, const Scenario& scenario,
                                       const std::string& window_kind, double load,
                                       const std::string& trace_path, PlanWindow* window) {
  *window = PlanWindow{};
  window->kind = window_kind;
  window->load = load;
  auto doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Error(scenario.source + ": not valid JSON");
  nlohmann::ordered_json trace = doc.contains("trace") && doc["trace"].is_object()
                                     ? doc["trace"]
                                     : nlohmann::ordered_json::object();
  trace["load"] = load;
  auto tasks = LoadScenarioTasks(scenario);
  if (!tasks) return tasks.error();
  window->all_tasks = std::ssize(*tasks);
  window->tasks = window->all_tasks;
  if (tasks->empty()) {
    doc["trace"] = trace;
    return doc.dump();
  }
  Seconds first = (*tasks)[0].arrival_s;
  for (const Task& t : *tasks) first = std::min(first, t.arrival_s);
  if (window_kind == "all") {
    // The whole trace: from its first arrival to its last, at the load.
    Seconds last = first;
    for (const Task& t : *tasks) last = std::max(last, t.arrival_s);
    window->end_s = (last - first) / load;
    doc["trace"] = trace;
    return doc.dump();
  }
  std::vector<Seconds> at;
  for (const Task& t : *tasks) at.push_back((t.arrival_s - first) / load);
  std::vector<Seconds> sorted = at;
  std::sort(sorted.begin(), sorted.end());
  std::size_t best = 0, best_count = 0;
  for (std::size_t i = 0, j = 0; i < sorted.size(); ++i) {
    while (j < sorted.size() && sorted[j] < sorted[i] + kPlanWindowS) ++j;
    if (j - i > best_count) {
      best_count = j - i;
      best = i;
    }
  }
  window->start_s = sorted[best];
  window->end_s = sorted[best] + kPlanWindowS;
  std::ofstream out(trace_path, std::ios::binary);
  if (!out) return Error(trace_path + ": cannot write the window's trace");
  TraceWriter writer(&out);
  window->tasks = 0;
  for (std::size_t i = 0; i < tasks->size(); ++i) {
    if (at[i] < window->start_s - kPlanWarmupS || at[i] >= window->end_s) continue;
    if (auto s = writer.Write((*tasks)[i]); !s) return s.error();
    ++window->tasks;
    window->warmup.push_back(at[i] < window->start_s);
    if (at[i] < window->start_s) ++window->warmup_tasks;
  }
  out.close();
  if (!out) return Error(trace_path + ": cannot write the window's trace");
  trace.erase("generator");
  trace.erase("tasks");
  trace["file"] = trace_path;
  trace["format"] = "native";
  doc["trace"] = trace;
  return doc.dump();
}

std::string SloText(const std::vector<SloCheck>& checks) {
  std::string text;
  for (const SloCheck& c : checks) {
    text += std::string(text.empty() ? "" : ", ") + c.target.metric +
            (c.not_measured.empty() ? " " + Num(c.actual, 3) + " s " + (c.held ? "<=" : ">") + " " +
                                          Num(c.target.max, 3) + " s"
                                    : " not measured (" + c.not_measured + ")");
  }
  return text;
}

Result<std::vector<PlanCandidate>> EnumerateCandidates(const Scenario& scenario,
                                                       const PlanSpace& space) {
  std::vector<std::string> gpus = space.gpus;
  if (gpus.empty()) {
    for (const GpuSpec& g : GpuCatalog()) gpus.push_back(g.id);
  }
  for (const std::string& g : gpus) {
    if (!LookupGpu(g)) return Error("--gpus: unknown GPU \"" + g + "\" (`kvbill gpus` lists them)");
  }
  for (const auto& [g, price] : space.gpu_prices) {
    if (!LookupGpu(g)) {
      return Error("--gpu-price: unknown GPU \"" + g + "\" (`kvbill gpus` lists them)");
    }
  }
  std::vector<std::string> kv = space.kv_formats, weights = space.weight_formats;
  if (kv.empty()) kv.push_back(scenario.kv_format);
  // "auto" as a scenario's kv_format reads it: the checkpoint's declared KV
  // format, else the model's dtype.
  for (std::string& f : kv) {
    if (f != "auto") continue;
    auto model = LoadScenarioModel(scenario);
    if (!model) return model.error();
    f = VllmAutoKvFormat(*model);
    // "auto,bf16" where auto reads bf16: one format twice.
    if (const auto parsed = ParseElementFormat(f); parsed && space.kv_formats.size() > 1) {
      for (const std::string& other : space.kv_formats) {
        auto o = ParseElementFormat(other);
        if (other != "auto" && o && o->name == parsed->name) {
          return Error("--kv-formats: auto is " + parsed->name + " for this model, \"" + other +
                       "\" is already in the list (each format once)");
        }
      }
    }
  }
  if (weights.empty()) weights.push_back(scenario.weight_format);
  std::string names;
  for (const std::string& n : ElementFormatNames()) names += (names.empty() ? "" : ", ") + n;
  for (const std::string& f : kv) {
    if (!ParseElementFormat(f)) {
      return Error("--kv-formats: unknown format \"" + f + "\" (one of " + names + ")");
    }
  }
  for (const std::string& f : weights) {
    if (f != "auto" && !ParseElementFormat(f)) {
      return Error("--weight-formats: unknown format \"" + f + "\" (auto, or one of " + names +
                   ")");
    }
  }
  for (auto it = space.speculative.begin(); it != space.speculative.end(); ++it) {
    if (*it != "off" && *it != "on") {
      return Error("--speculative: \"" + *it + "\" is not off or on");
    }
    if (std::find(space.speculative.begin(), it, *it) != it) {
      return Error("--speculative: \"" + *it + "\" is already in the list (each setting once)");
    }
  }
  if (space.max_gpus < 1) return Error("--max-gpus: must be at least 1");
  if (space.max_gpus > kMaxPlanGpus) {
    return Error("--max-gpus: at most " + std::to_string(kMaxPlanGpus) +
                 " (plan replays the workload at every replica count it considers)");
  }
  SimulationConfig config;
  {
    auto c = BuildSimulationConfig(scenario);
    if (!c) return c.error();
    config = std::move(*c);
  }
  const ModelShape& model = config.model;
  const bool moe = model.moe.layers > 0 && model.moe.experts > 0;
  std::vector<PlanCandidate> out;
  for (const std::string& g : gpus) {
    for (int tp = 1; tp <= space.max_gpus; tp *= 2) {
      // Expert parallelism keeps the routed experts whole, which a block-
      // quantized checkpoint may need (Qwen3-235B-A22B-FP8 over 8 GPUs).
      const bool ep_runs = moe && tp > 1 && ValidExpertParallel(model, tp) &&
                           ValidTensorParallel(model, tp, /*experts_split=*/false);
      std::vector<int> eps;
      if (ValidTensorParallel(model, tp)) eps.push_back(1);
      // Expert parallelism over tp GPUs, when each holds a whole expert.
      if (ep_runs) eps.push_back(tp);
      for (int ep : eps) {
        for (const std::string& w : weights) {
          for (const std::string& k : kv) {
            for (const std::string& s : space.speculative) {
              PlanCandidate c;
              c.index = std::ssize(out);
              c.gpu = g;
              c.tensor_parallel = tp;
              c.expert_parallel = ep;
              c.weight_format = w;
              c.kv_format = k;
              c.speculative = s;
              if (s == "on") {
                c.speculative_method = scenario.deployment.speculative
                                           ? scenario.deployment.speculative->method
                                           : DefaultSpeculativeMethod(model);
              }
              out.push_back(c);
            }
          }
        }
      }
    }
  }
  auto api = ApiCandidates(space, std::ssize(out));
  if (!api) return api.error();
  out.insert(out.end(), api->begin(), api->end());
  return out;
}

namespace {

// Whether a candidate runs on the GPU the scenario names (an id, an alias or
// a GPU file: compared by the catalog id it resolves to).
bool IsScenarioGpu(const Scenario& scenario, const GpuSpec& gpu) {
  auto own = LookupGpu(scenario.deployment.gpu);
  return own && own->id == gpu.id;
}

}  // namespace

CandidateOutcome DecideCandidate(const std::string& text, const Scenario& scenario,
                                 const PlanSpace& space, const WorkloadRate& rate,
                                 const PlanCandidate& c, WorkloadCache& workloads) {
  if (c.api()) return DecideApiCandidate(text, scenario, space, rate, c, workloads);
  CandidateOutcome o;
  o.candidate = c;
  o.max_replicas = space.max_gpus / c.tensor_parallel;
  // The day's tasks: --tasks-per-day, else the trace's rate at its load.
  const double per_day = space.tasks_per_day > 0 ? space.tasks_per_day : rate.tasks_per_day();
  auto gpu = LookupGpu(c.gpu);
  if (!gpu) {
    o.status = "error";
    o.reason = gpu.error().message();
    return o;
  }
  // The price: --gpu-price's for this GPU, else the scenario's when this is
  // the scenario's own GPU (its deployment.usd_per_gpu_hour prices that GPU,
  // not every GPU plan compares), else the catalog's.
  const auto price_it = space.gpu_prices.find(c.gpu);
  std::optional<std::string> price_setting;  // the candidate's deployment.usd_per_gpu_hour
  if (price_it != space.gpu_prices.end()) {
    o.usd_per_gpu_hour = price_it->second;
    price_setting = nlohmann::json(price_it->second).dump();
    o.price_source = "--gpu-price";
  } else if (scenario.deployment.usd_per_gpu_hour && IsScenarioGpu(scenario, *gpu)) {
    o.usd_per_gpu_hour = *scenario.deployment.usd_per_gpu_hour;
    o.price_source = "the scenario's deployment.usd_per_gpu_hour";
  } else {
    o.usd_per_gpu_hour = gpu->usd_per_gpu_hour;
    if (scenario.deployment.usd_per_gpu_hour) price_setting = "null";
    o.price_source =
        gpu->price_source.empty()
            ? "the GPU catalog"
            : gpu->price_source + (gpu->price_date.empty() ? "" : ", " + gpu->price_date);
  }
  // 1. Formats the GPU runs.
  for (const auto& [role, name] :
       {std::pair{FormatRole::kWeights, c.weight_format}, {FormatRole::kKvCache, c.kv_format}}) {
    if (name == "auto") continue;
    auto format = ParseElementFormat(name);
    if (!format) {
      o.status = "error";
      o.reason = format.error().message();
      return o;
    }
    const FormatRun run = HowGpuRuns(*gpu, role, *format);
    if (!run.runs()) {
      o.status = "format";
      o.reason = run.Describe(false);
      return o;
    }
  }
  const std::optional<std::string> speculative_on = SpeculativeOnSetting(scenario);
  auto scenario_at = [&](int replicas) -> Result<Scenario> {
    std::string t = text;
    auto settings = CandidateSettings(c, replicas, price_setting, speculative_on);
    if (c.speculative != "off" && speculative_on) {
      // What else turning it on takes (SGLang's overlap scheduler off).
      for (auto& edit : SpeculationOnSettings(scenario, *speculative_on)) {
        if (edit.first != "/deployment/speculative") settings.push_back(std::move(edit));
      }
    }
    for (const auto& [pointer, value] : settings) {
      auto edited = WithSetting(t, pointer, value);
      if (!edited) return edited.error();
      t = std::move(*edited);
    }
    return ParseScenario(t, scenario.source);
  };
  auto one = scenario_at(1);
  if (!one) {
    o.status = "error";
    o.reason = one.error().message();
    return o;
  }
  auto config = BuildSimulationConfig(*one);
  if (!config) {
    o.status = "format";
    o.reason = config.error().message();
    return o;
  }
  o.usd_per_gpu_hour = config->usd_per_gpu_hour;  // the catalog's, the scenario's or --gpu-price
  // 2. Fit: the engine's own condition (engine/setup.cc): the weights leave
  // room for KV on each GPU.
  {
    auto weights = ComputeWeightBytes(config->model, config->weight_format);
    if (!weights) {
      o.status = "error";
      o.reason = weights.error().message();
      return o;
    }
    const double capacity =
        std::floor(static_cast<double>(config->gpu.usable_memory_bytes) * config->memory_fraction) -
        config->activation_reserve_gib * kBytesPerGiB;
    const double per_gpu = static_cast<double>(weights->PerGpu(c.tensor_parallel));
    if (capacity <= per_gpu) {
      o.status = "no_fit";
      o.reason = "weights " + FormatBinaryBytes(per_gpu) + " per GPU leave no room for KV in " +
                 FormatBinaryBytes(std::max(0.0, capacity)) + " per GPU";
      return o;
    }
  }
  // ... and, as vLLM checks at start-up (check_enough_kv_cache_memory), the
  // KV pool left holds one request of max_model_len. SGLang starts anyway
  // and refuses the requests its pool cannot hold: the run tells.
  if (config->scheduler != SchedulerKind::kSglang) {
    auto pool = SizeReplicaPool(*config);
    if (!pool) {
      o.status = "no_fit";
      o.reason = pool.error().message();
      return o;
    }
    if (!pool->holds_max_model_len) {
      o.status = "no_fit";
      o.reason = "the KV pool left per replica holds " +
                 FormatWithSeparators(pool->sequence_tokens) +
                 " tokens of a sequence, less than one request of max_model_len " +
                 FormatWithSeparators(config->max_model_len) +
                 " (vLLM refuses to start it); set engine.max_model_len at most that in the "
                 "scenario to plan it";
      return o;
    }
  }
  // 3. Calibration.
  const CostModelInfo info = config->cost_model ? config->cost_model->Describe() : CostModelInfo{};
  o.uncalibrated = !info.calibrated;
  o.validation_regime = info.regime;
  if (const auto& r = info.regime_validation) o.validation_median_error = DecidingMedianError(*r);
  o.weakly_validated = WeaklyValidated(info);
  if (o.uncalibrated && !space.allow_uncalibrated) {
    o.status = "uncalibrated";
    o.reason = "the cost model is not calibrated for " + c.gpu +
               (info.notes.empty() ? "" : " (" + info.notes.front() + ")") +
               "; --allow-uncalibrated includes it";
    return o;
  }
  // 4. Throughput bound.
  o.peak_decode_tokens_per_s = PeakDecodeTokensPerS(*config);
  o.min_replicas =
      ReplicasToCarry(static_cast<double>(rate.output_tokens), o.peak_decode_tokens_per_s, rate);
  if (o.min_replicas > o.max_replicas) {
    o.status = "pruned";
    o.reason =
        PrunedReason({"throughput", "decode", "the workload needs "}, o.peak_decode_tokens_per_s,
                     static_cast<double>(rate.output_tokens), rate, o.min_replicas, c, space);
    return o;
  }
  // The day's rate, whatever the window holds: its tasks' output tokens,
  // decoded at no more than the peak, on average. A window of fewer tasks
  // than run at once (window_short) lowers the bound above; this one it
  // cannot (3,000,000 coding-agent tasks a day are 580,000 output tokens a
  // second, some 26 H100s of Llama-3.1-8B at their peak, where an 8-task
  // window asks for one).
  const double day_tokens_per_s = rate.tasks > 0 ? per_day / 86400.0 *
                                                       static_cast<double>(rate.output_tokens) /
                                                       static_cast<double>(rate.tasks)
                                                 : 0;
  if (o.peak_decode_tokens_per_s > 0 && day_tokens_per_s > 0) {
    const int day = std::max(
        1, static_cast<int>(std::ceil(day_tokens_per_s / o.peak_decode_tokens_per_s - 1e-12)));
    if (day > o.max_replicas) {
      const int most = space.max_gpus / c.tensor_parallel;
      o.status = "pruned";
      o.min_replicas = day;
      o.reason =
          "pruned by the daily throughput bound: " + std::to_string(most) +
          " replica(s) decode at most " +
          FormatWithSeparators(
              static_cast<std::int64_t>(std::floor(o.peak_decode_tokens_per_s * most))) +
          " tokens/s, " + FormatWithSeparators(static_cast<std::int64_t>(std::llround(per_day))) +
          " tasks a day of " +
          FormatWithSeparators(static_cast<std::int64_t>(std::llround(
              static_cast<double>(rate.output_tokens) / static_cast<double>(rate.tasks)))) +
          " output tokens need " +
          FormatWithSeparators(static_cast<std::int64_t>(std::ceil(day_tokens_per_s))) + " (" +
          std::to_string(day) + " replicas, " + std::to_string(day * c.tensor_parallel) +
          " GPUs > --max-gpus " + std::to_string(space.max_gpus) + ")";
      return o;
    }
    o.min_replicas = std::max(o.min_replicas, day);
  }
  // 5. Prefill bound: the most replicas allowed must prefill the prompt
  // tokens only a prefill computes within the time the workload takes to
  // arrive. It prunes only; the replica search starts at the throughput
  // bound as before.
  o.peak_prefill_tokens_per_s = PeakPrefillTokensPerS(*config);
  if (const int replicas = ReplicasToCarry(static_cast<double>(rate.fresh_prompt_tokens),
                                           o.peak_prefill_tokens_per_s, rate);
      replicas > o.max_replicas) {
    o.status = "pruned";
    o.reason =
        PrunedReason({"prefill", "prefill", "the workload's uncached prompt tokens need "},
                     o.peak_prefill_tokens_per_s, static_cast<double>(rate.fresh_prompt_tokens),
                     rate, replicas, c, space);
    return o;
  }
  // 6. The fewest replicas meeting the targets.
  const std::vector<SloTarget>& slo = space.slo.empty() ? scenario.slo : space.slo;
  struct Run {
    int replicas = 0;
    bool held = false;
    RunSummary summary;  // the measured tasks' (warm-up left out)
    std::vector<SloCheck> checks;
    // What makes a run no answer whatever its targets: a backlog (the
    // overloaded warning's bound) or requests refused over max_model_len.
    bool overloaded = false;
    RunNotes notes;
  };
  std::string failure;
  bool cannot_serve = false;  // the failure: the replica's memory, not the input
  auto simulate = [&](int replicas) -> std::optional<Run> {
    auto s = scenario_at(replicas);
    if (!s) {
      failure = s.error().message();
      return std::nullopt;
    }
    ++o.simulations;
    Run r;
    auto run = RunMeasured(*s, workloads, rate.warmup, &r.notes);
    if (!run) {
      failure = run.error().message();
      cannot_serve = run.error().cannot_serve();
      return std::nullopt;
    }
    r.replicas = replicas;
    // The window's arrivals span less than two task lengths of this
    // deployment's own run (tool waits, queueing and GPU time; the
    // workload's window_short judges by the tool waits alone). The tasks
    // in flight build up over the first task length (to rate x task length,
    // Little's law) and drain after the last arrival: such a run spends
    // most of its arrivals ramping up and never measures the steady state,
    // where memory pressure and queueing can be much worse. (When the tool
    // waits alone outlast the arrivals, the workload's own warning says so
    // for every candidate.)
    const Seconds task_s = run->completion_s.mean;
    const bool workload_short = rate.tasks > 0 && rate.arrival_s < rate.mean_task_s;
    const bool window_short = !workload_short && run->completion_s.count > 0 &&
                              rate.arrival_s > 0 && 2 * task_s > rate.arrival_s;
    if (window_short) {
      r.notes.warnings.push_back(
          {"window_short",
           "the window's tasks arrive over " + FormatDuration(rate.arrival_s) +
               ", less than twice a task's length in this run (" + FormatDuration(task_s) +
               " from its first request to its last token, on average): at " + FormatRate(per_day) +
               " tasks a day about " + Num(per_day / 86400.0 * task_s, 1) +
               " run at once, a number this window reaches, if at all, only as its arrivals "
               "end, so its replica count and latencies describe a ramp-up, not a day; give "
               "the trace more tasks (trace.tasks, or a longer recorded trace)"});
    }
    r.checks = CheckSlo(slo, *run);
    r.overloaded = Overloaded(run->queue_s);
    // A window too short to measure a day runs a ramp-up: its batches are
    // smaller than the day's, so the count it finds may be too few. The
    // day's tasks at its GPU time per task (the bill less its idle time, at
    // the rental price) against the replicas' 24 hours is said, not held
    // against the count: those small batches inflate each task's GPU time
    // (and in a window that measures a day the run itself, at the day's
    // arrival rate, decides: GPU time busy at small batches is not
    // capacity, as one GPU busy all day at batch one or two keeps up with
    // half as many tasks again by batching more).
    if (workload_short || window_short) {
      const long double busy_usd =
          run->billing == BillingRule::kBusy ? run->cost_usd : run->cost_usd - run->idle_gpu_usd;
      const double rental_day =
          static_cast<double>(replicas * c.tensor_parallel) * o.usd_per_gpu_hour * 24;
      const double day_share = run->tasks > 0 && per_day > 0 && rental_day > 0
                                   ? static_cast<double>(busy_usd) /
                                         static_cast<double>(run->tasks) * per_day / rental_day
                                   : 0;
      if (day_share > 1) {
        const std::string figure =
            "at this run's GPU time per task the day's " + FormatRate(per_day) +
            " tasks would take " + FormatFixed(day_share * 100, 0) + "% of the " +
            std::to_string(replicas) +
            " replica(s)' GPU time, a figure the ramp-up's smaller "
            "batches inflate, so whether they carry the day is not measured here";
        if (window_short) {
          r.notes.warnings.back().message += "; " + figure;
        } else {
          r.notes.warnings.push_back({"window_short",
                                      "the window's tasks arrive over less than a task lasts (the "
                                      "workload's window_short): " +
                                          figure});
        }
      }
    }
    r.held =
        std::all_of(r.checks.begin(), r.checks.end(), [](const SloCheck& k) { return k.held; }) &&
        !r.overloaded && r.notes.refused == 0;
    r.summary = std::move(*run);
    return r;
  };
  // A run whose requests were refused is cut short at every replica count
  // (max_model_len does not depend on them).
  auto refused = [&](const Run& r) {
    o.status = "slo_not_met";
    o.cause = "context_limit";
    o.reason =
        FormatWithSeparators(r.notes.refused) + " request(s) refused over " +
        RequestLimitText(r.notes.request_len_limit, r.notes.pool_context_len,
                         config->max_model_len) +
        ", each ending its task (the context_limit warning): the tasks are cut short, "
        "so no replica count serves them; a context_policy that bounds the prompts or " +
        (r.notes.pool_context_len > 0 ? std::string("more memory per replica")
         // The scenario's own limit, below the model's, may be raised
         // (as far as a replica's pool holds one sequence); past the
         // model's, vLLM refuses it.
         : one->engine.max_model_len && config->model.MaxModelLenCeiling() > config->max_model_len
             ? "a longer engine.max_model_len (up to the model's " +
                   FormatWithSeparators(config->model.MaxModelLenCeiling()) +
                   ", as far as a replica's pool holds one sequence)"
             : std::string("a model with a longer context")) +
        " does";
  };
  // The bound of the overloaded rule the run crossed, as simulate's warning
  // decides it (OverloadedBy).
  auto backlog = [](const Run& r) {
    return "overloaded (" + OverloadedFigures(r.summary.queue_s) + ")";
  };
  auto fill = [&](const Run& r) {
    o.replicas = r.replicas;
    o.slo = r.checks;
    o.warnings = r.notes.warnings;
    const RunSummary& sum = r.summary;
    if (sum.billing == BillingRule::kDedicated && per_day > 0) {
      // Dedicated GPUs are rented all day, sized for the window.
      o.usd_per_day = o.gpus() * o.usd_per_gpu_hour * 24;
      o.usd_per_task = o.usd_per_day / per_day;
    } else {
      // The window's bill per task (busy or amortized billing), times the
      // tasks of a day.
      o.usd_per_task =
          sum.tasks > 0 ? static_cast<double>(sum.cost_usd) / static_cast<double>(sum.tasks) : 0;
      o.usd_per_day = o.usd_per_task * per_day;
    }
    o.ttft_p90_s = sum.ttft_s.p90;
  };
  // Every count from the bound up, fewest first: the first that meets
  // every target and keeps up with the arrivals is the answer (with no
  // target, the first that keeps up: the bounds assume decode alone at full
  // batch). No monotonicity is assumed (round-robin routing can make more
  // replicas slower: docs/plan.md).
  std::optional<Run> closest;  // the run nearest the targets, for the verdict
  auto distance = [](const Run& r) {
    double worst = 0;
    for (const SloCheck& k : r.checks) {
      // A target not measured is no nearer than any measured miss.
      worst = std::max(worst, k.not_measured.empty() ? k.actual / k.target.max
                                                     : std::numeric_limits<double>::infinity());
    }
    if (r.overloaded) {
      worst = std::max(worst, OverloadedDelay(r.summary.queue_s) / kOverloadedQueueP50Seconds);
    }
    return worst;
  };
  for (int replicas = o.min_replicas; replicas <= o.max_replicas; ++replicas) {
    auto run = simulate(replicas);
    if (!run) {
      o.status = cannot_serve ? "no_fit" : "error";
      o.reason = failure;
      return o;
    }
    if (run->notes.refused > 0) {
      fill(*run);
      refused(*run);
      return o;
    }
    if (run->held) {
      fill(*run);
      o.status = "feasible";
      o.reason = (slo.empty() ? "fits, formats run; no latency target: the fewest replicas from "
                                "the throughput bound up that keep up with the arrivals, " +
                                    std::to_string(o.replicas)
                              : "fits, formats run; SLO met: " + SloText(run->checks) + " with " +
                                    std::to_string(o.replicas) + " replica(s)") +
                 (o.uncalibrated ? " (uncalibrated cost model)" : "");
      return o;
    }
    if (!closest || distance(*run) < distance(*closest)) closest = std::move(run);
  }
  fill(*closest);
  o.status = "slo_not_met";
  const bool targets_held = std::all_of(closest->checks.begin(), closest->checks.end(),
                                        [](const SloCheck& k) { return k.held; });
  o.cause = closest->overloaded && targets_held ? "overloaded" : "slo";
  const std::string counts =
      std::to_string(o.min_replicas) + " to " + std::to_string(o.max_replicas) + " replica(s)";
  o.reason = slo.empty() ? "no latency target, but " + backlog(*closest) + " with " + counts +
                               " (the least behind, " + std::to_string(closest->replicas) +
                               "): the deployment cannot keep up with the arrivals"
                         : "SLO not met with " + counts + "; closest, " +
                               std::to_string(closest->replicas) + ": " + SloText(closest->checks) +
                               (closest->overloaded ? ", " + backlog(*closest) : "");
  return o;
}

std::vector<CandidateOutcome> DecideCandidates(const std::string& text, const Scenario& scenario,
                                               const PlanSpace& space, const WorkloadRate& rate,
                                               const std::vector<PlanCandidate>& candidates,
                                               int jobs, int shard, int shards,
                                               const std::function<void(std::int64_t)>& progress) {
  std::vector<const PlanCandidate*> mine;
  for (const PlanCandidate& c : candidates) {
    if (shards <= 1 || c.index % shards == shard) mine.push_back(&c);
  }
  std::vector<CandidateOutcome> out(mine.size());
  WorkloadCache workloads;
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::int64_t done = 0;
  auto worker = [&] {
    for (std::size_t i = next++; i < mine.size(); i = next++) {
      out[i] = DecideCandidate(text, scenario, space, rate, *mine[i], workloads);
      if (progress) {
        const std::lock_guard<std::mutex> lock(mutex);
        progress(++done);
      }
    }
  };
  std::vector<std::thread> pool;
  const int threads =
      std::min(std::max(jobs, 1), static_cast<int>(std::max<std::size_t>(1, mine.size())));
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return out;
}

PlanRankRow RankRowOf(const CandidateOutcome& o) {
  PlanRankRow r;
  r.index = o.candidate.index;
  r.status = o.status;
  r.usd_per_task = o.usd_per_task;
  r.gpus = o.gpus();
  if (o.simulated() || o.ttft_given) r.ttft_p90_s = o.ttft_p90_s;
  return r;
}

std::vector<std::size_t> RankByCost(const std::vector<PlanRankRow>& rows, std::string_view status) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].status == status) idx.push_back(i);
  }
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    const PlanRankRow &x = rows[a], &y = rows[b];
    if (x.usd_per_task != y.usd_per_task) return x.usd_per_task < y.usd_per_task;
    if (x.gpus != y.gpus) return x.gpus < y.gpus;
    // The same GPUs at the same price (speculation on or off, a KV format):
    // the faster first, where both were timed.
    if (x.ttft_p90_s && y.ttft_p90_s && *x.ttft_p90_s != *y.ttft_p90_s) {
      return *x.ttft_p90_s < *y.ttft_p90_s;
    }
    return x.index < y.index;
  });
  return idx;
}

std::vector<std::size_t> ParetoFront(const std::vector<PlanRankRow>& rows) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].status == "feasible" && rows[i].ttft_p90_s) idx.push_back(i);
  }
  // Cheapest first, the faster of equal prices first: a candidate is on the
  // front when it is faster than every one before it.
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    const PlanRankRow &x = rows[a], &y = rows[b];
    if (x.usd_per_task != y.usd_per_task) return x.usd_per_task < y.usd_per_task;
    if (*x.ttft_p90_s != *y.ttft_p90_s) return *x.ttft_p90_s < *y.ttft_p90_s;
    return x.index < y.index;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : idx) {
    if (front.empty() || *rows[i].ttft_p90_s < *rows[front.back()].ttft_p90_s) front.push_back(i);
  }
  return front;
}

namespace {

std::vector<PlanRankRow> RankRows(const std::vector<CandidateOutcome>& outcomes) {
  std::vector<PlanRankRow> rows;
  rows.reserve(outcomes.size());
  for (const CandidateOutcome& o : outcomes) rows.push_back(RankRowOf(o));
  return rows;
}

}  // namespace

std::vector<std::size_t> RankFeasible(const std::vector<CandidateOutcome>& outcomes) {
  return RankByCost(RankRows(outcomes));
}

std::vector<std::size_t> ParetoFront(const std::vector<CandidateOutcome>& outcomes) {
  return ParetoFront(RankRows(outcomes));
}

}  // namespace kvbill
