#include "kvbill/model/weight_format.h"

namespace kvbill {

Result<ElementFormat> ParseWeightFormat(const std::string& name) {
  auto format = ParseElementFormat(name);
  if (format) return format;
  // The format matrix's rows that only a checkpoint declares (its
  // quantization_config), and quantisation methods: not formats kvbill
  // converts a model's weights to.
  static const char* const kCheckpointOnly[] = {"int8",  "w8a8-int8",   "bnb4", "bnb8",
                                                "mxfp8", "nvfp4-w4a16", "awq",  "gptq"};
  const std::string& message = format.error().message();
  const std::size_t at = message.find("(known: ");
  std::string known = at == std::string::npos ? std::string() : message.substr(at + 8);
  if (!known.empty() && known.back() == ')') known.pop_back();
  for (const char* checkpoint : kCheckpointOnly) {
    if (name != checkpoint) continue;
    return Error("\"" + name +
                 "\" is a checkpoint's format, which kvbill reads from its quantization_config "
                 "(give that checkpoint's config.json as the model, weight_format \"auto\"), not "
                 "one it converts a model's weights to" +
                 (name == "awq" || name == "gptq"
                      ? std::string(" (as a what-if, int4-g128 is AWQ's and GPTQ's usual layout)")
                      : std::string()) +
                 "; weight_format converts to: " + known);
  }
  return Error(message + "; or \"auto\"");
}

}  // namespace kvbill
