// The format matrix: every entry, the errors of its reader, the GPU
// catalog's architectures and links, and docs/hardware.md's copy.
#include "kvbill/hardware/format_support.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kvbill/hardware/gpu.h"
#include "kvbill/model/kv_format.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

ElementFormat Fmt(const std::string& name) {
  auto f = ParseElementFormat(name);
  EXPECT_TRUE(f.ok()) << name;
  return f.ok() ? *f : ElementFormat{};
}

GpuSpec Gpu(const std::string& id) {
  auto g = LookupGpu(id);
  EXPECT_TRUE(g.ok()) << id;
  return g.ok() ? *g : GpuSpec{};
}

// One GPU per architecture column.
constexpr const char* kGpus[] = {"a100-80gb", "l40s", "h100-sxm", "b200", "mi300x"};
constexpr const char* kArchitectureNames[] = {"NVIDIA Ampere", "NVIDIA Ada Lovelace",
                                              "NVIDIA Hopper", "NVIDIA Blackwell", "AMD CDNA 3"};

struct Row {
  const char* format;
  double stored_bits;       // per element of a 128-element vector, scales included
  const char* computed[5];  // per column of kGpus; nullptr: no engine runs it
};

// What vLLM does (each cell's source is in scenarios/gpus.json and
// docs/hardware.md#formats): FP8 weights run W8A8 from compute capability
// 8.9 and through FP8 Marlin below (fp8.py); AWQ / GPTQ through Marlin
// (awq_marlin.py, min capability 8.0), Triton AWQ on ROCm; MXFP4 weight-
// only everywhere (mxfp4.py: Marlin, OpenAI Triton, FlashInfer MXFP4 x
// BF16); NVFP4 W4A4 only on Blackwell, Marlin FP4 elsewhere on CUDA, not on
// ROCm (marlin_utils_fp4.py); E5M2 weights nowhere.
const Row kWeights[] = {
    {"bf16", 16, {"BF16", "BF16", "BF16", "BF16", "BF16"}},
    {"fp16", 16, {"BF16", "BF16", "BF16", "BF16", "BF16"}},
    {"fp32", 32, {"FP32", "FP32", "FP32", "FP32", "FP32"}},
    {"fp8-e4m3", 8, {"W8A16", "W8A8 (FP8)", "W8A8 (FP8)", "W8A8 (FP8)", "W8A8 (FP8)"}},
    {"fp8-e5m2", 8, {nullptr, nullptr, nullptr, nullptr, nullptr}},
    {"fp8-per-token-head", 8.25, {nullptr, nullptr, nullptr, nullptr, nullptr}},
    {"int4-g128", 4.25, {"W4A16", "W4A16", "W4A16", "W4A16", "W4A16"}},
    {"int2-g128", 2.25, {"W2A16", "W2A16", "W2A16", "W2A16", "W2A16"}},
    {"mxfp4", 4.25, {"W4A16", "W4A16", "W4A16", "W4A16", "W4A16"}},
    {"nvfp4", 4.5, {"W4A16", "W4A16", "W4A16", "W4A4 (FP4)", nullptr}},
};

// vLLM's docs/features/quantization/quantized_kvcache.md and its attention
// backends: FlashAttention 2 has no FP8 KV, so Ampere and Ada dequantise it
// inside FlashInfer / Triton attention; FlashAttention 3 computes in FP8 on
// Hopper; NVFP4 KV only on SM100 (vLLM #40177); E5M2 KV is CUDA only;
// per-token-head FP8 needs Triton attention on compute capability 8.9+;
// int4 per token and head through Triton attention anywhere; no engine
// stores a 2-bit or MXFP4 KV cache.
const Row kKv[] = {
    {"bf16",
     16,
     {"16-bit attention", "16-bit attention", "16-bit attention", "16-bit attention",
      "16-bit attention"}},
    {"fp32",
     32,
     {"FP32 attention", "FP32 attention", "FP32 attention", "FP32 attention", "FP32 attention"}},
    {"fp8-e4m3",
     8,
     {"16-bit attention", "16-bit attention", "FP8 attention", "FP8 attention",
      "16-bit attention"}},
    {"fp8-e5m2",
     8,
     {"16-bit attention", "16-bit attention", "16-bit attention", "16-bit attention", nullptr}},
    {"fp8-per-token-head",
     8.25,
     {nullptr, "16-bit attention", "16-bit attention", "16-bit attention", nullptr}},
    {"int4-g128",
     4.25,
     {"16-bit attention", "16-bit attention", "16-bit attention", "16-bit attention",
      "16-bit attention"}},
    {"int2-g128", 2.25, {nullptr, nullptr, nullptr, nullptr, nullptr}},
    {"mxfp4", 4.25, {nullptr, nullptr, nullptr, nullptr, nullptr}},
    {"nvfp4", 4.5, {nullptr, nullptr, nullptr, "FP8 attention", nullptr}},
};

