#include "kvbill/model/kv_format.h"

#include <cctype>
#include <charconv>

namespace kvbill {
namespace {

// Group-quantized integers in the style of KIVI: an fp16 scale and an fp16
// zero point per group of `group` elements.
constexpr int kIntGroupMetadataBits = 16 + 16;
constexpr int kDefaultIntGroup = 32;

ElementFormat Plain(std::string name, int bits, std::string description) {
  return ElementFormat{std::move(name), bits, 0, 0, std::move(description)};
}

ElementFormat IntGroup(int bits, int group) {
  return ElementFormat{"int" + std::to_string(bits) + "-g" + std::to_string(group), bits, group,
                       kIntGroupMetadataBits,
                       "int" + std::to_string(bits) + ", fp16 scale + fp16 zero point per " +
                           std::to_string(group) + " elements"};
}

std::vector<ElementFormat> FixedFormats() {
  return {
      Plain("bf16", 16, "bfloat16, 16 bits"),
      Plain("fp16", 16, "IEEE half, 16 bits"),
      Plain("fp32", 32, "IEEE single, 32 bits"),
      Plain("fp8-e4m3", 8, "fp8 E4M3, one scale per tensor"),
      Plain("fp8-e5m2", 8, "fp8 E5M2, one scale per tensor"),
      ElementFormat{"fp8-per-token-head", 8, ElementFormat::kGroupIsVector, 32,
                    "fp8 E4M3 with an fp32 scale per token and head"},
      ElementFormat{"nvfp4", 4, 16, 8, "FP4 E2M1, one E4M3 scale per 16 elements"},
      ElementFormat{"mxfp4", 4, 32, 8, "FP4 E2M1, one E8M0 scale per 32 elements (OCP MX)"},
  };
}

}  // namespace

std::int64_t ElementFormat::VectorBits(std::int64_t length) const {
  std::int64_t bits = length * element_bits;
  if (metadata_bits_per_group > 0 && length > 0) {
    const std::int64_t groups =
        group_size == kGroupIsVector ? 1 : (length + group_size - 1) / group_size;
    bits += groups * metadata_bits_per_group;
  }
  return bits;
}

double ElementFormat::BitsPerElement(std::int64_t length) const {
  if (length <= 0) return element_bits;
  return static_cast<double>(VectorBits(length)) / static_cast<double>(length);
}

Result<ElementFormat> ParseElementFormat(std::string_view name) {
  if (name == "fp8") name = "fp8-e4m3";
  if (name == "int4") return IntGroup(4, kDefaultIntGroup);
  if (name == "int2") return IntGroup(2, kDefaultIntGroup);
  for (ElementFormat& f : FixedFormats()) {
    if (f.name == name) return f;
  }
  for (int bits : {4, 2}) {
    const std::string prefix = "int" + std::to_string(bits) + "-g";
    if (name.starts_with(prefix)) {
      const std::string_view digits = name.substr(prefix.size());
      int group = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), group);
      const bool power_of_two = group > 0 && (group & (group - 1)) == 0;
      if (ec != std::errc() || ptr != digits.data() + digits.size() || !power_of_two || group < 8 ||
          group > 1024) {
        return Error("bad group size in \"" + std::string(name) +
                     "\" (expected a power of two from 8 to 1024, e.g. int4-g64)");
      }
      return IntGroup(bits, group);
    }
  }
  // Names are lower case: "FP8" is a typo of one, said so.
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower != name && ParseElementFormat(lower)) {
    return Error("unknown format \"" + std::string(name) + "\" (format names are lower case: \"" +
                 lower + "\")");
  }
  std::string known;
  for (const std::string& n : ElementFormatNames()) known += (known.empty() ? "" : ", ") + n;
  return Error("unknown format \"" + std::string(name) + "\" (known: " + known + ")");
}

std::int64_t WeightFormat::Bits(std::int64_t rows, std::int64_t cols) const {
  if (rows <= 0 || cols <= 0) return 0;
  std::int64_t bits = rows * cols * element_bits;
  if (group_size > 0 && group_bits > 0)
    bits += rows * ((cols + group_size - 1) / group_size) * group_bits;
  if (block_rows > 0 && block_cols > 0 && block_bits > 0) {
    bits += ((rows + block_rows - 1) / block_rows) * ((cols + block_cols - 1) / block_cols) *
            block_bits;
  }
  if (flat_group_size > 0 && flat_group_bits > 0)
    bits += (rows * cols + flat_group_size - 1) / flat_group_size * flat_group_bits;
  return bits + rows * row_bits + cols * col_bits + tensor_bits;
}

Result<WeightFormat> WeightFormatFromElement(std::string_view name) {
  auto e = ParseElementFormat(name);
  if (!e) return e.error();
  WeightFormat w;
  w.name = e->name;
  w.compute = e->name;
  w.element_bits = e->element_bits;
  if (e->group_size == ElementFormat::kGroupIsVector) {
    w.row_bits = e->metadata_bits_per_group;  // one scale per row
  } else if (e->group_size > 0) {
    w.group_size = e->group_size;
    w.group_bits = e->metadata_bits_per_group;
  }
  if (e->name.starts_with("fp8")) w.tensor_bits = 32;  // one fp32 scale per tensor
  if (e->name.starts_with("int")) w.compute = "bf16";  // weight-only: matmuls at 16 bits
  return w;
}

std::vector<std::string> ElementFormatNames() {
  std::vector<std::string> names;
  for (const ElementFormat& f : FixedFormats()) names.push_back(f.name);
  names.insert(names.begin() + 3, "fp8");
  names.push_back("int4");
  names.push_back("int2");
  names.push_back("int4-gN");
  names.push_back("int2-gN");
  return names;
}

}  // namespace kvbill
