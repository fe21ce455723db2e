// Weight bytes from quantization_config, worked out by hand on a toy
// Llama: 1 layer, hidden 256, 4 heads of 64, MLP 512, vocabulary 1,000,
// bf16. Its linear layers are q, k, v, o (256 x 256 each), gate and up
// (512 rows x 256 inputs) and down (256 x 512); lm_head is 1,000 x 256.
// In bf16: attention 4 x 131,072 = 524,288 bytes, MLP 3 x 262,144 =
// 786,432, embedding and lm_head 512,000 each, norms (2 + 1) x 256 x 2 =
// 1,536: 2,336,256 bytes.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/weight_bytes.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

constexpr char kToy[] =
    R"({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 512,
        "vocab_size": 1000, "torch_dtype": "bfloat16")";

Result<WeightBytes> BytesWith(const std::string& quant) {
  auto m = ParseHfConfig(
      std::string(kToy) + (quant.empty() ? "" : ", \"quantization_config\": " + quant) + "}",
      "q.json", "q");
  if (!m) return m.error();
  return ComputeWeightBytes(*m, "auto");
}

Bytes Total(const std::string& quant) {
  auto w = BytesWith(quant);
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message());
  return w.ok() ? w->total : 0;
}

TEST(WeightFormatsTest, Bf16IsTwoBytesAParameter) { EXPECT_EQ(Total(""), 2336256); }

// fp8 with one fp32 scale per 128 x 128 block (DeepSeek-V3, Qwen3-FP8):
// a 256 x 256 matrix is 65,536 bytes + 2 x 2 scales x 4 = 65,552; gate, up
// and down 131,072 + 2 x 4 (or 4 x 2) scales x 4 = 131,104. lm_head stays.
// 4 x 65,552 + 3 x 131,104 + 512,000 x 2 + 1,536 = 1,681,056.
// Under tensor parallelism vLLM replicates norms, MoE routers and MLA's
// q_a_proj / kv_a_proj_with_mqa on every GPU; the rest is split.
//   Toy Llama: only its norms, 1,536 bytes: on 2 GPUs (2,336,256 - 1,536) / 2
//   + 1,536 = 1,167,360 + 1,536 = 1,168,896 a GPU.
//   Mixtral-8x7B (bf16): routers 32 x 8 x 4,096 = 1,048,576 and norms 32 x 2
//   x 4,096 + 4,096 = 266,240 parameters, 2,629,632 bytes; of its
//   93,405,585,408 bytes, 8 GPUs hold (93,405,585,408 - 2,629,632) / 8 +
//   2,629,632 = 11,677,999,104 each.
//   DeepSeek-V3 (fp8 with fp32 scales per 128 x 128 block): q_a_proj 1,536
//   x 7,168 = 11,010,048 + 12 x 56 x 4 = 2,688 bytes, kv_a_proj_with_mqa
//   576 x 7,168 = 4,128,768 + 5 x 56 x 4 = 1,120 bytes, over 61 layers
//   923,700,064; bf16 norms 61 x (2 x 7,168 + 1,536 + 512) x 2 + 7,168 x 2 =
//   2,013,184; bf16 routers 58 x 256 x 7,168 x 2 = 212,860,928 and their
//   score-correction biases 58 x 256 x 2 = 29,696: 1,138,603,872 bytes, so
//   on 8 GPUs each holds 7/8 of it, 996,278,388 bytes, more than an even
//   split (1.2% of an H200's 90% share).
TEST(WeightFormatsTest, ReplicatedTensorsAreWholeOnEveryGpu) {
  auto toy = BytesWith("");
  ASSERT_TRUE(toy.ok());
  EXPECT_EQ(toy->replicated, 1536);
  EXPECT_EQ(toy->PerGpu(1), 2336256);
  EXPECT_EQ(toy->PerGpu(2), 1168896);
  auto mixtral = ComputeWeightBytes(*LoadModel("mixtral-8x7b"), "auto");
  ASSERT_TRUE(mixtral.ok());
  EXPECT_EQ(mixtral->total, 93405585408);
  EXPECT_EQ(mixtral->replicated, 2629632);
  EXPECT_EQ(mixtral->PerGpu(8), 11677999104);
  auto deepseek = ComputeWeightBytes(*LoadModel("deepseek-v3"), "auto");
  ASSERT_TRUE(deepseek.ok());
  EXPECT_EQ(deepseek->replicated, 1138603872);
  const Bytes even = (deepseek->total + 7) / 8;
  EXPECT_EQ(deepseek->PerGpu(8) - even, 996278388);
}

// K and V heads are not split below one a GPU: with fewer KV heads than
// GPUs vLLM's QKVParallelLinear gives each GPU one whole head. Qwen3-235B-A22B
// (bf16): k_proj and v_proj are 4 heads x 128 x 4,096 = 2,097,152 parameters
// each, 8,388,608 bytes a layer, 788,529,152 over 94 layers. On 8 GPUs an
// even split is 98,566,144 a GPU; one head of each is 788,529,152 / 4 =
// 197,132,288: 98,566,144 bytes more than the even split. On 4 GPUs (one
// head each either way) nothing changes.
TEST(WeightFormatsTest, KvProjectionsOfFewerHeadsThanGpusAreOneHeadAGpu) {
  auto qwen = ComputeWeightBytes(*LoadModel("qwen3-235b-a22b"), "auto");
  ASSERT_TRUE(qwen.ok());
  ASSERT_EQ(qwen->kv_projections.size(), 1u);
  EXPECT_EQ(qwen->kv_projections.at(4), 788'529'152);
  auto split = [&](int tp) {
    const Bytes t = tp;
    return (qwen->total - qwen->replicated + t - 1) / t + qwen->replicated;
  };
  EXPECT_EQ(qwen->PerGpu(8) - split(8), 98'566'144);
  EXPECT_EQ(qwen->PerGpu(4), split(4));
}

