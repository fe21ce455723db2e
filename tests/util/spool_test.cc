#include "kvbill/util/spool.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(SpoolTest, GivesBackWhatWasAppendedAndKeepsAppendingAfter) {
  auto spool = Spool::Create();
  ASSERT_TRUE(spool.ok()) << spool.error().message();
  ASSERT_TRUE(spool->Append("tasks: ").ok());
  ASSERT_TRUE(spool->Append("a, b").ok());
  std::ostringstream first;
  ASSERT_TRUE(spool->CopyTo(first).ok());
  EXPECT_EQ(first.str(), "tasks: a, b");
  ASSERT_TRUE(spool->Append(", c").ok());
  std::ostringstream second;
  ASSERT_TRUE(spool->CopyTo(second).ok());
  EXPECT_EQ(second.str(), "tasks: a, b, c");
  EXPECT_EQ(spool->size(), 14);
}

// More than one read buffer (64 KiB) of text comes back whole.
TEST(SpoolTest, CopiesTextLargerThanItsBuffer) {
  auto spool = Spool::Create();
  ASSERT_TRUE(spool.ok());
  std::string expected;
  for (int i = 0; i < 20000; ++i) {
    const std::string line = "row " + std::to_string(i) + "\n";
    expected += line;
    ASSERT_TRUE(spool->Append(line).ok());
  }
  std::ostringstream out;
  ASSERT_TRUE(spool->CopyTo(out).ok());
  EXPECT_GT(expected.size(), 65536u);
  EXPECT_EQ(out.str(), expected);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
