// Scenarios against the format matrix and the parallelism keys: a
// combination no engine runs is an error at the field with the reason,
// and compare's lever says "not applicable" instead of running it.
#include <gtest/gtest.h>

#include <fstream>

#include "kvbill/scenario/levers.h"
#include "kvbill/scenario/scenario.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::string ErrorOf(const std::string& text) {
  auto s = ParseScenario(text, "s.json");
  return s.ok() ? "(parsed)" : s.error().message();
}

TEST(FormatsRulesTest, AKvFormatNoEngineRunsOnTheGpuIsAnErrorAtTheField) {
  EXPECT_EQ(ErrorOf(R"({"kv_format": "nvfp4", "deployment": {"gpu": "h100-sxm"}})"),
            "s.json#/kv_format: nvfp4 KV cache on h100-sxm (NVIDIA Hopper): no engine runs it: "
            "vLLM stores an NVFP4 KV cache only on Blackwell (SM100, FlashInfer trtllm-gen); "
            "no other GPU's attention kernels (FlashAttention 2/3, Triton, Hopper's decode path) "
            "read it");
  // vLLM's synonym is blamed where it was written.
  EXPECT_EQ(ErrorOf(R"({"kv_cache_dtype": "nvfp4"})")
                .rfind("s.json#/kv_cache_dtype: nvfp4 KV cache on h100-sxm", 0),
            0u);
  EXPECT_EQ(ErrorOf(R"({"kv_format": "nvfp4", "deployment": {"gpu": "b200"}})"), "(parsed)");
  EXPECT_EQ(ErrorOf(R"({"kv_format": "int2", "deployment": {"gpu": "b200"}})")
                .rfind("s.json#/kv_format: int2-g32 KV cache on b200 (NVIDIA Blackwell): no "
                       "engine runs it: no serving engine stores a 2-bit KV cache",
                       0),
            0u);
}

// vLLM and SGLang keep the KV cache in the dtype the model runs in or a
// narrower one: an fp32 cache needs the model in fp32, on either engine;
// in API mode (pricing) there is no engine to ask.
TEST(FormatsRulesTest, AnFp32KvCacheNeedsFp32Weights) {
  EXPECT_EQ(ErrorOf(R"({"kv_format": "fp32"})"),
            "s.json#/kv_format: an fp32 KV cache with weight_format \"auto\": vLLM and SGLang "
            "keep the cache in the dtype the model runs in or a narrower one (--kv-cache-dtype "
            "auto, fp8, ...), so an fp32 cache runs only with the model in fp32 (--dtype "
            "float32): set weight_format \"fp32\", or pick bf16");
  EXPECT_EQ(ErrorOf(R"({"kv_format": "fp32", "weight_format": "bf16",
                        "deployment": {"engine": "sglang"}})")
                .rfind("s.json#/kv_format: an fp32 KV cache with weight_format \"bf16\"", 0),
            0u);
  EXPECT_EQ(ErrorOf(R"({"kv_format": "fp32", "weight_format": "fp32"})"), "(parsed)");
  EXPECT_EQ(ErrorOf(R"({"kv_format": "bf16"})"), "(parsed)");
}