// Mamba-2's B and C groups likewise: over more GPUs than groups vLLM gives
// each GPU whole groups (extra_groups_for_head_shards). Nemotron-H-56B
// (bf16; 54 'M' layers, 8 groups, d_state 256, hidden 8,192, d_conv 4 with
// a conv bias): in_proj's B and C are 2 x 8 x 256 = 4,096 rows x 8,192 =
// 33,554,432 parameters, conv1d's 4,096 channels x (4 + 1) = 20,480; x 2 B x
// 54 layers = 3,626,090,496 bytes. On 16 GPUs each holds one group's
// 453,261,312 instead of a 16th, 226,630,656: 226,630,656 bytes more. On 8
// GPUs (one group each either way) nothing changes.
TEST(WeightFormatsTest, Mamba2GroupsOfFewerThanTheGpusAreWholeOnEachGpu) {
  auto nemotron =
      LoadModel(std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/nemotron-h-56b-base-8k.json");
  ASSERT_TRUE(nemotron.ok()) << nemotron.error().message();
  auto w = ComputeWeightBytes(*nemotron, "auto");
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(w->state_group_parts.size(), 1u);
  EXPECT_EQ(w->state_group_parts.at(8), 3'626'090'496);
  auto split = [&](int tp) {
    const Bytes t = tp;
    Bytes gpu = (w->total - w->replicated + t - 1) / t + w->replicated;
    for (const auto& [heads, bytes] : w->kv_projections) {
      if (heads < tp) gpu += bytes / heads - bytes / tp;
    }
    return gpu;
  };
  EXPECT_EQ(w->PerGpu(16) - split(16), 226'630'656);
  EXPECT_EQ(w->PerGpu(8), split(8));
}

TEST(WeightFormatsTest, Fp8BlockScales) {
  EXPECT_EQ(Total(R"({"quant_method": "fp8", "weight_block_size": [128, 128]})"), 1681056);
}

// compressed-tensors int4, group 32, symmetric, pack-quantized (Kimi K2.5):
// 4 bits a weight, a bf16 scale per 32 inputs, an int32 pair (the weight's
// shape) per tensor. 256 x 256: 32,768 + 256 x 8 x 2 + 8 = 36,872; gate /
// up / down: 65,536 + 8,192 + 8 = 73,736. lm_head is ignored (bf16).
// 4 x 36,872 + 3 x 73,736 + 1,025,536 = 1,394,232. Asymmetric adds a 4-bit
// zero point per group: + 4 x 1,024 + 3 x 2,048 = 1,404,472.
TEST(WeightFormatsTest, CompressedTensorsIntGroups) {
  const std::string scheme =
      R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
          "ignore": ["lm_head"], "config_groups": {"group_0": {"targets": ["Linear"],
          "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32,
          "symmetric": SYM}}}})";
  auto with = [&](const char* sym) {
    std::string s = scheme;
    s.replace(s.find("SYM"), 3, sym);
    return s;
  };
  EXPECT_EQ(Total(with("true")), 1394232);
  EXPECT_EQ(Total(with("false")), 1404472);
  // Group activation ordering adds an int32 g_idx per input column: 4 x 256
  // + 2 x 256 + 512 columns x 4 B = 8,192 more.
  std::string ordered = with("true");
  ordered.replace(ordered.find("\"symmetric\""), 0, "\"actorder\": \"group\", ");
  EXPECT_EQ(Total(ordered), 1394232 + 8192);
  ordered.replace(ordered.find("\"group\", \"symmetric\""), 7, "\"weight\"");
  EXPECT_EQ(Total(ordered), 1394232);
}

// Ignore lists: "re:" patterns match a module name's start (Kimi K2.5's
// "re:.*self_attn.*" keeps attention in bf16): 4 x 131,072 + 3 x 73,736 +
// 1,025,536 = 1,771,032.
TEST(WeightFormatsTest, CompressedTensorsIgnoreRegex) {
  EXPECT_EQ(Total(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
                      "ignore": ["lm_head", "re:.*self_attn.*"],
                      "config_groups": {"group_0": {"targets": ["Linear"],
                      "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                      "group_size": 32, "symmetric": true}}}})"),
            1771032);
}

// modelopt NVFP4 (nvidia's checkpoints): 4 bits, an fp8 scale per 16, two
// fp32 per-tensor scales; globs in the ignore list. 256 x 256: 32,768 +
// 256 x 16 + 8 = 36,872; gate / up / down 65,536 + 8,192 + 8 = 73,736.
// Attention ignored by "*.self_attn.*": 4 x 131,072 + 3 x 73,736 + 1,025,536
// = 1,771,032.
TEST(WeightFormatsTest, ModeloptNvfp4WithGlobs) {
  EXPECT_EQ(Total(R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
                      "ignore": ["lm_head", "*.self_attn.*"]})"),
            1771032);
}

// ModelOpt's own layouts: quant_method left out (the producer names it),
// and hf_quant_config.json's "quantization" object. FP8 per tensor: each
// matrix in 1 byte a weight plus fp32 weight and input scales (8 bytes):
// 4 x (65,536 + 8) + 3 x (131,072 + 8) + 1,025,536 = 262,176 + 393,240 +
// 1,025,536 = 1,680,952, lm_head
// ignored. The KV cache the checkpoint declares: a kv_cache_scheme string
// ("FP8", "NVFP4") or kv_cache_quant_algo, nested or not.
TEST(WeightFormatsTest, ModeloptWithoutQuantMethodOrNested) {
  EXPECT_EQ(Total(R"({"producer": {"name": "modelopt"}, "quant_algo": "FP8",
                      "ignore": ["lm_head"], "kv_cache_scheme": "FP8"})"),
            1680952);
  EXPECT_EQ(Total(R"({"producer": {"name": "modelopt"}, "quant_method": "modelopt",
                      "quantization": {"quant_algo": "FP8", "exclude_modules": ["lm_head"],
                                       "kv_cache_quant_algo": "FP8"}})"),
            1680952);
  // Without an ignore list lm_head stays too (vLLM quantizes linear layers
  // only; its lm_head is an embedding): the same 1,680,952.
  EXPECT_EQ(Total(R"({"producer": {"name": "modelopt"}, "quant_algo": "FP8"})"), 1680952);
  auto kv = [](const std::string& quant) {
    auto m = ParseHfConfig(std::string(kToy) + ", \"quantization_config\": " + quant + "}",
                           "q.json", "q");
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
    return m.ok() ? m->checkpoint_kv_format : std::string("(error)");
  };
  EXPECT_EQ(kv(R"({"producer": {"name": "modelopt"}, "quant_algo": "FP8",
                   "kv_cache_scheme": "FP8"})"),
            "fp8-e4m3");
  EXPECT_EQ(kv(R"({"quant_method": "modelopt", "quant_algo": "NVFP4",
                   "kv_cache_scheme": "NVFP4"})"),
            "nvfp4");
  EXPECT_EQ(kv(R"({"quant_method": "modelopt", "quantization": {"quant_algo": "FP8",
                   "kv_cache_quant_algo": "FP8"}})"),
            "fp8-e4m3");
  EXPECT_EQ(kv(R"({"quant_method": "modelopt", "quant_algo": "FP8"})"), "");
  // Without a producer, a missing quant_method is still an error.
  EXPECT_FALSE(BytesWith(R"({"quant_algo": "FP8"})").ok());
}

// AutoAWQ: 4 bits, an fp16 scale and a 4-bit zero point per 128 inputs.
// 256 x 256: 32,768 + 256 x 2 x 20 / 8 = 34,048; gate / up / down 65,536 +
// 2,560 = 68,096: 4 x 34,048 + 3 x 68,096 + 1,025,536 = 1,366,016. GPTQ adds
// an int32 g_idx per input column: 4 x 1,024 + 2 x 1,024 + 2,048 = 8,192 more.
TEST(WeightFormatsTest, AwqAndGptqGroups) {
  EXPECT_EQ(Total(R"({"quant_method": "awq", "bits": 4, "group_size": 128,
                      "zero_point": true})"),
            1366016);
  EXPECT_EQ(Total(R"({"quant_method": "gptq", "bits": 4, "group_size": 128,
                      "desc_act": false, "sym": true})"),
            1374208);
}

