// The format matrix: for each weight and KV-cache format and each GPU
// architecture, how a serving engine stores it and what precision it
// computes in — or that no engine runs it. The matrix is data in the GPU
// catalog (scenarios/gpus.json, "architectures" and "formats"), each cell
// citing the vLLM source that selects the kernel; docs/hardware.md#formats
// shows it.
//
//   stored    the format's own width, scales included (kv_format.h): what
//             the weights and the KV cache take in memory and stream
//   computed  "bf16" (16-bit math; for KV: dequantised inside attention),
//             "fp32", "fp8" / "fp4" (the tensor rate of that width: W8A8,
//             W4A4, FP8 attention), or "w8a16" / "w4a16" / "w2a16"
//             (weight-only: N-bit weights dequantised in the kernel, 16-bit
//             math, e.g. Marlin)
//
// A cell with runs == false is a combination no engine runs (NVFP4 KV on
// Hopper): a scenario naming it is an error, `compare` marks the lever
// "not applicable", both with the cell's reason.
//
// Pure: the matrix is read once from the bundled catalog.
#ifndef KVBILL_HARDWARE_FORMAT_SUPPORT_H_
#define KVBILL_HARDWARE_FORMAT_SUPPORT_H_

#include <string>
#include <vector>

#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"
#include "kvbill/model/model_shape.h"
#include "kvbill/util/result.h"

namespace kvbill {

enum class FormatRole { kWeights, kKvCache };

struct GpuArchitecture {
  std::string id;          // "hopper"
  std::string name;        // "NVIDIA Hopper"
  std::string capability;  // "9.0", or the AMD target
};

// One cell of the matrix.
struct FormatCell {
  bool runs = true;
  std::string computed;  // see above; empty when !runs
  std::string kernel;    // what the engine dispatches to
  std::string note;      // what kvbill assumes about it, if anything
  // Routed experts (weights only): the fused-MoE kernel table that times
  // them: "bf16", "fp8_block", "int4" (Marlin), "mxfp4" (OpenAI Triton).
  // Defaults by `computed`: bf16 and fp32 -> bf16, fp8 and fp4 ->
  // fp8_block, weight-only -> int4.
  std::string experts_table;
  // Dense layers (weights only) are dequantised to a 16-bit copy every
  // forward and multiplied by the bf16 GEMM (vLLM's NVFP4 emulation on
  // AMD): they stream more bytes than bf16 weights, not fewer.
  bool dense_dequantised = false;
  std::string source;  // the engine source that decides it
  std::string reason;  // why no engine runs it (!runs)
};

// How `gpu` runs one format in one role.
struct FormatRun {
  FormatRole role = FormatRole::kWeights;
  std::string format;        // the stored format's name, e.g. "fp8-e4m3"
  double stored_bits = 16;   // bits per element of a 128-element vector, scales included
  std::string matrix_row;    // the matrix row it falls in, e.g. "int4" for int4-g128 (awq)
  std::string gpu;           // catalog id
  std::string architecture;  // the matrix column
  FormatCell cell;