TEST(FormatsRulesTest, AWeightFormatNoEngineRunsIsAnErrorAtTheField) {
  EXPECT_EQ(ErrorOf(R"({"weight_format": "fp8-e5m2"})"),
            "s.json#/weight_format: fp8-e5m2 weights on h100-sxm (NVIDIA Hopper): no engine runs "
            "it: vLLM's FP8 linear layers take E4M3 weights only (torch._scaled_mm and Marlin FP8 "
            "are E4M3)");
  EXPECT_EQ(ErrorOf(R"({"weight_format": "nvfp4", "deployment": {"gpu": "mi300x"}})"),
            "s.json#/weight_format: nvfp4 weights on mi300x (AMD CDNA 3): no engine runs it: "
            "CDNA 3 has no FP4 units and the Marlin FP4 fallback is CUDA only");
  // They run elsewhere, as the engine runs them (W4A16 on Hopper).
  EXPECT_EQ(ErrorOf(R"({"weight_format": "nvfp4"})"), "(parsed)");
  // A checkpoint's own formats: gpt-oss's MXFP4 experts run on CDNA 3.
  EXPECT_EQ(ErrorOf(R"({"model": "gpt-oss-20b", "deployment": {"gpu": "mi300x"}})"), "(parsed)");
  // An API run has no GPU to check.
  EXPECT_EQ(ErrorOf(R"({"kv_format": "nvfp4", "pricing": {"provider": "anthropic",
                        "model": "claude-sonnet-4-5-20250929"}})"),
            "(parsed)");
}

// kv_format "auto" is vLLM's: the fp8 cache Laguna's kv_cache_scheme
// declares, the dtype where a checkpoint declares none.
TEST(FormatsRulesTest, AutoKvFormatIsWhatTheCheckpointDeclares) {
  const std::string laguna =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/laguna-xs.2-fp8.json";
  auto s = ParseScenario(R"({"model": ")" + laguna + R"(", "kv_format": "auto"})", "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->kv_format, "fp8-e4m3");
  auto plain = ParseScenario(R"({"kv_format": "auto"})", "s.json");
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_EQ(plain->kv_format, "bf16");
  EXPECT_EQ(s->declared_kv_format, "");
  // Left unset, the run keeps bf16 and notes the declared fp8 (the
  // kv_format_default warning); set explicitly, nothing is noted.
  auto unset = ParseScenario(R"({"model": ")" + laguna + R"("})", "s.json");
  ASSERT_TRUE(unset.ok()) << unset.error().message();
  EXPECT_EQ(unset->kv_format, "bf16");
  EXPECT_EQ(unset->declared_kv_format, "fp8-e4m3");
  auto explicit_bf16 =
      ParseScenario(R"({"model": ")" + laguna + R"(", "kv_format": "bf16"})", "s.json");
  ASSERT_TRUE(explicit_bf16.ok()) << explicit_bf16.error().message();
  EXPECT_EQ(explicit_bf16->declared_kv_format, "");
  auto qwen = ParseScenario(R"({"model": "qwen3-8b"})", "s.json");
  ASSERT_TRUE(qwen.ok()) << qwen.error().message();
  EXPECT_EQ(qwen->declared_kv_format, "");
}

// MLA on vLLM takes the block size its backend forces (kv_blocks.h):
// FlashMLA's 64 on Hopper, FlashInfer MLA's 64 on a B200 for DeepSeek-V3
// (qk_nope_head_dim 128), vLLM's 16 on an A100 (Triton MLA) and on SGLang
// on an H200 (kvbill's hashing unit for its pages of one token), 64 on SGLang
// on a B200 (its trtllm_mla backend); a block size the scenario sets stays.
TEST(FormatsRulesTest, MlaModelsTakeTheirBackendsBlockSize) {
  const std::string v3 = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/deepseek-v3.json";
  auto on = [&](const std::string& deployment, const std::string& extra = "") {
    auto s = ParseScenario(
        R"({"model": ")" + v3 + R"(", "deployment": )" + deployment + extra + "}", "s.json");
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message());
    return s.ok() ? s->prefix_cache.block_size : Tokens{-1};
  };
  EXPECT_EQ(on(R"({"gpu": "h200", "gpus_per_replica": 8})"), 64);
  EXPECT_EQ(on(R"({"gpu": "b200", "gpus_per_replica": 8})"), 64);
  EXPECT_EQ(on(R"({"gpu": "a100-80gb", "gpus_per_replica": 8})"), 16);
  EXPECT_EQ(on(R"({"gpu": "h200", "gpus_per_replica": 8, "engine": "sglang"})"), 16);
  // SGLang's trtllm_mla backend for DeepSeek-V3 on Blackwell pages in 64.
  EXPECT_EQ(on(R"({"gpu": "b200", "gpus_per_replica": 8, "engine": "sglang"})"), 64);
  EXPECT_EQ(
      on(R"({"gpu": "h200", "gpus_per_replica": 8})", R"(, "prefix_cache": {"block_size": 16})"),
      16);
}

