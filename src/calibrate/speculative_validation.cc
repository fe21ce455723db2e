#include "kvbill/calibrate/speculative_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "kvbill/util/units.h"

namespace kvbill {
namespace {

// The flags without speculation's, as a map.
std::map<std::string, std::string> FlagsWithoutSpeculation(const Measurement& m) {
  auto flags = ParseEngineFlags(m.engine_flags);
  for (auto it = flags.begin(); it != flags.end();) {
    it = it->first.starts_with("speculative-") ? flags.erase(it) : std::next(it);
  }
  return flags;
}

// The record id's page (everything before the engine) and workload (after
// the run number): "gpustack/m/page/vllm/b08-sharegpt-n1000-rps8" ->
// ("gpustack/m/page", "sharegpt-n1000-rps8").
std::pair<std::string, std::string> PageAndWorkload(const std::string& id) {
  const std::size_t slash = id.rfind('/');
  const std::size_t engine = id.rfind('/', slash == std::string::npos ? 0 : slash - 1);
  const std::string last = slash == std::string::npos ? id : id.substr(slash + 1);
  const std::size_t dash = last.find('-');
  return {engine == std::string::npos ? "" : id.substr(0, engine),
          dash == std::string::npos ? last : last.substr(dash + 1)};
}

// Flags a vLLM replay runs alike, so a run differing from another only in
// them is the same run to kvbill: --performance-mode interactivity captures
// more CUDA-graph sizes (kvbill pads no batch to a captured size; PlanReplay)
// and --language-model-only leaves a multimodal model's vision encoder
// unloaded, which changes no iteration's time, only the KV pool by the
// encoder's weights (under a GiB for Qwen3.5-9B).
bool ReplayedAlike(const std::string& flag, const std::string& value) {
  return flag == "language-model-only" || (flag == "performance-mode" && value == "interactivity");
}

std::map<std::string, std::string> WithoutReplayedAlike(std::map<std::string, std::string> flags) {
  for (auto it = flags.begin(); it != flags.end();) {
    it = ReplayedAlike(it->first, it->second) ? flags.erase(it) : std::next(it);
  }
  return flags;
}

}  // namespace

const Measurement* SpeculationBaseline(const Measurement& spec,
                                       const std::vector<Measurement>& records,
                                       std::string* differs) {
  if (differs != nullptr) differs->clear();
  const auto [page, workload] = PageAndWorkload(spec.id);
  const auto flags = FlagsWithoutSpeculation(spec);
  const Measurement* alike = nullptr;
  for (const Measurement& m : records) {
    if (IsSpeculativeRecord(m) || m.engine != spec.engine || m.model != spec.model ||
        m.gpu_text != spec.gpu_text || m.tp != spec.tp) {
      continue;
    }
    if (PageAndWorkload(m.id) != std::make_pair(page, workload)) continue;
    const auto other = ParseEngineFlags(m.engine_flags);
    if (other == flags) return &m;
    if (alike == nullptr && WithoutReplayedAlike(other) == WithoutReplayedAlike(flags)) alike = &m;
  }
  if (alike != nullptr && differs != nullptr) {
    // The flags one of the two has and the other has not (or sets apart).
    const auto other = ParseEngineFlags(alike->engine_flags);
    std::string out;
    auto name = [](const std::pair<const std::string, std::string>& f) {
      return "--" + f.first + (f.second == "true" ? "" : "=" + f.second);
    };
    for (const auto& f : flags) {
      if (!other.count(f.first) || other.at(f.first) != f.second)
        out += (out.empty() ? "" : " ") + name(f);
    }
    for (const auto& f : other) {
      if (!flags.count(f.first) || flags.at(f.first) != f.second)
        out += (out.empty() ? "" : " ") + name(f);
    }
    *differs = out;
  }
  return alike;
}

bool SameRequests(const Measurement& a, const Measurement& b) {
  return a.dataset == b.dataset && a.input_lens.empty() && b.input_lens.empty() &&
         a.num_prompts == b.num_prompts && a.successful_requests == b.successful_requests &&
         a.total_input_tokens && a.total_input_tokens == b.total_input_tokens &&
         a.total_output_tokens && a.total_output_tokens == b.total_output_tokens;
}

namespace {

const MetricPoint* Find(const std::vector<MetricPoint>& pts, const std::string& metric) {
  for (const MetricPoint& p : pts) {
    if (p.metric == metric) return &p;
  }
  return nullptr;
}

// "α 0.80 (the method's default), a tree of depth 4, top-k 4, 16 tokens
// verified, E 3.123" (a chain: "k 3, E 2.952").
// With a draft's measured acceptance (MeasuredDraftAcceptance): "α 0.62
// (measured: ...)".
std::string Describe(const SpeculativeSpec& spec, const SpeculativeShape& shape) {
  const bool measured = !spec.acceptance_rate.empty();
  const double alpha = measured ? spec.acceptance_rate[0] : shape.method->acceptance_rate;
  const double beta = spec.rank_decay.value_or(shape.method->rank_decay);
  std::string out = "α " + FormatFixed(alpha, 2) +
                    (measured ? " (measured, see below), " : " (the method's default), ");
  if (shape.topk == 1) {
    out += "k " + std::to_string(shape.num_speculative_tokens);
  } else {
    out += "β " + FormatFixed(beta, 2) + ", a tree of depth " +
           std::to_string(shape.num_speculative_tokens) + ", top-k " + std::to_string(shape.topk) +
           ", " + std::to_string(shape.verify_tokens) + " tokens verified";
  }
  return out + ", E " + FormatFixed(static_cast<double>(shape.expected_tokens), 3);
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

bool IsSpeculativeRecord(const Measurement& m) {
  const auto flags = ParseEngineFlags(m.engine_flags);
  return flags.count("speculative-config") > 0 || flags.count("speculative-algorithm") > 0;
}

std::string SpeculativeValidationMarkdown(const std::vector<Measurement>& records,
                                          const std::vector<ReplayPlan>& plans,
                                          const std::vector<SkippedRecord>& skipped,
                                          const EngineProfile& profile, bool fitted) {
  std::map<std::string, const ReplayPlan*> plan_of;
  for (const ReplayPlan& p : plans) plan_of[p.measurement->id] = &p;
  std::map<std::string, std::string> why;
  for (const SkippedRecord& s : skipped) why.emplace(s.id, s.reason);
  auto replay = [&](const std::string& id, std::vector<SkippedRecord>* lost) {
    std::vector<ReplayPlan> one = {*plan_of.at(id)};
    return Evaluate(one, profile, lost);
  };
  std::string list =
      "| record | engine | speculation | replayed | why not / acceptance "
      "|\n|---|---|---|---|---|\n";
  std::string points =
      "| record | metric | measured | kvbill | ratio |\n|---|---|---:|---:|---:|\n";
  std::string gains =
      "| record | without speculation | metric | published gain | kvbill gain | met |\n"
      "|---|---|---|---:|---:|---|\n";
  int n = 0, replayed = 0;
  for (const Measurement& m : records) {
    if (!IsSpeculativeRecord(m)) continue;
    ++n;
    const auto flags = ParseEngineFlags(m.engine_flags);
    std::string how = flags.count("speculative-config")
                          ? "`" + flags.at("speculative-config") + "`"
                          : "SGLang " + flags.at("speculative-algorithm");
    if (flags.count("speculative-num-steps")) {
      how += " steps " + flags.at("speculative-num-steps");
      if (flags.count("speculative-eagle-topk"))
        how += ", top-k " + flags.at("speculative-eagle-topk");
      if (flags.count("speculative-num-draft-tokens")) {
        how += ", " + flags.at("speculative-num-draft-tokens") + " draft tokens";
      }
    }
    auto plan = plan_of.find(m.id);
    if (plan == plan_of.end()) {
      // Why it cannot be replayed (PlanReplay's reason), else why it was not.
      std::string reason;
      if (PlanReplay(m, ReplayDefaults{}, &reason)) {
        reason = why.count(m.id) ? why.at(m.id) : "not a record of this engine's fit";
      }
      if (flags.count("speculative-algorithm")) {
        // What kvbill would run once the engine is modelled.
        std::string no;
        const auto spec = SglangSpeculativeSpec(flags, &no);
        const auto shape = spec ? ResolveSpeculative(*spec) : Result<SpeculativeShape>(Error(no));
        reason += shape ? "; its draft would run as " + Describe(*spec, *shape)
                        : "; its draft: " + shape.error().message();
      }
      list += "| " + m.id + " | " + m.engine + " " + m.engine_version + " | " + how + " | no | " +
              reason + " |\n";
      continue;
    }
    ++replayed;
    const auto shape = ResolveSpeculative(*plan->second->speculative);
    list +=
        "| " + m.id + " | " + m.engine + " " + m.engine_version + " | " + how + " | yes | " +
        (shape ? Describe(*plan->second->speculative, *shape) : shape.error().message()) +
        (m.quality_flags.empty() ? "" : "; the record's quality flags: " + Join(m.quality_flags)) +
        " |\n";
    std::vector<SkippedRecord> lost;
    const std::vector<MetricPoint> spec_points = replay(m.id, &lost);
    for (const MetricPoint& p : spec_points) {
      points += "| " + p.record + " | " + p.metric + " | " + FormatFixed(p.measured, 2) + " | " +
                FormatFixed(p.predicted, 2) + " | " + FormatFixed(p.Ratio(), 2) + " |\n";
    }
    std::string differs;
    const Measurement* base = SpeculationBaseline(m, records, &differs);
    if (base == nullptr || plan_of.count(base->id) == 0) {
      gains += "| " + m.id + " | " +
               (base == nullptr ? "none in the data" : base->id + " (not replayed)") +
               " | | | | |\n";
      continue;
    }
    // The pair ran the same prompts when its token totals agree (the
    // benchmark samples its dataset with a fixed seed): the run without
    // speculation replays the requests drawn for the run with it, so the
    // gain compares speculation alone, not two draws of ShareGPT lengths.
    ReplayPlan base_plan = *plan_of.at(base->id);
    if (SameRequests(m, *base)) {
      base_plan.tasks = plan->second->tasks;
      base_plan.requests = plan->second->requests;
    }
    std::vector<ReplayPlan> base_one = {base_plan};
    const std::vector<MetricPoint> base_points = Evaluate(base_one, profile, &lost);
    for (const char* metric : {"duration_s", "ttft_ms_mean", "tpot_ms_mean", "e2e_ms_mean"}) {
      const MetricPoint* s = Find(spec_points, metric);
      const MetricPoint* b = Find(base_points, metric);
      if (s == nullptr || b == nullptr || s->measured <= 0 || s->predicted <= 0) continue;
      const double published = b->measured / s->measured - 1;
      const double predicted = b->predicted / s->predicted - 1;
      const bool met = std::abs(predicted - published) <= std::max(0.5 * std::abs(published), 0.05);
      gains +=
          "| " + m.id + " | " + base->id +
          (differs.empty() ? "" : " (apart from " + differs + ", which kvbill replays alike)") +
          " | " + metric + " | " + FormatFixed(100 * published, 1) + "% | " +
          FormatFixed(100 * predicted, 1) + "% | " + (met ? "yes" : "no") + " |\n";
    }
  }
  // SGLang's EAGLE-3 runs against vLLM's runs of the same page and workload
  // without speculation: kvbill's run of the same draft (SGLang's tree
  // flags) on vLLM's run, as an indication of how the benefit falls with
  // batch (two engines).
  std::string cross =
      "| SGLang record | vLLM record without speculation | concurrency | published "
      "time(vLLM) / time(SGLang EAGLE-3) | kvbill: time(vLLM) / time(vLLM + the same EAGLE-3 "
      "draft) |\n"
      "|---|---|---:|---:|---:|\n";
  int cross_rows = 0;
  for (const Measurement& m : records) {
    if (m.engine != "sglang" || !IsSpeculativeRecord(m)) continue;
    const auto flags = ParseEngineFlags(m.engine_flags);
    if (!flags.count("speculative-algorithm") || flags.at("speculative-algorithm") != "EAGLE3" ||
        FlagsWithoutSpeculation(m).size() != 0 || !m.duration_s) {
      continue;  // only the plain EAGLE-3 runs (no other flag)
    }
    const auto [page, workload] = PageAndWorkload(m.id);
    for (const Measurement& v : records) {
      if (v.engine != "vllm" || IsSpeculativeRecord(v) || !v.engine_flags.empty() ||
          PageAndWorkload(v.id) != std::make_pair(page, workload) || plan_of.count(v.id) == 0 ||
          !v.duration_s) {
        continue;
      }
      ReplayPlan with = *plan_of.at(v.id);
      std::string no;
      const auto spec = SglangSpeculativeSpec(flags, &no);
      const auto shape = spec ? ResolveSpeculative(*spec) : Result<SpeculativeShape>(Error(no));
      if (!shape) continue;
      with.speculative = *spec;
      std::vector<ReplayPlan> pair = {*plan_of.at(v.id), with};
      std::vector<SkippedRecord> lost;
      const std::vector<MetricPoint> pts = Evaluate(pair, profile, &lost);
      double base = 0, spec_s = 0;
      for (const MetricPoint& p : pts) {
        if (p.metric != "duration_s") continue;
        (base == 0 ? base : spec_s) = p.predicted;
      }
      if (base <= 0 || spec_s <= 0) continue;
      ++cross_rows;
      cross += "| " + m.id + " | " + v.id + " | " +
               std::to_string(m.concurrency ? *m.concurrency : 0) + " | " +
               FormatFixed(*v.duration_s / *m.duration_s, 2) + "× | " +
               FormatFixed(base / spec_s, 2) + "× (" + Describe(*spec, *shape) + ") |\n";
    }
  }
  std::string out;
  out += "\n## Speculative decoding\n\n";
  out += "The " + std::to_string(n) +
         " records that run speculative decoding (engine flags `--speculative-config` or "
         "`--speculative-algorithm`). " +
         (fitted ? std::string(
                       "The replayed ones are fitted with the other records (--fit-speculative): "
                       "SGLang turns its overlap scheduler off when it speculates, and these "
                       "runs alone tell its serial CPU time from GPU time. ")
                 : std::string("None is fitted. ")) +
         "A replayed one runs the fitted profile "
         "with its draft's acceptance measured from the runs where the draft is in the table "
         "below, else the method's default ([engine.md](engine.md#speculative-decoding)); " +
         std::to_string(replayed) + " are replayed.\n\n" + list;
  out +=
      "\nDrafts whose acceptance comes from the runs (tokens a verification step = mean ITL / "
      "mean TPOT of a run where its streaming shows them, else the rate at which a run's gain "
      "is replayed; [engine.md](engine.md#acceptance-from-the-runs)):\n\n"
      "| draft | α | β | from |\n|---|---:|---:|---|\n";
  for (const DraftAcceptance& a : MeasuredDraftAcceptance()) {
    out += "| " + a.draft + " | " + FormatFixed(a.acceptance_rate, 2) + " | " +
           FormatFixed(a.rank_decay, 2) + " | " + a.source + " |\n";
  }
  out += "\nThe replayed records against what was measured:\n\n" + points;
  out +=
      "\nTheir gain over the same run without speculation (same page, workload, model, GPU and "
      "flags but speculation's, or but flags kvbill replays alike: `--performance-mode "
      "interactivity`, `--language-model-only`), time(without) / time(with) − 1, published and "
      "predicted; met "
      "when they differ by at most max(½ × |published gain|, 5 points). Where the two report "
      "the same requests and token totals (the benchmark's seeded sample), kvbill replays the "
      "run without speculation on the requests drawn for the run with it:\n\n" +
      gains;
  if (cross_rows > 0) {
    out +=
        "\nSGLang's EAGLE-3 runs of Qwen3-8B on one H100 have no SGLang run without speculation "
        "at the same concurrency but one; the same page has vLLM runs without it. Across the "
        "two engines (SGLang's scheduler against vLLM's, so an indication, not a validation), "
        "the published speed-up and kvbill's for the same EAGLE-3 draft (depth, top-k and "
        "verified tokens from SGLang's flags) on the vLLM run, by duration:\n\n" +
        cross;
  }
  return out;
}

}  // namespace kvbill
