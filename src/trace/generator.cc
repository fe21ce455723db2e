#include "kvbill/trace/generator.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kvbill/util/names.h"
#include "trace/presets/presets.h"

namespace kvbill {
namespace {

struct PresetEntry {
  std::string_view name;
  GeneratorPreset (*make)();
};

// Every preset, by name. Adding one: a file in src/trace/presets/, a line here.
constexpr PresetEntry kPresets[] = {
    {"coding-agent", &CodingAgentPreset},
    {"chat", &ChatPreset},
};

constexpr double kMsPerSecond = 1000;

}  // namespace

std::string GeneratorPresetChoices() {
  std::string choices;
  for (const PresetEntry& entry : kPresets) {
    if (!choices.empty()) choices += '|';
    choices += entry.name;
  }
  return choices;
}

Result<GeneratorPreset> FindGeneratorPreset(std::string_view name) {
  for (const PresetEntry& entry : kPresets) {
    if (entry.name == name) return entry.make();
  }
  std::vector<std::string> names;
  for (const PresetEntry& entry : kPresets) names.emplace_back(entry.name);
  const std::string hint = DidYouMean(name, names);
  return Error("unknown preset \"" + std::string(name) + "\"" + (hint.empty() ? "" : "; " + hint) +
               " (one of " + GeneratorPresetChoices() + ")");
}

TraceGenerator::TraceGenerator(GeneratorPreset preset, std::uint64_t seed)
    : preset_(std::move(preset)), rng_(seed) {}

Tokens TraceGenerator::DrawTokens(const Distribution& distribution) {
  const double value = distribution.Sample(rng_);
  return value > 0 ? std::llround(value) : 0;
}

// Draws past this are capped before they are rounded to milliseconds (a
// tiny arrival rate's gaps would overflow the integer): beyond any time a
// simulation takes (1e9 s), so the caller sees them as too late.
constexpr double kMaxDrawSeconds = 1e12;

Seconds TraceGenerator::DrawSeconds(const Distribution& distribution) {
  const double value = std::min(distribution.Sample(rng_), kMaxDrawSeconds);
  return value > 0 ? static_cast<double>(std::llround(value * kMsPerSecond)) / kMsPerSecond : 0;
}

Task TraceGenerator::Next() {
  Task task;
  task.id = preset_.name + "-" + std::to_string(++tasks_made_);
  const Seconds gap_s = DrawSeconds(Distribution::Exponential(1 / preset_.arrivals_per_s));
  // Saturating: the clock stays far inside int64 milliseconds.
  clock_ms_ = std::min<std::int64_t>(clock_ms_ + std::llround(gap_s * kMsPerSecond),
                                     std::llround(kMaxDrawSeconds * kMsPerSecond));
  task.arrival_s = static_cast<double>(clock_ms_) / kMsPerSecond;

  const Tokens turns = std::max<Tokens>(1, DrawTokens(preset_.turns_per_task));
  task.turns.reserve(static_cast<std::size_t>(turns));
  task.turns.push_back(FirstTurn());
  for (Tokens k = 1; k < turns; ++k) {
    Seconds wait_s = 0;
    Turn turn = LaterTurn(task.turns.back().output, &wait_s);
    task.turns.back().tool_s = wait_s;
    task.turns.push_back(std::move(turn));
  }
  return task;
}

Turn TraceGenerator::FirstTurn() {
  Turn turn;
  turn.spans = preset_.shared_prefix;
  Span user;
  user.kind = SpanKind::kUser;
  user.tokens = DrawTokens(preset_.first_user_tokens);
  turn.spans.push_back(user);
  turn.output = DrawTokens(preset_.output_tokens);
  return turn;
}

Turn TraceGenerator::LaterTurn(Tokens previous_output, Seconds* wait_s) {
  const bool user_turn = rng_.NextOpenUnit() < preset_.user_turn_share;
  *wait_s = DrawSeconds(user_turn ? preset_.human_pause_s : preset_.tool_gap_s);
  Turn turn;
  Span assistant;
  assistant.kind = SpanKind::kAssistant;
  assistant.tokens = previous_output;
  turn.spans.push_back(assistant);
  Span added;
  added.kind = user_turn ? SpanKind::kUser : SpanKind::kToolResult;
  added.tokens = DrawTokens(user_turn ? preset_.user_tokens : preset_.tool_result_tokens);
  turn.spans.push_back(added);
  turn.output = DrawTokens(preset_.output_tokens);
  return turn;
}

}  // namespace kvbill