// DeepSeek-V4 runs in vLLM's 256-token blocks unless the scenario says
// otherwise; other models keep the default 16.
TEST(FormatsRulesTest, CompressedModelsTakeVllmsBlockSize) {
  const std::string v4 =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/deepseek-v4-flash.json";
  auto s = ParseScenario(R"({"model": ")" + v4 + R"("})", "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->prefix_cache.block_size, 256);
  auto set =
      ParseScenario(R"({"model": ")" + v4 + R"(", "prefix_cache": {"block_size": 64}})", "s.json");
  ASSERT_TRUE(set.ok()) << set.error().message();
  EXPECT_EQ(set->prefix_cache.block_size, 64);
  auto plain = ParseScenario(R"({"model": "qwen3-8b"})", "s.json");
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_EQ(plain->prefix_cache.block_size, 16);
  // Its KV format is fp8 unless set; vLLM runs no other for it, nor on a
  // GPU without FlashMLA's sparse kernels (an A100).
  EXPECT_EQ(s->kv_format, "fp8-e4m3");
  EXPECT_EQ(s->declared_kv_format, "");
  auto bf16 = ParseScenario(R"({"model": ")" + v4 + R"(", "kv_format": "bf16"})", "s.json");
  ASSERT_FALSE(bf16.ok());
  EXPECT_NE(bf16.error().message().find("s.json#/kv_format: is bf16: DeepSeek-V4's cache is "
                                        "vLLM's fp8_ds_mla"),
            std::string::npos)
      << bf16.error().message();
  auto a100 = ParseScenario(
      R"({"model": ")" + v4 + R"(", "deployment": {"gpu": "a100-80gb", "gpus_per_replica": 4}})",
      "s.json");
  ASSERT_FALSE(a100.ok());
  EXPECT_NE(a100.error().message().find("s.json#/deployment/gpu: is a100-80gb (ampere)"),
            std::string::npos)
      << a100.error().message();
}

// A vision tower kvbill cannot count stops a scenario unless it leaves the
// towers out, as text_only says (every rule reads the model that way).
TEST(FormatsRulesTest, TextOnlyLeavesAnUncountedTowerOut) {
  const std::string path = ::testing::TempDir() + "/my_vlm.json";
  {
    std::ofstream out(path);
    out << R"({"model_type": "my_vlm", "vision_config": {"hidden_size": 8},
               "text_config": {"model_type": "llama", "num_hidden_layers": 2,
               "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100}})";
  }
  const std::string error = ErrorOf(R"({"model": ")" + path + R"("})");
  EXPECT_NE(error.find("kvbill cannot count the vision tower of model_type \"my_vlm\""),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("a scenario's \"model\": {\"text_only\": true}, leaves the towers out"),
            std::string::npos)
      << error;
  EXPECT_EQ(ErrorOf(R"({"model": {"name": ")" + path + R"(", "text_only": true}})"), "(parsed)");
}

TEST(FormatsRulesTest, ExpertParallelismSplitsTheExpertsOfTheReplica) {
  EXPECT_EQ(ErrorOf(R"({"model": "qwen3-235b-a22b",
                        "deployment": {"gpus_per_replica": 4, "expert_parallel": 3}})"),
            "s.json#/deployment/expert_parallel: must be 1 or gpus_per_replica (4), got 3");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpus_per_replica": 2, "expert_parallel": 2}})"),
            "s.json#/deployment/expert_parallel: model \"qwen3-8b\" has no routed experts to "
            "split; set it to 1");
  // Mixtral-8x7B has 8 routed experts: 16 GPUs cannot each hold one (16 -
  // 8 = 8 would hold none); 8 can.
  EXPECT_EQ(ErrorOf(R"({"model": "mixtral-8x7b",
                        "deployment": {"gpus_per_replica": 16, "expert_parallel": 16}})"),
            "s.json#/deployment/expert_parallel: 16 GPUs cannot each hold one of model "
            "\"mixtral-8x7b\"'s 8 routed experts: vLLM gives each GPU whole experts, experts / "
            "degree of them, so 8 GPUs would hold none and idle in every MoE layer; expert "
            "parallelism needs at most 8 GPUs a replica; set it to 1 (every GPU a slice of every "
            "expert)");
  EXPECT_EQ(ErrorOf(R"({"model": "mixtral-8x7b",
                        "deployment": {"gpus_per_replica": 8, "expert_parallel": 8}})"),
            "(parsed)");
  EXPECT_EQ(
      ErrorOf(R"({"deployment": {"expert_dispatch": "ring"}})"),
      R"(s.json#/deployment/expert_dispatch: unknown expert dispatch "ring" (one of all_reduce|all_to_all))");
  // An all-to-all dispatch moves tokens between GPUs holding different
  // experts; with every expert split over every GPU there is none to move.
  EXPECT_EQ(ErrorOf(R"({"deployment": {"expert_dispatch": "all_to_all"}})"),
            "s.json#/deployment/expert_dispatch: \"all_to_all\" needs expert_parallel above 1 "
            "(it is 1: every GPU holds a slice of every expert and no token is dispatched)");
  EXPECT_EQ(ErrorOf(R"({"model": "qwen3-235b-a22b", "deployment": {"gpus_per_replica": 4,
                        "expert_dispatch": "all_reduce"}})"),
            "(parsed)");
  // vLLM runs its all-to-all kernels only with data parallelism
  // (use_all2all_kernels: dp_size > 1): one replica is refused by name,
  // two replicas (--data-parallel-size 2) are not.
  EXPECT_EQ(ErrorOf(R"({"model": "qwen3-235b-a22b", "deployment": {"gpus_per_replica": 4,
                        "expert_parallel": 4, "expert_dispatch": "all_to_all"}})"),
            "s.json#/deployment/expert_dispatch: \"all_to_all\" on vLLM needs data parallelism "
            "(deployment.replicas above 1, vLLM's --data-parallel-size): with one replica vLLM "
            "runs no dispatch or combine and sums the experts' outputs by all-reduce; set it to "
            "\"all_reduce\"");
  EXPECT_EQ(ErrorOf(R"({"model": "qwen3-235b-a22b", "deployment": {"engine": "sglang",
                        "gpus_per_replica": 4, "expert_parallel": 4,
                        "expert_dispatch": "all_to_all"}})"),
            "(parsed)");
  auto s = ParseScenario(R"({"model": "qwen3-235b-a22b", "deployment": {"gpus_per_replica": 4,
                            "replicas": 2, "expert_parallel": 4, "expert_dispatch": "all_to_all"}})",
                         "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->deployment.expert_parallel, 4);
  EXPECT_EQ(s->deployment.expert_dispatch, "all_to_all");
}

