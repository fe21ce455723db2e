// End-to-end runs of compare, sweep, merge and check.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/cli_test_util.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

// `kvbill merge` of shards 0/2 and 1/2 of DIR/SCENARIO's sweep (JSON).
std::string MergedTwoShards(const std::string& dir, const std::string& scenario) {
  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const std::string out = dir + "/shard" + std::to_string(i) + ".json";
    const auto r = RunKvbill("sweep --scenario " + dir + "/" + scenario + " --shard " +
                             std::to_string(i) + "/2 --format json -o " + out);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    shards += " " + out;
  }
  return RunKvbill("merge" + shards).out;
}

TEST(SweepCliTest, RunsTheCartesianProductInOrder) {
  const auto r = RunKvbill("sweep --scenario tests/data/scenarios/small_sweep.json --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // 3 formats x 2 seeds = 6 points; the first axis varies slowest.
  EXPECT_EQ(j["total_points"], 6);
  ASSERT_EQ(j["points"].size(), 6u);
  EXPECT_EQ(j["points"][0]["values"]["/kv_format"], "bf16");
  EXPECT_EQ(j["points"][1]["values"]["/seed"], 2);
  EXPECT_EQ(j["points"][2]["values"]["/kv_format"], "fp8");
  EXPECT_EQ(j["points"][5]["values"]["/kv_format"], "int4");
  // The same seed with a smaller KV format reads fewer KV bytes per task.
  EXPECT_LT(j["points"][2]["summary"]["kv_read_bytes_per_task.mean"].get<double>(),
            j["points"][0]["summary"]["kv_read_bytes_per_task.mean"].get<double>());
}

// A point whose pool serves its short requests but holds less than one
// request of max_model_len (Qwen3-8B's 40,960; a pool of 20,000 tokens) is
// a deployment vLLM does not start, as kvbill check fails it: not_runnable,
// with check's reason. 50,000 tokens hold one: that point runs.
TEST(SweepCliTest, APointVllmWouldNotStartIsANotRunnableRow) {
  const std::string scenario = ::testing::TempDir() + "/sweep_short_pool.json";
  std::ofstream(scenario) << R"({"model": "qwen3-8b",
      "trace": {"generator": "chat", "tasks": 1},
      "sweep": {"/prefix_cache/capacity_tokens": [20000, 50000]}})";
  const auto r = RunKvbill("sweep --jobs 1 --scenario " + scenario + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["points"].size(), 2u);
  ASSERT_TRUE(doc["points"][0].contains("not_runnable")) << doc["points"][0].dump();
  EXPECT_NE(doc["points"][0]["not_runnable"].get<std::string>().find(
                "holds 20,000 tokens of a sequence, less than one request of max_model_len "
                "40,960 needs: vLLM refuses to start such a deployment"),
            std::string::npos)
      << doc["points"][0].dump();
  EXPECT_FALSE(doc["points"][1].contains("not_runnable")) << doc["points"][1].dump();
}

// A point whose deployment cannot serve the workload is a row that says so:
// a 2,000-token pool cannot hold a generated coding agent's first prompt
// (thousands of tokens), so point 1 has no figures and the engine's reason
// in `not_runnable` (CSV: empty cells, not_runnable in the warnings column);
// point 0 runs. Exit 0.
TEST(SweepCliTest, APointThePoolCannotServeIsANotRunnableRow) {
  const std::string dir = ::testing::TempDir();
  const std::string scenario = dir + "/sweep_small_pool.json";
  std::ofstream(scenario) << R"({"model": "qwen3-8b",
      "trace": {"generator": "coding-agent", "tasks": 1},
      "sweep": {"/prefix_cache/capacity_tokens": [100000, 2000]}})";
  const auto r = RunKvbill("sweep --jobs 1 --scenario " + scenario + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["points"].size(), 2u);
  EXPECT_FALSE(doc["points"][0].contains("not_runnable"));
  EXPECT_GT(doc["points"][0]["summary"]["tasks"].get<int>(), 0);
  const auto& refused = doc["points"][1];
  ASSERT_TRUE(refused.contains("not_runnable")) << refused.dump();
  EXPECT_NE(refused["not_runnable"].get<std::string>().find("more than a replica's KV pool holds"),
            std::string::npos)
      << refused.dump();
  EXPECT_TRUE(refused["summary"]["tasks"].is_null());
  const auto csv = RunKvbill("sweep --jobs 1 --scenario " + scenario);
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  const std::string last = csv.out.substr(csv.out.rfind('\n', csv.out.size() - 2) + 1);
  EXPECT_EQ(last.substr(last.rfind(',') + 1), "not_runnable\n") << csv.out;
  // The reason, which the CSV row has no column for, goes to stderr.
  EXPECT_EQ(csv.err.rfind("kvbill sweep: point 1 not runnable: ", 0), 0u) << csv.err;
  EXPECT_NE(csv.err.find("more than a replica's KV pool holds"), std::string::npos) << csv.err;
}

// A point whose run fails for another reason stops the sweep, exit 2 and no
// output file, and names its axes' values: point 1's trace file is missing.
TEST(SweepCliTest, AFailingPointNamesItsValues) {
  const std::string dir = ::testing::TempDir() + "/sweep_fail_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.jsonl") << "{\"kvbill_trace\":1}\n"
                                     "{\"id\":\"a\",\"turns\":[{\"spans\":[{\"kind\":\"user\","
                                     "\"tokens\":1000}],\"out\":10}]}\n";
  std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b", "trace": {"file": "t.jsonl"},
      "sweep": {"/trace/file": ["t.jsonl", "missing.jsonl"]}})";
  const std::string out = dir + "/out.csv";
  const auto r = RunKvbill("sweep --jobs 1 --scenario " + dir + "/s.json -o " + out);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("sweep point 1 (/trace/file = \"missing.jsonl\"): "), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A sweep over expert parallelism on one GPU a replica: expert_parallel 2
// needs 2 GPUs, a combination no engine runs, so its point is a
// not_runnable row. A value wrong in itself (an unknown KV format) stops the
// sweep and names the point's values.
TEST(SweepCliTest, ImpossibleParallelismIsARowAndABadValueNamesItsPoint) {
  const std::string dir = ::testing::TempDir();
  const std::string ep = dir + "/sweep_ep.json";
  std::ofstream(ep) << R"({"model": "gpt-oss-20b", "deployment": {"gpu": "h100-sxm"},
      "trace": {"generator": "chat", "tasks": 1},
      "sweep": {"/deployment/expert_parallel": [1, 2]}})";
  const auto r = RunKvbill("sweep --jobs 1 --scenario " + ep + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["points"].size(), 2u);
  EXPECT_FALSE(doc["points"][0].contains("not_runnable"));
  EXPECT_NE(doc["points"][1]["not_runnable"].get<std::string>().find("expert_parallel"),
            std::string::npos)
      << doc["points"][1].dump();
  const std::string bad = dir + "/sweep_bad_format.json";
  std::ofstream(bad) << R"({"model": "qwen3-8b", "trace": {"generator": "chat", "tasks": 1},
      "sweep": {"/kv_format": ["bf16", "fp7"]}})";
  const auto b = RunKvbill("sweep --jobs 1 --scenario " + bad);
  EXPECT_EQ(b.exit_status, 2);
  EXPECT_NE(b.err.find("sweep point 1 (/kv_format = \"fp7\"): "), std::string::npos) << b.err;
}

