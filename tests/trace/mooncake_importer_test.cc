#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <sstream>

#include "kvbill/trace/importers.h"
#include "kvbill/trace/stats.h"
#include "trace/open_trace.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::SharedTrace;
using testing::TraceFixture;

TEST(TraceMooncakeImporterTest, RowBecomesOneTurnTaskWithBlockHashes) {
  const std::string path = TraceFixture("mooncake_small.jsonl");
  auto reader = OpenTrace(path, std::nullopt);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader->get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 4u);
  // {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0..13]}
  EXPECT_EQ(tasks[0].id, "0");
  ASSERT_EQ(tasks[0].turns.size(), 1u);
  const Turn& turn = tasks[0].turns[0];
  EXPECT_EQ(PromptTokens(tasks[0]), std::vector<Tokens>{6758});
  EXPECT_EQ(turn.output, 500);
  ASSERT_TRUE(turn.blocks.has_value());
  EXPECT_EQ(turn.blocks->block_size, 512);
  EXPECT_EQ(turn.blocks->hashes.size(), 14u);  // ceil(6758 / 512)
  EXPECT_EQ(turn.blocks->hashes[13], 13u);
  // {"timestamp": 3000, ...}: milliseconds.
  EXPECT_EQ(tasks[3].id, "3");
  EXPECT_EQ(tasks[3].arrival_s, 3.0);
  EXPECT_EQ(tasks[3].turns[0].time_s, 3.0);
}

TEST(TraceMooncakeImporterTest, NegativeTokensNameTheLine) {
  const std::string path = TraceFixture("mooncake_negative.jsonl");
  auto reader = OpenTrace(path, std::nullopt);
  ASSERT_TRUE(reader.ok());
  std::string error;
  ReadAllTasks(reader->get(), &error);
  EXPECT_EQ(error, path + ":2: \"input_length\" must be a non-negative integer, got -5");
}

TEST(TraceMooncakeImporterTest, TruncatedLineNamesTheLineAndSkipBadSkipsIt) {
  const std::string path = TraceFixture("mooncake_truncated.jsonl");
  auto strict = OpenTrace(path, TraceFormat::kMooncake);
  ASSERT_TRUE(strict.ok());
  std::string error;
  ReadAllTasks(strict->get(), &error);
  EXPECT_EQ(error, path + ":2: truncated JSON");

  auto lenient = OpenTrace(path, TraceFormat::kMooncake, ReaderOptions{.skip_bad = true});
  ASSERT_TRUE(lenient.ok());
  EXPECT_EQ(ReadAllTasks(lenient->get()).size(), 1u);
  EXPECT_EQ((*lenient)->bad_lines().count, 1);
}

// A Mooncake row has four fields: a misspelt one is an error, not ignored.
TEST(TraceMooncakeImporterTest, AnUnknownFieldNamesTheLineAndTheField) {
  const std::string text =
      R"({"timestamp":0,"input_length":1000,"output_length":10,"hash_ids":[1,2]})"
      "\n"
      R"({"timestamp":0,"input_length":1000,"output_length":10,"hash_ids":[1,2],"typo_field":3})"
      "\n";
  auto reader = NewMooncakeReader(std::make_unique<std::istringstream>(text), "m.jsonl");
  std::string error;
  EXPECT_EQ(ReadAllTasks(reader.get(), &error).size(), 1u);
  EXPECT_EQ(error,
            "m.jsonl:2: unknown field \"typo_field\" (a Mooncake row has timestamp, "
            "input_length, output_length, hash_ids)");
}

// hash_ids must name every full 512-token block of the input: 5,000 tokens
// are 9 full blocks (4,608 tokens) and a partial one, so 9 hashes do (a tool
// hashing full blocks only) and 2 do not; those once named the prompt from
// its own tokens and hit nothing, without a word.
TEST(TraceMooncakeImporterTest, HashesFewerThanTheFullBlocksNameTheLine) {
  const std::string text =
      R"({"timestamp":0,"input_length":5000,"output_length":10,"hash_ids":[1,2,3,4,5,6,7,8,9]})"
      "\n"
      R"({"timestamp":0,"input_length":5000,"output_length":10,"hash_ids":[1,2]})"
      "\n";
  auto reader = NewMooncakeReader(std::make_unique<std::istringstream>(text), "m.jsonl");
  std::string error;
  EXPECT_EQ(ReadAllTasks(reader.get(), &error).size(), 1u);
  EXPECT_EQ(error,
            "m.jsonl:2: \"hash_ids\" holds 2 block hashes, fewer than the 9 full blocks of 512 "
            "tokens of its 5000-token prompt (one hash a block, the prefix through it; the last, "
            "partial block may go without)");
}

