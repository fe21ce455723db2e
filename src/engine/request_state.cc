#include "engine/request_state.h"

#include <algorithm>

namespace kvbill::engine {

std::string NameRequest(std::string_view task_id, int index, int turn, bool is_summary) {
  // Counted from 1, as the turn is (the JSON's "index" and "turn" count
  // from 0).
  return "request " + std::to_string(index + 1) + " of task \"" + std::string(task_id) + "\" (" +
         (is_summary ? "the summary before turn " : "turn ") + std::to_string(turn + 1) + ")";
}

void Seq::NameOutputUpTo(Tokens tokens) {
  if (explicit_hashes) return;
  const Tokens want_output = std::max<Tokens>(0, tokens - prompt);
  if (want_output > hashed_output) {
    hasher.Append(
        ContentPiece{request->output_identity, hashed_output, want_output - hashed_output});
    hashed_output = want_output;
  }
}

void Seq::ForgetNames() {
  hasher = RunHasher(1);
  planned = false;
  explicit_runs = {};
  explicit_ends = {};
}

void NamePrompt(Seq* seq, Tokens block_size, bool has_next, PromptChain* chain) {
  const Request& request = *seq->request;
  seq->hasher = RunHasher(block_size);
  seq->planned = request.explicit_blocks && request.planned_block_size == block_size;
  if (seq->planned) {
    seq->explicit_hashes = true;
  } else if (request.explicit_blocks) {
    seq->explicit_hashes =
        BlockRunsFromTrace(request.explicit_blocks->hashes, request.explicit_blocks->block_size,
                           seq->prompt, block_size, request.ExplicitTailKey(), &seq->explicit_runs,
                           &seq->explicit_ends)
            .ok();
  }
  if (seq->explicit_hashes) return;
  // An agent's next prompt usually extends the previous one: continue the
  // previous prompt's runs instead of naming the whole context again.
  std::size_t first = 0;
  if (chain->request == seq->req - 1 && chain->prompt != nullptr &&
      request.prompt.StartsWith(*chain->prompt)) {
    seq->hasher = chain->hasher;
    first = chain->prompt->size();
  }
  for (std::size_t i = first; i < request.prompt.size(); ++i) {
    seq->hasher.Append(request.prompt[i].content);
  }
  *chain = has_next ? PromptChain{seq->req, &request.prompt, seq->hasher} : PromptChain{};
}

void CommitNamed(KvPool& pool, Seq* seq, Tokens block_size, std::vector<BlockRun>* scratch) {
  seq->NameOutputUpTo(seq->computed);
  const std::int64_t full =
      std::min<std::int64_t>(seq->computed / block_size, seq->blocks().blocks());
  if (full > seq->committed) {
    scratch->clear();
    seq->blocks().Slice(seq->committed, full, scratch);
    pool.CommitRange(seq->id, seq->committed, *scratch);
  }
  seq->committed = std::max(seq->committed, full);
}

}  // namespace kvbill::engine
