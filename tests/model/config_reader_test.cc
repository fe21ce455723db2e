// The config reader's conventions on small inline configs: class defaults
// per model_type, null, per-layer lists, Python's JSON dialect, the layer
// inventory of each hybrid family, and errors that name the key and the
// model type.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/model/weight_bytes.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

ModelShape Inline(const std::string& json) {
  auto m = ParseHfConfig(json, "c.json", "c");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? *m : ModelShape{};
}

std::string ErrorOf(const std::string& json) {
  auto m = ParseHfConfig(json, "c.json", "c");
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : m.error().message();
}

// Gemma3TextConfig: vocab_size 262208 and tie_word_embeddings true when the
// text config omits them, as google/gemma-3-27b-it's does.
TEST(ConfigReaderTest, AbsentKeysTakeTheClassDefault) {
  const ModelShape m = Inline(
      R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text",
          "num_hidden_layers": 6, "hidden_size": 64, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 16, "sliding_window": 32}})");
  EXPECT_EQ(m.vocab_size, 262208);
  EXPECT_EQ(m.params.embedding, 262208 * 64);
  EXPECT_EQ(m.params.lm_head, 0);
  // sliding_window_pattern 6: layer 5 is global.
  EXPECT_EQ(m.layers[5].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.CountLayers(LayerKind::kSlidingWindow), 5);
}

// The sizing keys a class default supplied are listed, with the value
// used, so that kv, fit and simulate can say their numbers rest on them.
// LlamaConfig (configuration_llama.py): hidden_size=4096; head_dim is None,
// hidden / heads = 4096 / 4 = 1,024 a head, so 2 layers x 2 KV heads x
// 1,024 x 2 (K, V) x 2 bytes = 16,384 bytes a token in bf16.
TEST(ConfigReaderTest, SizingKeysTakenFromTheClassDefaultsAreListed) {
  const std::string rest =
      R"("num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
         "vocab_size": 100, "intermediate_size": 128})";
  const ModelShape m = Inline(R"({"model_type": "llama", )" + rest);
  ASSERT_EQ(m.defaulted_fields.size(), 1u);
  EXPECT_EQ(m.defaulted_fields[0].key, "hidden_size");
  EXPECT_EQ(m.defaulted_fields[0].value, "4096");
  EXPECT_EQ(m.defaults_source, "transformers src/transformers/models/llama/configuration_llama.py");
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 16384);
  // Given, nothing is listed.
  EXPECT_TRUE(
      Inline(R"({"model_type": "llama", "hidden_size": 64, )" + rest).defaulted_fields.empty());
}

// What a class derives rather than guesses is not listed: Llama without
// num_key_value_heads is multi-head attention, head_dim is hidden / heads,
// max_position_embeddings and tie_word_embeddings do not size the model,
// Qwen2's sliding_window (4096) is unread while use_sliding_window is
// false (its default), and DeepSeek-V2's null n_routed_experts is a dense
// model. Gemma 3's text config without vocab_size is listed with its
// prefix.
TEST(ConfigReaderTest, DerivedAndUnusedDefaultsAreNotListed) {
  EXPECT_TRUE(Inline(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
                         "num_attention_heads": 4, "vocab_size": 100,
                         "intermediate_size": 128})")
                  .defaulted_fields.empty());
  EXPECT_TRUE(Inline(R"({"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 64,
                         "num_attention_heads": 4, "num_key_value_heads": 2,
                         "vocab_size": 100, "intermediate_size": 128})")
                  .defaulted_fields.empty());
  const ModelShape gemma = Inline(
      R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text",
          "num_hidden_layers": 6, "hidden_size": 64, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 16, "sliding_window": 32,
          "intermediate_size": 128}})");
  ASSERT_EQ(gemma.defaulted_fields.size(), 1u);
  EXPECT_EQ(gemma.defaulted_fields[0].key, "text_config.vocab_size");
  EXPECT_EQ(gemma.defaulted_fields[0].value, "262208");
}

// Published configs that omit keys the rule does not read list none of
// them: Qwen3.5-397B's text config has no intermediate_size (Qwen3Next's
// class says 5632), but every layer's MLP is routed (mlp_only_layers [],
// decoder_sparse_step 1), so no dense MLP reads it. Nemotron-H-56B has no
// MoE layer in its pattern (no "E"), so n_routed_experts (8) is unread; it
// has no head_dim either, and its attention layers read the class's 128
// (= 8,192 / 64 here): listed.
TEST(ConfigReaderTest, PublishedConfigsListOnlyTheDefaultsTheirRuleReads) {
  const std::string dir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/";
  auto qwen = LoadModel(dir + "qwen3.5-397b-a17b.json");
  ASSERT_TRUE(qwen.ok()) << qwen.error().message();
  EXPECT_TRUE(qwen->defaulted_fields.empty());
  EXPECT_EQ(qwen->defaults_source, "");
  auto nemotron = LoadModel(dir + "nemotron-h-56b-base-8k.json");
  ASSERT_TRUE(nemotron.ok()) << nemotron.error().message();
  ASSERT_EQ(nemotron->defaulted_fields.size(), 1u);
  EXPECT_EQ(nemotron->defaulted_fields[0].key, "head_dim");
  EXPECT_EQ(nemotron->defaulted_fields[0].value, "128");
}

// Mamba-2 state under tensor parallelism: vLLM gives each GPU the B/C
// groups its heads read, so a group count the degree does not divide is
// raised to the degree before the convolution state is split
// (mamba2_state_shape: n_groups + extra_groups_for_head_shards). Worked by
// hand for Nemotron-H-56B's 54 'M' layers (256 heads of 64, d_state 256,
// 8 groups, d_conv 4; convolution state bf16, SSM state fp32):
//   TP 8 (8 | 8): conv 3 x (16,384 + 2 x 8 x 256) / 8 = 7,680 x 2 B = 15,360;
//     SSM 256 x 64 x 256 / 8 = 524,288 x 4 B = 2,097,152; x 54 = 114,075,648.
//   TP 16: 16 groups: conv 3 x (16,384 + 2 x 16 x 256) / 16 = 4,608 x 2 B =
//     9,216; SSM 262,144 x 4 B = 1,048,576; x 54 = 57,120,768 (the 8 groups
//     split 16 ways gave 57,037,824).
TEST(ConfigReaderTest, Mamba2GroupsTheDegreeDoesNotDivideAreReplicatedPerGpu) {
  const std::string dir = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/";
  auto m = LoadModel(dir + "nemotron-h-56b-base-8k.json");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(StateBytesPerSequence(*m, 8), 114'075'648);
  EXPECT_EQ(StateBytesPerSequence(*m, 16), 57'120'768);
}

// SmolLM3Config ties the embeddings by default: no lm_head counted.
TEST(ConfigReaderTest, SmolLm3TiesByDefault) {
  const ModelShape m = Inline(
      R"({"model_type": "smollm3", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "intermediate_size": 128})");
  EXPECT_EQ(m.params.lm_head, 0);
  // The same config as Llama (whose class does not tie) has one.
  const ModelShape llama = Inline(
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "intermediate_size": 128})");
  EXPECT_EQ(llama.params.lm_head, 100 * 64);
}

// null passes None to the class: MistralConfig's sliding_window default is
// 4096, but sliding_window: null means no window; num_key_value_heads: null
// means as many as the query heads.
TEST(ConfigReaderTest, NullMeansTheClassReadingOfNone) {
  const std::string base =
      R"({"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 100)";
  EXPECT_EQ(Inline(base + R"(, "num_key_value_heads": 2})").layers[0].kind,
            LayerKind::kSlidingWindow);
  EXPECT_EQ(Inline(base + R"(, "num_key_value_heads": 2, "sliding_window": null})").layers[0].kind,
            LayerKind::kFullAttention);
  EXPECT_EQ(Inline(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
                       "num_attention_heads": 4, "vocab_size": 100,
                       "num_key_value_heads": null})")
                .layers[0]
                .kv_heads,
            4);
}

// Python's json writes NaN and Infinity; model configs accept them outside
// strings (Nemotron-H's "time_step_limit": [0.0, Infinity]).
TEST(ConfigReaderTest, PythonNonFiniteLiteralsAreJsonForModelConfigs) {
  const ModelShape m = Inline(
      R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "vocab_size": 100, "time_step_limit": [0.0, Infinity], "x": -Infinity,
          "y": NaN, "note": "NaN and Infinity in a string stay text"})");
  EXPECT_EQ(m.layers.size(), 2u);
  // Where a count is needed they are an error that shows them as written.
  EXPECT_EQ(ErrorOf(R"({"num_hidden_layers": Infinity})"),
            "c.json: num_hidden_layers: must be a positive integer, got Infinity");
  // Positions of syntax errors are those of the original text.
  EXPECT_EQ(ErrorOf("{\"a\": [NaN, Infinity],\n \"b\": }"),
            "c.json:2:7: not valid JSON: syntax error while parsing value - unexpected '}'; "
            "expected '[', '{', or a literal");
  // A bare word that is not one of the three literals is still not JSON.
  EXPECT_EQ(ErrorOf(R"({"a": Nan})"),
            "c.json:1:7: not valid JSON: syntax error while parsing value - invalid literal; "
            "last read: '\"a\": N'");
}

// Documented bounds (docs/models.md#bounds) keep every product the shape is
// built from inside 64 bits: sizes beyond them are refused by name, and a
// config whose sizes multiply past 10^15 parameters or 2^26 KV elements per
// token is refused as a whole.
TEST(ConfigReaderTest, SizesPastTheBoundsAreRefused) {
  const std::string base =
      R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "num_key_value_heads": 2, "intermediate_size": 128)";
  EXPECT_EQ(ErrorOf(base + R"(, "vocab_size": 16777217})"),
            "c.json: vocab_size: must be at most 16777216 (no real model comes near; "
            "docs/models.md#bounds), got 16777217");
  EXPECT_EQ(ErrorOf(base + R"(, "vocab_size": 100, "head_dim": 1099511627776})"),
            "c.json: head_dim: must be at most 1048576 (no real model comes near; "
            "docs/models.md#bounds), got 1099511627776");
  // Token counts may be as large as --context allows (2^40).
  EXPECT_EQ(Inline(base + R"(, "vocab_size": 100, "max_position_embeddings": 1099511627776})")
                .max_position_embeddings,
            Tokens{1} << 40);
  // Each size within its bound, the product not: the MLPs alone are 2^10
  // layers x 3 x 2^20 hidden x 2^20 intermediate = 3.4 x 10^15 > 10^15.
  EXPECT_EQ(ErrorOf(R"({"num_hidden_layers": 1024, "hidden_size": 1048576,
                        "num_attention_heads": 1, "num_key_value_heads": 1, "head_dim": 1,
                        "intermediate_size": 1048576, "vocab_size": 1})")
                .substr(0, 39),
            "c.json: more than 10^15 parameters (at ");
  // 2^14 layers x 2^8 KV heads x (2^7 + 2^7) = 2^30 KV elements per token.
  EXPECT_EQ(ErrorOf(R"({"num_hidden_layers": 16384, "hidden_size": 64, "num_attention_heads": 256,
                        "num_key_value_heads": 256, "head_dim": 128, "intermediate_size": 1,
                        "vocab_size": 1})"),
            "c.json: 1073741824 KV elements per token, above 67108864: check "
            "num_hidden_layers, num_key_value_heads and head_dim (docs/models.md#bounds)");
}

// Hunyuan-A13B writes moe_topk, moe_intermediate_size and num_shared_expert
// as lists, one entry per layer.
TEST(ConfigReaderTest, PerLayerListsForPerLayerQuantities) {
  const std::string base =
      R"({"model_type": "hunyuan", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "intermediate_size": 32, "num_experts": 4, "use_mixed_mlp_moe": true)";
  const ModelShape m = Inline(base + R"(, "moe_topk": [1, 2], "moe_intermediate_size": [16, 8],
                         "num_shared_expert": [1, 0]})");
  // Layer 0: 4 experts x 3 x 64 x 16 = 12,288 (1 active: 3,072); a shared
  // MLP of 32 x 1: 3 x 64 x 32 = 6,144. Layer 1: 4 x 3 x 64 x 8 = 6,144
  // (2 active: 3,072), no shared MLP.
  EXPECT_EQ(m.params.routed_experts, 12288 + 6144);
  EXPECT_EQ(m.params.active_routed_experts, 3072 + 3072);
  EXPECT_EQ(m.params.shared_experts, 6144);
  EXPECT_EQ(ErrorOf(base + R"(, "moe_topk": [1, 2, 3]})"),
            "c.json: moe_topk: has 3 entries, num_hidden_layers is 2");
  EXPECT_EQ(ErrorOf(base + R"(, "moe_topk": [1, -2]})"),
            "c.json: moe_topk[1]: must be a positive integer, got -2");
}

// Nemotron-H: M Mamba-2, * attention, - MLP, E MoE; only * keeps KV.
TEST(ConfigReaderTest, NemotronHPatternGivesEachLayerItsKind) {
  const std::string base =
      R"({"model_type": "nemotron_h", "num_hidden_layers": 4, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
          "vocab_size": 100, "intermediate_size": 128, "mamba_num_heads": 8,
          "mamba_head_dim": 16, "n_groups": 2, "ssm_state_size": 8, "conv_kernel": 4,
          "mamba_ssm_cache_dtype": "bfloat16")";
  const ModelShape m = Inline(base + R"(, "hybrid_override_pattern": "M*-M"})");
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.layers[0].kind, LayerKind::kMambaState);
  EXPECT_EQ(m.layers[1].kind, LayerKind::kFullAttention);
  EXPECT_EQ(m.layers[2].kind, LayerKind::kNoOp);
  // One attention layer: 2 x 16 x 2 x 2 = 128 bytes a token.
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 128.0);
  // Mamba-2 state per layer: conv (4 - 1) x (8 x 16 + 2 x 2 x 8) = 480 and
  // SSM 8 x 16 x 8 = 1,024 elements, in bf16: 3,008 bytes; two layers 6,016.
  EXPECT_EQ(StateBytesPerSequence(m), 6016);
  EXPECT_EQ(ErrorOf(base + R"(, "hybrid_override_pattern": "M*+M"})"),
            "c.json: hybrid_override_pattern: character 2 is '+', which model_type "
            "\"nemotron_h\" does not define (known: M Mamba-2, * attention, - MLP, E MoE)");
}

// DeciLM block_configs: KV heads per layer from n_heads_in_group, no-op
// attention keeps nothing, FFN width from ffn_mult.
TEST(ConfigReaderTest, DeciLmBlocksGiveKvHeadsPerLayer) {
  const std::string head =
      R"({"model_type": "nemotron-nas", "num_hidden_layers": 3, "hidden_size": 768,
          "num_attention_heads": 8, "num_key_value_heads": null, "vocab_size": 100,
          "block_configs": [
            {"attention": {"n_heads_in_group": 8, "no_op": false}, "ffn": {"ffn_mult": 1.0}},
            {"attention": {"no_op": true}, "ffn": {"ffn_mult": 2.0}},)";
  const ModelShape m =
      Inline(head + R"({"attention": {"n_heads_in_group": 2}, "ffn": {"no_op": true}}]})");
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[0].kv_heads, 1);
  EXPECT_EQ(m.layers[1].kind, LayerKind::kNoOp);
  EXPECT_EQ(m.layers[2].kv_heads, 4);
  // head_dim 768 / 8 = 96: (1 + 4) x 96 x 2 x 2 = 1,920 bytes a token.
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 1920.0);
  // ffn_mult 1.0: int(2 x 768 / 3) = 512, a multiple of 256; 2.0: 1,024.
  // Gated: 3 x 768 x (512 + 1,024) = 3,538,944.
  EXPECT_EQ(m.params.dense_mlp, 3538944);
  EXPECT_EQ(ErrorOf(head + R"({"attention": {"n_heads_in_group": 3}, "ffn": {}}]})"),
            "c.json: block_configs[2].attention.n_heads_in_group: 3 does not divide "
            "num_attention_heads 8");
}

