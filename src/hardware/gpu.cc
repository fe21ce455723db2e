#include "kvbill/hardware/gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kvbill/hardware/format_support.h"
#include "kvbill/util/embedded.h"
#include "kvbill/util/file.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

using nlohmann::json;

// A positive number within [least, most] (docs/hardware.md: ranges wide
// enough for any GPU, narrow enough that a typo cannot price a run at 1e300).
Result<double> PositiveNumber(const json& obj, const std::string& key, const std::string& where,
                              bool required, double least, double most) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Error(where + "/" + key + ": missing");
    return 0.0;
  }
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0) {
    return Error(where + "/" + key + ": must be a positive number, got " + json_input::Quote(*it));
  }
  const double x = it->get<double>();
  if (x < least || x > most) {
    return Error(where + "/" + key + ": must be " + json_input::RangeText(least, most) +
                 " (docs/hardware.md), got " + json_input::Quote(*it));
  }
  return x;
}

// "2026-05" or "2026-05-14" (a month or a day; the day is not checked
// against the month's length: a catalog date, not a timestamp).
bool IsYearMonth(const std::string& text) {
  const auto digits = [&](std::size_t from, std::size_t n) {
    for (std::size_t i = from; i < from + n; ++i) {
      if (i >= text.size() || text[i] < '0' || text[i] > '9') return false;
    }
    return true;
  };
  if (!(text.size() == 7 || text.size() == 10) || !digits(0, 4) || text[4] != '-' ||
      !digits(5, 2)) {
    return false;
  }
  const int month = (text[5] - '0') * 10 + (text[6] - '0');
  if (month < 1 || month > 12) return false;
  if (text.size() == 7) return true;
  const int day = (text[8] - '0') * 10 + (text[9] - '0');
  return text[7] == '-' && digits(8, 2) && day >= 1 && day <= 31;
}

