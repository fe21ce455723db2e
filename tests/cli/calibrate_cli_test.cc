// `kvbill calibrate` end to end: kernel curves from a sample of measured
// tables, and the replay of a few published serving records.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/cli_test_util.h"

namespace kvbill::testing {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::string Temp(const std::string& name) {
  return ::testing::TempDir() + "/calibrate_" + std::to_string(::getpid()) + "_" + name;
}

TEST(CalibrateCliTest, KernelCurvesFromASampleOfTheTables) {
  const std::string out = Temp("curves.json");
  const auto r =
      RunKvbillInSourceDir("calibrate kernels --kernels tests/data/kernels_sample -o " + out);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["gpus"].size(), 1u);  // the sample holds H100 rows only
  const auto& gpu = j["gpus"][0];
  EXPECT_EQ(gpu["gpu"], "h100-sxm");
  EXPECT_TRUE(gpu.contains("all_reduce"));
  // With -o the report (each fitted operator with its error against its
  // rows) goes to stderr.
  EXPECT_EQ(r.out, "");
  for (const char* op :
       {"GEMM bf16", "decode attention, bf16 KV", "prefill attention", "fused MoE bf16"}) {
    EXPECT_NE(r.err.find(op), std::string::npos) << op << "\n" << r.err;
  }
  std::filesystem::remove(out);
}

TEST(CalibrateCliTest, ReplaysRecordsAndSaysWhichItCannot) {
  // Three GPUStack records of Qwen3-8B on one H100 (tests/data/calibration/README.md):
  // two vLLM ShareGPT runs at concurrency 4 and 1, one SGLang run.
  const std::string doc = Temp("validation.md");
  const auto r = RunKvbillInSourceDir(
      "calibrate --measurements tests/data/calibration/sample.jsonl --no-fit --report "
      "--validation-doc " +
      doc);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // Two vLLM records x four metrics (duration, mean TTFT, mean TPOT and the
  // mean end-to-end latency both records give: 1,680 and 1,660 ms).
  EXPECT_NE(r.out.find("| all, the profile as given | 8 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("b01-sharegpt-n100-c4 | qwen3-8b | h100-sxm | vllm v0.11.0 | sharegpt "
                       "x100, concurrency 4 | tpot_ms_mean | 7.38 |"),
            std::string::npos)
      << r.out;
  // --no-fit: the profile as given, one row each, no fit's rows.
  EXPECT_EQ(r.out.find("in sample"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("### After the fit"), std::string::npos) << r.out;
  // The sample's vLLM runs are ShareGPT-length: no fixed-length point, and
  // none is no figure, not a 0% miss.
  EXPECT_NE(r.out.find("| fixed lengths, the profile as given | 0 | — | — |"), std::string::npos)
      << r.out;
  // The fit is vLLM's (the default engine): the SGLang record is not among
  // its points.
  EXPECT_EQ(r.out.find("| sglang v0.5.3.post3 |"), std::string::npos) << r.out;
  std::ifstream in(doc);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("# Validation of the cost model: vLLM"), std::string::npos);
  EXPECT_NE(text.find("## Records and metrics left out"), std::string::npos);
  std::filesystem::remove(doc);
}

TEST(CalibrateCliTest, SglangRecordsReplayThroughSglangsScheduler) {
  // The sample's SGLang run (Qwen3-8B on one H100, ShareGPT, concurrency 4)
  // gives duration, mean TTFT, mean TPOT and mean end-to-end latency: four
  // points, replayed with the SGLang profile; the two vLLM records are the
  // ones left out now.
  const auto r = RunKvbillInSourceDir(
      "calibrate --measurements tests/data/calibration/sample.jsonl --engine sglang --no-fit "
      "--report");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("| all, the profile as given | 4 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| qwen3-8b | h100-sxm | sglang v0.5.3.post3 | sharegpt x100, concurrency 4 "
                       "| e2e_ms_mean | 1610.00 |"),
            std::string::npos)
      << r.out;
}

