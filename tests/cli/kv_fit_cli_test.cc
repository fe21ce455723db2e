// End-to-end runs of `kvbill kv`, `kvbill fit` and the catalogs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::RunKvbill;

TEST(KvCliTest, JsonHasTheDocumentedFields) {
  const auto r = RunKvbill("kv --model qwen3-32b --context 32k,128k,1M --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "qwen3-32b");
  EXPECT_EQ(j["kv_format"], "bf16");
  EXPECT_EQ(j["bytes_per_token"], 262144);
  EXPECT_EQ(j["state_bytes_per_sequence"], 0);
  ASSERT_EQ(j["contexts"].size(), 3u);
  // 8 / 32 / 256 GiB.
  EXPECT_EQ(j["contexts"][0]["tokens"], 32768);
  EXPECT_EQ(j["contexts"][0]["bytes"], 8LL << 30);
  EXPECT_EQ(j["contexts"][1]["bytes"], 32LL << 30);
  EXPECT_EQ(j["contexts"][2]["bytes"], 256LL << 30);
  EXPECT_EQ(j["contexts"][2]["block_rounded_bytes"], 256LL << 30);
}

TEST(KvCliTest, SetOverrideAnswersWhatIfQuestions) {
  const auto r =
      RunKvbill("kv --model qwen3-32b --set num_key_value_heads=64 --context 1M --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["bytes_per_token"], 2 * 1024 * 1024);
  EXPECT_EQ(j["contexts"][0]["bytes"], 2048LL << 30);  // 2 TiB
}

// A key the config lacks, a letter from one it has, is a typo that would
// silently change nothing: refused with the key it resembles. A key that
// resembles none is added (what-ifs add keys a config leaves out).
TEST(KvCliTest, SetKeyOneLetterFromTheConfigsIsRefused) {
  const auto typo = RunKvbill("kv --model qwen3-32b --set num_key_value_head=64 --context 1k");
  EXPECT_EQ(typo.exit_status, 2);
  EXPECT_NE(typo.err.find("--set num_key_value_head: the config has no key "
                          "\"num_key_value_head\"; did you mean \"num_key_value_heads\"?"),
            std::string::npos)
      << typo.err;
  EXPECT_EQ(typo.out, "");
  const auto added =
      RunKvbill("kv --model qwen3-32b --set layer_types=null --set num_kv_groups=8 --context 1k");
  EXPECT_EQ(added.exit_status, 0) << added.err;
  // Keys of real configs are meant, however close to another: compare's MLA
  // lever sets qk_rope_head_dim beside qk_nope_head_dim (one letter apart)
  // and v_head_dim beside head_dim. Qwen3-8B as MLA: 36 layers x (512 + 64)
  // x 2 bytes = 41,472 a token.
  const auto mla = RunKvbill(
      "kv --model qwen3-8b --set kv_lora_rank=512 --set qk_nope_head_dim=128 "
      "--set qk_rope_head_dim=64 --set v_head_dim=128 --context 1k --format json");
  ASSERT_EQ(mla.exit_status, 0) << mla.err;
  EXPECT_EQ(nlohmann::json::parse(mla.out)["bytes_per_token"], 41472);
}

// A value --set gave is not the file's: its error says the key was
// overridden, after the key and its index.
TEST(KvCliTest, SetValueErrorsSayTheKeyWasOverridden) {
  const auto r = RunKvbill("kv --model qwen3-32b --set num_key_value_heads=48 --context 1k");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill kv: models/qwen3-32b.json: num_key_value_heads (overridden): 48 does not "
            "divide num_attention_heads 64\n");
  // The file's own value, unchanged: no marker.
  const auto own = RunKvbill("kv --model qwen3-32b --set head_dim=128 --context 1k");
  EXPECT_EQ(own.exit_status, 0) << own.err;
}

// BLOOM's config has no length key: vLLM assumes 2,048 tokens, and kv says
// both the limit and that it is assumed (it once read as no limit at all).
TEST(KvCliTest, AConfigWithoutALengthGetsVllmsAssumed2048) {
  const auto r = RunKvbill("kv --model tests/data/configs/bloom.json --context 4096 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["max_model_len"], 2048);
  EXPECT_NE(j["warnings"].dump().find("assumed: its config gives no length"), std::string::npos)
      << j["warnings"].dump();
}

// A model type without a family rule is read by the generic rule, and kv
// says so (JSON generic_rule, the table's "rule" line); a known one is not.
TEST(KvCliTest, AModelTypeWithoutAFamilyRuleSaysSo) {
  const std::string path = ::testing::TempDir() + "/novel_llm.json";
  std::ofstream(path) << R"({"model_type": "novel_llm", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
      "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 4096})";
  const auto r = RunKvbill("kv --model " + path + " --context 1k --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["generic_rule"], true);
  const auto table = RunKvbill("kv --model " + path + " --context 1k");
  EXPECT_NE(table.out.find("rule        model_type \"novel_llm\" has no family rule"),
            std::string::npos)
      << table.out;
  const auto known = RunKvbill("kv --model qwen3-8b --context 1k --format json");
  ASSERT_EQ(known.exit_status, 0) << known.err;
  EXPECT_EQ(nlohmann::json::parse(known.out)["generic_rule"], false);
}

// A config without hidden_size takes LlamaConfig's 4096, and kv and fit say
// so: JSON defaulted_fields, the table's "defaults" line. head_dim is then
// 4096 / 4 heads = 1,024: 2 layers x 2 KV heads x 1,024 x 2 (K, V) x 2 B =
// 16,384 B a token, 163,840 B for 10 tokens.
TEST(KvCliTest, SizingKeysTakenFromTheClassDefaultsAreSaid) {
  const std::string path = ::testing::TempDir() + "/no_hidden_size.json";
  std::ofstream(path) << R"({"model_type": "llama", "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
      "vocab_size": 100, "max_position_embeddings": 4096})";
  const auto r = RunKvbill("kv --model " + path + " --context 10 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["bytes_per_token"], 16384);
  EXPECT_EQ(j["contexts"][0]["bytes"], 163840);
  EXPECT_EQ(j["defaulted_fields"], nlohmann::json::parse(R"([{"field": "hidden_size",
                                                               "value": 4096}])"));
  EXPECT_EQ(j["defaults_source"],
            "transformers src/transformers/models/llama/configuration_llama.py");
  const auto table = RunKvbill("kv --model " + path + " --context 10");
  EXPECT_NE(table.out.find("defaults    hidden_size = 4096: absent from the config, read at the "
                           "class defaults of model_type \"llama\" (transformers "
                           "src/transformers/models/llama/configuration_llama.py, as transformers "
                           "reads it); check them against the model card\n"),
            std::string::npos)
      << table.out;
  const auto csv = RunKvbill("kv --model " + path + " --context 10 --format csv");
  EXPECT_NE(csv.err.find("kvbill kv: note: hidden_size = 4096: absent from the config"),
            std::string::npos)
      << csv.err;
  const auto fit = RunKvbill("fit --model " + path + " --gpu h100-sxm --context 10 --format json");
  ASSERT_EQ(fit.exit_status, 0) << fit.err;
  EXPECT_EQ(nlohmann::json::parse(fit.out)["defaulted_fields"][0]["field"], "hidden_size");
  const auto fit_table = RunKvbill("fit --model " + path + " --gpu h100-sxm --context 10");
  EXPECT_NE(fit_table.out.find("defaults    hidden_size = 4096: absent from the config"),
            std::string::npos)
      << fit_table.out;
  // A catalog config gives every key: nothing defaulted.
  const auto given = RunKvbill("kv --model qwen3-8b --context 1k --format json");
  ASSERT_EQ(given.exit_status, 0) << given.err;
  EXPECT_EQ(nlohmann::json::parse(given.out)["defaulted_fields"], nlohmann::json::array());
  EXPECT_EQ(nlohmann::json::parse(given.out)["defaults_source"], nullptr);
}

// A checkpoint that declares an fp8 KV cache (Laguna-XS.2): kv's default
// bf16 says it is kvbill's default, not the checkpoint's.
TEST(KvCliTest, TheDefaultKvFormatSaysItIsNotTheCheckpoints) {
  const auto r = RunKvbill("kv --model tests/data/configs/laguna-xs.2-fp8.json --context 1k");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("KV format   bf16 (16 bits/element incl. scales): kvbill's default, not "
                       "the checkpoint's fp8-e4m3 (--kv-format auto)"),
            std::string::npos)
      << r.out;
  const auto chosen =
      RunKvbill("kv --model tests/data/configs/laguna-xs.2-fp8.json --context 1k --kv-format bf16");
  EXPECT_EQ(chosen.out.find("kvbill's default"), std::string::npos) << chosen.out;
}