// MiMo-V2: sliding layers have their own heads and head dims; V differs from K.
TEST(ConfigReaderTest, MimoV2SlidingLayersHaveTheirOwnHeads) {
  const ModelShape m = Inline(
      R"({"model_type": "mimo_v2_flash", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 24,
          "v_head_dim": 16, "swa_num_key_value_heads": 2, "swa_head_dim": 32,
          "swa_v_head_dim": 8, "sliding_window": 64, "hybrid_layer_pattern": [0, 1],
          "vocab_size": 100})");
  EXPECT_EQ(m.layers[0].kv_heads, 1);
  EXPECT_EQ(m.layers[0].qk_head_dim, 24);
  EXPECT_EQ(m.layers[0].v_head_dim, 16);
  EXPECT_EQ(m.layers[1].kv_heads, 2);
  EXPECT_EQ(m.layers[1].window, 64);
  // Full: 1 x (24 + 16) x 2 = 80; sliding: 2 x (32 + 8) x 2 = 160.
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 240.0);
}

// Falcon-H1: attention and Mamba-2 side by side, two entries per layer.
TEST(ConfigReaderTest, FalconH1LayersKeepKvAndState) {
  const ModelShape m = Inline(
      R"({"model_type": "falcon_h1", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
          "vocab_size": 100, "intermediate_size": 128, "mamba_d_ssm": 64,
          "mamba_n_heads": 4, "mamba_d_state": 8, "mamba_n_groups": 1, "mamba_d_conv": 4})");
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.DecoderLayers(), 2);
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 2);
  EXPECT_EQ(m.CountLayers(LayerKind::kMambaState), 2);
  // KV 2 x (2 x 16 x 2 x 2) = 256; state per layer: conv 3 x (64 + 2 x 8) =
  // 240 + SSM 4 x 16 x 8 = 512 elements, bf16: 1,504 bytes; two 3,008.
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 256.0);
  EXPECT_EQ(StateBytesPerSequence(m), 3008);
  // Heads that do not tile mamba_d_ssm (4 x 24 = 96, not 64) are what
  // FalconH1Config.validate_architecture refuses; so does kvbill.
  EXPECT_EQ(ErrorOf(R"({"model_type": "falcon_h1", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
          "vocab_size": 100, "intermediate_size": 128, "mamba_d_ssm": 64, "mamba_d_head": 24,
          "mamba_n_heads": 4, "mamba_d_state": 8, "mamba_n_groups": 1, "mamba_d_conv": 4})"),
            "c.json: mamba_d_head: 24 x mamba_n_heads 4 is not the Mamba width mamba_d_ssm 64");
  // Without mamba_d_ssm the width is FalconH1Config's 1,024, which 4 x 24
  // does not tile either: the error says the width is the class default.
  EXPECT_EQ(ErrorOf(R"({"model_type": "falcon_h1", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
          "vocab_size": 100, "intermediate_size": 128, "mamba_d_head": 24,
          "mamba_n_heads": 4, "mamba_d_state": 8, "mamba_n_groups": 1, "mamba_d_conv": 4})"),
            "c.json: mamba_d_head: 24 x mamba_n_heads 4 is not the Mamba width mamba_d_ssm 1024 "
            "(absent from the config, read at the class default of transformers "
            "src/transformers/models/falcon_h1/configuration_falcon_h1.py: mamba_d_ssm 1024)");
}

// Granite 4 hybrid: layer_types mamba / attention; all Mamba-2 when absent.
TEST(ConfigReaderTest, GraniteHybridLayerTypes) {
  const std::string base =
      R"({"model_type": "granitemoehybrid", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "intermediate_size": 32, "num_local_experts": 0, "shared_intermediate_size": 128,
          "mamba_n_heads": 8, "mamba_d_head": 16, "mamba_d_state": 8, "mamba_n_groups": 1)";
  const ModelShape m = Inline(base + R"(, "layer_types": ["mamba", "attention"]})");
  EXPECT_EQ(m.layers[0].kind, LayerKind::kMambaState);
  EXPECT_EQ(m.layers[1].kind, LayerKind::kFullAttention);
  // head_dim 64 / 4 = 16: 2 x 16 x 2 x 2 = 128 bytes a token.
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 128.0);
  EXPECT_EQ(Inline(base + "}").CountLayers(LayerKind::kMambaState), 2);
}

// A dtype kvbill does not know is an error naming the key, never a guess
// (torch_dtype "banana" used to be accepted).
TEST(ConfigReaderTest, AnUnknownDtypeIsAnErrorNamingTheKey) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
                        "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
                        "torch_dtype": "banana"})"),
            "c.json: torch_dtype: unknown dtype \"banana\" (known: bfloat16, float16, float32)");
}

// Granite 4 hybrid reads num_local_experts 0 as no routed experts (its
// shared MLP alone, as transformers builds it); with experts, a token picks
// between 1 and all of them.
TEST(ConfigReaderTest, GraniteHybridExpertsPerTokenWithinTheExperts) {
  const std::string base =
      R"({"model_type": "granitemoehybrid", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "intermediate_size": 32, "shared_intermediate_size": 128,
          "mamba_n_heads": 8, "mamba_d_head": 16, "mamba_d_state": 8, "mamba_n_groups": 1)";
  // Shared MLP alone: gated, 3 x 64 x 128 = 24,576 a layer, 2 layers.
  const ModelShape dense = Inline(base + R"(, "num_local_experts": 0})");
  EXPECT_EQ(dense.params.routed_experts, 0);
  EXPECT_EQ(dense.params.dense_mlp, 2 * 3 * 64 * 128);
  EXPECT_EQ(ErrorOf(base + R"(, "num_local_experts": 4, "num_experts_per_tok": 5})"),
            "c.json: num_experts_per_tok: must be in [1, num_local_experts 4], got 5");
  EXPECT_EQ(ErrorOf(base + R"(, "num_local_experts": 4, "num_experts_per_tok": 0})"),
            "c.json: num_experts_per_tok: must be in [1, num_local_experts 4], got 0");
  EXPECT_EQ(ErrorOf(base + R"(, "num_local_experts": -1})"),
            "c.json: num_local_experts: must be a non-negative integer, got -1");
}

// Zero experts is no model (vLLM would build a MoE layer of none), and a
// token cannot pick more experts than there are: errors naming the key the
// config uses, in each family that reads routed experts through the
// shared rules (the real configs of tests/data/configs, one key changed).
// Without MoE keys a model stays dense.
TEST(ConfigReaderTest, ZeroExpertsOrMoreActiveThanThereAreAreRefusedInEveryFamily) {
  struct Case {
    const char* file;
    const char* experts_key;
    const char* top_k_key;
    int experts;  // as the file has it
  };
  const Case cases[] = {
      {"mixtral-8x7b-v0.1.json", "num_local_experts", "num_experts_per_tok", 8},  // generic
      {"qwen3-30b-a3b.json", "num_experts", "num_experts_per_tok", 128},          // generic
      {"deepseek-v3.json", "n_routed_experts", "num_experts_per_tok", 256},       // generic, MLA
      {"jamba-1.5-mini.json", "num_experts", "num_experts_per_tok", 16},          // Jamba
      {"nemotron-3-nano-30b-a3b.json", "n_routed_experts", "num_experts_per_tok",
       128},  // Nemotron-H
      {"qwen3-next-80b-a3b-thinking.json", "num_experts", "num_experts_per_tok", 512},  // DeltaNet
      {"minimax-m1.json", "num_local_experts", "num_experts_per_tok", 32},              // Lightning
      {"mimo-v2-flash.json", "n_routed_experts", "num_experts_per_tok", 256},           // MiMo-V2
      {"hunyuan-a13b-instruct.json", "num_experts", "moe_topk", 64},                    // Hunyuan
  };
  for (const Case& c : cases) {
    const std::string path = std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/" + c.file;
    SCOPED_TRACE(path);
    auto as_published = LoadModel(path);
    ASSERT_TRUE(as_published.ok()) << as_published.error().message();
    EXPECT_GT(as_published->params.routed_experts, 0);
    auto zero = LoadModel(path, {{c.experts_key, "0"}});
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(zero.error().message(),
              path + ": " + c.experts_key + " (overridden): must be a positive integer, got 0");
    const std::string one_more = std::to_string(c.experts + 1);
    auto too_many = LoadModel(path, {{c.top_k_key, one_more}});
    ASSERT_FALSE(too_many.ok());
    EXPECT_EQ(too_many.error().message(),
              path + ": " + c.top_k_key + " (overridden): must be at most " + c.experts_key + " " +
                  std::to_string(c.experts) + ", got " + one_more);
  }
  EXPECT_EQ(Catalog("llama-3.1-8b").params.routed_experts, 0);
  EXPECT_EQ(Catalog("qwen3-32b").params.routed_experts, 0);
}

// LFM2: conv layers hold (L_cache - 1) x hidden inputs, attention layers KV.
TEST(ConfigReaderTest, Lfm2ConvLayersKeepAConvState) {
  const ModelShape m = Inline(
      R"({"model_type": "lfm2", "num_hidden_layers": 3, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "block_ff_dim": 96, "conv_L_cache": 3, "full_attn_idxs": [1]})");
  EXPECT_EQ(m.CountLayers(LayerKind::kConvState), 2);
  // 2 conv layers x (3 - 1) x 64 x 2 bytes = 512.
  EXPECT_EQ(StateBytesPerSequence(m), 512);
  // block_auto_adjust_ff_dim: int(2 x 96 / 3) = 64, rounded up to 256.
  EXPECT_EQ(m.params.dense_mlp, 3 * 3 * 64 * 256);
  // The adjustment (and the rounding to block_multiple_of 256) come from
  // Lfm2Config's defaults, which resize the MLP: the shape says so (its
  // block_ffn_dim_multiplier 1.0 changes nothing and is not listed).
  std::vector<std::string> defaulted;
  for (const DefaultedField& d : m.defaulted_fields) defaulted.push_back(d.key + "=" + d.value);
  EXPECT_EQ(defaulted,
            (std::vector<std::string>{"block_multiple_of=256", "block_auto_adjust_ff_dim=true"}));
}

// DeepSeek Sparse Attention: the indexer key beside the latent, kept in
// fp8 with an fp32 scale per 128 whatever the KV format.
TEST(ConfigReaderTest, SparseIndexerKeyBesideTheLatent) {
  const ModelShape m = Inline(
      R"({"model_type": "deepseek_v32", "num_hidden_layers": 1, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 100,
          "kv_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16,
          "v_head_dim": 16, "q_lora_rank": 24, "index_head_dim": 200,
          "index_n_heads": 2, "index_topk": 64})");
  EXPECT_EQ(m.layers[0].kind, LayerKind::kSparseLatentAttention);
  // Latent 40 x 2 bytes = 80; indexer 200 bytes + 2 scales x 4 = 208.
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 288.0);
  // fp8 is FlashMLA's fp8_ds_mla layout: the 32 compressed elements in fp8
  // with one fp32 scale, the 8 rotary ones in bf16: 32 + 4 + 16 = 52; + 208.
  EXPECT_EQ(BytesPerToken(m, Fmt("fp8")), 260.0);
}

