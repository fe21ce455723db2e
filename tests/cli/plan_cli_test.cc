// End-to-end runs of kvbill plan: its flags' errors, shards merged into
// exactly the single run, the same bytes for any --jobs, the window's
// temporary directory removed when plan is killed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli/cli_test_util.h"
#include "kvbill/cost/engine_profile.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

const char kScenario[] = "tests/data/scenarios/plan_small.json";
const char kSpace[] = " --gpus h100-sxm,a100-80gb --max-gpus 2 --kv-formats bf16,fp8,nvfp4";

// --tasks-per-day: 0 asked for is no rate (0 is also the flag's default,
// "the trace's own rate", and was once taken as it), a negative one neither,
// and a rate past what trace.load can scale the trace to names the flag.
TEST(PlanCliTest, TasksPerDayMustBeARate) {
  const std::string base = std::string("plan --scenario ") + kScenario + " --gpus h100-sxm";
  for (const char* bad : {"0", "-5"}) {
    const auto r = RunKvbill(base + " --tasks-per-day " + bad);
    EXPECT_EQ(r.exit_status, 2) << bad;
    EXPECT_EQ(r.err, "kvbill plan: --tasks-per-day: must be a positive number\n") << bad;
  }
  const auto huge = RunKvbill(base + " --tasks-per-day 1e30");
  EXPECT_EQ(huge.exit_status, 2);
  EXPECT_EQ(huge.err.rfind("kvbill plan: --tasks-per-day: 1e+30 is ", 0), 0u) << huge.err;
  EXPECT_NE(huge.err.find("outside trace.load's range [1e-06, 1e+06]"), std::string::npos)
      << huge.err;
}