TEST(KvCliTest, TableStatesItsUnits) {
  const auto r = RunKvbill("kv --model deepseek-v3 --context 32k");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("70,272 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GiB = 2^30 bytes"), std::string::npos);
}

TEST(KvCliTest, CsvHasPlainNumbers) {
  const auto r = RunKvbill("kv --model llama-3.1-70b --context 8k --format csv");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out,
            "model,kv_format,tokens,bytes,block_rounded_bytes,bytes_per_token,"
            "state_bytes_per_sequence\n"
            "llama-3.1-70b,bf16,8192,2684354560,2684354560,327680,0\n");
}

TEST(KvCliTest, ReadsAConfigJsonByPath) {
  const std::string path = ::testing::TempDir() + "/tiny_config.json";
  std::ofstream(path) << R"({"num_hidden_layers": 2, "hidden_size": 64,
                              "num_attention_heads": 4, "vocab_size": 100})";
  const auto r = RunKvbill("kv --model " + path + " --context 10 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["bytes_per_token"], 512);
}

// A tower kvbill cannot count changes the weights, not the KV: kv answers
// for the text model with a towers_not_counted warning; fit, whose weights
// set the pool, still refuses. The text model: 2 layers x 2 KV heads x
// head dim 64 / 4 = 16 x 2 (K and V) x 2 B = 256 B a token.
TEST(KvCliTest, AnUncountableTowerLeavesTheKvAnsweredAndSaysSo) {
  const std::string path = ::testing::TempDir() + "/my_vlm_config.json";
  std::ofstream(path) << R"({"model_type": "my_vlm", "vision_config": {"hidden_size": 8},
      "text_config": {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100}})";
  const auto r = RunKvbill("kv --model " + path + " --context 10 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["bytes_per_token"], 256);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["code"], "towers_not_counted");
  EXPECT_NE(j["warnings"][0]["message"].get<std::string>().find(
                "vision_config: kvbill cannot count the vision tower of model_type \"my_vlm\""),
            std::string::npos);
  EXPECT_EQ(j["parameters"]["towers"], 0);
  const auto table = RunKvbill("kv --model " + path + " --context 10");
  EXPECT_NE(table.out.find("warning [towers_not_counted]: "), std::string::npos) << table.out;
  // --text-only asked for it: no warning.
  const auto asked = RunKvbill("kv --model " + path + " --context 10 --format json --text-only");
  EXPECT_TRUE(nlohmann::json::parse(asked.out)["warnings"].empty());
  // fit sizes the weights: refused, naming the way out.
  const auto fit = RunKvbill("fit --model " + path + " --context 10");
  EXPECT_EQ(fit.exit_status, 2);
  EXPECT_NE(fit.err.find("--text-only"), std::string::npos) << fit.err;
}

struct BadCase {
  const char* args;
  const char* message;  // stderr, exactly
};

TEST(KvCliTest, BadInputExitsTwoNamingTheProblem) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/no_layers.json") << R"({"hidden_size": 64, "num_attention_heads": 4})";
  std::ofstream(dir + "/neg_heads.json")
      << R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": -4})";
  std::ofstream(dir + "/not_json.json") << "num_hidden_layers = 2\n";
  const BadCase cases[] = {
      {"kv --kv-format fp6",
       "kvbill kv: --kv-format: unknown format \"fp6\" (known: bf16, fp16, fp32, fp8, fp8-e4m3, "
       "fp8-e5m2, fp8-per-token-head, nvfp4, mxfp4, int4, int2, int4-gN, int2-gN)\n"},
      {"kv --context 12x",
       "kvbill kv: --context: bad token count \"12x\" (expected e.g. 8192, "
       "32k or 1M)\n"},
      {"kv --format xml", "kvbill kv: --format: \"xml\" is not one of table|json|csv\n"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.args);
    const auto r = RunKvbill(c.args);
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_EQ(r.err, c.message);
    EXPECT_EQ(r.out, "");
  }
  const std::pair<std::string, std::string> files[] = {
      {"no_layers.json", ": num_hidden_layers: missing\n"},
      {"neg_heads.json", ": num_attention_heads: must be a positive integer, got -4\n"},
      // The parser fails at column 3, where "num" stops being "null".
      {"not_json.json",
       ":1:3: not valid JSON: syntax error while parsing value - invalid "
       "literal; last read: 'num'\n"},
  };
  for (const auto& [file, tail] : files) {
    SCOPED_TRACE(file);
    const auto r = RunKvbill("kv --model " + dir + "/" + file);
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_EQ(r.err, "kvbill kv: " + dir + "/" + file + tail);
  }
  const auto unknown = RunKvbill("kv --bogus");
  EXPECT_EQ(unknown.exit_status, 2);
  EXPECT_NE(unknown.err.find("unrecognised option '--bogus'"), std::string::npos) << unknown.err;
}

TEST(KvCliTest, FailedRunLeavesNoOutputFile) {
  const std::string out = ::testing::TempDir() + "/kv_should_not_exist.json";
  std::filesystem::remove(out);
  const auto r = RunKvbill("kv --model qwen3-32b --context -5 -o " + out);
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto ok = RunKvbill("kv --model qwen3-32b --context 8k --format json -o " + out);
  EXPECT_EQ(ok.exit_status, 0) << ok.err;
  EXPECT_TRUE(std::filesystem::exists(out));
  std::filesystem::remove(out);
}

TEST(FitCliTest, Qwen3_32bAt128kOnH100SaysByHowMuchAndWhatFits) {
  const auto r = RunKvbill("fit --model qwen3-32b --gpu h100-sxm --context 128k --reserve-gib 0");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // Short by 22,961,120,625 B = 21.38 GiB = 23.0 GB (see fit_test.cc).
  EXPECT_NE(r.out.find("DOES NOT FIT: short by 21.38 GiB (23.0 GB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fp8-e4m3 KV cache "), std::string::npos);
  EXPECT_NE(r.out.find("2 GPUs (tensor parallel 2)"), std::string::npos);
  EXPECT_EQ(RunKvbill("fit --model qwen3-32b --gpu h100-sxm --context 128k --check").exit_status,
            1);
  EXPECT_EQ(RunKvbill("fit --model qwen3-32b --gpu h100-sxm --context 8k --check").exit_status, 0);
}

TEST(FitCliTest, JsonHasTheDocumentedFields) {
  const auto r = RunKvbill(
      "fit --model qwen3-32b --gpu h100-sxm --context 128k --reserve-gib 0 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["weights_bytes"], 65524246528LL);
  EXPECT_EQ(j["kv_bytes"], 34359738368LL);
  EXPECT_EQ(j["capacity_bytes"], 76922864271LL);
  // Memory holds 43,472 tokens; the model's max_model_len (40,960) stops it.
  EXPECT_EQ(j["max_context"], 40960);
  EXPECT_EQ(j["memory_max_context"], 43472);
  EXPECT_EQ(j["max_model_len"], 40960);
  EXPECT_EQ(j["max_batch"], 0);
  // Two GPUs would hold 128k in memory, but no GPU count serves past the
  // model's limit: min_gpus none, the memory's answer apart.
  EXPECT_TRUE(j["min_gpus"].is_null());
  EXPECT_EQ(j["memory_min_gpus"], 2);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["code"], "context_limit");
}

