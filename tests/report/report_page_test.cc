#include "kvbill/report/report_page.h"

#include <gtest/gtest.h>

#include "kvbill/cost/breakeven.h"
#include "kvbill/metrics/growth.h"
#include "kvbill/report/svg_chart.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

constexpr char kTiny[] = R"({
  "name": "tiny <agent>",
  "model": "qwen3-8b",
  "trace": {"generator": "coding-agent", "tasks": 2}
})";

std::size_t Count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

class ReportPageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto runs = RunReport(kTiny, "tiny.json", 2);
    ASSERT_TRUE(runs.ok()) << runs.error().message();
    runs_ = new ReportRuns(std::move(*runs));
  }
  static void TearDownTestSuite() {
    delete runs_;
    runs_ = nullptr;
  }
  static const ReportRuns& Runs() { return *runs_; }

  static ReportRuns* runs_;
};

ReportRuns* ReportPageTest::runs_ = nullptr;

TEST_F(ReportPageTest, RunsTheBaselineEveryLeverAndEveryCapacity) {
  const ReportRuns& runs = Runs();
  EXPECT_EQ(runs.baseline.summary.tasks, 2);
  ASSERT_EQ(runs.levers.size(), Levers(runs.scenario).size());
  ASSERT_EQ(runs.capacities.size(), 8u);
  EXPECT_EQ(runs.capacities[0].capacity_tokens, 65536);
  EXPECT_EQ(runs.capacities[7].capacity_tokens, ScenarioPrefixCache::kUnlimited);
  // A cache that never evicts hits at least as often as the default pool.
  ASSERT_TRUE(runs.capacities[7].run.has_value()) << runs.capacities[7].error;
  EXPECT_GE(runs.capacities[7].run->summary.hit_rate, runs.baseline.summary.hit_rate);
  // An unlimited cache is more than one H100 holds (Qwen3-8B's 144 KiB a
  // token): its run says so (pool_beyond_memory), and the table shows it.
  bool beyond = false;
  for (const RunWarning& w : runs.capacities[7].warnings) beyond |= w.code == "pool_beyond_memory";
  EXPECT_TRUE(beyond);
  auto page = BuildReportPage(runs);
  ASSERT_TRUE(page.ok());
  const std::size_t section = page->find("<section id=\"capacity\">");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(page->find("<th>warnings</th>", section), std::string::npos);
  EXPECT_NE(page->find("pool_beyond_memory", section), std::string::npos);
}

TEST_F(ReportPageTest, ThePoolPointCountsATokenOnceWhateverTheKvCacheGroups) {
  // A model with two KV cache groups (gpt-oss: full + sliding) holds a
  // token's K and V in a page slot of each, and capacity_tokens counts
  // tokens of every group: 1,000 pages of 16-token blocks in 2 groups are
  // 500 blocks a group, 8,000 tokens on the capacity axis.
  ReportRuns runs = Runs();
  ASSERT_TRUE(runs.scenario.prefix_cache.enabled);
  ASSERT_FALSE(runs.scenario.prefix_cache.capacity_tokens.has_value());
  runs.scenario.prefix_cache.block_size = 16;
  runs.baseline.summary.kv_pool_blocks = 1000;
  runs.baseline.summary.kv_cache_groups = 2;
  auto page = BuildReportPage(runs);
  ASSERT_TRUE(page.ok()) << page.error().message();
  EXPECT_NE(page->find("the KV pool this GPU holds, 8,000 tokens per replica"), std::string::npos);
}

