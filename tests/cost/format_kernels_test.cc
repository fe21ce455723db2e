// Which kernel curve times each format, and the collectives of tensor and
// expert parallelism against the measured tables.
#include "kvbill/cost/format_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kvbill/cost/engine_profile.h"
#include "kvbill/cost/operator_cost_model.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/weight_bytes.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

GpuSpec Gpu(const std::string& id) {
  auto g = LookupGpu(id);
  EXPECT_TRUE(g.ok()) << id;
  return g.ok() ? *g : GpuSpec{};
}

// The fused-MoE part of an iteration of `tokens`, ms a MoE layer.
double MoeMsPerLayer(const OperatorCostModel& m, Tokens tokens, double moe_layers) {
  for (const auto& [part, s] : m.DenseParts(tokens)) {
    if (part == "moe") return s / moe_layers * 1e3;
  }
  return 0.0;
}

FormatRun WeightsOn(const std::string& gpu, const std::string& format) {
  return HowGpuRuns(Gpu(gpu), FormatRole::kWeights, Fmt(format));
}

// A bf16 GEMM curve that adds its terms (smoothness 1) at full efficiency,
// on 1 TB/s and 1 PFLOP/s; fp8 curves with fixed times told apart.
GpuKernelCurves HandCurves(const std::string& gpu) {
  GpuKernelCurves c;
  c.gpu = gpu;
  c.spec = KernelSpec{1e12, 1e15, 2e15};
  GemmCurve g;
  g.kernel = "bf16 hand";
  g.smoothness = 1;
  c.gemm["bf16"] = g;
  g.kernel = "fp8 hand";
  g.fp8_rate = true;
  g.weight_bytes = 1;
  g.activation_bytes = 1;
  g.t0_s = 7e-6;
  g.mem_eff = 0.75;
  g.compute_eff = 0.78;
  c.gemm["fp8"] = g;
  g.kernel = "fp8_block hand";
  // Timed eagerly: the fit pins the memory efficiency at its bound and the
  // launches show as a large fixed time.
  g.t0_s = 75e-6;
  g.mem_eff = 1.0;
  g.compute_eff = 0.82;
  c.gemm["fp8_block"] = g;
  c.moe["bf16"] = LinearCurve{"bf16 moe", {1, 1, 1, 1, 1}, {}};
  return c;
}

TEST(FormatKernelsTest, WeightOnlyGemmStreamsStoredBytesAndComputesAtTheProfileRate) {
  // FP8 weights on A100 run FP8 Marlin (W8A16). m = 1,000, n = 2,000,
  // k = 4,000: bytes = n k x 1 (fp8) + m k x 2 + m n x 2 = 8e6 + 8e6 + 4e6
  // = 20e6 at 1 TB/s = 20 us; FLOPs 2 m n k = 1.6e10 at 1 PFLOP/s x 0.5 =
  // 32 us; smoothness 1 adds them: 52 us.
  const GpuKernelCurves curves = HandCurves("a100-80gb");
  const TimedGemm g = GemmForFormat(curves, WeightsOn("a100-80gb", "fp8"), Fmt("fp8"), true, 1.0,
                                    WeightOnlyRates{0.5, 0.25, "test"}, "weights");
  EXPECT_DOUBLE_EQ(g.curve.weight_bytes, 1.0);
  EXPECT_DOUBLE_EQ(g.curve.compute_rate, 0.5);
  EXPECT_NEAR(g.curve.Seconds(curves.spec, 1000, 2000, 4000), 52e-6, 1e-12);
  EXPECT_EQ(g.use.computed, "W8A16");
  EXPECT_EQ(
      g.use.timing.rfind("fitted: the bf16 GEMM curve at the stored width, computing at 50%", 0),
      0u);
  // AWQ int4-g128 on H100: 4 bits and a 16-bit scale and zero point per 128
  // weights, 4 + 32 / 128 = 4.25 bits per weight, at the 4-bit rate.
  const TimedGemm awq =
      GemmForFormat(HandCurves("h100-sxm"), WeightsOn("h100-sxm", "int4-g128"), Fmt("int4-g128"),
                    false, 1.0, WeightOnlyRates{0.5, 0.25, "test"}, "weights");
  EXPECT_DOUBLE_EQ(awq.curve.weight_bytes, 4.25 / 8);
  EXPECT_DOUBLE_EQ(awq.curve.compute_rate, 0.25);
  EXPECT_EQ(awq.use.computed, "W4A16");
  EXPECT_EQ(awq.use.timing.rfind("fitted: ", 0), 0u) << awq.use.timing;
}

