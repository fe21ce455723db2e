#include "kvbill/hardware/catalog_names.h"

#include <filesystem>

#include "kvbill/hardware/gpu.h"
#include "kvbill/model/hf_config.h"
#include "kvbill/util/names.h"

namespace kvbill {
namespace {

namespace fs = std::filesystem;

std::string Quote(const std::string& text) { return "\"" + text + "\""; }

// Written as a path: what a user types for a file, never for a catalog name.
bool LooksLikePath(std::string_view text) {
  return text.ends_with(".json") || text.starts_with("/") || text.starts_with("./") ||
         text.starts_with("../") || text.starts_with("~");
}

bool IsFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The text after the last '/', or all of it.
std::string_view AfterSlash(std::string_view text) {
  const std::size_t slash = text.rfind('/');
  return slash == std::string_view::npos ? text : text.substr(slash + 1);
}

// `squashed` without a leading "nvidia" or "amd" (SquashName form).
std::string_view WithoutVendor(std::string_view squashed) {
  for (std::string_view vendor : {"nvidia", "amd"}) {
    if (squashed.size() > vendor.size() && squashed.starts_with(vendor)) {
      return squashed.substr(vendor.size());
    }
  }
  return squashed;
}

}  // namespace

const std::vector<NameAlias>& ModelRepoIds() {
  // Repositories whose published config.json is the bundled one (the same
  // layers, heads, experts and context limit); docs/models.md.
  static const std::vector<NameAlias> ids = {
      {"deepseek-ai/DeepSeek-V3", "deepseek-v3"},
      {"deepseek-ai/DeepSeek-V3-Base", "deepseek-v3"},
      {"deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"},
      {"google/gemma-2-9b", "gemma-2-9b"},
      {"google/gemma-2-9b-it", "gemma-2-9b"},
      {"zai-org/GLM-4.5-Air", "glm-4.5-air"},
      {"openai/gpt-oss-20b", "gpt-oss-20b"},
      {"ai21labs/AI21-Jamba-1.5-Mini", "jamba-1.5-mini"},
      {"meta-llama/Llama-3.1-405B", "llama-3.1-405b"},
      {"meta-llama/Llama-3.1-405B-Instruct", "llama-3.1-405b"},
      {"meta-llama/Meta-Llama-3.1-405B", "llama-3.1-405b"},
      {"meta-llama/Meta-Llama-3.1-405B-Instruct", "llama-3.1-405b"},
      {"meta-llama/Llama-3.1-70B", "llama-3.1-70b"},
      {"meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"},
      {"meta-llama/Meta-Llama-3.1-70B", "llama-3.1-70b"},
      {"meta-llama/Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"},
      {"meta-llama/Llama-3.1-8B", "llama-3.1-8b"},
      {"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"},
      {"meta-llama/Meta-Llama-3.1-8B", "llama-3.1-8b"},
      {"meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"},
      {"meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"},
      {"mistralai/Mistral-7B-v0.1", "mistral-7b"},
      {"mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b"},
      {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b"},
      {"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"},
      {"Qwen/Qwen2.5-7B", "qwen2.5-7b"},
      {"Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"},
      {"Qwen/Qwen3-32B", "qwen3-32b"},
      {"Qwen/Qwen3-8B", "qwen3-8b"},
      {"Qwen/Qwen3-Next-80B-A3B-Instruct", "qwen3-next-80b-a3b"},
      {"Qwen/Qwen3-Next-80B-A3B-Thinking", "qwen3-next-80b-a3b"},
      {"Qwen/Qwen3.5-9B", "qwen3.5-9b"},
  };
  return ids;
}

const std::vector<NameAlias>& GpuAliases() {
  // Short names, and the product names `nvidia-smi --query-gpu=name` and
  // `rocm-smi --showproductname` print for the catalog's parts.
  static const std::vector<NameAlias> aliases = {
      {"h100", "h100-sxm"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"h100-sxm5", "h100-sxm"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H200", "h200"},
      {"h200-sxm", "h200"},
      {"NVIDIA B200", "b200"},
      {"NVIDIA GB200", "gb200"},
      {"NVIDIA B300", "b300"},
      {"NVIDIA H100 NVL", "h100-nvl"},
      {"NVIDIA H20", "h20"},
      {"NVIDIA A100-SXM4-40GB", "a100-40gb"},
      {"NVIDIA L4", "l4"},
      {"a100", "a100-80gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
      {"a100-sxm", "a100-80gb"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000"},
      {"AMD Instinct MI300X", "mi300x"},
      {"AMD Instinct MI325X", "mi325x"},
      {"AMD Instinct MI355X", "mi355x"},
  };
  return aliases;
}

Result<std::string> ResolveModelName(const std::string& typed, std::string_view flag) {
  const std::vector<CatalogModel>& catalog = ModelCatalog();
  for (const CatalogModel& m : catalog) {
    if (m.name == typed) return m.name;
  }
  const std::string head = std::string(flag) + " " + Quote(typed) + ": ";
  if (IsFile(typed)) return typed;
  if (IsDirectory(typed)) {
    const std::string config = (fs::path(typed) / "config.json").string();
    if (IsFile(config)) return config;
    return Error(head + "no config.json in this directory");
  }
  const std::string lower = LowerAscii(typed);
  for (const CatalogModel& m : catalog) {
    if (m.name == lower) return m.name;
  }
  for (const NameAlias& id : ModelRepoIds()) {
    const std::string repo = LowerAscii(id.alias);
    if (lower == repo || lower == AfterSlash(repo)) return std::string(id.catalog);
  }
  if (LooksLikePath(typed)) {
    std::error_code ec;
    return Error(head + (fs::exists(typed, ec) ? "not a regular file (a config.json, or the "
                                                 "directory holding one)"
                                               : "file not found"));
  }

  std::vector<std::string> candidates;
  std::string names;
  for (const CatalogModel& m : catalog) {
    candidates.push_back(m.name);
    names += (names.empty() ? "" : ", ") + m.name;
  }
  // A repo id is compared with repo ids; a bare name with bare names too.
  for (const NameAlias& id : ModelRepoIds()) {
    candidates.emplace_back(typed.find('/') != std::string::npos ? id.alias : AfterSlash(id.alias));
  }
  const std::string hint = DidYouMean(typed, candidates);
  return Error(head + "not a bundled model nor a file" + (hint.empty() ? "" : "; " + hint) +
               " (catalog: " + names +
               "; kvbill reads no model from the Hub: download its config.json and give its "
               "path)");
}

Result<std::string> ResolveGpuName(const std::string& typed, std::string_view flag) {
  const std::vector<GpuSpec>& catalog = GpuCatalog();
  for (const GpuSpec& g : catalog) {
    if (g.id == typed) return g.id;
  }
  const std::string head = std::string(flag) + " " + Quote(typed) + ": ";
  if (IsFile(typed)) return typed;
  if (LooksLikePath(typed) || typed.find('/') != std::string::npos) {
    return Error(head + "file not found");
  }
  const std::string squashed = SquashName(typed);
  const std::string_view bare = WithoutVendor(squashed);
  auto same = [&](std::string_view name) {
    const std::string s = SquashName(name);
    return s == squashed || WithoutVendor(s) == bare;
  };
  for (const GpuSpec& g : catalog) {
    if (same(g.id) || same(g.name)) return g.id;
  }
  for (const NameAlias& a : GpuAliases()) {
    if (same(a.alias)) return std::string(a.catalog);
  }
  std::vector<std::string> candidates;
  std::string ids;
  for (const GpuSpec& g : catalog) {
    candidates.push_back(g.id);
    ids += (ids.empty() ? "" : ", ") + g.id;
  }
  for (const NameAlias& a : GpuAliases()) candidates.emplace_back(a.alias);
  const std::string hint = DidYouMean(typed, candidates);
  return Error(head + "unknown GPU" + (hint.empty() ? "" : "; " + hint) + " (catalog: " + ids +
               "; or a path to a GPU JSON file)");
}

}  // namespace kvbill