// What cannot be told is an error naming the key and the model type.
TEST(ConfigReaderTest, UnknownLayerKindsAreErrorsNamingKeyAndModelType) {
  EXPECT_EQ(
      ErrorOf(R"({"model_type": "my_hybrid", "num_hidden_layers": 2, "hidden_size": 64,
                        "num_attention_heads": 4, "vocab_size": 100, "mamba_d_state": 16})"),
      "c.json: mamba_d_state: kvbill cannot tell which layers keep KV for model_type "
      "\"my_hybrid\": it has no family rule, and the generic rule does not read this key (the "
      "model types with a rule: docs/models.md#families-which-kind-each-layer-is)");
  // ERNIE's and Step's expert key under a type with no rule: the key named,
  // no list of every family (it was 1,381 characters).
  EXPECT_EQ(ErrorOf(R"({"model_type": "my_moe", "num_hidden_layers": 2, "hidden_size": 64,
                        "num_attention_heads": 4, "vocab_size": 100, "moe_num_experts": 8})"),
            "c.json: moe_num_experts: kvbill cannot tell which layers keep KV for model_type "
            "\"my_moe\": it has no family rule, and the generic rule does not read this key (the "
            "model types with a rule: docs/models.md#families-which-kind-each-layer-is)");
  // Mistral's native params.json is not a Hugging Face config.json.
  EXPECT_EQ(ErrorOf(R"({"dim": 5120, "n_layers": 40, "head_dim": 128, "hidden_dim": 32768,
                        "n_heads": 32, "n_kv_heads": 8, "norm_eps": 1e-05,
                        "vocab_size": 131072})"),
            "c.json: n_layers: is a key of Mistral's native params.json (with dim and n_heads), "
            "not of a Hugging Face config.json: give the config.json of the model's Hugging "
            "Face repository instead");
  EXPECT_EQ(ErrorOf(R"({"model_type": "lfm2", "num_hidden_layers": 2, "hidden_size": 64,
                        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
                        "layer_types": ["conv", "banana"]})"),
            "c.json: layer_types[1]: unknown layer type \"banana\" for model_type \"lfm2\" "
            "(known: full_attention, sliding_attention, chunked_attention, linear_attention, "
            "mamba, conv)");
  // A vision tower of an unknown family is not silently left out.
  EXPECT_EQ(
      ErrorOf(R"({"model_type": "my_vlm", "vision_config": {"hidden_size": 8},
                        "text_config": {"model_type": "llama", "num_hidden_layers": 1,
                        "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100}})"),
      "c.json: vision_config: kvbill cannot count the vision tower of model_type "
      "\"my_vlm\" (known: gemma3, gemma4, llama4, qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe, "
      "qwen3_5, qwen3_5_moe, kimi_k25, kimi_k3, kimi_vl, minimax_m3_vl, muse_glimmer, step3_vl, "
      "glm4v, glm4v_moe, llava, llava_next, llava_onevision, mistral3 (pixtral), "
      "paligemma); "
      "--text-only, or a "
      "scenario's \"model\": {\"text_only\": true}, leaves the "
      "towers out");
  auto text_only = ParseHfConfig(
      R"({"model_type": "my_vlm", "vision_config": {"hidden_size": 8},
          "text_config": {"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 100}})",
      "c.json", "c", {}, /*text_only=*/true);
  EXPECT_TRUE(text_only.ok());
}

// Gemma 4 26B-A4B (vLLM gemma4.py): full-attention layers of global_head_dim
// 512 with num_global_key_value_heads 2 (keys also the values, both cached),
// sliding layers of 8 heads x 256 over 1,024 tokens; the vision tower
// (gemma4_vision) worked by hand from transformers' Gemma4VisionModel:
// patches 3 x 16^2 x 1,152 = 884,736; position tables 2 x 10,240 x 1,152 =
// 23,592,960; 27 blocks x (4 x 1,152 x 1,152 + 2 x 72 + 3 x 1,152 x 4,304 +
// 4 x 1,152) = 27 x 20,187,792 = 545,070,384; standardize 2 x 1,152; the
// projector 1,152 x 2,816 = 3,244,032: 572,794,416 (its card: "about 550M").
TEST(ConfigReaderTest, Gemma4FullLayersAreWiderAndKeepKeysAsValues) {
  const std::string path =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/gemma-4-26b-a4b.json";
  auto m = LoadModel(path);
  ASSERT_TRUE(m.ok()) << m.error().message();
  ASSERT_EQ(m->layers.size(), 30u);
  const LayerShape& full = m->layers[5];  // layer_types: every 6th is full_attention
  EXPECT_EQ(full.kind, LayerKind::kFullAttention);
  EXPECT_EQ(full.kv_heads, 2);
  EXPECT_EQ(full.qk_head_dim, 512);
  EXPECT_EQ(full.v_head_dim, 512);
  const LayerShape& sliding = m->layers[0];
  EXPECT_EQ(sliding.kind, LayerKind::kSlidingWindow);
  EXPECT_EQ(sliding.kv_heads, 8);
  EXPECT_EQ(sliding.qk_head_dim, 256);
  EXPECT_EQ(sliding.window, 1024);
  EXPECT_EQ(m->params.vision, 572794416);
  auto text_only = LoadModel(path, {}, /*text_only=*/true);
  ASSERT_TRUE(text_only.ok());
  EXPECT_EQ(text_only->params.vision, 0);
  EXPECT_EQ(text_only->params.Total(), m->params.Total() - 572794416);
}

// DeepSeek sparse attention with indexer_types (GLM-5.2): a "shared" layer
// reuses the previous indexer layer's top-k, so it keeps the latent alone
// (1,152 B/token in bf16) and no indexer key; NVIDIA's exports name the
// layers "deepseek_sparse_attention". A period (index_topk_freq) without the
// list, an unknown entry, or a first layer with nothing to share are refused.
TEST(ConfigReaderTest, SharedIndexerLayersKeepNoIndexerKey) {
  const std::string base = R"({"model_type": "glm_moe_dsa", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "kv_lora_rank": 512,
      "qk_rope_head_dim": 64, "qk_nope_head_dim": 32, "v_head_dim": 32, "q_lora_rank": 32,
      "index_topk": 16, "index_head_dim": 128, "index_n_heads": 4, )";
  auto m = ParseHfConfig(base + R"("indexer_types": ["full", "shared", "shared", "full"],
      "layer_types": ["deepseek_sparse_attention", "deepseek_sparse_attention",
                      "deepseek_sparse_attention", "deepseek_sparse_attention"]})",
                         "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->CountLayers(LayerKind::kSparseLatentAttention), 2);
  EXPECT_EQ(m->CountLayers(LayerKind::kLatentAttention), 2);
  // 4 x (512 + 64) x 2 B + 2 x (128 B of fp8 key + 4 B of scale).
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 4 * 1152 + 2 * 132);
  const std::pair<std::string, std::string> refused[] = {
      {R"("index_topk_freq": 4})", "c.json: index_topk_freq: is 4 without indexer_types"},
      {R"("indexer_types": ["full", "half", "full", "full"]})",
       "c.json: indexer_types[1]: must be \"full\" or \"shared\", got \"half\""},
      {R"("indexer_types": ["shared", "full", "full", "full"]})",
       "c.json: indexer_types[0]: is \"shared\", but no layer before it has an indexer"},
      {R"("indexer_types": ["full"]})", "c.json: indexer_types: must be a list of 4 strings"}};
  for (const auto& [tail, message] : refused) {
    auto r = ParseHfConfig(base + tail, "c.json", "c");
    ASSERT_FALSE(r.ok()) << tail;
    EXPECT_EQ(r.error().message().rfind(message, 0), 0u) << r.error().message();
  }
}

// Gemma 4's defaults and its keys-as-values heads (the E2B / E4B shapes:
// tests/model/kv_sharing_test.cc).
TEST(ConfigReaderTest, Gemma4DefaultsAndKeysAsValuesHeads) {
  const std::string base = R"({"model_type": "gemma4_text", "num_hidden_layers": 6,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16,
      "global_head_dim": 32, "vocab_size": 100, "intermediate_size": 128, )";
  // hidden_size_per_layer_input defaults to 256 (Gemma4TextConfig): a table
  // of 262,144 rows (vocab_size_per_layer_input's default) x 6 x 256.
  auto ple = ParseHfConfig(base + R"("num_kv_shared_layers": 0})", "c.json", "c");
  ASSERT_TRUE(ple.ok()) << ple.error().message();
  EXPECT_EQ(ple->params.embedding, 100 * 64 + 262144 * 6 * 256);
  // Keys-as-values heads that do not divide the query heads, as for any KV heads.
  auto odd = ParseHfConfig(base + R"("hidden_size_per_layer_input": 0, "attention_k_eq_v": true,
      "num_global_key_value_heads": 3})",
                           "c.json", "c");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().message(),
            "c.json: num_global_key_value_heads: 3 does not divide num_attention_heads 4");
  auto plain = ParseHfConfig(base + R"("hidden_size_per_layer_input": 0})", "c.json", "c");
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  // Defaults: every 6th layer full (the last forced full), window 512.
  EXPECT_EQ(plain->CountLayers(LayerKind::kFullAttention), 1);
  EXPECT_EQ(plain->layers[0].window, 512);
  EXPECT_EQ(plain->layers[5].qk_head_dim, 32);
}

// Families whose layers the generic rules would misread, refused naming the
// key that says so (small configs with each family's own keys; the generic
// reading gave Llama 3.2 Vision's 8 cross-attention layers per-token KV they
// do not keep, and vLLM no longer serves it, RecurrentGemma's RG-LRU blocks full attention;
// ERNIE 4.5 VL's experts would go uncounted).
TEST(ConfigReaderTest, FamiliesTheGenericRulesWouldMisreadAreRefused) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"model_type": "mllama", "text_config": {"model_type": "mllama_text_model",
          "num_hidden_layers": 8, "hidden_size": 64, "num_attention_heads": 4,
          "num_key_value_heads": 2, "vocab_size": 100, "cross_attention_layers": [3, 7]}})",
       "text_config.model_type: is \"mllama_text_model\": vLLM dropped Llama 3.2 Vision"},
      // Another model with cross-attention layers.
      {R"({"model_type": "vision_cross", "num_hidden_layers": 8, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "cross_attention_layers": [3, 7]})",
       "cross_attention_layers: kvbill cannot tell which layers keep KV for model_type "
       "\"vision_cross\""},
      {R"({"model_type": "recurrent_gemma", "num_hidden_layers": 6, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 1, "vocab_size": 100,
          "block_types": ["recurrent", "recurrent", "attention"]})",
       "block_types: kvbill cannot tell which layers keep KV for model_type \"recurrent_gemma\""},
      // Its local attention's window under a key of its own.
      {R"({"model_type": "recurrent_gemma", "num_hidden_layers": 6, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 1, "vocab_size": 100,
          "attention_window_size": 32})",
       "attention_window_size: kvbill cannot tell which layers keep KV"},
      // Ling's hybrids under another model type than Ring-linear 2.0's
      // (bailing_moe_linear, which has its rule): every layer but each
      // layer_group_size-th is linear attention, so a Llama reading of
      // Ring-mini-linear-2.0 gave 20 full layers (40,960 B/token) for 4
      // (8,192) and no state.
      {R"({"model_type": "bailing_hybrid", "num_hidden_layers": 20, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "layer_group_size": 5, "linear_silu": false})",
       "layer_group_size: kvbill cannot tell which layers keep KV for model_type "
       "\"bailing_hybrid\""},
      // PLaMo 3 (vLLM plamo3.py): windowed layers from window_size and
      // sliding_window_pattern, or a per-layer interleaved_sliding_window.
      {R"({"model_type": "plamo3", "num_hidden_layers": 8, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "sliding_window_pattern": 8})",
       "sliding_window_pattern: kvbill cannot tell which layers keep KV for model_type \"plamo3\""},
      {R"({"model_type": "plamo3", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "interleaved_sliding_window": [2048, null]})",
       "interleaved_sliding_window: kvbill cannot tell which layers keep KV"},
      // Another MosaicML-style config than DBRX's or MPT's: nested settings
      // whose meaning is not known.
      {R"({"model_type": "mosaic_other", "n_layers": 4, "d_model": 64, "n_heads": 8,
          "vocab_size": 100, "attn_config": {"kv_n_heads": 2}})",
       "attn_config: kvbill cannot tell which layers keep KV for model_type \"mosaic_other\""},
      // ERNIE 4.5 VL keeps text and vision experts under moe_num_experts:
      // read as Llama, its experts would go uncounted (ernie4_5_moe, the
      // text model, has its rule).
      {R"({"model_type": "ernie4_5_moe_vl", "num_hidden_layers": 4, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "moe_num_experts": [8, 8], "moe_k": 2, "moe_intermediate_size": [32, 16]})",
       "moe_num_experts: kvbill cannot tell which layers keep KV for model_type "
       "\"ernie4_5_moe_vl\""},
      // StepFun's heads and KV groups for the sliding layers under an
      // unknown model type: read as Llama, the sliding layers had the full
      // layers' heads (Step-3.7's layout with 16 groups gave 184,320 B/token
      // where the step3p5 rule gives 319,488).
      {R"({"model_type": "step_next", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
          "vocab_size": 100, "sliding_window": 8,
          "layer_types": ["full_attention", "sliding_attention"],
          "attention_other_setting": {"attention_type": "sliding_attention",
              "num_attention_heads": 6, "num_attention_groups": 4, "head_dim": 16}})",
       "attention_other_setting: kvbill cannot tell which layers keep KV for model_type "
       "\"step_next\""},
      // An index list of the sliding layers: read as Llama, every layer slid.
      {R"({"model_type": "swl_model", "num_hidden_layers": 4, "hidden_size": 64,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "sliding_window": 8, "sliding_window_layers": [0, 2]})",
       "sliding_window_layers: kvbill cannot tell which layers keep KV for model_type "
       "\"swl_model\""},
  };
  for (const auto& [json, message] : cases) {
    SCOPED_TRACE(message);
    const std::string error = ErrorOf(json);
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

// DBRX and MPT nest their KV heads in attn_config.kv_n_heads (vLLM reads it
// there for both) and name their sizes n_layers / n_heads / d_model; DBRX's
// experts are in ffn_config. The keys of transformers' DbrxConfig / MPT's
// config with dbrx-instruct's and mpt-7b's published sizes:
// - DBRX: 40 x 8 KV heads x 128 (6144 / 48) x 4 = 163,840 B/token. Weights:
//   Wqkv 6144 x (6144 + 2 x 1024) = 50,331,648, out_proj 37,748,736, 16 GLU
//   experts 16 x 3 x 6144 x 10,752 = 3,170,893,824, router 6144 x 16 =
//   98,304, two LayerNorms without bias 12,288: 3,259,084,800 a layer, x 40
//   = 130,363,392,000; wte and the untied lm_head 2 x 100,352 x 6144 =
//   1,233,125,376; norm_f 6,144: 131,596,523,520 (the card's 132B). Active:
//   4 of 16 experts, 792,723,456 instead of 3,170,893,824 a layer:
//   131,596,523,520 - 40 x 2,378,170,368 = 36,469,708,800 (the card's 36B).
// - MPT-7B (MHA, ALiBi, no_bias, tied wte): 32 x 32 x 128 x 4 = 524,288
//   B/token. Wqkv 4096 x 12,288 + out 4096 x 4096 + up and down 2 x 4096 x
//   16,384 (expansion_ratio 4, ungated) + two LayerNorms 8,192 = 201,334,784
//   a layer, x 32 = 6,442,713,088; wte 50,432 x 4096 = 206,569,472; norm_f
//   4,096: 6,649,286,656 (the card's 6.7B).
TEST(ConfigReaderTest, DbrxAndMptNestTheirSettings) {
  const ModelShape dbrx = Inline(R"({"model_type": "dbrx", "vocab_size": 100352, "d_model": 6144,
      "n_layers": 40, "n_heads": 48, "max_seq_len": 32768, "tie_word_embeddings": false,
      "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000},
      "ffn_config": {"ffn_act_fn": {"name": "silu"}, "ffn_hidden_size": 10752,
                     "moe_num_experts": 16, "moe_top_k": 4}})");
  EXPECT_EQ(BytesPerToken(dbrx, Fmt("bf16")), 163840.0);
  EXPECT_EQ(dbrx.params.Total(), 131596523520LL);
  EXPECT_EQ(dbrx.params.Active(), 36469708800LL);
  EXPECT_EQ(dbrx.max_model_len, 32768);
  const ModelShape mpt = Inline(R"({"model_type": "mpt", "d_model": 4096, "n_heads": 32,
      "n_layers": 32, "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432,
      "no_bias": true, "attn_config": {"alibi": true, "attn_type": "multihead_attention"}})");
  EXPECT_EQ(BytesPerToken(mpt, Fmt("bf16")), 524288.0);
  EXPECT_EQ(mpt.params.Total(), 6649286656LL);
  EXPECT_EQ(mpt.params.lm_head, 0);
  // Errors name the keys as the config spells them, not the keys they are
  // read as.
  EXPECT_EQ(ErrorOf(R"({"model_type": "dbrx", "vocab_size": 100352, "d_model": 6144,
      "n_layers": 40, "n_heads": 48, "attn_config": {"kv_n_heads": 0},
      "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}})"),
            "c.json: attn_config.kv_n_heads: must be a positive integer, got 0");
  EXPECT_EQ(ErrorOf(R"({"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": -1,
      "vocab_size": 50432})"),
            "c.json: n_layers: must be a positive integer, got -1");
}

// ChatGLM: KV heads are multi_query_group_num when multi_query_attention,
// the vocabulary padded_vocab_size, layers num_layers, head dim kv_channels;
// without multi_query_attention every head keeps its own K and V.
TEST(ConfigReaderTest, ChatGlmKeepsMultiQueryGroups) {
  const std::string shape = R"("num_layers": 4, "hidden_size": 64, "num_attention_heads": 8,
      "kv_channels": 8, "padded_vocab_size": 100, "ffn_hidden_size": 96)";
  const ModelShape grouped = Inline(R"({"model_type": "chatglm", "multi_query_attention": true,
      "multi_query_group_num": 2, )" +
                                    shape + "}");
  // 4 layers x 2 groups x 8 x (K + V) x 2 bytes = 256.
  EXPECT_EQ(BytesPerToken(grouped, Fmt("bf16")), 256.0);
  EXPECT_EQ(grouped.vocab_size, 100);
  const ModelShape all =
      Inline(R"({"model_type": "chatglm", "multi_query_group_num": 2, )" + shape + "}");
  EXPECT_EQ(BytesPerToken(all, Fmt("bf16")), 4.0 * 8 * 8 * 2 * 2);
}

