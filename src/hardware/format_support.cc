#include "kvbill/hardware/format_support.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "kvbill/model/weight_bytes.h"
#include "kvbill/util/embedded.h"
#include "util/json_input.h"

namespace kvbill {
namespace {

using nlohmann::ordered_json;

const char* RoleKey(FormatRole role) {
  return role == FormatRole::kWeights ? "weights" : "kv_cache";
}

const char* RoleWords(FormatRole role) {
  return role == FormatRole::kWeights ? "weights" : "KV cache";
}

constexpr const char* kComputed[] = {"bf16", "fp32",  "fp8",   "fp4",
                                     "int8", "w8a16", "w4a16", "w2a16"};

Result<std::string> Text(const ordered_json& obj, const char* key, const std::string& where,
                         bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return Error(where + "/" + key + ": missing");
    return std::string();
  }
  if (!it->is_string() || it->get<std::string>().empty()) {
    return Error(where + "/" + key + ": must be a non-empty string, got " + json_input::Quote(*it));
  }
  return it->get<std::string>();
}

Result<FormatCell> ParseCell(const ordered_json& c, const std::string& where) {
  if (!c.is_object()) return Error(where + ": must be an object");
  for (auto it = c.begin(); it != c.end(); ++it) {
    static const char* const kKnown[] = {"runs",          "computed",         "kernel",
                                         "note",          "source",           "reason",
                                         "experts_table", "dense_dequantised"};
    if (std::find_if(std::begin(kKnown), std::end(kKnown),
                     [&](const char* k) { return it.key() == k; }) == std::end(kKnown)) {
      return Error(where + "/" + it.key() + ": unknown key");
    }
  }
  FormatCell cell;
  if (auto it = c.find("runs"); it != c.end()) {
    if (!it->is_boolean())
      return Error(where + "/runs: must be true or false, got " + json_input::Quote(*it));
    cell.runs = it->get<bool>();
  }
  auto source = Text(c, "source", where, cell.runs);
  if (!source) return source.error();
  cell.source = *source;
  if (!cell.runs) {
    auto reason = Text(c, "reason", where, true);
    if (!reason) return reason.error();
    cell.reason = *reason;
    for (const char* k : {"computed", "kernel", "note", "experts_table", "dense_dequantised"}) {
      if (c.contains(k)) return Error(where + "/" + k + ": not with \"runs\": false");
    }
    return cell;
  }
  if (c.contains("reason")) return Error(where + "/reason: only with \"runs\": false");
  auto computed = Text(c, "computed", where, true);
  if (!computed) return computed.error();
  if (std::find_if(std::begin(kComputed), std::end(kComputed),
                   [&](const char* k) { return *computed == k; }) == std::end(kComputed)) {
    return Error(where + "/computed: unknown precision \"" + *computed +
                 "\" (bf16, fp32, fp8, fp4, int8, w8a16, w4a16, w2a16)");
  }
  cell.computed = *computed;
  auto kernel = Text(c, "kernel", where, true);
  if (!kernel) return kernel.error();
  cell.kernel = *kernel;
  auto note = Text(c, "note", where, false);
  if (!note) return note.error();
  cell.note = *note;
  if (auto it = c.find("dense_dequantised"); it != c.end()) {
    if (!it->is_boolean()) {
      return Error(where + "/dense_dequantised: must be true or false, got " +
                   json_input::Quote(*it));
    }
    cell.dense_dequantised = it->get<bool>();
  }
  auto table = Text(c, "experts_table", where, false);
  if (!table) return table.error();
  cell.experts_table = *table;
  if (cell.experts_table.empty()) {
    cell.experts_table =
        cell.computed == "bf16" || cell.computed == "fp32"                            ? "bf16"
        : cell.computed == "fp8" || cell.computed == "fp4" || cell.computed == "int8" ? "fp8_block"
                                                                                      : "int4";
  }
  if (cell.experts_table != "bf16" && cell.experts_table != "fp8_block" &&
      cell.experts_table != "int4" && cell.experts_table != "mxfp4") {
    return Error(where + "/experts_table: unknown table \"" + cell.experts_table +
                 "\" (bf16, fp8_block, int4, mxfp4)");
  }
  return cell;
}

const FormatMatrix& Bundled() {
  static const FormatMatrix matrix = [] {
    auto text = EmbeddedFile("gpus.json");
    auto parsed = ParseFormatMatrix(std::string(text.value_or("")), "gpus.json");
    return parsed ? *parsed : FormatMatrix{};
  }();
  return matrix;
}

// The matrix row a format falls in: its name without what a checkpoint's
// quantization adds to it ("fp8-e4m3 (128x128 blocks)", "int4-g128 (awq)",
// "nvfp4-g16 (compressed-tensors)", "fp8-channel (compressed-tensors)"),
// group sizes dropped, fp16 filed with bf16 and compressed-tensors' "fp8"
// with E4M3.
std::string RowOf(const ElementFormat& format) {
  std::string n = format.name.substr(0, format.name.find(" ("));
  for (const std::string suffix : {"-channel", "-block"}) {
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      n.erase(n.size() - suffix.size());
  }
  if (const std::size_t g = n.rfind("-g");
      g != std::string::npos && g + 2 < n.size() &&
      n.find_first_not_of("0123456789", g + 2) == std::string::npos) {
    n.erase(g);
  }
  if (n == "fp16") return "bf16";
  if (n == "fp8") return "fp8-e4m3";
  return n;
}

std::string ArchitectureName(const std::string& id) {
  for (const GpuArchitecture& a : Bundled().architectures) {
    if (a.id == id) return a.name;
  }
  return id;
}

std::string Bits(double bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", bits);
  return buf;
}

}  // namespace