// A cost a task below $0.0001 keeps two significant digits: one H100 at
// $70.80 a day (the bundled $2.95 an hour) for 1,600,000 tasks a day is
// $0.00004425 a task, once printed "$0.0000". The tasks are one 50-token
// prompt and 2 output tokens each, which one GPU carries at that rate (a
// chat task's turns it does not: the day's GPU time would be 100 GPUs').
TEST(PlanCliTest, SmallCostsPerTaskKeepTheirDigits) {
  const std::string dir = ::testing::TempDir() + "/plan_small_cost";
  std::filesystem::create_directories(dir);
  {
    std::ofstream trace(dir + "/t.jsonl");
    trace << "{\"kvbill_trace\":1}\n";
    for (int i = 0; i < 40; ++i) {
      trace << R"({"id":"t)" << i << R"(","arrival_s":)" << i
            << R"(,"turns":[{"spans":[{"kind":"user","tokens":50}],"out":2}]})"
            << "\n";
    }
  }
  std::ofstream(dir + "/s.json") << R"({"model": "llama-3.1-8b", "trace": {"file": "t.jsonl"}})";
  const auto r = RunKvbill("plan --scenario " + dir +
                           "/s.json --gpus h100-sxm --max-gpus 1 --tasks-per-day 1600000");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("$0.000044  $70.80"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

// A request past max_model_len outside the busiest hour never runs in the
// window, so no candidate's figures show its refusal: the workload warns.
// Five 100-token tasks in the first minute, and 5.5 hours later one of a
// 50,000-token prompt and 10 output tokens, 50,010 tokens past Qwen3-8B's
// 40,960. With --window all the candidates run it themselves (their
// context_limit), and the workload says nothing.
TEST(PlanCliTest, ARequestPastTheLimitOutsideTheWindowWarns) {
  const std::string dir = ::testing::TempDir() + "/plan_outside_window";
  std::filesystem::create_directories(dir);
  {
    std::ofstream trace(dir + "/t.jsonl");
    trace << "{\"kvbill_trace\":1}\n";
    for (int i = 0; i < 6; ++i) {
      const bool long_one = i == 5;
      trace << R"({"id":"t)" << i << R"(","arrival_s":)" << (long_one ? 20000 : 10 * i)
            << R"(,"turns":[{"spans":[{"kind":"user","tokens":)" << (long_one ? 50000 : 100)
            << R"(}],"out":10}]})"
            << "\n";
    }
  }
  std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b", "trace": {"file": "t.jsonl"}})";
  const std::string base = "plan --scenario " + dir + "/s.json --gpus h100-sxm --max-gpus 1";
  const auto r = RunKvbill(base + " --format json");
  ASSERT_TRUE(r.exit_status == 0 || r.exit_status == 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool warned = false;
  for (const auto& w : j["workload"]["warnings"]) {
    if (w["code"] != "context_limit") continue;
    warned = true;
    EXPECT_EQ(w["message"].get<std::string>().rfind(
                  "1 task(s) of the trace outside the simulated window hold a request past "
                  "max_model_len 40,960 (the longest 50,010 tokens, prompt and output)",
                  0),
              0u)
        << w["message"];
  }
  EXPECT_TRUE(warned) << r.out;
  const auto all = RunKvbill(base + " --window all --format json");
  ASSERT_TRUE(all.exit_status == 0 || all.exit_status == 1) << all.err;
  for (const auto& w : nlohmann::json::parse(all.out)["workload"]["warnings"]) {
    EXPECT_NE(w["code"], "context_limit") << w;
  }
  std::filesystem::remove_all(dir);
}

// Shards carry a fingerprint of their inputs: a shard re-run after the
// scenario or a file it reads changed (here the model's config.json, its
// KV heads 8 -> 32, which quadruples KV bytes a token) is another plan, and
// merge refuses it rather than ranking rows computed from two models.
// A window shorter than twice a task's simulated length: four one-request
// tasks arrive 10 s apart (a 30-s span) with no tool waits, so the
// workload's own window_short (tool waits against the span) cannot fire.
// Each asks 20,000 output tokens of Qwen3-8B on an A100: at least 20,000
// decode steps, each reading the 16.4 GB of bf16 weights at no more than
// the 2.039 TB/s of HBM (8.0 ms), so a task lasts over 160 s, more than twice
// 30 s: the candidate warns; 4 tasks over 30 s are (4 - 1) x 86,400 / 30 =
// 8,640 a day. With 20 output tokens a task lasts well under
// the 15 s that would make it (20 steps at most some tens of ms each, a
// 100-token prefill), and nothing warns.
TEST(PlanCliTest, AWindowShorterThanTwoSimulatedTasksWarns) {
  const std::string dir = ::testing::TempDir() + "/plan_window_short";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const int out : {20000, 20}) {
    SCOPED_TRACE(out);
    std::ofstream trace(dir + "/t.jsonl");
    trace << "{\"kvbill_trace\":1}\n";
    for (int i = 0; i < 4; ++i) {
      trace << R"({"id":"t)" << i << R"(","arrival_s":)" << 10 * i
            << R"(,"turns":[{"spans":[{"kind":"user","tokens":100}],"out":)" << out << "}]}\n";
    }
    trace.close();
    std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b", "trace": {"file": "t.jsonl"}})";
    const std::string base =
        "plan --scenario " + dir + "/s.json --gpus a100-80gb --max-gpus 1 --window all";
    const auto r = RunKvbill(base + " --format json");
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["workload"]["warnings"].size(), 0u) << r.out;
    bool warned = false;
    for (const auto& w : j["candidates"][0]["warnings"]) {
      if (w["code"] != "window_short") continue;
      warned = true;
      EXPECT_NE(w["message"].get<std::string>().find(
                    "the window's tasks arrive over 30.0 s, less than twice a task's length"),
                std::string::npos)
          << w["message"];
      EXPECT_NE(w["message"].get<std::string>().find("at 8,640 tasks a day"), std::string::npos)
          << w["message"];
      // Each task's share of the decode steps' GPU time: 20,000 steps of at
      // least 8.0 ms shared by at most 4 tasks, 40 s; 8,640 tasks a day
      // take at least 345,600 s of the one GPU's 86,400 (400%), said as a
      // figure the ramp-up inflates, not held against the candidate.
      const std::string m = w["message"].get<std::string>();
      const std::string lead = "at this run's GPU time per task the day's 8,640 tasks would take ";
      const auto at = m.find(lead);
      ASSERT_NE(at, std::string::npos) << m;
      EXPECT_GE(std::stod(m.substr(at + lead.size())), 400) << m;
      EXPECT_NE(m.find("% of the 1 replica(s)' GPU time, a figure the ramp-up's smaller batches "
                       "inflate"),
                std::string::npos)
          << m;
    }
    EXPECT_EQ(warned, out == 20000) << r.out;
    const auto table = RunKvbill(base);
    EXPECT_EQ(table.out.find("warning [window_short] (a100-80gb tp=1 w=auto kv=bf16, and every "
                             "candidate it marks): ") != std::string::npos,
              out == 20000)
        << table.out;
  }
  std::filesystem::remove_all(dir);
}

TEST(PlanCliTest, ShardsOfEditedInputsAreRefused) {
  const std::string dir = ::testing::TempDir() + "/plan_fingerprint";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string config = dir + "/config.json";
  const auto write_config = [&](int kv_heads) {
    std::ofstream(config) << R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
      "num_hidden_layers": 16, "hidden_size": 2048, "intermediate_size": 8192,
      "num_attention_heads": 32, "head_dim": 64, "vocab_size": 32000,
      "max_position_embeddings": 32768, "num_key_value_heads": )"
                          << kv_heads << "}";
  };
  write_config(8);
  std::ofstream(dir + "/s.json") << R"({"model": "config.json", "trace": {"generator": "chat",
      "tasks": 8}, "seed": 1})";
  const std::string base = "plan --scenario " + dir + "/s.json --gpus h100-sxm,a100-80gb " +
                           "--max-gpus 1 --jobs 1 --format json";
  ASSERT_EQ(RunKvbill(base + " --shard 0/2 -o " + dir + "/0.json").exit_status, 0);
  ASSERT_EQ(RunKvbill(base + " --shard 1/2 -o " + dir + "/1.json").exit_status, 0);
  const auto same = RunKvbill("merge " + dir + "/0.json " + dir + "/1.json --format json");
  ASSERT_EQ(same.exit_status, 0) << same.err;
  EXPECT_EQ(same.out, RunKvbill(base).out);
  // A --trace counts by its contents, not by how its path is spelt: shards
  // given dir/t.jsonl and dir/./t.jsonl merge.
  ASSERT_EQ(
      RunKvbill("trace gen --preset chat --tasks 8 --seed 3 -o " + dir + "/t.jsonl").exit_status,
      0);
  ASSERT_EQ(RunKvbill(base + " --trace " + dir + "/t.jsonl --shard 0/2 -o " + dir + "/t0.json")
                .exit_status,
            0);
  ASSERT_EQ(RunKvbill(base + " --trace " + dir + "/./t.jsonl --shard 1/2 -o " + dir + "/t1.json")
                .exit_status,
            0);
  const auto traced = RunKvbill("merge " + dir + "/t0.json " + dir + "/t1.json --format json");
  EXPECT_EQ(traced.exit_status, 0) << traced.err;
  write_config(32);
  ASSERT_EQ(RunKvbill(base + " --shard 1/2 -o " + dir + "/1.json").exit_status, 0);
  const auto mixed = RunKvbill("merge " + dir + "/0.json " + dir + "/1.json");
  EXPECT_EQ(mixed.exit_status, 2);
  EXPECT_NE(
      mixed.err.find(dir + "/1.json#/fingerprint: from a different plan than " + dir + "/0.json"),
      std::string::npos)
      << mixed.err;
  std::filesystem::remove_all(dir);
}

