// Regression tests for what the fuzz targets in fuzz/ found (docs/fuzzing.md):
// each input, cut down to what triggers it, gives the error it should have
// given instead of a crash or undefined behaviour.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "kvbill/cost/price_sheet.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/trace/importers.h"
#include "trace/timestamp.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;

// The first error of reading `text` with `make_reader`, or "" when none.
template <typename MakeReader>
std::string FirstError(MakeReader make_reader, const std::string& text, const std::string& name) {
  std::unique_ptr<TraceReader> reader =
      make_reader(std::make_unique<std::istringstream>(text), name, ReaderOptions{});
  std::string error;
  ReadAllTasks(reader.get(), &error);
  return error;
}

// Finding 1 (azure, codex, claude_code): a four-digit year far from 1970
// overflowed the 64-bit nanoseconds (signed overflow, UBSan).
TEST(FuzzRegressionTest, TimestampOutsideTheNanosecondRangeIsAnError) {
  EXPECT_EQ(ParseTimestamp("0001-01-01T00:00:00Z").error().message(),
            "bad timestamp \"0001-01-01T00:00:00Z\": outside the years 1970 to 2261");
  EXPECT_EQ(ParseTimestamp("9999-12-31T23:59:59Z").error().message(),
            "bad timestamp \"9999-12-31T23:59:59Z\": outside the years 1970 to 2261");
  EXPECT_FALSE(ParseTimestamp("2262-01-01T00:00:00Z").ok());
  EXPECT_FALSE(ParseTimestamp("1969-12-31T23:59:59Z").ok());
  // The last second accepted: 1970-01-01 to 2262-01-01 is 292 * 365 days
  // plus 71 leap days (1972..2260 in steps of 4 is 73, less 2100 and 2200),
  // 106,651 days; one second before is 106,651 * 86,400 - 1 s.
  auto last = ParseTimestamp("2261-12-31T23:59:59.999999999Z");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->ns, (106'651LL * 86'400 - 1) * 1'000'000'000 + 999'999'999);
  // The first one: the epoch, also as local time east of UTC.
  auto first = ParseTimestamp("1970-01-01T00:00:00+14:00");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->ns, -14LL * 3600 * 1'000'000'000);
  EXPECT_EQ(FirstError(&NewAzureReader,
                       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                       "0001-01-01 00:00:00,10,5\n",
                       "a.csv"),
            "a.csv:2: bad timestamp \"0001-01-01 00:00:00\": outside the years 1970 to 2261");
}

// Finding 2 (tracelab_csv): with skip_bad, the rows after a header that lacks
// a required column were decoded with that column missing: std::map::at
// threw out of the reader (std::terminate).
TEST(FuzzRegressionTest, TraceLabCsvRowsAfterABadHeaderAreBadLines) {
  const std::string text =
      "session_id,roend_idx,prefix_len,input_len,output_len,tool_wait_after_ms\n"
      "0,0,12461,5875,124,182\n";
  EXPECT_EQ(FirstError(&NewTraceLabCsvReader, text, "t.csv"), "t.csv:1: missing column round_idx");
  std::unique_ptr<TraceReader> lenient = NewTraceLabCsvReader(
      std::make_unique<std::istringstream>(text), "t.csv", ReaderOptions{.skip_bad = true});
  std::string error;
  EXPECT_TRUE(ReadAllTasks(lenient.get(), &error).empty());
  EXPECT_EQ(error, "");
  ASSERT_EQ(lenient->bad_lines().count, 2);
  EXPECT_EQ(lenient->bad_lines().first_messages[1],
            "t.csv:2: missing column round_idx in the header");
}

// Finding 3 (tracelab): rows are ordered by round_index, and a later round
// that started earlier gave a task whose time ran backwards and a negative
// tool wait (the task broke ValidateTask).
TEST(FuzzRegressionTest, TraceLabRoundStartingBeforeThePreviousOneIsAnError) {
  const std::string row =
      R"({"session_id":"s","round_index":%R,"input_tokens_total":100,"prefix_tokens":0,)"
      R"("output_tokens":5,"timing_events":[{"timestamp":"2025-08-07T10:00:0%SZ"}]})";
  const auto make_row = [&](char round, char second) {
    std::string text = row;
    text.replace(text.find("%R"), 2, 1, round);
    text.replace(text.find("%S"), 2, 1, second);
    return text + "\n";
  };
  EXPECT_EQ(FirstError(&NewTraceLabReader, make_row('0', '5') + make_row('1', '0'), "t.jsonl"),
            "t.jsonl: session \"s\": round_index 1 starts before round_index 0 "
            "(time runs backwards)");
  EXPECT_EQ(FirstError(&NewTraceLabReader, make_row('1', '5') + make_row('0', '0'), "t.jsonl"), "");
}