// A shard edited by hand (a key kvbill does not write, a fractional task
// count) is refused naming the pointer: merge printed it as it was.
TEST(SweepCliTest, MergeRefusesAShardKvbillDidNotWrite) {
  const std::string dir = ::testing::TempDir() + "/merge_edited_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string scenario = "tests/data/scenarios/small_sweep.json";
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(RunKvbill("sweep --jobs 1 --scenario " + scenario + " --shard " + std::to_string(i) +
                        "/2 --format json -o " + dir + "/s" + std::to_string(i) + ".json")
                  .exit_status,
              0);
  }
  std::ifstream in(dir + "/s1.json");
  const auto shard = nlohmann::ordered_json::parse(in);
  for (const auto& [edit, said] : std::vector<std::pair<std::string, std::string>>{
           {"extra", "#/extra: unknown key (not one kvbill sweep writes)"},
           {"tasks", "#/points/0/summary/tasks: must be a whole number, got 2.5"},
           {"column", "#/points/0/summary/cost: unknown column"}}) {
    auto doc = shard;
    if (edit == "extra") doc["extra"] = 1;
    if (edit == "tasks") doc["points"][0]["summary"]["tasks"] = 2.5;
    if (edit == "column") doc["points"][0]["summary"]["cost"] = 1;
    const std::string path = dir + "/edited_" + edit + ".json";
    std::ofstream(path) << doc.dump();
    const auto r = RunKvbill("merge " + dir + "/s0.json " + path);
    EXPECT_EQ(r.exit_status, 2) << edit;
    EXPECT_EQ(r.err, "kvbill merge: " + path + said + "\n") << edit;
    EXPECT_EQ(r.out, "") << edit;
  }
  // A shard written in sweep's default format, CSV: merge says how to write
  // one it reads, not where the JSON parser stopped.
  const std::string csv = dir + "/s0.csv";
  ASSERT_EQ(
      RunKvbill("sweep --jobs 1 --scenario " + scenario + " --shard 0/2 -o " + csv).exit_status, 0);
  const auto r = RunKvbill("merge " + csv + " " + dir + "/s1.json");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill merge: " + csv +
                       ": not a JSON document (a shard written as CSV or a table?): merge joins "
                       "shards written with --format json, e.g. kvbill sweep --scenario S "
                       "--shard 0/2 --format json -o shard0.json\n");
  std::filesystem::remove_all(dir);
}

TEST(SweepCliTest, ShardsMergeIntoExactlyTheSingleRun) {
  const std::string dir = ::testing::TempDir();
  const std::string scenario = "tests/data/scenarios/small_sweep.json";
  for (const char* format : {"json", "csv"}) {
    SCOPED_TRACE(format);
    const auto single =
        RunKvbill(std::string("sweep --jobs 2 --scenario ") + scenario + " --format " + format);
    ASSERT_EQ(single.exit_status, 0) << single.err;
    std::string shards;
    for (int i = 0; i < 4; ++i) {
      const std::string out = dir + "/shard" + std::to_string(i) + ".json";
      const auto r = RunKvbill("sweep --jobs 1 --scenario " + scenario + " --shard " +
                               std::to_string(i) + "/4 --format json -o " + out);
      ASSERT_EQ(r.exit_status, 0) << r.err;
      shards += " " + out;
    }
    const auto merged = RunKvbill(std::string("merge") + shards + " --format " + format);
    ASSERT_EQ(merged.exit_status, 0) << merged.err;
    EXPECT_EQ(merged.out, single.out);
  }
  // A missing shard is an error, not a silently shorter table.
  const auto partial = RunKvbill("merge " + dir + "/shard0.json " + dir + "/shard1.json");
  EXPECT_EQ(partial.exit_status, 2);
  EXPECT_NE(partial.err.find("is in no shard"), std::string::npos) << partial.err;
  // A shard re-run after the scenario changed (the same name and axes, the
  // agents' trace generated with another task count) does not merge: its
  // fingerprint covers the scenario file.
  const std::string edited = dir + "/small_sweep_edited.json";
  std::ofstream(edited) << R"({"name": "small-sweep", "model": "qwen3-8b",
      "trace": {"generator": "coding-agent", "tasks": 3},
      "budgets": {"cost_per_task_usd.mean": {"max": 1.0}, "hit_rate": {"min": 0.5}},
      "sweep": {"/kv_format": ["bf16", "fp8", "int4"], "/seed": [1, 2]}})";
  ASSERT_EQ(RunKvbill("sweep --jobs 1 --scenario " + edited + " --shard 1/4 --format json -o " +
                      dir + "/shard1.json")
                .exit_status,
            0);
  const auto mixed = RunKvbill("merge" + std::string(" ") + dir + "/shard0.json " + dir +
                               "/shard1.json " + dir + "/shard2.json " + dir + "/shard3.json");
  EXPECT_EQ(mixed.exit_status, 2);
  EXPECT_NE(mixed.err.find("from a different sweep than"), std::string::npos) << mixed.err;
}

// The fingerprint covers every file a point reads, not only the scenario
// and its base trace: a trace file that is only an axis value, and a model
// config, edited between two shards' runs, make merge refuse the shards
// (it joined them, rows of 4 tasks beside rows of 3 and a model's KV
// halved in one shard only).
TEST(SweepCliTest, ShardsOverAnEditedAxisTraceOrModelFileDoNotMerge) {
  namespace fs = std::filesystem;
  const std::string dir = ::testing::TempDir() + "/sweep_files_" + std::to_string(::getpid());
  fs::create_directories(dir);
  fs::copy_file("tests/data/traces/mooncake_small.jsonl", dir + "/a.jsonl",
                fs::copy_options::overwrite_existing);
  fs::copy_file("tests/data/traces/mooncake_small.jsonl", dir + "/b.jsonl",
                fs::copy_options::overwrite_existing);
  fs::copy_file("tests/data/configs/qwen3-8b.json", dir + "/model.json",
                fs::copy_options::overwrite_existing);
  std::ofstream(dir + "/s.json") << R"({"model": "model.json", "trace": {"file": "a.jsonl"},
      "sweep": {"/trace/file": ["a.jsonl", "b.jsonl"], "/kv_format": ["bf16", "fp8"]}})";
  auto shard = [&](int i) {
    const std::string out = dir + "/p" + std::to_string(i) + ".json";
    const auto r = RunKvbill("sweep --jobs 1 --scenario " + dir + "/s.json --shard " +
                             std::to_string(i) + "/2 --format json -o " + out);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    return out;
  };
  const std::string p0 = shard(0), p1 = shard(1);
  ASSERT_EQ(RunKvbill("merge " + p0 + " " + p1).exit_status, 0);
  // b.jsonl, named only by the axis, loses a request before shard 1 re-runs.
  {
    std::ifstream in(dir + "/b.jsonl");
    std::string line, kept;
    for (int n = 0; n < 3 && std::getline(in, line); ++n) kept += line + "\n";
    in.close();
    std::ofstream(dir + "/b.jsonl") << kept;
  }
  shard(1);
  const auto trace_edit = RunKvbill("merge " + p0 + " " + p1);
  EXPECT_EQ(trace_edit.exit_status, 2);
  EXPECT_NE(trace_edit.err.find("from a different sweep than"), std::string::npos)
      << trace_edit.err;
  // Both shards again from the same files merge; then the model config's KV
  // heads change before shard 1 re-runs.
  shard(0);
  ASSERT_EQ(RunKvbill("merge " + p0 + " " + p1).exit_status, 0);
  {
    std::ifstream in(dir + "/model.json");
    auto config = nlohmann::json::parse(in);
    in.close();
    config["num_key_value_heads"] = 4;
    std::ofstream(dir + "/model.json") << config.dump(2);
  }
  shard(1);
  EXPECT_EQ(RunKvbill("merge " + p0 + " " + p1).exit_status, 2);
}

TEST(SweepCliTest, OneJobAndTwoJobsPrintTheSameBytes) {
  const std::string s = "tests/data/scenarios/small_sweep.json";
  EXPECT_EQ(RunKvbill("sweep --jobs 1 --scenario " + s).out,
            RunKvbill("sweep --jobs 2 --scenario " + s).out);
}

// A point whose run warns says so in its row. Qwen3-8B's config allows
// 40,960 tokens (max_position_embeddings, no rope scaling): task "long"
// asks 50,000 and is refused (context_limit) at every point; task "short"
// (1,000) runs. In JSON the point lists {code, message}; in CSV the last
// column holds the codes; shards merge into the same bytes.
TEST(SweepCliTest, EachRowCarriesItsRunsWarnings) {
  const std::string dir = ::testing::TempDir() + "/sweep_warn_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/t.jsonl")
      << "{\"kvbill_trace\":1}\n"
         "{\"id\":\"short\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":1000}],"
         "\"out\":10}]}\n"
         "{\"id\":\"long\",\"turns\":[{\"spans\":[{\"kind\":\"user\",\"tokens\":50000}],"
         "\"out\":10}]}\n";
  std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b", "trace": {"file": "t.jsonl"},
      "sweep": {"/kv_format": ["bf16", "fp8"]}})";
  const auto j = RunKvbill("sweep --scenario " + dir + "/s.json --format json");
  ASSERT_EQ(j.exit_status, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["points"].size(), 2u);
  for (const auto& p : doc["points"]) {
    ASSERT_TRUE(p["warnings"].is_array()) << p.dump();
    std::set<std::string> codes;
    for (const auto& w : p["warnings"]) {
      codes.insert(w["code"].get<std::string>());
      EXPECT_FALSE(w["message"].get<std::string>().empty());
    }
    EXPECT_EQ(codes.count("context_limit"), 1u) << p.dump();
  }
  const auto csv = RunKvbill("sweep --scenario " + dir + "/s.json");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  EXPECT_EQ(header.substr(header.rfind(',') + 1), "warnings");
  std::istringstream lines(csv.out);
  std::string line;
  std::getline(lines, line);
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    EXPECT_NE(line.substr(line.rfind(',') + 1).find("context_limit"), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 2);
  EXPECT_EQ(MergedTwoShards(dir, "s.json"), csv.out);
}

