#include "cli/progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>

namespace kvbill::cli {
namespace KVBILL_TEST_FILE_ID {
namespace {

using std::chrono::milliseconds;

// Waits until `line` has drawn (at most 20 s: the machine may be busy).
bool WaitUntilDrawn(ProgressLine& line) {
  for (int i = 0; i < 2000 && !line.Drawn(); ++i) std::this_thread::sleep_for(milliseconds(10));
  return line.Drawn();
}

TEST(ProgressLineTest, DisabledDrawsNothing) {
  // A pipe or a file: not a terminal, so not enabled.
  std::ostringstream out;
  {
    ProgressLine line("simulate", "simulating x", false, out, milliseconds(0));
    std::this_thread::sleep_for(milliseconds(50));
    EXPECT_FALSE(line.Drawn());
  }
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressLineTest, WorkShorterThanTheDelayDrawsNothing) {
  std::ostringstream out;
  { ProgressLine line("simulate", "simulating x", true, out, std::chrono::seconds(3600)); }
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressLineTest, DrawsWhatItDoesAndErasesItself) {
  std::ostringstream out;
  {
    ProgressLine line("simulate", "simulating default", true, out, milliseconds(0));
    ASSERT_TRUE(WaitUntilDrawn(line));
  }
  // "\r" + the text with the whole seconds elapsed (one digit here: it
  // erased itself within 10 s), redrawn a few times a second; then the line
  // is blanked with as many spaces as it was wide and the cursor returned.
  const std::string text = "kvbill simulate: simulating default ... ";
  EXPECT_EQ(out.str().rfind("\r" + text, 0), 0u) << out.str();
  const std::size_t width = text.size() + std::string("0 s").size();
  EXPECT_TRUE(out.str().ends_with("\r" + std::string(width, ' ') + "\r")) << out.str();
}

TEST(ProgressLineTest, CountsWhatItIsGiven) {
  std::ostringstream out;
  {
    // The count is set long before the line first draws, 500 ms in.
    ProgressLine line("sweep", "", true, out, milliseconds(500), "points");
    line.Set(1234, 4000);
    ASSERT_TRUE(WaitUntilDrawn(line));
  }
  EXPECT_EQ(out.str().rfind("\rkvbill sweep: 1,234/4,000 points ... ", 0), 0u) << out.str();
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill::cli
