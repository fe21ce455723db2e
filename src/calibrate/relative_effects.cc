#include "kvbill/calibrate/relative_effects.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "kvbill/calibrate/replay.h"
#include "kvbill/util/names.h"

namespace kvbill {
namespace {

// Flags that change neither formats nor speed (names, parsers, limits on a
// request's length), and the ones that are the factors themselves.
const std::set<std::string>& SetAside() {
  static const std::set<std::string> flags = {"max-model-len",
                                              "context-length",
                                              "host",
                                              "port",
                                              "served-model-name",
                                              "tool-call-parser",
                                              "reasoning-parser",
                                              "enable-auto-tool-choice",
                                              "trust-remote-code",
                                              "chat-template",
                                              "tp",
                                              "tensor-parallel-size",
                                              "tp-size",
                                              "enable-expert-parallel",
                                              "ep-size",
                                              "kv-cache-dtype",
                                              "quantization"};
  return flags;
}

struct Factors {
  std::string context;  // everything that must match, as one string
  std::string weights;
  std::string kv;
  int tp = 1;
  // Expert parallelism: 1 (none), or its degree; "over the tensor-parallel
  // GPUs" when it equals tp, so that a TP pair with EP on both is one factor.
  int ep = 1;
  std::string ep_mode;  // "", "over the tensor-parallel GPUs", or "degree N"
};

Factors FactorsOf(const Measurement& m) {
  Factors f;
  std::map<std::string, std::string> flags = ParseEngineFlags(m.engine_flags);
  std::string model = LowerAscii(
      m.model.substr(m.model.find('/') == std::string::npos ? 0 : m.model.find('/') + 1));
  for (const char* suffix : {"-fp8", "-awq"}) {
    if (const std::size_t at = model.find(suffix); at != std::string::npos) {
      model.erase(at, std::string(suffix).size());
    }
  }
  f.weights = LowerAscii(m.weights);
  f.kv = flags.count("kv-cache-dtype") ? LowerAscii(flags.at("kv-cache-dtype"))
                                       : LowerAscii(m.kv_cache_dtype);
  if (f.kv == "auto") f.kv = "bf16";
  f.tp = m.tp;
  if (flags.count("enable-expert-parallel")) f.ep = m.tp;
  if (flags.count("ep-size")) f.ep = std::max(1, std::atoi(flags.at("ep-size").c_str()));
  f.ep_mode = f.ep <= 1      ? ""
              : f.ep == f.tp ? "over the tensor-parallel GPUs"
                             : "degree " + std::to_string(f.ep);
  std::string rest;
  for (const auto& [k, v] : flags) {
    if (SetAside().count(k) == 0) rest += " --" + k + "=" + v;
  }
  char load[160];
  std::snprintf(load, sizeof load, " in=%lld out=%lld n=%lld c=%d rate=%g pp=%d dp=%d",
                static_cast<long long>(m.input_len.value_or(-1)),
                static_cast<long long>(m.output_len.value_or(-1)),
                static_cast<long long>(m.num_prompts.value_or(-1)), m.concurrency.value_or(-1),
                m.request_rate, m.pp, m.dp);
  f.context = m.engine + " " + m.engine_version + " " + model + " " + LowerAscii(m.gpu_text) + " " +
              m.dataset + load + rest;
  return f;
}

// Where a weight format sits as a base: BF16 first, then FP8, then the rest.
int WeightRank(const std::string& w) {
  if (w == "bf16" || w == "fp16") return 0;
  if (w == "fp8") return 1;
  return 2;
}

std::optional<double> Published(const Measurement& m, const std::string& metric) {
  if (metric == "duration_s") return m.duration_s;
  if (metric == "ttft_ms_mean") return m.ttft_ms_mean;
  return m.tpot_ms_mean;
}

// A record the data flags as possibly another weight format or engine than
// its fields say: a pair with it may differ in more than its one factor.
std::optional<std::string> Ambiguity(const Measurement& m) {
  for (const std::string& flag : m.quality_flags) {
    if (flag == "weights_ambiguous" || flag == "engine_ambiguous") return flag;
  }
  return std::nullopt;
}

std::string Percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * x);
  return buf;
}

std::string Points(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f pp", 100 * x);
  return buf;
}

}  // namespace

double RelativeEffect::Tolerance() const { return std::max(0.5 * std::fabs(published), 0.03); }

bool RelativeEffect::Meets() const {
  return replayed && std::fabs(predicted - published) <= Tolerance();
}