// The weight-only rates are fitted on Marlin's kernels: 2-bit GPTQ (its
// exllama kernels) and a width outside the matrix (3 bits) borrow the 4-bit
// rate, an assumption the timing says (and timing_assumed reports), not
// "fitted".
TEST(FormatKernelsTest, AWeightOnlyKernelOtherThanMarlinBorrowsItsRateAsAnAssumption) {
  // A 3-bit GPTQ checkpoint's format (read from its quantization_config).
  const ElementFormat int3{"int3-g128", 3, 128, 32, ""};
  for (const auto& [format, kernel] : std::vector<std::pair<ElementFormat, std::string>>{
           {Fmt("int2"), "GPTQ exllama kernels (2-bit; no Marlin)"},
           {int3, "int3-g128's kernel"}}) {
    SCOPED_TRACE(format.name);
    const TimedGemm g = GemmForFormat(
        HandCurves("h100-sxm"), HowGpuRuns(Gpu("h100-sxm"), FormatRole::kWeights, format), format,
        false, 1.0, WeightOnlyRates{0.5, 0.25, "test"}, "weights");
    EXPECT_DOUBLE_EQ(g.curve.compute_rate, 0.25);
    EXPECT_EQ(g.use.timing.rfind("assumed: the bf16 GEMM curve at the stored width, computing at "
                                 "25% of its rate, the rate profile \"test\" parameter "
                                 "weight_only_4bit_rate fitted for Marlin's kernels (no "
                                 "measurement of " +
                                     kernel + ")",
                                 0),
              0u)
        << g.use.timing;
  }
}

// NVFP4 on MI355X (CDNA 4): vLLM's emulation dequantises the dense layers
// to a bf16 copy every forward and multiplies by it, so they stream more
// than bf16 weights; they were timed as a fused 4-bit kernel and ran 2.2x
// faster than bf16. m = 1,000, n = 2,000, k = 4,000 on the hand curve:
// the bf16 GEMM moves n k 2 + m k 2 + m n 2 = 16e6 + 8e6 + 4e6 = 28e6 B
// (28 us at 1 TB/s) and computes 1.6e10 FLOPs (16 us), added: 44 us; the
// pass before it reads 4.5 bits and writes 16 a weight, (0.5625 + 2) x 8e6
// = 20.5e6 B: 20.5 us. The experts keep the fused kernel (the MoE path).
TEST(FormatKernelsTest, DenseLayersDequantisedEachForwardPayTheCopyOnTopOfBf16) {
  EXPECT_TRUE(WeightsOn("mi355x", "nvfp4").cell.dense_dequantised);
  EXPECT_FALSE(WeightsOn("h100-sxm", "nvfp4").cell.dense_dequantised);
  const GpuKernelCurves curves = HandCurves("mi355x");
  const TimedGemm g = GemmForFormat(curves, WeightsOn("mi355x", "nvfp4"), Fmt("nvfp4"), false, 1.0,
                                    WeightOnlyRates{0.5, 0.25, "test"}, "weights");
  EXPECT_DOUBLE_EQ(g.curve.weight_bytes, 2.0);
  EXPECT_DOUBLE_EQ(g.curve.compute_rate, 1.0);
  EXPECT_NEAR(g.curve.Seconds(curves.spec, 1000, 2000, 4000), 44e-6 + 20.5e-6, 1e-12);
  EXPECT_EQ(g.use.timing.rfind("assumed: the bf16 GEMM curve after a pass per forward", 0), 0u);
  // An lm_head left in its checkpoint's format is not this path.
  const TimedGemm other = GemmForFormat(curves, WeightsOn("mi355x", "nvfp4"), Fmt("nvfp4"), false,
                                        1.0, WeightOnlyRates{0.5, 0.25, "test"}, "embeddings");
  EXPECT_DOUBLE_EQ(other.curve.dequant_bytes, 0.0);
}

TEST(FormatKernelsTest, Fp8CheckpointsUseTheBlockTableAndLoadQuantisedWeightsPerTensor) {
  const GpuKernelCurves curves = HandCurves("h100-sxm");
  const TimedGemm block = GemmForFormat(curves, WeightsOn("h100-sxm", "fp8"), Fmt("fp8"), true, 1.0,
                                        WeightOnlyRates{}, "weights");
  EXPECT_EQ(block.curve.kernel, "fp8_block hand");
  // The per-tensor rows, timed in a CUDA graph, give the fixed time and
  // the weight streaming; the block rows their compute rate; outside a
  // graph a call pays the eager rows' launches beyond that: 75 - 7 = 68 us.
  EXPECT_DOUBLE_EQ(block.curve.t0_s, 7e-6);
  EXPECT_DOUBLE_EQ(block.curve.mem_eff, 0.75);
  EXPECT_DOUBLE_EQ(block.curve.compute_eff, 0.82);
  EXPECT_NEAR(block.curve.eager_extra_s, 68e-6, 1e-15);
  EXPECT_EQ(block.use.timing, "measured: GEMM fp8_block table");
  const TimedGemm tensor = GemmForFormat(curves, WeightsOn("h100-sxm", "fp8"), Fmt("fp8"), false,
                                         1.0, WeightOnlyRates{}, "weights");
  EXPECT_EQ(tensor.curve.kernel, "fp8 hand");
  EXPECT_EQ(tensor.use.computed, "W8A8 (FP8)");
  EXPECT_DOUBLE_EQ(tensor.curve.eager_extra_s, 0);  // its rows were timed in a graph
}

