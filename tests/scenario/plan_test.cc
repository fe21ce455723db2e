// kvbill plan's search (scenario/plan.h) against an exhaustive simulation of
// every candidate at every replica count, on a space small enough to run
// whole: the answer must be the same, and the candidates the bounds decide
// without simulating must be the ones the simulation finds infeasible.
#include "kvbill/scenario/plan.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "kvbill/cost/cost_model.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/scenario/run.h"
#include "kvbill/scenario/sweep.h"
#include "kvbill/scenario/warnings.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

namespace fs = std::filesystem;

// A burst of two-turn chats: task i arrives at i x gap seconds with a shared
// 2,000-token system prompt, `user` tokens of its own and `out` output
// tokens, then a second turn of a 300-token tool result after a 2-second
// tool wait.
std::string WriteTrace(const std::string& name, int tasks, double gap, int out, int user = 500) {
  const fs::path path = fs::path(::testing::TempDir()) / name;
  std::ofstream f(path);
  f << "{\"kvbill_trace\":1}\n";
  for (int i = 0; i < tasks; ++i) {
    nlohmann::json t = {
        {"id", "t" + std::to_string(i)},
        {"arrival_s", i * gap},
        {"turns",
         {{{"spans",
            {{{"kind", "system"}, {"tokens", 2000}, {"id", "sys"}},
             {{"kind", "user"}, {"tokens", user}}}},
           {"out", out},
           {"tool_s", 2}},
          {{"spans", {{{"kind", "tool_result"}, {"tokens", 300}}}}, {"out", out}}}}};
    f << t.dump() << "\n";
  }
  return path.string();
}

// Every candidate of `space` for `scenario` (parsed from `text`) decided
// on one thread; empty when the space or the workload cannot be read.
std::vector<CandidateOutcome> DecideAll(const std::string& text, const Scenario& scenario,
                                        const PlanSpace& space) {
  auto candidates = EnumerateCandidates(scenario, space);
  EXPECT_TRUE(candidates.ok());
  auto rate = MeasureWorkload(scenario);
  EXPECT_TRUE(rate.ok());
  if (!candidates.ok() || !rate.ok()) return {};
  return DecideCandidates(text, scenario, space, *rate, *candidates, 1);
}

std::string ScenarioText(const std::string& trace, double ttft_p90) {
  nlohmann::json s = {{"name", "plan-small"},       {"model", {{"name", "qwen3-32b"}}},
                      {"kv_format", "bf16"},        {"deployment", {{"gpu", "h100-sxm"}}},
                      {"trace", {{"file", trace}}}, {"slo", {{"ttft_s.p90", ttft_p90}}}};
  return s.dump();
}

struct Oracle {
  bool feasible = false;
  int replicas = 0;
  double usd_per_task = 0;
  double ttft_p90_s = 0;  // at `replicas`
  int runs = 0;           // simulations made
};

// Simulates the candidate at 1, 2, ... replicas (its own settings, not
// CandidateSettings) until the target holds: the fewest replicas by
// exhaustion, assuming nothing. Calibration as the plan asks for it.
Oracle Exhaust(const std::string& text, const PlanCandidate& c, int max_gpus, double target,
               bool allow_uncalibrated, double tasks_per_day, WorkloadCache& workloads) {
  Oracle o;
  for (int r = 1; r * c.tensor_parallel <= max_gpus; ++r) {
    std::string t = text;
    for (const auto& [p, v] : std::vector<std::pair<std::string, std::string>>{
             {"/deployment/gpu", "\"" + c.gpu + "\""},
             {"/deployment/gpus_per_replica", std::to_string(c.tensor_parallel)},
             {"/deployment/replicas", std::to_string(r)},
             {"/kv_format", "\"" + c.kv_format + "\""},
             {"/weight_format", "\"" + c.weight_format + "\""}}) {
      t = *WithSetting(t, p, v);
    }
    auto s = ParseScenario(t, "plan-small.json");
    if (!s) return o;
    auto config = BuildSimulationConfig(*s);
    if (!config) return o;  // a format the GPU does not run
    if (!allow_uncalibrated && !config->cost_model->Describe().calibrated) return o;
    auto run = RunScenario(*s, workloads);
    if (!run) return o;  // does not fit
    ++o.runs;
    if (!run->result.max_model_len_fits_pool) return o;  // vLLM would not start
    const bool backlog = Overloaded(run->summary.queue_s);
    const bool refused = run->result.rejected_requests > 0;
    if (!o.feasible && run->summary.ttft_s.p90 <= target && !backlog && !refused) {
      o.feasible = true;
      o.replicas = r;
      o.ttft_p90_s = run->summary.ttft_s.p90;
      // Dedicated GPUs rented all day at the catalog's price, shared by the
      // day's tasks: the trace's rate, its tasks over their arrival span.
      o.usd_per_task = r * c.tensor_parallel * config->gpu.usd_per_gpu_hour * 24 / tasks_per_day;
    }
  }
  return o;
}