// A sweep over KV formats and GPUs crosses nvfp4 KV with an H100, which no
// engine runs (NVFP4 KV is Blackwell's: the format matrix): that point is a
// row marked not_runnable with the rule's reason and no figures, the others
// run (nvfp4 on the B200 too). A value that is wrong in itself ("fp9") still
// stops the sweep, exit 2. Shards merge into the same bytes.
TEST(SweepCliTest, APointNoEngineRunsIsARowMarkedNotRunnable) {
  const std::string dir = ::testing::TempDir() + "/sweep_nr_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/s.json") << R"({"model": "qwen3-8b",
      "trace": {"generator": "chat", "tasks": 2},
      "sweep": {"/kv_format": ["fp8", "nvfp4"], "/deployment/gpu": ["h100-sxm", "b200"]}})";
  const auto j = RunKvbill("sweep --scenario " + dir + "/s.json --format json");
  ASSERT_EQ(j.exit_status, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["points"].size(), 4u);
  for (const auto& p : doc["points"]) {
    const bool hopper_nvfp4 =
        p["values"]["/deployment/gpu"] == "h100-sxm" && p["values"]["/kv_format"] == "nvfp4";
    EXPECT_EQ(p.contains("not_runnable"), hopper_nvfp4) << p.dump();
    if (hopper_nvfp4) {
      EXPECT_NE(p["not_runnable"].get<std::string>().find(
                    "#/kv_format: nvfp4 KV cache on h100-sxm (NVIDIA Hopper): no engine runs it"),
                std::string::npos)
          << p.dump();
      EXPECT_TRUE(p["summary"]["cost_usd"].is_null());
    } else {
      EXPECT_EQ(p["summary"]["tasks"], 2) << p.dump();
    }
  }
  const auto csv = RunKvbill("sweep --scenario " + dir + "/s.json");
  ASSERT_EQ(csv.exit_status, 0) << csv.err;
  EXPECT_NE(csv.out.find("h100-sxm,nvfp4,,,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",not_runnable\n"), std::string::npos) << csv.out;
  EXPECT_EQ(MergedTwoShards(dir, "s.json"), csv.out);
  std::ofstream(dir + "/typo.json") << R"({"model": "qwen3-8b",
      "trace": {"generator": "chat", "tasks": 2}, "sweep": {"/kv_format": ["fp8", "fp9"]}})";
  const auto typo = RunKvbill("sweep --scenario " + dir + "/typo.json");
  EXPECT_EQ(typo.exit_status, 2);
  EXPECT_TRUE(typo.out.empty());
}

TEST(SweepCliTest, BadShardIsExitTwo) {
  const auto r = RunKvbill("sweep --scenario tests/data/scenarios/small_sweep.json --shard 4/4");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill sweep: --shard: expected i/n with 0 <= i < n, got \"4/4\"\n");
}

// docs/ci.md's CI example: the bundled coding-agent scenario passes its
// own budgets, the warning counts among them.
TEST(CheckCliTest, CiExampleScenarioPassesItsOwnBudgets) {
  const auto r = RunKvbill("check --scenario scenarios/coding-agent.json");
  EXPECT_EQ(r.exit_status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("warnings.context_limit"), std::string::npos) << r.out;
  // Qwen3-8B as shipped (40,960 tokens) refuses the agents' longest
  // requests: the warning budget breaks.
  const std::string path = ::testing::TempDir() + "/warning_budget.json";
  std::ofstream(path) << R"({"model": "qwen3-8b", "trace": {"generator": "coding-agent",
      "tasks": 4}, "budgets": {"warnings.context_limit": {"max": 0}}})";
  const auto broken = RunKvbill("check --scenario " + path);
  EXPECT_EQ(broken.exit_status, 1) << broken.out << broken.err;
  EXPECT_NE(broken.out.find("BROKEN"), std::string::npos) << broken.out;
  std::filesystem::remove(path);
}

// "budgets": {} is there but holds nothing: said as such, exit 2.
TEST(CheckCliTest, AnEmptyBudgetsObjectIsNothingToCheck) {
  const std::string path = ::testing::TempDir() + "/empty_budgets.json";
  std::ofstream(path) << R"({"trace": {"generator": "chat", "tasks": 2}, "budgets": {}})";
  const auto r = RunKvbill("check --scenario " + path);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill check: " + path + "#/budgets: missing or empty (nothing to check)\n");
}

TEST(CheckCliTest, ExitsOneWhenABudgetBreaksAndZeroWhenAllHold) {
  const auto ok = RunKvbill("check --scenario tests/data/scenarios/small_sweep.json");
  EXPECT_EQ(ok.exit_status, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("2 of 2 budgets hold"), std::string::npos) << ok.out;
  const auto broken = RunKvbill("check --scenario tests/data/scenarios/tight_budget.json");
  EXPECT_EQ(broken.exit_status, 1) << broken.err;
  EXPECT_NE(broken.out.find("BROKEN"), std::string::npos) << broken.out;
  EXPECT_NE(broken.out.find("1 of 2 budgets hold"), std::string::npos) << broken.out;
  // The limit as written (it read 0.0000), and by how much it broke.
  EXPECT_NE(broken.out.find("cost_per_task_usd.mean  <= 1e-06  "), std::string::npos) << broken.out;
  EXPECT_NE(broken.out.find("BROKEN: over by "), std::string::npos) << broken.out;
  // A minimum broken says by how much short; a hit rate cannot pass 1, and
  // 0.9999999 is written out whole rather than rounded to "1.0000" beside
  // a measured value that then read the same.
  const std::string path = ::testing::TempDir() + "/short_budget.json";
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/tests/data/scenarios/tight_budget.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("0.5"), 3, "0.9999999");
  std::ofstream(path) << text;
  const auto shortfall = RunKvbill("check --scenario " + path);
  EXPECT_EQ(shortfall.exit_status, 1);
  EXPECT_NE(shortfall.out.find("hit_rate                >= 0.9999999  "), std::string::npos)
      << shortfall.out;
  EXPECT_NE(shortfall.out.find("BROKEN: short by "), std::string::npos) << shortfall.out;
  std::filesystem::remove(path);
  // --format json, for a CI job to read which budget broke and by how much.
  const auto json =
      RunKvbill("check --scenario tests/data/scenarios/tight_budget.json --format json");
  EXPECT_EQ(json.exit_status, 1);
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["held"], 1);
  EXPECT_EQ(j["passed"], false);  // one of two broke: exit 1
  {
    // The same run under a budget no coding task reaches ($1,000 a task):
    // every budget holds, exit 0, passed true.
    const std::string loose = ::testing::TempDir() + "/check_loose.json";
    std::ofstream(loose) << R"({"name": "loose", "model": "qwen3-8b",
        "trace": {"generator": "coding-agent", "tasks": 2},
        "budgets": {"cost_per_task_usd.mean": {"max": 1000}}})";
    const auto held = RunKvbill("check --format json --scenario " + loose);
    EXPECT_EQ(held.exit_status, 0) << held.err;
    const auto h = nlohmann::json::parse(held.out);
    EXPECT_EQ(h["held"], 1);
    EXPECT_EQ(h["passed"], true);
    std::filesystem::remove(loose);
  }
  ASSERT_EQ(j["budgets"].size(), 2u);
  EXPECT_EQ(j["budgets"][0]["metric"], "cost_per_task_usd.mean");
  EXPECT_EQ(j["budgets"][0]["ok"], false);
  EXPECT_DOUBLE_EQ(j["budgets"][0]["max"].get<double>(), 1e-6);
  EXPECT_DOUBLE_EQ(j["budgets"][0]["broken_by"].get<double>(),
                   j["budgets"][0]["actual"].get<double>() - 1e-6);
  EXPECT_EQ(j["budgets"][1]["ok"], true);
  EXPECT_FALSE(j["budgets"][1].contains("broken_by"));
  EXPECT_EQ(
      RunKvbill("check --scenario tests/data/scenarios/tight_budget.json --format xml").exit_status,
      2);
}