// A compressed-tensors W8A8 INT8 checkpoint (int8 weights per channel,
// int8 activations per token) runs vLLM's CompressedTensorsW8A8Int8: CUTLASS
// int8 GEMMs, not weight-only Marlin. On A100 (no fp8 curve) the bf16 curve
// at twice its rate, one byte an activation: m = 1,000, n = 2,000, k =
// 4,000 moves n k x w + m k x 1 + m n x 2 = 8e6 w + 4e6 + 4e6 bytes at 1
// TB/s (16 us at w = 1) and 2 m n k = 1.6e10 FLOPs at 2 PFLOP/s (8 us):
// 24 us, against 52 us for the weight-only reading. On H100 the fp8 curve.
TEST(FormatKernelsTest, W8a8Int8RunsInt8TensorCoresNotWeightOnly) {
  const auto dense = [](bool activations) {
    const std::string act = activations ? R"(, "input_activations": {"num_bits": 8, "type": "int",
                          "strategy": "token", "dynamic": true})"
                                        : "";
    auto m = ParseHfConfig(
        R"({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 256,
            "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 512,
            "vocab_size": 1000, "torch_dtype": "bfloat16", "quantization_config":
            {"quant_method": "compressed-tensors", "format": "int-quantized",
             "ignore": ["lm_head"], "config_groups": {"group_0": {"targets": ["Linear"],
             "weights": {"num_bits": 8, "type": "int", "strategy": "channel",
                         "symmetric": true})" +
            act + "}}}}",
        "q.json", "q");
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
    auto native = NativePartFormats(*m);
    EXPECT_TRUE(native.ok());
    return native->dense;
  };
  const ElementFormat w8a8 = dense(true);
  const FormatRun a100 = HowGpuRuns(Gpu("a100-80gb"), FormatRole::kWeights, w8a8);
  EXPECT_EQ(a100.matrix_row, "w8a8-int8");
  EXPECT_EQ(a100.cell.computed, "int8");
  const GpuKernelCurves curves = HandCurves("a100-80gb");
  const TimedGemm g =
      GemmForFormat(curves, a100, w8a8, false, 1.0, WeightOnlyRates{0.5, 0.25, "test"}, "weights");
  EXPECT_EQ(g.use.computed, "W8A8 (INT8)");
  EXPECT_EQ(g.curve.kernel, "bf16 hand");
  EXPECT_DOUBLE_EQ(g.curve.compute_rate, 2.0);
  EXPECT_DOUBLE_EQ(g.curve.activation_bytes, 1.0);
  const double w = g.curve.weight_bytes;
  EXPECT_GE(w, 1.0);
  EXPECT_LT(w, 1.01);  // a scale per output channel of 4,096 inputs
  EXPECT_NEAR(g.curve.Seconds(curves.spec, 1000, 2000, 4000), (8e6 * w + 8e6) / 1e12 + 8e-6, 1e-12);
  const TimedGemm h100 =
      GemmForFormat(HandCurves("h100-sxm"), HowGpuRuns(Gpu("h100-sxm"), FormatRole::kWeights, w8a8),
                    w8a8, false, 1.0, WeightOnlyRates{0.5, 0.25, "test"}, "weights");
  EXPECT_EQ(h100.curve.kernel, "fp8 hand");
  EXPECT_TRUE(h100.curve.fp8_rate);
  // vLLM's CUTLASS scaled_mm has no int8 kernel for SM100: not run on B200.
  EXPECT_FALSE(HowGpuRuns(Gpu("b200"), FormatRole::kWeights, w8a8).runs());
  // Int8 weights alone stay weight-only.
  EXPECT_EQ(HowGpuRuns(Gpu("a100-80gb"), FormatRole::kWeights, dense(false)).cell.computed,
            "w8a16");
}

// The RTX Blackwell cards (compute capability 12.0) as vLLM runs them:
// NVFP4 and FP8 weights at their tensor rates (CUTLASS sm120 kernels),
// MXFP4 through Marlin (gpt-oss's Triton and FlashInfer MoE paths stop below
// 11.0 and at SM100), W8A8 INT8 not at all (no int8 CUTLASS kernel for
// SM120), FP8 KV dequantised in FlashInfer / Triton attention (no
// FlashAttention 3), NVFP4 KV not at all (SM100's trtllm-gen only).
TEST(FormatKernelsTest, RtxBlackwellRunsWhatVllmBuildsForSm120) {
  const GpuSpec rtx = Gpu("rtx-pro-6000");
  EXPECT_EQ(rtx.architecture, "blackwell-rtx");
  EXPECT_EQ(HowGpuRuns(rtx, FormatRole::kWeights, Fmt("nvfp4")).cell.computed, "fp4");
  EXPECT_EQ(HowGpuRuns(rtx, FormatRole::kWeights, Fmt("fp8")).cell.computed, "fp8");
  EXPECT_EQ(HowGpuRuns(rtx, FormatRole::kWeights, Fmt("mxfp4")).cell.computed, "w4a16");
  EXPECT_EQ(HowGpuRuns(rtx, FormatRole::kKvCache, Fmt("fp8")).cell.computed, "bf16");
  EXPECT_FALSE(HowGpuRuns(rtx, FormatRole::kKvCache, Fmt("nvfp4")).runs());
}