Result<FormatMatrix> ParseFormatMatrix(const std::string& json_text, const std::string& source) {
  json_input::Problem problem;
  const auto document = json_input::ParseOrdered(json_text, &problem);
  if (!document) return Error(json_input::Describe(source, json_text, problem));
  const ordered_json& doc = *document;
  FormatMatrix m;
  const std::string aw = source + "#/architectures";
  if (!doc.contains("architectures") || !doc["architectures"].is_object() ||
      doc["architectures"].empty()) {
    return Error(aw + ": missing (an object of architectures)");
  }
  for (auto it = doc["architectures"].begin(); it != doc["architectures"].end(); ++it) {
    const std::string where = aw + "/" + it.key();
    if (it.key() == "all") return Error(where + ": \"all\" is reserved");
    if (!it->is_object()) return Error(where + ": must be an object");
    auto name = Text(*it, "name", where, true);
    if (!name) return name.error();
    auto capability = Text(*it, "capability", where, true);
    if (!capability) return capability.error();
    m.architectures.push_back(GpuArchitecture{it.key(), *name, *capability});
  }
  const std::string fw = source + "#/formats";
  if (!doc.contains("formats") || !doc["formats"].is_object()) {
    return Error(fw + ": missing (an object with \"weights\" and \"kv_cache\")");
  }
  for (FormatRole role : {FormatRole::kWeights, FormatRole::kKvCache}) {
    const std::string rw = fw + "/" + RoleKey(role);
    const auto rows = doc["formats"].find(RoleKey(role));
    if (rows == doc["formats"].end() || !rows->is_object()) return Error(rw + ": missing");
    for (auto row = rows->begin(); row != rows->end(); ++row) {
      const std::string where = rw + "/" + row.key();
      if (!row->is_object() || row->empty()) return Error(where + ": must be an object of cells");
      FormatMatrix::Row r;
      r.role = role;
      r.format = row.key();
      bool has_all = false;
      for (auto cell = row->begin(); cell != row->end(); ++cell) {
        const bool all = cell.key() == "all";
        if (!all && std::none_of(m.architectures.begin(), m.architectures.end(),
                                 [&](const GpuArchitecture& a) { return a.id == cell.key(); })) {
          return Error(where + "/" + cell.key() + ": unknown architecture (see /architectures)");
        }
        auto parsed = ParseCell(*cell, where + "/" + cell.key());
        if (!parsed) return parsed.error();
        r.cells.emplace_back(cell.key(), *parsed);
        has_all = has_all || all;
      }
      if (!has_all) {
        for (const GpuArchitecture& a : m.architectures) {
          if (std::none_of(r.cells.begin(), r.cells.end(),
                           [&](const auto& c) { return c.first == a.id; })) {
            return Error(where + ": no cell for " + a.id + " (and no \"all\")");
          }
        }
      }
      std::stable_partition(r.cells.begin(), r.cells.end(),
                            [](const auto& c) { return c.first != "all"; });
      m.rows.push_back(std::move(r));
    }
  }
  return m;
}

const std::vector<GpuArchitecture>& GpuArchitectures() { return Bundled().architectures; }