std::vector<RelativeEffect> FindRelativeEffects(const std::vector<Measurement>& records,
                                                const std::vector<MetricPoint>& points,
                                                const std::vector<SkippedRecord>& skipped) {
  std::map<std::pair<std::string, std::string>, double> predicted;
  for (const MetricPoint& p : points) predicted[{p.record, p.metric}] = p.predicted;
  std::map<std::string, std::string> why;
  for (const SkippedRecord& s : skipped) why.emplace(s.id, s.reason);
  std::vector<Factors> factors;
  for (const Measurement& m : records) factors.push_back(FactorsOf(m));

  std::vector<RelativeEffect> out;
  for (std::size_t i = 0; i < records.size(); ++i) {
    for (std::size_t j = i + 1; j < records.size(); ++j) {
      const Factors& a = factors[i];
      const Factors& b = factors[j];
      if (a.context != b.context) continue;
      const int differ =
          (a.weights != b.weights) + (a.kv != b.kv) + (a.tp != b.tp) + (a.ep_mode != b.ep_mode);
      if (differ != 1) continue;
      bool a_base = true;
      RelativeEffect e;
      if (a.weights != b.weights) {
        a_base = WeightRank(a.weights) != WeightRank(b.weights)
                     ? WeightRank(a.weights) < WeightRank(b.weights)
                     : a.weights < b.weights;
        e.kind = "weights";
        e.factor =
            "weights " + (a_base ? b.weights + " vs " + a.weights : a.weights + " vs " + b.weights);
      } else if (a.kv != b.kv) {
        a_base = a.kv == "bf16" || (b.kv != "bf16" && a.kv < b.kv);
        e.kind = "kv cache";
        e.factor = "KV " + (a_base ? b.kv + " vs " + a.kv : a.kv + " vs " + b.kv);
      } else if (a.tp != b.tp) {
        a_base = a.tp < b.tp;
        e.kind = "tensor parallel";
        e.factor = "tensor parallel " + std::to_string(std::max(a.tp, b.tp)) + " vs " +
                   std::to_string(std::min(a.tp, b.tp)) +
                   (a.ep > 1 ? " (experts expert-parallel over them)" : "");
      } else {
        a_base = a.ep < b.ep;
        e.kind = "expert parallel";
        e.factor = "expert parallel " + std::to_string(std::max(a.ep, b.ep)) +
                   " vs every expert split " + std::to_string(a.tp) + " ways";
      }
      const Measurement& base = records[a_base ? i : j];
      const Measurement& variant = records[a_base ? j : i];
      e.base = base.id;
      e.variant = variant.id;
      const std::optional<std::string> flag_b = Ambiguity(base), flag_v = Ambiguity(variant);
      if (flag_b || flag_v) {
        e.comparable = false;
        e.why = (flag_b ? base.id : variant.id) + " is flagged " + (flag_b ? *flag_b : *flag_v) +
                " in the data (see its notes): the pair may differ in more than this factor";
      }
      for (const char* metric : {"duration_s", "ttft_ms_mean", "tpot_ms_mean"}) {
        auto pb = Published(base, metric), pv = Published(variant, metric);
        if (!pb || !pv || !(*pb > 0) || !(*pv > 0)) continue;
        RelativeEffect row = e;
        row.metric = metric;
        row.published = *pb / *pv - 1;
        auto qb = predicted.find({base.id, metric}), qv = predicted.find({variant.id, metric});
        row.replayed = row.comparable && qb != predicted.end() && qv != predicted.end() &&
                       qb->second > 0 && qv->second > 0;
        if (row.replayed) {
          row.predicted = qb->second / qv->second - 1;
        } else if (row.comparable) {
          const auto wb = why.find(base.id), wv = why.find(variant.id);
          row.why = wb != why.end()   ? base.id + ": " + wb->second
                    : wv != why.end() ? variant.id + ": " + wv->second
                                      : "not replayed";
        }
        out.push_back(std::move(row));
      }
    }
  }
  return out;
}

std::string RelativeEffectsMarkdown(const std::vector<RelativeEffect>& effects) {
  if (effects.empty()) {
    return "No two records differ in one factor of formats or parallelism alone: nothing to "
           "compare.\n";
  }
  std::string out =
      "| factor | base | variant | metric | published gain | kvbill gain | difference | "
      "tolerance | meets |\n|---|---|---|---|---:|---:|---:|---:|---|\n";
  std::map<std::string, std::pair<int, int>> by_kind;  // meets, replayed
  int meets = 0, replayed = 0, not_replayed = 0, not_compared = 0;
  for (const RelativeEffect& e : effects) {
    out += "| " + e.factor + " | " + e.base + " | " + e.variant + " | " + e.metric + " | " +
           Percent(e.published) + " | ";
    if (!e.comparable) {
      out += "— | — | — | not compared: " + e.why + " |\n";
      ++not_compared;
      continue;
    }
    if (!e.replayed) {
      out += "— | — | — | not replayed: " + e.why + " |\n";
      ++not_replayed;
      continue;
    }
    out += Percent(e.predicted) + " | " + Points(std::fabs(e.predicted - e.published)) + " | " +
           Points(e.Tolerance()) + " | " + (e.Meets() ? "yes" : "**no**") + " |\n";
    ++replayed;
    meets += e.Meets();
    by_kind[e.kind].first += e.Meets();
    by_kind[e.kind].second += 1;
  }
  out += "\n" + std::to_string(meets) + " of " + std::to_string(replayed) +
         " comparisons on replayed pairs meet the tolerance";
  std::string kinds;
  for (const auto& [kind, n] : by_kind) {
    kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(n.first) + " of " +
             std::to_string(n.second);
  }
  if (!kinds.empty()) out += " (" + kinds + ")";
  out += "; " + std::to_string(not_replayed) + " more on pairs kvbill does not replay";
  if (not_compared > 0) {
    out +=
        ", " + std::to_string(not_compared) + " on pairs with a record the data flags as ambiguous";
  }
  out += ".\n";
  return out;
}

}  // namespace kvbill
