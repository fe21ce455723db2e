// The token counts of Codex CLI's token_count events (docs/billing.md#logs,
// docs/importers.md#codex), read by one set of functions for both readers
// of rollouts: `kvbill bill` (src/bill/usage_log.cc) and the Codex trace
// importer, so a call one prices the other replays with the same usage.
#ifndef KVBILL_SRC_TRACE_CODEX_USAGE_H_
#define KVBILL_SRC_TRACE_CODEX_USAGE_H_

#include <optional>

#include "kvbill/util/result.h"
#include "kvbill/util/units.h"
#include "trace/json_fields.h"

namespace kvbill {

// One usage object (Codex's TokenUsage) as the provider counts it.
struct CodexUsage {
  Tokens input = 0;   // "input_tokens": every prompt token, the cached ones included
  Tokens cached = 0;  // "cached_input_tokens", else "cache_read_input_tokens"; 0 when absent
  Tokens output = 0;  // "output_tokens": reasoning included
  // "reasoning_output_tokens" (0 when absent), at most `output`: the part of
  // the output not fed back into the next prompt.
  Tokens reasoning_output = 0;
};

// Reads a usage object. Errors name the field: "\"input_tokens\" must be a
// non-negative integer, got -5", "\"cached_input_tokens\" 200 exceeds
// \"input_tokens\" 100" (the cached key as spelled).
Result<CodexUsage> ReadCodexUsage(const Json& object);

// What a token_count event's `info` says.
struct CodexTokenCount {
  CodexUsage call;                  // the call's own usage
  std::optional<CodexUsage> total;  // "total_token_usage" when given: the running totals
};

// Reads the `info` object of a token_count event: the call is
// "last_token_usage"; in older rollouts that give only the running totals
// "total_token_usage", it is their difference from `previous_total` (the
// session's previous event's totals; nullopt at the start of a session: the
// totals themselves). Errors, prefixed "payload.info": a usage's
// ("payload.info: last_token_usage: ..."), "payload.info: neither
// \"last_token_usage\" nor \"total_token_usage\"", and totals that go down
// ("payload.info.total_token_usage: below the previous event's (input
// 200 -> 100, ...)").
Result<CodexTokenCount> ReadCodexTokenCount(const Json& info,
                                            const std::optional<CodexUsage>& previous_total);

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_CODEX_USAGE_H_
