// A scenario from a vLLM serve command line (`kvbill scenario from-vllm`).
//
// The flags with a kvbill key (docs/scenario-format.md, "vLLM names") become
// that key: -tp/--tensor-parallel-size, -dp/--data-parallel-size,
// --gpu-memory-utilization, --kv-cache-dtype, --[no-]enable-prefix-caching,
// --block-size, --max-model-len, --max-num-seqs, --max-num-batched-tokens,
// --dtype, -q/--quantization, --enable-expert-parallel, --speculative-config
// (as deployment.speculative); environment assignments before the command:
// VLLM_MXFP4_USE_MARLIN=1 (deployment.mxfp4_moe_kernel "marlin" on Hopper)
// and VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (the long --max-model-len note), others
// noted. The model, a Hugging Face repo id, becomes the
// catalog name of the same architecture when the catalog has one (or a
// copy's architecture, CatalogModelFromHfId); an unknown model is kept, and
// the settings checked against a model are not checked. A model with
// constant-state layers gets prefix caching off. Every flag
// the scenario cannot express, and every assumption made, is a note: the
// caller prints them, and they are the scenario's "notes". Names, aliases
// and value spellings follow vLLM's vllm/engine/arg_utils.py and
// vllm/config/cache.py.
#ifndef KVBILL_SCENARIO_FROM_VLLM_H_
#define KVBILL_SCENARIO_FROM_VLLM_H_

#include <string>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill {

struct VllmScenario {
  std::string json_text;           // the scenario, indented JSON with a final newline
  std::vector<std::string> notes;  // also under "notes" in json_text
};

struct FromVllmOptions {
  std::string gpu;  // deployment.gpu; empty: kvbill's default, with a note
};

// `argv` is the command after `--`: `vllm serve MODEL [FLAGS]` (or any
// command whose flags include --model MODEL). Flags may be written
// --flag VALUE or --flag=VALUE, with - or _ between words. Errors (exit
// status 2) name the flag: a value that is not a number, a kv-cache dtype
// kvbill has no format for, a scenario that does not read.
Result<VllmScenario> ScenarioFromVllm(const std::vector<std::string>& argv,
                                      const FromVllmOptions& options = {});

// vLLM's human-readable integer (arg_utils.py human_readable_int, used by
// --max-model-len and --max-num-batched-tokens): lowercase k, m, g, t are
// decimal (25.6k = 25,600), uppercase K, M, G, T binary (1K = 1,024; no
// decimals), else a plain integer.
Result<std::int64_t> ParseVllmInt(const std::string& text);

}  // namespace kvbill

#endif  // KVBILL_SCENARIO_FROM_VLLM_H_