// By default the engine's activation reserve comes off first, as simulate's
// pool does. vLLM's profile (scenarios/profiles/vllm.json): 33.655264748504614
// bytes per batched token per hidden unit x 8,192 tokens (vLLM's budget on an
// H100) x 5,120 (Qwen3-32B's hidden size) / 2^30 = 1.3146588 GiB, plus the
// fixed 1.4511113 GiB = 2.7657701 GiB = 2,969,723,038 B. Capacity
// 76,922,864,271 (above) - 2,969,723,038 = 73,953,141,233 B; less the weights
// 65,524,246,528 leaves 8,428,894,705 B = 32,153.4 tokens of 262,144 B
// (64 layers x 8 KV heads x 128 x 2 x 2 B), 2,009 whole blocks of 16 =
// 32,144 tokens: below the model's 40,960, so a 40k request does not fit
// (vLLM refuses to start at its default max_model_len), while memory alone
// (--reserve-gib 0) holds it. SGLang's profile reserves its fixed
// 1.4712071 GiB alone, of its own memory share.
TEST(FitCliTest, TheEnginesReserveComesOffAsSimulatesPoolDoes) {
  const auto r = RunKvbill("fit --model qwen3-32b --gpu h100-sxm --context 40960 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fits"], false);
  EXPECT_NEAR(j["reserve_gib"].get<double>(), 2.7657701, 1e-6);
  EXPECT_EQ(j["reserve_source"], "vllm's profile run at 8,192 batched tokens");
  EXPECT_EQ(j["capacity_bytes"], 73953141233LL);
  EXPECT_EQ(j["max_context"], 32144);
  const auto text = RunKvbill("fit --model qwen3-32b --gpu h100-sxm --context 40960");
  EXPECT_NE(text.out.find("reserve     2.77 GiB per GPU for activations (vllm's profile run at "
                          "8,192 batched tokens; --reserve-gib 0: memory alone)"),
            std::string::npos)
      << text.out;
  const auto alone = RunKvbill(
      "fit --model qwen3-32b --gpu h100-sxm --context 40960 --reserve-gib 0 --format json");
  EXPECT_EQ(nlohmann::json::parse(alone.out)["fits"], true);
  const auto sglang = RunKvbill(
      "fit --model qwen3-32b --gpu h100-sxm --context 40960 --engine sglang --format json");
  EXPECT_NEAR(nlohmann::json::parse(sglang.out)["reserve_gib"].get<double>(), 1.4712071, 1e-6);
  // ... and its own memory share, as a scenario on SGLang
  // (ScenarioRunTest.SglangTakesItsOwnMemoryFractionByDefault works 0.835).
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(sglang.out)["memory_fraction"].get<double>(), 0.835);
  EXPECT_EQ(RunKvbill("fit --model qwen3-32b --context 8k --engine trtllm").exit_status, 2);
}

// The same pool holds one sequence of 32,144 tokens (above), less than
// Qwen3-32B's max_model_len 40,960: an 8k request fits, but vLLM refuses to
// start the deployment unless --max-model-len is at most 32,144, and fit
// says so (context_limit) at any batch, since the start-up check is one
// sequence (3 x 8,192 = 24,576 tokens fit the pool too). Memory alone
// (--reserve-gib 0) holds 43,472 tokens: no warning.
TEST(FitCliTest, APoolBelowMaxModelLenIsWarnedAsVllmRefusesToStart) {
  for (const char* batch : {"1", "3"}) {
    SCOPED_TRACE(batch);
    const auto r = RunKvbill(
        std::string("fit --model qwen3-32b --gpu h100-sxm --context 8k --format json --batch ") +
        batch);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["fits"], true);
    EXPECT_EQ(j["max_model_len_fits_pool"], false);
    ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
    EXPECT_EQ(j["warnings"][0]["code"], "context_limit");
    EXPECT_NE(j["warnings"][0]["message"].get<std::string>().find(
                  "holds one sequence of at most 32,144 tokens, less than the model's "
                  "max_model_len 40,960: vLLM refuses to start such a deployment"),
              std::string::npos)
        << j["warnings"];
    EXPECT_NE(j["warnings"][0]["message"].get<std::string>().find("--max-model-len 32144 or less"),
              std::string::npos);
  }
  const auto alone =
      RunKvbill("fit --model qwen3-32b --gpu h100-sxm --context 8k --reserve-gib 0 --format json");
  const auto j = nlohmann::json::parse(alone.out);
  EXPECT_EQ(j["max_model_len_fits_pool"], true);
  EXPECT_TRUE(j["warnings"].empty()) << j["warnings"];
  const auto table = RunKvbill("fit --model qwen3-32b --gpu h100-sxm --context 8k");
  EXPECT_NE(table.out.find("warning [context_limit]: a replica's KV pool holds one sequence"),
            std::string::npos)
      << table.out;
}

// Gemma-2-9B's weights and a 128k sequence fit an H100 in memory, but the
// model serves 8,192 tokens (max_position_embeddings, no RoPE scaling).
TEST(FitCliTest, ContextPastTheModelsLimitDoesNotFitUnlessIgnored) {
  const auto r = RunKvbill("fit --model gemma-2-9b --gpu h100-sxm --context 128k");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT the model: 131,072 tokens is past its max_model_len 8,192"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("warning [context_limit]: context 131,072 tokens is beyond the model's "
                       "max_model_len 8,192"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("max context at batch 1: 8,192 tokens (the model's max_model_len"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(vLLM refuses such requests;"), std::string::npos) << r.out;
  // SGLang refuses them too (its scheduler's max_req_input_len), and the
  // warning names the engine asked about.
  const auto sglang =
      RunKvbill("fit --model gemma-2-9b --gpu h100-sxm --context 128k --engine sglang");
  ASSERT_EQ(sglang.exit_status, 0) << sglang.err;
  EXPECT_NE(sglang.out.find("(SGLang refuses such requests;"), std::string::npos) << sglang.out;
  EXPECT_EQ(RunKvbill("fit --model gemma-2-9b --gpu h100-sxm --context 128k --check").exit_status,
            1);
  // No batch, GPU count or format fits past the limit; the change that
  // fits is the model's own limit, 8,192 tokens (memory holds it: 17.2 GiB
  // of weights and one 8,192-token sequence in 71.6 GiB).
  const auto refused =
      RunKvbill("fit --model gemma-2-9b --gpu h100-sxm --context 128k --format json");
  ASSERT_EQ(refused.exit_status, 0) << refused.err;
  const auto k = nlohmann::json::parse(refused.out);
  EXPECT_EQ(k["max_batch"], 0);
  EXPECT_TRUE(k["min_gpus"].is_null());
  EXPECT_GE(k["memory_max_batch"].get<int>(), 1);
  EXPECT_EQ(k["memory_min_gpus"], 1);
  int fitting = 0;
  for (const auto& a : k["alternatives"]) {
    const bool at_limit = a["change"] == "context 8,192 tokens (the model's max_model_len)";
    EXPECT_EQ(a["past_model_limit"], !at_limit) << a.dump();
    EXPECT_EQ(a["fits"], at_limit) << a.dump();
    fitting += a["fits"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(fitting, 1);
  EXPECT_NE(RunKvbill("fit --model gemma-2-9b --gpu h100-sxm --context 128k")
                .out.find("max batch at 131,072 tokens: none, past the model's max_model_len"),
            std::string::npos);
  const auto what_if = RunKvbill(
      "fit --model gemma-2-9b --gpu h100-sxm --context 128k --ignore-model-limit --format json");
  ASSERT_EQ(what_if.exit_status, 0) << what_if.err;
  const auto j = nlohmann::json::parse(what_if.out);
  EXPECT_EQ(j["fits"], true);
  EXPECT_EQ(j["memory_fits"], true);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["code"], "context_limit");
  EXPECT_EQ(RunKvbill("fit --model gemma-2-9b --gpu h100-sxm --context 8k --format json")
                .out.find("context_limit"),
            std::string::npos);
}

// A LongRoPE model (here Phi-4-mini's lengths on a toy: 131,072 positions,
// original 4,096): vLLM starts it at 4,096, so an 8,192-token context fits
// memory and the model's limit but needs --max-model-len, which the run
// says; past 131,072 it does not fit.
TEST(FitCliTest, LongRopeContextPastVllmsDefaultSaysHowToServeIt) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kvbill-longrope-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "config.json";
  {
    std::ofstream out(path);
    out << R"({"model_type": "phi3", "num_hidden_layers": 2, "hidden_size": 256,
               "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
               "vocab_size": 1000, "max_position_embeddings": 131072,
               "original_max_position_embeddings": 4096,
               "rope_scaling": {"type": "longrope", "long_factor": [1.0], "short_factor": [1.0]}})";
  }
  const auto r = RunKvbill("fit --model " + path.string() + " --gpu h100-sxm --context 8k");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("FITS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warning [context_limit]: context 8,192 tokens is past vLLM's default "
                       "max_model_len 4,096 for this LongRoPE model (its "
                       "original_max_position_embeddings): serve it with --max-model-len 8,192 "
                       "or more, up to 131,072"),
            std::string::npos)
      << r.out;
  const auto past = RunKvbill("fit --model " + path.string() + " --gpu h100-sxm --context 256k");
  EXPECT_NE(past.out.find("DOES NOT FIT the model: 262,144 tokens is past its max_model_len "
                          "131,072"),
            std::string::npos)
      << past.out;
  std::filesystem::remove_all(dir);
}