Result<GpuSpec> ParseGpu(const json& g, const std::string& where) {
  if (!g.is_object()) return Error(where + ": must be an object");
  static const char* const kKnown[] = {"id",
                                       "name",
                                       "memory_gb",
                                       "usable_memory_gib",
                                       "hbm_bandwidth_tb_s",
                                       "dense_tflops",
                                       "usd_per_gpu_hour",
                                       "price_source",
                                       "price_date",
                                       "architecture",
                                       "interconnect",
                                       "_comment"};
  for (auto it = g.begin(); it != g.end(); ++it) {
    if (std::find(std::begin(kKnown), std::end(kKnown), it.key()) == std::end(kKnown)) {
      return Error(where + "/" + it.key() + ": unknown key");
    }
  }
  GpuSpec s;
  if (!g.contains("id") || !g["id"].is_string() || g["id"].get<std::string>().empty()) {
    return Error(where + "/id: missing or not a string");
  }
  s.id = g["id"].get<std::string>();
  s.name = s.id;
  if (g.contains("name")) {
    if (!g["name"].is_string()) return Error(where + "/name: not a string");
    s.name = g["name"].get<std::string>();
  }
  auto mem = PositiveNumber(g, "memory_gb", where, true, 0.1, 1e6);
  if (!mem) return mem.error();
  s.memory_gb = *mem;
  auto usable = PositiveNumber(g, "usable_memory_gib", where, false, 0.1, 1e6);
  if (!usable) return usable.error();
  // What the driver leaves usable is at most what the card holds; a
  // vendor's "80 GB" of HBM is 80 GiB (the H100's 79.6 GiB usable is more
  // than 80 x 10^9 bytes), so memory_gb bounds it read as GiB.
  if (*usable > *mem) {
    std::ostringstream why;
    why << where << "/usable_memory_gib: " << *usable << " is more than the card's memory_gb "
        << *mem << " (a vendor's GB of HBM are GiB: at most " << *mem << " GiB are usable)";
    return Error(why.str());
  }
  s.usable_memory_bytes =
      static_cast<Bytes>(std::llround(*usable > 0 ? *usable * kBytesPerGiB : *mem * kBytesPerGB));
  auto bw = PositiveNumber(g, "hbm_bandwidth_tb_s", where, true, 1e-3, 1e3);
  if (!bw) return bw.error();
  s.hbm_bandwidth_bytes_per_s = *bw * 1e12;
  if (!g.contains("dense_tflops") || !g["dense_tflops"].is_object()) {
    return Error(where + "/dense_tflops: missing (an object like {\"bf16\": 989})");
  }
  const json& f = g["dense_tflops"];
  const std::string fw = where + "/dense_tflops";
  for (auto it = f.begin(); it != f.end(); ++it) {
    if (it.key() != "bf16" && it.key() != "fp8" && it.key() != "fp4") {
      return Error(fw + "/" + it.key() + ": unknown key (bf16, fp8, fp4)");
    }
  }
  auto bf16 = PositiveNumber(f, "bf16", fw, true, 1e-3, 1e6);
  if (!bf16) return bf16.error();
  auto fp8 = PositiveNumber(f, "fp8", fw, false, 1e-3, 1e6);
  if (!fp8) return fp8.error();
  auto fp4 = PositiveNumber(f, "fp4", fw, false, 1e-3, 1e6);
  if (!fp4) return fp4.error();
  s.bf16_flops_per_s = *bf16 * 1e12;
  s.fp8_flops_per_s = *fp8 * 1e12;
  s.fp4_flops_per_s = *fp4 * 1e12;
  auto price = PositiveNumber(g, "usd_per_gpu_hour", where, true, 1e-6, 1e6);
  if (!price) return price.error();
  s.usd_per_gpu_hour = *price;
  // Where the price comes from and when it was seen: a price without them is
  // the user's own.
  for (const auto& [key, target] :
       {std::pair{"price_source", &s.price_source}, {"price_date", &s.price_date}}) {
    if (!g.contains(key)) continue;
    if (!g[key].is_string() || g[key].get<std::string>().empty()) {
      return Error(where + "/" + key + ": must be a non-empty string, got " +
                   json_input::Quote(g[key]));
    }
    *target = g[key].get<std::string>();
  }
  if (!s.price_date.empty() && !IsYearMonth(s.price_date)) {
    return Error(where +
                 "/price_date: must be a month like \"2026-05\" or a day like "
                 "\"2026-05-14\", got " +
                 json_input::Quote(g["price_date"]));
  }
  // The architecture (the format matrix's column); a file without one gets
  // the newest NVIDIA architecture its tensor rates imply.
  s.architecture = s.fp4_flops_per_s > 0   ? "blackwell"
                   : s.fp8_flops_per_s > 0 ? "hopper"
                                           : "ampere";
  if (auto it = g.find("architecture"); it != g.end()) {
    const auto& known = GpuArchitectures();
    if (!it->is_string() ||
        (!known.empty() && std::none_of(known.begin(), known.end(), [&](const GpuArchitecture& a) {
          return a.id == it->get<std::string>();
        }))) {
      std::string ids;
      for (const GpuArchitecture& a : known) ids += (ids.empty() ? "" : ", ") + a.id;
      return Error(where + "/architecture: unknown architecture " + json_input::Quote(*it) + " (" +
                   ids + ")");
    }
    s.architecture = it->get<std::string>();
  }
  // The GPU-to-GPU link; a file without one: PCIe Gen4 x16 (32 GB/s), in
  // nodes of 8 GPUs with a 200 Gb/s NIC each (25 GB/s).
  s.interconnect = "pcie";
  s.link_bytes_per_s = 32e9;
  s.link_gpus = 8;
  s.network_bytes_per_s = 25e9;
  if (auto it = g.find("interconnect"); it != g.end()) {
    const std::string iw = where + "/interconnect";
    if (!it->is_object())
      return Error(iw + ": must be an object like {\"kind\": \"nvlink\", \"gb_s\": 450}");
    for (auto k = it->begin(); k != it->end(); ++k) {
      if (k.key() != "kind" && k.key() != "gb_s" && k.key() != "gpus" &&
          k.key() != "network_gb_s" && k.key() != "server_gpus" && k.key() != "server_gb_s") {
        return Error(iw + "/" + k.key() +
                     ": unknown key (kind, gb_s, gpus, network_gb_s, server_gpus, server_gb_s)");
      }
    }
    auto kind = it->find("kind");
    if (kind == it->end() || !kind->is_string() ||
        (*kind != "nvlink" && *kind != "pcie" && *kind != "infinity_fabric")) {
      return Error(
          iw + "/kind: must be \"nvlink\", \"pcie\" or \"infinity_fabric\"" +
          (kind == it->end() ? std::string(", missing") : ", got " + json_input::Quote(*kind)));
    }
    auto gb_s = PositiveNumber(*it, "gb_s", iw, true, 1e-3, 1e6);
    if (!gb_s) return gb_s.error();
    s.interconnect = kind->get<std::string>();
    s.link_bytes_per_s = *gb_s * 1e9;
    if (auto n = it->find("gpus"); n != it->end()) {
      if (!n->is_number_integer() || n->get<std::int64_t>() < 1 ||
          n->get<std::int64_t>() > 100000) {
        return Error(iw + "/gpus: must be a whole number of GPUs in [1, 100000], got " +
                     json_input::Quote(*n));
      }
      s.link_gpus = static_cast<int>(n->get<std::int64_t>());
    }
    auto network = PositiveNumber(*it, "network_gb_s", iw, false, 1e-3, 1e6);
    if (!network) return network.error();
    if (*network > 0) s.network_bytes_per_s = *network * 1e9;
    // A server of several link groups: both keys or neither.
    const auto server = it->find("server_gpus");
    auto server_gb_s = PositiveNumber(*it, "server_gb_s", iw, false, 1e-3, 1e6);
    if (!server_gb_s) return server_gb_s.error();
    if ((server != it->end()) != (*server_gb_s > 0)) {
      return Error(iw + "/" + (server == it->end() ? "server_gpus" : "server_gb_s") +
                   ": missing (server_gpus and server_gb_s go together: a server's GPUs and "
                   "each GPU's link between its link groups)");
    }
    if (server != it->end()) {
      if (!server->is_number_integer() || server->get<std::int64_t>() <= s.link_gpus ||
          server->get<std::int64_t>() > 100000) {
        return Error(iw + "/server_gpus: must be a whole number of GPUs above gpus (" +
                     std::to_string(s.link_gpus) + ") and at most 100000, got " +
                     json_input::Quote(*server));
      }
      s.server_gpus = static_cast<int>(server->get<std::int64_t>());
      s.server_bytes_per_s = *server_gb_s * 1e9;
    }
  }
  return s;
}

}  // namespace