void CheckEveryEntry(FormatRole role, const Row* rows, std::size_t n, const std::string& words) {
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t col = 0; col < 5; ++col) {
      const GpuSpec gpu = Gpu(kGpus[col]);
      const ElementFormat format = Fmt(rows[r].format);
      SCOPED_TRACE(std::string(rows[r].format) + " " + words + " on " + gpu.id);
      const FormatRun run = HowGpuRuns(gpu, role, format);
      const std::string what = format.name + " " + words + " on " + gpu.id;
      if (rows[r].computed[col] == nullptr) {
        EXPECT_FALSE(run.runs());
        auto check = CheckGpuRuns(gpu, role, format);
        ASSERT_FALSE(check.ok());
        const std::string head = what + " (" + kArchitectureNames[col] + "): no engine runs it: ";
        EXPECT_EQ(check.error().message().substr(0, head.size()), head);
        EXPECT_GT(check.error().message().size(), head.size() + 20);  // the reason
        continue;
      }
      EXPECT_TRUE(run.runs());
      EXPECT_TRUE(CheckGpuRuns(gpu, role, format).ok());
      EXPECT_EQ(run.ComputedLabel(), rows[r].computed[col]);
      std::ostringstream bits;
      bits << rows[r].stored_bits;
      const std::string head =
          what + ": stored at " + bits.str() + " bits, computed as " + rows[r].computed[col] + " (";
      EXPECT_EQ(run.Describe().substr(0, head.size()), head);
      EXPECT_FALSE(run.cell.kernel.empty());
      EXPECT_FALSE(run.cell.source.empty());
    }
  }
}

TEST(FormatSupportTest, EveryWeightEntryRunsAsVllmRunsItOrIsRefusedWithTheReason) {
  CheckEveryEntry(FormatRole::kWeights, kWeights, std::size(kWeights), "weights");
}

TEST(FormatSupportTest, EveryKvEntryRunsAsVllmRunsItOrIsRefusedWithTheReason) {
  CheckEveryEntry(FormatRole::kKvCache, kKv, std::size(kKv), "KV cache");
}

// A checkpoint's own formats (model/quant_config.cc names them after their
// quantization) fall in the row of their element type.
TEST(FormatSupportTest, CheckpointFormatsFallInTheRowOfTheirElementType) {
  auto hand = [](const std::string& name, int bits, int group, int group_bits) {
    ElementFormat f;
    f.name = name;
    f.element_bits = bits;
    f.group_size = group;
    f.metadata_bits_per_group = group_bits;
    return f;
  };
  const struct {
    ElementFormat format;
    const char* gpu;
    const char* computed;
  } cases[] = {
      {hand("fp8-e4m3 (128x128 blocks)", 8, 0, 0), "a100-80gb", "W8A16"},
      {hand("fp8-e4m3 (128x128 blocks)", 8, 0, 0), "h200", "W8A8 (FP8)"},
      {hand("fp8-channel (compressed-tensors)", 8, 0, 0), "h100-sxm", "W8A8 (FP8)"},
      {hand("int4-g128 (awq)", 4, 128, 20), "h100-sxm", "W4A16"},
      {hand("int4-g32 (compressed-tensors)", 4, 32, 16), "mi300x", "W4A16"},
      {hand("nvfp4-g16 (compressed-tensors)", 4, 16, 8), "b200", "W4A4 (FP4)"},
      // ModelOpt's W4A16_NVFP4: weight-only through Marlin on every GPU,
      // Blackwell included (no activation scale for the W4A4 kernels).
      {hand("nvfp4-w4a16", 4, 16, 8), "b200", "W4A16"},
      {hand("nvfp4-w4a16", 4, 16, 8), "h100-sxm", "W4A16"},
      // ModelOpt's MXFP8: Marlin W8A16 below Blackwell, FlashInfer's MXFP8
      // GEMM (activations quantised to MXFP8) on it.
      {hand("mxfp8", 8, 32, 8), "h100-sxm", "W8A16"},
      {hand("mxfp8", 8, 32, 8), "a100-80gb", "W8A16"},
      {hand("mxfp8", 8, 32, 8), "b200", "W8A8 (FP8)"},
      {hand("int8-g128 (gptq)", 8, 128, 24), "a100-80gb", "W8A16"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.format.name);
    const FormatRun run = HowGpuRuns(Gpu(c.gpu), FormatRole::kWeights, c.format);
    EXPECT_TRUE(run.runs());
    EXPECT_EQ(run.ComputedLabel(), c.computed);
    EXPECT_EQ(run.cell.note.find("not in the format matrix"), std::string::npos);
  }
  // ... and on ROCm, where Marlin is not built, no engine runs it.
  EXPECT_FALSE(
      HowGpuRuns(Gpu("mi300x"), FormatRole::kWeights, hand("nvfp4-w4a16", 4, 16, 8)).runs());
  EXPECT_FALSE(HowGpuRuns(Gpu("mi300x"), FormatRole::kWeights, hand("mxfp8", 8, 32, 8)).runs());
  // AWQ int4 with a 16-bit scale and a 4-bit zero point per 128: 4.15625 bits.
  EXPECT_EQ(HowGpuRuns(Gpu("h100-sxm"), FormatRole::kWeights, hand("int4-g128 (awq)", 4, 128, 20))
                .Describe()
                .rfind("int4-g128 (awq) weights on h100-sxm: stored at 4.15625 bits, computed as "
                       "W4A16 (Marlin (AWQ / GPTQ))",
                       0),
            0u);
}

