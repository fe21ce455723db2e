// Helpers shared by the context policy tests: spans, turns, expected pieces
// by the identity rules of kvbill/policy/context_policy.h, and the agent task
// most tests plan.
#ifndef KVBILL_TESTS_POLICY_POLICY_TEST_UTIL_H_
#define KVBILL_TESTS_POLICY_POLICY_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kvbill/cache/block_hash.h"
#include "kvbill/policy/context_policy.h"

namespace kvbill::testing {

inline Span MakeSpan(SpanKind kind, Tokens tokens, std::optional<std::string> content_id = {}) {
  Span span;
  span.kind = kind;
  span.tokens = tokens;
  span.content_id = std::move(content_id);
  return span;
}

inline Turn MakeTurn(std::vector<Span> spans, Tokens output, std::optional<Tokens> keep = {}) {
  Turn turn;
  turn.keep = keep;
  turn.spans = std::move(spans);
  turn.output = output;
  return turn;
}

inline PromptPiece Piece(SpanKind kind, std::uint64_t identity, Tokens offset, Tokens tokens) {
  PromptPiece piece;
  piece.kind = kind;
  piece.content.identity = identity;
  piece.content.offset = offset;
  piece.content.tokens = tokens;
  return piece;
}

// The identity of a span with content id `id`.
inline std::uint64_t Shared(const std::string& id) { return HashString(id); }

// The identity of span `span` (from 0) of turn `turn` (from 0) of task
// `task` when it has no content id.
inline std::uint64_t Unique(const std::string& task, int turn, int span) {
  return HashCombine(HashString(task), HashCombine(static_cast<std::uint64_t>(turn),
                                                   static_cast<std::uint64_t>(span)));
}

inline std::uint64_t Stub(std::uint64_t original) {
  return HashCombine(original, HashString("stub"));
}

// An agent loop, task `id`, five turns (worked prompts under keep_all):
//   turn 0: system 100 "sys", tools 50 "tools", user 30          -> 180, out 10
//   turn 1: assistant 10 (turn 0's answer), tool_result 200       -> 390, out 20
//   turn 2: assistant 20, tool_result 300                         -> 710, out 30
//   turn 3: assistant 30, tool_result 40                          -> 780, out 15
//   turn 4: assistant 15, user 25                                 -> 820, out 5
// Turn k waits k+1 seconds for tools and was recorded at 10k seconds.
inline Task AgentTask(const std::string& id = "a") {
  Task task;
  task.id = id;
  task.turns = {
      MakeTurn({MakeSpan(SpanKind::kSystem, 100, "sys"), MakeSpan(SpanKind::kTools, 50, "tools"),
                MakeSpan(SpanKind::kUser, 30)},
               10),
      MakeTurn({MakeSpan(SpanKind::kAssistant, 10), MakeSpan(SpanKind::kToolResult, 200)}, 20),
      MakeTurn({MakeSpan(SpanKind::kAssistant, 20), MakeSpan(SpanKind::kToolResult, 300)}, 30),
      MakeTurn({MakeSpan(SpanKind::kAssistant, 30), MakeSpan(SpanKind::kToolResult, 40)}, 15),
      MakeTurn({MakeSpan(SpanKind::kAssistant, 15), MakeSpan(SpanKind::kUser, 25)}, 5),
  };
  for (std::size_t k = 0; k < task.turns.size(); ++k) {
    task.turns[k].tool_s = static_cast<Seconds>(k + 1);
    task.turns[k].time_s = 10.0 * static_cast<Seconds>(k);
  }
  return task;
}

// The pieces of AgentTask("a") under keep_all, by name.
struct AgentPieces {
  PromptPiece sys = Piece(SpanKind::kSystem, Shared("sys"), 0, 100);
  PromptPiece tools = Piece(SpanKind::kTools, Shared("tools"), 0, 50);
  PromptPiece user0 = Piece(SpanKind::kUser, Unique("a", 0, 2), 0, 30);
  PromptPiece out0 = Piece(SpanKind::kAssistant, OutputIdentity("a", 0), 0, 10);
  PromptPiece result1 = Piece(SpanKind::kToolResult, Unique("a", 1, 1), 0, 200);
  PromptPiece out1 = Piece(SpanKind::kAssistant, OutputIdentity("a", 1), 0, 20);
  PromptPiece result2 = Piece(SpanKind::kToolResult, Unique("a", 2, 1), 0, 300);
  PromptPiece out2 = Piece(SpanKind::kAssistant, OutputIdentity("a", 2), 0, 30);
  PromptPiece result3 = Piece(SpanKind::kToolResult, Unique("a", 3, 1), 0, 40);
  PromptPiece out3 = Piece(SpanKind::kAssistant, OutputIdentity("a", 3), 0, 15);
  PromptPiece user4 = Piece(SpanKind::kUser, Unique("a", 4, 1), 0, 25);
};

// `piece` with its front `cut` tokens cut off.
inline PromptPiece CutFront(PromptPiece piece, Tokens cut) {
  piece.content.offset += cut;
  piece.content.tokens -= cut;
  return piece;
}

// `piece` cut to its first `tokens` tokens.
inline PromptPiece CutTo(PromptPiece piece, Tokens tokens) {
  piece.content.tokens = tokens;
  return piece;
}

inline std::unique_ptr<ContextPolicy> MustMake(const ContextPolicyParams& params) {
  auto policy = MakeContextPolicy(params);
  EXPECT_TRUE(policy.ok()) << (policy.ok() ? "" : policy.error().message());
  return policy.ok() ? std::move(policy.value()) : nullptr;
}

// The message of MakeContextPolicy's error, or "ok".
inline std::string MakeError(const ContextPolicyParams& params) {
  auto policy = MakeContextPolicy(params);
  return policy.ok() ? "ok" : policy.error().message();
}

inline std::vector<Tokens> PromptTokensOf(const std::vector<Request>& requests) {
  std::vector<Tokens> tokens;
  for (const Request& r : requests) tokens.push_back(r.PromptTokens());
  return tokens;
}

// How many leading block hashes (block size 16) two prompts share: the blocks
// a prefix cache would hit for `b` after serving `a`.
inline std::size_t SharedBlocks(std::span<const PromptPiece> a, std::span<const PromptPiece> b) {
  std::vector<ContentPiece> ca;
  std::vector<ContentPiece> cb;
  for (const PromptPiece& p : a) ca.push_back(p.content);
  for (const PromptPiece& p : b) cb.push_back(p.content);
  const std::vector<std::uint64_t> ha = BlockHashesOf(ca, 16);
  const std::vector<std::uint64_t> hb = BlockHashesOf(cb, 16);
  std::size_t n = 0;
  while (n < ha.size() && n < hb.size() && ha[n] == hb[n]) ++n;
  return n;
}

}  // namespace kvbill::testing

#endif  // KVBILL_TESTS_POLICY_POLICY_TEST_UTIL_H_
