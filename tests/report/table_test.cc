// Table: numbers right-aligned, text left-aligned, text columns whole.
#include "kvbill/report/table.h"

#include <gtest/gtest.h>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Widths by hand: "candidate" 9, "$/task" 6 ("$0.0142" 7), "why" 3 (the
// longest reason 22): the rule 9 + 2 + 7 + 2 + 22 = 42. Numbers end at the column's right edge; the
// first column and text start at its left.
TEST(TableTest, NumbersAlignRightAndTextLeft) {
  Table t({"candidate", "$/task", "why"});
  t.AddRow({"h100", "$0.0142", "fits, formats run"});
  t.AddRow({"a100", "$1.50", "pruned by the bound"});
  t.AddRow({"h200", "-", "fits but slower, sadly"});
  EXPECT_EQ(t.ToText(),
            "candidate  $/task   why\n"
            "------------------------------------------\n"
            "h100       $0.0142  fits, formats run\n"
            "a100         $1.50  pruned by the bound\n"
            "h200             -  fits but slower, sadly\n");
}

// A reason that starts with a digit is text, not a number: once "20
// request(s) refused ..." was right-aligned in plan's "why" column. A
// column holding prose is a text column, so its short cells ("2 GPUs")
// stay left too; a number with its unit ("3.550 s") is still a number.
// Widths: 9, 8 ("TTFT p90", "10.000 s"), 21: the rule 42.
TEST(TableTest, TextStartingWithADigitStaysLeftAligned) {
  Table t({"candidate", "TTFT p90", "why"});
  t.AddRow({"h100", "3.550 s", "fits, formats run"});
  t.AddRow({"a100", "10.000 s", "20 request(s) refused"});
  t.AddRow({"h200", "-", "2 GPUs"});
  EXPECT_EQ(t.ToText(),
            "candidate  TTFT p90  why\n"
            "------------------------------------------\n"
            "h100        3.550 s  fits, formats run\n"
            "a100       10.000 s  20 request(s) refused\n"
            "h200              -  2 GPUs\n");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