TEST(FormatKernelsTest, Fp4OnBlackwellRunsTheFp8CurveAtTheFp4Peak) {
  // B200 has no tables: H100's curves stand in. NVFP4 weights are W4A4
  // there, 4.5 bits per weight, at 9,000 / 4,500 = 2x the fp8 rate.
  const GpuKernelCurves curves = HandCurves("h100-sxm");
  const TimedGemm g = GemmForFormat(curves, WeightsOn("b200", "nvfp4"), Fmt("nvfp4"), false, 2.0,
                                    WeightOnlyRates{}, "weights");
  EXPECT_EQ(g.curve.kernel, "fp8 hand");
  EXPECT_DOUBLE_EQ(g.curve.weight_bytes, 4.5 / 8);
  EXPECT_DOUBLE_EQ(g.curve.compute_rate, 2.0);
  EXPECT_EQ(g.use.computed, "W4A4 (FP4)");
  EXPECT_EQ(g.use.timing.rfind("assumed: ", 0), 0u);
}

TEST(FormatKernelsTest, ExpertsUseTheTableOfTheirKernelOrTheGpusBf16Table) {
  const GpuKernelCurves* a100 = BundledKernelCurves().For("a100-80gb");
  const GpuKernelCurves* h100 = BundledKernelCurves().For("h100-sxm");
  ASSERT_NE(a100, nullptr);
  ASSERT_NE(h100, nullptr);
  // FP8 experts on A100 run FP8 Marlin; A100 has no Marlin table: its bf16
  // MoE table at the experts' 8-bit width.
  auto fp8 = MoeForFormat(*a100, WeightsOn("a100-80gb", "fp8"), Fmt("fp8"), 1.0);
  ASSERT_TRUE(fp8.ok());
  EXPECT_EQ(fp8->curve.coef, a100->moe.at("bf16").coef);
  EXPECT_FALSE(fp8->fp8_rate);
  EXPECT_EQ(fp8->use.timing,
            "assumed: the fused MoE bf16 table of a100-80gb (no table of this GPU for "
            "fp8-e4m3 experts under Marlin (FP8 weight-only); dequantisation taken as hidden), "
            "at fp8-e4m3's stored width");
  EXPECT_EQ(fp8->shape_table, "");  // another width: no shape's rows apply
  // MXFP4 experts: OpenAI Triton on Hopper (its own table).
  auto h100_mxfp4 = MoeForFormat(*h100, WeightsOn("h100-sxm", "mxfp4"), Fmt("mxfp4"), 1.0);
  ASSERT_TRUE(h100_mxfp4.ok());
  EXPECT_EQ(h100_mxfp4->curve.coef, h100->moe.at("mxfp4").coef);
  EXPECT_EQ(h100_mxfp4->use.timing, "measured: fused MoE mxfp4 table");
  EXPECT_EQ(h100_mxfp4->shape_table, "mxfp4");
  // INT4 experts on Hopper: the Marlin table.
  auto h100_int4 = MoeForFormat(*h100, WeightsOn("h100-sxm", "int4-g32"), Fmt("int4-g32"), 1.0);
  ASSERT_TRUE(h100_int4.ok());
  EXPECT_EQ(h100_int4->curve.coef, h100->moe.at("int4").coef);
  EXPECT_EQ(h100_int4->use.timing, "measured: fused MoE int4 table");
  // FP8 experts on Hopper: the block-scaled Triton table at the fp8 rate.
  auto h100_fp8 = MoeForFormat(*h100, WeightsOn("h100-sxm", "fp8"), Fmt("fp8"), 1.0);
  ASSERT_TRUE(h100_fp8.ok());
  EXPECT_TRUE(h100_fp8->fp8_rate);
  EXPECT_EQ(h100_fp8->use.timing, "measured: fused MoE fp8_block table");
  EXPECT_EQ(h100_fp8->shape_table, "fp8_block");
  EXPECT_EQ(h100_fp8->use.kernel, "Triton fused MoE, block-scaled FP8");
  // 16-bit experts run the Triton fused MoE, not the dense layers' GEMM.
  auto h100_bf16 = MoeForFormat(*h100, WeightsOn("h100-sxm", "bf16"), Fmt("bf16"), 1.0);
  ASSERT_TRUE(h100_bf16.ok());
  EXPECT_EQ(h100_bf16->use.kernel, "Triton fused MoE");
  EXPECT_EQ(h100_bf16->shape_table, "bf16");
  // B200 has no tables: H100's, said so.
  auto b200 = MoeForFormat(*h100, WeightsOn("b200", "mxfp4"), Fmt("mxfp4"), 1.0);
  ASSERT_TRUE(b200.ok());
  EXPECT_EQ(b200->use.timing, "measured on h100-sxm: fused MoE mxfp4 table");
  EXPECT_EQ(b200->shape_table, "");  // another GPU's table: its curve only
}

