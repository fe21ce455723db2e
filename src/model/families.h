// Family rules: which blocks each decoder layer of a model_type holds, read
// from its (defaulted) text config the way the family's modeling code reads
// it, and the vision / audio towers of multimodal configs. docs/models.md
// is the specification. Internal to src/model/.
#ifndef KVBILL_SRC_MODEL_FAMILIES_H_
#define KVBILL_SRC_MODEL_FAMILIES_H_

#include <string>
#include <vector>

#include "model/config_json.h"
#include "model/model_builder.h"

namespace kvbill::model_config {

struct TextModel {
  int decoder_layers = 0;
  Int hidden = 0;
  Int vocab = 0;
  Int heads = 0;  // query heads of the first attention layer (0: none)
  bool tied = false;
  // No family rule knows the model type (nor a signature key): the layers
  // were read by the generic rule, as a Llama-like model.
  bool generic = false;
  // Transformer blocks a layer holds (LongCat-Flash: 2).
  int blocks_per_layer = 1;
};

// Adds the text model's layers, embeddings, head, final norm and MTP
// modules to `b`. `model_type` is the text config's. Errors name the file
// and the field; a config whose layer kinds cannot be told is an error that
// names the key and the model type.
Result<TextModel> BuildTextModel(const Fields& f, const std::string& model_type, ModelBuilder* b);

// Refuses what is no decoder-only model: `is_encoder_decoder` true in
// `top` (the file's top level) or `text` (the text config read), an
// encoder-only model type or architecture (BERT, RoBERTa, ...), RWKV. The
// error names the file and the field.
Status CheckDecoderOnly(const Fields& top, const Fields& text, const std::string& model_type);

// Adds the towers of `root` (vision_config, audio_config and their
// projectors into the text model) to `b`.
Status BuildTowers(const json& root, const std::string& source, const std::string& model_type,
                   Int text_hidden, ModelBuilder* b);

// The model types with a family rule, sorted, for error messages and docs.
std::vector<std::string> KnownModelTypes();

}  // namespace kvbill::model_config

#endif  // KVBILL_SRC_MODEL_FAMILIES_H_