TEST(PlanCliTest, ShardsMergeIntoExactlyTheSingleRun) {
  const std::string dir = ::testing::TempDir();
  const std::string base = std::string("plan --scenario ") + kScenario + kSpace;
  std::string shards;
  for (int i = 0; i < 3; ++i) {
    const std::string out = dir + "/plan_shard" + std::to_string(i) + ".json";
    const auto r =
        RunKvbill(base + " --jobs 1 --shard " + std::to_string(i) + "/3 --format json -o " + out);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    shards += " " + out;
  }
  for (const char* format : {"json", "csv", "table"}) {
    SCOPED_TRACE(format);
    const auto single = RunKvbill(base + " --jobs 2 --format " + format);
    ASSERT_EQ(single.exit_status, 0) << single.err;
    const auto merged = RunKvbill(std::string("merge") + shards + " --format " + format);
    ASSERT_EQ(merged.exit_status, 0) << merged.err;
    EXPECT_EQ(merged.out, single.out);
    EXPECT_EQ(RunKvbill(base + " --jobs 1 --format " + format).out, single.out);
  }
  const auto j = nlohmann::json::parse(RunKvbill(base + " --format json").out);
  // 2 GPUs x TP 1, 2 (qwen3-8b: 32 query heads, 8 KV heads) x 3 KV formats.
  EXPECT_EQ(j["total_candidates"], 12);
  // nvfp4 KV runs on no Hopper or Ampere GPU: 4 candidates decided by format.
  EXPECT_EQ(j["counts"]["filtered"]["format"], 4);
  const auto partial = RunKvbill("merge " + dir + "/plan_shard0.json " + dir + "/plan_shard1.json");
  EXPECT_EQ(partial.exit_status, 2);
  EXPECT_NE(partial.err.find("is in no shard"), std::string::npos) << partial.err;
  // A shard priced with another --gpu-price is another plan: merged, its
  // rows' dollars would rank against the others' at another price.
  const std::string priced = dir + "/plan_shard2_priced.json";
  ASSERT_EQ(
      RunKvbill(base + " --jobs 1 --shard 2/3 --gpu-price h100-sxm=1 --format json -o " + priced)
          .exit_status,
      0);
  const auto mixed =
      RunKvbill("merge " + dir + "/plan_shard0.json " + dir + "/plan_shard1.json " + priced);
  EXPECT_EQ(mixed.exit_status, 2);
  EXPECT_NE(mixed.err.find(priced + "#/space: from a different plan than "), std::string::npos)
      << mixed.err;
  // A row kvbill did not write: a status misspelt, a GPU or KV format that
  // does not exist. merge printed "feasable" as a verdict of its own.
  std::ifstream in(dir + "/plan_shard2.json");
  const auto shard = nlohmann::ordered_json::parse(in);
  for (const auto& [key, value, said] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"status", "feasable",
            "#/candidates/0/status: must be one of feasible, slo_not_met, slo_not_evaluated, "
            "no_fit, format, uncalibrated, pruned, error, got \"feasable\""},
           {"gpu", "h900", "#/candidates/0/gpu: must be a GPU of the catalog, got \"h900\""},
           {"kv_format", "fp9",
            "#/candidates/0/kv_format: must be a KV format kvbill reads, got \"fp9\""}}) {
    auto doc = shard;
    doc["candidates"][0][key] = value;
    const std::string path = dir + "/plan_shard2_" + key + ".json";
    std::ofstream(path) << doc.dump();
    const auto r =
        RunKvbill("merge " + dir + "/plan_shard0.json " + dir + "/plan_shard1.json " + path);
    EXPECT_EQ(r.exit_status, 2) << key;
    EXPECT_EQ(r.err, "kvbill merge: " + path + said + "\n") << key;
  }
  // One GPU priced twice is an error, not the last price.
  const auto twice = RunKvbill(base + " --gpu-price h100-sxm=2,h100-sxm=3");
  EXPECT_EQ(twice.exit_status, 2);
  EXPECT_NE(twice.err.find("--gpu-price: h100-sxm is priced twice"), std::string::npos)
      << twice.err;
}