TEST_F(ReportPageTest, HasEverySectionAndOneSvgPerChart) {
  auto page = BuildReportPage(Runs());
  ASSERT_TRUE(page.ok()) << page.error().message();
  EXPECT_EQ(page->rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_EQ(page->substr(page->size() - 8), "</html>\n");
  EXPECT_NE(page->find("<title>kvbill report: tiny &lt;agent&gt;</title>"), std::string::npos);
  for (const char* title :
       {"<h2>Summary</h2>", "<h2>1. KV memory against context</h2>",
        "<h2>2. One task, turn by turn</h2>", "<h2>3. Cost per task by lever</h2>",
        "<h2>4. Hit rate against cache capacity</h2>",
        "<h2>5. Growth: cost per task against its length</h2>",
        ">KV cache memory against context</text>", ">Cost per task by lever</text>",
        ">Prefix-cache hit rate against cache capacity</text>",
        ">Cost per task against requests per task</text>"}) {
    EXPECT_NE(page->find(title), std::string::npos) << title;
  }
  // Memory, cumulative KV, cumulative dollars, levers, capacity, growth, cost per token.
  EXPECT_EQ(Count(*page, "<svg "), 7u);
  EXPECT_EQ(Count(*page, "</svg>"), 7u);
  EXPECT_NE(page->find("<h2>6. Cost per token against context</h2>"), std::string::npos);
  // The memory chart also draws the narrower KV formats the GPU runs: fp8,
  // not nvfp4 (no engine stores an NVFP4 KV cache on Hopper).
  EXPECT_NE(page->find("qwen3-8b, fp8 KV"), std::string::npos);
  EXPECT_EQ(page->find("qwen3-8b, nvfp4 KV"), std::string::npos);
}

// report --load: the baseline and every lever at each load, and a chart of
// each lever's saving against the load.
TEST_F(ReportPageTest, LoadsRunEveryLeverAndAddTheLoadChart) {
  EXPECT_TRUE(Runs().loads.empty());
  auto page = BuildReportPage(Runs());
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->find("<section id=\"load\">"), std::string::npos);  // not asked for
  auto runs = RunReport(kTiny, "tiny.json", 2, {0.5, 4});
  ASSERT_TRUE(runs.ok()) << runs.error().message();
  ASSERT_EQ(runs->loads.size(), 2u);
  EXPECT_EQ(runs->loads[0].load, 0.5);
  EXPECT_EQ(runs->loads[1].load, 4.0);
  const std::size_t levers = Levers(runs->scenario).size();
  std::size_t ran = 0;  // levers weighed at load 4: each a line
  for (const LoadRun& l : runs->loads) {
    ASSERT_EQ(l.outcomes.size(), levers + 1);
    EXPECT_EQ(l.outcomes[0].lever.name, "baseline");
    ASSERT_TRUE(l.outcomes[0].run.has_value());
    for (const LeverOutcome& o : l.outcomes) {
      ran += &l == &runs->loads[1] && o.run && o.not_comparable.empty() ? 1 : 0;
    }
  }
  page = BuildReportPage(*runs);
  ASSERT_TRUE(page.ok()) << page.error().message();
  const std::size_t section = page->find("<section id=\"load\">");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(page->find("<h2>7. Saving per task against load</h2>", section), std::string::npos);
  // Each load's baseline warnings stand under its table, as compare --load
  // prints them (Qwen3-8B as shipped refuses the agents' longest prompts:
  // context_limit at every load).
  std::size_t warned = 0;
  for (const LoadRun& l : runs->loads) {
    for (const RunWarning& w : l.outcomes[0].warnings) {
      ++warned;
      EXPECT_NE(
          page->find("<p>Warnings at load " + std::string(l.load == 4 ? "4" : "0.5") + ":</p>",
                     section),
          std::string::npos);
      EXPECT_NE(page->find("<li>baseline: <strong>warning [" + w.code + "]</strong>", section),
                std::string::npos)
          << w.code;
    }
  }
  EXPECT_GT(warned, 0u);
  EXPECT_NE(page->find(">Saving per task against load</text>", section), std::string::npos);
  EXPECT_EQ(Count(*page, "<svg "), 8u);
  // One path per lever that ran (both loads run the same levers here) in
  // the series group of the load chart.
  const std::size_t svg_end = page->find("</svg>", section);
  const std::string svg = page->substr(section, svg_end - section);
  const std::size_t series = svg.find("series\"");
  ASSERT_NE(series, std::string::npos);
  EXPECT_EQ(Count(svg.substr(series, svg.find("</g>", series) - series), "<path "), ran - 1);
}

TEST_F(ReportPageTest, IsSelfContainedWithUniqueIds) {
  auto page = BuildReportPage(Runs());
  ASSERT_TRUE(page.ok()) << page.error().message();
  EXPECT_EQ(page->find("<script"), std::string::npos);
  EXPECT_EQ(page->find("src="), std::string::npos);
  EXPECT_EQ(page->find("href=\"http"), std::string::npos);
  EXPECT_EQ(page->find("url(http"), std::string::npos);
  // Each chart's clip path has its own id, and each reference resolves.
  EXPECT_EQ(page->find("id=\"plot-area\""), std::string::npos);
  for (const char* chart : {"memory", "task-kv", "task-usd", "capacity", "growth", "breakeven"}) {
    const std::string id = std::string(chart) + "-plot-area";
    EXPECT_EQ(Count(*page, "id=\"" + id + "\""), 1u) << id;
    // The growth chart draws a clipped line only when it fits one (at least
    // five task sizes; this run has two tasks).
    if (std::string(chart) == "growth" && page->find("no fit: ") != std::string::npos) continue;
    EXPECT_NE(page->find("clip-path=\"url(#" + id + ")\""), std::string::npos) << id;
  }
}