// Finding 4 (tracelab_csv): a header naming a column twice mapped fewer
// names than it had fields, so a row of that many fields passed the count
// check and was indexed past its end (heap-buffer-overflow).
TEST(FuzzRegressionTest, TraceLabCsvHeaderNamingAColumnTwiceIsAnError) {
  const std::string text =
      "session_id,round_idx,prefix_len,input_len,output_len,tool_wait_after_ms,session_id\n"
      "0,0,100,20,5,0\n";
  EXPECT_EQ(FirstError(&NewTraceLabCsvReader, text, "t.csv"),
            "t.csv:1: column \"session_id\" appears twice");
  std::unique_ptr<TraceReader> lenient = NewTraceLabCsvReader(
      std::make_unique<std::istringstream>(text), "t.csv", ReaderOptions{.skip_bad = true});
  EXPECT_TRUE(ReadAllTasks(lenient.get()).empty());
  ASSERT_EQ(lenient->bad_lines().count, 2);
  EXPECT_EQ(lenient->bad_lines().first_messages[1],
            "t.csv:2: column \"session_id\" appears twice in the header");
}

// Finding 5 (the suite under UBSan, tests/data/malformed/config_huge.json):
// a config count written as a float beyond 64 bits was converted to an
// integer before its range was checked (float-cast-overflow).
TEST(FuzzRegressionTest, ConfigCountBeyondSixtyFourBitsIsAnError) {
  const auto config = [](const std::string& heads) {
    return R"({"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,)"
           R"("num_key_value_heads":)" +
           heads + R"(,"vocab_size":128256,"intermediate_size":14336})";
  };
  EXPECT_EQ(ParseHfConfig(config("1e20"), "c.json", "c").error().message(),
            "c.json: num_key_value_heads: must be a positive integer, got 1e+20");
  // 2^63 = 9,223,372,036,854,775,808 is the first float past the range.
  EXPECT_EQ(ParseHfConfig(config("9223372036854775808.0"), "c.json", "c").error().message(),
            "c.json: num_key_value_heads: must be a positive integer, got 9.223372036854776e+18");
  EXPECT_EQ(ParseHfConfig(config("-1e19"), "c.json", "c").error().message(),
            "c.json: num_key_value_heads: must be a positive integer, got -1e+19");
  // A whole float inside the range is still read as the integer it is.
  EXPECT_TRUE(ParseHfConfig(config("8.0"), "c.json", "c").ok());
}

// Finding 6 (price_sheet, in CI's 15 s run): a LiteLLM entry whose
// litellm_provider is not a string threw from nlohmann's value() and ended
// the program.
TEST(FuzzRegressionTest, LiteLlmProviderThatIsNotAStringIsAnError) {
  const std::string text =
      R"({"claude-haiku-4-5": {"input_cost_per_token": 1e-06, "output_cost_per_token": 5e-06,)"
      R"( "litellm_provider": 0}})";
  const auto sheet = ParsePriceSheet(text, "prices.json");
  ASSERT_FALSE(sheet.ok());
  EXPECT_NE(sheet.error().message().find("/claude-haiku-4-5/litellm_provider: expected a string"),
            std::string::npos)
      << sheet.error().message();
}

// Found beside finding 6 by reading for the same pattern: a quantization
// method that is not a string threw the same way. It is an error naming the
// field (kvbill cannot tell how such weights are stored), not a crash.
TEST(FuzzRegressionTest, QuantMethodThatIsNotAStringIsAnError) {
  const std::string config =
      R"({"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,)"
      R"("num_key_value_heads":8,"vocab_size":128256,"intermediate_size":14336,)"
      R"("quantization_config":{"quant_method":7}})";
  auto m = ParseHfConfig(config, "c.json", "c");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message(),
            "c.json: quantization_config.quant_method: unknown method 7 (known: fp8, mxfp4, "
            "compressed-tensors, modelopt, awq, gptq, auto-round, quark, torchao, bitsandbytes, "
            "fbgemm_fp8)");
}

// Finding from a mutation sweep of tests/data/configs (2026-12-05): a
// Nemotron-H config whose MoE blocks ("E") have one routed expert read
// per-layer expert sizes that were never resolved (a segfault); a torchao
// config without _type and a Quark input spec with a non-boolean
// is_dynamic were internal errors (weight_formats_test.cc covers those).
TEST(FuzzRegressionTest, MoeBlockWithOneRoutedExpertIsAnError) {
  const std::string config =
      R"({"model_type": "nemotron_h", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
          "intermediate_size": 128, "vocab_size": 100, "hybrid_override_pattern": "*E",
          "n_routed_experts": 1, "num_experts_per_tok": 1, "moe_intermediate_size": 32,
          "moe_shared_expert_intermediate_size": 32})";
  auto m = ParseHfConfig(config, "c.json", "c");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message(),
            "c.json: n_routed_experts: layer 1 is a mixture of experts, but the config gives it no "
            "more than one routed expert");
}

// The same sweep: DeepSeek-V4's NVFP4 release (quant_method fp8 beside a
// ModelOpt quant_algo) with a quant_algo that is not a string stopped the
// run with an internal error (json::value on a mismatched type); it is now
// read as a plain fp8 checkpoint, as any config without the MIXED_PRECISION
// map.
TEST(FuzzRegressionTest, QuantAlgoThatIsNotAStringIsNotAnInternalError) {
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) +
                   "/tests/data/configs/deepseek-v4-flash-nvfp4.json");
  ASSERT_TRUE(in.good());
  nlohmann::json config = nlohmann::json::parse(in);
  for (const nlohmann::json& bad : {nlohmann::json::array({0, 1}), nlohmann::json(0)}) {
    config["quantization_config"]["quant_algo"] = bad;
    auto m = ParseHfConfig(config.dump(), "c.json", "c");
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
