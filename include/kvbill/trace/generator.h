// TraceGenerator: synthetic agent traces drawn from distributions.
//
// A preset describes one kind of workload (docs/generator.md names the source
// of every number). Each task:
//   - arrives after an exponential gap from the previous one (a Poisson
//     process of `arrivals_per_s`), on a millisecond clock starting at 0;
//   - has `turns_per_task` turns (rounded, at least 1);
//   - opens with the preset's shared prefix (spans with content ids, the same
//     in every task) and a per-task `user` span of `first_user_tokens`;
//   - in every later turn appends an `assistant` span equal to the previous
//     turn's output, then either a `user` span (probability
//     `user_turn_share`, after a human pause of `human_pause_s`) or a
//     `tool_result` span (after a tool gap of `tool_gap_s`); the wait is the
//     previous turn's `tool_s`;
//   - generates `output_tokens` in every turn; the last turn's tool_s is 0.
// Token counts are rounded to whole tokens and times to milliseconds.
//
// Determinism: a (preset, seed) pair gives the same tasks on every platform
// (util/random.h): draws happen in a fixed order, one uniform per sample:
// inter-arrival, turn count, first user part, first output, then for each
// later turn its kind, wait, appended tokens and output.
#ifndef KVBILL_TRACE_GENERATOR_H_
#define KVBILL_TRACE_GENERATOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/trace/trace.h"
#include "kvbill/util/random.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct GeneratorPreset {
  std::string name;                  // e.g. "coding-agent"; also the task id prefix
  std::string description;           // one line, for --help
  double arrivals_per_s = 1.0 / 30;  // Poisson rate of task arrivals, > 0
  Distribution turns_per_task = Distribution::Constant(1);
  // Spans every task starts with; each carries a content id.
  std::vector<Span> shared_prefix;
  Distribution first_user_tokens = Distribution::Constant(0);  // the task's own request
  // Probability that a turn after the first is a user turn; else a tool turn.
  double user_turn_share = 0;
  Distribution tool_result_tokens = Distribution::Constant(0);
  Distribution tool_gap_s = Distribution::Constant(0);
  Distribution user_tokens = Distribution::Constant(0);
  Distribution human_pause_s = Distribution::Constant(0);
  Distribution output_tokens = Distribution::Constant(0);
};

// The most tasks a generated trace holds (`trace gen --tasks`, a scenario's
// trace.tasks): a run keeps every task's requests in memory, and a million
// coding-agent tasks are about 40 million requests.
inline constexpr std::int64_t kMaxGeneratedTasks = 1'000'000;

// "coding-agent|chat": the presets' names, for help texts and errors.
std::string GeneratorPresetChoices();
// The preset called `name`. Error: "unknown preset \"x\" (one of coding-agent|chat)".
Result<GeneratorPreset> FindGeneratorPreset(std::string_view name);

class TraceGenerator {
 public:
  TraceGenerator(GeneratorPreset preset, std::uint64_t seed);

  // The next task, id "<preset name>-<n>" with n = 1, 2, ...; always passes
  // ValidateTask.
  Task Next();

  const GeneratorPreset& preset() const { return preset_; }

 private:
  Turn FirstTurn();
  // A later turn; sets *wait_s to the pause before it.
  Turn LaterTurn(Tokens previous_output, Seconds* wait_s);
  Tokens DrawTokens(const Distribution& distribution);
  Seconds DrawSeconds(const Distribution& distribution);

  GeneratorPreset preset_;
  Rng rng_;
  std::int64_t tasks_made_ = 0;
  std::int64_t clock_ms_ = 0;  // arrival of the last task
};

}  // namespace kvbill

#endif  // KVBILL_TRACE_GENERATOR_H_