// A run that served nothing measured nothing: Qwen3-32B on SGLang on one
// H100 holds 16,256 tokens (docs/engine.md), below the coding agents'
// first prompts, so every request is refused. Its cost and TTFT of 0 once
// passed; now every budget but warnings.* breaks, and the run's
// context_limit warning follows the table.
TEST(CheckCliTest, ARunThatServedNothingBreaksItsBudgets) {
  const std::string path = ::testing::TempDir() + "/served_nothing.json";
  std::ofstream(path) << R"({"model": "qwen3-32b", "deployment": {"engine": "sglang"},
      "trace": {"generator": "coding-agent", "tasks": 2},
      "budgets": {"cost_per_task_usd.mean": {"max": 0.1}, "ttft_s.p90": {"max": 2},
                  "warnings.overloaded": {"max": 0}}})";
  const auto r = RunKvbill("check --scenario " + path);
  EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("1 of 3 budgets hold"), std::string::npos) << r.out;
  std::size_t broken = 0;
  for (std::size_t at = r.out.find("BROKEN (no request was served)"); at != std::string::npos;
       at = r.out.find("BROKEN (no request was served)", at + 1)) {
    ++broken;
  }
  EXPECT_EQ(broken, 2u) << r.out;
  EXPECT_NE(r.out.find("warning [context_limit]"), std::string::npos) << r.out;
  std::filesystem::remove(path);
}

// A deployment that cannot hold a request of the trace is a check that
// fails (exit 1, "does not fit"), every budget broken, not bad input (exit
// 2): Qwen3-8B at memory_fraction 0.3 (a KV pool of some 44,560 tokens)
// against coding agents' longer prompts.
TEST(CheckCliTest, ADeploymentThatCannotServeTheTraceFailsTheCheck) {
  const std::string path = ::testing::TempDir() + "/cannot_serve.json";
  std::ofstream(path) << R"({"model": {"name": "qwen3-8b", "set": {"rope_scaling":
      {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}},
      "deployment": {"memory_fraction": 0.3}, "trace": {"generator": "coding-agent", "tasks": 4},
      "budgets": {"cost_per_task_usd.mean": {"max": 1}}})";
  const auto r = RunKvbill("check --scenario " + path);
  EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("0 of 1 budgets hold: the deployment cannot serve the trace"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("more than a replica's KV pool holds"), std::string::npos) << r.out;
  const auto j = RunKvbill("check --format json --scenario " + path);
  EXPECT_EQ(j.exit_status, 1);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["held"], 0);
  EXPECT_EQ(doc["passed"], false);
  EXPECT_EQ(doc["budgets"][0]["ok"], false);
  EXPECT_TRUE(doc["budgets"][0]["actual"].is_null());
  // The same shape as a run's answer (docs/ci.md): the limit as written and
  // a warnings list, empty since nothing ran.
  EXPECT_EQ(doc["budgets"][0]["max"], 1);
  EXPECT_TRUE(doc["warnings"].is_array() && doc["warnings"].empty()) << j.out;
  std::filesystem::remove(path);
}

// A vLLM deployment whose pool cannot hold one max_model_len request does
// not start, so it serves nothing, however small the trace: Qwen3-32B on
// one H100 (a pool of 32,144 tokens of a sequence against its 40,960;
// kv_fit_cli_test.cc works the numbers) fails the check as plan calls it
// no_fit. With engine.max_model_len 32,000 it starts and the budget holds.
TEST(CheckCliTest, APoolVllmWillNotStartOnFailsTheCheck) {
  const std::string path = ::testing::TempDir() + "/will_not_start.json";
  const auto write = [&](const std::string& engine) {
    std::ofstream(path) << R"({"model": "qwen3-32b", "deployment": {"gpu": "h100-sxm"},)" << engine
                        << R"("trace": {"generator": "chat", "tasks": 2},
        "budgets": {"cost_per_task_usd.p90": {"max": 1}}})";
  };
  write("");
  const auto r = RunKvbill("check --scenario " + path);
  EXPECT_EQ(r.exit_status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("0 of 1 budgets hold: the deployment cannot serve the trace"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("a replica's KV pool holds 32,144 tokens of a sequence, less than one "
                       "request of max_model_len 40,960 needs: vLLM refuses to start"),
            std::string::npos)
      << r.out;
  write(R"("engine": {"max_model_len": 32000},)");
  EXPECT_EQ(RunKvbill("check --scenario " + path).exit_status, 0);
  // With a sweep, the note that its points are not checked stays (it was
  // dropped when the deployment could not serve).
  write(R"("sweep": {"/seed": [1, 2]},)");
  const auto swept = RunKvbill("check --scenario " + path);
  EXPECT_EQ(swept.exit_status, 1);
  EXPECT_NE(swept.out.find("note: the scenario's sweep (2 points) is not checked"),
            std::string::npos)
      << swept.out;
  const auto json = RunKvbill("check --format json --scenario " + path);
  EXPECT_TRUE(nlohmann::json::parse(json.out).contains("sweep_not_checked")) << json.out;
  std::filesystem::remove(path);
}

// A scenario with a sweep is checked as written, its 2 x 3 = 6 points
// (the bundled API example: two cache lifetimes, three models) not: the
// output says so, in the table and in JSON.
TEST(CheckCliTest, ASweepsPointsAreSaidNotToBeChecked) {
  const auto r = RunKvbill("check --scenario scenarios/examples/api-claude-code.json");
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("note: the scenario's sweep (6 points) is not checked"), std::string::npos)
      << r.out;
  const auto j =
      RunKvbill("check --format json --scenario scenarios/examples/api-claude-code.json");
  EXPECT_EQ(nlohmann::json::parse(j.out)["sweep_not_checked"].get<std::string>().rfind(
                "the scenario's sweep (6 points) is not checked", 0),
            0u);
}

// "-" is no scenario file: every command that reads one says so (it said
// "-: file not found").
TEST(CheckCliTest, AScenarioIsNotReadFromStandardInput) {
  for (const char* command : {"check", "sweep", "simulate", "compare"}) {
    const auto r = RunKvbill(std::string(command) + " --scenario -");
    EXPECT_EQ(r.exit_status, 2) << command;
    EXPECT_NE(r.err.find("-: standard input, which a scenario is not read from"), std::string::npos)
        << command << ": " << r.err;
  }
}

TEST(CheckCliTest, UnknownMetricNamesThePointer) {
  const std::string path = ::testing::TempDir() + "/bad_budget.json";
  std::ofstream(path) << R"({"budgets": {"cost_per_tusk": {"max": 1}}})";
  const auto r = RunKvbill("check --scenario " + path);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err.rfind("kvbill check: " + path + "#/budgets/cost_per_tusk: unknown metric", 0), 0u)
      << r.err;
}