TEST(FormatKernelsTest, CollectivesOfAGpuWithTablesAreItsTables) {
  const GpuKernelCurves* h100 = BundledKernelCurves().For("h100-sxm");
  ASSERT_NE(h100, nullptr);
  bool measured = false;
  std::string how;
  for (int n : {2, 4, 8}) {
    SCOPED_TRACE(n);
    const CollectiveCurve ar =
        CollectiveFor("all_reduce", n, Gpu("h100-sxm"), h100, &measured, &how);
    EXPECT_TRUE(measured);
    EXPECT_EQ(how, "measured: vllm custom all-reduce (CUDA graph)");
    EXPECT_EQ(ar.points.size(), h100->AllReduceFor(n)->points.size());
  }
  // NCCL all-to-all (nccl-tests, fp16): h100_sxm/nccl/2.29.2/nccl_perf.txt,
  // 1,048,576 and 8,388,608 elements (2 and 16 MiB per GPU).
  const struct {
    int gpus;
    double elements, ms;
  } rows[] = {{2, 1048576, 0.01552}, {2, 8388608, 0.05305}, {4, 1048576, 0.01741},
              {4, 8388608, 0.06893}, {8, 1048576, 0.01858}, {8, 8388608, 0.07566}};
  for (const auto& row : rows) {
    const CollectiveCurve a2a =
        CollectiveFor("all_to_all", row.gpus, Gpu("h100-sxm"), h100, &measured, &how);
    EXPECT_TRUE(measured);
    EXPECT_NEAR(a2a.Seconds(row.elements * 2), row.ms * 1e-3, 0.1 * row.ms * 1e-3)
        << row.gpus << " GPUs, " << row.elements << " elements";
  }
}

TEST(FormatKernelsTest, AGpuWithoutTablesRunsARingOverItsLinkAtH100sEfficiency) {
  // L40S: PCIe Gen4 x16, 32 GB/s a way. H100's 4-GPU all-reduce table gives
  // the latency (its smallest message) and the bus efficiency (its largest
  // message's 2 (n - 1) / n x bytes over the time above the latency, over
  // NVLink's 450 GB/s); the ring then takes latency + 1.5 x bytes / (32 GB/s
  // x efficiency).
  const CollectiveCurve* h100 = BundledKernelCurves().For("h100-sxm")->AllReduceFor(4);
  ASSERT_NE(h100, nullptr);
  const double latency = h100->points.front().seconds;
  const AllReducePoint last = h100->points.back();
  const double efficiency = 1.5 * last.bytes / (last.seconds - latency) / 450e9;
  bool measured = true;
  std::string how;
  const CollectiveCurve ring =
      CollectiveFor("all_reduce", 4, Gpu("l40s"), nullptr, &measured, &how);
  EXPECT_FALSE(measured);
  EXPECT_NE(how.find("uncalibrated"), std::string::npos);
  EXPECT_NE(how.find("pcie link (32 GB/s)"), std::string::npos);
  const double bytes = 16.0 * (1 << 20);
  EXPECT_NEAR(ring.Seconds(bytes), latency + 1.5 * bytes / (32e9 * efficiency), 1e-9);
}

// 16 H100s are two HGX nodes of 8: the ring's slowest hop is each GPU's
// 400 Gb/s NIC (50 GB/s), not NVLink. No table measures 16 GPUs, so the
// latency and efficiency are the assumed 10 us and 70%: an all-reduce of
// 16 MiB takes 10 us + 2 x 15/16 x 16 MiB / (50 GB/s x 0.7) = 10 us + 899 us.
// An all-to-all sends the half bound for the other node, 8/15 of its
// (n - 1)/n share: 10 us + 8/16 x 16 MiB / (50 GB/s x 0.7) = 10 us + 479 us.
// GB200's NVLink joins 72 GPUs: 16 of them stay on NVLink (900 GB/s).
TEST(FormatKernelsTest, CollectivesBeyondANodeRunOverTheNetwork) {
  const GpuKernelCurves* h100 = BundledKernelCurves().For("h100-sxm");
  bool measured = true;
  std::string how;
  const double bytes = 16.0 * (1 << 20);
  const CollectiveCurve ar =
      CollectiveFor("all_reduce", 16, Gpu("h100-sxm"), h100, &measured, &how);
  EXPECT_FALSE(measured);
  EXPECT_NE(how.find("across 2 nodes of 8 GPUs, each GPU's network link (50 GB/s)"),
            std::string::npos)
      << how;
  EXPECT_NEAR(ar.Seconds(bytes), 10e-6 + 2.0 * 15 / 16 * bytes / (50e9 * 0.7), 1e-9);
  const CollectiveCurve a2a =
      CollectiveFor("all_to_all", 16, Gpu("h100-sxm"), h100, &measured, &how);
  EXPECT_NEAR(a2a.Seconds(bytes), 10e-6 + 0.5 * bytes / (50e9 * 0.7), 1e-9);
  const CollectiveCurve nvl =
      CollectiveFor("all_reduce", 16, Gpu("gb200"), nullptr, &measured, &how);
  EXPECT_NE(how.find("nvlink link (900 GB/s)"), std::string::npos) << how;
  EXPECT_NEAR(nvl.Seconds(bytes), 10e-6 + 2.0 * 15 / 16 * bytes / (900e9 * 0.7), 1e-9);
}