TEST(FitCliTest, UnknownGpuIsExitTwo) {
  const auto r = RunKvbill("fit --model qwen3-32b --gpu h900 --context 8k");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err.rfind("kvbill fit: --gpu \"h900\": unknown GPU", 0), 0u) << r.err;
  EXPECT_EQ(RunKvbill("fit --model qwen3-32b --gpus 3 --context 8k").exit_status, 2);
  EXPECT_EQ(RunKvbill("fit --model qwen3-32b").exit_status, 2);  // --context is required
}

// Qwen3-8B's 32 query heads and 8 KV heads: 3 GPUs split neither, and
// every command that takes a degree says so the same way, exit 2, nothing
// written (vLLM refuses the layout; a priced or drawn one is no deployment).
TEST(FitCliTest, EveryCommandRefusesADegreeThatCannotSplitTheHeads) {
  const std::string why =
      "3 GPUs cannot split model \"qwen3-8b\"'s 32 query heads and 8 KV heads evenly";
  const std::string out = ::testing::TempDir() + "/tp3_" + std::to_string(::getpid()) + ".svg";
  for (const std::string& args : std::vector<std::string>{
           "kv --model qwen3-8b --tp 3 --context 1k", "fit --model qwen3-8b --gpus 3 --context 8k",
           "breakeven --model qwen3-8b --gpus 3", "plot memory --model qwen3-8b --gpus 3 -o " + out,
           "scenario from-vllm --gpu h100 -- vllm serve Qwen/Qwen3-8B -tp 3"}) {
    const auto r = RunKvbill(args);
    EXPECT_EQ(r.exit_status, 2) << args;
    EXPECT_NE(r.err.find(why), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(RunKvbill("kv --model qwen3-8b --tp 8 --context 1k").exit_status, 0);
}

// A checkpoint's format given to --weight-format once said only "unknown
// format"; fit and plot now explain it as the scenario reader does.
TEST(FitCliTest, ACheckpointFormatIsExplainedNotUnknown) {
  const std::string known =
      "weight_format converts to: bf16, fp16, fp32, fp8, fp8-e4m3, fp8-e5m2, "
      "fp8-per-token-head, nvfp4, mxfp4, int4, int2, int4-gN, int2-gN";
  const std::string out = ::testing::TempDir() + "/int8_" + std::to_string(::getpid()) + ".svg";
  for (const char* format : {"int8", "w8a8-int8", "bnb4", "bnb8", "mxfp8", "nvfp4-w4a16"}) {
    for (const std::string& command : {std::string("fit --model qwen3-8b --gpu h100 --context 8k"),
                                       "plot memory --model qwen3-8b --gpu h100 -o " + out}) {
      const auto r = RunKvbill(command + " --weight-format " + format);
      EXPECT_EQ(r.exit_status, 2) << command << " " << format;
      EXPECT_NE(r.err.find(std::string("--weight-format: \"") + format +
                           "\" is a checkpoint's format, which kvbill reads from its "
                           "quantization_config (give that checkpoint's config.json as the "
                           "model, weight_format \"auto\"), not one it converts a model's "
                           "weights to; " +
                           known),
                std::string::npos)
          << command << " " << format << ": " << r.err;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto bad = RunKvbill("fit --model qwen3-8b --gpu h100 --context 8k --weight-format int9");
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_NE(bad.err.find("--weight-format: unknown format \"int9\""), std::string::npos) << bad.err;
}

// SGLang serves a request of at most max_req_len - 1 tokens, max_req_len =
// min(context length, pool tokens) - 1: Gemma-2-9B (context length 8,192,
// a pool of far more on an H100) serves 8,192 - 2 = 8,190, so 8,192 does
// not fit SGLang where vLLM serves it, and 8,190 does.
TEST(FitCliTest, SglangServesTwoTokensShortOfTheShorterLimit) {
  const auto over = RunKvbill(
      "fit --model gemma-2-9b --gpu h100-sxm --engine sglang --context 8192 --format json");
  ASSERT_EQ(over.exit_status, 0) << over.err;
  const auto j = nlohmann::json::parse(over.out);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["memory_fits"], true);
  EXPECT_EQ(j["max_context"], 8190);
  EXPECT_EQ(j["sglang_max_request_tokens"], 8190);
  const auto text =
      RunKvbill("fit --model gemma-2-9b --gpu h100-sxm --engine sglang --context 8192");
  EXPECT_NE(text.out.find("DOES NOT FIT SGLang's limit: 8,192 tokens is past the 8,190 it serves"),
            std::string::npos)
      << text.out;
  const auto at = RunKvbill(
      "fit --model gemma-2-9b --gpu h100-sxm --engine sglang --context 8190 --format json");
  EXPECT_EQ(nlohmann::json::parse(at.out)["fits"], true);
  const auto vllm = RunKvbill("fit --model gemma-2-9b --gpu h100-sxm --context 8192 --format json");
  EXPECT_EQ(nlohmann::json::parse(vllm.out)["fits"], true);
}

// SGLang's pool keeps every token of gpt-oss's sliding layers
// (disable_hybrid_swa_memory): 24 layers x 8 KV heads x (64 + 64) x 2 bytes
// = 49,152 bytes a token, 32,768 tokens 1,610,612,736 bytes, where vLLM's
// grouped pool holds the 12 sliding layers' 128-token window alone. On one
// H100 at SGLang's memory fraction 0.835 the capacity less the weights
// (69,787,627,453 - 13,761,264,768 = 56,026,362,685 bytes, read from the
// same run) holds 34 such sequences (34.79) and, alone, 1,139,859 tokens,
// 1,139,856 in whole 16-token blocks.
TEST(FitCliTest, SglangHoldsEveryTokenOfGptOssSlidingLayers) {
  const auto r = RunKvbill(
      "fit --model gpt-oss-20b --gpu h100-sxm --engine sglang --context 32768 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kv_bytes"], std::int64_t{1610612736});
  ASSERT_EQ(j["capacity_bytes"].get<std::int64_t>() - j["weights_bytes"].get<std::int64_t>(),
            56026362685);
  EXPECT_EQ(j["max_batch"], 34);
  EXPECT_EQ(j["memory_max_context"], 1139856);
  const auto vllm =
      RunKvbill("fit --model gpt-oss-20b --gpu h100-sxm --context 32768 --format json");
  EXPECT_LT(nlohmann::json::parse(vllm.out)["kv_bytes"].get<std::int64_t>(),
            std::int64_t{1073741824});
}

// Llama-3.1-8B at 128 tokens fits one H200: over 8 the alternatives offer
// the one GPU, named as such (not "1 GPUs (tensor parallel 1)").
TEST(FitCliTest, OneGpuIsNamedInTheSingular) {
  const auto r = RunKvbill("fit --model llama-3.1-8b --gpu h200 --gpus 8 --context 128");
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("1 GPU (no tensor parallelism)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("1 GPUs"), std::string::npos) << r.out;
}

// DeepSeek-V3's latent is whole on every GPU: only its 128 query heads
// constrain the degree, and the message says so (not "0 KV heads").
TEST(FitCliTest, ALatentModelsDegreeNamesItsQueryHeadsAlone) {
  const auto r = RunKvbill("fit --model deepseek-v3 --gpu h200 --gpus 3 --context 8k");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("3 GPUs cannot split model \"deepseek-v3\"'s 128 query heads evenly "
                       "(vLLM and SGLang require them divisible by the degree; the latent KV is "
                       "whole on every GPU)"),
            std::string::npos)
      << r.err;
}

// A reserve at or above the memory share, or a block size no engine uses,
// is a typo: exit 2 naming the flag, not a negative capacity or exabytes of
// KV. An H100's share: 85,469,849,190 usable bytes x 0.9 / 2^30 = 71.64 GiB.
// vLLM's CUDA attention backends page in multiples of 16 tokens; FlashMLA
// on Hopper in 64-token blocks only (docs/engine.md#kv-blocks). A block
// size it does not run is sized all the same, and warned, as a scenario's
// block_size_unserved; one it runs is not.
// 100,000,000 sequences of even one block of Qwen3-8B (16 x 147,456 B)
// need 236 TB: no context fits, said as "none", not "0 tokens".
TEST(FitCliTest, ABatchThatFitsNoContextSaysNone) {
  const auto r = RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --batch 100000000");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("max context at batch 100,000,000: none, 100,000,000 sequences fit no "
                       "context\n"),
            std::string::npos)
      << r.out;
}