// With a price, the cost-per-token chart draws the price line and the table
// gives the longest profitable context that FindBreakeven computes.
TEST_F(ReportPageTest, PriceDrawsTheBreakevenLine) {
  ReportRuns runs = Runs();
  runs.price_usd_per_mtok = 20.0;
  auto page = BuildReportPage(runs);
  ASSERT_TRUE(page.ok()) << page.error().message();
  EXPECT_NE(page->find("price: $20.00/Mtok"), std::string::npos);
  auto config = BuildSimulationConfig(runs.scenario);
  ASSERT_TRUE(config.ok());
  BreakevenQuery q;
  q.fit.model = config->model;
  q.fit.kv_format = config->kv_format;
  q.fit.deployment.gpu = config->gpu;
  q.roofline = config->roofline;
  q.usd_per_gpu_hour = config->usd_per_gpu_hour;
  q.output_usd_per_mtok = 20.0;
  // The run's memory and limit, as breakeven takes them: the activation
  // reserve off each GPU and the deployment's max_model_len.
  q.fit.deployment.activation_reserve_bytes =
      static_cast<Bytes>(std::llround(config->activation_reserve_gib * kBytesPerGiB));
  q.max_model_len = config->max_model_len;
  ASSERT_GT(q.max_model_len, 0);
  ASSERT_GT(config->activation_reserve_gib, 0);
  for (std::int64_t batch : {std::int64_t{1}, std::int64_t{32}}) {
    auto r = FindBreakeven(q, batch);
    ASSERT_TRUE(r.ok());
    ASSERT_GT(r->max_profitable, 0);
    ASSERT_LE(r->max_profitable, q.max_model_len);
    const std::string want =
        FormatWithSeparators(r->max_profitable) + (r->limited_by_memory  ? " (memory limit)"
                                                   : r->limited_by_model ? " (model limit)"
                                                                         : "");
    EXPECT_NE(page->find("<td>" + want + "</td>"), std::string::npos) << want;
  }
  // Without a price: curves only.
  auto plain = BuildReportPage(Runs());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->find("price: $"), std::string::npos);
}

TEST_F(ReportPageTest, TablesCarryTheNumbersOfTheRuns) {
  ReportRuns runs = Runs();
  // Numbers planted in the outcomes show up, formatted, in the tables.
  runs.baseline.summary.tasks = 12345;
  runs.baseline.summary.cost_per_task_usd.p99 = 1.23456;  // -> $1.2346
  runs.baseline.summary.hit_rate = 0.8766;                // 87.66% -> 87.7%
  auto page = BuildReportPage(runs);
  ASSERT_TRUE(page.ok()) << page.error().message();
  EXPECT_NE(page->find("<td>tasks</td><td class=\"num\">12345</td>"), std::string::npos);
  EXPECT_NE(page->find("<td>cost per task, p99</td><td class=\"num\">$1.2346</td>"),
            std::string::npos);
  EXPECT_NE(page->find("<td>prefix-cache hit rate</td><td class=\"num\">87.7%</td>"),
            std::string::npos);
  // One row per lever and per capacity.
  for (const LeverOutcome& l : runs.levers) {
    EXPECT_NE(page->find("<tr><td>" + EscapeXml(l.lever.name) + "</td>"), std::string::npos)
        << l.lever.name;
  }
  for (const char* capacity : {"64k", "128k", "256k", "512k", "1M", "4M", "16M", "unlimited"}) {
    EXPECT_NE(page->find("<tr><td>" + std::string(capacity) + "</td>"), std::string::npos)
        << capacity;
  }
  // Every task of the baseline has a row in the growth table, with its cost;
  // a task cut short at the model's context says how many requests it had.
  for (const TaskMetrics& t : runs.baseline.tasks) {
    const std::string requests = t.unserved_requests == 0
                                     ? "<td class=\"num\">" + std::to_string(t.requests) + "</td>"
                                     : "<td>" + std::to_string(t.requests) + " of " +
                                           std::to_string(t.requests + t.unserved_requests) +
                                           " (cut short)</td>";
    EXPECT_NE(page->find("<tr><td>" + EscapeXml(t.id) + "</td>" + requests), std::string::npos)
        << t.id;
    EXPECT_NE(page->find("$" + FormatFixed(static_cast<double>(t.cost_usd), 4)), std::string::npos);
  }
}

