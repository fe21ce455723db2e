// What a user types for a model or a GPU, resolved to a bundled catalog entry
// (or a file) before LoadModel / LookupGpu run. This is the forgiving layer of
// the command line; LoadModel and LookupGpu themselves stay exact.
//
// A model is any of (first match wins):
//   1. a catalog name as `kvbill models` lists it ("qwen3-32b");
//   2. an existing file (a config.json), or a directory holding config.json;
//   3. a catalog name in any case ("Qwen3-32B");
//   4. a Hugging Face repo id whose config.json is the catalog entry's, with or
//      without its organisation and in any case ("Qwen/Qwen3-32B",
//      "meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"); the
//      table is ModelRepoIds() and docs/models.md lists it.
// A GPU is any of:
//   1. a catalog id as `kvbill gpus` lists it ("h100-sxm");
//   2. an existing file (a GPU JSON file);
//   3. a catalog id or catalog name, or an alias of GpuAliases() — short names
//      ("h100") and the names nvidia-smi and rocm-smi print ("NVIDIA H100 80GB
//      HBM3") — compared by SquashName (names.h): any case, with or without
//      spaces, '-', '_' and '.', and with or without a leading "NVIDIA"/"AMD".
// Nothing else is guessed. A name that looks like a path (it ends in ".json",
// or starts with "/", "./", "../" or "~"; for GPUs any name with a '/') and
// does not exist is "file not found"; any other unknown name gets the
// catalog, and "did you mean" when one is close (names.h).
#ifndef KVBILL_HARDWARE_CATALOG_NAMES_H_
#define KVBILL_HARDWARE_CATALOG_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill {

struct NameAlias {
  std::string_view alias;    // as users and tools write it
  std::string_view catalog;  // the catalog name or id it stands for
};

// Hugging Face repo ids of the bundled models, in catalog order.
const std::vector<NameAlias>& ModelRepoIds();

// Short names and the names GPU tools print, for the bundled GPUs.
const std::vector<NameAlias>& GpuAliases();

// The catalog name, or a path to a config.json, for what was typed. Errors
// start with `flag` and the quoted text:
//   --model "./m.json": file not found
//   --model "dir": no config.json in this directory
//   --model "Qwen/Qwen3-4B": not a bundled model nor a file; did you mean
//   Qwen/Qwen3-8B? (catalog: ...; kvbill reads no model from the Hub: download
//   its config.json and give its path)
Result<std::string> ResolveModelName(const std::string& typed, std::string_view flag = "--model");

// The catalog id, or a path to a GPU JSON file, for what was typed. Errors:
//   --gpu "my.json": file not found
//   --gpu "h900": unknown GPU; did you mean h200? (catalog: ...; or a path to
//   a GPU JSON file)
Result<std::string> ResolveGpuName(const std::string& typed, std::string_view flag = "--gpu");

}  // namespace kvbill

#endif  // KVBILL_HARDWARE_CATALOG_NAMES_H_
