// kvbill kv: bytes per token and one sequence's KV footprint at given contexts.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_util.h"
#include "cli/model_flags.h"
#include "kvbill/hardware/fit.h"
#include "kvbill/model/kv_footprint.h"
#include "kvbill/report/table.h"

namespace kvbill::cli {
namespace {

constexpr char kUsage[] =
    "usage: kvbill kv --model M [--kv-format F] [--context 32k,128k,1M] [--block-size 16]\n"
    "                 [--tp N] [--set key=value ...] [--text-only] [--layers]\n"
    "                 [--format table|json|csv] [-o FILE]\n\n"
    "KV bytes per token of a model and the footprint of one sequence at each context:\n"
    "window-aware (sliding and chunked layers hold only their window), exact and rounded\n"
    "up to whole blocks, with the constant state of linear/SSM/conv layers shown separately.\n"
    "--layers prints the layer inventory instead: each layer's kind, KV heads, K and V head\n"
    "dims, window, bytes per token and state bytes per sequence.\n"
    "32k = 32,768 tokens, 1M = 1,048,576; plain numbers are exact. GiB = 2^30 bytes.\n";

nlohmann::json NumberOrInteger(double bytes) {
  if (bytes == static_cast<double>(static_cast<std::int64_t>(bytes))) {
    return static_cast<std::int64_t>(bytes);
  }
  return bytes;
}

// "16.0000" -> "16", "4.2500" -> "4.25".
std::string TrimZeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// The length of the vectors the format groups: a head, or an MLA latent.
std::int64_t TypicalVectorLength(const ModelShape& m) {
  for (const LayerShape& l : m.layers) {
    if (l.IsLatent()) return l.latent_dim;
    if (l.kv_heads > 0) return l.qk_head_dim;
  }
  return 128;
}

// Bits a cached element takes in `f`, scales included: over a head or MLA
// latent; DeepSeek-V4's latent entry in its own layout (fp8: 584 bytes for
// 512 elements, 9.125 bits).
double BitsPerStoredElement(const ModelShape& m, const ElementFormat& f) {
  for (const LayerShape& l : m.layers) {
    if (l.IsCompressed() && l.latent_dim > 0) {
      return static_cast<double>(LatentEntryBits(l, f)) / static_cast<double>(l.latent_dim);
    }
  }
  return f.BitsPerElement(TypicalVectorLength(m));
}

// One inventory entry's numbers on one GPU.
struct EntryNumbers {
  double bytes_per_token = 0;
  double state_bytes = 0;
};

EntryNumbers NumbersOf(const LayerShape& l, const ModelShape& m, const ElementFormat& f, int tp) {
  auto state = ParseElementFormat(m.state_format);
  const int state_bits = state ? state->element_bits : 16;
  // A KV-sharing layer's bytes are its source layer's.
  return EntryNumbers{l.SharesKv() ? 0.0 : LayerBytesPerToken(l, f, tp),
                      static_cast<double>(LayerStateBits(l, state_bits, tp)) / 8.0};
}

std::string Dim(std::int64_t v) { return v > 0 ? std::to_string(v) : "-"; }

// "3,850.25": whole bytes with separators, the fraction when there is one
// (a compressed layer adds 584 / 128 bytes a token).
std::string ExactBytes(double bytes) {
  const auto whole = static_cast<std::int64_t>(bytes);
  std::string out = FormatWithSeparators(whole);
  if (bytes != static_cast<double>(whole)) {
    const std::string fraction = TrimZeros(FormatFixed(bytes - static_cast<double>(whole), 4));
    out += fraction.substr(fraction.find('.'));
  }
  return out;
}

// The inventory as a table (or CSV): one row per entry.
Table InventoryTable(const ModelShape& m, const ElementFormat& f, int tp) {
  Table t({"layer", "kind", "KV heads", "K dim", "V dim", "latent", "indexer", "window",
           "bytes/token", "state bytes"});
  for (const LayerShape& l : m.layers) {
    const EntryNumbers n = NumbersOf(l, m, f, tp);
    // A compressed layer: its ratio ("compressed 1/4"), or its window alone.
    std::string kind = LayerKindName(l.kind);
    if (l.IsCompressed()) {
      kind += l.compress_ratio > 0 ? " 1/" + std::to_string(l.compress_ratio) : " window";
    }
    if (l.SharesKv()) kind += " (reads layer " + std::to_string(l.kv_source) + ")";
    t.AddRow({std::to_string(l.index), kind, Dim(l.kv_heads), Dim(l.qk_head_dim),
              Dim(l.kv_heads > 0 ? l.v_head_dim : 0), Dim(l.latent_dim), Dim(l.indexer_dim),
              Dim(l.window), NumberOrInteger(n.bytes_per_token).dump(),
              NumberOrInteger(n.state_bytes).dump()});
  }
  return t;
}

}  // namespace

int RunKv(const Args& args) {
  po::options_description options("options");
  ModelFlags model_flags;
  AddModelFlags(options, model_flags);
  std::string kv_format_name, contexts_text, format, out;
  Tokens block_size = 16;
  int tp = 1;
  bool layers_flag = false;
  options.add_options()("layers", po::bool_switch(&layers_flag),
                        "print the layer inventory (kind, heads, dims, bytes per layer)")(
      "kv-format", po::value(&kv_format_name)->default_value("bf16"),
      "KV element format (bf16, fp8, nvfp4, mxfp4, int4, ...; see docs/formats.md), or auto: "
      "the one the checkpoint declares, else its dtype")(
      "context", po::value(&contexts_text)->default_value("8k,32k,128k,1M"),
      "comma-separated contexts in tokens")("block-size", po::value(&block_size)->default_value(16),
                                            "tokens per KV block")(
      "tp", po::value(&tp)->default_value(1), "tensor-parallel GPUs: report one GPU's share")(
      "format", po::value(&format)->default_value("table"), "table, json or csv")(
      "out,o", FileValue(&out), "write to FILE instead of stdout");
  po::variables_map vm;
  if (auto stop = ParseOptions(args, "kv", kUsage, options, vm)) return *stop;
  if (auto s = CheckChoice("format", format, "table|json|csv"); !s)
    return ReportError("kv", s.error());
  if (auto s = CheckBlockSize(block_size); !s) return ReportError("kv", s.error());
  if (tp < 1) return ReportError("kv", Error("--tp: must be at least 1"));

  auto model = LoadModelFromFlags(model_flags);
  // KV bytes are the text model's alone: a tower kvbill cannot count (or
  // read) takes the weights' total from it, not the KV. When the text model
  // loads without the towers, kv answers for it and says what it left out;
  // fit and simulate, whose weights set the KV pool, still refuse.
  std::string towers_warning;
  if (!model && !model_flags.text_only) {
    ModelFlags text_only = model_flags;
    text_only.text_only = true;
    if (auto text_model = LoadModelFromFlags(text_only)) {
      towers_warning = model.error().message() +
                       "; the KV bytes are the text model's and exact, the parameters and weights "
                       "are the text model's alone";
      model = std::move(text_model);
    }
  }
  if (!model) return ReportError("kv", model.error());
  // DeepSeek-V4 runs in vLLM's 256-token blocks (as a scenario takes it).
  if (vm["block-size"].defaulted() && model->HasCompressedLayers()) block_size = 256;
  // ... and in its fp8 cache, the only one vLLM runs for it.
  if (vm["kv-format"].defaulted() && model->HasCompressedLayers()) kv_format_name = "auto";
  if (auto problem = TensorParallelProblem(*model, tp, /*experts_split=*/false); !problem.empty()) {
    return ReportError("kv", Error("--tp: " + problem));
  }
  auto kv_format = ParseElementFormat(AutoKvFormat(kv_format_name, *model));
  if (!kv_format) return ReportError("kv", kv_format.error().Within("--kv-format"));
  auto contexts = ParseTokenCountList(contexts_text);
  if (!contexts) return ReportError("kv", contexts.error().Within("--context"));

  for (Tokens ctx : *contexts) {
    if (Footprint(*model, *kv_format, ctx, block_size, tp).saturated) {
      return ReportError("kv", Error("--context: one sequence of " + std::to_string(ctx) +
                                     " tokens (in blocks of " + std::to_string(block_size) +
                                     ") holds more than 2^60 bytes of KV, past what kvbill "
                                     "counts"));
    }
  }
  // Contexts past the model's max_model_len: the arithmetic still holds,
  // but no engine serves them (as `fit` and `plot` say).
  std::vector<Tokens> past;
  for (Tokens ctx : *contexts) {
    const Tokens limit = model->MaxModelLenCeiling();
    if (limit > 0 && ctx > limit) past.push_back(ctx);
  }
  std::string limit_warning;
  if (!past.empty()) {
    std::string list;
    for (std::size_t i = 0; i < past.size(); ++i) {
      list += (i == 0 ? "" : i + 1 == past.size() ? " and " : ", ") + FormatWithSeparators(past[i]);
    }
    limit_warning = list + " tokens " + (past.size() == 1 ? "is" : "are") + " past " + model->name +
                    "'s max_model_len " + FormatWithSeparators(model->MaxModelLenCeiling()) +
                    (model->max_model_len_assumed
                         ? " (assumed: its config gives no length, and vLLM then assumes 2,048 "
                           "unless --max-model-len says otherwise; the bytes are the arithmetic's "
                           "alone)"
                         : " (vLLM and SGLang refuse such requests; the bytes are the arithmetic's "
                           "alone)");
  }
  const double bytes_per_token = BytesPerToken(*model, *kv_format, tp);
  const Bytes state = StateBytesPerSequence(*model, tp);
  std::ostringstream text;

  if (format == "json") {
    nlohmann::ordered_json j;
    j["model"] = model->name;
    j["kv_format"] = kv_format->name;
    j["bytes_per_token"] = NumberOrInteger(bytes_per_token);
    j["state_bytes_per_sequence"] = state;
    j["block_size"] = block_size;
    j["tensor_parallel"] = tp;
    j["units"] = "bytes; GiB = 2^30 bytes";
    nlohmann::ordered_json layers = nlohmann::ordered_json::object();
    for (LayerKind k : AllLayerKinds()) {
      if (model->CountLayers(k) > 0) layers[LayerKindName(k)] = model->CountLayers(k);
    }
    j["layers"] = layers;
    j["decoder_layers"] = model->DecoderLayers();
    const ParamCounts& p = model->params;
    j["parameters"] = {{"total", p.Total()},
                       {"active", p.Active()},
                       {"checkpoint", p.Checkpoint()},
                       {"embedding", p.embedding},
                       {"lm_head", p.lm_head},
                       {"towers", p.vision + p.audio},
                       {"mtp", p.mtp}};
    j["weights"] = model->weight_description;
    if (layers_flag) {
      nlohmann::ordered_json inventory = nlohmann::ordered_json::array();
      for (const LayerShape& l : model->layers) {
        const EntryNumbers n = NumbersOf(l, *model, *kv_format, tp);
        nlohmann::ordered_json e;
        e["layer"] = l.index;
        e["kind"] = LayerKindName(l.kind);
        e["kv_heads"] = l.kv_heads;
        e["k_head_dim"] = l.kv_heads > 0 ? l.qk_head_dim : 0;
        e["v_head_dim"] = l.kv_heads > 0 ? l.v_head_dim : 0;
        e["latent_dim"] = l.latent_dim;
        e["indexer_dim"] = l.indexer_dim;
        e["window"] = l.window;
        if (l.IsCompressed()) e["compress_ratio"] = l.compress_ratio;
        if (l.SharesKv()) e["kv_source_layer"] = l.kv_source;
        e["bytes_per_token"] = NumberOrInteger(n.bytes_per_token);
        e["state_bytes_per_sequence"] = NumberOrInteger(n.state_bytes);
        inventory.push_back(e);
      }
      j["inventory"] = inventory;
    }
    j["contexts"] = nlohmann::ordered_json::array();
    for (Tokens ctx : *contexts) {
      const SequenceFootprint f = Footprint(*model, *kv_format, ctx, block_size, tp);
      nlohmann::ordered_json c;
      c["tokens"] = ctx;
      c["bytes"] = f.kv_bytes;
      c["block_rounded_bytes"] = f.block_rounded_bytes;
      c["gib"] = static_cast<double>(f.kv_bytes) / kBytesPerGiB;
      c["block_rounded_gib"] = static_cast<double>(f.block_rounded_bytes) / kBytesPerGiB;
      c["past_model_limit"] = model->MaxModelLenCeiling() > 0 && ctx > model->MaxModelLenCeiling();
      j["contexts"].push_back(c);
    }
    j["max_model_len"] = model->max_model_len;
    // A LongRoPE model: the most --max-model-len may ask for.
    if (model->max_model_len_ceiling > 0) j["max_model_len_ceiling"] = model->max_model_len_ceiling;
    j["generic_rule"] = model->generic_rule;
    if (model->model_type_from_architecture) j["model_type_from_architecture"] = model->model_type;
    j["defaulted_fields"] = DefaultedFieldsJson(*model);
    j["defaults_source"] = model->defaults_source.empty()
                               ? nlohmann::ordered_json(nullptr)
                               : nlohmann::ordered_json(model->defaults_source);
    j["warnings"] = nlohmann::ordered_json::array();
    if (!limit_warning.empty()) {
      j["warnings"].push_back({{"code", "context_limit"}, {"message", limit_warning}});
    }
    if (!towers_warning.empty()) {
      j["warnings"].push_back({{"code", "towers_not_counted"}, {"message", towers_warning}});
    }
    text << j.dump(2) << "\n";
  } else if (layers_flag) {
    const Table inventory = InventoryTable(*model, *kv_format, tp);
    if (format == "csv") {
      text << inventory.ToCsv();
    } else {
      text << DescribeModel(*model) << "\n"
           << "KV format   " << kv_format->name
           << (tp > 1 ? ", one GPU of TP=" + std::to_string(tp) : "") << "\n\n"
           << inventory.ToText() << "per token   " << ExactBytes(bytes_per_token) << " B, state "
           << FormatWithSeparators(state) << " B per sequence\n";
      if (!towers_warning.empty()) {
        text << "warning [towers_not_counted]: " << towers_warning << "\n";
      }
    }
  } else {
    Table table(
        {"context", "tokens", "KV bytes", "KV GiB", "block-rounded bytes", "block-rounded GiB"});
    for (Tokens ctx : *contexts) {
      const SequenceFootprint f = Footprint(*model, *kv_format, ctx, block_size, tp);
      table.AddRow({FormatTokenCount(ctx), FormatWithSeparators(ctx),
                    FormatWithSeparators(f.kv_bytes),
                    FormatFixed(static_cast<double>(f.kv_bytes) / kBytesPerGiB, 2),
                    FormatWithSeparators(f.block_rounded_bytes),
                    FormatFixed(static_cast<double>(f.block_rounded_bytes) / kBytesPerGiB, 2)});
    }
    if (format == "csv") {
      Table csv({"model", "kv_format", "tokens", "bytes", "block_rounded_bytes", "bytes_per_token",
                 "state_bytes_per_sequence"});
      for (Tokens ctx : *contexts) {
        const SequenceFootprint f = Footprint(*model, *kv_format, ctx, block_size, tp);
        csv.AddRow({model->name, kv_format->name, std::to_string(ctx), std::to_string(f.kv_bytes),
                    std::to_string(f.block_rounded_bytes), NumberOrInteger(bytes_per_token).dump(),
                    std::to_string(state)});
      }
      text << csv.ToCsv();
      if (!limit_warning.empty())
        std::cerr << "kvbill kv: warning [context_limit]: " << limit_warning << "\n";
      if (!towers_warning.empty())
        std::cerr << "kvbill kv: warning [towers_not_counted]: " << towers_warning << "\n";
    } else {
      text << DescribeModel(*model) << "\n"
           << "KV format   " << kv_format->name << " ("
           << TrimZeros(FormatFixed(BitsPerStoredElement(*model, *kv_format), 4))
           << " bits/element incl. scales)"
           << (tp > 1 ? ", one GPU of TP=" + std::to_string(tp) : "")
           << (vm["kv-format"].defaulted() && !model->checkpoint_kv_format.empty() &&
                       kv_format->name != model->checkpoint_kv_format
                   ? ": kvbill's default, not the checkpoint's " + model->checkpoint_kv_format +
                         " (--kv-format auto)"
                   : "")
           << "\n"
           << "per token   " << ExactBytes(bytes_per_token) << " B ("
           << FormatBinaryBytes(bytes_per_token) << "), every layer that keeps K/V\n"
           << "state       " << FormatWithSeparators(state) << " B per sequence ("
           << FormatBinaryBytes(static_cast<double>(state)) << "), "
           << (model->HasCompressedLayers() ? "compressors" : "linear/SSM/conv layers") << "\n"
           << "blocks      " << block_size << " tokens\n\n"
           << table.ToText() << "GiB = 2^30 bytes. State is not included in the KV columns.\n";
      if (!limit_warning.empty()) text << "warning [context_limit]: " << limit_warning << "\n";
      if (!towers_warning.empty()) {
        text << "warning [towers_not_counted]: " << towers_warning << "\n";
      }
    }
  }
  // CSV has no room for the note the table's header carries.
  if (format == "csv" && !model->defaulted_fields.empty()) {
    std::cerr << "kvbill kv: note: " << DefaultedFieldsText(*model)
              << ": absent from the config, read at the class defaults of model_type \""
              << model->model_type << "\" (" << model->defaults_source << ")\n";
  }
  if (auto s = EmitOutput("kv", text.str(), out); !s) return ReportError("kv", s.error());
  return 0;
}

}  // namespace kvbill::cli