TEST(CalibrateCliTest, EachPageListsItsOwnEnginesPairs) {
  // The sample's SGLang run of Qwen3-8B (BF16, b02) and the same page's FP8
  // run (b05, tests/data/calibration/sglang-fp8.jsonl) differ in the weight
  // format only: a relative effect on SGLang's page, none on vLLM's. Its
  // published duration gain: 41.97 s / 33.54 s - 1 = +25.1%.
  const std::string both = Temp("pair.jsonl");
  {
    std::ofstream out(both);
    for (const char* f : {"sample.jsonl", "sglang-fp8.jsonl"}) {
      std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/tests/data/calibration/" + f);
      out << in.rdbuf();
    }
  }
  const auto page = [&](const std::string& engine) {
    const std::string doc = Temp("pair-" + engine + ".md");
    const auto r = RunKvbillInSourceDir("calibrate --measurements " + both + " --engine " + engine +
                                        " --no-fit --validation-doc " + doc);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    std::ifstream in(doc);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(doc);
    return text.substr(text.find("## Relative effects"));
  };
  const std::string row =
      "| weights fp8 vs bf16 | gpustack/qwen3-8b/h100-latency/sglang/b02-sharegpt-n100-c4 | "
      "gpustack/qwen3-8b/h100-latency/sglang/b05-sharegpt-n100-c4 | duration_s | +25.1% |";
  EXPECT_NE(page("sglang").find(row), std::string::npos) << page("sglang");
  const std::string vllm = page("vllm");
  EXPECT_EQ(vllm.find("b05-sharegpt"), std::string::npos) << vllm;
  EXPECT_NE(vllm.find("No two records differ in one factor of formats or parallelism alone"),
            std::string::npos)
      << vllm;
  std::filesystem::remove(both);
}

TEST(CalibrateCliTest, LomoOnlyKeepsTheProfile) {
  // --lomo-only writes the starting profile's parameters unchanged (the
  // bundled vLLM profile, read here as a file), whatever the refits do; 40
  // evaluations move most of its parameters when the profile is fitted.
  const std::string out = Temp("lomo-profile.json");
  const auto r = RunKvbillInSourceDir(
      "calibrate --measurements tests/data/calibration/sample.jsonl --lomo-only "
      "--max-evaluations 40 --grid-rounds 0 -o " +
      out);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::ifstream written(out);
  std::ifstream bundled(std::string(KVBILL_SOURCE_DIR) + "/scenarios/profiles/vllm.json");
  const auto a = nlohmann::json::parse(written);
  const auto b = nlohmann::json::parse(bundled);
  EXPECT_EQ(a["parameters"], b["parameters"]);
  std::filesystem::remove(out);
  const auto bad = RunKvbillInSourceDir(
      "calibrate --measurements tests/data/calibration/sample.jsonl --lomo-only --no-fit");
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_NE(bad.err.find("--lomo-only: cannot be combined with --no-fit or --no-lomo"),
            std::string::npos)
      << bad.err;
}