TEST(CompareCliTest, RanksTheLeversAgainstTheBaseline) {
  const auto r =
      RunKvbill("compare --scenario tests/data/scenarios/small_sweep.json --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["baseline"]["lever"], "baseline");
  double previous = 1e300;
  bool saw_fp8 = false, saw_cache = false;
  for (const auto& v : j["variants"]) {
    if (!v.contains("cost_per_task_usd") || v.contains("not_comparable")) continue;
    // Ranked by the lever's value: dollars per task saved, largest first.
    EXPECT_LE(v["saves_usd_per_task"].get<double>(), previous);
    previous = v["saves_usd_per_task"].get<double>();
    if (v["lever"] == "fp8 KV cache") {
      saw_fp8 = true;
      EXPECT_NEAR(v["kv_saving_fraction"].get<double>(), 0.5, 1e-9);  // half the bytes per token
      EXPECT_GT(v["saving_usd_per_task"].get<double>(), 0);
    }
    if (v["lever"] == "prefix caching off") {
      saw_cache = true;
      EXPECT_EQ(v["hit_rate"], 0);
      EXPECT_LT(v["saving_usd_per_task"].get<double>(), 0);  // caching was saving money
    }
  }
  EXPECT_TRUE(saw_fp8);
  EXPECT_TRUE(saw_cache);
  // NVFP4 KV on the scenario's H100: offered, not run, and said why.
  nlohmann::json last;
  for (const auto& v : j["variants"]) {
    if (v["lever"] == "nvfp4 KV cache") last = v;
  }
  ASSERT_FALSE(last.is_null());
  EXPECT_FALSE(last.contains("cost_per_task_usd"));
  EXPECT_EQ(last["not_applicable"].get<std::string>().rfind(
                "nvfp4 KV cache on h100-sxm (NVIDIA Hopper): no engine runs it: ", 0),
            0u);
  const auto text = RunKvbill("compare --scenario tests/data/scenarios/small_sweep.json");
  ASSERT_EQ(text.exit_status, 0) << text.err;
  EXPECT_NE(text.out.find("nvfp4 KV cache"), std::string::npos);
  EXPECT_NE(text.out.find("not applicable"), std::string::npos);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// The memory limit is what simulate's pool leaves: vLLM's reserve for
// Llama-3.1-8B on an H100 is 33.655264748504614 x 8,192 x 4,096 / 2^30 +
// 1.4511113 = 2.5028383 GiB (2,687,402,214 B); 76,922,864,271 B of the 90%
// share less it and 16,060,522,496 B of weights leaves 58,174,939,561 B:
// 443,839 tokens of 131,072 B at batch one, 443,824 in whole 16-token
// blocks; at batch 32, 58,174,939,561 / (32 x 131,072) = 13,869.8 tokens,
// 13,856 in whole blocks. Memory alone (--reserve-gib 0) gives 14,496.
TEST(BreakevenCliTest, TheMemoryLimitTakesTheEnginesReserveOff) {
  const auto r =
      testing::RunKvbill("breakeven --model llama-3.1-8b --gpu h100-sxm --price 20 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["reserve_gib"].get<double>(), 2.5028383, 1e-6);
  EXPECT_EQ(j["kv_formats"][0]["batch_1"]["memory_limit_context"], 443824);
  EXPECT_EQ(j["kv_formats"][0]["batch_n"]["memory_limit_context"], 13856);
  const auto alone = testing::RunKvbill(
      "breakeven --model llama-3.1-8b --gpu h100-sxm --price 20 --format json --reserve-gib 0");
  ASSERT_EQ(alone.exit_status, 0) << alone.err;
  EXPECT_EQ(nlohmann::json::parse(alone.out)["kv_formats"][0]["batch_n"]["memory_limit_context"],
            14496);
  EXPECT_EQ(testing::RunKvbill("breakeven --model llama-3.1-8b --gpu h100-sxm --reserve-gib -1")
                .exit_status,
            2);
}

// A config read from a file is named by its file: Llama-3.1-405B's config
// saved as Llama-3.1-8B.json would sell at the 8B's median offer. The
// catalog's model of that name has 8.03B parameters, the file 405.85B (the
// catalog's llama-3.1-405b): no default price. Llama-3.1-8B's own config
// under that name is priced from the offers as the catalog's model is.
TEST(BreakevenCliTest, AFileNamedLikeAnotherModelIsNotPricedAsIt) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "breakeven_named";
  fs::create_directories(dir);
  const fs::path file = dir / "Llama-3.1-8B.json";
  fs::copy_file(fs::path(KVBILL_SOURCE_DIR) / "scenarios/models/llama-3.1-405b.json", file,
                fs::copy_options::overwrite_existing);
  const auto r =
      testing::RunKvbill("breakeven --model " + file.string() + " --gpu h100-sxm --gpus 16");
  EXPECT_EQ(r.exit_status, 2) << r.out;
  EXPECT_NE(
      r.err.find(
          "--price: not given, and the price sheet's offers named like Llama-3.1-8B "
          "(its file's or folder's name) sell llama-3.1-8b, a model of 8.03B parameters, where "),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" has 405.85B: give --price"), std::string::npos) << r.err;
  fs::copy_file(fs::path(KVBILL_SOURCE_DIR) / "scenarios/models/llama-3.1-8b.json", file,
                fs::copy_options::overwrite_existing);
  const auto own =
      testing::RunKvbill("breakeven --model " + file.string() + " --gpu h100-sxm --format json");
  ASSERT_EQ(own.exit_status, 0) << own.err;
  const auto catalog =
      testing::RunKvbill("breakeven --model llama-3.1-8b --gpu h100-sxm --format json");
  ASSERT_EQ(catalog.exit_status, 0) << catalog.err;
  const auto offers = nlohmann::json::parse(own.out)["price_from_offers"];
  ASSERT_TRUE(offers.is_object()) << own.out;
  EXPECT_GT(offers["median_of"].get<int>(), 0);
  EXPECT_EQ(offers, nlohmann::json::parse(catalog.out)["price_from_offers"]);
  fs::remove_all(dir);
}

// Llama-3.1-405B's BF16 weights (810 GB) are ten times one L40S's 48 GB:
// no context fits, so its decode has no price at any context either.
TEST(BreakevenCliTest, AContextThatDoesNotFitHasNoPrice) {
  const auto r =
      testing::RunKvbill("breakeven --model llama-3.1-405b --gpu l40s --price 3 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto row = nlohmann::json::parse(r.out)["kv_formats"][0];
  EXPECT_EQ(row["batch_1"]["fits"], false);
  for (const char* at : {"8k", "32k", "128k"}) {
    EXPECT_TRUE(row["decode_usd_per_mtok_batch_1"][at].is_null()) << at;
  }
  const auto table = testing::RunKvbill("breakeven --model llama-3.1-405b --gpu l40s --price 3");
  const std::size_t bf16 = table.out.find("\nbf16 ");
  ASSERT_NE(bf16, std::string::npos) << table.out;
  const std::string bf16_row = table.out.substr(bf16 + 1, table.out.find('\n', bf16 + 1) - bf16);
  EXPECT_EQ(bf16_row.find('$'), std::string::npos) << bf16_row;
  // Llama-3.1-8B on an H100 fits all three: priced.
  const auto fits =
      testing::RunKvbill("breakeven --model llama-3.1-8b --gpu h100-sxm --price 20 --format json");
  const auto prices =
      nlohmann::json::parse(fits.out)["kv_formats"][0]["decode_usd_per_mtok_batch_1"];
  EXPECT_GT(prices["128k"].get<double>(), prices["8k"].get<double>());
}

// Qwen3-8B's max_model_len is 40,960: at 128k the table reads "past the
// limit" though one sequence would fit an H100 (131,072 x 147,456 B =
// 19.3 GB of KV beside 16.4 GB of BF16 weights), and JSON has no price
// there either; --ignore-model-limit prices it.
TEST(BreakevenCliTest, AContextPastTheModelLimitHasNoPrice) {
  const std::string args = "breakeven --model qwen3-8b --gpu h100-sxm --price 3 --format json";
  const auto r = testing::RunKvbill(args);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto prices = nlohmann::json::parse(r.out)["kv_formats"][0]["decode_usd_per_mtok_batch_1"];
  EXPECT_TRUE(prices["32k"].is_number()) << prices;
  EXPECT_TRUE(prices["128k"].is_null()) << prices;
  const auto ignored = testing::RunKvbill(args + " --ignore-model-limit");
  ASSERT_EQ(ignored.exit_status, 0) << ignored.err;
  EXPECT_TRUE(
      nlohmann::json::parse(ignored.out)["kv_formats"][0]["decode_usd_per_mtok_batch_1"]["128k"]
          .is_number());
}

TEST(BreakevenCliTest, JsonAndBadInput) {
  // Llama-3.1-8B on an H100 at $20/Mtok: 282,936 tokens at batch one
  // (worked out in tests/cost/breakeven_test.cc), past the model's
  // max_model_len of 131,072: capped there unless --ignore-model-limit.
  const auto r =
      testing::RunKvbill("breakeven --model llama-3.1-8b --gpu h100-sxm --price 20 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kv_formats"][0]["kv_format"], "bf16");
  EXPECT_EQ(j["max_model_len"], 131072);
  EXPECT_EQ(j["kv_formats"][0]["batch_1"]["max_profitable_context"], 131072);
  EXPECT_EQ(j["kv_formats"][0]["batch_1"]["limited_by_model"], true);
  EXPECT_EQ(j["kv_formats"][0]["batch_filling_memory"]["batch"],
            3);  // tests/cost/breakeven_test.cc
  const auto what_if = testing::RunKvbill(
      "breakeven --model llama-3.1-8b --gpu h100-sxm --price 20 --format json "
      "--ignore-model-limit");
  ASSERT_EQ(what_if.exit_status, 0) << what_if.err;
  EXPECT_EQ(
      nlohmann::json::parse(what_if.out)["kv_formats"][0]["batch_1"]["max_profitable_context"],
      290952);  // tests/cost/breakeven_test.cc works it
  // At $5 the weights alone cost more ($6.04 per million tokens at batch one).
  const auto low = testing::RunKvbill("breakeven --model llama-3.1-8b --gpu h100-sxm --price 5");
  ASSERT_EQ(low.exit_status, 0) << low.err;
  EXPECT_NE(low.out.find("not profitable at any context"), std::string::npos) << low.out;
  // No --price: the median of the LiteLLM sheet's offers of the model, named.
  const std::string sheet = ::testing::TempDir() + "/offers.json";
  std::ofstream(sheet) << R"({"groq/llama-3.1-8b-instant": {"litellm_provider": "groq",
      "input_cost_per_token": 5e-08, "output_cost_per_token": 8e-08},
    "nebius/meta-llama/Meta-Llama-3.1-8B-Instruct": {"litellm_provider": "nebius",
      "input_cost_per_token": 2e-08, "output_cost_per_token": 6e-08},
    "deepinfra/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo": {"litellm_provider": "deepinfra",
      "input_cost_per_token": 2e-08, "output_cost_per_token": 3e-08}})";
  const auto offers = testing::RunKvbill(
      "breakeven --model llama-3.1-8b --gpu h100-sxm --format json --prices " + sheet);
  ASSERT_EQ(offers.exit_status, 0) << offers.err;
  const auto o = nlohmann::json::parse(offers.out);
  EXPECT_DOUBLE_EQ(o["output_usd_per_mtok"].get<double>(), 0.06);  // median of 0.03, 0.06, 0.08
  EXPECT_EQ(o["price_from_offers"]["median_of"], 3);
  std::set<std::string> named;  // every offer named, in the sheet's order
  for (const auto& offer : o["price_from_offers"]["offers"]) named.insert(offer["id"]);
  EXPECT_EQ(named, (std::set<std::string>{
                       "groq/llama-3.1-8b-instant", "nebius/meta-llama/Meta-Llama-3.1-8B-Instruct",
                       "deepinfra/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo"}));
  // $0.06 per million tokens is far below the weights' $6.04: nothing pays.
  EXPECT_EQ(o["kv_formats"][0]["batch_1"]["not_profitable_at_any_context"], true);
  EXPECT_EQ(o["kv_formats"][0]["batch_1"]["fits"], true);
  // Qwen3-32B's 61 GiB of BF16 weights on one 48 GB L40S leave no room for
  // KV: "does not fit", not "not profitable", whatever the price.
  const auto l40s = testing::RunKvbill(
      "breakeven --model qwen3-32b --gpu l40s --price 500 --format json --prices " + sheet);
  ASSERT_EQ(l40s.exit_status, 0) << l40s.err;
  const auto l = nlohmann::json::parse(l40s.out);
  EXPECT_EQ(l["kv_formats"][0]["batch_1"]["fits"], false);
  EXPECT_EQ(l["kv_formats"][0]["batch_1"]["not_profitable_at_any_context"], false);
  const auto l40s_table =
      testing::RunKvbill("breakeven --model qwen3-32b --gpu l40s --price 500 --prices " + sheet);
  EXPECT_NE(l40s_table.out.find("does not fit"), std::string::npos) << l40s_table.out;
  // An NVFP4 KV cache on an H100 is priced, and warned as run by no engine there.
  const auto nvfp4 = testing::RunKvbill(
      "breakeven --model qwen3-8b --gpu h100-sxm --kv-format nvfp4 --price 1 --format json");
  ASSERT_EQ(nvfp4.exit_status, 0) << nvfp4.err;
  const auto n = nlohmann::json::parse(nvfp4.out);
  ASSERT_EQ(n["warnings"].size(), 2u);
  EXPECT_EQ(n["warnings"][0]["code"], "format_not_run");
  // Every answer is the spec-sheet roofline's, and says so with the
  // efficiencies it assumed (the defaults, 65% and 60%).
  EXPECT_EQ(n["warnings"][1]["code"], "uncalibrated");
  EXPECT_EQ(n["warnings"][1]["message"].get<std::string>().rfind(
                "every cost here is the spec-sheet roofline at 65% of h100-sxm's HBM bandwidth "
                "and 60% of its FLOP/s",
                0),
            0u);
  ASSERT_EQ(o["warnings"].size(), 1u);
  EXPECT_EQ(o["warnings"][0]["code"], "uncalibrated");
  // The bundled sheet's offers of Qwen3-8B (LiteLLM 2026-07): Fireworks AI
  // $0.20 and Novita $0.138 per million output tokens, median
  // (0.20 + 0.138) / 2 = $0.169.
  const auto bundled =
      testing::RunKvbill("breakeven --model qwen3-8b --gpu h100-sxm --format json");
  ASSERT_EQ(bundled.exit_status, 0) << bundled.err;
  const auto b = nlohmann::json::parse(bundled.out);
  EXPECT_DOUBLE_EQ(b["output_usd_per_mtok"].get<double>(), 0.169);
  EXPECT_EQ(b["price_from_offers"]["sheet"], "bundled");
  EXPECT_EQ(b["price_from_offers"]["median_of"], 2);
  const auto table = testing::RunKvbill("breakeven --model qwen3-8b --gpu h100-sxm");
  EXPECT_NE(table.out.find("the median of 2 API offers of qwen3-8b in the bundled price sheet "
                           "(fireworks_ai/accounts/fireworks/models/qwen3-8b"),
            std::string::npos)
      << table.out;
  // Qwen3.5-9B has no offer in the bundled sheet: --price is needed.
  const auto none = testing::RunKvbill("breakeven --model qwen3.5-9b --gpu h100-sxm");
  EXPECT_EQ(none.exit_status, 2);
  EXPECT_EQ(none.err.rfind("kvbill breakeven: --price: not given, and the bundled price sheet "
                           "has no API offer of qwen3.5-9b",
                           0),
            0u)
      << none.err;
  const auto negative = testing::RunKvbill("breakeven --model qwen3-8b --price -1");
  EXPECT_EQ(negative.exit_status, 2);
  EXPECT_EQ(negative.err,
            "kvbill breakeven: --price: must be a positive number of dollars per million tokens, "
            "at most 100,000,000\n");
  // Not a number of dollars either: an infinite price, or 1e300 (it printed
  // a 300-digit dollar figure), past the $100 a token a price sheet may list.
  for (const char* price : {"inf", "1e300", "100000001"}) {
    const auto huge =
        testing::RunKvbill(std::string("breakeven --model qwen3-8b --price ") + price);
    EXPECT_EQ(huge.exit_status, 2) << price;
    EXPECT_EQ(huge.err, negative.err) << price;
  }
  // An efficiency or memory fraction outside [0.01, 1], as a scenario's keys
  // are held to (1e-300 was taken).
  const auto tiny =
      testing::RunKvbill("breakeven --model qwen3-8b --price 5 --compute-efficiency 1e-300");
  EXPECT_EQ(tiny.exit_status, 2);
  EXPECT_EQ(tiny.err, "kvbill breakeven: --compute-efficiency: must be in [0.01, 1], got 1e-300\n");
  // A request length without an input price would be ignored.
  const auto tokens = testing::RunKvbill("breakeven --model qwen3-8b --price 5 --output-tokens 5");
  EXPECT_EQ(tokens.exit_status, 2);
  EXPECT_EQ(tokens.err.rfind("kvbill breakeven: --output-tokens: only with --input-price", 0), 0u)
      << tokens.err;
  // A reserve above the memory share, refused as kvbill fit refuses it: one
  // H100 SXM's 79.6 GiB usable x 0.9 = 71.64 GiB.
  const auto reserve = testing::RunKvbill("breakeven --model qwen3-8b --price 5 --reserve-gib 80");
  EXPECT_EQ(reserve.exit_status, 2);
  EXPECT_EQ(reserve.err,
            "kvbill breakeven: --reserve-gib: 80.00 GiB is not less than the 71.64 GiB that "
            "--memory-fraction 0.90 leaves of h100-sxm's usable memory\n");
  const auto merge = testing::RunKvbill("merge tests/data/scenarios/small_sweep.json");
  EXPECT_EQ(merge.exit_status, 2);
  EXPECT_EQ(merge.err,
            "kvbill merge: tests/data/scenarios/small_sweep.json: not the JSON output of kvbill "
            "sweep\n");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// tests/data/scenarios/api_small.json: tests/data/traces/api_whatif.jsonl at
