#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "kvbill/trace/importers.h"
#include "trace/trace_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

using testing::ReadAllTasks;
using testing::TraceFixture;

std::unique_ptr<TraceReader> Inline(const std::string& text, ReaderOptions options = {}) {
  return NewOpenAiReader(std::make_unique<std::istringstream>(text), "mem.jsonl", options);
}

// tests/data/traces/openai_small.jsonl, worked by hand (times after
// created 1700000000):
//   resp_1 -> resp_2 -> resp_3 (previous_response_id chain), one task:
//     0 s:    input 5000, cached 0, out 400 (150 reasoning) -> other 5000.
//     10 s:   input 5600, cached 4992, out 200 -> +600: assistant
//             400 - 150 = 250, other 350; usage {608, 0, 4992, 200}.
//     20.5 s: input 3000, cached 2048, out 100: the prompt shrank
//             -> keep 2048, other 952; usage {952, 0, 2048, 100}.
//   chatcmpl-A at 3 s: no session -> its own task; prompt 1200, cached 1024
//     -> usage {176, 0, 1024, 30}. Its repeated copy (line 7) is ignored.
//   s-7 (metadata.session_id, then session_id): 12 s prompt 800 out 50; 15 s
//     prompt 1000 cached 768 -> +200: assistant 50, other 150; tool_s 3.
//   s-9: a bare usage object without a time: prompt 300, out 10, arrival 0.
// Each turn keeps its line's "model" (the resp_ chain gpt-5, the chat
// completions gpt-4o, s-9 none), so an API replay prices it at that model.
TEST(TraceOpenAiImporterTest, ChainsSessionsAndSingleCallsBecomeTasksWithUsage) {
  const std::string path = TraceFixture("openai_small.jsonl");
  auto reader = OpenTrace(path, std::nullopt);  // detected from the content
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader->get(), &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 4u);

  const Task& chain = tasks[0];
  EXPECT_EQ(chain.id, "resp_1");
  EXPECT_EQ(chain.arrival_s, 0);
  ASSERT_EQ(chain.turns.size(), 3u);
  EXPECT_EQ(PromptTokens(chain), (std::vector<Tokens>{5000, 5600, 3000}));
  EXPECT_EQ(chain.turns[1].spans, (std::vector<Span>{{SpanKind::kAssistant, 250, std::nullopt},
                                                     {SpanKind::kOther, 350, std::nullopt}}));
  EXPECT_EQ(chain.turns[2].keep, 2048);
  EXPECT_EQ(chain.turns[2].spans, (std::vector<Span>{{SpanKind::kOther, 952, std::nullopt}}));
  EXPECT_EQ(chain.turns[0].usage, (RecordedUsage{5000, 0, 0, 400}));
  EXPECT_EQ(chain.turns[1].usage, (RecordedUsage{608, 0, 4992, 200}));
  EXPECT_EQ(chain.turns[2].usage, (RecordedUsage{952, 0, 2048, 100}));
  EXPECT_EQ(chain.turns[0].output, 400);  // reasoning tokens are part of the output
  EXPECT_EQ(chain.turns[2].time_s, 20.5);
  EXPECT_EQ(chain.turns[0].tool_s, 10);
  EXPECT_EQ(chain.turns[1].tool_s, 10.5);
  EXPECT_EQ(chain.turns[2].tool_s, 0);
  for (std::size_t k = 0; k < chain.turns.size(); ++k) {
    EXPECT_EQ(chain.turns[k].usage->prompt(), PromptTokens(chain)[k]) << k;
  }

  const Task& single = tasks[1];
  EXPECT_EQ(single.id, "chatcmpl-A");
  EXPECT_EQ(single.arrival_s, 3);
  ASSERT_EQ(single.turns.size(), 1u);
  EXPECT_EQ(single.turns[0].usage, (RecordedUsage{176, 0, 1024, 30}));

  const Task& session = tasks[2];
  EXPECT_EQ(session.id, "s-7");
  EXPECT_EQ(session.arrival_s, 12);
  EXPECT_EQ(PromptTokens(session), (std::vector<Tokens>{800, 1000}));
  EXPECT_EQ(session.turns[1].spans, (std::vector<Span>{{SpanKind::kAssistant, 50, std::nullopt},
                                                       {SpanKind::kOther, 150, std::nullopt}}));
  EXPECT_EQ(session.turns[0].tool_s, 3);
  EXPECT_EQ(session.turns[1].usage, (RecordedUsage{232, 0, 768, 40}));

  const Task& bare = tasks[3];
  EXPECT_EQ(bare.id, "s-9");
  EXPECT_EQ(bare.arrival_s, 0);
  EXPECT_EQ(bare.turns[0].time_s, std::nullopt);
  EXPECT_EQ(bare.turns[0].usage, (RecordedUsage{300, 0, 0, 10}));

  for (const Turn& t : chain.turns) EXPECT_EQ(t.model, "gpt-5");
  EXPECT_EQ(single.turns[0].model, "gpt-4o");
  for (const Turn& t : session.turns) EXPECT_EQ(t.model, "gpt-4o");
  EXPECT_EQ(bare.turns[0].model, "");
}

