// Configs kvbill refuses because they are no decoder-only model: encoder-
// decoder models (is_encoder_decoder true), encoder-only models (BERT and
// its kin, by model_type or architecture) and RWKV. Each error names the
// file and the field.
#include <gtest/gtest.h>

#include <string>

#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "model/model_test_util.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

const std::string kDecoderOnly =
    "kvbill prices decoder-only generation (the KV cache of a decoder-only model)";

// t5-small's layout keys: read as a decoder these gave 6 full-attention
// layers; now the encoder-decoder flag refuses it.
TEST(NotDecodersTest, EncoderDecoderIsRefusedNamingTheFlag) {
  auto m = ParseHfConfig(R"({"architectures": ["T5ForConditionalGeneration"], "d_ff": 2048,
      "d_kv": 64, "d_model": 512, "is_encoder_decoder": true, "model_type": "t5",
      "num_heads": 8, "num_layers": 6, "vocab_size": 32128})",
                         "t5-small.json", "t5-small");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().exit_status(), 2);
  EXPECT_EQ(m.error().message(),
            "t5-small.json: is_encoder_decoder: is true: model_type \"t5\" is an "
            "encoder-decoder model (its decoder also attends to the encoder's output), which "
            "kvbill does not read; " +
                kDecoderOnly);
}

// Whisper has no num_attention_heads (encoder_ and decoder_attention_heads):
// the flag is what is named, not a missing key.
TEST(NotDecodersTest, WhisperIsRefusedAsEncoderDecoderNotForAMissingKey) {
  EXPECT_EQ(InlineError(R"({"architectures": ["WhisperForConditionalGeneration"],
      "d_model": 1280, "decoder_attention_heads": 20, "decoder_layers": 32,
      "encoder_attention_heads": 20, "encoder_layers": 32, "is_encoder_decoder": true,
      "model_type": "whisper", "num_hidden_layers": 32, "vocab_size": 51866})"),
            "c.json: is_encoder_decoder: is true: model_type \"whisper\" is an "
            "encoder-decoder model (its decoder also attends to the encoder's output), which "
            "kvbill does not read; " +
                kDecoderOnly);
}

// The flag false (as many decoder configs write it) is a decoder: one
// layer, 2 heads of 8, MHA: KV 2 x 8 x 2 (K, V) x 2 B = 64 B a token.
TEST(NotDecodersTest, EncoderDecoderFalseIsReadAsADecoder) {
  const ModelShape m = InlineConfig(R"({"model_type": "llama", "is_encoder_decoder": false,
      "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
      "intermediate_size": 32, "vocab_size": 10})");
  EXPECT_EQ(m.layers.size(), 1u);
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 64.0);
}

TEST(NotDecodersTest, EncoderOnlyModelTypeIsRefused) {
  // bert-base-uncased's keys: read as a decoder they gave 36,864 B a token.
  EXPECT_EQ(InlineError(R"({"architectures": ["BertForMaskedLM"], "hidden_size": 768,
      "intermediate_size": 3072, "model_type": "bert", "num_attention_heads": 12,
      "num_hidden_layers": 12, "type_vocab_size": 2, "vocab_size": 30522})"),
            "c.json: model_type: is \"bert\", an encoder-only model: it keeps no KV cache, "
            "generating no tokens (vLLM serves it only as a pooling model); " +
                kDecoderOnly);
  EXPECT_EQ(InlineError(R"({"model_type": "xlm-roberta", "hidden_size": 16,
      "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 10})"),
            "c.json: model_type: is \"xlm-roberta\", an encoder-only model: it keeps no KV "
            "cache, generating no tokens (vLLM serves it only as a pooling model); " +
                kDecoderOnly);
}

// No model_type: the architecture tells (a masked LM of any name, or an
// encoder family's class with a task head or none).
TEST(NotDecodersTest, EncoderOnlyArchitectureIsRefused) {
  const std::string layers = R"("hidden_size": 16, "num_hidden_layers": 1,
      "num_attention_heads": 2, "vocab_size": 10})";
  EXPECT_EQ(InlineError(R"({"architectures": ["DebertaV2ForSequenceClassification"], )" + layers),
            "c.json: architectures: names DebertaV2ForSequenceClassification, an encoder-only "
            "model: it keeps no KV cache, generating no tokens (vLLM serves it only as a pooling "
            "model); " +
                kDecoderOnly);
  EXPECT_EQ(InlineError(R"({"architectures": ["XLMRobertaModel"], )" + layers),
            "c.json: architectures: names XLMRobertaModel, an encoder-only model: it keeps no KV "
            "cache, generating no tokens (vLLM serves it only as a pooling model); " +
                kDecoderOnly);
  EXPECT_EQ(InlineError(R"({"architectures": ["MyNewForMaskedLM"], )" + layers),
            "c.json: architectures: names MyNewForMaskedLM, an encoder-only model: it keeps no "
            "KV cache, generating no tokens (vLLM serves it only as a pooling model); " +
                kDecoderOnly);
}

// A decoder's sequence classifier (a reward model) keeps its decoder shape:
// LlamaForSequenceClassification is no encoder's class. One layer, 2 heads
// of 8, MHA: 64 B a token as above.
TEST(NotDecodersTest, DecoderSequenceClassifierIsRead) {
  const ModelShape m = InlineConfig(R"({"architectures": ["LlamaForSequenceClassification"],
      "model_type": "llama", "hidden_size": 16, "num_hidden_layers": 1,
      "num_attention_heads": 2, "intermediate_size": 32, "vocab_size": 10})");
  EXPECT_EQ(BytesPerToken(m, Fmt("bf16")), 64.0);
}

TEST(NotDecodersTest, RwkvIsRefusedAsRecurrent) {
  auto m = ParseHfConfig(R"({"architectures": ["RwkvForCausalLM"], "attention_hidden_size": 2560,
      "hidden_size": 2560, "intermediate_size": null, "model_type": "rwkv",
      "num_hidden_layers": 32, "vocab_size": 65536})",
                         "rwkv.json", "rwkv");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().exit_status(), 2);
  EXPECT_EQ(m.error().message(),
            "rwkv.json: model_type: is \"rwkv\": RWKV is a recurrent model (its layers keep a "
            "per-sequence state, not attention's keys and values), which kvbill has no rule "
            "for");
  EXPECT_EQ(InlineError(R"({"model_type": "rwkv7", "hidden_size": 16, "num_hidden_layers": 1,
      "vocab_size": 10})"),
            "c.json: model_type: is \"rwkv7\": RWKV is a recurrent model (its layers keep a "
            "per-sequence state, not attention's keys and values), which kvbill has no rule "
            "for");
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