// A window whose arrivals are over before a task is describes a burst, not
// a day: plan_small's 12 chats arrive over 94 s and each lasts some 727 s of
// tool waits, so the workload carries window_short (JSON and table). Twelve
// coding agents arrive over about 700 s, longer than their 300-s tasks: no
// warning.
TEST(PlanCliTest, AWindowShorterThanATaskIsWarned) {
  const std::string space = " --gpus h100-sxm --max-gpus 1 --jobs 1";
  const auto r = RunKvbill(std::string("plan --scenario ") + kScenario + space + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto w = nlohmann::json::parse(r.out)["workload"];
  ASSERT_LT(w["arrival_span_s"].get<double>(), w["mean_task_s"].get<double>());
  ASSERT_EQ(w["warnings"].size(), 1u);
  EXPECT_EQ(w["warnings"][0]["code"], "window_short");
  const auto table = RunKvbill(std::string("plan --scenario ") + kScenario + space);
  // 94 s is 1.6 min (a 0.086-s span once read "0 s").
  EXPECT_NE(table.out.find("warning [window_short]: the simulated tasks arrive over 1.6 min, less "
                           "than a task lasts ("),
            std::string::npos)
      << table.out;
  // CSV rows hold candidates only: the warning goes to stderr.
  const auto csv = RunKvbill(std::string("plan --scenario ") + kScenario + space + " --format csv");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  EXPECT_NE(csv.err.find("kvbill plan: warning [window_short]: "), std::string::npos) << csv.err;
  const std::string longer = ::testing::TempDir() + "/plan_agents12.json";
  std::ofstream(longer) << R"({"name": "agents12", "model": "qwen3-8b",
      "trace": {"generator": "coding-agent", "tasks": 12}, "seed": 1})";
  const auto l = RunKvbill("plan --scenario " + longer + space + " --format json");
  // Its 12 tasks outgrow qwen3-8b's 40,960-token context: no candidate is
  // feasible (exit 1), the output written all the same.
  ASSERT_EQ(l.exit_status, 1) << l.err;
  const auto lw = nlohmann::json::parse(l.out)["workload"];
  EXPECT_GT(lw["arrival_span_s"].get<double>(), lw["mean_task_s"].get<double>());
  EXPECT_TRUE(lw["warnings"].empty()) << lw.dump();
}