TEST(PlanTest, AnswerEqualsExhaustiveSimulation) {
  const double target = 0.5;
  const std::string text =
      ScenarioText(WriteTrace("plan_small.jsonl", 48, 0.25, 600, 3100), target);
  auto scenario = ParseScenario(text, "plan-small.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanSpace space;
  space.gpus = {"h100-sxm", "a100-80gb", "l40s"};
  space.max_gpus = 4;
  space.kv_formats = {"bf16", "fp8", "nvfp4"};
  space.allow_uncalibrated = true;
  auto candidates = EnumerateCandidates(*scenario, space);
  ASSERT_TRUE(candidates.ok()) << candidates.error().message();
  // qwen3-32b: 64 query heads, 8 KV heads: TP 1, 2, 4 on each GPU.
  ASSERT_EQ(candidates->size(), 3u * 3u * 3u);
  auto rate = MeasureWorkload(*scenario);
  ASSERT_TRUE(rate.ok());
  // 48 tasks x 2 turns x 600 output tokens.
  EXPECT_EQ(rate->output_tokens, 48 * 2 * 600);
  // The last task arrives at 47 x 0.25 s and waits 2 s for its tool.
  EXPECT_DOUBLE_EQ(rate->ideal_s, 47 * 0.25 + 2);
  // Fresh prompt tokens: the shared system prompt once, and each task's own
  // 3,100 user and 300 tool-result tokens.
  EXPECT_EQ(rate->fresh_prompt_tokens, 2000 + 48 * (3100 + 300));
  // 48 tasks 0.25 s apart, 47 gaps in 11.75 s: 47 x 86,400 / 11.75 =
  // 345,600 tasks a day (one every 0.25 s).
  const double tasks_per_day = 47 * 86400 / 11.75;
  EXPECT_DOUBLE_EQ(rate->tasks_per_day(), tasks_per_day);

  const std::vector<CandidateOutcome> plan =
      DecideCandidates(text, *scenario, space, *rate, *candidates, 2);
  ASSERT_EQ(plan.size(), candidates->size());

  WorkloadCache workloads;
  std::map<std::string, int> statuses, by_bound;
  std::optional<std::size_t> best;
  std::vector<Oracle> oracle;
  for (std::size_t i = 0; i < candidates->size(); ++i) {
    const PlanCandidate& c = (*candidates)[i];
    oracle.push_back(Exhaust(text, c, space.max_gpus, target, true, tasks_per_day, workloads));
    const Oracle& o = oracle.back();
    const CandidateOutcome& p = plan[i];
    ++statuses[p.status];
    for (const char* bound : {"throughput", "prefill"}) {
      if (p.reason.rfind(std::string("pruned by the ") + bound + " bound", 0) == 0) {
        ++by_bound[bound];
      }
    }
    SCOPED_TRACE("candidate " + std::to_string(i) + " " + c.gpu + " tp" +
                 std::to_string(c.tensor_parallel) + " kv " + c.kv_format + ": " + p.reason);
    // Feasible in the plan exactly when some replica count meets the target.
    EXPECT_EQ(p.feasible(), o.feasible);
    if (o.feasible && p.feasible()) {
      EXPECT_EQ(p.replicas, o.replicas);
      EXPECT_DOUBLE_EQ(p.usd_per_task, o.usd_per_task);
    }
    // Cheapest, then fewest GPUs, then the faster TTFT p90, then the first.
    const auto key = [&](std::size_t k) {
      return std::make_tuple(oracle[k].usd_per_task,
                             oracle[k].replicas * (*candidates)[k].tensor_parallel,
                             oracle[k].ttft_p90_s);
    };
    if (o.feasible && (!best || key(i) < key(*best))) best = i;
  }
  // Every way of deciding a candidate is exercised.
  EXPECT_GT(statuses["format"], 0);  // nvfp4 KV before Blackwell
  EXPECT_GT(statuses["no_fit"], 0);  // 64 GB of weights on one 48 GB L40S
  // Each bound prunes a candidate: the throughput bound (L40S TP 4, one
  // replica, decodes too slowly) and the prefill bound (A100 TP 4 and L40S
  // TP 2 decode fast enough, but prefill 2000 + 48 x 3,400 tokens in 13.75 s
  // too slowly).
  EXPECT_GT(by_bound["throughput"], 0);
  EXPECT_GT(by_bound["prefill"], 0);
  EXPECT_EQ(by_bound["throughput"] + by_bound["prefill"], statuses["pruned"]);
  EXPECT_GT(statuses["feasible"], 0);
  EXPECT_GT(statuses["slo_not_met"], 0);
  ASSERT_TRUE(best.has_value());
  const std::vector<std::size_t> ranked = RankFeasible(plan);
  ASSERT_FALSE(ranked.empty());
  EXPECT_EQ(ranked[0], *best);
  // Fewer simulations than the exhaustive search made.
  int plan_runs = 0, all_runs = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    plan_runs += plan[i].simulations;
    all_runs += oracle[i].runs;
  }
  EXPECT_LT(plan_runs, all_runs);
}

