// kvbill trace gen: write a synthetic trace (include/kvbill/trace/generator.h).
#ifndef KVBILL_CLI_TRACE_GEN_H_
#define KVBILL_CLI_TRACE_GEN_H_

#include "cli/commands.h"

namespace kvbill::cli {

// `kvbill trace gen --preset NAME --tasks N [--seed S] -o OUT`; the args
// after "gen". Returns the exit status (2 for bad flags).
int RunTraceGen(const Args& args);

}  // namespace kvbill::cli

#endif  // KVBILL_CLI_TRACE_GEN_H_