// vLLM's AWQ skips a module when an entry of modules_to_not_convert is
// anywhere in its name: ["self_attn"] keeps q, k, v, o in bf16 (4 x 131,072
// = 524,288), the MLP AWQ (3 x 68,096 = 204,288), plus 1,025,536:
// 1,754,112.
TEST(WeightFormatsTest, AwqSkipsModulesNamingAnEntry) {
  EXPECT_EQ(Total(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true,
                      "modules_to_not_convert": ["self_attn"]})"),
            1754112);
}

// AMD Quark, on the toy (1,025,536 bytes outside the linear layers):
//   fp8_e4m3 per tensor with a static per-tensor input: each linear layer
//   one byte a weight and two fp32 scales (8 B): 4 x 65,544 + 3 x 131,080 =
//   655,416; 1,680,952 in all.
//   OCP MXFP4 (fp4 per_group 32, e8m0): 4.25 bits a weight, 256 x 256 ->
//   32,768 + 2,048 = 34,816, gate / up / down 65,536 + 4,096 = 69,632:
//   4 x 34,816 + 3 x 69,632 = 348,160; 1,373,696 in all.
//   MXFP4 but "*down_proj" fp8 per channel (dynamic input): down 131,072 +
//   256 rows x 4 B = 132,096; the rest 278,528: 1,436,160.
//   MXFP4 but excluding "re:model.layers.0.self_attn.*": attention bf16
//   524,288, MLP 208,896: 1,758,720.
TEST(WeightFormatsTest, QuarkFp8AndMxfp4) {
  const std::string fp8 = R"({"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": false})";
  const std::string mx = R"({"dtype": "fp4", "qscheme": "per_group", "group_size": 32,
                             "scale_format": "e8m0", "is_dynamic": false})";
  const std::string dyn = R"({"dtype": "fp4", "qscheme": "per_group", "group_size": 32,
                              "scale_format": "e8m0", "is_dynamic": true})";
  const auto quark = [](const std::string& body) {
    return R"({"quant_method": "quark", "export": {"kv_cache_group": [], "pack_method": "reorder"},
               )" +
           body + "}";
  };
  EXPECT_EQ(Total(quark(R"("exclude": ["lm_head"], "global_quant_config": {"weight": )" + fp8 +
                        R"(, "input_tensors": )" + fp8 + "}")),
            1680952);
  EXPECT_EQ(Total(quark(R"("exclude": ["lm_head"], "global_quant_config": {"weight": )" + mx +
                        R"(, "input_tensors": )" + dyn + "}")),
            1373696);
  EXPECT_EQ(Total(quark(R"("exclude": [], "global_quant_config": {"weight": )" + mx +
                        R"(, "input_tensors": )" + dyn +
                        R"(}, "layer_quant_config": {"*down_proj": {"weight": {"dtype":
                        "fp8_e4m3", "qscheme": "per_channel"}, "input_tensors": null}})")),
            1436160);
  EXPECT_EQ(Total(quark(R"("exclude": ["re:model.layers.0.self_attn.*"],
                        "global_quant_config": {"weight": )" +
                        mx + R"(, "input_tensors": )" + dyn + "}")),
            1758720);
  const std::pair<std::string, std::string> refused[] = {
      {R"({"quant_method": "quark", "global_quant_config": {"weight": {"dtype": "fp8_e4m3",
           "qscheme": "per_tensor"}}})",
       "q.json: quantization_config.export: missing: vLLM's Quark config requires it"},
      {quark(R"("global_quant_config": {"weight": {"dtype": "int8", "qscheme": "per_tensor"}})"),
       "q.json: quantization_config.global_quant_config.input_tensors: must be static int8 "
       "per_tensor with int8 weights: vLLM's Quark runs int8 only as static W8A8 "
       "(QuarkW8A8Int8)"},
      {quark(R"("global_quant_config": {"weight": {"dtype": "uint4", "qscheme": "per_group"}})"),
       "q.json: quantization_config.global_quant_config.weight.dtype: is \"uint4\": kvbill reads "
       "Quark's fp8_e4m3, int8 (W8A8) and fp4 (MXFP4) weights only"},
      {quark(R"("global_quant_config": {"weight": [{"dtype": "fp4"}, {"dtype": "fp8_e4m3"}]})"),
       "q.json: quantization_config.global_quant_config.weight: is a list (NVFP4, W4A8): kvbill "
       "reads Quark's fp8_e4m3 and MXFP4 (fp4) weights only"},
      // A malformed input spec is an error naming the field (it was an
      // internal error: the flag was read as a boolean unchecked).
      {quark(R"("global_quant_config": {"weight": )" + fp8 +
             R"(, "input_tensors": {"dtype": "fp8_e4m3", "is_dynamic": 1}})"),
       "q.json: quantization_config.global_quant_config.input_tensors.is_dynamic: must be true "
       "or false, got 1"},
      {quark(R"("global_quant_config": {"weight": )" + fp8 + R"(, "output_tensors": )" + fp8 + "}"),
       "q.json: quantization_config.global_quant_config.output_tensors: is set: vLLM's Quark "
       "schemes take none (NotImplementedError)"}};
  for (const auto& [config, message] : refused) {
    auto w = BytesWith(config);
    ASSERT_FALSE(w.ok()) << config;
    EXPECT_EQ(w.error().message(), message);
  }
}