// The window's 48 tasks say nothing of a rate of 100,000,000 tasks a day:
// each task's 2 x 600 output tokens at that rate are 1e8 / 86,400 x 1,200 =
// 1,388,888.9 tokens a second, far past what 4 GPUs decode, so every
// candidate that fits is pruned by the daily bound, whatever the window's
// own bound says (a window of fewer tasks than run at once asks for one
// replica).
TEST(PlanTest, TheDailyRateBoundsTheReplicasWhateverTheWindowHolds) {
  const std::string text =
      ScenarioText(WriteTrace("plan_small_daily.jsonl", 48, 0.25, 600, 3100), 0.5);
  auto scenario = ParseScenario(text, "plan-small.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.max_gpus = 4;
  space.kv_formats = {"fp8"};
  space.tasks_per_day = 1e8;
  auto candidates = EnumerateCandidates(*scenario, space);
  ASSERT_TRUE(candidates.ok()) << candidates.error().message();
  auto rate = MeasureWorkload(*scenario);
  ASSERT_TRUE(rate.ok());
  const std::vector<CandidateOutcome> plan =
      DecideCandidates(text, *scenario, space, *rate, *candidates, 2);
  int daily = 0;
  for (const CandidateOutcome& o : plan) {
    if (o.status == "no_fit") continue;
    EXPECT_EQ(o.status, "pruned") << o.reason;
    EXPECT_EQ(o.reason.rfind("pruned by the daily throughput bound: ", 0), 0u) << o.reason;
    EXPECT_NE(o.reason.find(" tokens/s, 100,000,000 tasks a day of 1,200 output tokens need "
                            "1,388,889 ("),
              std::string::npos)
        << o.reason;
    EXPECT_GE(o.min_replicas, static_cast<int>(std::ceil(1388888.9 / o.peak_decode_tokens_per_s)));
    ++daily;
  }
  EXPECT_GT(daily, 0);
}

// The throughput bound's peak decode rate speculates as the deployment
// does: with a draft, a step verifies k + 1 tokens a sequence and advances
// E. Two scenarios alike but for the acceptance rate run the same steps, so
// their peaks are in the ratio of their E: k = 3 at α 0.9 advances
// (1 - 0.9^4) / (1 - 0.9) = 3.439 tokens a step, at α 0 one. And α 0 pays
// the verification and the draft for nothing: below the peak without
// speculation (which it equalled, the bound ignoring speculation).
TEST(PlanTest, PeakDecodeRateCountsTheTokensAVerificationStepAdvances) {
  auto peak = [](const std::string& speculative) {
    auto s = ParseScenario(R"({"model": "qwen3-8b", "deployment": {"gpu": "h100-sxm")" +
                               speculative + R"(}, "trace": {"generator": "coding-agent",
                               "tasks": 1}})",
                           "peak.json");
    EXPECT_TRUE(s.ok()) << s.error().message();
    auto config = BuildSimulationConfig(*s);
    EXPECT_TRUE(config.ok()) << config.error().message();
    return PeakDecodeTokensPerS(*config);
  };
  const double off = peak("");
  const double none = peak(R"(, "speculative": {"method": "eagle", "num_speculative_tokens": 3,
      "acceptance_rate": [0]})");
  const double high = peak(R"(, "speculative": {"method": "eagle", "num_speculative_tokens": 3,
      "acceptance_rate": [0.9]})");
  ASSERT_GT(off, 0);
  EXPECT_LT(none, off);
  EXPECT_NEAR(high / none, 3.439, 1e-9);
}