// An A100 has no FP8 units: vLLM runs fp8 weights there with Marlin as
// W8A16 (the format matrix, docs/hardware.md#formats), and an NVFP4
// checkpoint on an H200 as W4A16. fit says so, as simulate's
// unsupported_format does; an H100 computes fp8 as W8A8 and says nothing.
TEST(FitCliTest, AWeightOnlyFallbackIsSaid) {
  const auto a100 =
      RunKvbill("fit --model qwen3-8b --gpu a100-80gb --context 8k --weight-format fp8");
  ASSERT_EQ(a100.exit_status, 0) << a100.err;
  EXPECT_NE(a100.out.find("warning [unsupported_format]: a100-80gb has no units for the format's "
                          "arithmetic, so the engine runs a weight-only fallback: fp8-e4m3 "
                          "weights run as W8A16"),
            std::string::npos)
      << a100.out;
  const auto nvfp4 = RunKvbill("fit --model " + std::string(KVBILL_SOURCE_DIR) +
                               "/tests/data/configs/qwen3.5-397b-a17b-nvfp4.json --gpu h200 "
                               "--gpus 8 --context 8k");
  ASSERT_EQ(nvfp4.exit_status, 0) << nvfp4.err;
  EXPECT_NE(nvfp4.out.find("nvfp4 weights run as W4A16"), std::string::npos) << nvfp4.out;
  const auto h100 =
      RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --weight-format fp8");
  EXPECT_EQ(h100.out.find("unsupported_format"), std::string::npos) << h100.out;
}

TEST(FitCliTest, ABlockSizeVllmDoesNotRunIsWarned) {
  const auto seven = RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --block-size 7");
  ASSERT_EQ(seven.exit_status, 0) << seven.err;
  EXPECT_NE(seven.out.find("warning [block_size_unserved]: --block-size 7: vLLM serves qwen3-8b "
                           "on h100-sxm in 16-token blocks"),
            std::string::npos)
      << seven.out;
  const auto mla = RunKvbill(
      "fit --model deepseek-v3 --gpu h200 --gpus 8 --context 8k --block-size 16 --format json");
  ASSERT_EQ(mla.exit_status, 0) << mla.err;
  const auto j = nlohmann::json::parse(mla.out);
  bool warned = false;
  for (const auto& w : j["warnings"]) warned = warned || w["code"] == "block_size_unserved";
  EXPECT_TRUE(warned) << j["warnings"];
  const auto kept = RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --block-size 32");
  EXPECT_EQ(kept.out.find("block_size_unserved"), std::string::npos) << kept.out;
}

TEST(FitCliTest, ReserveAndBlockSizeOutOfRangeAreErrors) {
  const auto r = RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --reserve-gib 72");
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_EQ(r.err,
            "kvbill fit: --reserve-gib: 72 GiB is not less than the 71.64 GiB that "
            "--memory-fraction 0.9 leaves of h100-sxm's usable memory\n");
  EXPECT_EQ(
      RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --reserve-gib 71").exit_status,
      0);
  for (const std::string cmd : {"fit --model qwen3-8b --context 8k", "kv --model qwen3-8b"}) {
    const auto big = RunKvbill(cmd + " --block-size 1048577");
    EXPECT_EQ(big.exit_status, 2) << cmd;
    EXPECT_NE(big.err.find("--block-size: must be in [1, 1048576], got 1048577"), std::string::npos)
        << big.err;
    EXPECT_EQ(RunKvbill(cmd + " --block-size 1048576").exit_status, 0) << cmd;
  }
  // The reserve of the engine's profile run at a --max-num-batched-tokens
  // no GPU holds names the flag.
  const auto budget = RunKvbill(
      "fit --model qwen3-8b --gpu h100-sxm --context 8k --max-num-batched-tokens 100000000");
  EXPECT_EQ(budget.exit_status, 2);
  EXPECT_EQ(budget.err.rfind("kvbill fit: --max-num-batched-tokens 100,000,000: the activation "
                             "reserve (vllm's profile run at 100,000,000 batched tokens), ",
                             0),
            0u)
      << budget.err;
}

// Qwen3-32B's config serves 40,960 tokens: of 32k, 128k and 1M the last two
// are past it. The bytes are still printed (arithmetic), flagged, with a
// context_limit warning as fit and plot give; 32k alone warns nothing.
TEST(KvCliTest, ContextsPastTheModelsLimitAreFlagged) {
  const auto r = RunKvbill("kv --model qwen3-32b --context 32k,128k,1M --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["max_model_len"], 40960);
  ASSERT_EQ(j["contexts"].size(), 3u);
  EXPECT_EQ(j["contexts"][0]["past_model_limit"], false);
  EXPECT_EQ(j["contexts"][1]["past_model_limit"], true);
  EXPECT_EQ(j["contexts"][2]["past_model_limit"], true);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["code"], "context_limit");
  EXPECT_EQ(j["warnings"][0]["message"],
            "131,072 and 1,048,576 tokens are past qwen3-32b's max_model_len 40,960 (vLLM and "
            "SGLang refuse such requests; the bytes are the arithmetic's alone)");
  const auto table = RunKvbill("kv --model qwen3-32b --context 32k,128k");
  EXPECT_NE(table.out.find("warning [context_limit]: 131,072 tokens is past qwen3-32b's "
                           "max_model_len 40,960"),
            std::string::npos)
      << table.out;
  EXPECT_EQ(RunKvbill("kv --model qwen3-32b --context 32k").out.find("context_limit"),
            std::string::npos);
}