TEST(FormatSupportTest, NvFp4KvOnHopperIsRefusedNamingTheEngineSource) {
  auto check = CheckGpuRuns(Gpu("h100-sxm"), FormatRole::kKvCache, Fmt("nvfp4"));
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.error().message(),
            "nvfp4 KV cache on h100-sxm (NVIDIA Hopper): no engine runs it: vLLM stores an NVFP4 "
            "KV cache only on Blackwell (SM100, FlashInfer trtllm-gen); no other GPU's attention "
            "kernels (FlashAttention 2/3, Triton, Hopper's decode path) read it");
}

TEST(FormatSupportTest, ExpertsRunThroughTheKernelTableOfTheirBackend) {
  // MXFP4 experts: Marlin below Hopper, OpenAI Triton / FlashInfer from it.
  EXPECT_EQ(HowGpuRuns(Gpu("a100-80gb"), FormatRole::kWeights, Fmt("mxfp4")).cell.experts_table,
            "int4");
  EXPECT_EQ(HowGpuRuns(Gpu("h100-sxm"), FormatRole::kWeights, Fmt("mxfp4")).cell.experts_table,
            "mxfp4");
  EXPECT_EQ(HowGpuRuns(Gpu("h100-sxm"), FormatRole::kWeights, Fmt("fp8")).cell.experts_table,
            "fp8_block");
  EXPECT_EQ(HowGpuRuns(Gpu("a100-80gb"), FormatRole::kWeights, Fmt("fp8")).cell.experts_table,
            "int4");  // FP8 Marlin
  EXPECT_EQ(HowGpuRuns(Gpu("h100-sxm"), FormatRole::kWeights, Fmt("bf16")).cell.experts_table,
            "bf16");
}

TEST(FormatSupportTest, DensePeakIsThePrecisionTheGpuComputesIn) {
  // Weight-only formats multiply at the 16-bit rate, whatever their width.
  EXPECT_DOUBLE_EQ(Gpu("h100-sxm").DenseFlopsPerS(Fmt("nvfp4")), 989e12);      // Marlin FP4
  EXPECT_DOUBLE_EQ(Gpu("h100-sxm").DenseFlopsPerS(Fmt("int4-g128")), 989e12);  // AWQ Marlin
  EXPECT_DOUBLE_EQ(Gpu("h100-sxm").DenseFlopsPerS(Fmt("fp8")), 1979e12);       // W8A8
  EXPECT_DOUBLE_EQ(Gpu("a100-80gb").DenseFlopsPerS(Fmt("fp8")), 312e12);       // FP8 Marlin
  EXPECT_DOUBLE_EQ(Gpu("b200").DenseFlopsPerS(Fmt("nvfp4")), 9000e12);         // W4A4
  EXPECT_DOUBLE_EQ(Gpu("b200").DenseFlopsPerS(Fmt("mxfp4")), 2250e12);         // MXFP4 x BF16
  EXPECT_DOUBLE_EQ(Gpu("mi300x").DenseFlopsPerS(Fmt("nvfp4")), 1307e12);       // not run
}