HostLink HostLinkOf(const GpuSpec& gpu) {
  if (gpu.id == "gb200") return {"NVLink-C2C to its Grace CPU", 450e9};
  if (gpu.id == "b300") return {"PCIe Gen6 x16", 128e9};
  if (gpu.architecture == "ampere" || gpu.architecture == "ada") return {"PCIe Gen4 x16", 32e9};
  return {"PCIe Gen5 x16", 64e9};
}

double GpuSpec::DenseFlopsPerS(const ElementFormat& weight_format) const {
  const FormatRun run = HowGpuRuns(*this, FormatRole::kWeights, weight_format);
  if (!run.runs()) return bf16_flops_per_s;
  if (run.cell.computed == "fp4" && fp4_flops_per_s > 0) return fp4_flops_per_s;
  if ((run.cell.computed == "fp8" || run.cell.computed == "fp4") && fp8_flops_per_s > 0) {
    return fp8_flops_per_s;
  }
  return bf16_flops_per_s;
}

Result<std::vector<GpuSpec>> ParseGpuCatalog(const std::string& json_text,
                                             const std::string& source) {
  json_input::Problem problem;
  const auto parsed = json_input::Parse(json_text, &problem);
  if (!parsed) return Error(json_input::Describe(source, json_text, problem));
  const json& doc = *parsed;
  if (!doc.is_object() || !doc.contains("gpus") || !doc["gpus"].is_array()) {
    return Error(source + "#/gpus: missing (expected {\"gpus\": [...]})");
  }
  std::vector<GpuSpec> out;
  for (std::size_t i = 0; i < doc["gpus"].size(); ++i) {
    auto gpu = ParseGpu(doc["gpus"][i], source + "#/gpus/" + std::to_string(i));
    if (!gpu) return gpu.error();
    out.push_back(*gpu);
  }
  return out;
}

const std::vector<GpuSpec>& GpuCatalog() {
  static const std::vector<GpuSpec> catalog = [] {
    auto text = EmbeddedFile("gpus.json");
    auto parsed = ParseGpuCatalog(std::string(text.value_or("")), "gpus.json");
    return parsed ? *parsed : std::vector<GpuSpec>{};
  }();
  return catalog;
}

const GpuSpec* CatalogTwin(const GpuSpec& gpu) {
  for (const GpuSpec& g : GpuCatalog()) {
    if (g.id != gpu.id) continue;
    const bool same =
        g.hbm_bandwidth_bytes_per_s == gpu.hbm_bandwidth_bytes_per_s &&
        g.bf16_flops_per_s == gpu.bf16_flops_per_s && g.fp8_flops_per_s == gpu.fp8_flops_per_s &&
        g.fp4_flops_per_s == gpu.fp4_flops_per_s && g.architecture == gpu.architecture &&
        g.interconnect == gpu.interconnect && g.link_bytes_per_s == gpu.link_bytes_per_s &&
        g.link_gpus == gpu.link_gpus && g.network_bytes_per_s == gpu.network_bytes_per_s;
    return same ? &g : nullptr;
  }
  return nullptr;
}

Result<GpuSpec> LookupGpu(const std::string& id_or_path) {
  for (const GpuSpec& g : GpuCatalog()) {
    if (g.id == id_or_path) return g;
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(id_or_path, ec)) {
    auto text = ReadFile(id_or_path);
    if (!text) return text.error();
    json_input::Problem problem;
    const auto doc = json_input::Parse(*text, &problem);
    if (!doc) return Error(json_input::Describe(id_or_path, *text, problem));
    return ParseGpu(*doc, id_or_path + "#");
  }
  std::string ids;
  for (const GpuSpec& g : GpuCatalog()) ids += (ids.empty() ? "" : ", ") + g.id;
  return Error("--gpu \"" + id_or_path + "\": unknown GPU (catalog: " + ids +
               "; or a path to a GPU JSON file)");
}

}  // namespace kvbill
