#include "kvbill/hardware/catalog_names.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

namespace fs = std::filesystem;

std::string Model(const std::string& typed) {
  auto r = ResolveModelName(typed);
  return r.ok() ? *r : "error: " + r.error().message();
}

std::string Gpu(const std::string& typed) {
  auto r = ResolveGpuName(typed);
  return r.ok() ? *r : "error: " + r.error().message();
}

TEST(CatalogNamesTest, ModelByCatalogNameInAnyCase) {
  EXPECT_EQ(Model("qwen3-32b"), "qwen3-32b");
  EXPECT_EQ(Model("Qwen3-32B"), "qwen3-32b");
  EXPECT_EQ(Model("LLAMA-3.1-8B"), "llama-3.1-8b");
}

TEST(CatalogNamesTest, ModelByHuggingFaceRepoIdWithOrWithoutOrganisation) {
  EXPECT_EQ(Model("Qwen/Qwen3-32B"), "qwen3-32b");
  EXPECT_EQ(Model("qwen/qwen3-32b"), "qwen3-32b");
  EXPECT_EQ(Model("meta-llama/Llama-3.1-8B-Instruct"), "llama-3.1-8b");
  EXPECT_EQ(Model("meta-llama/Meta-Llama-3.1-70B"), "llama-3.1-70b");
  EXPECT_EQ(Model("Llama-3.1-8B-Instruct"), "llama-3.1-8b");
  EXPECT_EQ(Model("deepseek-ai/DeepSeek-V3"), "deepseek-v3");
  EXPECT_EQ(Model("openai/gpt-oss-20b"), "gpt-oss-20b");
  EXPECT_EQ(Model("mistralai/Mistral-7B-Instruct-v0.1"), "mistral-7b");
}

TEST(CatalogNamesTest, EveryRepoIdNamesACatalogModel) {
  for (const NameAlias& id : ModelRepoIds()) {
    EXPECT_TRUE(LoadModel(std::string(id.catalog)).ok()) << id.alias;
    EXPECT_NE(id.alias.find('/'), std::string_view::npos) << id.alias;
  }
}

TEST(CatalogNamesTest, ModelFileOrDirectoryHoldingConfigJson) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("kvbill_names_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "My-Model");
  fs::create_directories(dir / "empty");
  std::ofstream(dir / "My-Model" / "config.json") << "{}";
  const std::string file = (dir / "My-Model" / "config.json").string();
  EXPECT_EQ(Model(file), file);
  EXPECT_EQ(Model((dir / "My-Model").string()), file);
  EXPECT_EQ(Model((dir / "empty").string()), "error: --model \"" + (dir / "empty").string() +
                                                 "\": no config.json in this directory");
  fs::remove_all(dir);
}

TEST(CatalogNamesTest, MissingModelPathIsFileNotFound) {
  EXPECT_EQ(Model("./no/such/config.json"),
            "error: --model \"./no/such/config.json\": file not found");
  EXPECT_EQ(Model("/no/such/model"), "error: --model \"/no/such/model\": file not found");
  EXPECT_EQ(Model("nope.json"), "error: --model \"nope.json\": file not found");
}

