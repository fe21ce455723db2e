// The coding-agent preset: an autonomous coding agent (Claude Code solving
// SWE-bench Lite tasks), calibrated on the published SWEContextBench facts
// and TraceLab's output per call (docs/generator.md lists every source).
//
// A lognormal is fitted from a median m and a 90th percentile p90:
// ln X ~ N(ln m, σ²) with σ = ln(p90 / m) / Φ⁻¹(0.9), Φ⁻¹(0.9) = 1.2816.
#include "trace/presets/presets.h"

namespace kvbill {
namespace {

// Calls per task: median 46, p90 68 (SWEContextBench).
//   σ = ln(68 / 46) / 1.2816 = 0.3909 / 1.2816 = 0.305
constexpr double kTurnsMedian = 46;
constexpr double kTurnsP90 = 68;

// First prompt 21–29k tokens, most of it tools + system prompt
// (SWEContextBench). The shared prefix is the low end, 21,000 tokens; its
// split between system prompt and tool definitions is an assumption (only
// the sum is published). The task's own request fills the rest: median
// 4,000 (→ first prompt median 25k, the middle of the range), p90 7,000,
// clamped at 8,000 so that no first prompt exceeds 29k.
//   σ = ln(7000 / 4000) / 1.2816 = 0.5596 / 1.2816 = 0.437
constexpr Tokens kCodingSystemTokens = 3000;
constexpr Tokens kToolsTokens = 18000;
constexpr double kRequestMedian = 4000;
constexpr double kRequestP90 = 7000;
constexpr double kRequestMax = 8000;

// Output per call: median 252 (TraceLab, Claude). Its spread is not
// published; p90 760 is the SWEContextBench log's p90 over calls whose
// output is not a streaming placeholder (measured by kvbill; median there
// 232, close to TraceLab's). Clamped at a 32k max_tokens.
//   σ = ln(760 / 252) / 1.2816 = 1.1039 / 1.2816 = 0.861
constexpr double kOutputMedian = 252;
constexpr double kOutputP90 = 760;
constexpr double kCodingOutputMax = 32000;

// New tokens per call: median ~470, p90 ~1.5k (SWEContextBench). A call
// appends the previous output (above) plus a tool result, so the tool result
// is fitted such that the sum has those quantiles: a Monte Carlo grid search
// (60,000 pairs per point) gives median 110, p90 860 → sum median 468, p90
// 1,500. Clamped at 25,000, the size at which agent tools truncate a result
// (assumption).
//   σ = ln(860 / 110) / 1.2816 = 2.0565 / 1.2816 = 1.605
constexpr double kToolResultMedian = 110;
constexpr double kToolResultP90 = 860;
constexpr double kToolResultMax = 25000;

// Gap between calls: median 5.8 s, p90 13 s (SWEContextBench). The published
// gap runs from one call's start to the next, so it includes the model's own
// generation time; tool_s carries all of it (docs/generator.md).
//   σ = ln(13 / 5.8) / 1.2816 = 0.8071 / 1.2816 = 0.630
constexpr double kGapMedianS = 5.8;
constexpr double kGapP90S = 13;

// Not published (the benchmark ran its tasks one after another): one task
// every 30 s on average, a handful running at once.
constexpr double kCodingArrivalsPerS = 1.0 / 30;

Span SharedSpan(SpanKind kind, Tokens tokens, const char* content_id) {
  Span span;
  span.kind = kind;
  span.tokens = tokens;
  span.content_id = content_id;
  return span;
}

}  // namespace

GeneratorPreset CodingAgentPreset() {
  GeneratorPreset preset;
  preset.name = "coding-agent";
  preset.description =
      "autonomous coding agent, calibrated on SWEContextBench (Claude Code, SWE-bench Lite)";
  preset.arrivals_per_s = kCodingArrivalsPerS;
  preset.turns_per_task =
      Distribution::LognormalFromMedianP90(kTurnsMedian, kTurnsP90).Clamped(1, 1000);
  preset.shared_prefix = {
      SharedSpan(SpanKind::kSystem, kCodingSystemTokens, "coding-agent/system"),
      SharedSpan(SpanKind::kTools, kToolsTokens, "coding-agent/tools"),
  };
  preset.first_user_tokens =
      Distribution::LognormalFromMedianP90(kRequestMedian, kRequestP90).Clamped(0, kRequestMax);
  preset.user_turn_share = 0;
  preset.tool_result_tokens =
      Distribution::LognormalFromMedianP90(kToolResultMedian, kToolResultP90)
          .Clamped(0, kToolResultMax);
  preset.tool_gap_s = Distribution::LognormalFromMedianP90(kGapMedianS, kGapP90S);
  preset.output_tokens =
      Distribution::LognormalFromMedianP90(kOutputMedian, kOutputP90).Clamped(0, kCodingOutputMax);
  return preset;
}

}  // namespace kvbill
