// UsageLog: the billable facts of agent logs, read line by line for the
// `bill` command: every API call with its model, ids, time and usage exactly
// as the provider reported it, and the provider's own cost of a run where
// the log has one. Unlike the trace importers (trace/importers.h), nothing
// is turned into turns, and the model id and result lines are kept.
//
// Formats (docs/billing.md#logs), detected per file and per line:
//   - Claude Code transcripts: JSONL or the JSON array a stop hook saves;
//     "assistant" lines with message.usage are calls, "result" lines
//     (headless runs) carry total_cost_usd and modelUsage.
//   - Codex CLI rollouts: token_count events are calls, the model is the
//     latest turn_context's.
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
#include "kvbill/util/result.h"

namespace kvbill {

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
};

// Reads one log from `in` into *log; `name` prefixes errors. Lines of other
// types, and Claude Code's "<synthetic>" messages (local, not API calls),
// are skipped.
Status ReadUsageLog(std::istream& in, const std::string& name, UsageLog* log);

}  // namespace kvbill

#endif  // KVBILL_BILL_USAGE_LOG_H_
