// UsageLog: the billable facts of agent logs, read line by line for the
// `bill` command: every API call with its model, ids, time and usage exactly
// as the provider reported it, and the provider's own cost of a run where
// the log has one. Unlike the trace importers (trace/importers.h), nothing
// is turned into turns, and the model id and result lines are kept.
//
// Formats (docs/billing.md#logs), detected per file and per line:
//   - Claude Code transcripts: JSONL or the JSON array a stop hook saves;
//     "assistant" lines with message.usage are calls, and so are lines
//     without "type" that carry message.usage (older Claude Code versions,
//     which also recorded the call's "costUSD"); "result" lines (headless
//     runs) carry total_cost_usd and modelUsage.
//   - Codex CLI rollouts: token_count events are calls (last_token_usage,
//     or the difference of total_token_usage from the previous event), the
//     model is the event's or the latest turn_context's, else the legacy
//     fallback kLegacyCodexModel, marked.
// Errors: "file:line: what" (or "file: element N: what" in a JSON array),
// exit status 2.
#ifndef KVBILL_BILL_USAGE_LOG_H_
#define KVBILL_BILL_USAGE_LOG_H_

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvbill/cost/api_bill.h"
#include "kvbill/cost/money.h"
#include "kvbill/util/result.h"

namespace kvbill {

// The model a Codex rollout that names none is priced at (ccusage's
// documented fallback for logs written before Codex recorded its model);
// such calls are marked LoggedCall::assumed_model.
inline constexpr char kLegacyCodexModel[] = "gpt-5";

// One API call as a log line recorded it.
struct LoggedCall {
  std::string session;  // sessionId / Codex session id
  std::string model;    // as logged; "unknown" when the log names none
  // Identity for de-duplication across lines and files: "msg:<message.id>"
  // (one message id is one call, whatever request carried it),
  // "req:<requestId>" when only a request id is logged,
  // "codex:<session>:<running totals>" for Codex, or "line:<file>:<line>"
  // when the line carries no id at all.
  std::string key;
  std::optional<std::int64_t> time_ns;  // since the Unix epoch, UTC
  CallUsage usage;
  std::string where;  // "file:line"
  // The line's own "costUSD", rounded to the nearest pico-dollar (older
  // Claude Code versions recorded one per call).
  std::optional<Money> recorded_cost;
  bool fast = false;           // usage.speed "fast": Anthropic's fast mode
  bool us_only = false;        // usage.inference_geo "us": Anthropic's US-only inference
  bool assumed_model = false;  // a Codex call naming no model: kLegacyCodexModel
  // Read from a Claude Code line, whose output count may be a streaming
  // placeholder (IsClaudeCodePlaceholderOutput).
  bool claude_code = false;
  std::int32_t project = -1;  // index into UsageLog::projects; -1 when unknown
};

// What one model used in a run and what the provider said it cost.
struct ReportedModel {
  CallUsage usage;  // cache writes are all 5-minute: modelUsage has no split
  double cost_usd = 0;
};

// A run's provider-reported cost (Claude Code's "result" line).
struct ReportedRun {
  std::string session;
  double total_cost_usd = 0;
  std::map<std::string, ReportedModel> by_model;
  std::string key;  // the line's text: a verbatim repeat counts once
  std::string where;
};

struct UsageLog {
  std::vector<LoggedCall> calls;
  std::vector<ReportedRun> runs;
  // Working directories (Claude Code's "cwd", Codex's session_meta /
  // turn_context cwd), each once, in order of first appearance.
  std::vector<std::string> projects;
};

// Reads one log from `in` into *log; `name` prefixes errors. Lines of other
// types, and Claude Code's "<synthetic>" messages (local, not API calls),
// are skipped.
Status ReadUsageLog(std::istream& in, const std::string& name, UsageLog* log);

}  // namespace kvbill

#endif  // KVBILL_BILL_USAGE_LOG_H_
