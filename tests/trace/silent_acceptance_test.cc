// Inputs that used to be accepted without a word (issue 17's list): each is
// now an error that says what is wrong.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include "kvbill/trace/reader.h"
#include "trace/timestamp.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace {

TEST(SilentAcceptanceTest, ImpossibleDatesAreErrors) {
  // November has 30 days: 2023-11-31 was silently December 1st.
  EXPECT_EQ(ParseTimestamp("2023-11-31T00:00:00Z").error().message(),
            "bad timestamp \"2023-11-31T00:00:00Z\"");
  EXPECT_TRUE(ParseTimestamp("2023-11-30T00:00:00Z").ok());
  // February: 29 days in years divisible by 4, except centuries not
  // divisible by 400 (2100 is not a leap year, 2000 was).
  EXPECT_TRUE(ParseTimestamp("2024-02-29T12:00:00Z").ok());
  EXPECT_FALSE(ParseTimestamp("2023-02-29T12:00:00Z").ok());
  EXPECT_FALSE(ParseTimestamp("2100-02-29T12:00:00Z").ok());
  EXPECT_TRUE(ParseTimestamp("2000-02-29T12:00:00Z").ok());
  EXPECT_FALSE(ParseTimestamp("2024-04-31T12:00:00Z").ok());
  EXPECT_TRUE(ParseTimestamp("2024-12-31T23:59:59Z").ok());
  // A long bad timestamp is quoted by its first 40 characters.
  EXPECT_EQ(ParseTimestamp(std::string(1000, '9')).error().message(),
            "bad timestamp \"" + std::string(40, '9') + "...\"");
}

TEST(SilentAcceptanceTest, RepeatedTaskIdsInANativeTraceAreAnError) {
  const std::string trace =
      "{\"kvbill_trace\":1}\n"
      "{\"id\":\"a\",\"turns\":[{\"out\":1}]}\n"
      "{\"id\":\"b\",\"turns\":[{\"out\":1}]}\n"
      "{\"id\":\"a\",\"turns\":[{\"out\":2}]}\n";
  auto reader = NewNativeReader(std::make_unique<std::istringstream>(trace), "t.jsonl");
  std::string error;
  const auto tasks = testing::ReadAllTasks(reader.get(), &error);
  EXPECT_EQ(tasks.size(), 2u);
  EXPECT_EQ(error, "t.jsonl:4: task \"a\": repeated task id (ids are unique within a trace)");
}

}  // namespace
}  // namespace kvbill