TEST(TraceOpenAiImporterTest, DetectsBothApisAndBareUsage) {
  const auto detect = [](const std::string& line) { return DetectTraceFormat(line, "f", 1); };
  EXPECT_EQ(*detect(R"({"id":"x","object":"chat.completion","created":1,"usage":null})"),
            TraceFormat::kOpenAi);
  EXPECT_EQ(*detect(R"({"id":"x","object":"response","created_at":1})"), TraceFormat::kOpenAi);
  EXPECT_EQ(*detect(R"({"session_id":"s","usage":{"input_tokens":1,"output_tokens":1}})"),
            TraceFormat::kOpenAi);
  EXPECT_EQ(*detect(R"({"session_id":"s","prompt_tokens":1,"completion_tokens":1})"),
            TraceFormat::kOpenAi);
  // Claude Code lines carry usage under "message" and are still claude-code.
  EXPECT_EQ(*detect(R"({"type":"assistant","message":{"usage":{"input_tokens":1}}})"),
            TraceFormat::kClaudeCode);
  EXPECT_EQ(TraceFormatName(TraceFormat::kOpenAi), "openai");
}

// GPT-5.6 reports the tokens it wrote to the cache (input_tokens_details.
// cache_write_tokens, billed at 1.25x input): they are the call's cache
// writes, apart from its uncached input. 12,000 input, 9,984 cached, 1,920
// written: 96 uncached.
TEST(TraceOpenAiImporterTest, CacheWriteTokensAreTheCallsWrites) {
  auto reader =
      Inline(R"({"id":"a","object":"response","created_at":1,"model":"gpt-5.6",)"
             R"("usage":{"input_tokens":12000,"output_tokens":300,"input_tokens_details":)"
             R"({"cached_tokens":9984,"cache_write_tokens":1920}}})");
  std::string error;
  const std::vector<Task> tasks = ReadAllTasks(reader.get(), &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_TRUE(tasks[0].turns[0].usage.has_value());
  const RecordedUsage& u = *tasks[0].turns[0].usage;
  EXPECT_EQ(u.input, 96);
  EXPECT_EQ(u.cache_creation, 1920);
  EXPECT_EQ(u.cache_read, 9984);
  EXPECT_EQ(u.prompt(), 12000);
  // More cached and written than the prompt holds is an error naming both.
  auto bad = Inline(R"({"id":"a","object":"response","created_at":1,"usage":{"input_tokens":100,)"
                    R"("output_tokens":1,"input_tokens_details":{"cached_tokens":60,)"
                    R"("cache_write_tokens":50}}})");
  ReadAllTasks(bad.get(), &error);
  EXPECT_EQ(error,
            "mem.jsonl:1: usage: input_tokens_details: \"cached_tokens\" 60 and "
            "\"cache_write_tokens\" 50 exceed \"input_tokens\" 100");
}

TEST(TraceOpenAiImporterTest, BadLinesNameTheLine) {
  const auto error_of = [](const std::string& text) {
    auto reader = Inline(text);
    std::string error;
    ReadAllTasks(reader.get(), &error);
    return error;
  };
  EXPECT_EQ(error_of(R"({"id":"a","object":"chat.completion","created":1,"usage":)"
                     R"({"prompt_tokens":100,"completion_tokens":5,)"
                     R"("prompt_tokens_details":{"cached_tokens":200}}})"),
            "mem.jsonl:1: usage: prompt_tokens_details: \"cached_tokens\" 200 exceeds "
            "\"prompt_tokens\" 100");
  EXPECT_EQ(error_of(R"({"id":"a","object":"chat.completion","created":1,"usage":)"
                     R"({"prompt_tokens":100,"completion_tokens":-5}})"),
            "mem.jsonl:1: usage: \"completion_tokens\" must be a non-negative integer, got -5");
  EXPECT_EQ(
      error_of(R"({"id":"a","object":"response","created_at":10,"usage":)"
               R"({"input_tokens":100,"output_tokens":5}})"
               "\n"
               R"({"id":"b","object":"response","created_at":5,)"
               R"("previous_response_id":"a","usage":{"input_tokens":120,"output_tokens":5}})"),
      "mem.jsonl:2: task \"a\": time runs backwards: 5 is before the previous call's 10");
  EXPECT_EQ(error_of(R"({"id":"a","object":"chat.completion","created":1,"model":3,"usage":)"
                     R"({"prompt_tokens":100,"completion_tokens":5}})"),
            "mem.jsonl:1: \"model\" must be a string, got 3");
  EXPECT_EQ(error_of(R"({"id":"a","object":"chat.completion.chunk","created":1})"),
            "mem.jsonl:1: \"object\" must be \"chat.completion\" or \"response\", got "
            "\"chat.completion.chunk\"");
  EXPECT_EQ(error_of(R"({"id":"a","object":"response","created_at":1,"usage":null})"),
            "mem.jsonl:1: \"usage\" must be an object, got null");
  EXPECT_EQ(error_of(R"({"prompt_tokens":10,"completion_tokens":1})"),
            "mem.jsonl:1: a bare usage object needs \"session_id\" or \"metadata.session_id\"");
  EXPECT_EQ(error_of(R"({"session_id":"s","usage":{"total_tokens":3}})"),
            "mem.jsonl:1: missing \"prompt_tokens\" or \"input_tokens\"");
}

TEST(TraceOpenAiImporterTest, SkipBadCountsBadLinesAndKeepsTheRest) {
  auto reader = Inline(
      R"({"id":"a","object":"response","created_at":1,"usage":)"
      "\n"
      R"({"id":"b","object":"response","created_at":2,"usage":{"input_tokens":50,"output_tokens":5}})"
      "\n",
      ReaderOptions{.skip_bad = true});
  EXPECT_EQ(ReadAllTasks(reader.get()).size(), 1u);
  EXPECT_EQ(reader->bad_lines().count, 1);
  EXPECT_EQ(reader->bad_lines().first_messages[0], "mem.jsonl:1: truncated JSON");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
