#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kvbill/scenario/budget.h"
#include "kvbill/scenario/sweep.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::string ErrorOf(const std::string& json) {
  auto s = ParseScenario(json, "s.json");
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.error().message();
}

TEST(BudgetSweepTest, BudgetsAndSweepAxesParseInKeyOrder) {
  auto s = ParseScenario(R"({"budgets": {"hit_rate": {"min": 0.9},
                                          "cost_per_task_usd.p90": {"max": 0.1}},
                             "sweep": {"/seed": [1, 2], "/kv_format": ["bf16", "fp8"]}})",
                         "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  ASSERT_EQ(s->budgets.size(), 2u);
  EXPECT_EQ(s->budgets[0].metric, "cost_per_task_usd.p90");  // sorted key order
  EXPECT_EQ(*s->budgets[0].max, 0.1);
  EXPECT_FALSE(s->budgets[0].min.has_value());
  ASSERT_EQ(s->sweep.size(), 2u);
  EXPECT_EQ(s->sweep[0].path, "/kv_format");
  EXPECT_EQ(s->sweep[0].values, (std::vector<std::string>{"\"bf16\"", "\"fp8\""}));
}

TEST(BudgetSweepTest, BadBudgetsAndAxesNameTheirPointer) {
  EXPECT_EQ(ErrorOf(R"({"budgets": {"hit_rate": {}}})"),
            "s.json#/budgets/hit_rate: needs \"max\" or \"min\"");
  EXPECT_EQ(ErrorOf(R"({"budgets": {"hit_rate": {"max": "high"}}})"),
            "s.json#/budgets/hit_rate/max: must be a number, got \"high\"");
  EXPECT_EQ(ErrorOf(R"({"budgets": {"hit_rate": {"below": 1}}})"),
            "s.json#/budgets/hit_rate/below: unknown key");
  EXPECT_EQ(ErrorOf(R"({"sweep": {"kv_format": ["fp8"]}})"),
            "s.json#/sweep/kv_format: must be a JSON pointer into the scenario outside /sweep "
            "and /budgets (a sweep varies the run, not its own axes or the budgets), like "
            "\"/kv_format\"");
  EXPECT_EQ(ErrorOf(R"({"sweep": {"/seed": []}})"),
            "s.json#/sweep/~1seed: must be a non-empty list of values, got []");
}

// A budget no run can meet, and axes that would overwrite each other, are
// refused where they are written rather than run as a sweep that lies.
TEST(BudgetSweepTest, ImpossibleBudgetsAndOverlappingAxesAreRefused) {
  EXPECT_EQ(ErrorOf(R"({"budgets": {"hit_rate": {"min": 0.9, "max": 0.5}}})"),
            "s.json#/budgets/hit_rate: \"min\" 0.9 is above \"max\" 0.5: no run can pass");
  // min == max is a budget that one value meets.
  EXPECT_TRUE(
      ParseScenario(R"({"budgets": {"hit_rate": {"min": 0.5, "max": 0.5}}})", "s.json").ok());
  // No metric is below 0, and no hit rate above 1.
  EXPECT_EQ(ErrorOf(R"({"budgets": {"cost_usd": {"max": -1}}})"),
            "s.json#/budgets/cost_usd/max: is below 0, which no cost_usd is: no run can pass");
  EXPECT_EQ(ErrorOf(R"({"budgets": {"hit_rate": {"min": 1.5}}})"),
            "s.json#/budgets/hit_rate/min: is above 1, which no hit_rate is: no run can pass");
  // Each warning code is raised once at most.
  EXPECT_EQ(ErrorOf(R"({"budgets": {"warnings.overloaded": {"min": 2}}})"),
            "s.json#/budgets/warnings.overloaded/min: is above 1, and a run raises each warning "
            "once at most (its count is 0 or 1): no run can pass");
  EXPECT_TRUE(ParseScenario(R"({"budgets": {"warnings.overloaded": {"min": 1}}})", "s.json").ok());
  for (const char* ok :
       {R"({"budgets": {"hit_rate": {"min": 1}}})", R"({"budgets": {"preemptions": {"max": 0}}})",
        R"({"budgets": {"hit_rate": {"min": -1}}})"}) {
    EXPECT_TRUE(ParseScenario(ok, "s.json").ok()) << ok;
  }
  // Keys are read in sorted order, so "/engine" comes before "/engine/block_size".
  EXPECT_EQ(ErrorOf(R"({"sweep": {"/engine": [{}], "/engine/block_size": [16, 32]}})"),
            "s.json#/sweep/~1engine~1block_size: overlaps the axis \"/engine\": one would "
            "overwrite what the other sets");
  // A shared prefix that is not a whole key is no overlap ("/seed" and "/seed2").
  EXPECT_TRUE(ParseScenario(R"({"sweep": {"/seed": [1], "/seed2": [1]}})", "s.json").ok());
  // A value twice on one axis would run its points twice: refused, naming it.
  EXPECT_EQ(ErrorOf(R"({"sweep": {"/kv_format": ["bf16", "fp8", "bf16"]}})"),
            "s.json#/sweep/~1kv_format/2: repeats the value \"bf16\"");
  EXPECT_EQ(ErrorOf(R"({"sweep": {"/seed": [1, 1.0]}})"),
            "s.json#/sweep/~1seed/1: repeats the value 1.0");
  // Eight axes of 256 values are 2^64 points, which a 64-bit count wraps to
  // 0 (a sweep once printed no point and exited 0); three of 100 are
  // 1,000,000, the most a sweep may have, and a fourth of 100 is past it.
  auto axes = [](int n, int values) {
    nlohmann::json sweep = nlohmann::json::object();
    for (int a = 0; a < n; ++a) {
      nlohmann::json v = nlohmann::json::array();
      for (int i = 0; i < values; ++i) v.push_back(i + 1);
      sweep["/trace/tasks" + std::string(1, static_cast<char>('a' + a))] = v;
    }
    return nlohmann::json({{"sweep", sweep}}).dump();
  };
  EXPECT_EQ(ErrorOf(axes(8, 256)),
            "s.json#/sweep/~1trace~1tasksc: the sweep's axes make more than 1,000,000 points "
            "(256 x 256 x 256 values): split it into several scenarios, or sweep fewer values");
  auto million = ParseScenario(axes(3, 100), "s.json");
  ASSERT_TRUE(million.ok()) << million.error().message();
  EXPECT_EQ(million->sweep.size(), 3u);
  EXPECT_EQ(ErrorOf(axes(4, 100))
                .rfind("s.json#/sweep/~1trace~1tasksd: the sweep's axes make "
                       "more than 1,000,000 points (100 x 100 x 100 x 100 values)",
                       0),
            0u);
}