// NVFP4 KV has a size on any GPU, but only Blackwell runs it (the format
// matrix, docs/hardware.md#formats): on an H100 memory would hold it (8k
// tokens of Qwen3-8B on 80 GB) but the verdict is "does not run", `fits`
// false and `--check` exits 1, with a format_not_run warning saying why;
// on a B200 none.
TEST(FitCliTest, AFormatNoEngineRunsOnTheGpuDoesNotFit) {
  const auto hopper =
      RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --kv-format nvfp4 --format json");
  ASSERT_EQ(hopper.exit_status, 0) << hopper.err;
  const auto j = nlohmann::json::parse(hopper.out);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["memory_fits"], true);
  EXPECT_EQ(j["runnable"], false);
  const auto check =
      RunKvbill("fit --model qwen3-8b --gpu h100-sxm --context 8k --kv-format nvfp4 --check");
  EXPECT_EQ(check.exit_status, 1) << check.out;
  EXPECT_NE(check.out.find("DOES NOT RUN: no engine serves this format on h100-sxm (memory "
                           "alone would hold it with "),
            std::string::npos)
      << check.out;
  // The limits below the verdict are memory's, and say so: no max batch
  // or GPU count is offered for a format nothing runs.
  for (const char* line : {"max context at batch 1: none, no engine serves this format on "
                           "h100-sxm (memory alone: ",
                           "max batch at 8,192 tokens: none, no engine serves this format on "
                           "h100-sxm (memory alone holds ",
                           "fewest GPUs that fit: none, no engine serves this format on h100-sxm "
                           "(memory alone: 1)"}) {
    EXPECT_NE(check.out.find(line), std::string::npos) << line << "\n" << check.out;
  }
  ASSERT_EQ(j["warnings"].size(), 1u) << j.dump();
  EXPECT_EQ(j["warnings"][0]["code"], "format_not_run");
  EXPECT_EQ(j["warnings"][0]["message"].get<std::string>().rfind(
                "nvfp4 KV cache on h100-sxm (NVIDIA Hopper): no engine runs it", 0),
            0u);
  const auto blackwell =
      RunKvbill("fit --model qwen3-8b --gpu b200 --context 8k --kv-format nvfp4 --format json");
  ASSERT_EQ(blackwell.exit_status, 0) << blackwell.err;
  EXPECT_TRUE(nlohmann::json::parse(blackwell.out)["warnings"].empty());
  EXPECT_EQ(nlohmann::json::parse(blackwell.out)["fits"], true);
  EXPECT_EQ(nlohmann::json::parse(blackwell.out)["runnable"], true);
}

// The checkpoint's own weights are a format too: Qwen3.6-35B-A3B's NVFP4
// checkpoint on an MI300X (CDNA 3 has no FP4 units, and Marlin's FP4
// fallback is CUDA only) does not run, as simulate refuses it; on a B200 it
// does. fit once said FITS for it.
TEST(FitCliTest, ACheckpointsOwnWeightsNoEngineRunsDoNotRun) {
  const std::string model =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/qwen3.6-35b-a3b-nvfp4.json";
  const auto amd =
      RunKvbill("fit --model " + model + " --gpu mi300x --context 8k --kv-format bf16 --check");
  EXPECT_EQ(amd.exit_status, 1) << amd.out << amd.err;
  EXPECT_NE(amd.out.find("warning [format_not_run]: qwen3.6-35b-a3b-nvfp4's own weights: "
                         "nvfp4-w4a16 weights on mi300x"),
            std::string::npos)
      << amd.out;
  EXPECT_NE(amd.out.find("DOES NOT RUN: no engine serves this format on mi300x"), std::string::npos)
      << amd.out;
  const auto nvidia =
      RunKvbill("fit --model " + model + " --gpu b200 --context 8k --kv-format bf16 --format json");
  ASSERT_EQ(nvidia.exit_status, 0) << nvidia.err;
  EXPECT_EQ(nlohmann::json::parse(nvidia.out)["runnable"], true);
}

// Llama-3.1-405B's BF16 weights, 405,853,388,800 x 2 B = 755.96 GiB, are
// far beyond one L4: no context and no batch, said as such rather than "0".
TEST(FitCliTest, WeightsThatLeaveNoRoomSayWhyThereIsNoContext) {
  const auto r = RunKvbill("fit --model llama-3.1-405b --gpu l4 --context 8k");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  for (const char* line :
       {"max context at batch 1: none, the weights alone (755.96 GiB) leave no room for KV in ",
        "max batch at 8,192 tokens: none, the weights alone (755.96 GiB) leave no room for KV "
        "in "}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
}

// SGLang stores the model's dtype or fp8 (formats.md): an NVFP4 KV cache on
// a B200, which vLLM runs, does not run on SGLang, and no alternative
// offers it there.
TEST(FitCliTest, SglangRunsOnlyTheKvFormatsItStores) {
  const auto nvfp4 = RunKvbill(
      "fit --model llama-3.1-8b --gpu b200 --engine sglang --kv-format nvfp4 --context 8k "
      "--check");
  EXPECT_EQ(nvfp4.exit_status, 1) << nvfp4.out << nvfp4.err;
  EXPECT_NE(nvfp4.out.find("DOES NOT RUN: SGLang does not store this KV format"), std::string::npos)
      << nvfp4.out;
  EXPECT_EQ(RunKvbill("fit --model llama-3.1-8b --gpu b200 --kv-format nvfp4 --context 8k --check")
                .exit_status,
            0);
  // Llama-3.1-70B at 128k x 8 does not fit one B200: the alternatives
  // offer fp8 KV on SGLang, never nvfp4.
  const auto alternatives = RunKvbill(
      "fit --model llama-3.1-70b --gpu b200 --engine sglang --context 128k --batch 8 --format "
      "json");
  ASSERT_EQ(alternatives.exit_status, 0) << alternatives.err;
  const auto j = nlohmann::json::parse(alternatives.out);
  std::vector<std::string> changes;
  for (const auto& a : j["alternatives"]) {
    changes.push_back(a["change"].get<std::string>());
  }
  EXPECT_NE(std::find(changes.begin(), changes.end(), "fp8-e4m3 KV cache"), changes.end());
  EXPECT_EQ(std::find(changes.begin(), changes.end(), "nvfp4 KV cache"), changes.end());
}

// DeepSeek-V3 keeps a latent (MLA) cache, which vLLM's MLA backends store
// as the model's dtype or fp8 only: its int4 cache (memory would hold it
// on 8 H200s) does not run, --check exits 1; under fp8 it fits.
TEST(FitCliTest, VllmStoresALatentCacheOnlyAsItsMlaBackendsDo) {
  const std::string fit = "fit --model deepseek-v3 --gpu h200 --gpus 8 --context 32k --check";
  const auto int4 = RunKvbill(fit + " --kv-format int4");
  EXPECT_EQ(int4.exit_status, 1) << int4.out << int4.err;
  EXPECT_NE(int4.out.find("DOES NOT RUN: vLLM does not store this KV format for this model "
                          "(memory alone would hold it"),
            std::string::npos)
      << int4.out;
  EXPECT_NE(int4.out.find("warning [format_not_run]: vLLM stores no int4 KV cache for "
                          "deepseek-v3's latent (MLA) attention"),
            std::string::npos)
      << int4.out;
  EXPECT_EQ(RunKvbill(fit + " --kv-format fp8").exit_status, 0);
}

// gpt-oss-20b's 12 sliding layers (a 128-token window, 16-token blocks)
// hold the prefill chunk beside their window: vLLM computes 2,048 tokens an
// iteration on an L4 (below 70 GiB), ceil(128 / 16) + ceil(2,048 / 16) + 1
// = 137 blocks; with --max-num-batched-tokens 16, 8 + 1 + 1 = 10. The full
// layers get the other 127 blocks: 127 x 16 = 2,032 tokens more. The flag
// also sets the profile run's budget, as a scenario's key does.
TEST(FitCliTest, SlidingLayersHoldThePrefillChunkOfMaxNumBatchedTokens) {
  const std::string fit =
      "fit --model gpt-oss-20b --gpu l4 --memory-fraction 0.72 --context 8k --format json";
  const auto engine = RunKvbill(fit + " --reserve-gib 0");
  ASSERT_EQ(engine.exit_status, 0) << engine.err;
  const auto j = nlohmann::json::parse(engine.out);
  EXPECT_EQ(j["prefill_chunk_tokens"], 2048);
  const auto small = RunKvbill(fit + " --reserve-gib 0 --max-num-batched-tokens 16");
  ASSERT_EQ(small.exit_status, 0) << small.err;
  const auto k = nlohmann::json::parse(small.out);
  EXPECT_EQ(k["prefill_chunk_tokens"], 16);
  EXPECT_EQ(
      k["memory_max_context"].get<std::int64_t>() - j["memory_max_context"].get<std::int64_t>(),
      2032);
  const auto reserve = RunKvbill(fit + " --max-num-batched-tokens 4096");
  ASSERT_EQ(reserve.exit_status, 0) << reserve.err;
  EXPECT_EQ(nlohmann::json::parse(reserve.out)["reserve_source"],
            "vllm's profile run at 4,096 batched tokens");
  const auto text =
      RunKvbill("fit --model gpt-oss-20b --gpu l4 --memory-fraction 0.72 --context 8k");
  EXPECT_NE(
      text.out.find("prefill     2,048 tokens an iteration (max_num_batched_tokens): each "
                    "sliding or chunked layer holds them beside its window for the sequence being "
                    "prefilled (one of the batch)\n"),
      std::string::npos)
      << text.out;
  EXPECT_NE(RunKvbill(fit + " --max-num-batched-tokens 0")
                .err.find("--max-num-batched-tokens: must be at least 1"),
            std::string::npos);
}

// Layers that all slide hold at most their window: memory bounds no
// context, and the JSON says so with null, not the search's 2^30 bound.
// The longest context is the model's limit (1,000 here).
TEST(FitCliTest, MemoryThatHoldsAnyContextHasNoLongest) {
  const std::string path = ::testing::TempDir() + "/sliding_config.json";
  std::ofstream(path) << R"({"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
      "sliding_window": 16, "max_position_embeddings": 1000})";
  const auto r = RunKvbill("fit --model " + path + " --gpu h100-sxm --context 512 --format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["memory_max_context"].is_null()) << j["memory_max_context"];
  EXPECT_EQ(j["memory_max_context_unbounded"], true);
  EXPECT_EQ(j["max_context"], 1000);
  // Without the limit nothing bounds the context: null there too, with
  // max_context_unbounded true.
  const auto w = RunKvbill("fit --model " + path +
                           " --gpu h100-sxm --context 512 --ignore-model-limit --format json");
  ASSERT_EQ(w.exit_status, 0) << w.err;
  const auto k = nlohmann::json::parse(w.out);
  EXPECT_TRUE(k["max_context"].is_null()) << k["max_context"];
  EXPECT_EQ(k["max_context_unbounded"], true);
  std::filesystem::remove(path);
}