// Qwen3-8B has 32 query heads and 8 KV heads: 3 GPUs divide neither (vLLM
// refuses it); 16 divide the query heads (2 each) and are a multiple of the
// KV heads (each replicated twice); 64 do not divide the query heads. An API
// price has no GPUs to split.
TEST(FormatsRulesTest, TensorParallelismMustSplitTheHeads) {
  const std::string three =
      "s.json#/deployment/gpus_per_replica: 3 GPUs cannot split model \"qwen3-8b\"'s 32 query "
      "heads and 8 KV heads evenly (vLLM and SGLang require the query heads divisible by the "
      "degree, and the KV heads too, or the degree by them)";
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpus_per_replica": 3}})"), three);
  EXPECT_EQ(ErrorOf(R"({"deployment": {"tensor_parallel_size": 3}})"),
            "s.json#/deployment/tensor_parallel_size: 3 GPUs cannot split model \"qwen3-8b\"'s "
            "32 query heads and 8 KV heads evenly (vLLM and SGLang require the query heads "
            "divisible by the degree, and the KV heads too, or the degree by them)");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpus_per_replica": 16}})"), "(parsed)");
  EXPECT_NE(ErrorOf(R"({"deployment": {"gpus_per_replica": 64}})"), "(parsed)");
  EXPECT_EQ(ErrorOf(R"({"deployment": {"gpus_per_replica": 3},
                        "pricing": {"provider": "anthropic",
                                    "model": "claude-sonnet-4-5-20250929"}})"),
            "(parsed)");
}

