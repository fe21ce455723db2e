// Shared by the tests that reproduce the cases of ccusage's own test suite
// (ryoppippi/ccusage v18.0.11: apps/ccusage/src/calculate-cost.ts,
// apps/ccusage/src/data-loader.ts, packages/internal/src/pricing.ts,
// apps/codex/src/*.ts; the Rust rewrite, commit 5816e640,
// rust/crates/ccusage/src/cost.rs): ccusage_pricing_test.cc,
// ccusage_data_loader_test.cc, ccusage_codex_test.cc. Each test names the
// cases it reproduces; where kvbill answers differently the test says so and
// why, and docs/billing.md#ccusages-own-test-cases lists every case and
// every disagreement. Expected amounts are worked out by hand.
#ifndef KVBILL_TESTS_COST_CCUSAGE_CASES_H_
#define KVBILL_TESTS_COST_CCUSAGE_CASES_H_

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kvbill/bill/bill.h"
#include "kvbill/bill/usage_log.h"

namespace kvbill::ccusage_cases {

inline const PriceSheet& Bundled() {
  static const PriceSheet sheet = *BundledPriceSheet();
  return sheet;
}

// One line in the shape ccusage's fixtures use: no "type" (as older Claude
// Code versions wrote them), usage under message, costUSD beside it.
struct Entry {
  std::string time = "2024-01-01T12:00:00Z";  // empty: no timestamp
  Tokens input = 0;
  Tokens output = 0;
  std::optional<Tokens> cache_creation = {};
  std::optional<Tokens> cache_read = {};
  std::optional<double> cost = {};
  std::string model = {};  // empty: none
  std::string session = {};
  std::string cwd = {};
  std::string id = {};  // message id
  std::string request = {};
  std::string speed = {};
};

inline std::string Line(const Entry& e) {
  nlohmann::json usage = {{"input_tokens", e.input}, {"output_tokens", e.output}};
  if (e.cache_creation) usage["cache_creation_input_tokens"] = *e.cache_creation;
  if (e.cache_read) usage["cache_read_input_tokens"] = *e.cache_read;
  if (!e.speed.empty()) usage["speed"] = e.speed;
  nlohmann::json message = {{"usage", usage}};
  if (!e.model.empty()) message["model"] = e.model;
  if (!e.id.empty()) message["id"] = e.id;
  nlohmann::json line = {{"message", message}};
  if (!e.time.empty()) line["timestamp"] = e.time;
  if (e.cost) line["costUSD"] = *e.cost;
  if (!e.session.empty()) line["sessionId"] = e.session;
  if (!e.cwd.empty()) line["cwd"] = e.cwd;
  if (!e.request.empty()) line["requestId"] = e.request;
  return line.dump() + "\n";
}

inline UsageLog Read(const std::vector<Entry>& entries, const std::string& name = "usage.jsonl") {
  std::string text;
  for (const Entry& e : entries) text += Line(e);
  UsageLog log;
  std::istringstream in(text);
  const Status s = ReadUsageLog(in, name, &log);
  EXPECT_TRUE(s.ok()) << s.error().message();
  return log;
}

// ccusage's default mode is auto.
inline BillOptions Auto() {
  BillOptions options;
  options.mode = CostMode::kAuto;
  return options;
}

inline Bill Make(const UsageLog& log, const BillOptions& options = Auto(),
                 const PriceSheet& sheet = Bundled()) {
  auto bill = MakeBill(log, sheet, options);
  EXPECT_TRUE(bill.ok()) << bill.error().message();
  return bill.ok() ? *bill : Bill{};
}

inline PriceSheet LiteLlm(const std::string& text) {
  auto sheet = ImportLiteLlmPrices(text, "litellm.json");
  EXPECT_TRUE(sheet.ok()) << sheet.error().message();
  return sheet.ok() ? *sheet : PriceSheet{};
}

inline constexpr std::int64_t kMicro = 1'000'000;  // pico-dollars per micro-dollar

inline std::vector<std::string> Ids(const std::vector<GroupBill>& groups) {
  std::vector<std::string> ids;
  for (const GroupBill& g : groups) ids.push_back(g.id);
  return ids;
}

// gpt-5 as LiteLLM lists it, the sheet of several cases.
inline constexpr char kGpt5[] =
    R"({"gpt-5": {"input_cost_per_token": 1.25e-6, "output_cost_per_token": 1e-5,
                                   "cache_read_input_token_cost": 1.25e-7}})";

}  // namespace kvbill::ccusage_cases

#endif  // KVBILL_TESTS_COST_CCUSAGE_CASES_H_