// One sequence past 2^60 bytes of KV is refused as `kv` refuses it, where
// fit printed sizes held at 2^60 - 1 as if exact: 1,024 layers x 32 KV
// heads x head dim 1,024 x 2 (K, V) x 4 B (fp32) = 2^28 B a token, x 2^40
// tokens = 2^68 B.
TEST(FitCliTest, ASequencePast2To60BytesIsRefused) {
  const auto r = RunKvbill(
      "fit --model llama-3.1-8b --set num_hidden_layers=1024 --set num_attention_heads=32 "
      "--set num_key_value_heads=32 --set head_dim=1024 --kv-format fp32 --gpu h100-sxm "
      "--context 1048576M --ignore-model-limit");
  EXPECT_EQ(r.exit_status, 2) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--context: one sequence of 1099511627776 tokens (in blocks of 16) holds "
                       "more than 2^60 bytes of KV, past what kvbill counts"),
            std::string::npos)
      << r.err;
}

// A GPU file whose usable memory is more than the card holds is refused:
// 100 GiB usable of an 80 GB card (at most 80 GiB: a vendor's GB of HBM are
// GiB). The catalog's H100 SXM, 79.6 of 80, is fine.
TEST(FitCliTest, UsableMemoryPastTheCardsIsRefused) {
  const std::string path = ::testing::TempDir() + "/usable_gt.json";
  std::ofstream(path) << R"({"id": "my-gpu", "memory_gb": 80, "usable_memory_gib": 100,
      "hbm_bandwidth_tb_s": 3.35, "dense_tflops": {"bf16": 989}, "usd_per_gpu_hour": 2.95})";
  const auto r = RunKvbill("fit --model llama-3.1-8b --gpu " + path + " --context 8k");
  EXPECT_EQ(r.exit_status, 2) << r.out;
  EXPECT_NE(r.err.find("usable_gt.json#/usable_memory_gib: 100 is more than the card's memory_gb "
                       "80 (a vendor's GB of HBM are GiB: at most 80 GiB are usable)"),
            std::string::npos)
      << r.err;
  std::filesystem::remove(path);
}

// A format no engine runs on the GPU is drawn (the sizes are memory's) but
// said, as `fit` says it: on stderr and in the chart's subtitle.
TEST(PlotCliTest, AFormatNoEngineRunsIsSaid) {
  const std::string out = ::testing::TempDir() + "/memory_plot_nvfp4.svg";
  const auto r =
      RunKvbill("plot memory --model qwen3-8b --gpu h100-sxm --kv-format nvfp4 --out " + out);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.err.find("kvbill plot: warning [format_not_run]: nvfp4 KV cache on h100-sxm"),
            std::string::npos)
      << r.err;
  std::ifstream in(out);
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg.find("no engine runs nvfp4 KV on h100-sxm: memory alone"), std::string::npos);
  const auto blackwell =
      RunKvbill("plot memory --model qwen3-8b --gpu b200 --kv-format nvfp4 --out " + out);
  ASSERT_EQ(blackwell.exit_status, 0) << blackwell.err;
  EXPECT_EQ(blackwell.err.find("format_not_run"), std::string::npos) << blackwell.err;
  std::filesystem::remove(out);
}

// Each curve stops at its model's max_model_len: Qwen3-8B's 40,960 is below
// a plot from 1M, so it has no curve, and says so (the legend still names
// it); Llama-3.1-8B's 131,072 is below it too.
TEST(PlotCliTest, AModelWithNoCurveInTheRangeIsSaid) {
  const std::string out = ::testing::TempDir() + "/memory_plot_empty.svg";
  const auto r = RunKvbill(
      "plot memory --model qwen3-8b,llama-3.1-8b --min-context 1M --max-context 2M --out " + out);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  for (const char* line : {"kvbill plot: warning [context_limit]: qwen3-8b has no curve: its "
                           "max_model_len 40,960 is below --min-context",
                           "kvbill plot: warning [context_limit]: llama-3.1-8b has no curve: its "
                           "max_model_len 131,072 is below --min-context"}) {
    EXPECT_NE(r.err.find(line), std::string::npos) << line << "\n" << r.err;
  }
  const auto wide = RunKvbill("plot memory --model qwen3-8b --out " + out);
  ASSERT_EQ(wide.exit_status, 0) << wide.err;
  EXPECT_EQ(wide.err.find("has no curve"), std::string::npos) << wide.err;
  std::filesystem::remove(out);
}

// NVFP4 KV on an H100 runs nowhere: past the model's 40,960 tokens too, the
// only change offered is a KV format that runs; no "context 40,960 tokens
// (the model's max_model_len)" row computed in nvfp4.
TEST(FitCliTest, AFormatThatDoesNotRunGetsNoShorterContextInIt) {
  const auto r = RunKvbill(
      "fit --model qwen3-32b --gpu h100-sxm --kv-format nvfp4 --context 200k --batch 4 "
      "--format json");
  ASSERT_EQ(r.exit_status, 0) << r.err;  // 1 only with --check
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["alternatives"].size(), 1u) << r.out;
  EXPECT_EQ(j["alternatives"][0]["change"], "fp8-e4m3 KV cache (nvfp4 does not run here)");
}

