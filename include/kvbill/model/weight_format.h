// The weight format a scenario's weight_format or a command's
// --weight-format names: an element format to convert a model's weights to
// (kv_format.h, docs/formats.md), or "auto", the caller's to handle.
#ifndef KVBILL_MODEL_WEIGHT_FORMAT_H_
#define KVBILL_MODEL_WEIGHT_FORMAT_H_

#include <string>

#include "kvbill/model/kv_format.h"
#include "kvbill/util/result.h"

namespace kvbill {

// ParseElementFormat's formats. A checkpoint-only format (int8, w8a8-int8,
// bnb4, bnb8, mxfp8, nvfp4-w4a16, awq, gptq: read from a checkpoint's
// quantization_config) is an error that says so and how to give it (the
// checkpoint's config.json as the model, weight format "auto"); another
// name is ParseElementFormat's error followed by `; or "auto"`. One message
// for the scenario reader and every command that takes --weight-format.
Result<ElementFormat> ParseWeightFormat(const std::string& name);

}  // namespace kvbill

#endif  // KVBILL_MODEL_WEIGHT_FORMAT_H_
