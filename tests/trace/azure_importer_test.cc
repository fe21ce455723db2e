#include <gtest/gtest.h>

#include <sstream>

#include "kvbill/trace/importers.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::TraceFixture;

// azure_small.csv:
//   2023-11-16 18:15:46.6805900,374,44
//   2023-11-16 18:15:50.9951690,396,109
//   2023-11-16 18:15:51.2224670,879,55
TEST(TraceAzureImporterTest, RowBecomesOneTurnTaskTimedFromTheFirstRow) {
  auto reader = OpenTrace(TraceFixture("azure_small.csv"), std::nullopt);
  ASSERT_TRUE(reader.ok());
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader->get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].arrival_s, 0.0);
  EXPECT_EQ(tasks[1].arrival_s, 4.314579);  // 50.9951690 - 46.6805900
  EXPECT_EQ(tasks[2].id, "2");
  EXPECT_EQ(PromptTokens(tasks[2]), std::vector<Tokens>{879});
  EXPECT_EQ(tasks[2].turns[0].output, 55);
}

TEST(TraceAzureImporterTest, BadCountNamesTheColumn) {
  auto reader = NewAzureReader(
      std::make_unique<std::istringstream>("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:15:46.6805900,374,-4\n"),
      "a.csv");
  std::string error;
  ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(error, "a.csv:2: GeneratedTokens must be a non-negative integer, got \"-4\"");
}

// A 10 MB field is quoted by its first characters, not echoed whole.
TEST(TraceAzureImporterTest, AHugeBadFieldIsQuotedShort) {
  auto reader = NewAzureReader(
      std::make_unique<std::istringstream>("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                           "2023-11-16 18:15:46.6805900," +
                                           std::string(10'000'000, 'x') + ",5\n"),
      "a.csv");
  std::string error;
  ReadAllTasks(reader.get(), &error);
  const std::string head = "a.csv:2: ContextTokens must be a non-negative integer, got \"";
  ASSERT_EQ(error.substr(0, head.size()), head);
  EXPECT_LT(error.size(), 200u);
  EXPECT_EQ(error.substr(error.size() - 5), "x...\"");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
