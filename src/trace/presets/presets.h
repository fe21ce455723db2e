// The generator presets, one per file; generator.cc lists them in its table.
// Each file documents where its numbers come from (see docs/generator.md).
#ifndef KVBILL_TRACE_PRESETS_PRESETS_H_
#define KVBILL_TRACE_PRESETS_PRESETS_H_

#include "kvbill/trace/generator.h"

namespace kvbill {

GeneratorPreset CodingAgentPreset();
GeneratorPreset ChatPreset();

}  // namespace kvbill

#endif  // KVBILL_TRACE_PRESETS_PRESETS_H_
