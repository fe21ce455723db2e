// The field names of NVIDIA Dynamo's Mooncake rows (MooncakeRow,
// AgenticMooncakeRow, with serde aliases; docs/importers.md#dynamo), shared
// by the Dynamo reader, which accepts exactly these, and the Mooncake reader,
// which names them when a Dynamo trace is read as Mooncake.
#ifndef KVBILL_SRC_TRACE_DYNAMO_FIELDS_H_
#define KVBILL_SRC_TRACE_DYNAMO_FIELDS_H_

#include <string_view>

namespace kvbill {

// True for a field Dynamo documents (the four Mooncake fields included).
bool IsDynamoField(std::string_view key);

}  // namespace kvbill

#endif  // KVBILL_SRC_TRACE_DYNAMO_FIELDS_H_