// hash_ids name the input's blocks, one each, the last, partial one
// included: ceil(input_length / 512) at most (the data's own description,
// len(hash_ids) == ceil(input_length / 512)). 1,600 tokens are 3 full
// blocks (1,536 tokens) and a partial one of 64: 4 blocks, so 4 hashes do
// and 5 do not; 1,536 tokens are exactly 3 blocks, so 4 do not. Such rows
// were read, the hashes past the prompt standing for nothing.
TEST(TraceMooncakeImporterTest, HashesMoreThanTheBlocksNameTheLine) {
  const std::string text =
      R"({"timestamp":0,"input_length":1600,"output_length":10,"hash_ids":[1,2,3,4]})"
      "\n"
      R"({"timestamp":0,"input_length":1600,"output_length":10,"hash_ids":[1,2,3,4,5]})"
      "\n";
  auto reader = NewMooncakeReader(std::make_unique<std::istringstream>(text), "m.jsonl");
  std::string error;
  EXPECT_EQ(ReadAllTasks(reader.get(), &error).size(), 1u);
  EXPECT_EQ(error,
            "m.jsonl:2: \"hash_ids\" holds 5 block hashes, more than the 4 blocks of 512 tokens "
            "of its 1600-token prompt (one hash a block, the last, partial one included)");
  const std::string exact =
      R"({"timestamp":0,"input_length":1536,"output_length":10,"hash_ids":[1,2,3,4]})"
      "\n";
  reader = NewMooncakeReader(std::make_unique<std::istringstream>(exact), "m.jsonl");
  EXPECT_EQ(ReadAllTasks(reader.get(), &error).size(), 0u);
  EXPECT_EQ(error,
            "m.jsonl:1: \"hash_ids\" holds 4 block hashes, more than the 3 blocks of 512 tokens "
            "of its 1536-token prompt (one hash a block, the last, partial one included)");
}

// A Dynamo trace whose first row has no Dynamo field is detected as Mooncake
// (detection reads the first line); its later session rows used to become
// one-turn tasks without a word, 3 tasks where Dynamo reads 2.
TEST(TraceMooncakeImporterTest, ADynamoRowSaysToReadTheTraceAsDynamo) {
  const std::string text =
      R"({"timestamp":0,"input_length":1000,"output_length":10,"hash_ids":[1,2]})"
      "\n"
      R"({"session_id":"s","timestamp":100,"input_length":1000,"output_length":10,"hash_ids":[3,4]})"
      "\n";
  auto detected = OpenTraceStream(std::make_unique<std::istringstream>(text), "d.jsonl",
                                  std::nullopt, ReaderOptions{});
  ASSERT_TRUE(detected.ok()) << detected.error().message();
  std::string error;
  ReadAllTasks(detected->get(), &error);
  EXPECT_EQ(error,
            "d.jsonl:2: \"session_id\" is a Dynamo field, not a Mooncake one: this looks like a "
            "Dynamo trace (use --from dynamo)");
  // Read as Dynamo: the plain row and the session, 2 tasks.
  auto dynamo = OpenTraceStream(std::make_unique<std::istringstream>(text), "d.jsonl",
                                TraceFormat::kDynamo, ReaderOptions{});
  ASSERT_TRUE(dynamo.ok());
  EXPECT_EQ(ReadAllTasks(dynamo->get()).size(), 2u);
}

// The Mooncake paper (FAST'25), Table 2: conversation 12,031 requests, average
// input 12,035 and output 343 tokens; synthetic 3,993 / 15,325 / 149.
TEST(TraceMooncakeImporterTest, PublishedTraceMatchesThePaper) {
  const std::string conversation = SharedTrace("mooncake/conversation_trace.jsonl");
  const std::string synthetic = SharedTrace("mooncake/synthetic_trace.jsonl");
  if (!std::filesystem::exists(conversation) || !std::filesystem::exists(synthetic)) {
    GTEST_SKIP() << "shared Mooncake traces not present";
  }
  struct Expected {
    std::string path;
    std::int64_t requests;
    double mean_input;
    double mean_output;
  };
  for (const Expected& e :
       {Expected{conversation, 12031, 12035, 343}, Expected{synthetic, 3993, 15325, 149}}) {
    auto reader = OpenTrace(e.path, std::nullopt);
    ASSERT_TRUE(reader.ok());
    auto stats = ComputeTraceStats(reader->get());
    ASSERT_TRUE(stats.ok()) << stats.error().message();
    EXPECT_EQ(stats->tasks, e.requests);
    EXPECT_EQ(stats->requests, e.requests);
    EXPECT_NEAR(stats->input_tokens.mean, e.mean_input, 0.5) << e.path;
    EXPECT_NEAR(stats->output_tokens.mean, e.mean_output, 0.5) << e.path;
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