TEST(FormatsRulesTest, CompareMarksAKvLeverTheGpuCannotRunNotApplicable) {
  const std::string hopper = R"({"trace": {"generator": "chat", "tasks": 1}})";
  auto s = ParseScenario(hopper, "s.json");
  ASSERT_TRUE(s.ok());
  const std::vector<Lever> levers = Levers(*s);
  ASSERT_GE(levers.size(), 2u);
  EXPECT_EQ(levers[0].name, "fp8 KV cache");
  EXPECT_EQ(levers[0].not_applicable, "");
  EXPECT_EQ(levers[1].name, "nvfp4 KV cache");
  EXPECT_EQ(levers[1].not_applicable.rfind("nvfp4 KV cache on h100-sxm (NVIDIA Hopper): no engine "
                                           "runs it: ",
                                           0),
            0u);
  const std::vector<LeverOutcome> out = RunLevers(hopper, "s.json", {levers[1]}, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].run.has_value());
  EXPECT_EQ(out[0].error, "not applicable: " + levers[1].not_applicable);
  // On Blackwell the lever applies.
  auto b200 = ParseScenario(
      R"({"deployment": {"gpu": "b200"}, "trace": {"generator": "chat", "tasks": 1}})", "s.json");
  ASSERT_TRUE(b200.ok());
  EXPECT_EQ(Levers(*b200)[1].not_applicable, "");
}

// The speculation lever of an SGLang scenario that sets its overlap
// scheduler on: SGLang turns overlap off to speculate (and kvbill refuses
// both at once), so the lever sets the scheduler back to the engine's
// default beside the draft and runs; it failed ("n/a", then "failed").
TEST(FormatsRulesTest, SpeculationLeverOnSglangTakesTheOverlapSchedulerOff) {
  const std::string text = R"({"model": "llama-3.1-8b", "deployment": {"engine": "sglang",
      "async_scheduling": true}, "trace": {"generator": "chat", "tasks": 1}})";
  auto s = ParseScenario(text, "s.json");
  ASSERT_TRUE(s.ok()) << s.error().message();
  const std::vector<Lever> levers = Levers(*s);
  const Lever& spec = levers.back();
  ASSERT_EQ(spec.name.rfind("speculative decoding (", 0), 0u) << spec.name;
  EXPECT_EQ(spec.settings, (std::vector<std::pair<std::string, std::string>>{
                               {"/deployment/speculative", R"({"method": "eagle3"})"},
                               {"/deployment/async_scheduling", "null"}}));
  const std::vector<LeverOutcome> out = RunLevers(text, "s.json", {spec}, 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].run.has_value()) << out[0].error;
  // On vLLM (no overlap setting refused with an EAGLE-3 draft) the lever
  // is the draft alone.
  auto vllm = ParseScenario(R"({"model": "llama-3.1-8b", "deployment": {"async_scheduling": true},
      "trace": {"generator": "chat", "tasks": 1}})",
                            "s.json");
  ASSERT_TRUE(vllm.ok());
  EXPECT_EQ(Levers(*vllm).back().settings.size(), 1u);
}