TEST(FormatSupportTest, CatalogGpusHaveAnArchitectureOfTheMatrixAndALink) {
  ASSERT_EQ(GpuArchitectures().size(), 7u);
  for (const GpuSpec& g : GpuCatalog()) {
    SCOPED_TRACE(g.id);
    bool known = false;
    for (const GpuArchitecture& a : GpuArchitectures()) known = known || a.id == g.architecture;
    EXPECT_TRUE(known);
    EXPECT_GT(g.link_bytes_per_s, 0);
  }
  EXPECT_EQ(Gpu("h100-sxm").interconnect, "nvlink");
  EXPECT_DOUBLE_EQ(Gpu("h100-sxm").link_bytes_per_s, 450e9);  // NVLink 4: 900 GB/s both ways
  EXPECT_EQ(Gpu("l40s").interconnect, "pcie");
  EXPECT_DOUBLE_EQ(Gpu("l40s").link_bytes_per_s, 32e9);  // PCIe Gen4 x16
}

TEST(FormatSupportTest, GpuFilesNameTheirArchitectureOrGetTheOneTheirRatesImply) {
  const std::string base =
      R"("id": "g", "memory_gb": 80, "hbm_bandwidth_tb_s": 3, "usd_per_gpu_hour": 1)";
  auto fp4 = ParseGpuCatalog(
      R"({"gpus": [{)" + base + R"(, "dense_tflops": {"bf16": 1, "fp8": 2, "fp4": 4}}]})",
      "g.json");
  ASSERT_TRUE(fp4.ok()) << fp4.error().message();
  EXPECT_EQ((*fp4)[0].architecture, "blackwell");
  EXPECT_EQ((*fp4)[0].interconnect, "pcie");
  EXPECT_DOUBLE_EQ((*fp4)[0].link_bytes_per_s, 32e9);
  auto bf16 =
      ParseGpuCatalog(R"({"gpus": [{)" + base + R"(, "dense_tflops": {"bf16": 1}}]})", "g.json");
  ASSERT_TRUE(bf16.ok());
  EXPECT_EQ((*bf16)[0].architecture, "ampere");
  auto named = ParseGpuCatalog(R"({"gpus": [{)" + base +
                                   R"(, "dense_tflops": {"bf16": 1}, "architecture": "cdna3",
                                   "interconnect": {"kind": "infinity_fabric", "gb_s": 448}}]})",
                               "g.json");
  ASSERT_TRUE(named.ok()) << named.error().message();
  EXPECT_EQ((*named)[0].architecture, "cdna3");
  EXPECT_DOUBLE_EQ((*named)[0].link_bytes_per_s, 448e9);
  auto bad = ParseGpuCatalog(
      R"({"gpus": [{)" + base + R"(, "dense_tflops": {"bf16": 1}, "architecture": "volta"}]})",
      "g.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "g.json#/gpus/0/architecture: unknown architecture \"volta\" (ampere, ada, hopper, "
            "blackwell, blackwell-rtx, cdna3, cdna4)");
  auto bad_link = ParseGpuCatalog(R"({"gpus": [{)" + base +
                                      R"(, "dense_tflops": {"bf16": 1},
                                      "interconnect": {"kind": "ethernet", "gb_s": 50}}]})",
                                  "g.json");
  ASSERT_FALSE(bad_link.ok());
  EXPECT_EQ(bad_link.error().message(),
            "g.json#/gpus/0/interconnect/kind: must be \"nvlink\", \"pcie\" or "
            "\"infinity_fabric\", got \"ethernet\"");
  // A server of bridged pairs: both keys, more GPUs than a pair.
  const auto server = [&](const std::string& keys) {
    auto g = ParseGpuCatalog(R"({"gpus": [{)" + base + R"(, "dense_tflops": {"bf16": 1},
        "interconnect": {"kind": "nvlink", "gb_s": 300, "gpus": 2)" +
                                 keys + "}}]}",
                             "g.json");
    return g.ok() ? "(parsed)" : g.error().message();
  };
  auto pairs = ParseGpuCatalog(R"({"gpus": [{)" + base + R"(, "dense_tflops": {"bf16": 1},
      "interconnect": {"kind": "nvlink", "gb_s": 300, "gpus": 2, "server_gpus": 8,
      "server_gb_s": 64}}]})",
                               "g.json");
  ASSERT_TRUE(pairs.ok()) << pairs.error().message();
  EXPECT_EQ((*pairs)[0].server_gpus, 8);
  EXPECT_DOUBLE_EQ((*pairs)[0].server_bytes_per_s, 64e9);
  EXPECT_EQ(server(R"(, "server_gpus": 8)"),
            "g.json#/gpus/0/interconnect/server_gb_s: missing (server_gpus and server_gb_s go "
            "together: a server's GPUs and each GPU's link between its link groups)");
  EXPECT_EQ(server(R"(, "server_gpus": 2, "server_gb_s": 64)"),
            "g.json#/gpus/0/interconnect/server_gpus: must be a whole number of GPUs above gpus "
            "(2) and at most 100000, got 2");
}

