// The JSON front door (src/util/json_input.h): the depth scan, bounded
// quoting and the problems it reports.
#include "util/json_input.h"

#include <gtest/gtest.h>

#include <string>

namespace kvbill::json_input {
namespace KVBILL_TEST_FILE_ID {
namespace {

TEST(JsonInputTest, DepthScanCountsBracketsOutsideStrings) {
  // Three levels: [ { "a": [ ... ] } ].
  EXPECT_EQ(FindTooDeep(R"([{"a":[1]}])", 3), std::nullopt);
  // The '[' at offset 6 opens the third level.
  EXPECT_EQ(FindTooDeep(R"([{"a":[1]}])", 2), std::optional<std::size_t>(6));
  // Brackets inside strings, escaped quotes included, do not count.
  EXPECT_EQ(FindTooDeep(R"(["[[[\"[[[", "{{{"])", 1), std::nullopt);
  // Siblings do not add up: [[],[],[]] is two levels deep.
  EXPECT_EQ(FindTooDeep("[[],[],[]]", 2), std::nullopt);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(FindTooDeep(deep), std::optional<std::size_t>(kMaxDepth));  // offset 256: level 257
}

TEST(JsonInputTest, TooDeepIsRefusedBeforeTheParse) {
  const std::string ok = std::string(256, '[') + std::string(256, ']');
  Problem problem;
  EXPECT_TRUE(Parse(ok, &problem).has_value());
  const std::string deep = "{\"a\":" + std::string(257, '[') + std::string(257, ']') + "}";
  EXPECT_FALSE(Parse(deep, &problem).has_value());
  EXPECT_EQ(problem.kind, Problem::Kind::kTooDeep);
  // {"a": is 5 bytes and level 1; the 256th '[' (offset 5 + 255) is level 257.
  EXPECT_EQ(problem.byte, 260u);
  EXPECT_EQ(Describe("f.json", deep, problem),
            "f.json:1:261: not valid JSON: nested deeper than 256 levels");
}

TEST(JsonInputTest, RepeatedKeysAreNamedByPointerUnlessAllowed) {
  const std::string text = R"({"a":[{"x":1},{"y/z":1,"y/z":2}]})";
  Problem problem;
  EXPECT_FALSE(Parse(text, &problem).has_value());
  EXPECT_EQ(problem.kind, Problem::Kind::kDuplicateKey);
  EXPECT_EQ(Describe("f.json", text, problem), "f.json#/a/1/y~1z: repeated key");
  const auto last_wins = Parse(text, &problem, {.allow_duplicate_keys = true});
  ASSERT_TRUE(last_wins.has_value());
  EXPECT_EQ((*last_wins)["a"][1]["y/z"], 2);
}

TEST(JsonInputTest, MessagesQuoteABoundedPrefix) {
  Problem problem;
  // A string of a million letters ended by a raw control character: the
  // parser's "last read" token is the whole string; the reason quotes its
  // first 40 characters (the quote and 39 letters).
  const std::string junk = "[\"" + std::string(1000000, 'a') + "\x01\"]";
  EXPECT_FALSE(Parse(junk, &problem).has_value());
  EXPECT_EQ(problem.kind, Problem::Kind::kSyntax);
  EXPECT_LE(problem.reason.size(), kMaxReason + 3);
  EXPECT_NE(problem.reason.find("'\"" + std::string(39, 'a') + "...'"), std::string::npos)
      << problem.reason;

  EXPECT_EQ(Quote(nlohmann::json(std::string(100, 'x')), 10), "\"xxxxxxxxx...");
  EXPECT_EQ(Quote(nlohmann::json::parse("[1,2,3]"), 10), "[1,2,3]");
  // 1000 elements, printed only until the bound: "[1,1,1,1,1" then "...".
  EXPECT_EQ(Quote(nlohmann::json(std::vector<int>(1000, 1)), 10), "[1,1,1,1,1...");
  EXPECT_EQ(Quote(nlohmann::ordered_json::parse(R"({"b":1,"a":"s"})"), 40), R"({"b":1,"a":"s"})");
  // A cut never splits a UTF-8 sequence: "é" is two bytes.
  EXPECT_EQ(Bounded("aé", 2), "a...");
  EXPECT_EQ(Bounded("abc", 3), "abc");
}

TEST(JsonInputTest, NumbersBeyondADoubleAndTruncationAreTheirOwnKinds) {
  Problem problem;
  EXPECT_FALSE(Parse("[1e999]", &problem).has_value());
  EXPECT_EQ(problem.kind, Problem::Kind::kNumberRange);
  EXPECT_EQ(problem.reason, "number out of range: 1e999");
  // Where it stands: nlohmann gives no position, so the number is found in
  // the text as a value (not in the key "k1e999", nor inside "21e999").
  const std::string text = "{\"k1e999\": [21e999,\n 1e999]}";
  EXPECT_FALSE(Parse(text, &problem).has_value());
  EXPECT_EQ(problem.reason, "number out of range: 21e999");
  EXPECT_EQ(problem.byte, text.find("21e999"));
  EXPECT_EQ(Describe("s.json", text, problem),
            "s.json:1:13: not valid JSON: number out of range: 21e999");
  const std::string quoted = "{\"notes\": \"see [1e999]\",\n \"seed\": 1e999}";
  EXPECT_FALSE(Parse(quoted, &problem).has_value());
  EXPECT_EQ(Describe("s.json", quoted, problem),
            "s.json:2:10: not valid JSON: number out of range: 1e999");
  const std::string later = "{\"k1e999\": 1,\n \"v\":  1e999 }";
  EXPECT_FALSE(Parse(later, &problem).has_value());
  EXPECT_EQ(Describe("s.json", later, problem),
            "s.json:2:8: not valid JSON: number out of range: 1e999");
  EXPECT_FALSE(Parse(R"({"a":"unclosed)", &problem).has_value());
  EXPECT_EQ(problem.kind, Problem::Kind::kTruncated);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill::json_input