// Architecture levers only where they change something: Qwen3-8B's 8 KV
// heads over 2 GPUs are 4 a GPU, halved 2: offered; over 8 GPUs one a GPU
// either way: listed not applicable. MiniMax-M3's sparse layers would lose
// their indexer and top-k reads in an MLA rewrite: no MLA lever for it.
TEST(FormatsRulesTest, ArchitectureLeversOnlyWhereTheyChangeSomething) {
  // Each lever's name, with " (not applicable)" where it is.
  const auto names = [](const std::string& text) {
    auto s = ParseScenario(text, "s.json");
    EXPECT_TRUE(s.ok()) << s.error().message();
    std::string out;
    for (const Lever& l : Levers(*s)) {
      out += l.name + (l.not_applicable.empty() ? "" : " (not applicable)") + "\n";
    }
    return out;
  };
  EXPECT_NE(names(R"({"deployment": {"gpus_per_replica": 2}})").find("4 KV heads instead of 8\n"),
            std::string::npos);
  EXPECT_NE(names(R"({"deployment": {"gpus_per_replica": 8}})")
                .find("4 KV heads instead of 8 (not applicable)\n"),
            std::string::npos);
  EXPECT_NE(names("{}").find("latent KV cache (MLA"), std::string::npos);
  const std::string m3 = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/minimax-m3.json";
  EXPECT_EQ(names(R"({"model": ")" + m3 + R"(", "deployment": {"gpu": "h200",
                     "gpus_per_replica": 8}})")
                .find("latent KV cache (MLA"),
            std::string::npos);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// vLLM picks the MXFP4 MoE kernel by what is installed only on Hopper;
// elsewhere "marlin" changes nothing, as VLLM_MXFP4_USE_MARLIN=1 there,
// "triton" asks for a kernel vLLM does not run, and SGLang has neither.
TEST(FormatsRulesTest, TheMxfp4MoeKernelIsVllmsChoice) {
  EXPECT_EQ(ErrorOf(R"({"model": "gpt-oss-20b", "deployment": {"mxfp4_moe_kernel": "marlin"}})"),
            "(parsed)");
  EXPECT_EQ(ErrorOf(R"({"model": "gpt-oss-20b", "deployment": {"mxfp4_moe_kernel": "triton"}})"),
            "(parsed)");
  EXPECT_EQ(
      ErrorOf(R"({"deployment": {"mxfp4_moe_kernel": "cutlass"}})"),
      R"(s.json#/deployment/mxfp4_moe_kernel: unknown MXFP4 MoE kernel "cutlass" (one of auto|triton|marlin))");
  EXPECT_EQ(ErrorOf(R"({"model": "gpt-oss-20b",
                        "deployment": {"gpu": "a100-80gb", "mxfp4_moe_kernel": "marlin"}})"),
            "(parsed)");
  EXPECT_EQ(ErrorOf(R"({"model": "gpt-oss-20b",
                        "deployment": {"gpu": "a100-80gb", "mxfp4_moe_kernel": "triton"}})"),
            "s.json#/deployment/mxfp4_moe_kernel: \"triton\": vLLM runs MXFP4 experts on the "
            "OpenAI Triton kernels only on Hopper and AMD CDNA; a100-80gb (ampere) runs them on "
            "one kernel whatever it is told (set it to \"auto\")");
  EXPECT_EQ(ErrorOf(R"({"model": "gpt-oss-20b",
                        "deployment": {"gpu": "mi300x", "mxfp4_moe_kernel": "triton"}})"),
            "(parsed)");
  EXPECT_EQ(ErrorOf(R"({"model": "gpt-oss-20b",
                        "deployment": {"engine": "sglang", "mxfp4_moe_kernel": "marlin"}})"),
            "s.json#/deployment/mxfp4_moe_kernel: is vLLM's choice; sglang is not modelled with "
            "another (set it to \"auto\")");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
