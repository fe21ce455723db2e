#include "kvbill/util/names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(NamesTest, EditDistanceCountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(EditDistance("simulate", "simulate"), 0);
  EXPECT_EQ(EditDistance("simulte", "simulate"), 1);   // one insertion
  EXPECT_EQ(EditDistance("simluate", "simulate"), 1);  // one swap of neighbours
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);     // k->s, e->i, +g
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("H100", "h100"), 1);  // case counts here
}

TEST(NamesTest, SquashNameForgivesCaseAndSeparators) {
  EXPECT_EQ(SquashName("NVIDIA H100 80GB HBM3"), "nvidiah10080gbhbm3");
  EXPECT_EQ(SquashName("nvidia_h100-80gb.hbm3"), "nvidiah10080gbhbm3");
  EXPECT_EQ(LowerAscii("Qwen/Qwen3-32B"), "qwen/qwen3-32b");
}

const std::vector<std::string> kCommands = {"simulate", "compare", "sweep", "merge",
                                            "check",    "report",  "kv",    "fit"};

TEST(NamesTest, SuggestsTheNearestCandidate) {
  EXPECT_EQ(DidYouMean("simulte", kCommands), "did you mean simulate?");
  EXPECT_EQ(DidYouMean("SIMULATE", kCommands), "did you mean simulate?");
  EXPECT_EQ(DidYouMean("compre", kCommands), "did you mean compare?");
  // "fir" is one substitution from "fit" (3 letters allow 1 edit).
  EXPECT_EQ(DidYouMean("fir", kCommands), "did you mean fit?");
}

TEST(NamesTest, SuggestsWhatTheTypedTextBegins) {
  EXPECT_EQ(DidYouMean("sim", kCommands), "did you mean simulate?");
  EXPECT_EQ(DidYouMean("reports", kCommands), "did you mean report?");
}

TEST(NamesTest, NothingCloseMeansNoSuggestion) {
  EXPECT_EQ(DidYouMean("frobnicate", kCommands), "");
  // Two letters: 1 edit allowed; "xy" is 2 from "kv".
  EXPECT_EQ(DidYouMean("xy", kCommands), "");
  // What was typed is not suggested back.
  EXPECT_EQ(DidYouMean("sweep", kCommands), "");
}

TEST(NamesTest, SeveralSuggestionsBestFirstThenInOrder) {
  // "h900" is one substitution from "h100" and from "h200"; "h1000" is
  // begun by "h100" (a prefix suggestion scores first).
  EXPECT_EQ(DidYouMean("h900", {"h100-sxm", "h200", "h100"}), "did you mean h200 or h100?");
  EXPECT_EQ(DidYouMean("--fromat", {"format", "from", "out"}), "");
  EXPECT_EQ(DidYouMean("fromat", {"format", "from", "out"}, "--"),
            "did you mean --format or --from?");
  EXPECT_EQ(DidYouMean("qwen3", {"qwen3-8b", "qwen3-32b", "qwen3-235b-a22b", "qwen3-next"}),
            "did you mean qwen3-8b, qwen3-32b or qwen3-235b-a22b?");
}

TEST(NamesTest, CandidatesDifferingInCaseAreOneSuggestion) {
  EXPECT_EQ(DidYouMean("qwen3-4b", {"qwen3-8b", "Qwen3-8B"}), "did you mean qwen3-8b?");
}

TEST(NamesTest, JoinsWithOr) {
  EXPECT_EQ(JoinWithOr({}), "");
  EXPECT_EQ(JoinWithOr({"a"}), "a");
  EXPECT_EQ(JoinWithOr({"a", "b"}), "a or b");
  EXPECT_EQ(JoinWithOr({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(JoinWithOr({"a", "b"}, true), "a or b");
  EXPECT_EQ(JoinWithOr({"a", "b", "c"}, true), "a, b, or c");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
