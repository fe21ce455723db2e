// summarise: when a turn's prompt would pass `threshold_tokens`, the client
// first asks the model for a summary of the conversation so far (a request of
// its own: the previous prompt and the previous answer in, `summary_tokens`
// out), then sends the turn as: the leading system/tools pieces, the summary,
// the last `keep_recent_tokens` tokens of the rest, the turn's spans. Later
// turns continue from that compacted context. The summary request hits the
// cache in full; the compacted prompt misses from the summary on, once.
// The summary request names the model of the turn it precedes.
#include <string>

#include "policy/context_builder.h"
#include "policy/policies.h"

namespace kvbill {
namespace {

constexpr const char* kSummarise = "summarise";

class Summarise : public ContextPolicy {
 public:
  Summarise(Tokens threshold_tokens, Tokens summary_tokens, Tokens keep_recent_tokens)
      : threshold_tokens_(threshold_tokens),
        summary_tokens_(summary_tokens),
        keep_recent_tokens_(keep_recent_tokens) {}

  std::vector<Request> Plan(const Task& task) const override {
    std::vector<Request> requests;
    RecordedContext recorded(task);
    Context context;  // what the client holds: its last prompt, cut by the trace's `keep`
    for (int turn = 0; turn < static_cast<int>(task.turns.size()); ++turn) {
      recorded.Advance(requests.empty() ? 0 : requests.back().output_identity);
      const Turn& t = task.turns[static_cast<std::size_t>(turn)];
      if (t.keep) ApplyKeep(*t.keep, &context);
      const Tokens prompt_tokens = ContextTokens(context) + ContextTokens(recorded.appended());
      if (turn > 0 && prompt_tokens > threshold_tokens_) Compact(task, turn, &context, &requests);
      context.insert(context.end(), recorded.appended().begin(), recorded.appended().end());
      requests.push_back(TurnRequest(task, turn, static_cast<int>(requests.size()), context,
                                     recorded.context(),
                                     requests.empty() ? nullptr : &requests.back()));
    }
    return requests;
  }

 private:
  // Appends the summary request to `requests` and replaces the middle of
  // `context` by its output, unless that would not make the context shorter.
  void Compact(const Task& task, int turn, Context* context, std::vector<Request>* requests) const {
    const std::span<const ContextPiece> all(*context);
    const std::size_t lead = LeadingSystemAndTools(all);
    const std::span<const ContextPiece> rest = all.subspan(lead);
    if (ContextTokens(rest) <= keep_recent_tokens_ + summary_tokens_) return;

    const Request& previous = requests->back();
    Request summary;
    summary.task_id = task.id;
    summary.index = static_cast<int>(requests->size());
    summary.turn = turn;
    summary.is_summary = true;
    summary.edited = true;
    // The client asks the model it is about to call (docs/policies.md#summarise).
    summary.model = task.turns[static_cast<std::size_t>(turn)].model;
    summary.prompt = previous.prompt;
    if (previous.output > 0) {
      PromptPiece answer;
      answer.kind = SpanKind::kAssistant;
      answer.content.identity = previous.output_identity;
      answer.content.tokens = previous.output;
      summary.prompt.push_back(answer);
    }
    summary.output = summary_tokens_;
    summary.output_identity = OutputIdentity(task.id, summary.index);

    Context compacted(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(lead));
    ContextPiece piece;
    piece.piece.kind = SpanKind::kSummary;
    piece.piece.content.identity = summary.output_identity;
    piece.piece.content.tokens = summary_tokens_;
    piece.turn = turn;
    piece.recorded_begin = rest.front().recorded_begin;
    piece.recorded = false;
    compacted.push_back(piece);
    for (ContextPiece& p : LastTokens(rest, keep_recent_tokens_)) compacted.push_back(std::move(p));

    *context = std::move(compacted);
    requests->push_back(std::move(summary));
  }

  Tokens threshold_tokens_;
  Tokens summary_tokens_;
  Tokens keep_recent_tokens_;
};

}  // namespace

Result<std::unique_ptr<ContextPolicy>> MakeSummarise(const ContextPolicyParams& params) {
  if (Status s = CheckPositive(kSummarise, "threshold_tokens", params.threshold_tokens); !s) {
    return s.error();
  }
  if (Status s = CheckPositive(kSummarise, "summary_tokens", params.summary_tokens); !s) {
    return s.error();
  }
  if (Status s = CheckNonNegative(kSummarise, "keep_recent_tokens", params.keep_recent_tokens);
      !s) {
    return s.error();
  }
  if (params.keep_recent_tokens + params.summary_tokens >= params.threshold_tokens) {
    return PolicyError(kSummarise,
                       "keep_recent_tokens + summary_tokens must be below threshold_tokens, got " +
                           std::to_string(params.keep_recent_tokens) + " + " +
                           std::to_string(params.summary_tokens) +
                           " >= " + std::to_string(params.threshold_tokens));
  }
  return std::unique_ptr<ContextPolicy>(std::make_unique<Summarise>(
      params.threshold_tokens, params.summary_tokens, params.keep_recent_tokens));
}

}  // namespace kvbill
