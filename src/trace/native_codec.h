// The native format's JSON mapping of one task (docs/trace-format.md), shared
// by the native reader and writer.
#ifndef KVBILL_SRC_TRACE_NATIVE_CODEC_H_
#define KVBILL_SRC_TRACE_NATIVE_CODEC_H_

#include <string>
#include <string_view>

#include "kvbill/trace/trace.h"
#include "trace/json_fields.h"

namespace kvbill {

// Decodes one task line's object. Errors name the field, prefixed with the
// task id and turn when known: "task \"s1\": turn 2: span 1: ...". Does not
// run ValidateTask.
Result<Task> DecodeTask(const Json& object);

// The fast path of DecodeTask for one line's text: true and *task set to
// exactly what ParseJsonObject + DecodeTask would give, or false when the
// line is anything but a plain valid task (then call those for the result or
// the error). Allocates only what *task holds.
bool FastDecodeTask(std::string_view line, Task* task);

// One line of text, without the newline.
std::string EncodeTask(const Task& task);

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_NATIVE_CODEC_H_