// torchao, as transformers serializes TorchAoConfig (vLLM torchao.py). The
// toy's linear layers but lm_head: 655,360 parameters (q, k, v, o 4 x 65,536;
// gate, up, down 3 x 131,072), 2,304 rows; the rest (embedding, lm_head,
// norms) 1,025,536 bytes.
// Int4WeightOnlyConfig g128: 327,680 bytes of weights + per group of 128
// inputs a bf16 scale and zero (4 bytes): q, k, v, o 256 rows x 2 groups,
// gate and up 512 x 2, down 256 x 4 = 5,120 groups, 20,480 bytes: 1,373,696.
// Float8 per row: 655,360 + 2,304 x 4 = 664,576 -> 1,690,112; per tensor
// (the default granularity): 655,360 + 7 x 4 -> 1,680,924.
// Skipping down_proj: 1,373,696 - (65,536 + 4,096) + 262,144 = 1,566,208.
TEST(WeightFormatsTest, TorchAo) {
  const auto ao = [](const std::string& config, const std::string& extra = "") {
    return R"({"quant_method": "torchao", "quant_type": {"default": )" + config + "}" + extra + "}";
  };
  const std::string int4 =
      R"({"_type": "Int4WeightOnlyConfig", "_version": 2, "_data": {"group_size": 128,
          "int4_packing_format": {"_type": "Int4PackingFormat", "_data": "PLAIN"}}})";
  const std::string fp8_row =
      R"({"_type": "Float8DynamicActivationFloat8WeightConfig", "_data": {"granularity":
          [{"_type": "PerRow", "_data": {}}, {"_type": "PerRow", "_data": {}}]}})";
  EXPECT_EQ(Total(ao(int4)), 1373696);
  EXPECT_EQ(Total(ao(fp8_row)), 1690112);
  EXPECT_EQ(Total(ao(R"({"_type": "Float8DynamicActivationFloat8WeightConfig", "_data": {}})")),
            1680924);
  // modules_to_not_convert as vLLM's should_skip reads it: whole
  // dot-separated components ("down_proj", "layers.0"), not substrings.
  EXPECT_EQ(Total(ao(int4, R"(, "modules_to_not_convert": ["down_proj"])")), 1566208);
  EXPECT_EQ(Total(ao(int4, R"(, "modules_to_not_convert": ["layers.0"])")), 2336256);
  EXPECT_EQ(Total(ao(int4, R"(, "modules_to_not_convert": ["layers.1", "down"])")), 1373696);
  // A ModuleFqnToConfig with one config and a null entry (skipped).
  EXPECT_EQ(Total(ao(R"({"_type": "ModuleFqnToConfig", "_data": {"module_fqn_to_config":
                        {"_default": )" +
                     int4 + R"(, "model.layers.0.mlp.down_proj": null}}})")),
            1566208);
  // W8A8 runs at the FP8 rate; Int4 is weight-only (the dtype's math).
  auto fp8 = ParseHfConfig(std::string(kToy) + R"(, "quantization_config": )" + ao(fp8_row) + "}",
                           "q.json", "q");
  ASSERT_TRUE(fp8.ok()) << fp8.error().message();
  EXPECT_EQ(fp8->compute_format, "fp8-e4m3");
  auto w4 = ParseHfConfig(std::string(kToy) + R"(, "quantization_config": )" + ao(int4) + "}",
                          "q.json", "q");
  ASSERT_TRUE(w4.ok()) << w4.error().message();
  EXPECT_EQ(w4->compute_format, "bf16");
  const std::pair<std::string, std::string> refused[] = {
      {R"({"quant_method": "torchao"})",
       "q.json: quantization_config.quant_type: missing: torchao names its config there "
       "({\"default\": ...})"},
      {ao(R"({"_type": "Int8DynamicActivationInt4WeightConfig", "_data": {}})"),
       "q.json: quantization_config.quant_type.default._type: is "
       "\"Int8DynamicActivationInt4WeightConfig\": kvbill reads torchao's Int4WeightOnlyConfig "
       "and Float8DynamicActivationFloat8WeightConfig"},
      {ao("{}"),
       "q.json: quantization_config.quant_type.default._type: missing: kvbill reads torchao's "
       "Int4WeightOnlyConfig and Float8DynamicActivationFloat8WeightConfig"},
      {ao(int4, R"(, "include_input_output_embeddings": true)"),
       "q.json: quantization_config.include_input_output_embeddings: is true: quantized "
       "embeddings are not read by kvbill (vLLM applies torchao to linear layers only)"},
      {ao(R"({"_type": "ModuleFqnToConfig", "_data": {"module_fqn_to_config": {"_default": )" +
          int4 + R"(, "model.layers.0.mlp.down_proj": )" + fp8_row + "}}}"),
       "q.json: quantization_config.quant_type.default._data.module_fqn_to_config."
       "model.layers.0.mlp.down_proj: differs from another module's config: per-module torchao "
       "configs are not read by kvbill (one config for every quantized module is)"}};
  for (const auto& [config, message] : refused) {
    auto w = BytesWith(config);
    ASSERT_FALSE(w.ok()) << config;
    EXPECT_EQ(w.error().message(), message);
  }
}

// Quark's W8A8 INT8 (vLLM QuarkW8A8Int8: symmetric static int8 weights, a
// static per-tensor int8 input). Per channel: 655,360 + 2,304 rows x 4 B +
// 7 input scales x 4 B = 664,604 -> 1,690,140; per tensor: 655,360 + 7 x
// (4 + 4) -> 1,680,952; an asymmetric input adds an int32 zero point a
// tensor: 1,690,168. The format matrix finds each format's row: Quark's
// fp8 runs as W8A8 FP8 on an H100 and its int8 as W8A8 INT8 (an earlier
// name, "fp8-e4m3 per_tensor (quark)", fell outside every row and ran as a
// weight-only fallback).
TEST(WeightFormatsTest, QuarkInt8AndTheMatrixRows) {
  const auto quark = [](const std::string& weight, const std::string& input) {
    return R"({"quant_method": "quark", "export": {"kv_cache_group": []}, "exclude": [],
               "global_quant_config": {"weight": )" +
           weight + R"(, "input_tensors": )" + input + "}}";
  };
  const std::string channel =
      R"({"dtype": "int8", "qscheme": "per_channel", "symmetric": true, "is_dynamic": false})";
  const std::string tensor =
      R"({"dtype": "int8", "qscheme": "per_tensor", "symmetric": true, "is_dynamic": false})";
  const std::string input =
      R"({"dtype": "int8", "qscheme": "per_tensor", "symmetric": true, "is_dynamic": false})";
  const std::string asym =
      R"({"dtype": "int8", "qscheme": "per_tensor", "symmetric": false, "is_dynamic": false})";
  EXPECT_EQ(Total(quark(channel, input)), 1690140);
  EXPECT_EQ(Total(quark(tensor, input)), 1680952);
  EXPECT_EQ(Total(quark(channel, asym)), 1690168);
  auto h100 = LookupGpu("h100-sxm");
  ASSERT_TRUE(h100.ok());
  const auto row = [&](const std::string& q) -> std::pair<std::string, std::string> {
    auto m =
        ParseHfConfig(std::string(kToy) + R"(, "quantization_config": )" + q + "}", "q.json", "q");
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
    if (!m.ok()) return {};
    auto parts = NativePartFormats(*m);
    EXPECT_TRUE(parts.ok());
    if (!parts.ok()) return {};
    const FormatRun run = HowGpuRuns(*h100, FormatRole::kWeights, parts->dense);
    return {run.matrix_row, run.cell.computed};
  };
  EXPECT_EQ(row(quark(channel, input)),
            std::make_pair(std::string("w8a8-int8"), std::string("int8")));
  const std::string fp8 = R"({"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": false})";
  EXPECT_EQ(row(quark(fp8, fp8)), std::make_pair(std::string("fp8-e4m3"), std::string("fp8")));
  auto dynamic = BytesWith(
      quark(R"({"dtype": "int8", "qscheme": "per_channel", "symmetric": true, "is_dynamic": true})",
            input));
  ASSERT_FALSE(dynamic.ok());
  EXPECT_EQ(dynamic.error().message(),
            "q.json: quantization_config.global_quant_config.weight.is_dynamic: int8 weights must "
            "be static and symmetric for vLLM's QuarkW8A8Int8");
}