// Phi-3-vision's CLIP tower is described by img_processor, not a
// vision_config (vLLM phi3v.py builds a fixed CLIP ViT-L/14-336 up to
// layer_idx, default -2). On Phi-3.5-vision's shapes (text: Phi-3-mini,
// hidden 3,072, 32 layers, MLP 8,192, vocab 32,064, untied), worked by hand:
//   text: 32 x (4 x 3,072^2 + 3 x 3,072 x 8,192 + 2 x 3,072) + 3,072 +
//     2 x 32,064 x 3,072 = 3,821,079,552.
//   tower: CLIP class 1,024 + patches 3 x 14^2 x 1,024 + positions 577 x
//     1,024 + pre-norm 2,048 + 23 x 12,596,224 (no post-norm: not every
//     layer is built) = 290,909,184; separators 2 x 4 x 1,024 = 8,192;
//     projection 4,096 x 3,072 + 3,072 + 3,072^2 + 3,072 = 22,026,240:
//     312,943,616. With the checkpoint's last layer and post-norm
//     (12,598,272) that is 4,146,621,440 in all, the "4.15B" of its card.
TEST(ConfigReaderTest, Phi3VisionCountsItsClipTower) {
  const std::string json =
      R"({"architectures": ["Phi3VForCausalLM"], "model_type": "phi3_v",
          "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
          "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064,
          "max_position_embeddings": 131072, "tie_word_embeddings": false,
          "embd_layer": {"embedding_cls": "image", "hd_transform_order": "sub_glb",
            "projection_cls": "mlp", "use_hd_transform": true, "with_learnable_separator": true},
          "img_processor": {"image_dim_out": 1024, "model_name": "openai/clip-vit-large-patch14-336",
            "name": "clip_vision_model", "num_img_tokens": 144}})";
  auto m = ParseHfConfig(json, "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.vision, 312943616LL);
  EXPECT_EQ(m->params.Total(), 3821079552LL + 312943616LL);
  EXPECT_FALSE(m->generic_rule);
  // Every layer built (layer_idx -1): one more block and the post-norm.
  auto all = ParseHfConfig(json, "c.json", "c",
                           {{"img_processor", R"({"image_dim_out": 1024, "layer_idx": -1})"}});
  ASSERT_TRUE(all.ok()) << all.error().message();
  EXPECT_EQ(all->params.vision, 312943616LL + 12596224 + 2048);
  auto text = ParseHfConfig(json, "c.json", "c", {}, /*text_only=*/true);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(text->params.vision, 0);
  // 32 layers x 32 KV heads x 96 x (K + V) x 2 bytes = 393,216.
  EXPECT_EQ(BytesPerToken(*text, Fmt("bf16")), 393216.0);
  EXPECT_EQ(ErrorOf(R"({"model_type": "phi3_v", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 100,
          "img_processor": {"image_dim_out": 1024}})"),
            "c.json: embd_layer: missing");
  // Another model type with an img_processor is refused, not left out.
  EXPECT_EQ(
      ErrorOf(R"({"model_type": "my_v", "num_hidden_layers": 2, "hidden_size": 64,
          "num_attention_heads": 4, "vocab_size": 100, "img_processor": {"image_dim_out": 1024}})"),
      "c.json: img_processor: kvbill cannot count the image tower of model_type \"my_v\" "
      "(--text-only, or a scenario's \"model\": {\"text_only\": true}, leaves the towers out)");
}

// --text-only leaves the towers out of the counts and the weights.
// Qwen3VLVisionConfig's deepstack_visual_indexes default is [8, 16, 24]: a
// Qwen3-VL config without the key still has three DeepStack mergers, each a
// LayerNorm over the 4 x 1,152 = 4,608 merged features (9,216), a 4,608 x
// 4,608 layer with bias (21,238,272) and a 4,608 x 4,096 one with bias
// (18,878,464): 40,125,952, 120,377,856 for three (Qwen3-VL-8B). Qwen3.5's
// vision config has no such key and builds none.
TEST(ConfigReaderTest, Qwen3VlDeepStackMergersDefaultToThree) {
  const std::string path =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/qwen3-vl-8b-instruct.json";
  std::ifstream in(path);
  nlohmann::json config = nlohmann::json::parse(in);
  auto with = ParseHfConfig(config.dump(), "c.json", "c");
  ASSERT_TRUE(with.ok()) << with.error().message();
  config["vision_config"].erase("deepstack_visual_indexes");
  auto absent = ParseHfConfig(config.dump(), "c.json", "c");
  ASSERT_TRUE(absent.ok()) << absent.error().message();
  EXPECT_EQ(absent->params.vision, with->params.vision);
  config["vision_config"]["deepstack_visual_indexes"] = nlohmann::json::array();
  auto none = ParseHfConfig(config.dump(), "c.json", "c");
  ASSERT_TRUE(none.ok()) << none.error().message();
  EXPECT_EQ(with->params.vision - none->params.vision, 120'377'856);
}

// Kimi-Linear's config class is the checkpoint's own configuration_kimi.py
// (transformers has no kimi_linear): its vocab_size default is 163,840. A
// copy of Kimi-K3's text config without it once failed "vocab_size: missing".
TEST(ConfigReaderTest, KimiLinearTakesItsRemoteClassDefaults) {
  std::ifstream in(std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/kimi-k3.json");
  nlohmann::json text = nlohmann::json::parse(in)["text_config"];
  text.erase("vocab_size");
  auto m = ParseHfConfig(text.dump(), "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->vocab_size, 163'840);
  ASSERT_EQ(m->defaulted_fields.size(), 1u);
  EXPECT_EQ(m->defaulted_fields[0].key, "vocab_size");
  EXPECT_NE(m->defaults_source.find("configuration_kimi.py"), std::string::npos);
}

TEST(ConfigReaderTest, TextOnlyLeavesTowersOut) {
  const std::string file =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/medgemma-27b-it.json";
  auto with = LoadModel(file);
  auto without = LoadModel(file, {}, /*text_only=*/true);
  ASSERT_TRUE(with.ok());
  ASSERT_TRUE(without.ok());
  EXPECT_GT(with->params.vision, 0);
  EXPECT_EQ(without->params.vision, 0);
  EXPECT_EQ(with->params.Total() - without->params.Total(), with->params.vision);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// A required key written as null (None to transformers, which applies no
// class default then) is said to be null, not "missing".
TEST(ConfigReaderTest, ARequiredKeyWrittenAsNullIsSaidToBeNull) {
  auto m = ParseHfConfig(R"({"model_type": "qwen3", "num_hidden_layers": null, "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 100,
      "intermediate_size": 128})",
                         "null.json", "null");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message(),
            "null.json: num_hidden_layers: is null (None), where a value is needed");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// StepFun's Step 3 names: num_attention_groups for the KV heads, and
// share_expert_dim for the one shared expert's width (vLLM step3_text.py).
// On Qwen3-30B-A3B's config (48 layers, hidden 2,048, 4 KV heads of 128):
// the KV heads read the same under either name, 48 x 4 x 128 x 2 x 2 =
// 98,304 B/token; a shared expert of 1,024 adds 48 x 3 x 2,048 x 1,024 =
// 301,989,888 parameters.
TEST(ConfigReaderTest, StepNamesTheKvHeadsAndTheSharedExpert) {
  const std::string path =
      std::string(KVBILL_SOURCE_DIR) + "/tests/data/configs/qwen3-30b-a3b.json";
  auto base = LoadModel(path);
  ASSERT_TRUE(base.ok()) << base.error().message();
  EXPECT_EQ(BytesPerToken(*base, Fmt("bf16")), 98304.0);
  auto groups = LoadModel(path, {{"num_key_value_heads", "null"}, {"num_attention_groups", "4"}});
  ASSERT_TRUE(groups.ok()) << groups.error().message();
  EXPECT_EQ(BytesPerToken(*groups, Fmt("bf16")), 98304.0);
  auto shared = LoadModel(path, {{"share_expert_dim", "1024"}});
  ASSERT_TRUE(shared.ok()) << shared.error().message();
  EXPECT_EQ(shared->params.shared_experts - base->params.shared_experts, 301989888);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// A ModelOpt checkpoint that keeps its quantization in hf_quant_config.json
// beside config.json (vLLM reads it there) is read as if config.json held
// it under quantization_config; without the file the weights are the dtype.
TEST(ConfigReaderTest, HfQuantConfigBesideTheConfigIsRead) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "modelopt_sibling";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(KVBILL_SOURCE_DIR) / "scenarios/models/qwen3-8b.json",
                dir / "config.json");
  const std::string quant =
      R"({"producer": {"name": "modelopt", "version": "0.29.0"},
          "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                           "exclude_modules": ["lm_head"]}})";
  auto plain = LoadModel((dir / "config.json").string());
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  // A checkpoint's config.json is named by its folder, not "config"; in the
  // Hugging Face cache's layout (models--org--name/snapshots/<commit>/) by
  // the repository id, not the commit.
  EXPECT_EQ(plain->name, "modelopt_sibling");
  const fs::path cached = fs::path(::testing::TempDir()) / "hub" / "models--Qwen--Qwen3-8B" /
                          "snapshots" / "0123456789abcdef0123456789abcdef01234567";
  fs::create_directories(cached);
  fs::copy_file(fs::path(KVBILL_SOURCE_DIR) / "scenarios/models/qwen3-8b.json",
                cached / "config.json", fs::copy_options::overwrite_existing);
  auto from_cache = LoadModel((cached / "config.json").string());
  ASSERT_TRUE(from_cache.ok()) << from_cache.error().message();
  EXPECT_EQ(from_cache->name, "Qwen/Qwen3-8B");
  fs::remove_all(fs::path(::testing::TempDir()) / "hub");
  std::ofstream(dir / "hf_quant_config.json") << quant;
  auto sibling = LoadModel((dir / "config.json").string());
  ASSERT_TRUE(sibling.ok()) << sibling.error().message();
  // The same quantization written into config.json itself.
  auto inlined = LoadModel(std::string(KVBILL_SOURCE_DIR) + "/scenarios/models/qwen3-8b.json",
                           {{"quantization_config", quant}});
  ASSERT_TRUE(inlined.ok()) << inlined.error().message();
  const auto bf16 = ComputeWeightBytes(*plain, "auto");
  const auto fp8 = ComputeWeightBytes(*sibling, "auto");
  const auto want = ComputeWeightBytes(*inlined, "auto");
  ASSERT_TRUE(bf16.ok() && fp8.ok() && want.ok());
  EXPECT_EQ(fp8->total, want->total);
  // FP8 blocks' linear layers, bf16 embeddings and lm_head: well under the
  // bf16 checkpoint's 16.4 GB.
  EXPECT_LT(static_cast<double>(fp8->total), 0.6 * static_cast<double>(bf16->total));
  EXPECT_EQ(sibling->checkpoint_kv_format, "fp8-e4m3");
  EXPECT_EQ(plain->checkpoint_kv_format, "");
  fs::remove_all(dir);
}

// What is wrong in hf_quant_config.json is named there, not as config.json's
// quantization_config: ModelOpt's file without a producer names no method.
TEST(ConfigReaderTest, HfQuantConfigErrorsNameThatFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "modelopt_no_producer";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::path(KVBILL_SOURCE_DIR) / "scenarios/models/qwen3-8b.json",
                dir / "config.json");
  std::ofstream(dir / "hf_quant_config.json")
      << R"({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}})";
  auto m = LoadModel((dir / "config.json").string());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().exit_status(), 2);
  EXPECT_EQ(m.error().message(),
            (dir / "hf_quant_config.json").string() +
                ": quant_method: missing (known: fp8, mxfp4, compressed-tensors, modelopt, awq, "
                "gptq, auto-round, quark, torchao, bitsandbytes, fbgemm_fp8)");
  std::ofstream(dir / "hf_quant_config.json") << "[1, 2]";
  auto list = LoadModel((dir / "config.json").string());
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().message(),
            (dir / "hf_quant_config.json").string() + ": must be an object");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Step 3 (vLLM step3_text.py / step3_vl.py). The text config is vLLM's
// Step3TextConfig defaults, which the Step 3 model card confirms (61 layers
// of which 5 dense, hidden 7,168, a 2,048 low-rank query, 64 heads of 256,
// 48 experts top 3 and one shared, 65,536 context; "316B" in the LLM, "38B"
// active, "321B" with the vision model); the vision width is EVA-CLIP-5B's
// (1,792 wide, MLP 15,360). Worked by hand:
//   KV: one KV head a layer whatever the query heads: 61 x 1 x 256 x 2 (K, V)
//     x 2 B = 62,464 B a token.
//   attention a layer: qkv_proj 7,168 x (2,048 + 256 + 256) = 18,350,080,
//     inter_norm 2,048, wq 2,048 x 64 x 256 = 33,554,432, o_proj 16,384 x
//     7,168 = 117,440,512: 169,347,072; x 61 = 10,330,171,392.
//   MoE layers 4..59 (56): 48 x 3 x 7,168 x 5,120 = 5,284,823,040 routed,
//     3 x 7,168 x 5,120 = 110,100,480 shared, router 7,168 x 48 = 344,064.
//   dense layers 0..3 and 60: 3 x 7,168 x 18,432 = 396,361,728 each.
//   embedding and lm_head 128,815 x 7,168 each; norms 2 x 7,168 x 61 + 7,168.
//   Sum: 316,294,538,240 (the card's 316B); active with the lm_head and
//   without the embedding: 37,917,982,720 (38B).
//   Vision: class 1,792 + patch conv 3 x 14^2 x 1,792 + 1,792 + positions
//     (52^2 + 1) x 1,792; 63 blocks of 4 x 1,792^2 + 4 x 1,792 + 2 x 1,792 x
//     15,360 + 15,360 + 1,792 + 4 x 1,792 = 67,926,784; downsamplers 1,792 x
//     4,096 x 4 + 4,096 and 4,096 x 8,192 x 9 + 8,192; projector 8,192 x
//     7,168 + 7,168: 4,675,381,760; all 320,969,920,000 (the card's 321B).
//   Replicated at any TP (bf16): qkv_proj 61 x 18,350,080, inter_norm 61 x
//     2,048, routers 56 x 344,064, norms 874,496 + 7,168 parameters:
//     1,139,629,056 parameters, 2,279,258,112 B.
constexpr const char* kStep3Text = R"({
  "architectures": ["Step3TextForCausalLM"], "model_type": "step3_text",
  "hidden_size": 7168, "intermediate_size": 18432, "num_attention_heads": 64,
  "num_attention_groups": 1, "num_hidden_layers": 61, "max_seq_len": 65536,
  "vocab_size": 128815, "rms_norm_eps": 1e-05, "moe_intermediate_size": 5120,
  "moe_num_experts": 48, "moe_top_k": 3, "rope_theta": 500000, "rope_scaling": null,
  "max_position_embedding": 65536, "share_expert_dim": 5120, "share_q_dim": 2048,
  "head_dim": 256, "norm_expert_weight": false, "torch_dtype": "bfloat16",
  "moe_layers_enum": "4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59"})";