// A deployment vLLM refuses to start is no candidate. Qwen3-32B in BF16 on
// one H100: 76,922,864,271 B of the 90% share, less vLLM's 2.77 GiB reserve
// (2,969,723,038 B) and 65,524,246,528 B of weights, leaves 8,428,894,705 B:
// 32,153 tokens of 262,144 B, 32,144 in whole 16-token blocks, below the
// 40,960 of one max_model_len request (kv_fit_cli_test.cc works the same
// numbers). FP8 KV halves the bytes per token (64,304 tokens) and two GPUs
// halve the weights per GPU: both hold one. With engine.max_model_len
// 32,144 the one-GPU BF16 deployment starts again.
TEST(PlanTest, APoolThatCannotHoldOneMaxModelLenRequestDoesNotFit) {
  const std::string text = ScenarioText(WriteTrace("plan_pool.jsonl", 4, 1.0, 50), 10.0);
  auto scenario = ParseScenario(text, "plan-small.json");
  ASSERT_TRUE(scenario.ok());
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.max_gpus = 2;
  space.kv_formats = {"bf16", "fp8"};
  space.tasks_per_day = 1000;  // a day the GPUs carry: the pool is what is tested
  auto candidates = EnumerateCandidates(*scenario, space);
  ASSERT_TRUE(candidates.ok());
  auto rate = MeasureWorkload(*scenario);
  ASSERT_TRUE(rate.ok());
  const auto plan = DecideCandidates(text, *scenario, space, *rate, *candidates, 1);
  int checked = 0;
  for (const CandidateOutcome& o : plan) {
    SCOPED_TRACE(o.candidate.kv_format + " tp" + std::to_string(o.candidate.tensor_parallel) +
                 ": " + o.reason);
    if (o.candidate.tensor_parallel == 1 && o.candidate.kv_format == "bf16") {
      EXPECT_EQ(o.status, "no_fit");
      EXPECT_EQ(o.reason,
                "the KV pool left per replica holds 32,144 tokens of a sequence, less than one "
                "request of max_model_len 40,960 (vLLM refuses to start it); set "
                "engine.max_model_len at most that in the scenario to plan it");
      EXPECT_EQ(o.simulations, 0);
    } else {
      EXPECT_EQ(o.status, "feasible");
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
  // SGLang starts on that pool and refuses only what it cannot hold: these
  // 50-token turns fit, so the candidate is simulated, not "no_fit".
  const std::string sglang = *WithSetting(text, "/deployment/engine", "\"sglang\"");
  auto sglang_scenario = ParseScenario(sglang, "plan-small.json");
  ASSERT_TRUE(sglang_scenario.ok()) << sglang_scenario.error().message();
  for (const CandidateOutcome& o :
       DecideCandidates(sglang, *sglang_scenario, space, *rate, *candidates, 1)) {
    EXPECT_NE(o.status, "no_fit") << o.reason;
    EXPECT_GT(o.simulations, 0) << o.reason;
  }
  const std::string limited = *WithSetting(text, "/engine/max_model_len", "32144");
  auto limited_scenario = ParseScenario(limited, "plan-small.json");
  ASSERT_TRUE(limited_scenario.ok());
  for (const CandidateOutcome& o :
       DecideCandidates(limited, *limited_scenario, space, *rate, *candidates, 1)) {
    EXPECT_EQ(o.status, "feasible") << o.reason;
  }
}

// Without a latency target the throughput bound is not the answer when
// the deployment cannot keep up at it. 48 tasks 2 s apart, each a fresh
// 30,000-token prompt and 2,000 output tokens, on Qwen3-8B: the bound
// (96,000 output tokens in 94 s against one H100's decode peak at context
// 1) allows one replica, but 13 such sequences fill one H100's KV pool
// (392k tokens) and decode over 30k-token contexts: requests queue. Plan
// takes the fewest replicas whose run has no backlog (median and mean
// queueing delay at most 1 s), checked here against the runs themselves:
// one replica's median is 40 s; two replicas' median is 0.01 s but their
// mean 3.2 s (p90 12 s, 20 preemptions: the pools are full at the peak);
// three keep up (mean 0.006 s).
TEST(PlanTest, WithoutATargetTheAnswerKeepsUpWithTheArrivals) {
  const fs::path trace = fs::path(::testing::TempDir()) / "plan_backlog.jsonl";
  {
    std::ofstream f(trace);
    f << "{\"kvbill_trace\":1}\n";
    for (int i = 0; i < 48; ++i) {
      f << nlohmann::json(
               {{"id", "t" + std::to_string(i)},
                {"arrival_s", i * 2.0},
                {"turns", {{{"spans", {{{"kind", "user"}, {"tokens", 30000}}}}, {"out", 2000}}}}})
               .dump()
        << "\n";
    }
  }
  const std::string text = nlohmann::json({{"model", {{"name", "qwen3-8b"}}},
                                           {"deployment", {{"gpu", "h100-sxm"}}},
                                           {"trace", {{"file", trace.string()}}}})
                               .dump();
  auto scenario = ParseScenario(text, "backlog.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.max_gpus = 3;
  space.tasks_per_day = 1000;  // a day the GPUs carry: the window's backlog is what is tested
  const auto plan = DecideAll(text, *scenario, space);
  const CandidateOutcome* tp1 = nullptr;
  for (const CandidateOutcome& o : plan) {
    if (o.candidate.tensor_parallel == 1) tp1 = &o;
  }
  ASSERT_NE(tp1, nullptr);
  EXPECT_EQ(tp1->min_replicas, 1);
  ASSERT_EQ(tp1->status, "feasible") << tp1->reason;
  EXPECT_EQ(tp1->replicas, 3);
  // Two GPUs at most: one or two replicas, both behind (below), and no
  // target to miss: not met because of the backlog, which the cause says.
  space.max_gpus = 2;
  for (const CandidateOutcome& o : DecideAll(text, *scenario, space)) {
    if (o.candidate.tensor_parallel != 1) continue;
    EXPECT_EQ(o.status, "slo_not_met") << o.reason;
    EXPECT_EQ(o.cause, "overloaded") << o.reason;
  }
  WorkloadCache workloads;
  for (int replicas : {1, 2, 3}) {
    auto s = ParseScenario(*WithSetting(text, "/deployment/replicas", std::to_string(replicas)),
                           "backlog.json");
    ASSERT_TRUE(s.ok());
    auto run = RunScenario(*s, workloads);
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(Overloaded(run->summary.queue_s), replicas < 3)
        << replicas << " replica(s): queueing delay median " << run->summary.queue_s.p50
        << ", mean " << run->summary.queue_s.mean;
    // The row carries the warnings of its run at the chosen count, as
    // simulate lists them.
    if (replicas == tp1->replicas) {
      std::vector<std::string> expected, got;
      for (const RunWarning& w : RunWarnings(*s, *run)) expected.push_back(w.code);
      for (const RunWarning& w : tp1->warnings) got.push_back(w.code);
      EXPECT_EQ(got, expected);
    }
  }
}

// A window that is not short is decided by its own run, the day figure not
// held against it: 20 tasks a minute apart, each about half a minute of
// decoding at batch one, on one H100, priced at 10,000 tasks a day (the
// library leaves the window at its own rate; the CLI scales it to the
// day's). At that day the GPU's time per task (each task decodes 2 x 600
// tokens one step after another, every step reading Qwen3-32B's 65.5 GB of
// weights at most at 3.35 TB/s: at least 19.6 ms a step, 23.5 s a task)
// is at least 235,000 GPU-seconds, more than the 86,400 of one GPU, which
// until 2026-12 ruled one replica out ("overloaded over the day"); the run
// keeps up with its arrivals, so one replica is the answer, and nothing
// is said of the day (the window is not short).
TEST(PlanTest, ALongWindowsOwnRunDecidesTheReplicas) {
  const std::string text =
      ScenarioText(WriteTrace("plan_day_rule.jsonl", 20, 60, 600), /*ttft_p90=*/10);
  auto scenario = ParseScenario(text, "plan-small.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.kv_formats = {"fp8"};
  space.tasks_per_day = 10000;
  space.max_gpus = 2;
  const std::vector<CandidateOutcome> plan = DecideAll(text, *scenario, space);
  ASSERT_FALSE(plan.empty());
  const CandidateOutcome& tp1 = plan[0];
  ASSERT_EQ(tp1.candidate.tensor_parallel, 1);
  ASSERT_EQ(tp1.status, "feasible") << tp1.reason;
  EXPECT_EQ(tp1.replicas, 1);
  for (const RunWarning& w : tp1.warnings) EXPECT_NE(w.code, "window_short") << w.message;
}

// A window shorter than a task (8 tasks 0.25 s apart, each waiting 2 s for
// its tool) runs a ramp-up: the day figure is said in a window_short
// warning of the candidate, not held against its count. At 200,000 tasks a
// day each task's GPU time is at least 1,200 steps of 19.6 ms (Qwen3-32B's
// weights at the H100's bandwidth) shared by at most the 8 tasks of the
// window: 2.94 s, so 588,000 GPU-seconds a day against at most 4 x 86,400
// = 345,600: above 170% of the replicas' time whatever their count.
TEST(PlanTest, AShortWindowSaysTheDayFigureWithoutHoldingIt) {
  const std::string text =
      ScenarioText(WriteTrace("plan_day_short.jsonl", 8, 0.25, 600), /*ttft_p90=*/30);
  auto scenario = ParseScenario(text, "plan-small.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.kv_formats = {"fp8"};
  space.tasks_per_day = 200000;
  space.max_gpus = 4;
  const std::vector<CandidateOutcome> plan = DecideAll(text, *scenario, space);
  ASSERT_FALSE(plan.empty());
  const CandidateOutcome& tp1 = plan[0];
  ASSERT_EQ(tp1.candidate.tensor_parallel, 1);
  ASSERT_EQ(tp1.status, "feasible") << tp1.reason;
  const RunWarning* said = nullptr;
  for (const RunWarning& w : tp1.warnings) {
    if (w.code == "window_short") said = &w;
  }
  ASSERT_NE(said, nullptr);
  const std::string tail = "the day's 200,000 tasks would take ";
  const auto at = said->message.find(tail);
  ASSERT_NE(at, std::string::npos) << said->message;
  std::string percent = said->message.substr(at + tail.size());
  percent = percent.substr(0, percent.find('%'));
  std::erase(percent, ',');
  EXPECT_GT(std::stod(percent), 170) << said->message;
  EXPECT_NE(said->message.find("% of the " + std::to_string(tp1.replicas) +
                               " replica(s)' GPU time, a figure the ramp-up's smaller batches "
                               "inflate"),
            std::string::npos)
      << said->message;
}

// Generated coding agents on Qwen3-8B as shipped (40,960 tokens, no YaRN)
// reach longer prompts: their requests are refused and their tasks cut
// short, so the run's dollars and latencies are those of unfinished work.
// Such a candidate is not feasible, at any replica count.
TEST(PlanTest, ACandidateWhoseRunRefusesRequestsIsNotFeasible) {
  const std::string text =
      R"({"model": "qwen3-8b", "deployment": {"gpu": "h100-sxm"},
          "trace": {"generator": "coding-agent", "tasks": 20}, "seed": 1,
          "slo": {"ttft_s.p90": 5}})";
  auto scenario = ParseScenario(text, "refused.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  WorkloadCache workloads;
  auto run = RunScenario(*scenario, workloads);
  ASSERT_TRUE(run.ok());
  ASSERT_GT(run->result.rejected_requests, 0);  // the premise
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.max_gpus = 1;
  const auto plan = DecideAll(text, *scenario, space);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].status, "slo_not_met");
  EXPECT_EQ(plan[0].cause, "context_limit");
  // The limit is the model's own: a longer engine.max_model_len is no way
  // out (vLLM refuses one past the model's), a longer-context model is.
  EXPECT_NE(plan[0].reason.find("a context_policy that bounds the prompts or a model with a longer "
                                "context does"),
            std::string::npos)
      << plan[0].reason;
  EXPECT_NE(plan[0].reason.find("request(s) refused over max_model_len 40,960, each ending its "
                                "task"),
            std::string::npos)
      << plan[0].reason;
  // Its row carries the run's context_limit warning.
  ASSERT_FALSE(plan[0].warnings.empty());
  EXPECT_EQ(plan[0].warnings[0].code, "context_limit");
}

// Why plan tries every replica count from the bound up instead of
// bisecting: with round-robin routing a task's turns land on different
// replicas, its prefix misses there, and more replicas can be slower.
TEST(PlanTest, MoreReplicasCanRaiseTtftUnderRoundRobin) {
  // 12 generated chats (long conversations, short think times): on one
  // replica most of each prompt is cached; on two, alternate turns miss.
  const std::string text = R"({"model": "qwen3-8b", "trace": {"generator": "chat", "tasks": 12}})";
  WorkloadCache workloads;
  double ttft[2] = {0, 0}, hits[2] = {0, 0};
  for (int r : {1, 2}) {
    auto s =
        ParseScenario(*WithSetting(text, "/deployment/replicas", std::to_string(r)), "chat.json");
    ASSERT_TRUE(s.ok());
    auto run = RunScenario(*s, workloads);
    ASSERT_TRUE(run.ok()) << run.error().message();
    ttft[r - 1] = run->summary.ttft_s.p90;
    hits[r - 1] = run->summary.hit_rate;
  }
  EXPECT_LT(hits[1], hits[0]);
  EXPECT_GT(ttft[1], ttft[0]);
}

TEST(PlanTest, OutputDoesNotDependOnJobsOrShards) {
  const std::string text = ScenarioText(WriteTrace("plan_jobs.jsonl", 16, 0.5, 200), 1.0);
  auto scenario = ParseScenario(text, "plan-small.json");
  ASSERT_TRUE(scenario.ok());
  PlanSpace space;
  space.gpus = {"h100-sxm", "a100-80gb"};
  space.max_gpus = 2;
  space.kv_formats = {"bf16", "fp8"};
  auto candidates = EnumerateCandidates(*scenario, space);
  ASSERT_TRUE(candidates.ok());
  auto rate = MeasureWorkload(*scenario);
  ASSERT_TRUE(rate.ok());
  const auto one = DecideCandidates(text, *scenario, space, *rate, *candidates, 1);
  const auto two = DecideCandidates(text, *scenario, space, *rate, *candidates, 2);
  std::vector<CandidateOutcome> shards;
  for (int s = 0; s < 3; ++s) {
    for (auto& o : DecideCandidates(text, *scenario, space, *rate, *candidates, 1, s, 3)) {
      shards.push_back(o);
    }
  }
  std::sort(shards.begin(), shards.end(),
            [](const auto& a, const auto& b) { return a.candidate.index < b.candidate.index; });
  ASSERT_EQ(one.size(), two.size());
  ASSERT_EQ(one.size(), shards.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    for (const CandidateOutcome* other :
         std::array<const CandidateOutcome*, 2>{&two[i], &shards[i]}) {
      EXPECT_EQ(one[i].candidate.index, other->candidate.index);
      EXPECT_EQ(one[i].status, other->status);
      EXPECT_EQ(one[i].reason, other->reason);
      EXPECT_EQ(one[i].replicas, other->replicas);
      EXPECT_EQ(one[i].usd_per_task, other->usd_per_task);
    }
  }
}

// Expert parallelism is offered only where each GPU holds a whole expert.
// Mixtral-8x7B: 32 query heads and 8 KV heads split over TP 1, 2, 4, 8 and
// 16 (KV heads replicated); 8 routed experts, so EP over 2, 4 and 8 GPUs,
// not 16 (8 of them would hold none). Candidates by hand: TP 1 with EP 1;
// TP 2, 4, 8 with EP 1 and EP tp; TP 16 with EP 1 only: 1 + 3 x 2 + 1 = 9.
TEST(PlanTest, ExpertParallelNeverWiderThanTheExperts) {
  auto scenario = ParseScenario(
      R"({"model": "mixtral-8x7b", "trace": {"generator": "chat", "tasks": 2}})", "s.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.max_gpus = 16;
  auto candidates = EnumerateCandidates(*scenario, space);
  ASSERT_TRUE(candidates.ok()) << candidates.error().message();
  std::vector<std::pair<int, int>> tp_ep;
  for (const PlanCandidate& c : *candidates)
    tp_ep.emplace_back(c.tensor_parallel, c.expert_parallel);
  const std::vector<std::pair<int, int>> expected = {{1, 1}, {2, 1}, {2, 2}, {4, 1},
                                                     {4, 4}, {8, 1}, {8, 8}, {16, 1}};
  EXPECT_EQ(tp_ep, expected);
}

// MiniMax-M2.5's block-FP8 experts (1,536 wide, 128 x 128 blocks) leave 192
// a GPU over 8 GPUs, which vLLM refuses to load; expert parallelism keeps
// each expert whole and runs. So TP 8 is a candidate with EP 8 only; TP 1,
// 2 and 4 split the experts into 1,536, 768 and 384, whole blocks, and run
// with or without it.
TEST(PlanTest, ExpertParallelAloneWhereSplitExpertsBreakTheirBlocks) {
  auto scenario = ParseScenario(std::string(R"({"model": ")") + KVBILL_SOURCE_DIR +
                                    R"(/tests/data/configs/minimax-m2.5.json",
                                    "trace": {"generator": "chat", "tasks": 2}})",
                                "s.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanSpace space;
  space.gpus = {"h200"};
  space.max_gpus = 8;
  auto candidates = EnumerateCandidates(*scenario, space);
  ASSERT_TRUE(candidates.ok()) << candidates.error().message();
  std::vector<std::pair<int, int>> tp_ep;
  for (const PlanCandidate& c : *candidates)
    tp_ep.emplace_back(c.tensor_parallel, c.expert_parallel);
  const std::vector<std::pair<int, int>> expected = {{1, 1}, {2, 1}, {2, 2},
                                                     {4, 1}, {4, 4}, {8, 8}};
  EXPECT_EQ(tp_ep, expected);
}

TEST(PlanTest, UnknownGpuAndFormatNameTheFlag) {
  auto scenario = ParseScenario("{}", "s.json");
  ASSERT_TRUE(scenario.ok());
  PlanSpace space;
  space.gpus = {"h100"};
  auto c = EnumerateCandidates(*scenario, space);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message().rfind("--gpus: unknown GPU \"h100\"", 0), 0u)
      << c.error().message();
  space.gpus = {"h100-sxm"};
  space.kv_formats = {"fp7"};
  c = EnumerateCandidates(*scenario, space);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message().rfind("--kv-formats: unknown format \"fp7\"", 0), 0u);
  // "auto" is the scenario's auto: Laguna-XS.2's checkpoint declares fp8.
  auto laguna = ParseScenario(R"({"model": ")" + std::string(KVBILL_SOURCE_DIR) +
                                  R"(/tests/data/configs/laguna-xs.2-fp8.json"})",
                              "s.json");
  ASSERT_TRUE(laguna.ok()) << laguna.error().message();
  space.kv_formats = {"auto"};
  c = EnumerateCandidates(*laguna, space);
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_FALSE(c->empty());
  for (const PlanCandidate& one : *c) EXPECT_EQ(one.kv_format, "fp8-e4m3");
}