FormatRun HowGpuRuns(const GpuSpec& gpu, FormatRole role, const ElementFormat& format) {
  FormatRun run;
  run.role = role;
  run.format = format.name;
  run.stored_bits = format.BitsPerElement(128);
  run.matrix_row = RowOf(format);
  run.gpu = gpu.id;
  run.architecture = gpu.architecture;
  for (const FormatMatrix::Row& row : Bundled().rows) {
    if (row.role != role || row.format != run.matrix_row) continue;
    for (const auto& [arch, cell] : row.cells) {
      if (arch == gpu.architecture || arch == "all") {
        run.cell = cell;
        return run;
      }
    }
  }
  // Not in the matrix: as its width suggests.
  run.cell.computed = format.element_bits >= 16  ? "bf16"
                      : format.element_bits >= 8 ? "w8a16"
                                                 : "w4a16";
  run.cell.kernel = "unknown";
  run.cell.note = "not in the format matrix: timed as its width suggests";
  run.cell.experts_table = run.cell.computed == "bf16" ? "bf16" : "int4";
  return run;
}

Status CheckGpuRuns(const GpuSpec& gpu, FormatRole role, const ElementFormat& format) {
  const FormatRun run = HowGpuRuns(gpu, role, format);
  if (run.runs()) return OkStatus();
  return Error(run.Describe());
}

Status CheckCheckpointRuns(const GpuSpec& gpu, const ModelShape& model) {
  auto native = NativePartFormats(model);
  if (!native) return native.error();
  for (const ElementFormat* part : {&native->dense, &native->other}) {
    if (auto run = CheckGpuRuns(gpu, FormatRole::kWeights, *part); !run) return run;
  }
  if (model.moe.layers > 0) return CheckGpuRuns(gpu, FormatRole::kWeights, native->experts);
  return OkStatus();
}

bool IsWeightOnlyFallback(std::string_view stored, std::string_view computed_label) {
  const bool activation_format = stored.starts_with("fp8") || stored.starts_with("nvfp4");
  return activation_format && computed_label.ends_with("A16");
}

std::string WeightOnlyFallbackWarning(const std::string& gpu, const std::string& parts) {
  return gpu +
         " has no units for the format's arithmetic, so the engine runs a weight-only fallback: " +
         parts + "; it saves memory but not compute (docs/hardware.md#formats)";
}

std::string FormatRun::ComputedLabel() const {
  const std::string& c = cell.computed;
  if (role == FormatRole::kKvCache) {
    if (c == "fp8") return "FP8 attention";
    if (c == "fp32") return "FP32 attention";
    return "16-bit attention";
  }
  if (c == "fp8") return "W8A8 (FP8)";
  if (c == "int8") return "W8A8 (INT8)";
  if (c == "fp4") return "W4A4 (FP4)";
  if (c == "fp32") return "FP32";
  if (c == "bf16") return "BF16";
  std::string upper = c;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return upper;
}

std::string FormatRun::Describe(bool with_note) const {
  const std::string what = format + " " + RoleWords(role) + " on " + gpu;
  if (!runs()) {
    return what + " (" + ArchitectureName(architecture) + "): no engine runs it: " + cell.reason;
  }
  std::string out = what + ": stored at " + Bits(stored_bits) + " bits, computed as " +
                    ComputedLabel() + " (" + cell.kernel + ")";
  if (with_note && !cell.note.empty()) out += "; " + cell.note;
  return out;
}

std::string FormatMatrixMarkdown() {
  const FormatMatrix& m = Bundled();
  std::string out;
  for (FormatRole role : {FormatRole::kWeights, FormatRole::kKvCache}) {
    out += std::string(role == FormatRole::kWeights ? "Weights" : "KV cache") + ":\n\n| format |";
    std::string rule = "|---|";
    for (const GpuArchitecture& a : m.architectures) {
      out += " " + a.name + " (" + a.capability + ") |";
      rule += "---|";
    }
    out += "\n" + rule + "\n";
    for (const FormatMatrix::Row& row : m.rows) {
      if (row.role != role) continue;
      out += "| " + row.format + " |";
      for (const GpuArchitecture& a : m.architectures) {
        FormatRun run;
        run.role = role;
        for (const auto& [arch, cell] : row.cells) {
          if (arch == a.id || arch == "all") {
            run.cell = cell;
            break;
          }
        }
        out += run.runs() ? " " + run.ComputedLabel() + ": " + run.cell.kernel + " |" : " — |";
      }
      out += "\n";
    }
    out += "\n";
  }
  out += "Why a combination does not run, what kvbill assumes, and the sources:\n\n";
  for (const FormatMatrix::Row& row : m.rows) {
    // The architectures each cell covers ("all": those the row does not name).
    std::vector<std::pair<std::string, const FormatCell*>> by_arch;
    for (const GpuArchitecture& a : m.architectures) {
      for (const auto& [arch, cell] : row.cells) {
        if (arch == a.id || arch == "all") {
          by_arch.emplace_back(a.name, &cell);
          break;
        }
      }
    }
    // Group equal texts, keeping first-seen order.
    auto grouped = [&](auto text_of) {
      std::vector<std::pair<std::string, std::string>> groups;  // text, architectures
      for (const auto& [name, cell] : by_arch) {
        const std::string text = text_of(*cell);
        if (text.empty()) continue;
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const auto& g) { return g.first == text; });
        if (it == groups.end()) {
          groups.emplace_back(text, name);
        } else {
          it->second += ", " + name;
        }
      }
      return groups;
    };
    out += "- " + row.format + " " + RoleWords(row.role) + ".";
    for (const auto& [reason, archs] :
         grouped([](const FormatCell& c) { return c.runs ? std::string() : c.reason; })) {
      out += " Not run on " + archs + ": " + reason + ".";
    }
    for (const auto& [note, archs] :
         grouped([](const FormatCell& c) { return c.runs ? c.note : std::string(); })) {
      out += " " + archs + ": " + note + ".";
    }
    std::string sources;
    for (const auto& [source, archs] : grouped([](const FormatCell& c) { return c.source; })) {
      sources += (sources.empty() ? "" : "; ") + source;
    }
    out += " Sources: " + sources + "\n";
  }
  return out;
}