TEST(ConfigReaderTest, Step3QueriesThroughARankOverOneKvHead) {
  auto m = ParseHfConfig(kStep3Text, "step3.json", "step3");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 62464.0);
  EXPECT_EQ(m->max_model_len, 65536);
  EXPECT_EQ(m->moe.layers, 56);
  EXPECT_EQ(m->moe.experts, 48);
  EXPECT_EQ(m->moe.experts_per_token, 3);
  EXPECT_EQ(m->params.Total(), 316294538240LL);
  EXPECT_EQ(m->params.attention, 10330171392LL);
  EXPECT_EQ(m->params.shared_experts, 56LL * 110100480);
  EXPECT_EQ(m->params.dense_mlp, 5LL * 396361728);
  ASSERT_EQ(m->layers.size(), 61u);
  EXPECT_EQ(m->layers[0].kv_heads, 1);
  EXPECT_EQ(m->layers[0].query_heads, 64);
  EXPECT_EQ(m->layers[0].query_rank, 2048);
  auto w = ComputeWeightBytes(*m, "auto");
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->replicated, 2279258112LL);
  // Left out, moe_layers_enum means every layer but the first (vLLM).
  auto all = ParseHfConfig(kStep3Text, "step3.json", "step3", {{"moe_layers_enum", "null"}});
  ASSERT_TRUE(all.ok()) << all.error().message();
  EXPECT_EQ(all->moe.layers, 60);
  auto listed = ParseHfConfig(kStep3Text, "step3.json", "step3", {{"moe_layers_enum", "[1, 2]"}});
  ASSERT_TRUE(listed.ok()) << listed.error().message();
  EXPECT_EQ(listed->moe.layers, 2);
}

TEST(ConfigReaderTest, Step3VisionTowerAndWhatItRefuses) {
  nlohmann::json vl = {{"architectures", {"Step3VLForConditionalGeneration"}},
                       {"model_type", "step3_vl"},
                       {"text_config", nlohmann::json::parse(kStep3Text)},
                       {"vision_config",
                        {{"hidden_size", 1792},
                         {"intermediate_size", 15360},
                         {"output_hidden_size", 4096},
                         {"num_hidden_layers", 63},
                         {"num_attention_heads", 16},
                         {"num_channels", 3},
                         {"image_size", 728},
                         {"patch_size", 14},
                         {"hidden_act", "quick_gelu"}}},
                       {"understand_projector_stride", 2},
                       {"projector_bias", true}};
  auto m = ParseHfConfig(vl.dump(), "step3-vl.json", "step3-vl");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.vision, 4675381760LL);
  EXPECT_EQ(m->params.Total(), 320969920000LL);
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 62464.0);

  auto error = [](const std::string& key, const std::string& value) {
    auto r = ParseHfConfig(kStep3Text, "step3.json", "step3", {{key, value}});
    return r.ok() ? std::string("(loaded)") : r.error().message();
  };
  EXPECT_NE(error("num_attention_groups", "8")
                .find("num_attention_groups (overridden): is 8: Step 3 attention has one KV head"),
            std::string::npos)
      << error("num_attention_groups", "8");
  EXPECT_NE(error("moe_layers_enum", "\"4,x\"")
                .find("moe_layers_enum (overridden): must be a comma-separated string of layer "
                      "indices, got \"4,x\" (item \"x\")"),
            std::string::npos)
      << error("moe_layers_enum", "\"4,x\"");
  EXPECT_NE(error("moe_layers_enum", "\"4,61\"").find("names layer 61, outside 0 to 60"),
            std::string::npos)
      << error("moe_layers_enum", "\"4,61\"");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// ERNIE 4.5 (vLLM ernie45_moe.py / ernie45.py, transformers ernie4_5_moe):
// the 21B-A3B as its model card gives it (28 layers, 20 / 4 heads, 64
// experts top 6, 2 shared, 131,072 context) over transformers' defaults,
// which the class says are 21B-A3B's. Worked by hand:
//   KV: 28 x 4 x (2,560 / 20 = 128) x 2 x 2 B = 57,344 B a token.
//   attention a layer 2,560 x 2,560 x 2 + 2 x 2,560 x 512 = 15,728,640; x 28.
//   layer 0 dense: 3 x 2,560 x 12,288 = 94,371,840; layers 1..27 MoE:
//   64 x 3 x 2,560 x 1,536 routed, a shared MLP of 2 x 1,536 (23,592,960),
//   router 2,560 x 64 + a correction bias of 64.
//   norms 2 x 2,560 x 28 + 2,560; the embedding 103,424 x 2,560, tied.
//   Sum: 21,825,437,888, what Hugging Face's safetensors metadata gives for
//   baidu/ERNIE-4.5-21B-A3B-Thinking (same architecture): BF16
//   21,821,012,480 + F32 4,425,408.
// The 300B-A47B (54 layers, 64 / 8 heads, hidden 8,192, experts of 3,584 from
// layer 3, top 8, no shared experts, untied): 221,184 B a token and
// 299,484,163,264 parameters, the tensor-by-tensor sum of a pre-release
// 300B checkpoint: attention 54 x 150,994,944, dense 3 x 3 x 8,192 x 28,672,
// experts 51 x 64 x 88,080,384, routers and biases 51 x (524,288 + 64),
// norms 54 x 16,384 + 8,192, embedding and head 2 x 103,424 x 8,192.
constexpr const char* kErnie21b = R"({
  "architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe",
  "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 28,
  "num_attention_heads": 20, "num_key_value_heads": 4, "vocab_size": 103424,
  "max_position_embeddings": 131072, "moe_num_experts": 64, "moe_k": 6,
  "moe_intermediate_size": 1536, "moe_num_shared_experts": 2,
  "moe_layer_start_index": 1, "moe_layer_interval": 1, "tie_word_embeddings": true,
  "use_bias": false, "rope_theta": 500000, "torch_dtype": "bfloat16"})";

TEST(ConfigReaderTest, Ernie45MoeLayersSharedExpertsAndBiases) {
  auto m = ParseHfConfig(kErnie21b, "ernie.json", "ernie");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 57344.0);
  EXPECT_EQ(m->moe.layers, 27);
  EXPECT_EQ(m->moe.experts_per_token, 6);
  EXPECT_EQ(m->params.shared_experts, 27LL * 23592960);
  EXPECT_EQ(m->params.dense_mlp, 94371840LL);
  EXPECT_EQ(m->params.Total(), 21825437888LL);
  EXPECT_EQ(m->max_model_len, 131072);

  // The same from transformers' defaults alone: a config that leaves
  // every ERNIE key out reads the same model.
  auto bare = ParseHfConfig(R"({"model_type": "ernie4_5_moe"})", "ernie.json", "ernie");
  ASSERT_TRUE(bare.ok()) << bare.error().message();
  EXPECT_EQ(bare->params.Total(), 21825437888LL);

  // use_bias biases q, k and v (2,560 + 2 x 512 a layer), never the output
  // projection, and the dense MLP (2 x 12,288 + 2,560), not the shared one.
  auto biased = ParseHfConfig(kErnie21b, "ernie.json", "ernie", {{"use_bias", "true"}});
  ASSERT_TRUE(biased.ok()) << biased.error().message();
  EXPECT_EQ(biased->params.attention - m->params.attention, 28LL * 3584);
  EXPECT_EQ(biased->params.dense_mlp - m->params.dense_mlp, 27136LL);
  EXPECT_EQ(biased->params.shared_experts, m->params.shared_experts);

  auto big = ParseHfConfig(kErnie21b, "ernie.json", "ernie",
                           {{"hidden_size", "8192"},
                            {"intermediate_size", "28672"},
                            {"num_hidden_layers", "54"},
                            {"num_attention_heads", "64"},
                            {"num_key_value_heads", "8"},
                            {"moe_intermediate_size", "3584"},
                            {"moe_k", "8"},
                            {"moe_num_shared_experts", "0"},
                            {"moe_layer_start_index", "3"},
                            {"tie_word_embeddings", "false"}});
  ASSERT_TRUE(big.ok()) << big.error().message();
  EXPECT_EQ(BytesPerToken(*big, Fmt("bf16")), 221184.0);
  EXPECT_EQ(big->moe.layers, 51);
  EXPECT_EQ(big->params.Total(), 299484163264LL);

  // An end index and an interval: layers 1..9 with (i + 1) % 2 == 0.
  auto every_other = ParseHfConfig(kErnie21b, "ernie.json", "ernie",
                                   {{"moe_layer_end_index", "9"}, {"moe_layer_interval", "2"}});
  ASSERT_TRUE(every_other.ok()) << every_other.error().message();
  EXPECT_EQ(every_other->moe.layers, 5);  // 1, 3, 5, 7, 9

  auto list = ParseHfConfig(kErnie21b, "ernie.json", "ernie", {{"moe_num_experts", "[64, 64]"}});
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message().find("moe_num_experts (overridden): is a list (text and vision "
                                        "experts, ERNIE 4.5 VL's layout)"),
            std::string::npos)
      << list.error().message();
}

// ERNIE-4.5-0.3B's config as released (remote-code form): Llama layers,
// head_dim 128 over 16 heads of a 1,024 hidden, 2 KV heads, tied.
// 18 x (1,024 x 2,048 x 2 + 2 x 1,024 x 256 = 4,718,592 attention +
// 3 x 1,024 x 3,072 = 9,437,184 MLP + 2,048 norms) + 103,424 x 1,024 +
// 1,024 = 360,748,032; KV 18 x 2 x 128 x 2 x 2 = 18,432 B a token.
TEST(ConfigReaderTest, Ernie45DenseTakesItsHeadDim) {
  auto m = ParseHfConfig(R"({"architectures": ["Ernie4_5_ForCausalLM"], "model_type": "ernie4_5",
      "hidden_size": 1024, "intermediate_size": 3072, "max_position_embeddings": 131072,
      "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128,
      "num_hidden_layers": 18, "rms_norm_eps": 1e-05, "vocab_size": 103424,
      "rope_theta": 500000, "use_bias": false, "tie_word_embeddings": true,
      "torch_dtype": "bfloat16"})",
                         "ernie03.json", "ernie03");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.Total(), 360748032LL);
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 18432.0);
  EXPECT_FALSE(m->generic_rule);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// llava-hf/llava-1.5-7b-hf's config as released (a partial Llama
// text_config over LlamaConfig's defaults; CLIP ViT-L/14-336). vLLM builds
// the CLIP tower up to vision_feature_layer -2, 23 of its 24 layers, and
// without its post-norm. Worked by hand:
//   text: 32 x (4 x 4,096^2 + 3 x 4,096 x 11,008 + 2 x 4,096) + 4,096 +
//     2 x 32,064 x 4,096 = 6,738,939,904.
//   tower: class 1,024 + patches 3 x 14^2 x 1,024 (no bias) + positions
//     (24^2 + 1) x 1,024 + pre-norm 2,048 + 23 x (4 x 1,024^2 + 4 x 1,024 +
//     2 x 1,024 x 4,096 + 4,096 + 1,024 + 4 x 1,024 = 12,596,224) =
//     290,909,184; projector 1,024 x 4,096 + 4,096 + 4,096^2 + 4,096 =
//     20,979,712: 311,888,896 (the checkpoint's 24th layer and post-norm,
//     12,598,272 more, are not loaded).
constexpr const char* kLlava15 = R"({
  "architectures": ["LlavaForConditionalGeneration"], "ignore_index": -100,
  "image_token_index": 32000, "model_type": "llava", "pad_token_id": 32001,
  "projector_hidden_act": "gelu",
  "text_config": {"_name_or_path": "lmsys/vicuna-7b-v1.5", "architectures": ["LlamaForCausalLM"],
    "max_position_embeddings": 4096, "model_type": "llama", "rms_norm_eps": 1e-05,
    "torch_dtype": "float16", "vocab_size": 32064},
  "tie_word_embeddings": false, "torch_dtype": "float16", "transformers_version": "4.36.0.dev0",
  "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
    "model_type": "clip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 24,
    "patch_size": 14, "projection_dim": 768, "vocab_size": 32000},
  "vision_feature_layer": -2, "vision_feature_select_strategy": "default", "vocab_size": 32064})";

TEST(ConfigReaderTest, LlavaTowersAsVllmBuildsThem) {
  auto m = ParseHfConfig(kLlava15, "llava.json", "llava");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.vision, 311888896LL);
  EXPECT_EQ(m->params.Total(), 6738939904LL + 311888896LL);
  // LLaVA-NeXT adds an image_newline of the text width; two feature layers
  // double the projector's input (1,024 x 4,096 more); -1 builds all 24
  // layers (one more block).
  nlohmann::json next = nlohmann::json::parse(kLlava15);
  next["model_type"] = "llava_next";
  auto n = ParseHfConfig(next.dump(), "llava.json", "llava");
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(n->params.vision, 311888896LL + 4096);
  next["vision_feature_layer"] = {-2, -5};
  auto two = ParseHfConfig(next.dump(), "llava.json", "llava");
  ASSERT_TRUE(two.ok()) << two.error().message();
  EXPECT_EQ(two->params.vision, 311888896LL + 4096 + 1024LL * 4096);
  next["vision_feature_layer"] = -1;
  auto all = ParseHfConfig(next.dump(), "llava.json", "llava");
  ASSERT_TRUE(all.ok()) << all.error().message();
  EXPECT_EQ(all->params.vision, 311888896LL + 4096 + 12596224LL);
  next["vision_feature_layer"] = -25;
  auto bad = ParseHfConfig(next.dump(), "llava.json", "llava");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(
      bad.error().message().find("vision_feature_layer: names layer -25 of a tower of 24 layers"),
      std::string::npos)
      << bad.error().message();

  // LLaVA-OneVision over SigLIP (1,152 wide, MLP 4,304, 26 layers, patch 14
  // at 384, no pooling head) into a 3,584-wide text model, all layers
  // (feature layer -1): patches 3 x 14^2 x 1,152 + 1,152 = 678,528,
  // positions 27^2 x 1,152 = 839,808, 26 x (4 x 1,152^2 + 4 x 1,152 + 2 x
  // 1,152 x 4,304 + 4,304 + 1,152 + 4 x 1,152 = 15,239,504) = 396,227,104,
  // projector 1,152 x 3,584 + 3,584 + 3,584^2 + 3,584 = 16,980,992,
  // image_newline 3,584: 414,730,016.
  auto ov = ParseHfConfig(R"({"model_type": "llava_onevision", "vision_feature_layer": -1,
      "text_config": {"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 2,
        "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
        "vocab_size": 152064},
      "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152,
        "intermediate_size": 4304, "num_hidden_layers": 26, "patch_size": 14,
        "image_size": 384, "vision_use_head": false}})",
                          "ov.json", "ov");
  ASSERT_TRUE(ov.ok()) << ov.error().message();
  EXPECT_EQ(ov->params.vision, 414730016LL);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

std::int64_t TotalOf(const std::string& json) {
  auto m = ParseHfConfig(json, "c.json", "c");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return m.ok() ? m->params.Total() : -1;
}