TEST(CalibrateCliTest, DetailPrintsAReplaysInsideBesideTheRecord) {
  // b18 runs one request at a time (concurrency 1): every iteration holds
  // one sequence; the record's own ITL median (7.23 ms) is shown as published.
  const std::string id = "gpustack/qwen3-8b/h100-latency/vllm/b18-sharegpt-n100-c1";
  const auto r = RunKvbillInSourceDir(
      "calibrate --measurements tests/data/calibration/sample.jsonl --detail " + id);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("## " + id + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| itl_ms_p50 | 7.23 | "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("most sequences in one iteration 1,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("preemptions 0 of 0 requests"), std::string::npos) << r.out;
  // One decode step of that batch by cost-model part.
  EXPECT_NE(r.out.find("A decode-only iteration of 1 sequence at context "), std::string::npos)
      << r.out;
  for (const char* part : {"| gemm | ", "| attention | ", "| lm_head | ", "| cpu | "}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  // One request at a time: no iteration computes a prompt beside decodes,
  // so the mean prompt-only iteration is shown by part instead.
  EXPECT_NE(r.out.find("| prompt chunks and decodes | 0 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" prompt tokens (whole prompts of the mean length from an empty cache) "
                       "alone (the replay's mean prompt-only iteration"),
            std::string::npos)
      << r.out;
  // At concurrency 4 (b01) prompts arrive while others decode: the mean such
  // iteration is shown by part too, its decodes beside its prompt tokens.
  const auto four = RunKvbillInSourceDir(
      "calibrate --measurements tests/data/calibration/sample.jsonl --detail "
      "gpustack/qwen3-8b/h100-latency/vllm/b01-sharegpt-n100-c4");
  ASSERT_EQ(four.exit_status, 0) << four.err;
  const std::regex mixed(
      R"(An iteration of [0-9,]+ prompt tokens \(whole prompts of the mean length from an )"
      R"(empty cache\) and [1-3] decodes? at that context)");
  EXPECT_TRUE(std::regex_search(four.out, mixed)) << four.out;
  EXPECT_EQ(four.out.find("| prompt chunks and decodes | 0 |"), std::string::npos) << four.out;
  const auto bad = RunKvbillInSourceDir(
      "calibrate --measurements tests/data/calibration/sample.jsonl --detail nope");
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_NE(bad.err.find("--detail nope: no such record"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "");
}

// A `vllm bench serve --save-result` record carries no server settings:
// the scenario's become its flags where it gives them (max_num_seqs 8,
// max_num_batched_tokens 2,048), its model only when it names one (else
// the record's model_id: Llama-3.1-8B here), and what cannot apply to a
// recorded benchmark (its slo, its trace) is named in a note.
TEST(CalibrateCliTest, ABenchResultTakesTheScenariosServerSettings) {
  const std::string bench = Temp("bench.json"), scenario = Temp("server.json");
  std::string lens_in, lens_out;
  for (int i = 0; i < 20; ++i) {
    lens_in += std::string(i ? ", " : "") + "512";
    lens_out += std::string(i ? ", " : "") + "64";
  }
  std::ofstream(bench) << R"({"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
      "date": "20261205-120000", "num_prompts": 20, "request_rate": 4, "max_concurrency": null,
      "duration": 6.0, "completed": 20, "total_input_tokens": 10240,
      "total_output_tokens": 1280, "mean_ttft_ms": 40.0, "mean_tpot_ms": 8.0,
      "mean_itl_ms": 8.0, "input_lens": [)"
                       << lens_in << R"(], "output_lens": [)" << lens_out << "]}";
  std::ofstream(scenario) << R"({"deployment": {"gpu": "h100-sxm"}, "engine":
      {"max_num_seqs": 8, "max_num_batched_tokens": 2048}, "slo": {"ttft_s.p90": 1},
      "trace": {"generator": "chat", "tasks": 2}})";
  const auto r = RunKvbill("calibrate --measurements " + bench + " --scenario " + scenario +
                           " --detail " + bench);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("model llama-3.1-8b, GPU h100-sxm x1, max_num_batched_tokens 2048, "
                       "max_num_seqs 8"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find(": slo, trace not replayed"), std::string::npos) << r.err;
  // vLLM's own name for the KV format counts as the scenario's kv_format:
  // FP8 KV halves a token's bytes, so the pool holds twice the blocks (one
  // more where the halved remainder makes one).
  const auto blocks = [](const std::string& out) {
    const std::size_t at = out.find("; KV pool ");
    return at == std::string::npos ? -1L : std::stol(out.substr(at + 10));
  };
  const std::string fp8 = Temp("server_fp8.json");
  std::ofstream(fp8) << R"({"deployment": {"gpu": "h100-sxm"}, "kv_cache_dtype": "fp8"})";
  const auto q =
      RunKvbill("calibrate --measurements " + bench + " --scenario " + fp8 + " --detail " + bench);
  ASSERT_EQ(q.exit_status, 0) << q.err;
  const std::string plain = Temp("server_bf16.json");
  std::ofstream(plain) << R"({"deployment": {"gpu": "h100-sxm"}})";
  const auto bf16 = RunKvbill("calibrate --measurements " + bench + " --scenario " + plain +
                              " --detail " + bench);
  std::filesystem::remove(plain);
  EXPECT_GE(blocks(q.out), 2 * blocks(bf16.out)) << q.out << bf16.out;
  EXPECT_LE(blocks(q.out), 2 * blocks(bf16.out) + 1) << q.out << bf16.out;
  std::filesystem::remove(fp8);
  // Without --scenario there is no GPU: the reason is given, not only that
  // nothing replays.
  const auto alone = RunKvbill("calibrate --measurements " + bench + " --no-fit");
  EXPECT_EQ(alone.exit_status, 2);
  EXPECT_NE(
      alone.err.find(": no record kvbill can replay; " + bench + ": no GPU: the record names none"),
      std::string::npos)
      << alone.err;
  std::filesystem::remove(bench);
  std::filesystem::remove(scenario);
}