// Sonnet 4.5 list prices under Anthropic's rules; the per-task dollars are
// worked out by hand in tests/cli/whatif_cli_test.cc:
//   baseline      a $0.05475, b $0.018    mean $0.036375
//   1-hour writes a $0.0498,  b $0.027    mean $0.0384
//   Haiku 4.5     a $0.01825, b $0.005    mean $0.011625
//   caching off   a $0.0585,  b $0.015    mean $0.03675
// The log has no tool results and no prompt past 64k, so the two context
// levers change nothing: not applicable. Values: Haiku saves 0.036375 -
// 0.011625 = $0.02475; caching (on in the baseline) saves 0.03675 -
// 0.036375 = $0.000375; 1-hour writes save 0.036375 - 0.0384 = -$0.002025.
constexpr char kApiScenario[] = "tests/data/scenarios/api_small.json";

TEST(CompareCliTest, ApiScenarioRanksTheApiLeversByDollarsPerTask) {
  const auto r = RunKvbill(std::string("compare --format json --scenario ") + kApiScenario);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pricing"]["model"], "claude-sonnet-4-5");
  EXPECT_DOUBLE_EQ(j["baseline"]["cost_per_task_usd"].get<double>(), 0.036375);
  EXPECT_FALSE(j["baseline"].contains("kv_read_bytes_per_task"));
  const auto& v = j["variants"];
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0]["lever"], "model claude-haiku-4-5 (list prices and cache rules)");
  EXPECT_DOUBLE_EQ(v[0]["cost_per_task_usd"].get<double>(), 0.011625);
  EXPECT_DOUBLE_EQ(v[0]["saving_usd_per_task"].get<double>(), 0.036375 - 0.011625);
  EXPECT_DOUBLE_EQ(v[0]["saves_usd_per_task"].get<double>(), 0.036375 - 0.011625);
  EXPECT_EQ(v[1]["lever"], "caching off");
  EXPECT_EQ(v[1]["value_of"], "caching");
  EXPECT_DOUBLE_EQ(v[1]["cost_per_task_usd"].get<double>(), 0.03675);
  EXPECT_NEAR(v[1]["saves_usd_per_task"].get<double>(), 0.03675 - 0.036375, 1e-15);
  EXPECT_NEAR(v[1]["saves_fraction"].get<double>(), (0.03675 - 0.036375) / 0.03675, 1e-12);
  EXPECT_EQ(v[1]["hit_rate"], 0);
  EXPECT_EQ(v[2]["lever"], "1-hour cache writes");
  EXPECT_DOUBLE_EQ(v[2]["cost_per_task_usd"].get<double>(), 0.0384);
  // a3 reads 6,000 of 22,000 prompt tokens; a2 its 5,000.
  EXPECT_DOUBLE_EQ(v[2]["hit_rate"].get<double>(), 11'000.0 / 22'000.0);
  EXPECT_EQ(v[3]["lever"], "drop tool results older than 3 turns (50-token stub)");
  EXPECT_FALSE(v[3].contains("cost_per_task_usd"));
  EXPECT_EQ(v[3]["not_applicable"],
            "no tool results older than 3 turns to drop (the trace has no tool_result spans "
            "there)");
  EXPECT_EQ(v[4]["not_applicable"], "no prompt passes 65,536 tokens");
  const auto table = RunKvbill(std::string("compare --scenario ") + kApiScenario);
  EXPECT_NE(table.out.find("anthropic cache rules, claude-sonnet-4-5 list prices"),
            std::string::npos)
      << table.out;
}