// Families whose MLP is ungated (up and down only, vLLM nemotron.py,
// apertus.py, arcee.py, jais2.py): read as Llama they were counted with a
// gate projection they do not have (Nemotron-Mini-4B +22%, Apertus-8B +35%).
// Worked by hand on their published shapes:
//   Nemotron-Mini-4B (H 3,072, 24 / 8 heads of 128, MLP 9,216, 32 layers,
//   vocab 256,000, untied, LayerNorm1P with bias): attention 2 x 3,072^2 +
//   2 x 3,072 x 1,024 = 25,165,824, MLP 2 x 3,072 x 9,216 = 56,623,104,
//   norms 2 x 2 x 3,072; x 32 = 2,617,638,912; final norm 6,144; embedding
//   and head 2 x 256,000 x 3,072: 4,190,509,056 (card: 4.19B).
//   Apertus-8B (H 4,096, 32 / 8 heads of 128, MLP 21,504, 32 layers, vocab
//   131,072, untied, q and k norms of 128): (41,943,040 + 256 + 2 x 4,096 x
//   21,504 + 8,192) x 32 + 4,096 + 2 x 131,072 x 4,096 = 8,053,338,112.
TEST(ConfigReaderTest, UngatedMlpFamilies) {
  EXPECT_EQ(TotalOf(R"({"model_type": "nemotron", "hidden_act": "relu2", "hidden_size": 3072,
      "head_dim": 128, "intermediate_size": 9216, "num_attention_heads": 24,
      "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 256000,
      "partial_rotary_factor": 0.5, "tie_word_embeddings": false, "max_position_embeddings": 4096})"),
            4190509056LL);
  EXPECT_EQ(TotalOf(R"({"model_type": "apertus", "hidden_act": "xielu", "hidden_size": 4096,
      "intermediate_size": 21504, "num_attention_heads": 32, "num_hidden_layers": 32,
      "num_key_value_heads": 8, "vocab_size": 131072, "qk_norm": true, "mlp_bias": false,
      "tie_word_embeddings": false, "max_position_embeddings": 65536})"),
            8053338112LL);
  // A model type without a rule whose MLP is ReLU-squared is read ungated
  // too (3 x 8 x 16 + 3 x 16 layer bias-free: 2 x 8 x 32 MLP a layer).
  const std::string small = R"({"model_type": "my_relu2", "hidden_act": "relu2",
      "hidden_size": 8, "intermediate_size": 32, "num_attention_heads": 2,
      "num_key_value_heads": 2, "num_hidden_layers": 1, "vocab_size": 10,
      "tie_word_embeddings": true})";
  auto m = ParseHfConfig(small, "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.dense_mlp, 2 * 8 * 32);
}

// Ling (vLLM bailing_moe.py): shared experts of num_shared_experts x
// moe_intermediate_size. Ling-lite-1.5 (H 2,048, 16 / 4 heads of 128, 64
// experts of 1,408 top 6, 2 shared, 28 layers, vocab 126,464, untied):
// attention 2,048 x 2,048 x 2 + 2 x 2,048 x 512 = 10,485,760; experts 64 x
// 3 x 2,048 x 1,408 = 553,648,128; shared 3 x 2,048 x 2,816 = 17,301,504;
// router 131,072; norms 4,096; x 28 = 16,542,973,440; + 2,048 + 2 x 126,464
// x 2,048 = 16,801,974,272 (card: 16.8B).
TEST(ConfigReaderTest, LingCountsItsSharedExperts) {
  const std::string ling = R"({"model_type": "bailing_moe", "first_k_dense_replace": 0,
      "head_dim": 128, "hidden_size": 2048, "intermediate_size": 5632,
      "moe_intermediate_size": 1408, "num_attention_heads": 16, "num_experts": 64,
      "num_experts_per_tok": 6, "num_hidden_layers": 28, "num_key_value_heads": 4,
      "num_shared_experts": 2, "tie_word_embeddings": false, "use_bias": false,
      "use_qkv_bias": false, "vocab_size": 126464, "max_position_embeddings": 32768})";
  auto m = ParseHfConfig(ling, "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.shared_experts, 28LL * 17301504);
  EXPECT_EQ(m->params.Total(), 16801974272LL);
  // use_qkv_bias biases q, k and v (2,048 + 2 x 512 a layer), not dense.
  auto biased = ParseHfConfig(ling, "c.json", "c", {{"use_qkv_bias", "true"}});
  ASSERT_TRUE(biased.ok()) << biased.error().message();
  EXPECT_EQ(biased->params.attention - m->params.attention, 28LL * 3072);
}

// LFM2-8B-A1B (vLLM lfm2_moe.py): LFM2's short convolutions and attention,
// dense MLPs of intermediate_size on the first num_dense_layers layers and
// MoE after. Worked by hand: 6 attention layers (2 x 2,048^2 + 2 x 2,048 x
// 512 + q and k norms of 64 = 10,485,888), 18 convolution layers (in 3 x
// 2,048^2, kernel 2,048 x 3, out 2,048^2 = 16,783,360), 24 x 2 norms of
// 2,048, 2 dense layers of 3 x 2,048 x 7,168, 22 MoE layers of 32 x 3 x
// 2,048 x 1,792 + router 2,048 x 32 + expert bias 32, the tied 65,536 x
// 2,048 embedding and the final norm: 8,339,930,560 (card: 8.3B).
TEST(ConfigReaderTest, Lfm2MoeKeepsItsExperts) {
  nlohmann::json cfg = {{"model_type", "lfm2_moe"},  {"hidden_size", 2048},
                        {"intermediate_size", 7168}, {"moe_intermediate_size", 1792},
                        {"num_hidden_layers", 24},   {"num_attention_heads", 32},
                        {"num_key_value_heads", 8},  {"num_experts", 32},
                        {"num_experts_per_tok", 4},  {"num_dense_layers", 2},
                        {"use_expert_bias", true},   {"conv_L_cache", 3},
                        {"conv_bias", false},        {"vocab_size", 65536},
                        {"tie_embedding", true},     {"max_position_embeddings", 128000}};
  nlohmann::json types = nlohmann::json::array();
  for (int i = 0; i < 24; ++i) {
    const bool attn = i == 2 || i == 6 || i == 10 || i == 14 || i == 18 || i == 21;
    types.push_back(attn ? "full_attention" : "conv");
  }
  cfg["layer_types"] = types;
  auto m = ParseHfConfig(cfg.dump(), "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->moe.layers, 22);
  EXPECT_EQ(m->params.Total(), 8339930560LL);
  // 6 attention layers x 8 x 64 x 2 x 2 B.
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 12288.0);
  // Another model type with LFM2's conv_L_cache is read by the LFM2 rule,
  // which builds no experts: refused rather than counted dense.
  cfg["model_type"] = "lfm2_moe_next";
  auto other = ParseHfConfig(cfg.dump(), "c.json", "c");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message().find("num_experts: kvbill reads model_type \"lfm2_moe_next\" "
                                         "by the LFM2 rule, which has no experts"),
            std::string::npos)
      << other.error().message();
}

// Keys that change what a layer keeps, which no rule reads: refused.
// Qwen3-Omni's thinker_config is read (its towers then need --text-only).
TEST(ConfigReaderTest, RecentFamiliesRefusedOrNested) {
  // Ouro has a rule (tests/model/reused_weights_test.cc); another model
  // type looping over its layers is refused.
  EXPECT_NE(ErrorOf(R"({"model_type": "ouro_next", "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 100, "total_ut_steps": 4})")
                .find("total_ut_steps: kvbill cannot tell which layers keep KV"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"model_type": "longcat_flash_ngram", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "zero_expert_num": 256})")
                .find("zero_expert_num: kvbill cannot tell which layers keep KV"),
            std::string::npos);
  // LongCat-Flash has a rule, whose attention is MLA.
  EXPECT_NE(ErrorOf(R"({"model_type": "longcat_flash", "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 100, "zero_expert_num": 256})")
                .find("kv_lora_rank: missing: LongCat-Flash's attention is MLA"),
            std::string::npos);
  // Both of the thinker's towers are named (the vision one first), not the
  // first alone.
  const std::string omni = R"({"model_type": "qwen3_omni_moe", "thinker_config": {
      "model_type": "qwen3_omni_moe_thinker",
      "vision_config": {"depth": 27, "hidden_size": 1152},
      "audio_config": {"d_model": 1280},
      "text_config": {"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "vocab_size": 100, "intermediate_size": 32}}})";
  EXPECT_NE(ErrorOf(omni).find("audio_config: kvbill cannot count the audio tower"),
            std::string::npos)
      << ErrorOf(omni);
  EXPECT_LT(ErrorOf(omni).find("vision_config: kvbill cannot count the vision tower"),
            ErrorOf(omni).find("audio_config: kvbill cannot count the audio tower"))
      << ErrorOf(omni);
  auto text = ParseHfConfig(omni, "c.json", "c", {}, /*text_only=*/true);
  ASSERT_TRUE(text.ok()) << text.error().message();
  // 2 layers x 2 KV heads x 16 x (K + V) x 2 bytes.
  EXPECT_EQ(BytesPerToken(*text, Fmt("bf16")), 256.0);
  // MiniCPM4's sparse_config (which vLLM does not read) no longer refuses it.
  EXPECT_EQ(TotalOf(R"({"model_type": "minicpm", "hidden_size": 64, "num_hidden_layers": 1,
      "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 10,
      "intermediate_size": 32, "tie_word_embeddings": true,
      "sparse_config": {"kernel_size": 32}})"),
            // attention 4 x 64^2, MLP 3 x 64 x 32, norms 2 x 64 + 64, embedding 640
            4 * 64 * 64 + 3 * 64 * 32 + 3 * 64 + 640);
  // EXAONE 4's sliding_window_pattern string: L slides, G is full.
  auto exaone = ParseHfConfig(R"({"model_type": "exaone4", "hidden_size": 64,
      "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "vocab_size": 10, "sliding_window": 32,
      "sliding_window_pattern": "LLLG"})",
                              "c.json", "c");
  ASSERT_TRUE(exaone.ok()) << exaone.error().message();
  EXPECT_EQ(exaone->CountLayers(LayerKind::kSlidingWindow), 6);
  EXPECT_EQ(exaone->CountLayers(LayerKind::kFullAttention), 2);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Kimi-VL-A3B (vLLM kimi_vl.py, moonvit.py): K2.5's MoonViT with a learned