  bool runs() const { return cell.runs; }
  // The computed precision as people write it: "W8A16", "W4A4 (FP4)",
  // "FP8 attention", "BF16".
  std::string ComputedLabel() const;
  // One sentence for a run's notes: "fp8-e4m3 weights on a100-80gb: stored
  // at 8 bits, computed as W8A16 (Marlin (FP8 weight-only))", or for a
  // combination no engine runs: "nvfp4 KV cache on h100-sxm (NVIDIA
  // Hopper): no engine runs it: <reason>". `with_note` appends the cell's
  // note (what kvbill assumes about it).
  std::string Describe(bool with_note = true) const;
};

// Whether weights stored as `stored` and computed as `computed_label`
// (FormatRun::ComputedLabel) run as a weight-only fallback: a format made
// for its own arithmetic (fp8, nvfp4) computed with 16-bit activations
// (W8A16, W4A16) on a GPU without units for it. It saves memory, not
// compute.
bool IsWeightOnlyFallback(std::string_view stored, std::string_view computed_label);
// The unsupported_format warning: "GPU has no units for the format's
// arithmetic, so the engine runs a weight-only fallback: PARTS; it saves
// memory but not compute (docs/hardware.md#formats)", `parts` naming each
// fallback ("fp8-e4m3 weights run as W8A16 (Marlin ...)").
std::string WeightOnlyFallbackWarning(const std::string& gpu, const std::string& parts);

// The architectures of the matrix, in catalog order.
const std::vector<GpuArchitecture>& GpuArchitectures();

// The matrix cell of `format` in `role` on `gpu`. A format the matrix has
// no row for runs as its width suggests, with a note saying so.
FormatRun HowGpuRuns(const GpuSpec& gpu, FormatRole role, const ElementFormat& format);

// OK when `gpu` runs `format` in `role`; otherwise the error Describe()
// gives.
Status CheckGpuRuns(const GpuSpec& gpu, FormatRole role, const ElementFormat& format);

// OK when an engine runs the checkpoint's own weight formats on `gpu`
// (NativePartFormats: the dense and other parts, and an MoE's routed
// experts), as a deployment with weight_format "auto" runs them; otherwise
// the first CheckGpuRuns error.
Status CheckCheckpointRuns(const GpuSpec& gpu, const ModelShape& model);

// Empty when SGLang stores a KV cache in `format`, else why not: its
// --kv-cache-dtype is the model's dtype, bf16, fp8_e4m3 or fp8_e5m2
// (fp4_e2m1, an MXFP4 cache on Blackwell, is not modelled), so no int4,
// int2, per-token-head fp8 or NVFP4 cache.
std::string SglangKvProblem(const ElementFormat& format);

// Empty when vLLM stores `model`'s KV cache in `format`, else why not. A
// model with latent (MLA) attention runs on vLLM's MLA backends (FlashMLA,
// FlashInfer MLA, CUTLASS MLA, Triton MLA), whose caches are the model's
// dtype or fp8 e4m3 (their supported_kv_cache_dtypes: auto, bfloat16, fp8,
// fp8_e4m3); the per-token-head caches (int4, fp8) live in vLLM's Triton
// attention backend only, and its NVFP4 cache in FlashInfer's standard
// attention. Any other model: "" (the GPU's matrix decides, CheckGpuRuns).
std::string VllmKvProblem(const ElementFormat& format, const ModelShape& model);

// The KV formats an engine ("vllm" or "sglang") stores for `model`:
// SglangKvProblem, or VllmKvProblem then VllmInt4KvProblem. `format` is the
// one the engine stores (EngineKvFormat: "int4" read as vLLM's group).
std::string EngineKvProblem(const std::string& engine, const ElementFormat& format,
                            const ModelShape& model);

// The matrix as Markdown tables (weights, then KV cache): one row per
// format, one column per architecture; docs/hardware.md#formats holds it.
std::string FormatMatrixMarkdown();

// Parses the "architectures" and "formats" sections of a catalog document;
// errors give `source` and the JSON pointer. The bundled matrix comes from
// scenarios/gpus.json.
struct FormatMatrix {
  std::vector<GpuArchitecture> architectures;
  struct Row {
    FormatRole role = FormatRole::kWeights;
    std::string format;                                     // matrix row name
    std::vector<std::pair<std::string, FormatCell>> cells;  // by architecture id; "all" last
  };
  std::vector<Row> rows;
};
Result<FormatMatrix> ParseFormatMatrix(const std::string& json_text, const std::string& source);

// The group of vLLM's int4 KV cache (int4_per_token_head: one scale per
// token and KV head) for `model`: the K head size of its first per-head
// attention layer, when an int4-gN format can have it (a power of two in
// 8..1024); 0 otherwise (a latent or attention-free model).
std::int64_t VllmInt4KvGroup(const ModelShape& model);

// Empty unless `format` is an int4 KV format of another group than vLLM's
// int4_per_token_head for `model` (VllmInt4KvGroup), which vLLM does not
// run: why not (int4-g32 for a model of 128-element heads).
std::string VllmInt4KvProblem(const ElementFormat& format, const ModelShape& model);

// The KV format an engine stores for the format named `name` (parsed as
// `parsed`): on vLLM, "int4" is its int4_per_token_head, int4-g<head_dim>
// (VllmInt4KvGroup), as simulate, fit, breakeven and plot read it; any other
// name or engine: `parsed`.
ElementFormat EngineKvFormat(const std::string& name, const ElementFormat& parsed,
                             const ModelShape& model, const std::string& engine);

}  // namespace kvbill

#endif  // KVBILL_HARDWARE_FORMAT_SUPPORT_H_
