// The catalog model a Hugging Face repo id names.
//
// A tuned or quantised copy of an architecture keeps the architecture's
// config shape: "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8" is qwen3-235b-a22b
// with fp8 weights, "deepseek-ai/DeepSeek-R1-0528" is deepseek-v3. The rule
// drops the organisation, lowercases, and strips the suffixes that name a
// tuning or a quantised copy (-fp8, -awq, -instruct-2507, -instruct, -0528);
// DeepSeek-R1 is DeepSeek-V3's architecture. The result is a candidate
// catalog name: the caller checks that the catalog has it. Used by
// `kvbill calibrate`'s replays and `kvbill scenario from-vllm`.
#ifndef KVBILL_MODEL_HF_MODEL_ID_H_
#define KVBILL_MODEL_HF_MODEL_ID_H_

#include <string>

namespace kvbill {

struct HfModelChoice {
  std::string catalog;                 // candidate catalog name ("qwen3-235b-a22b")
  std::string weight_format = "auto";  // "fp8" for -FP8, "int4-g128" for -AWQ, else "auto"
  // The weights are an fp8 checkpoint with 128x128 block scales (the -FP8
  // Qwen releases; not GLM-4.5's per-channel FP8), as
  // OperatorCostOptions::fp8_checkpoint means it.
  bool fp8_checkpoint = false;
};

// `id`: a repo id ("Qwen/Qwen3-8B") or a bare name. `weights`: a published
// weight precision that names the copy when the id does not ("fp8",
// "awq..."; empty: none). Never fails; the catalog may not have the name.
HfModelChoice CatalogModelFromHfId(const std::string& id, const std::string& weights = "");

}  // namespace kvbill

#endif  // KVBILL_MODEL_HF_MODEL_ID_H_
