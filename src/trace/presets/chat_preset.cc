// The chat preset: a person talking to a model, a few turns with human
// pauses and short prompts. Only the pauses and the output mean are
// calibrated on published numbers; docs/generator.md marks the rest as
// assumptions.
#include <cmath>

#include "trace/presets/presets.h"

namespace kvbill {
namespace {

// Turns: 1 + a geometric count with mean 2, so mean 3 and median 2
// (assumption: "a few turns").
constexpr double kExtraTurnsMean = 2;

// One system prompt shared by every conversation (assumption).
constexpr Tokens kChatSystemTokens = 1000;

// A user message: median 60 tokens, p90 400 (assumption: short prompts).
constexpr double kUserMedian = 60;
constexpr double kUserP90 = 400;
constexpr double kUserMax = 8000;

// Human wait before a user turn: median ~86 s, 20–30% longer than 5 minutes
// (TraceLab). Fitted through the median and P(> 300 s) = 25%, the middle of
// that range, i.e. 300 s is the 75th percentile, Φ⁻¹(0.75) = 0.6745:
//   σ = ln(300 / 86) / 0.6745 = 1.2494 / 0.6745 = 1.852
// Clamped at a day.
constexpr double kPauseMedianS = 86;
constexpr double kPauseP75S = 300;
constexpr double kNormalZ75 = 0.6744897501960817;
constexpr double kPauseMaxS = 86400;

// Output: mean 343 tokens (Mooncake conversation trace, FAST'25 Table 2),
// lognormal with σ = 1 (assumption), so median = 343 / e^0.5 = 208.
constexpr double kOutputMean = 343;
constexpr double kOutputSigma = 1;
constexpr double kChatOutputMax = 8192;

// Not published: one conversation every 10 s on average.
constexpr double kChatArrivalsPerS = 0.1;

}  // namespace

GeneratorPreset ChatPreset() {
  GeneratorPreset preset;
  preset.name = "chat";
  preset.description = "interactive chat: a few turns, human pauses, short prompts";
  preset.arrivals_per_s = kChatArrivalsPerS;
  preset.turns_per_task = Distribution::Geometric(kExtraTurnsMean).Shifted(1).Clamped(1, 200);
  Span system;
  system.kind = SpanKind::kSystem;
  system.tokens = kChatSystemTokens;
  system.content_id = "chat/system";
  preset.shared_prefix = {system};
  const Distribution user =
      Distribution::LognormalFromMedianP90(kUserMedian, kUserP90).Clamped(1, kUserMax);
  preset.first_user_tokens = user;
  preset.user_turn_share = 1;
  preset.user_tokens = user;
  preset.human_pause_s =
      Distribution::Lognormal(kPauseMedianS, std::log(kPauseP75S / kPauseMedianS) / kNormalZ75)
          .Clamped(0, kPauseMaxS);
  preset.output_tokens =
      Distribution::Lognormal(kOutputMean / std::exp(kOutputSigma * kOutputSigma / 2), kOutputSigma)
          .Clamped(0, kChatOutputMax);
  return preset;
}

}  // namespace kvbill
