// The memory chart: KV memory of one sequence (or a batch) against context,
// for several models, with the GPU's capacity line and each model's
// capacity-minus-weights-and-reserve line, and the context where each model stops fitting
// marked. Pure: builds a LineChart (svg_chart.h) from shapes and a deployment.
#ifndef KVBILL_REPORT_MEMORY_CHART_H_
#define KVBILL_REPORT_MEMORY_CHART_H_

#include <string>
#include <vector>

#include "kvbill/hardware/fit.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/report/svg_chart.h"
#include "kvbill/util/result.h"

namespace kvbill {

struct MemoryChartOptions {
  Deployment deployment;    // GPU, tensor parallel, memory fraction
  ElementFormat kv_format;  // KV element format for every model
  std::string weight_format = "auto";
  std::int64_t batch = 1;
  // Tokens per KV block; 0: each model's as its engine pages it on the GPU
  // (DefaultKvBlockSize: vLLM's FlashMLA 64 for DeepSeek-V3 on Hopper, else
  // 16 for most), by kv_engine (vllm when empty).
  Tokens block_size = 16;
  Tokens min_context = 4096;  // x axis range, tokens
  Tokens max_context = 1 << 20;
  // Draw every curve over the whole axis, past the models' limits (a what-if).
  bool ignore_model_limit = false;
  // When set ("vllm", "sglang"), each model's activation reserve is that
  // engine's default for it (DefaultReserveGib, by its hidden size) in place
  // of deployment.activation_reserve_bytes.
  std::string reserve_engine;
  // The name the KV format was asked by and the engine that stores it:
  // "int4" on vLLM is each model's int4-g<head_dim> (EngineKvFormat,
  // hardware/format_support.h). Empty: kv_format for every model.
  std::string kv_format_name;
  std::string kv_engine;
  // The engine whose KV pool the curves and markers size: SGLang's keeps
  // every token of most models' sliding layers (SglangPoolModel,
  // cache/kv_groups.h). Empty: kv_engine, else vLLM's.
  std::string pool_engine;
};

// One curve per model: block-rounded KV plus linear/SSM state, in GiB
// (2^30 bytes), for the whole replica, sampled at every power of two and
// 16 log-spaced points per octave between min and max context, and drawn
// only up to the model's context limit (ModelShape::max_model_len, when the
// config gives one; unless ignore_model_limit): the curve ends there and the legend names the limit
// ("gemma-2-9b (context limit 8k)"). The grey capacity line is the memory
// share for weights + KV; each model gets a dashed "capacity - weights" line
// in its colour, less its activation reserve too when it has one ("capacity -
// qwen3-32b weights and reserve") (omitted, and the legend says "weights too
// big", when its weights alone do not fit) and a marker at its longest
// fitting context (from EvaluateFit, with sliding and chunked layers holding
// kv_engine's default prefill chunk beside their window, as `fit` counts
// them; the curve is the KV stored at each context) when that lies on the axis and within
// the context limit; when the whole context fits, the marker sits at the
// curve's end ("llama-3.1-8b: its whole 128k context fits"). The legend
// explains the line styles (LineChart::legend_notes).
Result<LineChart> BuildMemoryChart(const std::vector<ModelShape>& models,
                                   const MemoryChartOptions& options);

}  // namespace kvbill

#endif  // KVBILL_REPORT_MEMORY_CHART_H_