// A scenario's deployment.usd_per_gpu_hour is the price of its own GPU: the
// other GPUs plan compares keep the catalog's (the scenario's $1.00/h for
// its A100 once priced every candidate, H100 and B200 alike), and
// --gpu-price beats both.
TEST(PlanTest, TheScenarioPricePricesItsOwnGpuOnly) {
  const std::string trace = WriteTrace("plan_price.jsonl", 2, 5.0, 20);
  const std::string text =
      nlohmann::json({{"model", "llama-3.1-8b"},
                      {"deployment", {{"gpu", "a100-80gb"}, {"usd_per_gpu_hour", 1.0}}},
                      {"trace", {{"file", trace}}}})
          .dump();
  auto scenario = ParseScenario(text, "s.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanSpace space;
  space.gpus = {"a100-80gb", "h100-sxm", "b200"};
  space.max_gpus = 1;
  space.allow_uncalibrated = true;
  space.gpu_prices = {{"b200", 7.5}};
  std::map<std::string, const CandidateOutcome*> by_gpu;
  const std::vector<CandidateOutcome> outcomes = DecideAll(text, *scenario, space);
  for (const CandidateOutcome& o : outcomes) by_gpu[o.candidate.gpu] = &o;
  ASSERT_EQ(by_gpu.size(), 3u);
  auto h100 = LookupGpu("h100-sxm");
  ASSERT_TRUE(h100.ok());
  ASSERT_NE(h100->usd_per_gpu_hour, 1.0);
  EXPECT_EQ(by_gpu["a100-80gb"]->usd_per_gpu_hour, 1.0);
  EXPECT_EQ(by_gpu["a100-80gb"]->price_source, "the scenario's deployment.usd_per_gpu_hour");
  EXPECT_EQ(by_gpu["h100-sxm"]->usd_per_gpu_hour, h100->usd_per_gpu_hour);
  EXPECT_NE(by_gpu["h100-sxm"]->price_source, "the scenario's deployment.usd_per_gpu_hour");
  EXPECT_EQ(by_gpu["b200"]->usd_per_gpu_hour, 7.5);
  EXPECT_EQ(by_gpu["b200"]->price_source, "--gpu-price");
  // Dedicated billing: one GPU rented all day at the row's own price.
  for (const auto& [gpu, o] : by_gpu) {
    ASSERT_EQ(o->status, "feasible") << gpu << ": " << o->reason;
    EXPECT_DOUBLE_EQ(o->usd_per_day, o->gpus() * o->usd_per_gpu_hour * 24) << gpu;
  }
}

TEST(PlanTest, AValueListedTwiceIsAnError) {
  auto scenario = ParseScenario("{}", "s.json");
  ASSERT_TRUE(scenario.ok());
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.speculative = {"on", "off", "on"};
  auto c = EnumerateCandidates(*scenario, space);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message(),
            "--speculative: \"on\" is already in the list (each setting once)");
  // Llama-3.1-8B's dtype is bfloat16 and its checkpoint declares no KV
  // format: auto is bf16, listed twice.
  auto llama = ParseScenario(R"({"model": "llama-3.1-8b"})", "s.json");
  ASSERT_TRUE(llama.ok());
  space.speculative = {"off"};
  space.kv_formats = {"auto", "fp8", "bf16"};
  c = EnumerateCandidates(*llama, space);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message(),
            "--kv-formats: auto is bf16 for this model, \"bf16\" is already in the list (each "
            "format once)");
  space.kv_formats = {"auto", "fp8"};
  EXPECT_TRUE(EnumerateCandidates(*llama, space).ok());
}