// H100 NVL cards pair on an NVLink bridge (300 GB/s) in a PCIe server of
// up to 8: 4 of them cross the pairs over each card's PCIe Gen5 link
// (64 GB/s one way), not a network (they were timed at the 25 GB/s NIC and
// called "2 nodes of 2 GPUs"): an all-reduce of 16 MiB over 4 takes the
// H100 4-GPU table's latency + 2 x 3/4 x 16 MiB / (64 GB/s x its
// efficiency), as L40S's ring over its PCIe link does. 16 cards are 2
// servers of 8, joined by the 25 GB/s network at the assumed 10 us and
// 70%: an all-to-all sends the half bound for the other server,
// 10 us + 8/16 x 16 MiB / (25 GB/s x 0.7).
TEST(FormatKernelsTest, BridgedPairsInAServerCrossOverPcie) {
  const CollectiveCurve* h100 = BundledKernelCurves().For("h100-sxm")->AllReduceFor(4);
  ASSERT_NE(h100, nullptr);
  const double latency = h100->points.front().seconds;
  const AllReducePoint last = h100->points.back();
  const double efficiency = 1.5 * last.bytes / (last.seconds - latency) / 450e9;
  bool measured = true;
  std::string how;
  const double bytes = 16.0 * (1 << 20);
  const CollectiveCurve four =
      CollectiveFor("all_reduce", 4, Gpu("h100-nvl"), nullptr, &measured, &how);
  EXPECT_FALSE(measured);
  EXPECT_NE(how.find("across 2 groups of 2 GPUs in one server, each GPU's PCIe link (64 GB/s)"),
            std::string::npos)
      << how;
  EXPECT_NEAR(four.Seconds(bytes), latency + 1.5 * bytes / (64e9 * efficiency), 1e-9);
  const CollectiveCurve two =
      CollectiveFor("all_reduce", 2, Gpu("h100-nvl"), nullptr, &measured, &how);
  EXPECT_NE(how.find("nvlink link (300 GB/s)"), std::string::npos) << how;
  const CollectiveCurve sixteen =
      CollectiveFor("all_to_all", 16, Gpu("h100-nvl"), nullptr, &measured, &how);
  EXPECT_NE(how.find("across 2 nodes of 8 GPUs, each GPU's network link (25 GB/s)"),
            std::string::npos)
      << how;
  EXPECT_NEAR(sixteen.Seconds(bytes), 10e-6 + 0.5 * bytes / (25e9 * 0.7), 1e-9);
}

// Tensor parallelism: the operator model's all-reduce time at 2, 4 and 8
// GPUs against vLLM's measured all-reduce table (custom_allreduce_perf,
// vllm_graph rows; shared/data/kernels). Qwen3-8B: hidden 4,096, 36 layers,
// two all-reduces per layer of T x 4,096 x 2 bytes, so T = 16, 256, 2,048 and
// 8,192 tokens send 65,536, 1,048,576, 8,388,608 and 33,554,432 elements.
TEST(FormatKernelsTest, ModelAllReducesReproduceTheKernelTablesWithinTenPercent) {
  const struct {
    const char* gpu;
    int gpus;
    double ms[4];  // at 65,536 / 1,048,576 / 8,388,608 / 33,554,432 elements
  } tables[] = {
      {"h100-sxm", 2, {0.004750720, 0.012379839, 0.081416960, 0.306721592}},
      {"h100-sxm", 4, {0.005800320, 0.018597120, 0.098772478, 0.329943352}},
      {"h100-sxm", 8, {0.007864000, 0.019389760, 0.092383356, 0.343964157}},
      {"h200", 2, {0.004823040, 0.012444479, 0.076567359, 0.280586872}},
      {"h200", 4, {0.005814720, 0.017796800, 0.093778238, 0.320153275}},
      {"h200", 8, {0.007943040, 0.018105921, 0.087167044, 0.323311996}},
      {"a100-80gb", 2, {0.005743040, 0.015175360, 0.126281281, 0.388468819}},
      {"a100-80gb", 4, {0.007783360, 0.026045761, 0.182499847, 0.540034256}},
      {"a100-80gb", 8, {0.011351680, 0.027928960, 0.214191685, 0.594186554}},
  };
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  const Tokens tokens[] = {16, 256, 2048, 8192};
  for (const auto& t : tables) {
    OperatorModelOptions options;
    options.tensor_parallel = t.gpus;
    auto m = OperatorCostModel::Make(Catalog("qwen3-8b"), Fmt("bf16"), "auto", Gpu(t.gpu), nullptr,
                                     *profile, options);
    ASSERT_TRUE(m.ok()) << m.error().message();
    for (int i = 0; i < 4; ++i) {
      double all_reduce = 0;
      for (const auto& [part, s] : (*m)->DenseParts(tokens[i])) {
        if (part == "all_reduce") all_reduce = s;
      }
      const double per_call = all_reduce / (2 * 36);
      EXPECT_NEAR(per_call, t.ms[i] * 1e-3, 0.1 * t.ms[i] * 1e-3)
          << t.gpu << " x" << t.gpus << " at " << tokens[i] << " tokens";
    }
  }
}