// GPTQ with "lm_head": true stores the lm_head too (vLLM's GPTQConfig
// lm_head_quantized): 1,000 x 256 at 4 bits = 128,000 + 1,000 rows x 2
// groups x 20 bits = 5,000 + g_idx 256 x 4 = 1,024: 134,024 instead of
// 512,000, so 1,374,208 - 512,000 + 134,024 = 996,232. GPTQModel's
// `dynamic` overrides are refused, not ignored.
TEST(WeightFormatsTest, GptqLmHeadAndDynamic) {
  EXPECT_EQ(Total(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": true,
                      "lm_head": true})"),
            996232);
  auto dynamic = BytesWith(R"({"quant_method": "gptq", "bits": 4, "group_size": 128,
                               "dynamic": {"-:.*down_proj": {}}})");
  ASSERT_FALSE(dynamic.ok());
  EXPECT_EQ(dynamic.error().message(),
            "q.json: quantization_config.dynamic: per-module overrides are not read by kvbill "
            "(give the checkpoint as one format, or a compressed-tensors config)");
  EXPECT_EQ(Total(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "dynamic": {}})"),
            1374208);
}

// The tower's bytes and parameters of tests/data/configs/`file` with
// `quant` as its quantization_config.
std::pair<Bytes, std::int64_t> TowerWith(const std::string& file, const nlohmann::json& quant) {
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/" + file);
  EXPECT_TRUE(in.good()) << file;
  nlohmann::json c = nlohmann::json::parse(in);
  c["quantization_config"] = quant;
  auto m = ParseHfConfig(c.dump(), "q.json", "q");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  if (!m) return {0, 0};
  auto w = ComputeWeightBytes(*m, "auto");
  EXPECT_TRUE(w.ok());
  return {w.ok() ? w->towers : 0, m->params.vision};
}

// llm-compressor writes the tower modules it skipped one by one into
// `ignore` (visual.blocks.0.attn.qkv, ...). A tower is one weight group
// here, so naming its modules keeps it whole at the dtype: Qwen2-VL-7B's
// tower in bf16 is exactly 2 bytes a parameter. Without such entries the
// W4A16 scheme's "Linear" target takes it (fewer bytes).
TEST(WeightFormatsTest, CompressedTensorsIgnoreNamingTowerModules) {
  // The tower's bytes and parameters with `ignore` as given.
  const auto tower = [](const nlohmann::json& ignore) {
    nlohmann::json quant = nlohmann::json::parse(R"({"quant_method": "compressed-tensors",
        "format": "pack-quantized", "config_groups": {"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 4, "type": "int", "symmetric": true, "strategy": "group",
        "group_size": 128}}}})");
    quant["ignore"] = ignore;
    return TowerWith("olmocr-qwen2-vl-7b.json", quant);
  };
  const auto [listed, params] =
      tower({"lm_head", "visual.blocks.0.attn.qkv", "visual.merger.mlp.0"});
  EXPECT_GT(params, 0);
  EXPECT_EQ(listed, 2 * params);
  EXPECT_LT(tower({"lm_head"}).first, listed);
  // A regex under the model's wrapper names the tower too.
  EXPECT_EQ(tower({"lm_head", "re:model.visual.blocks.31.attn.*"}).first, 2 * params);
}

// vLLM's Fp8Config reads ignored_layers, and modules_to_not_convert only
// when that is absent, null or empty. The toy's MLP left out: attention 4 x
// 65,552 (fp8, 128 x 128 blocks) + MLP 786,432 + embedding and lm_head
// 1,024,000 + norms 1,536 = 2,074,176.
TEST(WeightFormatsTest, Fp8ReadsIgnoredLayersFirst) {
  const std::string mlp =
      R"(["model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj",
          "model.layers.0.mlp.down_proj"])";
  const std::string fp8 = R"({"quant_method": "fp8", "weight_block_size": [128, 128], )";
  EXPECT_EQ(Total(fp8 + R"("ignored_layers": )" + mlp + "}"), 2074176);
  EXPECT_EQ(Total(fp8 + R"("modules_to_not_convert": )" + mlp + "}"), 2074176);
  EXPECT_EQ(Total(fp8 + R"("ignored_layers": [], "modules_to_not_convert": )" + mlp + "}"),
            2074176);
  EXPECT_EQ(Total(fp8 + R"("ignored_layers": null, "modules_to_not_convert": )" + mlp + "}"),
            2074176);
  // Given both, ignored_layers: nothing left out but lm_head (1,681,056).
  EXPECT_EQ(Total(fp8 + R"("ignored_layers": ["lm_head"], "modules_to_not_convert": )" + mlp + "}"),
            1681056);
}

// A list naming a tower's modules one by one (Qwen's FP8 exporter writes
// every module it skipped) keeps the whole tower at the dtype, under fp8's
// modules_to_not_convert and ModelOpt's exclude_modules as under
// compressed-tensors' ignore: 2 bytes a tower parameter.
TEST(WeightFormatsTest, Fp8AndModeloptListsNamingTowerModules) {
  const auto tower = [](const std::string& quant) {
    return TowerWith("qwen3-vl-8b-instruct.json", nlohmann::json::parse(quant));
  };
  const auto [fp8, params] = tower(R"({"quant_method": "fp8", "weight_block_size": [128, 128],
      "modules_to_not_convert": ["lm_head", "model.visual.blocks.0.attn.qkv",
                                 "model.visual.merger.linear_fc1"]})");
  ASSERT_GT(params, 0);
  EXPECT_EQ(fp8, 2 * params);
  EXPECT_EQ(tower(R"({"quant_method": "fp8", "weight_block_size": [128, 128],
      "ignored_layers": ["model.visual.blocks.26.mlp.linear_fc2"]})")
                .first,
            2 * params);
  EXPECT_EQ(tower(R"({"quant_method": "modelopt", "quant_algo": "FP8",
      "exclude_modules": ["lm_head", "model.visual.blocks.0.attn.qkv"]})")
                .first,
            2 * params);
  // Not listed, the tower is quantized with the rest.
  EXPECT_LT(tower(R"({"quant_method": "fp8", "weight_block_size": [128, 128],
      "modules_to_not_convert": ["lm_head"]})")
                .first,
            2 * params);
}