TEST(CheckCliTest, ApiScenarioBudgetsHoldOrBreakAndEngineMetricsAreErrors) {
  // Mean $0.036375 <= 0.04; hit rate 5,000 / 22,000 = 0.227 >= 0.2.
  const auto ok = RunKvbill(std::string("check --scenario ") + kApiScenario);
  EXPECT_EQ(ok.exit_status, 0) << ok.out << ok.err;
  const std::string dir = ::testing::TempDir();
  const std::string tight = dir + "/api_tight.json";
  std::ofstream(tight) << R"({"trace": {"file": ")"
                       << std::filesystem::absolute("tests/data/traces/api_whatif.jsonl").string()
                       << R"("}, "pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
                            "budgets": {"cost_per_task_usd.mean": {"max": 0.03}}})";
  const auto broken = RunKvbill("check --scenario " + tight);
  EXPECT_EQ(broken.exit_status, 1) << broken.err;
  EXPECT_NE(broken.out.find("BROKEN"), std::string::npos) << broken.out;
  const std::string engine = dir + "/api_ttft.json";
  std::ofstream(engine) << R"({"trace": {"generator": "chat", "tasks": 1},
                            "pricing": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
                            "budgets": {"ttft_s.p90": {"max": 1}}})";
  const auto r = RunKvbill("check --scenario " + engine);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err, "kvbill check: " + engine +
                       "#/budgets/ttft_s.p90: not measured for a scenario with \"pricing\" (API "
                       "mode measures cost_per_task_usd.{mean,p50,p90,p99,max}, hit_rate, "
                       "cost_usd, warnings.context_limit, warnings.pricing_model_unused, "
                       "warnings.policy_no_effect, warnings.placeholder_outputs)\n");
}

TEST(SweepCliTest, ApiScenarioSweepsAndMergesWithTheApiColumns) {
  const auto r = RunKvbill(std::string("sweep --jobs 2 --scenario ") + kApiScenario);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out,
            "index,/pricing/cache/ttl_s,tasks,requests,hit_rate,cost_usd,cost_per_task_usd.mean,"
            "cost_per_task_usd.p50,cost_per_task_usd.p90,cost_per_task_usd.p99,prompt_tokens,"
            "cache_read_tokens,cache_write_tokens,output_tokens,warnings\n"
            // hit rates 5,000 / 22,000 and 11,000 / 22,000; writes 17,000 and 11,000.
            "0,300,2,4,0.22727272727272727,0.07275,0.036375,0.018,0.05475,0.05475,22000,5000,"
            "17000,500,\n"
            "1,3600,2,4,0.5,0.0768,0.0384,0.027,0.0498,0.0498,22000,11000,11000,500,\n");
  const std::string dir = ::testing::TempDir();
  for (int i = 0; i < 2; ++i) {
    const auto s = RunKvbill(std::string("sweep --scenario ") + kApiScenario + " --shard " +
                             std::to_string(i) + "/2 --format json -o " + dir + "/api_shard" +
                             std::to_string(i) + ".json");
    ASSERT_EQ(s.exit_status, 0) << s.err;
  }
  EXPECT_EQ(RunKvbill("merge " + dir + "/api_shard0.json " + dir + "/api_shard1.json").out, r.out);
}