// FP8 experts: the fused-MoE time per layer and the FP8 gain over BF16 as
// the measured table has them (shared/data/kernels/h100_sxm/vllm/0.24.0/
// moe_perf.txt, hidden 4,096, inter 1,536, top-8 of 128 experts,
// moe_tp_size 4, power_law_1.2, the SGLang profile's routing alpha):
// Qwen3-235B-A22B's expert shape, and GLM-4.5-Air's but for its inter of
// 1,408 (no table rows). Rows vllm_unquantizedfusedmoe_triton_tritonexperts
// (bfloat16) and vllm_fp8moe_triton_tritonexperts (fp8_block), latency in ms:
//   tokens   bf16                 fp8_block             bf16 / fp8
//    64      0.40585598945617674  0.23829119205474852   1.703
//   128      0.4455359935760498   0.277510404586792     1.606
//   256      0.4708992004394531   0.3082495927810669    1.528
//   512      0.49811840057373047  0.33408000469207766   1.491
// The gain is the block-FP8 Triton kernel's at decode batches of 64-512
// tokens; a model that lost it (the experts timed at the bf16 rate or
// their bytes at 2 per weight) would give about 1.
TEST(FormatKernelsTest, Fp8ExpertsGainWhatTheFusedMoeTableMeasures) {
  const struct {
    Tokens tokens;
    double bf16_ms, fp8_ms;
  } rows[] = {{64, 0.40585598945617674, 0.23829119205474852},
              {128, 0.4455359935760498, 0.277510404586792},
              {256, 0.4708992004394531, 0.3082495927810669},
              {512, 0.49811840057373047, 0.33408000469207766}};
  auto profile = LoadEngineProfile("sglang");
  ASSERT_TRUE(profile.ok());
  OperatorModelOptions options;
  options.tensor_parallel = 4;
  const ModelShape model = Catalog("qwen3-235b-a22b");
  const double layers = static_cast<double>(model.moe.layers);  // 94, every layer routed
  auto bf16 = OperatorCostModel::Make(model, Fmt("bf16"), "bf16", Gpu("h100-sxm"), nullptr,
                                      *profile, options);
  options.fp8_checkpoint = true;
  auto fp8 = OperatorCostModel::Make(model, Fmt("bf16"), "fp8", Gpu("h100-sxm"), nullptr, *profile,
                                     options);
  ASSERT_TRUE(bf16.ok()) << bf16.error().message();
  ASSERT_TRUE(fp8.ok()) << fp8.error().message();
  auto moe_ms = [&](const OperatorCostModel& m, Tokens t) { return MoeMsPerLayer(m, t, layers); };
  for (const auto& r : rows) {
    const double b = moe_ms(**bf16, r.tokens), f = moe_ms(**fp8, r.tokens);
    // The fitted curves are within 25% of a row (their fit's p90 error).
    EXPECT_NEAR(b, r.bf16_ms, 0.25 * r.bf16_ms) << r.tokens << " tokens, bf16";
    EXPECT_NEAR(f, r.fp8_ms, 0.25 * r.fp8_ms) << r.tokens << " tokens, fp8";
    const double want = r.bf16_ms / r.fp8_ms;
    EXPECT_NEAR(b / f, want, 0.1 * want) << r.tokens << " tokens, bf16 / fp8";
  }
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// DeepSeek-V4's fp8 cache is read by FlashMLA's sparse kernels, which no
// table measures: the KV format says so (not the FlashAttention-3 fp8 rows
// a GQA model's fp8 cache is timed by).
TEST(FormatKernelsTest, CompressedAttentionsCacheIsNotTimedByTheFa3Tables) {
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  auto model =
      LoadModel(std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/deepseek-v4-flash.json");
  ASSERT_TRUE(model.ok()) << model.error().message();
  OperatorModelOptions options;
  options.tensor_parallel = 4;
  auto m = OperatorCostModel::Make(*model, Fmt("fp8"), "auto", Gpu("h100-sxm"), nullptr, *profile,
                                   options);
  ASSERT_TRUE(m.ok()) << m.error().message();
  bool seen = false;
  for (const FormatUse& use : (*m)->Describe().formats) {
    if (use.part != "kv_cache") continue;
    seen = true;
    EXPECT_EQ(use.kernel, "FlashMLA sparse (fp8_ds_mla)");
    EXPECT_EQ(use.timing.rfind("assumed:", 0), 0u) << use.timing;
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// gpt-oss's MXFP4 experts on an H100 run the OpenAI Triton kernels unless
// vLLM falls back to Marlin (before v0.11.1, or VLLM_MXFP4_USE_MARLIN=1).
// Worked from shared/data/kernels/h100_sxm (vllm moe_perf, power law 1.2):
//   Triton, gpt-oss-20b's own shape (32 experts, top 4, 2,880 x 2,880),
//     8,192 tokens: 3.121 ms a layer;
//   Marlin MXFP4 (the only Marlin MXFP4 rows: 896 experts, top 16,
//     3,584 x 3,072), 8,192 tokens: 43.15 ms for 8,192 x 16 x 6 x 3,584 x
//     3,072 = 8.66e12 FLOP, 201 TFLOP/s; gpt-oss's 8,192 x 4 x 6 x 2,880 x
//     2,880 = 1.63e12 FLOP at that rate: 8.1 ms.
// The Marlin time comes from the Marlin MoE curve fitted on other shapes,
// so it is held to 25%, the curves' fit error.
TEST(FormatKernelsTest, Mxfp4ExpertsOnHopperRunTritonOrMarlinAsVllmChooses) {
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  const ModelShape model = Catalog("gpt-oss-20b");
  const double layers = static_cast<double>(model.moe.layers);  // 24
  OperatorModelOptions options;
  auto triton = OperatorCostModel::Make(model, Fmt("bf16"), "auto", Gpu("h100-sxm"), nullptr,
                                        *profile, options);
  options.mxfp4_experts_marlin = true;
  auto marlin = OperatorCostModel::Make(model, Fmt("bf16"), "auto", Gpu("h100-sxm"), nullptr,
                                        *profile, options);
  ASSERT_TRUE(triton.ok()) << triton.error().message();
  ASSERT_TRUE(marlin.ok()) << marlin.error().message();
  auto moe_ms = [&](const OperatorCostModel& m, Tokens t) { return MoeMsPerLayer(m, t, layers); };
  // Triton: the shape's own row (kept to four digits).
  EXPECT_NEAR(moe_ms(**triton, 8192), 3.121, 0.01 * 3.121);
  EXPECT_NEAR(moe_ms(**marlin, 8192), 8.1, 0.25 * 8.1);
  auto kernel_of_experts = [](const OperatorCostModel& m) {
    for (const auto& f : m.Describe().formats) {
      if (f.part == "experts") return f.kernel;
    }
    return std::string();
  };
  EXPECT_NE(kernel_of_experts(**triton).find("Triton"), std::string::npos);
  EXPECT_NE(kernel_of_experts(**marlin).find("Marlin"), std::string::npos);

  // Elsewhere the option changes nothing: A100 runs Marlin either way, and
  // a model whose experts are not MXFP4 keeps its own kernel.
  options.mxfp4_experts_marlin = false;
  auto a100 = OperatorCostModel::Make(model, Fmt("bf16"), "auto", Gpu("a100-80gb"), nullptr,
                                      *profile, options);
  options.mxfp4_experts_marlin = true;
  auto a100_marlin = OperatorCostModel::Make(model, Fmt("bf16"), "auto", Gpu("a100-80gb"), nullptr,
                                             *profile, options);
  ASSERT_TRUE(a100.ok() && a100_marlin.ok());
  EXPECT_EQ(moe_ms(**a100, 8192), moe_ms(**a100_marlin, 8192));
  const ModelShape qwen = Catalog("qwen3-235b-a22b");
  auto bf16 = OperatorCostModel::Make(qwen, Fmt("bf16"), "auto", Gpu("h100-sxm"), nullptr, *profile,
                                      options);
  options.mxfp4_experts_marlin = false;
  auto bf16_plain = OperatorCostModel::Make(qwen, Fmt("bf16"), "auto", Gpu("h100-sxm"), nullptr,
                                            *profile, options);
  ASSERT_TRUE(bf16.ok() && bf16_plain.ok());
  EXPECT_EQ(moe_ms(**bf16, 8192), moe_ms(**bf16_plain, 8192));
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
