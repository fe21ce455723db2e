// kvbill models / kvbill gpus: list the bundled catalogs.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_util.h"
#include "kvbill/hardware/format_support.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/report/table.h"
#include "kvbill/util/embedded.h"

namespace kvbill::cli {

int RunModels(const Args& args) {
  po::options_description options("options");
  std::string format;
  options.add_options()("format", po::value(&format)->default_value("table"), "table or json");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "models",
                               "usage: kvbill models [--format table|json]\n\n"
                               "The bundled model catalog (scenarios/models/, docs/models.md).\n",
                               options, vm)) {
    return *stop;
  }
  if (auto s = CheckChoice("format", format, "table|json"); !s) {
    return ReportError("models", s.error());
  }
  auto bf16 = ParseElementFormat("bf16");
  Table t({"name", "architecture", "layers", "KV bytes/token (bf16)", "params", "active"});
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const CatalogModel& entry : ModelCatalog()) {
    auto m = ParseHfConfig(entry.config, "models/" + entry.name + ".json", entry.name);
    if (!m) return ReportError("models", m.error());
    const double bpt = BytesPerToken(*m, *bf16);
    t.AddRow({m->name, m->architecture, std::to_string(m->DecoderLayers()),
              FormatWithSeparators(static_cast<std::int64_t>(bpt)),
              FormatFixed(static_cast<double>(m->params.Total()) / 1e9, 2) + "B",
              FormatFixed(static_cast<double>(m->params.Active()) / 1e9, 2) + "B"});
    j.push_back({{"name", m->name},
                 {"architecture", m->architecture},
                 {"layers", m->DecoderLayers()},
                 {"bf16_bytes_per_token", bpt},
                 {"params_total", m->params.Total()},
                 {"params_active", m->params.Active()}});
  }
  std::cout << (format == "json" ? j.dump(2) + "\n" : t.ToText());
  return 0;
}

int RunGpus(const Args& args) {
  po::options_description options("options");
  std::string format;
  bool formats = false;
  options.add_options()("format", po::value(&format)->default_value("table"), "table or json")(
      "formats", po::bool_switch(&formats),
      "print the format matrix (Markdown; with --format json the catalog's own): how each "
      "architecture runs each format");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "gpus",
                               "usage: kvbill gpus [--format table|json] [--formats]\n\n"
                               "The bundled GPU catalog (scenarios/gpus.json, sources in "
                               "docs/hardware.md). Dense TFLOP/s. --formats prints the format "
                               "matrix instead: what each architecture stores and computes for "
                               "each weight and KV format (docs/hardware.md#formats).\n",
                               options, vm)) {
    return *stop;
  }
  if (auto s = CheckChoice("format", format, "table|json"); !s)
    return ReportError("gpus", s.error());
  if (formats) {
    if (format == "json") {
      // The matrix as the catalog holds it, with its sources.
      const auto text = EmbeddedFile("gpus.json");
      const auto catalog = nlohmann::ordered_json::parse(std::string(*text));
      nlohmann::ordered_json j;
      j["architectures"] = catalog["architectures"];
      j["formats"] = catalog["formats"];
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::cout << FormatMatrixMarkdown();
    return 0;
  }
  Table t({"id", "name", "usable GiB", "HBM TB/s", "BF16 TFLOP/s", "FP8 TFLOP/s", "FP4 TFLOP/s",
           "$/GPU-hour", "price as of", "architecture", "link"});
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  auto tflops = [](double f) { return f > 0 ? FormatFixed(f / 1e12, 0) : std::string("-"); };
  for (const GpuSpec& g : GpuCatalog()) {
    t.AddRow(
        {g.id, g.name, FormatFixed(static_cast<double>(g.usable_memory_bytes) / kBytesPerGiB, 1),
         FormatFixed(g.hbm_bandwidth_bytes_per_s / 1e12, 2), tflops(g.bf16_flops_per_s),
         tflops(g.fp8_flops_per_s), tflops(g.fp4_flops_per_s),
         "$" + FormatFixed(g.usd_per_gpu_hour, 2), g.price_date.empty() ? "-" : g.price_date,
         g.architecture,
         g.interconnect + " " + FormatFixed(g.link_bytes_per_s / 1e9, 0) + " GB/s x" +
             std::to_string(g.link_gpus) +
             (g.server_gpus > 0 ? ", server pcie " + FormatFixed(g.server_bytes_per_s / 1e9, 0) +
                                      " GB/s x" + std::to_string(g.server_gpus)
                                : std::string()) +
             ", net " + FormatFixed(g.network_bytes_per_s / 1e9, 0) + " GB/s"});
    j.push_back({{"id", g.id},
                 {"name", g.name},
                 {"usable_memory_bytes", g.usable_memory_bytes},
                 {"hbm_bandwidth_bytes_per_s", g.hbm_bandwidth_bytes_per_s},
                 {"bf16_flops_per_s", g.bf16_flops_per_s},
                 {"fp8_flops_per_s", g.fp8_flops_per_s},
                 {"fp4_flops_per_s", g.fp4_flops_per_s},
                 {"usd_per_gpu_hour", g.usd_per_gpu_hour},
                 {"price_source", g.price_source},
                 {"price_date", g.price_date},
                 {"architecture", g.architecture},
                 {"interconnect", g.interconnect},
                 {"link_bytes_per_s", g.link_bytes_per_s},
                 {"link_gpus", g.link_gpus},
                 {"network_bytes_per_s", g.network_bytes_per_s},
                 {"server_gpus", g.server_gpus},
                 {"server_bytes_per_s", g.server_bytes_per_s}});
  }
  std::cout << (format == "json" ? j.dump(2) + "\n" : t.ToText());
  return 0;
}

}  // namespace kvbill::cli