TEST(ReportCliTest, ApiScenarioIsAClearError) {
  const auto r = RunKvbill(std::string("report --scenario ") + kApiScenario + " --out " +
                           ::testing::TempDir() + "/api_report");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("#/pricing: the report draws the engine's charts"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::string WriteScenario(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// A lever is weighed only against a baseline that did the same work: on a
// trace cut short at max_model_len (Qwen3-8B's 40,960 tokens; coding agents
// reach past it), dropping old tool results lets the tasks run further, so
// its cost per task is of more requests and it is not ranked; its requests
// and the baseline's are the numbers its reason quotes.
TEST(CompareCliTest, LeversOnTasksCutShortAreNotComparable) {
  const std::string path = WriteScenario(
      "cut.json",
      R"({"model": "qwen3-8b", "kv_format": "fp8", "trace": {"generator": "coding-agent",
          "tasks": 4}, "seed": 3})");
  const auto r = testing::RunKvbill("compare --scenario " + path + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::int64_t base = j["baseline"]["requests"].get<std::int64_t>();
  bool saw = false;
  for (const auto& v : j["variants"]) {
    if (!v.contains("not_comparable")) continue;
    saw = true;
    EXPECT_FALSE(v.contains("rank"));
    EXPECT_FALSE(v.contains("saves_usd_per_task"));
    // Its saving is of other work: null, as the table's "not comparable".
    EXPECT_TRUE(v["saving_fraction"].is_null()) << v;
    EXPECT_TRUE(v["saving_usd_per_task"].is_null()) << v;
    EXPECT_TRUE(v["kv_saving_fraction"].is_null()) << v;
    const std::int64_t served = v["requests"].get<std::int64_t>();
    EXPECT_NE(served, base);
    const std::string why = v["not_comparable"].get<std::string>();
    EXPECT_NE(why.find("the baseline served " + FormatWithSeparators(base) +
                       " requests, this variant " + FormatWithSeparators(served)),
              std::string::npos)
        << why;
  }
  EXPECT_TRUE(saw) << r.out;
  // The growth fit leaves out the baseline's tasks cut short (unfinished
  // work), as many as simulate marks cut_short.
  const auto sim = testing::RunKvbill("simulate --format json --scenario " + path);
  ASSERT_EQ(sim.exit_status, 0) << sim.err;
  const auto tasks = nlohmann::json::parse(sim.out)["tasks"];
  std::int64_t cut = 0;
  for (const auto& t : tasks) cut += t["cut_short"].get<bool>() ? 1 : 0;
  ASSERT_GT(cut, 0);
  EXPECT_EQ(j["growth"]["cut_tasks_left_out"], cut);
  // Ranks run 1, 2, ... over the weighed levers only.
  std::int64_t expected = 1;
  for (const auto& v : j["variants"]) {
    if (v.contains("rank")) {
      EXPECT_EQ(v["rank"].get<std::int64_t>(), expected++);
    }
  }
}

// A baseline that served no request (Gemma-2-9B's 8,192-token limit under
// coding agents' first prompts) measured nothing: no lever is weighed, the
// sweep leaves its figures empty, and the report says so.
TEST(CompareCliTest, NothingServedWeighsNoLever) {
  const std::string path = WriteScenario(
      "none.json",
      R"({"model": "gemma-2-9b", "trace": {"generator": "coding-agent", "tasks": 2}, "seed": 1,
          "sweep": {"/kv_format": ["bf16", "fp8"]}})");
  const auto r = testing::RunKvbill("compare --scenario " + path + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["baseline"]["requests"], 0);
  // The baseline's own figures are null, not $0 and 0 B (a CI job read a
  // task that cost nothing).
  for (const char* key : {"cost_per_task_usd", "cost_per_task_usd_p90", "kv_read_bytes_per_task",
                          "hit_rate", "saving_usd_per_task"}) {
    EXPECT_TRUE(j["baseline"][key].is_null()) << key << ": " << j["baseline"].dump();
  }
  EXPECT_EQ(j["baseline"]["not_measured"], "no request was served");
  for (const auto& v : j["variants"]) {
    EXPECT_FALSE(v.contains("rank")) << v.dump();
    EXPECT_FALSE(v.contains("cost_per_task_usd")) << v.dump();
    EXPECT_TRUE(v.contains("not_applicable")) << v.dump();
  }
  const auto table = testing::RunKvbill("compare --scenario " + path);
  EXPECT_NE(table.out.find("\nbaseline  "), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("$0.0000"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("not measured"), std::string::npos) << table.out;
  const auto loads = testing::RunKvbill("compare --scenario " + path + " --load 1,2 --format json");
  ASSERT_EQ(loads.exit_status, 0) << loads.err;
  const auto l = nlohmann::json::parse(loads.out);
  for (const auto& at : l["loads"]) EXPECT_TRUE(at["baseline_cost_per_task_usd"].is_null());
  const auto sweep = testing::RunKvbill("sweep --scenario " + path + " --format json");
  ASSERT_EQ(sweep.exit_status, 0) << sweep.err;
  const auto points = nlohmann::json::parse(sweep.out);  // outlives the loop
  for (const auto& p : points["points"]) {
    EXPECT_EQ(p["summary"]["requests"], 0);
    EXPECT_TRUE(p["summary"]["cost_per_task_usd.mean"].is_null()) << p.dump();
  }
}

// Hybrid models: a prefix cache cannot be turned on for their state layers,
// nor their attention rewritten as MLA; both levers say so instead of
// failing.
TEST(CompareCliTest, HybridModelsSayWhichLeversCannotApply) {
  const std::string path =
      WriteScenario("hybrid.json",
                    R"({"model": "jamba-1.5-mini", "prefix_cache": {"enabled": false},
          "deployment": {"gpus_per_replica": 2},
          "trace": {"generator": "coding-agent", "tasks": 1}, "seed": 1})");
  const auto r = testing::RunKvbill("compare --scenario " + path + " --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int checked = 0;
  for (const auto& v : j["variants"]) {
    const std::string lever = v["lever"];
    if (lever == "prefix caching on" || lever.starts_with("architecture: latent")) {
      ++checked;
      ASSERT_TRUE(v.contains("not_applicable")) << v.dump();
      EXPECT_NE(v["not_applicable"].get<std::string>().find("constant-state layers"),
                std::string::npos);
    }
  }
  EXPECT_EQ(checked, 2) << r.out;
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// "int4" on vLLM is its int4_per_token_head in every command that sizes a
// deployment: Qwen3-8B's 36 layers x 8 KV heads x (K + V) x (128 x 4 bits +
// one fp32 scale) / 8 = 39,168 B a token (KIVI's int4-g32 would be 46,080).
// Its KV room on one H100 is 57,853,991,337 B (74,235,462,057 B of the 90%
// share less the reserve, less 16,381,470,720 B of weights), so at batch 32
// 57,853,991,337 / (32 x 39,168) = 46,159.6 tokens, 46,144 in whole
// 16-token blocks — breakeven and fit alike.
TEST(BreakevenCliTest, Int4IsVllmsOwnFormatAsFitReadsIt) {
  const auto b = testing::RunKvbill(
      "breakeven --model qwen3-8b --gpu h100-sxm --price 10 --kv-format int4 --batch 32 "
      "--format json");
  ASSERT_EQ(b.exit_status, 0) << b.err;
  const auto j = nlohmann::json::parse(b.out);
  EXPECT_EQ(j["kv_formats"][0]["kv_format"], "int4-g128");
  EXPECT_EQ(j["kv_formats"][0]["batch_n"]["memory_limit_context"], 46144);
  const auto f = testing::RunKvbill(
      "fit --model qwen3-8b --gpu h100-sxm --kv-format int4 --context 40960 --batch 32 "
      "--format json");
  ASSERT_EQ(f.exit_status, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(f.out)["memory_max_context"], 46144);
  // Another group is not one vLLM stores: priced by its bytes, said not run
  // in breakeven, DOES NOT RUN in fit (as a scenario refuses it).
  for (const char* other : {"int4-g32", "int4-g64"}) {
    SCOPED_TRACE(other);
    const auto bo = testing::RunKvbill(
        std::string("breakeven --model qwen3-8b --gpu h100-sxm --price 10 --format json "
                    "--kv-format ") +
        other);
    ASSERT_EQ(bo.exit_status, 0) << bo.err;
    bool not_run = false;
    const auto warnings = nlohmann::json::parse(bo.out)["warnings"];
    for (const auto& w : warnings) {
      not_run = not_run ||
                (w["code"] == "format_not_run" &&
                 w["message"].get<std::string>().find("int4-g128 for this model's "
                                                      "128-element heads") != std::string::npos);
    }
    EXPECT_TRUE(not_run) << bo.out;
    const auto fo = testing::RunKvbill(
        std::string("fit --model qwen3-8b --gpu h100-sxm --context 8k --check --kv-format ") +
        other);
    EXPECT_EQ(fo.exit_status, 1) << fo.out << fo.err;
    EXPECT_NE(fo.out.find("DOES NOT RUN"), std::string::npos) << fo.out;
  }
  EXPECT_EQ(testing::RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --check "
                               "--kv-format int4-g128")
                .exit_status,
            0);
}

// Gemma-2-9B serves 8,192 tokens. At $5/Mtok on an H100 the batch filling
// memory is profitable far past that: --ignore-model-limit prices it and
// warns context_limit with the longest such context, as fit and kv warn
// past the limit; without the flag the answers stop at 8,192, no warning.
TEST(BreakevenCliTest, IgnoringTheModelLimitIsWarnedWhereAnAnswerIsPastIt) {
  const std::string args = "breakeven --model gemma-2-9b --gpu h100-sxm --price 5 --format json";
  const auto ignored = testing::RunKvbill(args + " --ignore-model-limit");
  ASSERT_EQ(ignored.exit_status, 0) << ignored.err;
  const auto j = nlohmann::json::parse(ignored.out);
  std::int64_t longest = 0;
  for (const auto& f : j["kv_formats"]) {
    for (const char* row : {"batch_1", "batch_n", "batch_filling_memory"}) {
      longest = std::max(longest, f[row]["max_profitable_context"].get<std::int64_t>());
    }
  }
  ASSERT_GT(longest, 8192);
  ASSERT_FALSE(j["warnings"].empty());
  EXPECT_EQ(j["warnings"][0]["code"], "context_limit");
  EXPECT_NE(j["warnings"][0]["message"].get<std::string>().find(
                "a profitable context of " + FormatWithSeparators(longest) +
                " tokens is beyond gemma-2-9b's max_model_len 8,192"),
            std::string::npos)
      << j["warnings"];
  const auto kept = testing::RunKvbill(args);
  ASSERT_EQ(kept.exit_status, 0) << kept.err;
  const auto kept_warnings = nlohmann::json::parse(kept.out)["warnings"];
  for (const auto& w : kept_warnings) {
    EXPECT_NE(w["code"], "context_limit") << w;
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