std::string SglangKvProblem(const ElementFormat& format) {
  static const std::set<std::string> stored = {"bf16", "fp16",     "fp32",
                                               "fp8",  "fp8-e4m3", "fp8-e5m2"};
  if (stored.count(format.name)) return "";
  return "SGLang stores no " + format.name +
         " KV cache: its --kv-cache-dtype is the model's dtype, bf16, fp8_e4m3 or fp8_e5m2 "
         "(its experimental fp4_e2m1, E2M1 with a UE8M0 scale per 16 elements, is not modelled)";
}

std::string VllmKvProblem(const ElementFormat& format, const ModelShape& model) {
  const bool latent = std::any_of(model.layers.begin(), model.layers.end(),
                                  [](const LayerShape& l) { return l.latent_dim > 0; });
  static const std::set<std::string> mla_stores = {"bf16", "fp16", "fp8", "fp8-e4m3"};
  if (!latent || mla_stores.count(format.name)) return "";
  // Any int4 group: the one vLLM has is int4_per_token_head.
  const std::string name = format.name.starts_with("int4") ? "int4" : format.name;
  return "vLLM stores no " + name + " KV cache for " + model.name +
         "'s latent (MLA) attention: its MLA backends (FlashMLA, FlashInfer MLA, CUTLASS MLA, "
         "Triton MLA) keep the latent as the model's dtype or fp8 (e4m3); its per-token-head "
         "caches run in the Triton attention backend only, NVFP4 in FlashInfer's standard "
         "attention";
}

std::string EngineKvProblem(const std::string& engine, const ElementFormat& format,
                            const ModelShape& model) {
  if (engine == "sglang") return SglangKvProblem(format);
  if (engine != "vllm") return "";
  if (std::string problem = VllmKvProblem(format, model); !problem.empty()) return problem;
  return VllmInt4KvProblem(format, model);
}

std::string VllmInt4KvProblem(const ElementFormat& format, const ModelShape& model) {
  if (!format.name.starts_with("int4")) return "";
  const std::int64_t head = VllmInt4KvGroup(model);
  if (head == 0) return "";
  auto own = ParseElementFormat("int4-g" + std::to_string(head));
  if (!own || own->name == format.name) return "";
  return "vLLM stores an int4 KV cache with one scale per token and KV head "
         "(int4_per_token_head): " +
         own->name + " for this model's " + std::to_string(head) + "-element heads, not " +
         format.name + " (\"int4\" names vLLM's)";
}

std::int64_t VllmInt4KvGroup(const ModelShape& model) {
  for (const LayerShape& l : model.layers) {
    if (l.kv_heads <= 0 || l.latent_dim > 0) continue;
    const std::int64_t head = l.qk_head_dim;
    const bool power_of_two = head >= 8 && head <= 1024 && (head & (head - 1)) == 0;
    return power_of_two ? head : 0;
  }
  return 0;
}

ElementFormat EngineKvFormat(const std::string& name, const ElementFormat& parsed,
                             const ModelShape& model, const std::string& engine) {
  if (engine != "vllm" || name != "int4") return parsed;
  const std::int64_t head = VllmInt4KvGroup(model);
  if (head <= 0) return parsed;
  auto own = ParseElementFormat("int4-g" + std::to_string(head));
  return own ? *own : parsed;
}

}  // namespace kvbill