TEST(PlanTest, ParetoFrontKeepsOnlyUndominated) {
  // $/task, TTFT: A (1, 5), B (2, 3), C (2, 4) dominated by B, D (3, 3.5)
  // dominated by B, E (4, 1).
  std::vector<CandidateOutcome> o(5);
  const double cost[] = {1, 2, 2, 3, 4}, ttft[] = {5, 3, 4, 3.5, 1};
  for (int i = 0; i < 5; ++i) {
    o[i].candidate.index = i;
    o[i].status = "feasible";
    o[i].usd_per_task = cost[i];
    o[i].ttft_p90_s = ttft[i];
    o[i].replicas = 1;
    o[i].simulations = 1;
  }
  EXPECT_EQ(ParetoFront(o), (std::vector<std::size_t>{0, 1, 4}));
  EXPECT_EQ(RankFeasible(o), (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

// The busiest hour's warm-up tasks are simulated but not measured. Three
// tasks arrive at 0 s, each with a 30,000-token prompt of its own; twenty
// 500-token tasks arrive at 600, 700, ..., 1,500 s and 3,700, 3,740, ...,
// 4,060 s. The busiest hour starts at 600 s (20 arrivals; the hour from 0 s
// holds 3 + 10), so the three long tasks are its warm-up.
//
// A 30,000-token prefill of Qwen3-8B (6.95e9 parameters without the
// embeddings, 2 FLOPs each per token) is at least 2 x 6.95e9 x 30,000 =
// 4.17e14 FLOPs, at least 0.42 s at the H100's 989 dense BF16 TFLOPS. Counted,
// they are 3 of 23 requests (13%), so the TTFT p90 would be at least 0.42 s;
// left out, the p90 is that of 500-token prompts on an idle GPU (spaced 40 s
// and more apart), far below the 0.3 s target.
TEST(PlanTest, WarmupTasksAreSimulatedButNotMeasured) {
  const fs::path path = fs::path(::testing::TempDir()) / "plan_warmup.jsonl";
  {
    std::ofstream f(path);
    f << "{\"kvbill_trace\":1}\n";
    auto task = [&f](const std::string& id, double arrival, int tokens) {
      nlohmann::json t = {
          {"id", id},
          {"arrival_s", arrival},
          {"turns", {{{"spans", {{{"kind", "user"}, {"tokens", tokens}}}}, {"out", 10}}}}};
      f << t.dump() << "\n";
    };
    for (int i = 0; i < 3; ++i) task("warm" + std::to_string(i), 0, 30000);
    for (int i = 0; i < 10; ++i) task("a" + std::to_string(i), 600 + 100 * i, 500);
    for (int i = 0; i < 10; ++i) task("b" + std::to_string(i), 3700 + 40 * i, 500);
  }
  const double target = 0.3;
  nlohmann::json doc = {{"name", "plan-warmup"},
                        {"model", {{"name", "qwen3-8b"}}},
                        {"deployment", {{"gpu", "h100-sxm"}}},
                        {"trace", {{"file", path.string()}}},
                        {"slo", {{"ttft_s.p90", target}}}};
  const std::string text = doc.dump();
  auto scenario = ParseScenario(text, "plan-warmup.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message();
  PlanWindow window;
  const std::string window_trace =
      (fs::path(::testing::TempDir()) / "plan_warmup_window.jsonl").string();
  auto windowed = WindowScenarioText(text, *scenario, "busiest-hour", 1, window_trace, &window);
  ASSERT_TRUE(windowed.ok()) << windowed.error().message();
  EXPECT_EQ(window.start_s, 600);
  EXPECT_EQ(window.tasks, 23);
  EXPECT_EQ(window.warmup_tasks, 3);
  ASSERT_EQ(window.warmup.size(), 23u);
  EXPECT_TRUE(window.warmup[0] && window.warmup[1] && window.warmup[2]);
  EXPECT_FALSE(window.warmup[3]);
  auto in_window = ParseScenario(*windowed, "plan-warmup.json");
  ASSERT_TRUE(in_window.ok()) << in_window.error().message();
  auto rate = MeasureWorkload(*in_window);
  ASSERT_TRUE(rate.ok());
  rate->warmup = window.warmup;
  PlanSpace space;
  space.gpus = {"h100-sxm"};
  space.max_gpus = 1;
  PlanCandidate c;
  c.gpu = "h100-sxm";
  c.weight_format = scenario->weight_format;
  c.kv_format = scenario->kv_format;
  WorkloadCache workloads;
  const CandidateOutcome measured =
      DecideCandidate(*windowed, *in_window, space, *rate, c, workloads);
  EXPECT_EQ(measured.status, "feasible") << measured.reason;
  EXPECT_LT(measured.ttft_p90_s, target);
  // The same run with the warm-up counted misses the target.
  rate->warmup.clear();
  const CandidateOutcome counted =
      DecideCandidate(*windowed, *in_window, space, *rate, c, workloads);
  EXPECT_EQ(counted.status, "slo_not_met") << counted.reason;
  EXPECT_EQ(counted.cause, "slo");  // a target missed, not a backlog
  EXPECT_TRUE(measured.cause.empty());
  EXPECT_GE(counted.ttft_p90_s, 0.42);

  // An API candidate leaves the warm-up out of its $/task too. At gpt-5's
  // list prices ($1.25 input, $10 output per million; a prompt under 1,024
  // tokens is never cached by OpenAI's rules) an hour's task costs
  // 500 x 1.25e-6 + 10 x 10e-6 = $0.000725. Counted, the three warm-up tasks
  // (30,000 x 1.25e-6 + 10 x 10e-6 = $0.0376 each) would make it
  // (3 x 0.0376 + 20 x 0.000725) / 23 = $0.005535.
  PlanCandidate api;
  api.api_model = "gpt-5";
  api.provider = "openai";
  rate->warmup = window.warmup;
  const CandidateOutcome api_measured =
      DecideCandidate(*windowed, *in_window, space, *rate, api, workloads);
  ASSERT_TRUE(api_measured.priced) << api_measured.reason;
  EXPECT_NEAR(api_measured.usd_per_task, 0.000725, 1e-9);
  rate->warmup.clear();
  const CandidateOutcome api_counted =
      DecideCandidate(*windowed, *in_window, space, *rate, api, workloads);
  ASSERT_TRUE(api_counted.priced) << api_counted.reason;
  EXPECT_NEAR(api_counted.usd_per_task, (3 * 0.0376 + 20 * 0.000725) / 23, 1e-9);
}

// API rows: one without a known TTFT (no --api-latency) is ranked by cost
// but not on the Pareto front; "slo_not_evaluated" rows rank apart.
TEST(PlanTest, RankingKeepsApiRowsWithoutLatencyOffTheFront) {
  // index, status, $/task, GPUs, TTFT p90.
  std::vector<PlanRankRow> rows = {{0, "feasible", 2.0, 1, 3.0},
                                   {1, "feasible", 0.5, 0, std::nullopt},
                                   {2, "slo_not_evaluated", 0.1, 0, std::nullopt},
                                   {3, "feasible", 2.0, 0, 1.0},
                                   {4, "slo_not_evaluated", 0.05, 0, std::nullopt}};
  // Equal $/task: fewer GPUs first (3 before 0).
  EXPECT_EQ(RankByCost(rows), (std::vector<std::size_t>{1, 3, 0}));
  EXPECT_EQ(RankByCost(rows, "slo_not_evaluated"), (std::vector<std::size_t>{4, 2}));
  // 1 has no TTFT; 3 is as cheap as 0 and faster: 0 is dominated.
  EXPECT_EQ(ParetoFront(rows), (std::vector<std::size_t>{3}));
}

// The same GPUs at the same price (a self-hosted deployment's $/task does not
// depend on speculation): the faster TTFT p90 first, then candidate number;
// an untimed row keeps its number's place.
TEST(PlanTest, EqualPriceAndGpusRankTheFasterFirst) {
  std::vector<PlanRankRow> rows = {{0, "feasible", 1.0, 2, 3.55},
                                   {1, "feasible", 1.0, 2, 0.67},
                                   {2, "feasible", 1.0, 2, 0.67},
                                   {3, "feasible", 0.9, 4, 9.0}};
  EXPECT_EQ(RankByCost(rows), (std::vector<std::size_t>{3, 1, 2, 0}));
}

TEST(PlanTest, ApiLatencyListsStartAModelAtEachColon) {
  // A Bedrock-style id holds a ':' of its own: the model ends at the last
  // ':' before '='.
  auto given = ParseApiLatency(
      {"gpt-5:ttft_s=0.8,tpot_s.p90=0.02,anthropic.claude-v1:0:ttft_s.p99=1.5", "o3:tpot_s=0.01"});
  ASSERT_TRUE(given.ok()) << given.error().message();
  using Figures = std::map<std::string, double>;
  EXPECT_EQ(given->at("gpt-5"), (Figures{{"ttft_s", 0.8}, {"tpot_s.p90", 0.02}}));
  EXPECT_EQ(given->at("anthropic.claude-v1:0"), (Figures{{"ttft_s.p99", 1.5}}));
  EXPECT_EQ(given->at("o3"), (Figures{{"tpot_s", 0.01}}));
  EXPECT_EQ(given->size(), 3u);
  auto twice = ParseApiLatency({"gpt-5:ttft_s=1", "gpt-5:ttft_s=2"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message(),
            "--api-latency: \"gpt-5:ttft_s=2\" in \"gpt-5:ttft_s=2\" gives gpt-5's ttft_s twice");
  auto queue = ParseApiLatency({"gpt-5:queue_s=1"});
  ASSERT_FALSE(queue.ok());
  EXPECT_EQ(queue.error().message(),
            "--api-latency: \"gpt-5:queue_s=1\" in \"gpt-5:queue_s=1\" has metric \"queue_s\": one "
            "of ttft_s, tpot_s, alone or with a statistic (ttft_s.p90)");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
