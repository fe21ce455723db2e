#include "kvbill/trace/stats.h"

#include <algorithm>
#include <unordered_set>

namespace kvbill {

Result<TraceStats> ComputeTraceStats(TraceReader* reader) {
  TraceStats stats;
  SummaryBuilder turns, input, appended, output, growth, gap;
  Tokens prompt_sum = 0;
  Tokens reused_sum = 0;
  Tokens hashed_prompt_sum = 0;
  Tokens hashed_hit_sum = 0;
  std::unordered_set<std::uint64_t> seen_blocks;
  Task task;
  while (true) {
    auto more = reader->Next(&task);
    if (!more) return more.error();
    if (!*more) break;
    ++stats.tasks;
    turns.Add(static_cast<double>(task.turns.size()));
    const std::vector<Tokens> prompts = PromptTokens(task);
    for (std::size_t k = 0; k < task.turns.size(); ++k) {
      const Turn& turn = task.turns[k];
      const Tokens added = AppendedTokens(turn);
      ++stats.requests;
      input.Add(static_cast<double>(prompts[k]));
      appended.Add(static_cast<double>(added));
      output.Add(static_cast<double>(turn.output));
      if (turn.output_is_placeholder) ++stats.placeholder_outputs;
      if (k > 0) growth.Add(static_cast<double>(prompts[k] - prompts[k - 1]));
      if (k + 1 < task.turns.size()) gap.Add(turn.tool_s);
      prompt_sum += prompts[k];
      reused_sum += prompts[k] - added;
      if (turn.blocks) {
        hashed_prompt_sum += prompts[k];
        const Tokens size = turn.blocks->block_size;
        for (std::size_t b = 0; b < turn.blocks->hashes.size(); ++b) {
          if (seen_blocks.count(turn.blocks->hashes[b]) == 0) break;
          const Tokens start = static_cast<Tokens>(b) * size;
          hashed_hit_sum += std::clamp<Tokens>(prompts[k] - start, 0, size);
        }
        seen_blocks.insert(turn.blocks->hashes.begin(), turn.blocks->hashes.end());
      }
    }
  }
  stats.turns_per_task = turns.Build();
  stats.input_tokens = input.Build();
  stats.appended_tokens = appended.Build();
  stats.output_tokens = output.Build();
  stats.context_growth_tokens = growth.Build();
  stats.gap_s = gap.Build();
  if (prompt_sum > 0) {
    stats.task_prefix_reuse_share =
        static_cast<double>(reused_sum) / static_cast<double>(prompt_sum);
  }
  if (hashed_prompt_sum > 0) {
    stats.block_reuse_share =
        static_cast<double>(hashed_hit_sum) / static_cast<double>(hashed_prompt_sum);
  }
  return stats;
}

}  // namespace kvbill
