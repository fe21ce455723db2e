#include "kvbill/calibrate/kernel_fit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const std::string kSample = std::string(KVBILL_SOURCE_DIR) + "/tests/data/kernels_sample";

TEST(KernelFitTest, FitsTheSampleTablesOfOneGpu) {
  auto set = FitKernelCurves(kSample);
  ASSERT_TRUE(set.ok()) << set.error().message();
  ASSERT_EQ(set->gpus.size(), 1u);
  const GpuKernelCurves& g = set->gpus[0];
  EXPECT_EQ(g.gpu, "h100-sxm");
  EXPECT_EQ(g.engine, "vllm 0.24.0");
  EXPECT_EQ(g.device, "NVIDIA H100 80GB HBM3");
  // 63 BF16 GEMM rows, 9 decode-attention rows, 19 prefill rows, 8 MoE rows.
  EXPECT_EQ(g.gemm.at("bf16").error.rows, 63);
  EXPECT_EQ(g.decode_attention.at("bf16").error.rows, 9);
  EXPECT_EQ(g.prefill_attention.at("bf16").at(128).error.rows, 19);
  EXPECT_EQ(g.moe.at("bf16").error.rows, 8);
  // The forms follow the kernels: each reproduces its rows to within a
  // quarter at the median, and the efficiencies are physical.
  EXPECT_LT(g.gemm.at("bf16").error.median, 0.25);
  EXPECT_LE(g.gemm.at("bf16").mem_eff, 1.0);
  EXPECT_LE(g.gemm.at("bf16").compute_eff, 1.0);
  EXPECT_LT(g.decode_attention.at("bf16").error.median, 0.25);
  EXPECT_LT(g.prefill_attention.at("bf16").at(128).error.median, 0.25);
  // All-reduce is the measured table itself: 2 GPUs, 3 sizes, bf16 bytes.
  const AllReduceCurve* ar = g.AllReduceFor(2);
  ASSERT_NE(ar, nullptr);
  ASSERT_EQ(ar->points.size(), 3u);
  EXPECT_DOUBLE_EQ(ar->points[0].bytes, 2048);
  // The MoE rows are one expert shape (Qwen3-235B's: 4,096 x 1,536, top-8
  // of 128) at tensor parallel 1: kept as its table, times to four digits
  // (0.12398... ms -> 1.240e-4 s).
  ASSERT_EQ(g.moe_tables.size(), 1u);
  const MoeShapeTable& t = g.moe_tables[0];
  EXPECT_EQ(t.dtype, "bf16");
  EXPECT_EQ(t.hidden, 4096);
  EXPECT_EQ(t.inter, 1536);
  EXPECT_EQ(t.top_k, 8);
  EXPECT_EQ(t.experts, 128);
  EXPECT_EQ(t.tensor_parallel, 1);
  ASSERT_EQ(t.tokens.size(), 8u);
  EXPECT_DOUBLE_EQ(t.tokens.back(), 16384);
  EXPECT_DOUBLE_EQ(t.seconds[0], 1.240e-4);
  EXPECT_DOUBLE_EQ(t.seconds.back(), 1.089e-2);
}

TEST(KernelFitTest, AMalformedRowNamesItsFileAndLine) {
  const auto dir = std::filesystem::temp_directory_path() / "kvbill_kernels_bad";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kSample, dir, std::filesystem::copy_options::recursive);
  const auto gemm = dir / "h100_sxm/vllm/0.24.0/gemm_perf.txt";
  std::ofstream(gemm, std::ios::app) << "VLLM,0.24.0,x,gemm,k,bfloat16,12,34,56,fast\n";
  auto set = FitKernelCurves(dir.string());
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().message(), gemm.string() + ":65: latency: \"fast\" is not a number");
}

TEST(KernelFitTest, ADirectoryWithoutKnownGpusIsAnError) {
  auto set = FitKernelCurves(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().message().find("no GPU directory kvbill knows"), std::string::npos);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
