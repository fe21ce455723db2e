// Element formats for the KV cache and for weights.
//
// A format says how many bits one stored element takes, including the
// quantization metadata (scales, zero points) shared by a group of elements.
// This file is the one place where bits per element are defined; cost code
// asks a format, it never writes a literal. Spec: docs/formats.md.
//
// Storage of a vector of n elements (one head's K or V for one token, or one
// MLA latent) is n * element_bits + ceil(n / group) * metadata_bits, where a
// group never straddles two vectors. Formats whose metadata is per tensor
// (fp8 with one scale per layer) have no per-element overhead.
#ifndef KVBILL_MODEL_KV_FORMAT_H_
#define KVBILL_MODEL_KV_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/util/result.h"

namespace kvbill {

struct ElementFormat {
  // Group size meaning "one group per stored vector" (per token and head).
  static constexpr int kGroupIsVector = -1;

  std::string name;                 // canonical name, e.g. "bf16", "nvfp4", "int4-g32"
  int element_bits = 16;            // payload bits of one element
  int group_size = 0;               // elements per metadata group; 0: none per element
  int metadata_bits_per_group = 0;  // scale (+ zero point) bits of one group
  std::string description;          // one line for help and docs

  // Bits to store one vector of `length` elements. Precondition: length >= 0.
  std::int64_t VectorBits(std::int64_t length) const;

  // Average bits per element for vectors of `length` elements (display only).
  double BitsPerElement(std::int64_t length) const;
};

// Looks up a format by name. Accepted: bf16, fp16, fp32, fp8 (= fp8-e4m3),
// fp8-e4m3, fp8-e5m2, fp8-per-token-head, nvfp4, mxfp4, int4, int2 and
// int4-gN / int2-gN for a group size N (a power of two, 8..1024).
// Error: `unknown KV format "x" (known: ...)`.
Result<ElementFormat> ParseElementFormat(std::string_view name);

// The canonical names ParseElementFormat accepts, for help texts.
std::vector<std::string> ElementFormatNames();

}  // namespace kvbill

#endif  // KVBILL_MODEL_KV_FORMAT_H_
