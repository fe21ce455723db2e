#include "kvbill/report/memory_chart.h"

#include <algorithm>
#include <cmath>

#include "kvbill/cache/kv_groups.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/kv_blocks.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/util/units.h"

namespace kvbill {
namespace {

constexpr int kPointsPerOctave = 16;

double ToGiB(Bytes b) { return static_cast<double>(b) / kBytesPerGiB; }

// Contexts to sample: log-spaced, always including min and max.
std::vector<Tokens> SampleContexts(Tokens lo, Tokens hi) {
  std::vector<Tokens> out;
  const double octaves = std::log2(static_cast<double>(hi) / static_cast<double>(lo));
  const int n = std::max(1, static_cast<int>(std::ceil(octaves * kPointsPerOctave)));
  for (int i = 0; i <= n; ++i) {
    const double t = static_cast<double>(lo) * std::exp2(octaves * i / n);
    out.push_back(std::clamp(static_cast<Tokens>(std::llround(t)), lo, hi));
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string ShortTokens(Tokens t) {
  if (t >= (1 << 20)) return FormatFixed(static_cast<double>(t) / (1 << 20), 2) + "M";
  if (t >= 1024) return FormatFixed(static_cast<double>(t) / 1024, 1) + "k";
  return std::to_string(t);
}

}  // namespace

Result<LineChart> BuildMemoryChart(const std::vector<ModelShape>& models,
                                   const MemoryChartOptions& o) {
  if (models.empty()) return Error("no models to plot");
  if (o.min_context < 1 || o.max_context <= o.min_context) {
    return Error("context range must satisfy 1 <= min < max");
  }
  const int tp = std::max(1, o.deployment.tensor_parallel);
  LineChart chart;
  const std::string gpus = (tp == 1 ? "1x " : std::to_string(tp) + "x ") + o.deployment.gpu.id;
  chart.title = "KV cache memory against context";
  const bool per_model = o.kv_engine == "vllm" && o.kv_format_name == "int4";
  // Each model's block: the one asked, or its engine's on this GPU.
  std::vector<Tokens> blocks;
  for (const ModelShape& m : models) {
    blocks.push_back(
        o.block_size > 0
            ? o.block_size
            : DefaultKvBlockSize(o.kv_engine.empty() ? "vllm" : o.kv_engine, m, o.deployment.gpu));
  }
  std::string blocks_text = std::to_string(blocks.front()) + "-token blocks";
  if (std::any_of(blocks.begin(), blocks.end(), [&](Tokens b) { return b != blocks.front(); })) {
    // The most common size, then the models that differ.
    std::string others;
    for (std::size_t i = 0; i < models.size(); ++i) {
      if (blocks[i] == blocks.front()) continue;
      others += (others.empty() ? "" : ", ") + std::to_string(blocks[i]) + " for " + models[i].name;
    }
    blocks_text = std::to_string(blocks.front()) + "-token blocks (" + others + ")";
  }
  chart.subtitle =
      (per_model ? std::string("int4 (vLLM's int4_per_token_head)") : o.kv_format.name) + " KV, " +
      std::to_string(o.batch) + (o.batch == 1 ? " sequence" : " sequences") + ", " + blocks_text +
      ", on " + gpus + " (" + FormatPercentOf(o.deployment.memory_fraction) +
      "% of memory for weights + KV); GiB = 2^30 bytes";
  // A format no engine runs here still has a size: the chart says whose.
  if (!CheckGpuRuns(o.deployment.gpu, FormatRole::kKvCache, o.kv_format)) {
    chart.subtitle +=
        "; no engine runs " + o.kv_format.name + " KV on " + o.deployment.gpu.id + ": memory alone";
  }
  chart.x_axis.label = "context (tokens per sequence)";
  chart.x_axis.scale = AxisScale::kLog;
  chart.x_axis.min = static_cast<double>(o.min_context);
  chart.x_axis.max = static_cast<double>(o.max_context);
  chart.x_axis.ticks = PowerOfTwoTokenTicks(chart.x_axis.min, chart.x_axis.max);
  chart.y_axis.label = "memory (GiB)";
  chart.y_axis.scale = AxisScale::kLog;
  chart.legend = LegendPlacement::kRight;
  chart.legend_width_px = 250;
  chart.width_px = 1050;

  double y_min = 1e300, y_max = 0;
  const std::vector<Tokens> contexts = SampleContexts(o.min_context, o.max_context);
  Bytes capacity = 0;
  bool any_reserve = false;
  for (std::size_t i = 0; i < models.size(); ++i) {
    const ModelShape& m = models[i];
    const std::string color(kChartPalette[i % kChartPalette.size()]);
    // The curve stops at the model's context limit when that is on the axis.
    const Tokens limit = m.max_model_len;
    const bool limited = !o.ignore_model_limit && limit > 0 && limit < o.max_context;
    Series s;
    s.name = m.name;
    const std::string limit_note = limited ? "context limit " + FormatTokenCount(limit) : "";
    if (limited) s.name += " (" + limit_note + ")";
    s.color = color;
    const ElementFormat kv_format =
        o.kv_engine.empty() ? o.kv_format
                            : EngineKvFormat(o.kv_format_name, o.kv_format, m, o.kv_engine);
    const std::string pool_engine = !o.pool_engine.empty() ? o.pool_engine
                                    : !o.kv_engine.empty() ? o.kv_engine
                                                           : std::string("vllm");
    const ModelShape pooled = pool_engine == "sglang" ? SglangPoolModel(m) : m;
    auto kv_gib = [&](Tokens ctx) {
      const SequenceFootprint f = Footprint(pooled, kv_format, ctx, blocks[i], tp);
      return ToGiB(o.batch * (f.block_rounded_bytes + f.state_bytes) * tp);
    };
    for (Tokens ctx : contexts) {
      if (limited && ctx > limit) break;
      s.points.push_back(Point{static_cast<double>(ctx), kv_gib(ctx)});
    }
    if (limited && limit >= o.min_context &&
        (s.points.empty() || s.points.back().x < static_cast<double>(limit))) {
      s.points.push_back(Point{static_cast<double>(limit), kv_gib(limit)});
    }
    for (const Point& p : s.points) {
      if (p.y > 0) y_min = std::min(y_min, p.y);
      y_max = std::max(y_max, p.y);
    }
    chart.series.push_back(s);

    FitRequest req;
    req.model = m;
    req.engine = pool_engine;
    req.kv_format = kv_format;
    req.weight_format = o.weight_format;
    req.context = o.min_context;
    req.batch = o.batch;
    req.block_size = blocks[i];
    // The marker is fit's answer: sliding and chunked layers hold the
    // engine's prefill chunk beside their window.
    if (!o.kv_engine.empty()) {
      req.prefill_chunk_tokens =
          DefaultEngineLimits(o.kv_engine, o.deployment.gpu, tp).max_num_batched_tokens;
    }
    req.deployment = o.deployment;
    if (!o.reserve_engine.empty()) {
      auto gib = DefaultReserveGib(o.reserve_engine, o.deployment.gpu, tp, m.hidden_size);
      if (!gib) return gib.error().Within(m.name);
      req.deployment.activation_reserve_bytes = static_cast<Bytes>(*gib * kBytesPerGiB);
    }
    auto fit = EvaluateFit(req);
    if (!fit) return fit.error().Within(m.name);
    const Bytes reserve = req.deployment.activation_reserve_bytes * tp;
    capacity = fit->capacity_bytes + reserve;  // the share, before the reserve
    any_reserve = any_reserve || reserve > 0;
    const Bytes free = fit->capacity_bytes - fit->weights_bytes;
    if (free <= 0) {
      chart.series.back().name =
          m.name + " (weights too big" + (limited ? "; " + limit_note : "") + ")";
      continue;
    }
    ReferenceLine free_line;
    free_line.y = ToGiB(free);
    free_line.label = "capacity - " + m.name +
                      (reserve > 0 ? " weights and reserve: " : " weights: ") +
                      FormatFixed(ToGiB(free), 1) + " GiB";
    free_line.color = color;
    chart.reference_lines.push_back(free_line);
    y_min = std::min(y_min, ToGiB(free));
    const bool whole_context_fits = limited && limit >= o.min_context &&
                                    (fit->max_context_unbounded || fit->max_context >= limit);
    if (whole_context_fits) {
      Annotation a;
      a.x = static_cast<double>(limit);
      a.y = s.points.back().y;
      a.text = m.name + ": its whole " + FormatTokenCount(limit) + " context fits";
      a.color = color;
      chart.annotations.push_back(a);
    } else if (!fit->max_context_unbounded && fit->max_context < o.min_context) {
      // It stops fitting before the axis starts: said in the legend, as a
      // model whose weights leave no room is.
      chart.series.back().name = m.name + " (fits up to " + ShortTokens(fit->max_context) +
                                 " tokens, left of the axis" + (limited ? "; " + limit_note : "") +
                                 ")";
    } else if (!fit->max_context_unbounded && fit->max_context >= o.min_context &&
               fit->max_context <= o.max_context) {
      Annotation a;
      a.x = static_cast<double>(fit->max_context);
      a.y = ToGiB(free);
      a.text = m.name + " fits up to " + ShortTokens(fit->max_context) + " tokens";
      a.color = color;
      chart.annotations.push_back(a);
    }
  }
  const std::string sequences =
      o.batch == 1 ? "one sequence" : std::to_string(o.batch) + " sequences";
  chart.legend_notes = {
      {"solid: KV memory of " + sequences + " (model colour)", "#444444", false, 2.0},
      {any_reserve ? "dashed: capacity minus that model's weights and reserve"
                   : "dashed: capacity minus that model's weights",
       "#444444", true, 1.5},
      {"grey: the GPUs' capacity for weights + KV", "#444444", false, 1.5},
  };
  ReferenceLine cap;
  cap.y = ToGiB(capacity);
  cap.label = gpus + " capacity: " + FormatFixed(ToGiB(capacity), 1) + " GiB";
  cap.color = "#444444";
  cap.dashed = false;
  chart.reference_lines.insert(chart.reference_lines.begin(), cap);
  y_max = std::max(y_max, ToGiB(capacity));
  y_min = std::min(y_min, ToGiB(capacity));
  if (!(y_min < 1e300) || y_min <= 0) y_min = 0.01;
  // Round the range out to powers of two with a little room.
  chart.y_axis.min = std::exp2(std::floor(std::log2(y_min / 1.5)));
  chart.y_axis.max = std::exp2(std::ceil(std::log2(y_max * 1.5)));
  return chart;
}

}  // namespace kvbill
