// The native format's JSON mapping of one task (docs/trace-format.md), shared
// by the native reader and writer.
#ifndef KVBILL_SRC_TRACE_NATIVE_CODEC_H_
#define KVBILL_SRC_TRACE_NATIVE_CODEC_H_

#include <string>

#include "kvbill/trace/trace.h"
#include "trace/json_fields.h"

namespace kvbill {

// Decodes one task line's object. Errors name the field, prefixed with the
// task id and turn when known: "task \"s1\": turn 2: span 1: ...". Does not
// run ValidateTask.
Result<Task> DecodeTask(const Json& object);

// One line of text, without the newline.
std::string EncodeTask(const Task& task);

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_NATIVE_CODEC_H_