// Experts named as the checkpoints name them, so ignore lists apply.
// Gemma 4 26B-A4B keeps them in the layer (layers.N.experts.*, its router
// layers.N.router.proj, its dense MLP layers.N.mlp.*): NVIDIA's NVFP4
// export leaves mlp*, router* and self_attn* out and stores the experts,
// 30 layers x 128 x 3 x 704 x 2,816 = 22,837,985,280 parameters, at 4 bits
// and an fp8 scale per 16, 0.5625 bytes a parameter: 12,846,366,720 bytes
// plus two fp32 scales per tensor. MiniMax-M2 names them as Mixtral
// (block_sparse_moe.experts.N.w1 / w3 / w2): fp8 leaving block_sparse_moe
// out keeps its 62 x 256 x 3 x 1,536 x 3,072 = 224,680,476,672 expert
// parameters in bf16, 449,360,953,344 bytes.
TEST(WeightFormatsTest, ExpertsAreNamedAsTheirCheckpoints) {
  const auto load = [](const std::string& file, const std::string& quant) {
    std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/" + file);
    EXPECT_TRUE(in.good()) << file;
    nlohmann::json c = nlohmann::json::parse(in);
    c["quantization_config"] = nlohmann::json::parse(quant);
    auto m = ParseHfConfig(c.dump(), file, "m");
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
    auto w = m ? ComputeWeightBytes(*m, "auto") : Result<WeightBytes>(m.error());
    EXPECT_TRUE(w.ok());
    return w.ok() ? w->routed_experts : Bytes{0};
  };
  const Bytes gemma = load("gemma-4-26b-a4b.json", R"({"quant_method": "modelopt",
      "quant_algo": "NVFP4", "group_size": 16, "ignore": ["lm_head",
      "model.language_model.layers.*.mlp*", "model.language_model.layers.*.router*",
      "model.language_model.layers.*.self_attn*", "model.vision_tower*"]})");
  EXPECT_GE(gemma, 12'846'366'720);
  EXPECT_LE(gemma, 12'846'366'720 + 30 * 128 * 3 * 8);  // the per-tensor scales at most
  EXPECT_EQ(load("minimax-m2.5.json", R"({"quant_method": "fp8",
      "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head",
      ".*block_sparse_moe"]})"),
            449'360'953'344);
}

// An MLX checkpoint's own quantization (mlx-community: "quantization" with
// bits and group_size, no quant_method) is refused naming the field, not
// read as bf16: neither vLLM nor SGLang loads it.
TEST(WeightFormatsTest, MlxQuantizationIsRefused) {
  auto m = ParseHfConfig(std::string(kToy) + R"(, "quantization": {"bits": 4, "group_size": 64}})",
                         "q.json", "q");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("q.json: quantization: an MLX quantization"),
            std::string::npos)
      << m.error().message();
}

// AutoRound packs as GPTQ (the default) or AWQ: the same bytes as above.
// Per-module formats from extra_config, GPTQ packing:
//   down_proj at 8 bits: 256 x 512 x 1 B = 131,072 + 256 x 4 groups x (16 +
//   8) bits = 3,072 + g_idx 512 x 4 = 2,048: 136,192 where 4 bits took
//   65,536 + 2,560 + 2,048 = 70,144, so 1,374,208 + 66,048 = 1,440,256.
//   q_proj at 16 bits (unquantized): 131,072 where 4 bits took 34,048 +
//   1,024 = 35,072, so 1,374,208 + 96,000 = 1,470,208.
// block_name_to_quantize "model.layers.0.mlp": attention stays bf16 (4 x
//   131,072 = 524,288), the MLP is GPTQ (gate, up 65,536 + 2,560 + 1,024 =
//   69,120 each, down 70,144: 208,384), plus 1,025,536: 1,758,208.
TEST(WeightFormatsTest, AutoRoundPacksAsGptqOrAwq) {
  EXPECT_EQ(Total(R"({"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": true,
                      "data_type": "int", "packing_format": "auto_round:auto_gptq",
                      "block_name_to_quantize": "model.layers"})"),
            1374208);
  EXPECT_EQ(Total(R"({"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": false,
                      "packing_format": "auto_round:auto_awq"})"),
            1366016);
  EXPECT_EQ(Total(R"({"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": true,
                      "extra_config": {"model.layers.0.mlp.down_proj": {"bits": 8}}})"),
            1440256);
  EXPECT_EQ(Total(R"({"quant_method": "intel/auto-round", "bits": 4, "group_size": 128,
                      "sym": true,
                      "extra_config": {"model.layers.0.self_attn.q_proj": {"bits": 16}}})"),
            1470208);
  EXPECT_EQ(Total(R"({"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": true,
                      "to_quant_block_names": ["model.layers.0.mlp"]})"),
            1758208);
  const std::pair<std::string, std::string> refused[] = {
      {R"({"quant_method": "auto-round", "bits": 4, "group_size": 32, "sym": true,
           "data_type": "mx_fp"})",
       "q.json: quantization_config.data_type: is \"mx_fp\": vLLM's AutoRound reads integer "
       "weights only (int)"},
      {R"({"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": true,
           "packing_format": "auto_round:llm_compressor"})",
       "q.json: quantization_config.packing_format: is \"auto_round:llm_compressor\" (known: "
       "auto_round:auto_gptq, auto_round:auto_awq)"},
      {R"({"quant_method": "auto-round", "bits": 5, "group_size": 128, "sym": true})",
       "q.json: quantization_config.bits: is 5 (vLLM's AutoRound reads 2, 3, 4 or 8)"},
      {R"({"quant_method": "auto-round", "group_size": 128, "sym": true})",
       "q.json: quantization_config.bits: missing"},
      {R"({"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": true,
           "extra_config": {"model.layers.0.mlp.up_proj": {"bits": 6}}})",
       "q.json: quantization_config.extra_config.model.layers.0.mlp.up_proj.bits: is 6 (vLLM's "
       "AutoRound reads 2, 3, 4 or 8, or 16 and more: unquantized)"}};
  for (const auto& [quant, message] : refused) {
    auto w = BytesWith(quant);
    ASSERT_FALSE(w.ok()) << quant;
    EXPECT_EQ(w.error().message(), message);
  }
}

// AutoRound on a Mixtral-style toy (4 experts of 128: gate, up 128 x 256,
// down 256 x 128): a fused MoE takes the format its sub-layers' extra_config
// entries give, which must agree. At 8 bits in groups of 128 (GPTQ): gate
// and up 128 x 256 B = 32,768 + 128 x 2 x 3 B = 768 + g_idx 1,024 = 34,560;
// down 32,768 + 256 x 1 x 3 = 768 + g_idx 512 = 34,048; 4 experts x
// (2 x 34,560 + 34,048) = 412,672 bytes.
TEST(WeightFormatsTest, AutoRoundFusedExpertsTakeOneFormat) {
  const auto experts = [](const std::string& extra) -> Result<WeightBytes> {
    auto m = ParseHfConfig(
        R"({"model_type": "mixtral", "num_hidden_layers": 1, "hidden_size": 256,
            "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
            "vocab_size": 1000, "num_local_experts": 4, "num_experts_per_tok": 2,
            "quantization_config": {"quant_method": "auto-round", "bits": 4,
            "group_size": 128, "sym": true, "extra_config": )" +
            extra + "}}",
        "m.json", "m");
    if (!m) return m.error();
    return ComputeWeightBytes(*m, "auto");
  };
  auto same = experts(R"({"model.layers.0.block_sparse_moe.experts.0.w1": {"bits": 8},
                          "model.layers.0.block_sparse_moe.experts.3.w2": {"bits": 8}})");
  ASSERT_TRUE(same.ok()) << same.error().message();
  EXPECT_EQ(same->routed_experts, 412672);
  auto mixed = experts(R"({"model.layers.0.block_sparse_moe.experts.0.w1": {"bits": 8},
                           "model.layers.0.block_sparse_moe.experts.3.w2": {"bits": 4}})");
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(
      mixed.error().message(),
      "m.json: quantization_config.extra_config.model.layers.0.block_sparse_moe.experts.3.w2: "
      "differs from extra_config.model.layers.0.block_sparse_moe.experts.0.w1: the "
      "sub-layers of model.layers.0.block_sparse_moe.experts.0.w1 run as one fused module "
      "and need one format (as vLLM requires)");
}

