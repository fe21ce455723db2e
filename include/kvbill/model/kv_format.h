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

// How one weight matrix of rows x cols elements is stored: element bits plus
// the scale (and zero-point) metadata of its quantization scheme. Groups run
// along cols (the input features) and never straddle two rows:
//   bits = rows * cols * element_bits
//        + rows * ceil(cols / group_size) * group_bits      (per-group scales)
//        + ceil(rows / block_rows) * ceil(cols / block_cols) * block_bits
//        + rows * row_bits + cols * col_bits + tensor_bits
//        + ceil(rows * cols / flat_group_size) * flat_group_bits   (flattened groups)
// e.g. DeepSeek-V3's fp8 with one fp32 scale per 128 x 128 block, NVFP4's
// fp8 scale per 16 elements plus two fp32 per-tensor scales, GPTQ's fp16
// scale and packed zero point per group plus an int32 g_idx per column.
// bitsandbytes quantizes the flattened tensor: its double quantization keeps
// an fp32 scale per 256 blocks of 64 elements, counted as flattened groups.
struct WeightFormat {
  std::string name;  // e.g. "bf16", "fp8-e4m3 (128x128 blocks)", "int4-g32 (compressed-tensors)"
  std::string compute =
      "bf16";  // the ElementFormat matmuls run in (weight-only formats: the dtype)
  int element_bits = 16;
  int group_size = 0;
  int group_bits = 0;
  int block_rows = 0;
  int block_cols = 0;
  int block_bits = 0;
  int row_bits = 0;
  int col_bits = 0;
  int tensor_bits = 0;
  int flat_group_size = 0;
  int flat_group_bits = 0;

  // Bits to store one rows x cols matrix. Preconditions: rows, cols >= 0.
  std::int64_t Bits(std::int64_t rows, std::int64_t cols) const;
};

// The weight format of an ElementFormat name (--weight-format): its element
// bits and group metadata; fp8 adds one fp32 scale per tensor.
Result<WeightFormat> WeightFormatFromElement(std::string_view name);

}  // namespace kvbill

#endif  // KVBILL_MODEL_KV_FORMAT_H_