TEST(CatalogNamesTest, UnknownModelGetsDidYouMeanAndTheCatalog) {
  std::string names;
  for (const CatalogModel& m : ModelCatalog()) names += (names.empty() ? "" : ", ") + m.name;
  const std::string tail =
      " (catalog: " + names +
      "; kvbill reads no model from the Hub: download its config.json and give its path)";
  // "qwen3-4b" is one substitution from "qwen3-8b", two edits from
  // "qwen3-32b" (4->3, +2) and three from "qwen3.5-9b" (+'.', +'5', 4->9);
  // every other name is further than 3 (the most allowed), and the three come
  // nearest first.
  EXPECT_EQ(Model("qwen3-4b"),
            "error: --model \"qwen3-4b\": not a bundled model nor a file; "
            "did you mean qwen3-8b, qwen3-32b or qwen3.5-9b?" +
                tail);
  // A repo id is compared with repo ids: "qwen/qwen3-4b" is 1 from
  // "qwen/qwen3-8b", 2 from "qwen/qwen3-32b" and 3 from "qwen/qwen3.5-9b".
  EXPECT_EQ(Model("Qwen/Qwen3-4B"),
            "error: --model \"Qwen/Qwen3-4B\": not a bundled model nor a "
            "file; did you mean Qwen/Qwen3-8B, Qwen/Qwen3-32B or Qwen/Qwen3.5-9B?" +
                tail);
  EXPECT_EQ(Model("gpt-5"), "error: --model \"gpt-5\": not a bundled model nor a file" + tail);
  auto flagged = ResolveModelName("nope", "--self-hosted-model");
  ASSERT_FALSE(flagged.ok());
  EXPECT_EQ(flagged.error().message().rfind("--self-hosted-model \"nope\": ", 0), 0u);
}

TEST(CatalogNamesTest, GpuByIdAliasOrTheNameNvidiaSmiPrints) {
  EXPECT_EQ(Gpu("h100-sxm"), "h100-sxm");
  EXPECT_EQ(Gpu("H100-SXM"), "h100-sxm");
  EXPECT_EQ(Gpu("h100"), "h100-sxm");
  EXPECT_EQ(Gpu("H100"), "h100-sxm");
  EXPECT_EQ(Gpu("NVIDIA H100 80GB HBM3"), "h100-sxm");  // nvidia-smi on an SXM5 H100
  EXPECT_EQ(Gpu("H100 80GB HBM3"), "h100-sxm");         // the same without the vendor
  EXPECT_EQ(Gpu("NVIDIA H100 SXM5 80GB"), "h100-sxm");  // the catalog's own name
  EXPECT_EQ(Gpu("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(Gpu("h100 pcie"), "h100-pcie");
  EXPECT_EQ(Gpu("NVIDIA H200"), "h200");
  EXPECT_EQ(Gpu("NVIDIA A100-SXM4-80GB"), "a100-80gb");
  EXPECT_EQ(Gpu("a100"), "a100-80gb");
  EXPECT_EQ(Gpu("NVIDIA L40S"), "l40s");
  EXPECT_EQ(Gpu("AMD Instinct MI300X"), "mi300x");
  EXPECT_EQ(Gpu("MI325X"), "mi325x");
}

TEST(CatalogNamesTest, EveryGpuAliasNamesACatalogGpu) {
  for (const NameAlias& a : GpuAliases()) {
    EXPECT_TRUE(LookupGpu(std::string(a.catalog)).ok()) << a.alias;
  }
}

TEST(CatalogNamesTest, UnknownGpuGetsDidYouMeanAndTheCatalog) {
  std::string ids;
  for (const GpuSpec& g : GpuCatalog()) ids += (ids.empty() ? "" : ", ") + g.id;
  const std::string tail = " (catalog: " + ids + "; or a path to a GPU JSON file)";
  // "h900": one substitution from the id "h200" and from the alias "h100"
  // (ids are offered first); "b200" is two away, more than 4 letters allow.
  EXPECT_EQ(Gpu("h900"), "error: --gpu \"h900\": unknown GPU; did you mean h200 or h100?" + tail);
  // The 40 GB A100 is its own part now; the PCIe 80 GB card is not in the
  // catalog: nothing is guessed for it.
  EXPECT_EQ(Gpu("NVIDIA A100-SXM4-40GB"), "a100-40gb");
  EXPECT_EQ(Gpu("NVIDIA A100-PCIE-80GB"),
            "error: --gpu \"NVIDIA A100-PCIE-80GB\": unknown GPU" + tail);
  EXPECT_EQ(Gpu("tpu-v5"), "error: --gpu \"tpu-v5\": unknown GPU" + tail);
  EXPECT_EQ(Gpu("gpus/my.json"), "error: --gpu \"gpus/my.json\": file not found");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