// 64 x 64 position table. Worked by hand (hidden 1,152, MLP 4,304, 27
// layers, patch 14, into a 2,048-wide text model): patches 3 x 14^2 x
// 1,152 + 1,152 = 678,528; positions 64 x 64 x 1,152 = 4,718,592; 27 x
// 15,239,504 = 411,466,608; final norm 2,304; projector over 2 x 2 merged
// patches (4,608): LayerNorm 2,304 + 4,608^2 + 4,608 + 4,608 x 2,048 +
// 2,048 = 30,679,808: 447,545,840 (with its 15.96B text, the card's 16.4B).
TEST(ConfigReaderTest, KimiVlTowerLearnsItsPositions) {
  nlohmann::json cfg = {{"model_type", "kimi_vl"},
                        {"vision_config",
                         {{"model_type", "moonvit"},
                          {"hidden_size", 1152},
                          {"init_pos_emb_height", 64},
                          {"init_pos_emb_width", 64},
                          {"intermediate_size", 4304},
                          {"merge_kernel_size", {2, 2}},
                          {"num_attention_heads", 16},
                          {"num_hidden_layers", 27},
                          {"patch_size", 14}}},
                        {"text_config",
                         {{"model_type", "llama"},
                          {"hidden_size", 2048},
                          {"num_hidden_layers", 1},
                          {"num_attention_heads", 16},
                          {"vocab_size", 100}}}};
  auto m = ParseHfConfig(cfg.dump(), "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.vision, 447545840LL);
}

// GLM-4.5V (vLLM glm4_1v.py): hidden 1,536, depth 24, out 4,096, merger
// MLP 10,944, patch 14 over 2 frames, 2 x 2 merge, 336-px positions.
// Worked by hand: patch Conv3d 3 x 2 x 14^2 x 1,536 + 1,536 = 1,807,872;
// positions (336 / 14)^2 x 1,536 = 884,736; a block 2 x 1,536 + 4 x
// 1,536^2 + 3 x 1,536 x 4,096 = 28,314,624, x 24 = 679,550,976; downsample
// 1,536 x 4,096 x 4 + 4,096 and two norms 3,072 = 25,172,992; merger
// 4,096^2 + 2 x 4,096 + 3 x 4,096 x 10,944 = 151,265,280: 858,681,856.
TEST(ConfigReaderTest, Glm4vTowerCountsDownsampleAndMerger) {
  nlohmann::json cfg = {{"model_type", "glm4v_moe"},
                        {"vision_config",
                         {{"model_type", "glm4v_moe"},
                          {"hidden_size", 1536},
                          {"depth", 24},
                          {"out_hidden_size", 4096},
                          {"intermediate_size", 10944},
                          {"patch_size", 14},
                          {"temporal_patch_size", 2},
                          {"spatial_merge_size", 2},
                          {"image_size", 336},
                          {"num_heads", 12}}},
                        {"text_config",
                         {{"model_type", "llama"},
                          {"hidden_size", 4096},
                          {"num_hidden_layers", 1},
                          {"num_attention_heads", 32},
                          {"vocab_size", 100}}}};
  auto m = ParseHfConfig(cfg.dump(), "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.vision, 858681856LL);
  // The vision config's own defaults (transformers Glm4vVisionConfig)
  // are GLM-4.1V's: intermediate 13,696, so the merger differs.
  cfg["vision_config"].erase("intermediate_size");
  auto d = ParseHfConfig(cfg.dump(), "c.json", "c");
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->params.vision, 858681856LL + 3LL * 4096 * (13696 - 10944));
}

// GLM-4-0414 and GLM-4.1V's text model (transformers glm4, glm4v): four
// norms a layer and attention_bias on q, k and v but never on o. Worked by
// hand (hidden 64, 2 layers, 4 heads, 2 KV heads of 16, MLP 128, vocab
// 100, untied): embedding and head 2 x 6,400 = 12,800; a layer q 4,096 +
// 64, k and v 2 x (2,048 + 32), o 4,096 = 12,416, MLP 3 x 64 x 128 =
// 24,576, norms 4 x 64 = 256: 37,248, x 2 = 74,496; final norm 64: 87,360.
// GLM-4.5V's text model (glm4v_moe_text) is GLM-4.5's: its MoE router
// keeps the score-correction bias as glm4_moe does.
TEST(ConfigReaderTest, Glm4TextModelsHaveFourNormsAndNoOutputBias) {
  for (const char* type : {"glm4", "glm4v_text"}) {
    nlohmann::json cfg = {{"model_type", type},
                          {"hidden_size", 64},
                          {"num_hidden_layers", 2},
                          {"num_attention_heads", 4},
                          {"num_key_value_heads", 2},
                          {"head_dim", 16},
                          {"intermediate_size", 128},
                          {"vocab_size", 100},
                          {"attention_bias", true},
                          {"tie_word_embeddings", false},
                          {"max_position_embeddings", 4096}};
    auto m = ParseHfConfig(cfg.dump(), "c.json", "c");
    ASSERT_TRUE(m.ok()) << type << ": " << m.error().message();
    EXPECT_EQ(m->params.Total(), 87360LL) << type;
    EXPECT_FALSE(m->generic_rule) << type;
  }
  nlohmann::json moe = {{"model_type", "glm4_moe"},    {"hidden_size", 64},
                        {"num_hidden_layers", 2},      {"num_attention_heads", 4},
                        {"num_key_value_heads", 2},    {"head_dim", 16},
                        {"intermediate_size", 128},    {"moe_intermediate_size", 32},
                        {"n_routed_experts", 8},       {"n_shared_experts", 1},
                        {"num_experts_per_tok", 2},    {"first_k_dense_replace", 1},
                        {"vocab_size", 100},           {"attention_bias", true},
                        {"use_qk_norm", false},        {"max_position_embeddings", 4096},
                        {"tie_word_embeddings", false}};
  auto glm45 = ParseHfConfig(moe.dump(), "c.json", "c");
  moe["model_type"] = "glm4v_moe_text";
  auto glm45v = ParseHfConfig(moe.dump(), "c.json", "c");
  ASSERT_TRUE(glm45.ok()) << glm45.error().message();
  ASSERT_TRUE(glm45v.ok()) << glm45v.error().message();
  EXPECT_EQ(glm45v->params.Total(), glm45->params.Total());
  EXPECT_FALSE(glm45v->generic_rule);
}

// LongCat-Flash (meituan-longcat/LongCat-Flash-Chat config.json; vLLM
// longcat_flash.py). Worked by hand: an MLA attention q_a 1,536 x 6,144 =
// 9,437,184 + norm 1,536 + q_b 64 x 192 x 1,536 = 18,874,368 + kv_a 576 x
// 6,144 = 3,538,944 + norm 512 + kv_b 64 x 256 x 512 = 8,388,608 + o 6,144
// x 8,192 = 50,331,648: 90,572,800, two a layer 181,145,600; two MLPs 2 x 3
// x 6,144 x 12,288 = 452,984,832; 512 experts of 3 x 6,144 x 2,048 =
// 37,748,736: 19,327,352,832; router (512 + 256) x 6,144 + bias 768 =
// 4,719,360; four norms 24,576. A layer 19,966,227,200, x 28 =
// 559,054,361,600; embedding and head 2 x 131,072 x 6,144 = 1,610,612,736;
// final norm 6,144: 560,664,980,480 (the card's 560B). A token reaches 12 x
// 512 / 768 = 8 routed experts: active 28 x (19,966,227,200 - (512 - 8) x
// 37,748,736) + 1,610,618,880 = 27,954,818,048 (the card's "about 27B",
// which leaves the input embedding out: 27.15B). KV: 56 latents of 512 + 64
// at 2 bytes = 64,512 a token.
TEST(ConfigReaderTest, LongcatFlashHasTwoBlocksALayerAndZeroComputeExperts) {
  nlohmann::json cfg = {{"architectures", {"LongcatFlashForCausalLM"}},
                        {"model_type", "longcat_flash"},
                        {"attention_method", "mla"},
                        {"hidden_size", 6144},
                        {"ffn_hidden_size", 12288},
                        {"expert_ffn_hidden_size", 2048},
                        {"moe_topk", 12},
                        {"n_routed_experts", 512},
                        {"zero_expert_num", 256},
                        {"zero_expert_type", "identity"},
                        {"num_layers", 28},
                        {"num_attention_heads", 64},
                        {"kv_lora_rank", 512},
                        {"q_lora_rank", 1536},
                        {"qk_rope_head_dim", 64},
                        {"qk_nope_head_dim", 128},
                        {"v_head_dim", 128},
                        {"vocab_size", 131072},
                        {"max_position_embeddings", 131072},
                        {"routed_scaling_factor", 6.0},
                        {"mla_scale_q_lora", true},
                        {"mla_scale_kv_lora", true},
                        {"rms_norm_eps", 1e-5},
                        {"rope_theta", 10000000.0}};
  auto m = ParseHfConfig(cfg.dump(), "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_FALSE(m->generic_rule);
  EXPECT_EQ(m->params.Total(), 560664980480LL);
  EXPECT_EQ(m->params.Active(), 27954818048LL);
  EXPECT_EQ(m->DecoderLayers(), 28);
  EXPECT_EQ(m->CountLayers(LayerKind::kLatentAttention), 56);
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 64512.0);
  EXPECT_EQ(m->blocks_per_layer, 2);
  EXPECT_EQ(m->dense_mlps, 56);
  EXPECT_EQ(m->moe.experts, 512);
  EXPECT_EQ(m->moe.zero_experts, 256);
  EXPECT_EQ(m->moe.routed_top_k, 12);
  EXPECT_EQ(m->moe.experts_per_token, 8);

  // A top-k beyond every slot is an error naming the key.
  cfg["moe_topk"] = 769;
  auto bad = ParseHfConfig(cfg.dump(), "c.json", "c");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("moe_topk"), std::string::npos) << bad.error().message();
  // LongCat-Flash-Lite's n-gram embeddings have no rule: refused on the
  // key that tells of them, not read as a Llama.
  cfg["moe_topk"] = 12;
  cfg["model_type"] = "longcat_flash_ngram";
  auto lite = ParseHfConfig(cfg.dump(), "c.json", "c");
  ASSERT_FALSE(lite.ok());
  EXPECT_NE(lite.error().message().find("zero_expert_num"), std::string::npos)
      << lite.error().message();
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Trinity-Mini (vLLM afmoe.py): q and k norms, a sigmoid gate of heads x
// head_dim on the attention output, four norms a layer, 2 dense layers then
// MoE with one shared expert and an expert bias; every 4th layer full, the
// others sliding over 2,048 tokens. Worked by hand (H 2,048, 32 / 4 heads of
// 128, MLP 6,144, 128 experts of 1,024 top 8, vocab 200,192, untied):
// attention 3 x 2,048 x 4,096 (q, o, gate) + 2 x 2,048 x 512 + 256 =
// 27,263,232 and norms 8,192, x 32; dense 2 x 3 x 2,048 x 6,144; MoE 30 x
// (128 x 3 x 2,048 x 1,024 + 3 x 2,048 x 1,024 + 2,048 x 128 + 128); final
// norm; embedding and head 2 x 200,192 x 2,048: 26,123,974,400 (card: 26B).
TEST(ConfigReaderTest, TrinityGatesItsAttentionAndSharesAnExpert) {
  const std::string trinity = R"({"model_type": "afmoe", "vocab_size": 200192,
      "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 1024,
      "num_hidden_layers": 32, "num_dense_layers": 2, "num_attention_heads": 32,
      "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
      "num_experts_per_tok": 8, "num_shared_experts": 1, "global_attn_every_n_layers": 4,
      "sliding_window": 2048, "max_position_embeddings": 131072,
      "tie_word_embeddings": false})";
  auto m = ParseHfConfig(trinity, "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.Total(), 26123974400LL);
  EXPECT_EQ(m->moe.layers, 30);
  EXPECT_EQ(m->CountLayers(LayerKind::kFullAttention), 8);
  EXPECT_EQ(m->CountLayers(LayerKind::kSlidingWindow), 24);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// GPT-2, OPT and GPT-J (vLLM gpt2.py, opt.py, gpt_j.py): ungated biased
// MLPs, learned positions (OPT's table 2 rows longer), GPT-J's one
// LayerNorm a layer and biased untied head. Worked by hand:
//   GPT-2 (124M): wte 50,257 x 768 + wpe 1,024 x 768 + 12 x (2 LayerNorms
//   1,536 + c_attn 768 x 2,304 + 2,304 + c_proj 768^2 + 768 + c_fc 768 x
//   3,072 + 3,072 + c_proj 3,072 x 768 + 768 + 1,536) + ln_f 1,536 =
//   124,439,808 (Hugging Face's count), tied.
//   OPT-6.7B: embed 50,272 x 4,096 + positions 2,050 x 4,096 + 32 x (4 x
//   4,096^2 + 4 x 4,096 + 2 x 8,192 + 4,096 x 16,384 + 16,384 + 16,384 x
//   4,096 + 4,096) + 8,192 = 6,658,473,984, tied.
//   GPT-J-6B: wte 50,400 x 4,096 + 28 x (8,192 + 4 x 4,096^2 + 4,096 x
//   16,384 + 16,384 + 16,384 x 4,096 + 4,096) + 8,192 + head 50,400 x 4,096
//   + 50,400 = 6,050,882,784.
TEST(ConfigReaderTest, Gpt2OptAndGptjHaveUngatedBiasedMlps) {
  EXPECT_EQ(TotalOf(R"({"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12,
      "n_positions": 1024, "vocab_size": 50257})"),
            124439808LL);
  EXPECT_EQ(TotalOf(R"({"model_type": "opt", "hidden_size": 4096, "ffn_dim": 16384,
      "num_attention_heads": 32, "num_hidden_layers": 32, "max_position_embeddings": 2048,
      "vocab_size": 50272, "word_embed_proj_dim": 4096})"),
            6658473984LL);
  EXPECT_EQ(TotalOf(R"({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "n_layer": 28,
      "n_positions": 2048, "rotary_dim": 64, "vocab_size": 50400, "n_inner": null,
      "tie_word_embeddings": false})"),
            6050882784LL);
  EXPECT_NE(ErrorOf(R"({"model_type": "opt", "hidden_size": 1024, "ffn_dim": 4096,
      "num_attention_heads": 16, "num_hidden_layers": 24, "vocab_size": 50272,
      "word_embed_proj_dim": 512})")
                .find("word_embed_proj_dim: is 512, not hidden_size 1024"),
            std::string::npos);
}

// Snowflake Arctic (vLLM arctic.py): every layer's 128 experts (top 2, of
// intermediate_size 4,864) beside a gated residual MLP of hidden x hidden
// and its norm. Worked by hand (H 7,168, 56 / 8 heads of 128, 35 layers,
// vocab 32,000, untied): attention 2 x 7,168^2 + 2 x 7,168 x 1,024 =
// 117,440,512; experts 128 x 3 x 7,168 x 4,864 = 13,388,218,368; router
// 917,504; residual MLP 3 x 7,168^2 = 154,140,672 and 3 norms 21,504; x 35;
// final norm; embedding and head 2 x 32,000 x 7,168: 478,584,608,768 (card:
// 480B); active (2 experts) 17,318,647,808 (card: 17B).
TEST(ConfigReaderTest, ArcticKeepsItsResidualMlp) {
  auto m = ParseHfConfig(R"({"model_type": "arctic", "hidden_size": 7168,
      "intermediate_size": 4864, "num_attention_heads": 56, "num_key_value_heads": 8,
      "num_hidden_layers": 35, "num_local_experts": 128, "num_experts_per_tok": 2,
      "moe_layer_frequency": 1, "use_residual": true, "parallel_attn_mlp_res": true,
      "vocab_size": 32000, "tie_word_embeddings": false, "max_position_embeddings": 4096})",
                         "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.Total(), 478584608768LL);
  EXPECT_EQ(m->params.Active(), 17318647808LL);
  EXPECT_EQ(m->params.shared_experts, 35LL * 154140672);
}

// OLMo 2 / Olmo 3 / OLMoE, Seed-OSS and dots.llm1 by their vLLM modeling.
// Worked by hand on one shape (hidden 64, 2 layers, 4 heads, 2 KV heads of
// 16, MLP 128, vocab 100, untied, attention_bias false): a Llama reading is
// embedding and head 12,800, a layer q 4,096 + k 2,048 + v 2,048 + o 4,096
// + MLP 24,576 + norms 128 = 36,992, x 2, final norm 64: 86,848.
//  - olmo2, olmo3, olmoe: q and k norms over all heads, 64 + 32 a layer: 87,040.
//  - seed_oss: q, k and v biased whatever attention_bias says, 64 + 32 + 32
//    a layer: 87,104.
//  - dots1: q and k norms per head, 16 + 16 a layer: 86,912. With experts
//    (4 of 32, top-2, one shared, the first layer dense), layer 1 holds
//    experts 4 x 3 x 64 x 32 = 24,576, the shared 6,144, the router 256 and
//    its score-correction bias 4 in place of the MLP: 86,912 + 6,404 = 93,316.
TEST(ConfigReaderTest, OlmoSeedOssAndDotsFollowTheirModelingCode) {
  const auto count = [](const std::string& type, const std::string& extra) -> std::int64_t {
    auto m = ParseHfConfig(R"({"model_type": ")" + type + R"(", "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 16, "intermediate_size": 128, "vocab_size": 100,
        "attention_bias": false, "tie_word_embeddings": false,
        "max_position_embeddings": 4096)" +
                               extra + "}",
                           "c.json", "c");
    EXPECT_TRUE(m.ok()) << type << ": " << m.error().message();
    if (!m.ok()) return -1;
    EXPECT_FALSE(m->generic_rule) << type;
    return m->params.Total();
  };
  EXPECT_EQ(count("olmo2", ""), 87040);
  EXPECT_EQ(count("olmo3", ""), 87040);
  EXPECT_EQ(count("olmoe", ""), 87040);
  EXPECT_EQ(count("seed_oss", ""), 87104);
  EXPECT_EQ(count("dots1", ""), 86912);
  EXPECT_EQ(count("dots1", R"(, "n_routed_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "n_shared_experts": 1, "first_k_dense_replace": 1)"),
            93316);
}

// MiniCPM3-4B (openbmb/MiniCPM3-4B; vLLM minicpm3.py): MLA projections, but
// the Attention caches each head's K and V at qk_nope + qk_rope = 96 (V
// padded from 64). Worked by hand: per layer per token 2 x 40 x 96 x 2 B =
// 15,360, x 62 = 952,320 B (the latent would be 62 x 288 x 2 = 35,712).
// Weights: q_a 2,560 x 768 = 1,966,080, its norm 768, q_b 768 x 40 x 96 =
// 2,949,120, kv_a 2,560 x 288 = 737,280, its norm 256, kv_b 256 x 40 x 128
// = 1,310,720, o 2,560 x 40 x 64 = 6,553,600; MLP 3 x 2,560 x 6,400 =
// 49,152,000; norms 5,120: 62,674,944 a layer, x 62 = 3,885,846,528; the
// tied embedding 73,448 x 2,560 = 188,026,880 and the final norm 2,560:
// 4,073,875,968 (the card's 4B; Hugging Face's 4.07B).
TEST(ConfigReaderTest, MiniCpm3CachesFullKeysAndValues) {
  auto m = ParseHfConfig(R"({"model_type": "minicpm3", "hidden_size": 2560,
      "num_hidden_layers": 62, "num_attention_heads": 40, "num_key_value_heads": 40,
      "vocab_size": 73448, "kv_lora_rank": 256, "q_lora_rank": 768, "qk_nope_head_dim": 64,
      "qk_rope_head_dim": 32, "v_head_dim": 64, "intermediate_size": 6400,
      "tie_word_embeddings": true, "max_position_embeddings": 32768, "scale_emb": 12,
      "dim_model_base": 256, "scale_depth": 1.4})",
                         "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_FALSE(m->generic_rule);
  EXPECT_EQ(m->CountLayers(LayerKind::kFullAttention), 62);
  EXPECT_EQ(m->CountLayers(LayerKind::kLatentAttention), 0);
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 952320.0);
  EXPECT_EQ(m->params.Total(), 4073875968LL);
  // A latent rank the config leaves out is its class's default (the remote
  // MiniCPM3Config: 256), listed as such; one it writes as null is no rank
  // at all: refused, not read as plain attention.
  auto defaulted = ParseHfConfig(R"({"model_type": "minicpm3", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100})",
                                 "c.json", "c");
  ASSERT_TRUE(defaulted.ok()) << defaulted.error().message();
  bool listed = false;
  for (const auto& d : defaulted->defaulted_fields) listed |= d.key == "kv_lora_rank";
  EXPECT_TRUE(listed);
  EXPECT_NE(ErrorOf(R"({"model_type": "minicpm3", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 100, "kv_lora_rank": null})")
                .find("kv_lora_rank: missing: MiniCPM3's keys and values come from a latent"),
            std::string::npos);
}