// gpt-oss's mxfp4 stores the routed experts only: a Mixtral-style toy with 4
// experts of 128 (gate, up 128 x 256; down 256 x 128): each matrix 16,384 +
// one E8M0 scale per 32 inputs (128 x 8 or 256 x 4 bytes) = 17,408; 4
// experts x 3 = 208,896 bytes. A token reads 2 of the 4, and none of the
// input embedding table but its own row (1,000 x 256 x 2 = 512,000 bytes of
// bf16; the lm_head is a separate matrix).
TEST(WeightFormatsTest, Mxfp4Experts) {
  auto m = ParseHfConfig(
      R"({"model_type": "mixtral", "num_hidden_layers": 1, "hidden_size": 256,
          "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
          "vocab_size": 1000, "num_local_experts": 4, "num_experts_per_tok": 2,
          "quantization_config": {"quant_method": "mxfp4"}})",
      "m.json", "m");
  ASSERT_TRUE(m.ok()) << m.error().message();
  auto w = ComputeWeightBytes(*m, "auto");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->routed_experts, 208896);
  EXPECT_EQ(w->gathered_embedding, 512000);
  EXPECT_EQ(w->total - w->active, 208896 / 2 + 512000);
}

// With tie_word_embeddings the table is the lm_head too: every step reads
// it whole for the logits, so it stays in what a token reads. A toy Llama
// (1 layer, hidden 64, MLP 128, vocab 1,000; bf16): the table is 1,000 x 64
// x 2 = 128,000 bytes; untied, a second 128,000-byte lm_head is read and the
// table is only gathered.
TEST(WeightFormatsTest, ATiedEmbeddingIsReadAsTheLmHead) {
  const std::string base =
      R"({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
          "vocab_size": 1000, "torch_dtype": "bfloat16", "tie_word_embeddings": )";
  auto tied = ParseHfConfig(base + "true}", "t.json", "t");
  auto untied = ParseHfConfig(base + "false}", "u.json", "u");
  ASSERT_TRUE(tied.ok() && untied.ok());
  auto t = ComputeWeightBytes(*tied, "auto");
  auto u = ComputeWeightBytes(*untied, "auto");
  ASSERT_TRUE(t.ok() && u.ok());
  EXPECT_EQ(t->gathered_embedding, 0);
  EXPECT_EQ(t->active, t->total);
  EXPECT_EQ(u->gathered_embedding, 128000);
  EXPECT_EQ(u->total - t->total, 128000);  // the lm_head
  EXPECT_EQ(u->active, t->active);         // lm_head read, table gathered
}

// A float32 checkpoint (torch_dtype "float32", e.g. an older small model)
// is served in 16 bits: vLLM's --dtype auto loads it as float16 (bfloat16
// since v0.10.1), so it is sized as the bfloat16 one: 2 bytes a weight,
// not 4.
TEST(WeightFormatsTest, AFloat32CheckpointIsServedIn16Bits) {
  const std::string base =
      R"({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
          "vocab_size": 1000, "tie_word_embeddings": true, "torch_dtype": )";
  auto fp32 = ParseHfConfig(base + "\"float32\"}", "f.json", "f");
  auto bf16 = ParseHfConfig(base + "\"bfloat16\"}", "b.json", "b");
  ASSERT_TRUE(fp32.ok() && bf16.ok()) << (fp32.ok() ? "" : fp32.error().message());
  EXPECT_EQ(fp32->dtype, "bf16");
  auto a = ComputeWeightBytes(*fp32, "auto");
  auto b = ComputeWeightBytes(*bf16, "auto");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->total, b->total);
  // 2 bytes a parameter: the embedding 64,000, attention 4 x 64 x 64 =
  // 16,384, MLP 3 x 64 x 128 = 24,576, norms 3 x 64 = 192: 105,152
  // parameters, 210,304 bytes.
  EXPECT_EQ(a->total, 210304);
}

// bitsandbytes (transformers BitsAndBytesConfig, as unsloth's *-bnb-4bit
// releases store it); lm_head, the embedding and norms stay bf16 (1,025,536).
// nf4 with double quantization, a tensor of 65,536 elements: 32,768 B of
// weights, an 8-bit absmax per 64 (1,024), an fp32 scale per 256 blocks
// (4 x 4 = 16) and the quant maps (16 + 256) x 4 = 1,088: 34,896; of
// 131,072: 65,536 + 2,048 + 32 + 1,088 = 68,704. 4 x 34,896 + 3 x 68,704 +
// 1,025,536 = 1,371,232. Without it an fp32 absmax per 64 and the 16-entry
// map: 32,768 + 4,096 + 64 = 36,928 and 65,536 + 8,192 + 64 = 73,792:
// 1,394,624. LLM.int8() (8-bit): int8 weights and an fp32 scale per output
// row: 65,536 + 1,024 = 66,560 (q, k, v, o), 131,072 + 2,048 = 133,120
// (gate, up), 131,072 + 1,024 = 132,096 (down): 1,690,112.
TEST(WeightFormatsTest, BitsAndBytesFourAndEightBit) {
  EXPECT_EQ(Total(R"({"quant_method": "bitsandbytes", "load_in_4bit": true,
                      "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true,
                      "bnb_4bit_compute_dtype": "bfloat16"})"),
            1371232);
  EXPECT_EQ(Total(R"({"quant_method": "bitsandbytes", "load_in_4bit": true,
                      "bnb_4bit_quant_type": "nf4"})"),
            1394624);
  EXPECT_EQ(Total(R"({"quant_method": "bitsandbytes", "load_in_8bit": true})"), 1690112);
  // Skipped modules (matched as transformers matches them) stay bf16: the
  // MLP's three (3 x 262,144 B) in place of
  // 3 x 68,704.
  EXPECT_EQ(Total(R"({"quant_method": "bitsandbytes", "load_in_4bit": true,
                      "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true,
                      "llm_int8_skip_modules": ["model.layers.0.mlp"]})"),
            1371232 - 3 * 68704 + 3 * 262144);
  auto neither = BytesWith(R"({"quant_method": "bitsandbytes"})");
  ASSERT_FALSE(neither.ok());
  EXPECT_NE(neither.error().message().find("quantization_config.load_in_4bit: and load_in_8bit"),
            std::string::npos)
      << neither.error().message();
  auto type = BytesWith(R"({"quant_method": "bitsandbytes", "load_in_4bit": true,
                            "bnb_4bit_quant_type": "int4"})");
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.error().message().find("bnb_4bit_quant_type: must be \"nf4\" or \"fp4\""),
            std::string::npos)
      << type.error().message();
}