// An API run (pricing) and an engine run print other columns: an axis that
// adds or removes "pricing" would mix them in one table (points once came out
// in the engine's columns with zeros beside API dollars).
TEST(BudgetSweepTest, PointsAreAllApiRunsOrAllEngineRuns) {
  const std::string pricing = R"({"provider": "anthropic", "model": "claude-sonnet-4-5"})";
  auto adds = ExpandSweep(R"({"trace": {"generator": "chat", "tasks": 1},
                              "sweep": {"/pricing": [)" +
                              pricing + R"(]}})",
                          "s.json");
  ASSERT_FALSE(adds.ok());
  EXPECT_NE(adds.error().message().find(
                "s.json#/sweep: sweep point 0 (/pricing = {\"model\":\"claude-sonnet-4-5\","
                "\"provider\":\"anthropic\"}): is an API run (\"pricing\" set) where the "
                "scenario is an engine run"),
            std::string::npos)
      << adds.error().message();
  // Sweeping a field of a scenario's own pricing keeps every point an API run.
  auto within = ExpandSweep(R"({"trace": {"generator": "chat", "tasks": 1}, "pricing": )" +
                                pricing + R"(, "sweep": {"/pricing/model": ["claude-sonnet-4-5",
                                "claude-haiku-4-5"]}})",
                            "s.json");
  ASSERT_TRUE(within.ok()) << within.error().message();
  EXPECT_EQ(within->size(), 2u);
}

// An axis that cannot be set names what the scenario holds there, in the
// project's words (the JSON library's "[json.exception.out_of_range.404]"
// leaked through), at the axis's escaped pointer.
TEST(BudgetSweepTest, AnAxisThatCannotBeSetSaysWhy) {
  auto string = ExpandSweep(R"({"deployment": {"gpu": "h100-sxm"},
      "sweep": {"/deployment/gpu/0": ["a100-80gb"]}})",
                            "s.json");
  ASSERT_FALSE(string.ok());
  EXPECT_EQ(string.error().message(),
            "s.json#/sweep/~1deployment~1gpu~10: /deployment/gpu/0: cannot set: /deployment/gpu "
            "holds a string, which has no member to set");
  // An array element it has, and no other: past the end the JSON library
  // padded the array with nulls (an index of 10^9 took all memory).
  for (const char* index : {"5", "1000000000", "abc", "01"}) {
    auto past = ExpandSweep(std::string(R"({"model": {"name": "qwen3-8b", "set":
        {"architectures": ["Qwen3ForCausalLM"]}}, "sweep": {"/model/set/architectures/)") +
                                index + R"(": ["X"]}})",
                            "s.json");
    ASSERT_FALSE(past.ok()) << index;
    EXPECT_NE(past.error().message().find(
                  ": cannot set: /model/set/architectures is an array of 1 element: an index "
                  "from 0 to 0 sets one"),
              std::string::npos)
        << past.error().message();
  }
  auto tilde = ExpandSweep(R"({"sweep": {"/a~2b": [1]}})", "s.json");
  ASSERT_FALSE(tilde.ok());
  EXPECT_EQ(tilde.error().message(),
            "s.json#/sweep/~1a~02b: /a~2b: not a JSON pointer (each \"~\" is followed by 0 or 1, "
            "\"~0\" for \"~\" and \"~1\" for \"/\")");
}

// Points are numbered with the first axis varying slowest; shard i of n
// takes k mod n == i.
TEST(BudgetSweepTest, ShardsPartitionThePoints) {
  const std::string text = R"({"trace": {"generator": "chat", "tasks": 1},
                               "sweep": {"/kv_format": ["bf16", "fp8", "int4"],
                                         "/seed": [1, 2]}})";
  auto all = ExpandSweep(text, "s.json");
  ASSERT_TRUE(all.ok()) << all.error().message();
  ASSERT_EQ(all->size(), 6u);
  EXPECT_EQ((*all)[3].values, (std::vector<std::string>{"\"fp8\"", "2"}));
  EXPECT_EQ((*all)[3].scenario.kv_format, "fp8");
  EXPECT_EQ((*all)[3].scenario.seed, 2u);
  auto shard = ExpandSweep(text, "s.json", 1, 4);
  ASSERT_TRUE(shard.ok());
  ASSERT_EQ(shard->size(), 2u);  // points 1 and 5
  EXPECT_EQ((*shard)[0].index, 1);
  EXPECT_EQ((*shard)[1].index, 5);
  EXPECT_FALSE(ExpandSweep(text, "s.json", 4, 4).ok());
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