// MiniMax-M2.5's block-FP8 experts (1,536 wide, 128-blocks) split over 8
// GPUs leave 192 a GPU, which runs only with expert parallelism: fit sizes
// it and says so; kv sizes its KV (the MLP blocks do not change it); over
// 4 GPUs (384, three blocks) nothing is said.
TEST(FitCliTest, ADegreeThatNeedsExpertParallelismIsSizedAndSaid) {
  const std::string model =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/minimax-m2.5.json";
  const auto fit =
      RunKvbill("fit --model " + model + " --gpu h200 --gpus 8 --context 8k --format json");
  ASSERT_EQ(fit.exit_status, 0) << fit.err;
  const auto j = nlohmann::json::parse(fit.out);
  ASSERT_TRUE(j.contains("expert_parallel_needed")) << fit.out;
  EXPECT_NE(j["expert_parallel_needed"].get<std::string>().find("192 a GPU"), std::string::npos);
  const auto text = RunKvbill("fit --model " + model + " --gpu h200 --gpus 8 --context 8k");
  EXPECT_NE(text.out.find("note: runs only with expert parallelism"), std::string::npos)
      << text.out;
  EXPECT_EQ(RunKvbill("kv --model " + model + " --tp 8").exit_status, 0);
  const auto four =
      RunKvbill("fit --model " + model + " --gpu h200 --gpus 4 --context 8k --format json");
  ASSERT_EQ(four.exit_status, 0) << four.err;
  EXPECT_FALSE(nlohmann::json::parse(four.out).contains("expert_parallel_needed"));
}

TEST(CatalogCliTest, ListsModelsAndGpus) {
  const auto models = RunKvbill("models");
  ASSERT_EQ(models.exit_status, 0) << models.err;
  EXPECT_NE(models.out.find("deepseek-v3"), std::string::npos);
  const auto gpus = RunKvbill("gpus --format json");
  ASSERT_EQ(gpus.exit_status, 0) << gpus.err;
  // h100-sxm, h100-pcie, h100-nvl, h200, h20, b200, gb200, b300, a100-80gb,
  // a100-40gb, l40s, l4, rtx-pro-6000, mi300x, mi325x, mi355x.
  EXPECT_EQ(nlohmann::json::parse(gpus.out).size(), 16u);
  // The format matrix in JSON is the catalog's own (it printed Markdown
  // whatever --format said): NVFP4 KV runs on Blackwell and nowhere else.
  const auto matrix = RunKvbill("gpus --formats --format json");
  ASSERT_EQ(matrix.exit_status, 0) << matrix.err;
  const auto m = nlohmann::json::parse(matrix.out);
  ASSERT_TRUE(m.contains("architectures") && m.contains("formats"));
  const auto nvfp4 = m["formats"]["kv_cache"]["nvfp4"];
  EXPECT_EQ(nvfp4["all"]["runs"], false) << nvfp4.dump();
  EXPECT_EQ(nvfp4["blackwell"]["computed"], "fp8") << nvfp4.dump();
}

TEST(HelpCliTest, HelpReadsWell) {
  const auto r = RunKvbill("help");
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_NE(r.out.find("usage: kvbill COMMAND"), std::string::npos);
  const auto kv = RunKvbill("kv --help");
  EXPECT_EQ(kv.exit_status, 0);
  EXPECT_NE(kv.out.find("usage: kvbill kv --model M"), std::string::npos);
  EXPECT_EQ(RunKvbill("nosuchcommand").exit_status, 2);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(PlotCliTest, WritesAnSvgAndNothingOnBadInput) {
  const std::string out = ::testing::TempDir() + "/memory_plot.svg";
  std::filesystem::remove(out);
  const auto bad = RunKvbill("plot memory --model qwen3-32b,nope --gpu h100-sxm --out " + out);
  EXPECT_EQ(bad.exit_status, 2);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(RunKvbill("plot pie --out " + out).exit_status, 2);
  // A model named twice would draw two curves under one label; an empty
  // name (a trailing comma) is a typo.
  const auto twice = RunKvbill("plot memory --model qwen3-8b,qwen3-8b --out " + out);
  EXPECT_EQ(twice.exit_status, 2);
  EXPECT_EQ(twice.err, "kvbill plot: --model: \"qwen3-8b\" names a model named before\n");
  const auto spelt = RunKvbill("plot memory --model qwen3-8b,Qwen/Qwen3-8B --out " + out);
  EXPECT_EQ(spelt.exit_status, 2);
  EXPECT_EQ(spelt.err, "kvbill plot: --model: \"Qwen/Qwen3-8B\" names a model named before\n");
  const auto trailing = RunKvbill("plot memory --model qwen3-8b, --out " + out);
  EXPECT_EQ(trailing.exit_status, 2);
  EXPECT_EQ(trailing.err, "kvbill plot: --model: an empty name in \"qwen3-8b,\"\n");
  EXPECT_FALSE(std::filesystem::exists(out));
  const auto r =
      RunKvbill("plot memory --model qwen3-32b,llama-3.1-8b --gpu h100-sxm --out " + out);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::ifstream in(out);
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  // After vLLM's activation reserve (FitCliTest.TheEnginesReserveComesOffAs-
  // SimulatesPoolDoes) Qwen3-32B's KV fits 32,144 tokens on an H100 SXM
  // (31.39 x 1,024), less than its 40,960-token context. Llama-3.1-8B: its
  // reserve is 33.655 x 8,192 x 4,096 / 2^30 + 1.451 = 2.50 GiB, and 71.64 -
  // 2.50 GiB less 16.06 GB of weights leaves ~58 GB, above its whole 128k
  // context's 131,072 x 131,072 B = 17.2 GB.
  EXPECT_NE(svg.find("qwen3-32b fits up to 31.4k tokens"), std::string::npos);
  EXPECT_NE(svg.find("llama-3.1-8b: its whole 128k context fits"), std::string::npos);
  EXPECT_NE(svg.find("capacity - qwen3-32b weights and reserve: 7.9 GiB"), std::string::npos);
  EXPECT_EQ(r.err.find("context_limit"), std::string::npos);
  // Memory alone, the reserve 0: 43,472 tokens (fit_test.cc), past the 40k
  // context, so the whole context fits.
  const auto alone =
      RunKvbill("plot memory --model qwen3-32b --gpu h100-sxm --reserve-gib 0 --out " + out);
  ASSERT_EQ(alone.exit_status, 0) << alone.err;
  std::ifstream in_alone(out);
  const std::string svg_alone((std::istreambuf_iterator<char>(in_alone)),
                              std::istreambuf_iterator<char>());
  EXPECT_NE(svg_alone.find("qwen3-32b: its whole 40k context fits"), std::string::npos);
  EXPECT_NE(svg_alone.find("capacity - qwen3-32b weights: 10.6 GiB"), std::string::npos);
  // Past the limit only as a what-if, which says so.
  const auto what_if =
      RunKvbill("plot memory --model qwen3-32b --gpu h100-sxm --ignore-model-limit --out " + out);
  ASSERT_EQ(what_if.exit_status, 0) << what_if.err;
  EXPECT_NE(what_if.err.find("warning [context_limit]: qwen3-32b is drawn past its max_model_len "
                             "40,960"),
            std::string::npos)
      << what_if.err;
  std::filesystem::remove(out);
}

TEST(CliArgumentsTest, AStrayPositionalArgumentIsAnErrorForEveryCommand) {
  // A scenario given without -s (`kvbill simulate s.json`) used to be ignored:
  // the bundled default scenario ran instead. Every command without
  // positional arguments now refuses one, with exit status 2 and no output.
  for (const std::string command :
       {"simulate", "compare", "sweep --scenario default", "breakeven", "check", "report",
        "kv --model qwen3-32b", "fit --model qwen3-32b --gpu h100-sxm", "models", "gpus"}) {
    SCOPED_TRACE(command);
    const auto r = RunKvbill(command + " stray.json");
    EXPECT_EQ(r.exit_status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("too many positional options"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