TEST(CalibrateCliTest, ABrokenRecordIsAnErrorNamingTheLineAndWritesNothing) {
  const std::string bad = Temp("bad.jsonl"), out = Temp("profile.json");
  {
    std::ifstream good(std::string(KVBILL_SOURCE_DIR) + "/tests/data/calibration/sample.jsonl");
    std::string first;
    std::getline(good, first);
    std::ofstream(bad) << first << "\n{\"id\": \"x\", \"metrics\": [}\n";
  }
  const auto r = RunKvbill("calibrate --measurements " + bad + " -o " + out);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find(bad + ":2"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove(bad);
}

TEST(CalibrateCliTest, FitExclusionsAreReportedButNotFitted) {
  // The sample's two vLLM records; b18 is excluded from the fit. The fit
  // must then equal the fit of a file without b18: the same parameters,
  // while fitting both moves them elsewhere (b18 runs at concurrency 1,
  // b01 at 4, and they pull the per-step overheads differently).
  const std::string source =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/calibration/sample.jsonl";
  const std::string b18 = "gpustack/qwen3-8b/h100-latency/vllm/b18";
  const std::string without = Temp("without-b18.jsonl"), excl = Temp("exclusions.json");
  {
    std::ifstream in(source);
    std::ofstream out(without);
    for (std::string line; std::getline(in, line);) {
      if (line.find(b18) == std::string::npos) out << line << "\n";
    }
    std::ofstream(excl) << R"([{"records": ")" << b18 << R"(", "reason": "a test"}])";
  }
  const std::string fit = " --no-lomo --grid-rounds 0 --max-evaluations 30 -o ";
  const std::string a = Temp("a.json"), b = Temp("b.json"), c = Temp("c.json");
  const std::string doc = Temp("excluded.md");
  const auto excluded = RunKvbill("calibrate --measurements " + source + " --fit-exclusions " +
                                  excl + fit + a + " --validation-doc " + doc);
  ASSERT_EQ(excluded.exit_status, 0) << excluded.err;
  const auto alone = RunKvbill("calibrate --measurements " + without + fit + b);
  ASSERT_EQ(alone.exit_status, 0) << alone.err;
  const auto both = RunKvbill("calibrate --measurements " + source + fit + c);
  ASSERT_EQ(both.exit_status, 0) << both.err;
  auto params = [](const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in)["parameters"];
  };
  EXPECT_EQ(params(a), params(b));
  EXPECT_NE(params(a), params(c));
  // The page still predicts b18 (its four points) and says why it was not fitted.
  std::ifstream in(doc);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("## Records not fitted"), std::string::npos);
  EXPECT_NE(text.find("| `" + b18 + "*` | 4 | a test |"), std::string::npos) << text;
  EXPECT_NE(text.find("| " + b18 + "-sharegpt-n100-c1 | qwen3-8b |"), std::string::npos);
  // Records fitted: b01's four points.
  EXPECT_NE(text.find("| all, fitted (in sample), records fitted | 4 |"), std::string::npos)
      << text;
  // --no-fit reports the exclusions too (the rows over the records fitted).
  const auto shipped = RunKvbill("calibrate --measurements " + source + " --fit-exclusions " +
                                 excl + " --no-fit --report --validation-doc " + doc);
  ASSERT_EQ(shipped.exit_status, 0) << shipped.err;
  {
    std::ifstream again(doc);
    const std::string page((std::istreambuf_iterator<char>(again)),
                           std::istreambuf_iterator<char>());
    EXPECT_NE(page.find("| all, the profile as shipped, records fitted | 4 |"), std::string::npos)
        << page;
  }
  // A prefix no record has is an error naming the entry; nothing is written.
  const std::string d = Temp("d.json");
  std::ofstream(excl) << R"([{"records": "gpustack/nope", "reason": "x"}])";
  const auto typo =
      RunKvbill("calibrate --measurements " + source + " --fit-exclusions " + excl + fit + d);
  EXPECT_EQ(typo.exit_status, 2);
  EXPECT_NE(typo.err.find(excl + "#/0/records: no record's id starts with \"gpustack/nope\""),
            std::string::npos)
      << typo.err;
  EXPECT_FALSE(std::filesystem::exists(d));
  std::ofstream(excl) << R"([{"records": "gpustack/", "why": "x"}])";
  const auto key =
      RunKvbill("calibrate --measurements " + source + " --fit-exclusions " + excl + fit + d);
  EXPECT_EQ(key.exit_status, 2);
  EXPECT_NE(key.err.find(excl + "#/0/why: unknown key"), std::string::npos) << key.err;
  for (const std::string& f : {without, excl, a, b, c, doc}) std::filesystem::remove(f);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill::testing