// --gpus and --gpu-price take a GPU as other commands do: "H100" is the
// catalog's h100-sxm (the alias `kvbill gpus` lists), priced as given.
TEST(PlanCliTest, GpusTakeTheCatalogsAliases) {
  const auto r = RunKvbill(std::string("plan --scenario ") + kScenario +
                           " --gpus H100 --gpu-price H100=3.5 --max-gpus 1 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["space"]["gpus"], nlohmann::json::array({"h100-sxm"}));
  for (const auto& c : j["candidates"]) {
    EXPECT_EQ(c["gpu"], "h100-sxm");
    EXPECT_EQ(c["usd_per_gpu_hour"], 3.5);
  }
}

TEST(PlanCliTest, BadFlagValuesNameTheFlagAndWriteNothing) {
  const std::string out = ::testing::TempDir() + "/plan_bad.txt";
  std::filesystem::remove(out);
  const std::string base = std::string("plan --scenario ") + kScenario + " -o " + out;
  const std::pair<const char*, const char*> cases[] = {
      {" --gpus h100x", "--gpus \"h100x\": unknown GPU; did you mean"},
      {" --kv-formats fp7", "--kv-formats: unknown format \"fp7\""},
      {" --slo ttft.p90=2", "--slo: unknown metric \"ttft.p90\""},
      {" --slo ttft_s.p90", "--slo: \"ttft_s.p90\" is not METRIC=SECONDS"},
      {" --slo ttft_s.p90=-1", "--slo: ttft_s.p90: \"-1\" is not a positive number"},
      {" --slo ttft_s.p90=0.001,ttft_s.p90=1", "--slo: ttft_s.p90 is given twice"},
      {" --gpus h100,h100-sxm", "--gpus: \"h100-sxm\" is h100-sxm, already in the list"},
      {" --kv-formats fp8,fp8-e4m3", "--kv-formats: \"fp8-e4m3\" is"},
      {" --speculative maybe", "--speculative: \"maybe\" is not off or on"},
      {" --gpu-price h100-sxm", "--gpu-price: \"h100-sxm\" is not GPU=USD_PER_HOUR"},
      {" --gpu-price h10=2", "--gpu-price \"h10\": unknown GPU"},
      {" --gpu-price h100-sxm=1e300", "--gpu-price: \"h100-sxm=1e300\" is not GPU=USD_PER_HOUR"},
      {" --shard 3/3", "--shard: expected i/n"},
      {" --window week", "window"}};
  for (const auto& [flags, message] : cases) {
    SCOPED_TRACE(flags);
    const auto r = RunKvbill(base + flags);
    EXPECT_EQ(r.exit_status, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// The counts partition the candidates: a candidate that failed during its
// simulation (no_fit after 2 simulations: an SGLang run out of memory) is
// simulated, not also filtered; an API candidate is counted as one only.
// Rows by hand: 0 no_fit simulated twice, 1 no_fit never simulated, 2
// pruned, 3 feasible simulated once, 4 an API error. So filtered 1
// (no_fit 1), pruned 1, simulated 2 (0 and 3), api 1, 1 + 1 + 2 + 1 = 5
// enumerated, 2 + 1 = 3 simulations.
TEST(PlanCliTest, CountsPartitionTheCandidates) {
  const std::string path = ::testing::TempDir() + "/plan_counts.json";
  auto row = [](int index, const char* status, int simulations) {
    nlohmann::ordered_json r = {
        {"index", index},       {"kind", "self_hosted"}, {"gpu", "h100-sxm"},
        {"tensor_parallel", 1}, {"expert_parallel", 1},  {"weight_format", "auto"},
        {"kv_format", "bf16"},  {"speculative", "off"},  {"status", status},
        {"reason", "by hand"},  {"uncalibrated", false}, {"simulations", simulations}};
    return r;
  };
  nlohmann::ordered_json feasible = row(3, "feasible", 1);
  feasible["replicas"] = 1;
  feasible["gpus"] = 1;
  feasible["usd_per_task"] = 0.01;
  nlohmann::ordered_json api = row(4, "error", 0);
  api["kind"] = "api";
  api["gpu"] = "";
  api["tensor_parallel"] = 0;
  api["expert_parallel"] = 0;
  api["provider"] = "deepseek";
  api["model"] = "deepseek-chat";
  const nlohmann::ordered_json doc = {
      {"scenario", "s.json"},
      {"window", nlohmann::ordered_json::object()},
      {"slo", nlohmann::ordered_json::object()},
      {"space", nlohmann::ordered_json::object()},
      {"workload", nlohmann::ordered_json::object()},
      {"total_candidates", 5},
      {"candidates",
       {row(0, "no_fit", 2), row(1, "no_fit", 0), row(2, "pruned", 0), feasible, api}}};
  std::ofstream(path) << doc.dump();
  const auto r = RunKvbill("merge " + path + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto counts = nlohmann::json::parse(r.out)["counts"];
  EXPECT_EQ(counts["enumerated"], 5);
  EXPECT_EQ(counts["filtered"]["no_fit"], 1);
  EXPECT_EQ(counts["filtered"]["error"], 0);
  EXPECT_EQ(counts["pruned"], 1);
  EXPECT_EQ(counts["simulated"], 2);
  EXPECT_EQ(counts["api"], 1);
  EXPECT_EQ(counts["simulations"], 3);
  EXPECT_EQ(counts["feasible"], 1);
  std::filesystem::remove(path);
}

// A plan with no feasible candidate is a failed check (exit 1), its output
// written all the same; a shard exits 0 (its slice is not the plan) and the
// merge of the shards exits 1. A TTFT p90 target of 1 us no prefill meets:
// plan_small on one H100 (TP 1, 2 KV formats that run there: bf16 and fp8;
// nvfp4 is filtered by format) leaves 3 candidates, none feasible.
TEST(PlanCliTest, NoFeasibleCandidateExitsOne) {
  const std::string dir = ::testing::TempDir();
  const std::string base = std::string("plan --scenario ") + kScenario +
                           " --gpus h100-sxm --max-gpus 1 --kv-formats bf16,fp8,nvfp4"
                           " --slo ttft_s.p90=0.000001 --jobs 1";
  const std::string out = dir + "/plan_none.json";
  std::filesystem::remove(out);
  const auto r = RunKvbill(base + " --format json -o " + out);
  EXPECT_EQ(r.exit_status, 1) << r.err;
  EXPECT_NE(r.err.find("\nkvbill plan: no feasible candidate (of 3: 1 format, 2 slo_not_met; "),
            std::string::npos)
      << r.err;
  std::ifstream written(out);
  const auto doc = nlohmann::json::parse(written);
  EXPECT_EQ(doc["counts"]["feasible"], 0);
  EXPECT_EQ(doc["counts"]["slo_not_met"], 2);
  for (const auto& row : doc["candidates"]) {
    // A target no prefill meets: the cause is the target, for scripts;
    // format rows have none.
    EXPECT_EQ(row["cause"],
              row["status"] == "slo_not_met" ? nlohmann::json("slo") : nlohmann::json(nullptr))
        << row;
  }
  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const std::string part = dir + "/plan_none" + std::to_string(i) + ".json";
    const auto s =
        RunKvbill(base + " --shard " + std::to_string(i) + "/2 --format json -o " + part);
    EXPECT_EQ(s.exit_status, 0) << s.err;
    shards += " " + part;
  }
  const auto merged = RunKvbill("merge" + shards + " --format table");
  EXPECT_EQ(merged.exit_status, 1) << merged.err;
  EXPECT_NE(merged.out.find("no feasible candidate\n"), std::string::npos) << merged.out;
  EXPECT_NE(merged.err.find("kvbill merge: no feasible candidate (of 3:"), std::string::npos)
      << merged.err;
  // The same space with a target every candidate meets: exit 0.
  const auto ok = RunKvbill(std::string("plan --scenario ") + kScenario +
                            " --gpus h100-sxm --max-gpus 1 --kv-formats bf16 --jobs 1"
                            " --slo ttft_s.p90=1000");
  EXPECT_EQ(ok.exit_status, 0) << ok.err;
}

// $/task under dedicated billing is a day of rented replicas over the
// day's tasks, not simulate's cost per task (a task's own GPU time): the
// table says which, the JSON names the rule, and $/task x tasks a day is
// $/day. One H100 at the catalog's $2.95 an hour is $70.80 a day.
TEST(PlanCliTest, DollarsPerTaskSayWhatTheyDivide) {
  const std::string base = std::string("plan --scenario ") + kScenario +
                           " --gpus h100-sxm --max-gpus 1 --kv-formats bf16 --jobs 1"
                           " --slo ttft_s.p90=1000";
  const auto json = RunKvbill(base + " --format json");
  ASSERT_EQ(json.exit_status, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["workload"]["billing"], "dedicated");
  const auto& row = j["candidates"][0];
  ASSERT_EQ(row["status"], "feasible");
  EXPECT_NEAR(row["usd_per_day"].get<double>(), 70.80, 1e-9);
  EXPECT_NEAR(row["usd_per_task"].get<double>() * j["workload"]["tasks_per_day"].get<double>(),
              70.80, 1e-9);
  const auto table = RunKvbill(base);
  EXPECT_NE(table.out.find("\n$/task: $/day / "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" (billing dedicated: the replicas rented all day, idle time included; "
                           "simulate's cost per task is a task's own GPU time, idle billed apart)"),
            std::string::npos)
      << table.out;
}

// One task (or tasks that all arrive at once) has no rate of tasks a day:
// a day of a dedicated GPU priced at "0 tasks a day" read $0.00, so plan
// refuses it, with --tasks-per-day or without.
TEST(PlanCliTest, ATraceWithoutARateIsRefused) {
  const std::string out = ::testing::TempDir() + "/plan_one_task.txt";
  std::filesystem::remove(out);
  for (const char* flags : {"", " --tasks-per-day 100"}) {
    SCOPED_TRACE(flags);
    const auto r = RunKvbill(std::string("plan --scenario tests/data/scenarios/plan_one_task.json "
                                         "--gpus h100-sxm --max-gpus 1 -o ") +
                             out + flags);
    EXPECT_EQ(r.exit_status, 2) << r.out;
    EXPECT_NE(r.err.find("the trace's tasks all arrive at once (1 task), so it has no rate of "
                         "tasks a day"),
              std::string::npos)
        << r.err;
    // The advice names a key the scenario has (once it named a
    // "trace.generate's arrivals_per_s" there is none of).
    EXPECT_NE(r.err.find("plan a trace whose tasks arrive over time, trace.tasks 2 or more "
                         "(generated tasks arrive at the preset's rate"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("arrivals_per_s"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  // Following it: the same scenario with trace.tasks 2 has a rate and is
  // planned.
  const std::string two = ::testing::TempDir() + "/plan_two_tasks.json";
  std::ofstream(two) << R"({"model": "qwen3-8b", "trace": {"generator": "chat", "tasks": 2},
      "slo": {"ttft_s.p90": 2.0}})";
  const auto r = RunKvbill("plan --scenario " + two + " --gpus h100-sxm --max-gpus 1");
  EXPECT_EQ(r.exit_status, 0) << r.err;
  std::filesystem::remove(two);
}

// --speculative on plans the same deployment with speculative decoding: the
// scenario has none, so "on" turns on what compare's lever does for
// Qwen3-8B (no MTP layer in its checkpoint: an EAGLE-3 head, k 3, acceptance
// 0.8, E = 1 + 0.8 + 0.64 + 0.512 = 2.952 tokens per verification step).
// With one replica both candidates are simulated; "on" finishes its output
// in fewer, costlier steps, so its TPOT is lower than "off"'s.
TEST(PlanCliTest, SpeculativeOnPlansTheDeploymentWithADraft) {
  const auto r = RunKvbill(std::string("plan --scenario ") + kScenario +
                           " --gpus h100-sxm --max-gpus 1 --speculative off,on"
                           " --slo ttft_s.p90=60,tpot_s.p90=10 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["candidates"].size(), 2u);
  const auto& off = j["candidates"][0];
  const auto& on = j["candidates"][1];
  EXPECT_EQ(off["speculative"], "off");
  EXPECT_EQ(on["speculative"], "on");
  // Qwen3-8B's checkpoint has no MTP layer: the draft is an EAGLE-3 head.
  EXPECT_TRUE(off["speculative_method"].is_null()) << off.dump();
  EXPECT_EQ(on["speculative_method"], "eagle3");
  EXPECT_NE(on["status"], "not_applicable") << on["reason"];
  EXPECT_GT(on["simulations"].get<int>(), 0);
  // The SLO checks carry the measured values (targets loose enough to pass).
  ASSERT_TRUE(off["slo"].contains("tpot_s.p90") && on["slo"].contains("tpot_s.p90")) << r.out;
  EXPECT_LT(on["slo"]["tpot_s.p90"].get<double>(), off["slo"]["tpot_s.p90"].get<double>());
}

// Without --speculative a scenario that speculates is planned with its
// draft, as its formats are planned as written: its one candidate is "on"
// (the space says so), and --speculative off plans it without.
TEST(PlanCliTest, AScenarioThatSpeculatesIsPlannedWithItsDraft) {
  const std::string dir = ::testing::TempDir() + "/plan_own_draft";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b", "deployment": {"speculative":
      {"method": "eagle3", "acceptance_rate": 0.5}}, "trace": {"generator": "chat", "tasks": 4}})";
  const std::string base =
      "plan --scenario " + dir + "/s.json --gpus h100-sxm --max-gpus 1 --format json";
  const auto own = RunKvbill(base);
  ASSERT_EQ(own.exit_status, 0) << own.err;
  const auto j = nlohmann::json::parse(own.out);
  EXPECT_EQ(j["space"]["speculative"], nlohmann::json::array({"on"}));
  ASSERT_EQ(j["candidates"].size(), 1u);
  EXPECT_EQ(j["candidates"][0]["speculative"], "on");
  EXPECT_EQ(j["candidates"][0]["speculative_method"], "eagle3");
  const auto off = RunKvbill(base + " --speculative off");
  ASSERT_EQ(off.exit_status, 0) << off.err;
  EXPECT_EQ(nlohmann::json::parse(off.out)["candidates"][0]["speculative"], "off");
  std::filesystem::remove_all(dir);
}

TEST(PlanCliTest, GpuPriceOverridesTheCatalog) {
  const std::string base =
      std::string("plan --scenario ") + kScenario + " --gpus h100-sxm --max-gpus 1 --format json";
  const auto list = nlohmann::json::parse(RunKvbill(base).out);
  const auto cheap = nlohmann::json::parse(RunKvbill(base + " --gpu-price h100-sxm=1.475").out);
  const auto& a = list["candidates"][0];
  const auto& b = cheap["candidates"][0];
  ASSERT_EQ(a["status"], "feasible") << a["reason"];
  EXPECT_EQ(a["usd_per_gpu_hour"], 2.95);  // scenarios/gpus.json
  EXPECT_EQ(b["usd_per_gpu_hour"], 1.475);
  // Where each price comes from: the catalog's source and date, or the flag.
  EXPECT_EQ(a["price_source"],
            "AIMultiple GPU price index: median on-demand price across 37 providers (range "
            "$1.99-5), 2026-05");
  EXPECT_EQ(b["price_source"], "--gpu-price");
  // Half the price per GPU-hour, the same simulation: half the dollars per task.
  EXPECT_NEAR(b["usd_per_task"].get<double>(), a["usd_per_task"].get<double>() / 2,
              1e-12 * a["usd_per_task"].get<double>());
}

// Each self-hosted candidate says how well its regime was validated: Qwen3-8B
// on one H100 is in the bundled vLLM profile's regime of dense models on one
// H100 (published runs replayed; the figure is the profile's own), on two
// H100s in a regime no published run covers: marked "(weakly validated)".
TEST(PlanCliTest, CandidatesSayHowWellTheirRegimeWasValidated) {
  const std::string base =
      std::string("plan --scenario ") + kScenario + " --gpus h100-sxm --max-gpus 2";
  const auto r = RunKvbill(base + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["candidates"].size(), 2u);
  const auto& one = j["candidates"][0];
  const auto& two = j["candidates"][1];
  ASSERT_EQ(one["tensor_parallel"], 1);
  EXPECT_EQ(one["validation_regime"], "h100-sxm, dense models, one GPU a replica");
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  const ValidationRegime* regime = FindValidationRegime(*profile, "h100-sxm", false, false);
  ASSERT_NE(regime, nullptr);
  EXPECT_EQ(one["validation_median_error"], regime->lomo_median_error);
  EXPECT_EQ(one["weakly_validated"], regime->lomo_median_error > kWeaklyValidatedError);
  EXPECT_EQ(two["validation_regime"], "h100-sxm, dense models, several GPUs a replica");
  EXPECT_TRUE(two["validation_median_error"].is_null());
  EXPECT_EQ(two["weakly_validated"], true);
  // Each simulated row lists its run's warnings: the two-GPU one's run warns
  // weakly_validated, which its label marks once, not again among "warns".
  ASSERT_TRUE(two["warnings"].is_array());
  bool weak = false;
  for (const auto& w : two["warnings"]) weak = weak || w["code"] == "weakly_validated";
  EXPECT_TRUE(weak) << two["warnings"].dump();
  const auto table = RunKvbill(base);
  EXPECT_NE(table.out.find("h100-sxm tp=2 w=auto kv=bf16 (weakly validated)"), std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("warns weakly_validated"), std::string::npos) << table.out;
  // Speculative decoding at its method's default acceptance: the label says so.
  const auto spec = RunKvbill(std::string("plan --scenario ") + kScenario +
                              " --gpus a100-80gb --max-gpus 1 --speculative off,on");
  ASSERT_EQ(spec.exit_status, 0) << spec.err;
  // The label names the method "on" runs (EAGLE-3: Qwen3-8B has no MTP layer).
  EXPECT_NE(spec.out.find("spec=eagle3 (warns speculative_acceptance_assumed)"), std::string::npos)
      << spec.out;
  EXPECT_NE(spec.out.find("a100-80gb tp=1 w=auto kv=bf16 (warns window_short)  "),
            std::string::npos)
      << spec.out;
  const auto csv = RunKvbill(base + " --format csv");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  EXPECT_NE(csv.out.find(",warnings,speculative_method\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("weakly_validated"), std::string::npos) << csv.out;
  // $/day to the cent in every row, whatever its size: each ranked row's
  // two dollar cells are $/task (4 decimals below $100) and $/day (2).
  const std::regex row(R"(\$[0-9,]+\.[0-9]+ +\$[0-9,]+\.([0-9]+) )");
  int rows = 0;
  for (auto it = std::sregex_iterator(table.out.begin(), table.out.end(), row);
       it != std::sregex_iterator(); ++it) {
    EXPECT_EQ((*it)[1].str().size(), 2u) << (*it)[0].str();
    ++rows;
  }
  EXPECT_GE(rows, 2) << table.out;
}

// The cheapest candidate may rest on assumed figures: an L40S (no kernel
// tables: uncalibrated) at $0.50 an hour undercuts one A100 at the
// catalog's $1.50. The plan says rank 1 is uncalibrated and names the
// cheapest whose figures rest on the calibration and its validation alone:
// the A100 TP 1 (dense models on one A100, validated). JSON
// `cheapest_validated` is that row's index; with the A100 alone rank 1 is
// it, and nothing is said.
TEST(PlanCliTest, TheCheapestOnAssumedFiguresNamesTheCheapestValidated) {
  const std::string base = std::string("plan --scenario ") + kScenario +
                           " --max-gpus 1 --allow-uncalibrated --gpu-price l40s=0.5";
  const auto r = RunKvbill(base + " --gpus a100-80gb,l40s --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& rows = j["candidates"];
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(j["ranking"].size(), 2u);
  const auto row = [&](const nlohmann::json& index) -> const nlohmann::json& {
    for (const auto& c : rows) {
      if (c["index"] == index) return c;
    }
    ADD_FAILURE() << "no candidate " << index;
    return rows[0];
  };
  EXPECT_EQ(row(j["cheapest"])["gpu"], "l40s");
  EXPECT_EQ(row(j["cheapest"])["uncalibrated"], true);
  const auto& validated = row(j["cheapest_validated"]);
  EXPECT_EQ(validated["gpu"], "a100-80gb");
  EXPECT_EQ(validated["uncalibrated"], false);
  EXPECT_EQ(validated["weakly_validated"], false);

  const auto text = RunKvbill(base + " --gpus a100-80gb,l40s");
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find("\nthe cheapest (rank 1) rests on assumed figures (uncalibrated); the "
                          "cheapest on calibrated and validated figures alone is rank 2: "
                          "a100-80gb tp=1 w=auto kv=bf16"),
            std::string::npos)
      << text.out;

  const auto alone = RunKvbill(base + " --gpus a100-80gb --format json");
  ASSERT_EQ(alone.exit_status, 0) << alone.err;
  const auto a = nlohmann::json::parse(alone.out);
  EXPECT_EQ(a["cheapest_validated"], a["cheapest"]);
  EXPECT_EQ(RunKvbill(base + " --gpus a100-80gb").out.find("rests on assumed figures"),
            std::string::npos);
}

// The router that shares a candidate's requests among its replicas is the
// scenario's engine.router: the plan says which (text and JSON
// workload.router), round_robin by default.
TEST(PlanCliTest, ThePlanSaysWhichRouterSharesTheReplicas) {
  const std::string dir = ::testing::TempDir() + "/plan_router";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b", "engine": {"router":
      "session_affinity"}, "trace": {"generator": "chat", "tasks": 4}})";
  const auto r = RunKvbill("plan --scenario " + dir + "/s.json --gpus h100-sxm --max-gpus 1");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("; at most 1 GPU; replicas share requests by session_affinity "
                       "(engine.router)\n"),
            std::string::npos)
      << r.out;
  const auto j = RunKvbill(std::string("plan --scenario ") + kScenario +
                           " --gpus h100-sxm --max-gpus 1 --format json");
  ASSERT_EQ(j.exit_status, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["workload"]["router"], "round_robin");
  std::filesystem::remove_all(dir);
}

// SIGINT or SIGTERM while plan simulates the busiest hour: the temporary
// kvbill-plan-XXXXXX directory holding window.jsonl is gone from $TMPDIR,
// and plan dies of the signal (re-raised, not an exit status).
TEST(PlanCliTest, KilledPlanLeavesNoTemporaryDirectory) {
  namespace fs = std::filesystem;
  for (const int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig == SIGTERM ? "SIGTERM" : "SIGINT");
    const fs::path tmp = fs::path(::testing::TempDir()) / ("plan_signal_" + std::to_string(sig));
    fs::remove_all(tmp);
    fs::create_directories(tmp);
    const std::string scenario = std::string(KVBILL_SOURCE_DIR) + "/" + kScenario;
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::setenv("TMPDIR", tmp.c_str(), 1);
      // Silence the child; a space big enough to run for seconds.
      if (std::freopen("/dev/null", "w", stdout) == nullptr) ::_exit(120);
      if (std::freopen("/dev/null", "w", stderr) == nullptr) ::_exit(121);
      ::execl(KVBILL_BINARY, KVBILL_BINARY, "plan", "--scenario", scenario.c_str(), "--jobs", "1",
              "--max-gpus", "8", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Wait until the window's trace is written (the handler is armed before
    // it), then signal.
    bool written = false;
    for (int i = 0; i < 3000 && !written; ++i) {
      for (const auto& e : fs::directory_iterator(tmp)) {
        if (e.path().filename().string().rfind("kvbill-plan-", 0) == 0 &&
            fs::exists(e.path() / "window.jsonl") && fs::file_size(e.path() / "window.jsonl") > 0) {
          written = true;
        }
      }
      if (!written) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(written) << "plan never wrote its window trace in " << tmp;
    ::kill(pid, sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "plan finished before the signal (status " << status << ")";
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(fs::is_empty(tmp)) << fs::begin(fs::directory_iterator(tmp))->path();
    fs::remove_all(tmp);
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