// FBGEMM FP8 (Meta's Llama-3.1-405B-Instruct-FP8): fp8 weights and an
// fp32 scale per output row: 65,536 + 256 x 4 = 66,560 (q, k, v, o),
// 131,072 + 512 x 4 = 133,120 (gate, up), 131,072 + 256 x 4 = 132,096
// (down), lm_head and the rest 1,025,536: 1,690,112. Attention left in
// bf16 by modules_to_not_convert: + 4 x (131,072 - 66,560) = 1,948,160.
TEST(WeightFormatsTest, FbgemmFp8PerChannel) {
  EXPECT_EQ(Total(R"({"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0,
                      "modules_to_not_convert": []})"),
            1690112);
  EXPECT_EQ(Total(R"({"quant_method": "fbgemm_fp8",
                      "modules_to_not_convert": ["model.layers.0.self_attn"]})"),
            1948160);
}

TEST(WeightFormatsTest, UnknownMethodsAndBadPatternsAreErrors) {
  auto bad = BytesWith(R"({"quant_method": "hqq"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(),
            "q.json: quantization_config.quant_method: unknown method \"hqq\" (known: fp8, "
            "mxfp4, compressed-tensors, modelopt, awq, gptq, auto-round, quark, torchao, "
            "bitsandbytes, fbgemm_fp8)");
  auto regex = BytesWith(R"({"quant_method": "compressed-tensors", "ignore": ["re:(["],
                             "config_groups": {}})");
  ASSERT_FALSE(regex.ok());
  EXPECT_EQ(regex.error().message(),
            "q.json: quantization_config.ignore[0]: not a valid regular expression: \"re:([\"");
  // Patterns whose backtracking can take exponential time are refused, not run.
  auto nested = BytesWith(R"({"quant_method": "compressed-tensors", "ignore": ["re:(a+)+b"],
                              "config_groups": {}})");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().message(),
            "q.json: quantization_config.ignore[0]: a regular expression kvbill will not run "
            "(nested or more than 6 repetitions, or a back-reference): \"re:(a+)+b\"");
}

// vLLM runs AWQ with 4-bit weights only ("Currently, only 4-bit weight
// quantization is supported for AWQ") and GPTQ with 2, 3, 4 or 8 bits; a
// group size is positive, or -1 for one group a column: an fp16 scale and a
// 4-bit zero a row. With -1, a 256 x 256 matrix is 32,768 + 256 x 20 / 8 =
// 33,408 bytes, gate and up 65,536 + 512 x 20 / 8 = 66,816, down 65,536 +
// 256 x 20 / 8 = 66,176: 4 x 33,408 + 2 x 66,816 + 66,176 + 1,025,536 =
// 1,358,976. Bits 3 and group size 0 were sized as given.
TEST(WeightFormatsTest, AwqAndGptqTakeTheBitsAndGroupSizesVllmRuns) {
  EXPECT_EQ(Total(R"({"quant_method": "awq", "bits": 4, "group_size": -1, "zero_point": true})"),
            1358976);
  auto error = [](const std::string& quant) {
    auto w = BytesWith(quant);
    return w.ok() ? std::string("(loaded)") : w.error().message();
  };
  EXPECT_EQ(error(R"({"quant_method": "awq", "bits": 3, "group_size": 128})"),
            "q.json: quantization_config.bits: must be 4 (vLLM runs AWQ with 4-bit weights "
            "only), got 3");
  EXPECT_EQ(error(R"({"quant_method": "awq", "w_bit": 8, "q_group_size": 128})"),
            "q.json: quantization_config.w_bit: must be 4 (vLLM runs AWQ with 4-bit weights "
            "only), got 8");
  EXPECT_EQ(error(R"({"quant_method": "awq", "bits": 4, "group_size": 0})"),
            "q.json: quantization_config.group_size: must be a positive integer, or -1 for one "
            "group a column, got 0");
  EXPECT_EQ(error(R"({"quant_method": "awq", "bits": 4, "group_size": -2})"),
            "q.json: quantization_config.group_size: must be an integer >= -1, got -2");
  EXPECT_EQ(error(R"({"quant_method": "gptq", "bits": 5, "group_size": 128})"),
            "q.json: quantization_config.bits: must be 2, 3, 4 or 8 (the GPTQ widths vLLM runs), "
            "got 5");
}

// The KV cache a quantization_config declares: compressed-tensors' 8-bit
// float kv_cache_scheme is an fp8 cache (vLLM's "auto" stores one); a
// scheme kvbill cannot size (4-bit int), or a string where the scheme's
// object belongs, used to leave the cache at the dtype without a word.
// ModelOpt writes the scheme's name, FP8 or NVFP4.
TEST(WeightFormatsTest, KvCacheSchemesKvbillCannotSizeAreErrors) {
  const std::string ct = R"({"quant_method": "compressed-tensors", "ignore": ["lm_head"],
      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8,
      "type": "float", "symmetric": true, "strategy": "channel"}}}, "kv_cache_scheme": )";
  auto kv = [](const std::string& quant) {
    auto m = ParseHfConfig(std::string(kToy) + ", \"quantization_config\": " + quant + "}",
                           "q.json", "q");
    return m.ok() ? m->checkpoint_kv_format : m.error().message();
  };
  EXPECT_EQ(kv(ct + R"({"num_bits": 8, "type": "float", "strategy": "tensor",
                        "dynamic": false, "symmetric": true}})"),
            "fp8-e4m3");
  EXPECT_EQ(kv(ct + "null}"), "");
  EXPECT_EQ(kv(ct + R"({"num_bits": 4, "type": "int", "strategy": "tensor"}})"),
            "q.json: quantization_config.kv_cache_scheme: must be num_bits 8, type \"float\" (the "
            "only KV cache scheme kvbill reads), got {\"num_bits\":4,\"strategy\":\"tensor\","
            "\"type\":\"int\"}");
  EXPECT_EQ(kv(ct + R"("fp8"})"),
            "q.json: quantization_config.kv_cache_scheme: must be an object, got \"fp8\"");
  EXPECT_EQ(kv(R"({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": "INT8"})"),
            "q.json: quantization_config.kv_cache_scheme: unknown KV cache scheme \"INT8\" "
            "(known: FP8, NVFP4, or an object)");
  EXPECT_EQ(kv(R"({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_scheme": 8})"),
            "q.json: quantization_config.kv_cache_scheme: must be an object, got 8");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