TEST(FormatSupportTest, MatrixReaderErrorsNameTheJsonPointer) {
  const std::string arch = R"("architectures": {"a": {"name": "A", "capability": "1"},
                                                "b": {"name": "B", "capability": "2"}})";
  auto error_of = [&](const std::string& formats) {
    auto m = ParseFormatMatrix("{" + arch + R"(, "formats": )" + formats + "}", "m.json");
    return m.ok() ? std::string("(parsed)") : m.error().message();
  };
  const std::string ok_cell = R"({"computed": "bf16", "kernel": "k", "source": "s"})";
  EXPECT_EQ(error_of(R"({"weights": {"bf16": {"all": )" + ok_cell + R"(}}, "kv_cache": {}})"),
            "(parsed)");
  EXPECT_EQ(error_of(R"({"weights": {"bf16": {"c": )" + ok_cell + R"(}}, "kv_cache": {}})"),
            "m.json#/formats/weights/bf16/c: unknown architecture (see /architectures)");
  EXPECT_EQ(error_of(R"({"weights": {"bf16": {"a": )" + ok_cell + R"(}}, "kv_cache": {}})"),
            "m.json#/formats/weights/bf16: no cell for b (and no \"all\")");
  EXPECT_EQ(error_of(R"({"weights": {"x": {"all": {"runs": false, "source": "s"}}},
                         "kv_cache": {}})"),
            "m.json#/formats/weights/x/all/reason: missing");
  EXPECT_EQ(error_of(R"({"weights": {"x": {"all": {"computed": "int3", "kernel": "k",
                         "source": "s"}}}, "kv_cache": {}})"),
            "m.json#/formats/weights/x/all/computed: unknown precision \"int3\" (bf16, fp32, fp8, "
            "fp4, int8, w8a16, w4a16, w2a16)");
  EXPECT_EQ(error_of(R"({"weights": {}})"), "m.json#/formats/kv_cache: missing");
  // dense_dequantised (a cell whose dense layers are dequantised every
  // forward) is a boolean of a cell that runs.
  EXPECT_EQ(error_of(R"({"weights": {"x": {"all": {"computed": "w4a16", "kernel": "k",
                         "source": "s", "dense_dequantised": "yes"}}}, "kv_cache": {}})"),
            "m.json#/formats/weights/x/all/dense_dequantised: must be true or false, got "
            "\"yes\"");
  EXPECT_EQ(error_of(R"({"weights": {"x": {"all": {"runs": false, "source": "s", "reason": "r",
                         "dense_dequantised": true}}}, "kv_cache": {}})"),
            "m.json#/formats/weights/x/all/dense_dequantised: not with \"runs\": false");
}

TEST(FormatSupportTest, HardwareDocHoldsTheMatrixAsTheCatalogHasIt) {
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/docs/hardware.md");
  ASSERT_TRUE(in.good());
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const std::string begin = "<!-- generated by `kvbill gpus --formats` -->\n";
  const std::string end = "<!-- end generated -->";
  const std::size_t a = text.find(begin);
  const std::size_t b = text.find(end);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(text.substr(a + begin.size(), b - a - begin.size()), FormatMatrixMarkdown())
      << "docs/hardware.md is stale: paste `kvbill gpus --formats` between its markers";
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