// The lever table comes by value, not by cost: prefix caching is in the
// baseline, so its row ("prefix caching off") costs more than the baseline
// yet saves the most when it is planted at 3x the baseline's cost (value:
// 3b - b = 2b), against levers planted at 0.5x (value 0.5b). By cost it
// would come last; by value it comes first. The baseline's warnings head
// the summary, and each lever's warning codes sit in its row.
TEST_F(ReportPageTest, LeversComeByValueAndWarningsAreShown) {
  ReportRuns runs = Runs();
  const double base = runs.baseline.summary.cost_per_task_usd.mean;
  LeverOutcome* off = nullptr;
  LeverOutcome* other = nullptr;
  for (LeverOutcome& l : runs.levers) {
    if (!l.run) continue;
    if (!l.lever.removes.empty()) {
      off = &l;
      l.run->summary.cost_per_task_usd.mean = 3 * base;
    } else {
      other = &l;
      l.run->summary.cost_per_task_usd.mean = 0.5 * base;
    }
  }
  ASSERT_NE(off, nullptr);
  ASSERT_NE(other, nullptr);
  other->warnings = {RunWarning{"overloaded", "queue"}};
  runs.warnings = {RunWarning{"idle_dominant", "the GPUs <mostly> wait"}};
  auto page = BuildReportPage(runs);
  ASSERT_TRUE(page.ok()) << page.error().message();
  const std::size_t section = page->find("<section id=\"levers\">");
  ASSERT_NE(section, std::string::npos);
  const std::size_t at_off = page->find("<tr><td>" + EscapeXml(off->lever.name) + "</td>", section);
  const std::size_t at_other =
      page->find("<tr><td>" + EscapeXml(other->lever.name) + "</td>", section);
  ASSERT_NE(at_off, std::string::npos);
  ASSERT_NE(at_other, std::string::npos);
  EXPECT_LT(at_off, at_other);
  EXPECT_NE(page->find("<strong>warning [idle_dominant]</strong>: the GPUs &lt;mostly&gt; wait"),
            std::string::npos);
  const std::size_t row_end = page->find("</tr>", at_other);
  EXPECT_NE(page->substr(at_other, row_end - at_other).find("<td>overloaded</td>"),
            std::string::npos)
      << page->substr(at_other, row_end - at_other);
}

TEST_F(ReportPageTest, GrowthSubtitleCarriesTheFittedExponent) {
  const ReportRuns& runs = Runs();
  // The fit is over the tasks served whole: one cut short at the model's
  // context costs unfinished work.
  std::vector<double> requests, costs;
  for (const TaskMetrics& t : runs.baseline.tasks) {
    if (t.unserved_requests > 0) continue;
    requests.push_back(t.requests);
    costs.push_back(static_cast<double>(t.cost_usd));
  }
  auto page = BuildReportPage(runs);
  ASSERT_TRUE(page.ok()) << page.error().message();
  auto fit = FitGrowth(requests, costs);
  if (fit) {
    EXPECT_NE(page->find("cost per task grows as (requests)^" + FormatFixed(fit->exponent, 2)),
              std::string::npos);
  } else {
    EXPECT_NE(page->find("no fit: " + fit.error().message()), std::string::npos);
  }
}

TEST_F(ReportPageTest, SameRunsGiveTheSameBytes) {
  auto first = BuildReportPage(Runs());
  auto second = BuildReportPage(Runs());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
}

// The memory chart stops at the deployment's limit: with engine.max_model_len
// 32k (32,768 tokens) Qwen3-8B's curves end there, not at the model's
// 40,960 (max_position_embeddings), which the engine refuses to serve.
TEST(ReportRunTest, MemoryChartStopsAtTheDeploymentsMaxModelLen) {
  auto runs = RunReport(R"({"model": "qwen3-8b", "engine": {"max_model_len": "32k"},
      "trace": {"generator": "coding-agent", "tasks": 1}})",
                        "limited.json", 1);
  ASSERT_TRUE(runs.ok()) << runs.error().message();
  auto page = BuildReportPage(*runs);
  ASSERT_TRUE(page.ok()) << page.error().message();
  EXPECT_NE(page->find("qwen3-8b, bf16 KV (context limit 32k)"), std::string::npos);
  EXPECT_EQ(page->find("context limit 40k"), std::string::npos);
}

TEST(ReportRunTest, BadScenarioIsAnErrorNamingTheField) {
  auto runs = RunReport(R"({"model": "no-such-model"})", "bad.json", 1);
  ASSERT_FALSE(runs.ok());
  EXPECT_NE(runs.error().message().find("bad.json#/model"), std::string::npos)
      << runs.error().message();
}

TEST(ReportRunTest, CapacityLeverTurnsCachingOnAndSetsTheCapacity) {
  const Lever l = CapacityLever(Tokens{1} << 18);
  EXPECT_EQ(l.name, "256k");
  ASSERT_EQ(l.settings.size(), 2u);
  EXPECT_EQ(l.settings[0].first, "/prefix_cache/enabled");
  EXPECT_EQ(l.settings[0].second, "true");
  EXPECT_EQ(l.settings[1].first, "/prefix_cache/capacity_tokens");
  EXPECT_EQ(l.settings[1].second, "262144");
  EXPECT_EQ(CapacityLever(ScenarioPrefixCache::kUnlimited).settings[1].second, "\"unlimited\"");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
