// GPU specifications: the bundled catalog (scenarios/gpus.json, sources in
// docs/hardware.md) and user-supplied spec files of the same shape. Which
// formats a GPU runs, and how, is its architecture's column of the format
// matrix (hardware/format_support.h).
#ifndef KVBILL_HARDWARE_GPU_H_
#define KVBILL_HARDWARE_GPU_H_

#include <string>
#include <vector>

#include "kvbill/model/kv_format.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

struct GpuSpec {
  std::string id;                 // catalog id, e.g. "h100-sxm"
  std::string name;               // marketing name
  double memory_gb = 0;           // as marketed, 10^9 bytes
  Bytes usable_memory_bytes = 0;  // what the driver reports as total
  double hbm_bandwidth_bytes_per_s = 0;
  double bf16_flops_per_s = 0;  // dense
  double fp8_flops_per_s = 0;   // dense; 0 when not supported
  double fp4_flops_per_s = 0;   // dense; 0 when not supported
  double usd_per_gpu_hour = 0;
  // Where the price comes from and when ("2026-05"); empty in a user's file
  // that does not say (docs/hardware.md).
  std::string price_source;
  std::string price_date;
  // The format matrix's column: "ampere", "ada", "hopper", "blackwell",
  // "blackwell-rtx", "cdna3", "cdna4" (format_support.h lists them).
  std::string architecture = "hopper";
  // The GPU-to-GPU link inside a node: "nvlink", "pcie" or
  // "infinity_fabric", and its bandwidth in one direction per GPU.
  std::string interconnect = "nvlink";
  double link_bytes_per_s = 0;
  // The GPUs that link joins (a node; GB200's NVL72 rack), and each GPU's
  // network link beyond them (its scale-out NIC), one direction: what a
  // collective over more GPUs than the link joins runs at.
  int link_gpus = 8;
  double network_bytes_per_s = 25e9;
  // A server whose GPUs the link joins in smaller groups (H100 NVL: pairs
  // on an NVLink bridge in a PCIe server of 8): its GPUs, and each GPU's
  // link to the others (PCIe Gen5 x16, one direction), which a collective
  // over more GPUs than a group but not more than the server runs at.
  // 0: none (beyond link_gpus is the network).
  int server_gpus = 0;
  double server_bytes_per_s = 0;

  // Dense peak FLOP/s of matmuls with weights stored in `weight_format`,
  // at the precision the format matrix says this GPU computes them in:
  // the fp8 rate for W8A8 fp8, the fp4 rate for W4A4 nvfp4 (Blackwell),
  // the 16-bit rate for 16-bit and weight-only (WnA16) formats and for a
  // format the GPU does not run.
  double DenseFlopsPerS(const ElementFormat& weight_format) const;
};

// The most a GPU's link to its host carries in one direction, raw: PCIe
// Gen4 x16 (16 GT/s x 16 lanes, 128b/130b: 31.5 GB/s, read 32) on Ampere
// and Ada, Gen5 x16 (63 GB/s, read 64) on Hopper, Blackwell (B200, RTX PRO
// 6000) and AMD's CDNA3/4, Gen6 x16 (128) on the B300, and NVLink-C2C to
// the Grace CPU on a GB200 (900 GB/s both ways, 450 one way). Copies reach
// about four fifths of a PCIe link. A bound for the host offload tier's
// link_gb_s (the offload_implausible warning), not a timing.
struct HostLink {
  std::string name;  // "PCIe Gen5 x16"
  double bytes_per_s = 0;
};
HostLink HostLinkOf(const GpuSpec& gpu);

// The bundled catalog, in file order.
const std::vector<GpuSpec>& GpuCatalog();

// A catalog id, or a path to a JSON file holding one GPU object of the
// catalog's shape. Error lists the catalog ids.
Result<GpuSpec> LookupGpu(const std::string& id_or_path);

// The catalog entry with `gpu`'s id when every figure a kernel's speed
// depends on (HBM bandwidth, dense FLOP/s of each precision, architecture,
// the GPU-to-GPU link) is the catalog's: only then do that id's measured
// kernels time it. nullptr for an id the catalog lacks, or a file that
// keeps a catalog id but changes its speeds (a "what if HBM were slower"
// copy). Memory and price may differ: they change no kernel's time.
const GpuSpec* CatalogTwin(const GpuSpec& gpu);

// Parses a catalog document {"gpus": [...]}; `source` names it in errors,
// which give the JSON path ("gpus.json#/gpus/2/hbm_bandwidth_tb_s: ...").
Result<std::vector<GpuSpec>> ParseGpuCatalog(const std::string& json_text,
                                             const std::string& source);

}  // namespace kvbill

#endif  // KVBILL_HARDWARE_GPU_H_