// MiniCPM3-4B's config.json as published is hand-written for its remote
// code: architectures and auto_map, no model_type, no v_head_dim, no
// tie_word_embeddings. vLLM loads MiniCPM3ForCausalLM, and the remote
// MiniCPM3Config sets v_head_dim = qk_nope_head_dim (64) and ties the
// embeddings by default, so it reads as the config above: 62 layers x 40 KV
// heads x (64 + 32) x 2 (K and V) x 2 B = 952,320 B a token, and no
// separate lm_head (4,073,875,968 parameters, the same as with the keys
// written out).
TEST(ConfigReaderTest, MiniCpm3AsPublishedIsReadByItsArchitecture) {
  auto m = ParseHfConfig(R"({"architectures": ["MiniCPM3ForCausalLM"],
      "auto_map": {"AutoConfig": "configuration_minicpm.MiniCPM3Config",
                   "AutoModelForCausalLM": "modeling_minicpm.MiniCPM3ForCausalLM"},
      "hidden_size": 2560, "num_hidden_layers": 62, "num_attention_heads": 40,
      "num_key_value_heads": 40, "vocab_size": 73448, "kv_lora_rank": 256, "q_lora_rank": 768,
      "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "intermediate_size": 6400,
      "max_position_embeddings": 32768, "scale_emb": 12, "dim_model_base": 256,
      "scale_depth": 1.4, "torch_dtype": "bfloat16"})",
                         "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->model_type, "minicpm3");
  EXPECT_TRUE(m->model_type_from_architecture);
  EXPECT_FALSE(m->generic_rule);
  EXPECT_EQ(m->architecture, "MiniCPM3ForCausalLM");
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 952320.0);
  EXPECT_EQ(m->params.Total(), 4073875968LL);
  // A named type is never overridden, and an architecture without a rule
  // leaves the type empty: the generic rule reads it and says so.
  auto named = ParseHfConfig(R"({"model_type": "llama", "architectures": ["MiniCPM3ForCausalLM"],
      "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 100})",
                             "c.json", "c");
  ASSERT_TRUE(named.ok()) << named.error().message();
  EXPECT_EQ(named->model_type, "llama");
  EXPECT_FALSE(named->model_type_from_architecture);
  auto unknown = ParseHfConfig(R"({"architectures": ["NoSuchModelForCausalLM"],
      "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 100})",
                               "c.json", "c");
  ASSERT_TRUE(unknown.ok()) << unknown.error().message();
  EXPECT_FALSE(unknown->model_type_from_architecture);
  EXPECT_TRUE(unknown->generic_rule);
  // Words joined by '_': Qwen3MoeForCausalLM is qwen3_moe.
  auto moe = ParseHfConfig(R"({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "head_dim": 16, "vocab_size": 100, "num_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "intermediate_size": 128})",
                           "c.json", "c");
  ASSERT_TRUE(moe.ok()) << moe.error().message();
  EXPECT_EQ(moe->model_type, "qwen3_moe");
}

// What kvbill does not size is refused, naming the key: Granite Speech's
// encoder and projector (parts of the wrapper besides text and vision).
// InternVL's remote-code llm_config is its text model.
TEST(ConfigReaderTest, WrapperPartsAreRefused) {
  const std::string speech = R"({"model_type": "granite_speech",
      "text_config": {"model_type": "granite", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100},
      "encoder_config": {"model_type": "granite_speech_encoder", "hidden_dim": 1024,
        "num_layers": 10},
      "projector_config": {"model_type": "blip_2_qformer", "hidden_size": 1024,
        "num_hidden_layers": 2}})";
  EXPECT_NE(ErrorOf(speech).find("encoder_config: kvbill cannot count this part of model_type "
                                 "\"granite_speech\""),
            std::string::npos)
      << ErrorOf(speech);
  EXPECT_TRUE(ParseHfConfig(speech, "c.json", "c", {}, /*text_only=*/true).ok());
  auto internvl = ParseHfConfig(R"({"model_type": "internvl_chat",
      "llm_config": {"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100},
      "vision_config": {"model_type": "intern_vit_6b", "hidden_size": 1024}})",
                                "c.json", "c", {}, /*text_only=*/true);
  ASSERT_TRUE(internvl.ok()) << internvl.error().message();
  // 2 layers x 2 KV heads x 16 x (K + V) x 2 bytes.
  EXPECT_EQ(BytesPerToken(*internvl, Fmt("bf16")), 256.0);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Pure state-space models (vLLM mamba.py, mamba2.py): no KV at all, a
// constant state a sequence. Worked by hand:
//   Mamba-2.8B (Mamba-1: hidden 2,560, intermediate 5,120, state 16, conv
//   4, dt rank 160, 64 layers, vocab 50,280, tied): a mixer of in_proj
//   2,560 x 10,240 + conv 5,120 x 4 + 5,120 + x_proj 5,120 x 192 + dt_proj
//   160 x 5,120 + 5,120 + A_log 5,120 x 16 + D 5,120 + out_proj 5,120 x
//   2,560 = 41,241,600 and a norm of 2,560, x 64; embedding 50,280 x 2,560;
//   final norm: 2,768,345,600. State: 64 x (3 x 5,120 + 5,120 x 16)
//   elements x 2 B = 12,451,840 B a sequence.
//   Mamba-Codestral-7B (Mamba-2: 128 heads of 64, 8 groups, state 128):
//   64 x (3 x (8,192 + 2 x 8 x 128) + 128 x 64 x 128) x 2 B = 138,149,888 B.
TEST(ConfigReaderTest, MambaModelsKeepStateNotKv) {
  auto m1 = ParseHfConfig(R"({"model_type": "mamba", "hidden_size": 2560,
      "intermediate_size": 5120, "state_size": 16, "conv_kernel": 4, "expand": 2,
      "time_step_rank": 160, "num_hidden_layers": 64, "vocab_size": 50280,
      "use_bias": false, "use_conv_bias": true})",
                          "c.json", "c");
  ASSERT_TRUE(m1.ok()) << m1.error().message();
  EXPECT_EQ(m1->params.Total(), 2768345600LL);
  EXPECT_EQ(BytesPerToken(*m1, Fmt("bf16")), 0.0);
  EXPECT_EQ(StateBytesPerSequence(*m1), 12451840);
  auto m2 = ParseHfConfig(R"({"model_type": "mamba2", "hidden_size": 4096, "num_heads": 128,
      "head_dim": 64, "n_groups": 8, "state_size": 128, "expand": 2, "conv_kernel": 4,
      "num_hidden_layers": 64, "vocab_size": 32768, "tie_word_embeddings": false})",
                          "c.json", "c");
  ASSERT_TRUE(m2.ok()) << m2.error().message();
  EXPECT_EQ(StateBytesPerSequence(*m2), 138149888);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

// Bamba-9B (vLLM bamba.py): attention at layers 9, 18 and 27, Mamba-2
// elsewhere, a gated MLP of 14,336 in every layer. Worked by hand (H 4,096,
// 32 / 8 heads of 128, Mamba-2 128 heads of 64, 1 group, state 128, vocab
// 128,256, untied): embeddings 2 x 128,256 x 4,096; 32 x (MLP 3 x 4,096 x
// 14,336 + norms 8,192); 3 x attention 41,943,040; 29 x Mamba-2 (in_proj
// (2 x 8,192 + 2 x 128 + 128) x 4,096 + conv (8,448 x 4 + 8,448) + 384 +
// norm 8,192 + out_proj 8,192 x 4,096 = 102,286,976); final norm:
// 9,780,235,392. KV 3 x 8 x 128 x 2 x 2 = 12,288 B a token; state 29 x
// (3 x 8,448 + 128 x 64 x 128) x 2 B = 62,287,360 B a sequence.
TEST(ConfigReaderTest, BambaPlacesItsAttentionByIndex) {
  auto m = ParseHfConfig(R"({"model_type": "bamba", "attn_layer_indices": [9, 18, 27],
      "hidden_size": 4096, "intermediate_size": 14336, "mamba_conv_bias": true,
      "mamba_d_conv": 4, "mamba_d_head": 64, "mamba_d_state": 128, "mamba_expand": 2,
      "mamba_n_groups": 1, "mamba_n_heads": 128, "mamba_proj_bias": false,
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
      "tie_word_embeddings": false, "vocab_size": 128256, "max_position_embeddings": 4096})",
                         "c.json", "c");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->params.Total(), 9780235392LL);
  EXPECT_EQ(BytesPerToken(*m, Fmt("bf16")), 12288.0);
  EXPECT_EQ(StateBytesPerSequence(*m), 62287360);
}

// Jamba's attention layers are those with i % attn_layer_period ==
// attn_layer_offset and its MoE layers i % expert_layer_period ==
// expert_layer_offset; transformers' JambaConfig raises "attention layer
// offset (8) must be smaller than attention layer period (8)", as such a
// model has no attention (or no MoE) layer. kvbill built one of no
// attention layers (0 B a token) instead.
TEST(ConfigReaderTest, JambaOffsetsMustBeBelowTheirPeriods) {
  const std::string base = R"({"model_type": "jamba", "num_hidden_layers": 4,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
      "intermediate_size": 128, "vocab_size": 100, "num_experts": 2,
      "num_experts_per_tok": 1, "mamba_d_state": 4, "mamba_d_conv": 2, "mamba_expand": 2)";
  EXPECT_EQ(ErrorOf(base + R"(, "attn_layer_period": 2, "attn_layer_offset": 2})"),
            "c.json: attn_layer_offset: must be smaller than attn_layer_period 2, got 2 (no "
            "layer would be attention; transformers' JambaConfig refuses it)");
  EXPECT_EQ(ErrorOf(base + R"(, "attn_layer_period": 2, "attn_layer_offset": 1,
                               "expert_layer_period": 2, "expert_layer_offset": 3})"),
            "c.json: expert_layer_offset: must be smaller than expert_layer_period 2, got 3 (no "
            "layer would hold the experts; transformers' JambaConfig refuses it)");
  // Offset 1 of period 2: layers 1 and 3 attend, 2 x 2 KV heads x 16
  // (64 / 4) x 2 (K and V) x 2 bytes = 256 B a token.
  const ModelShape m = Inline(base + R"(, "attn_layer_period": 2, "attn_layer_offset": 1})");
  EXPECT_EQ(m.CountLayers(LayerKind::kFullAttention), 2);
  EXPECT_EQ(m.layers[1].kind, LayerKind::kFullAttention);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 256.0);
}

// The model types whose attention is multi-head latent attention by their
// modeling code cannot be built without kv_lora_rank (transformers'
// kv_a_proj_with_mqa is hidden -> kv_lora_rank + qk_rope_head_dim, vLLM's
// DeepseekV2Attention the same). DeepSeek-V3 with kv_lora_rank null was
// read as plain attention: heads of 7,168 / 128 = 56 and V of 128, 61 x 128
// x (56 + 128) x 2 = 2,873,344 B a token for the latent's 61 x (512 + 64) x
// 2 = 70,272.
TEST(ConfigReaderTest, LatentAttentionNeedsItsRank) {
  std::string text;
  for (const CatalogModel& c : ModelCatalog()) {
    if (c.name == "deepseek-v3") text = std::string(c.config);
  }
  ASSERT_FALSE(text.empty());
  auto with = [&text](const char* key, const nlohmann::json& value) {
    nlohmann::json c = nlohmann::json::parse(text);
    c[key] = value;
    return c.dump();
  };
  EXPECT_EQ(BytesPerToken(Inline(text), Fmt("bf16")), 70272.0);
  EXPECT_EQ(ErrorOf(with("kv_lora_rank", nullptr)),
            "c.json: kv_lora_rank: is null (None): model_type \"deepseek_v3\" is multi-head "
            "latent attention, which caches a latent of kv_lora_rank elements a token "
            "(transformers and vLLM cannot build it without one)");
  EXPECT_EQ(ErrorOf(with("kv_lora_rank", 0)),
            "c.json: kv_lora_rank: must be a positive integer, got 0");
  EXPECT_EQ(ErrorOf(with("kv_lora_rank", "512")),
            "c.json: kv_lora_rank: must be a positive integer, got \"512\"");
  EXPECT_EQ(ErrorOf(with("qk_rope_head_dim", 0)),
            "c.json: qk_rope_head_dim: must be a positive integer, got 0");
  EXPECT_EQ(ErrorOf(with("qk_rope_head_dim", nullptr)),
            "c.json: qk_rope_head_dim: is null (None), where a value is needed");
  // A type without class defaults here (GLM-4.7-Flash's glm4_moe_lite)
  // that gives the MLA dims and leaves the rank out.
  EXPECT_EQ(ErrorOf(R"({"model_type": "glm4_moe_lite", "num_hidden_layers": 1,
                        "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
                        "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16})"),
            "c.json: kv_lora_rank: missing: model_type \"glm4_moe_lite\" is multi-head latent "
            "attention, which caches a latent of kv_lora_rank elements a token (transformers and "
            "vLLM cannot build it without one)");
}

// A wrapper's text_config (or llm_config, thinker_config) that is not an
// object is refused, naming it: it used to leave the text model to the
// class defaults (Gemma3TextConfig's 26 layers of 4 KV heads of 256:
// 106,496 B a token for Gemma 3 27B's 507,904), and Llama 4's, which has
// none here, said "num_hidden_layers: missing". null is read as absent, as
// transformers builds the class's default text config for None: 26 x 4 x
// 256 x 2 (K and V) x 2 bytes = 106,496. A vision_config that is not an
// object is refused too.
TEST(ConfigReaderTest, ANestedConfigThatIsNoObjectIsRefused) {
  EXPECT_EQ(ErrorOf(R"({"model_type": "gemma3", "text_config": "gemma"})"),
            "c.json: text_config: must be an object, got \"gemma\"");
  EXPECT_EQ(ErrorOf(R"({"model_type": "gemma3", "text_config": [1]})"),
            "c.json: text_config: must be an object, got [1]");
  EXPECT_EQ(ErrorOf(R"({"model_type": "gemma3", "text_config": 5})"),
            "c.json: text_config: must be an object, got 5");
  EXPECT_EQ(ErrorOf(R"({"model_type": "llama4", "text_config": "oops"})"),
            "c.json: text_config: must be an object, got \"oops\"");
  EXPECT_EQ(ErrorOf(R"({"model_type": "internvl_chat", "llm_config": true})"),
            "c.json: llm_config: must be an object, got true");
  EXPECT_EQ(ErrorOf(R"({"model_type": "qwen3_omni_moe", "thinker_config": "thinker"})"),
            "c.json: thinker_config: must be an object, got \"thinker\"");
  const ModelShape null = Inline(R"({"model_type": "gemma3", "text_config": null})");
  EXPECT_EQ(null.layers.size(), 26u);
  EXPECT_EQ(BytesPerToken(null, Fmt("bf16")), 106496.0);
  EXPECT_EQ(ErrorOf(R"({"model_type": "gemma3", "text_config": null, "vision_config": "siglip"})"),
            "c.json: vision_config: must be an object, got \"siglip\"");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
