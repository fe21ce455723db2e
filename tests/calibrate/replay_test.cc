#include "kvbill/calibrate/replay.h"

#include <gtest/gtest.h>

#include <numeric>

#include "kvbill/calibrate/profile_fit.h"
#include "kvbill/cost/engine_profile.h"
#include "kvbill/hardware/gpu.h"
#include "kvbill/policy/context_policy.h"

namespace kvbill {
namespace KVBILL_TEST_FILE_ID {
namespace {

Measurement Record() {
  Measurement m;
  m.id = "r";
  m.engine = "vllm";
  m.engine_version = "v0.11.0";
  m.model = "Qwen/Qwen3-8B";
  m.weights = "bf16";
  m.gpu_text = "H100 SXM";
  m.dataset = "random";
  m.input_len = 1000;
  m.output_len = 100;
  m.num_prompts = 10;
  m.total_input_tokens = 9995;  // tokenisation made some prompts shorter
  m.total_output_tokens = 1000;
  return m;
}

TEST(ReplayTest, FixedLengthRecordSpreadsTheRecordedTotals) {
  const Measurement m = Record();
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_EQ(plan->model_name, "qwen3-8b");
  EXPECT_EQ(plan->config.gpu.id, "h100-sxm");
  EXPECT_TRUE(plan->fixed_lengths);
  ASSERT_EQ(plan->tasks.size(), 10u);
  Tokens in = 0, out = 0;
  for (const auto& reqs : plan->requests) {
    ASSERT_EQ(reqs.size(), 1u);
    in += reqs[0].PromptTokens();
    out += reqs[0].output;
    // 9,995 / 10 spread as whole tokens: 999 or 1,000 each.
    EXPECT_GE(reqs[0].PromptTokens(), 999);
    EXPECT_LE(reqs[0].PromptTokens(), 1000);
  }
  EXPECT_EQ(in, 9995);
  EXPECT_EQ(out, 1000);
  // vLLM V1's defaults for an H100 (>= 70 GiB, not an A100).
  EXPECT_EQ(plan->config.max_num_batched_tokens, 8192);
  EXPECT_EQ(plan->config.max_num_seqs, 1024);
}

// Which FP8 kernel a published *-FP8 checkpoint runs: Qwen's are 128x128
// block-scaled (DeepGEMM); Z.ai's GLM-4.5 FP8 releases are compressed-tensors
// with one scale per output channel and per-token activation scales, which
// SGLang and vLLM run through CUTLASS scaled_mm (docs/engine.md, "Formats").
TEST(ReplayTest, Fp8CheckpointsKeepTheirScaleLayout) {
  std::string why;
  Measurement qwen = Record();
  qwen.model = "Qwen/Qwen3-8B-FP8";
  qwen.weights = "fp8";
  auto q = PlanReplay(qwen, {}, &why);
  ASSERT_TRUE(q.has_value()) << why;
  EXPECT_EQ(q->config.weight_format, "fp8");
  EXPECT_TRUE(q->fp8_checkpoint);
  Measurement glm = Record();
  glm.engine = "sglang";
  glm.engine_version = "v0.5.4.post2";
  glm.engine_flags = "--tp-size 4";
  glm.tp = 4;
  glm.model = "zai-org/GLM-4.5-Air-FP8";
  glm.weights = "fp8";
  auto g = PlanReplay(glm, {}, &why);
  ASSERT_TRUE(g.has_value()) << why;
  EXPECT_EQ(g->model_name, "glm-4.5-air");
  EXPECT_EQ(g->config.weight_format, "fp8");
  EXPECT_FALSE(g->fp8_checkpoint);
}

TEST(ReplayTest, EngineDefaultsFollowTheGpuMemoryClass) {
  auto a100 = LookupGpu("a100-80gb");
  auto h200 = LookupGpu("h200");
  ASSERT_TRUE(a100.ok() && h200.ok());
  EXPECT_EQ(DefaultEngineLimits("vllm", *a100).max_num_batched_tokens, 2048);
  EXPECT_EQ(DefaultEngineLimits("vllm", *a100).max_num_seqs, 256);
  EXPECT_EQ(DefaultEngineLimits("vllm", *h200).max_num_batched_tokens, 8192);
}

// `n` requests of 1,000 + 100 tokens at most `cap` at a time, the first
// one's output `first_output` tokens, replayed with the default profile.
Result<ReplayMetrics> CappedRun(std::int64_t n, int cap, Tokens first_output) {
  Measurement m = Record();
  m.num_prompts = n;
  m.total_input_tokens = 1000.0 * static_cast<double>(n);
  m.total_output_tokens = 100.0 * static_cast<double>(n);
  m.concurrency = cap;
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  if (!plan) return Error(why);
  plan->tasks[0].turns[0].output = first_output;
  auto policy = MakeContextPolicy(ContextPolicyParams{});
  if (!policy) return policy.error();
  plan->requests[0] = (*policy)->Plan(plan->tasks[0]);
  return RunReplay(*plan, EngineProfile{});
}

TEST(ReplayTest, ConcurrencyCapIsOneQueueTheNextRequestTakingAnyFreedSlot) {
  Measurement m = Record();
  m.concurrency = 4;
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  // vllm bench serve --max-concurrency 4: every request its own task, all
  // sent at once, at most 4 in flight.
  ASSERT_EQ(plan->tasks.size(), 10u);
  EXPECT_EQ(plan->config.client_max_tasks, 4);
  for (const Task& t : plan->tasks) EXPECT_EQ(t.arrival_s, 0);

  // Three requests, two at a time, the first one 400 tokens out. Request 1
  // (100 out) finishes long before request 0, and request 2 takes its slot
  // then: it runs beside request 0 and is done before it (at about twice a
  // 100-token request's time), so the run lasts request 0's time. Had
  // request 2 waited for the client that sent request 0 (two fixed
  // clients in turn), the run would last request 0's time and then request
  // 2's. Alone, request 0 takes `d400` and a 100-token request `d100`; two
  // at a time a decode step costs a little more (one more sequence's KV
  // and activations) and requests 1 and 2 each add a prompt iteration.
  auto d400 = CappedRun(1, 1, 400);
  auto d100 = CappedRun(1, 1, 100);
  auto run = CappedRun(3, 2, 400);
  ASSERT_TRUE(d400.ok()) << d400.error().message();
  ASSERT_TRUE(d100.ok()) << d100.error().message();
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_GT(run->duration_s, d400->duration_s);
  EXPECT_LT(run->duration_s, d400->duration_s + 0.5 * d100->duration_s);
}

TEST(ReplayTest, FlagsOverrideTheDefaultsAndTheRecordSaysWhyItIsSkipped) {
  Measurement m = Record();
  m.engine_flags = "--max-num-batched-tokens 16384 --max-num-seqs=512 --async-scheduling";
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_EQ(plan->config.max_num_batched_tokens, 16384);
  EXPECT_EQ(plan->config.max_num_seqs, 512);
  EXPECT_TRUE(plan->async_scheduling);
  const std::pair<std::string, std::string> cases[] = {
      {"trtllm", "engine \"trtllm\" has no kvbill profile (vllm, sglang)"},
  };
  for (const auto& [engine, reason] : cases) {
    Measurement x = Record();
    x.engine = engine;
    EXPECT_FALSE(PlanReplay(x, {}, &why).has_value());
    EXPECT_EQ(why, reason);
  }
  // Expert parallelism needs routed experts, and its degree must be the
  // tensor-parallel one (vLLM's --enable-expert-parallel makes it so).
  Measurement ep = Record();
  ep.tp = 8;
  ep.engine_flags = "-tp 8 --enable-expert-parallel";
  EXPECT_FALSE(PlanReplay(ep, {}, &why).has_value());
  EXPECT_EQ(why, "expert parallelism on a model without routed experts");
  ep.engine_flags = "--tp-size 8 --ep-size 2";
  EXPECT_FALSE(PlanReplay(ep, {}, &why).has_value());
  EXPECT_EQ(why, "expert parallelism of degree 2 with tensor parallelism 8 is not modelled");
  Measurement old = Record();
  old.engine_version = "v0.6.0";
  EXPECT_FALSE(PlanReplay(old, {}, &why).has_value());
  EXPECT_EQ(why, "vLLM v0.6.0 runs the V0 scheduler, which kvbill does not model");
}

// vLLM's --performance-mode (v0.17, vllm/engine/arg_utils.py): throughput
// doubles the limits no flag sets (an H100 server's 8,192 tokens and 1,024
// sequences: 16,384 and 2,048); interactivity only captures more CUDA-graph
// sizes, which kvbill does not pad to, so the defaults stay; any other mode
// and any other engine leave the record out with the reason.
TEST(ReplayTest, VllmPerformanceModeThroughputDoublesTheLimitsNoFlagSets) {
  std::string why;
  Measurement m = Record();
  m.engine_flags = "--performance-mode=throughput";
  auto t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_EQ(t->config.max_num_batched_tokens, 16384);
  EXPECT_EQ(t->config.max_num_seqs, 2048);
  m.engine_flags = "--performance-mode throughput --max-num-seqs=512";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_EQ(t->config.max_num_batched_tokens, 16384);
  EXPECT_EQ(t->config.max_num_seqs, 512);
  m.engine_flags = "--performance-mode=interactivity";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_EQ(t->config.max_num_batched_tokens, 8192);
  EXPECT_EQ(t->config.max_num_seqs, 1024);
  m.engine_flags = "--performance-mode=fast";
  EXPECT_FALSE(PlanReplay(m, {}, &why).has_value());
  EXPECT_EQ(why, "--performance-mode fast: not one of vLLM's modes");
  m.engine = "sglang";
  m.engine_version = "v0.5.3";
  m.engine_flags = "--performance-mode throughput";
  EXPECT_FALSE(PlanReplay(m, {}, &why).has_value());
  EXPECT_EQ(why, "--performance-mode is vLLM's; not modelled for sglang");
}

// vLLM runs MXFP4 experts on Hopper through Marlin before v0.12.0, the
// first release that builds triton_kernels in (PR #28788); a record without
// a version takes the scenario's choice.
TEST(ReplayTest, VllmMxfp4ExpertsRunMarlinBeforeV012) {
  EXPECT_TRUE(VllmMxfp4MarlinByDefault("v0.10.2"));
  EXPECT_TRUE(VllmMxfp4MarlinByDefault("v0.11.0"));
  EXPECT_TRUE(VllmMxfp4MarlinByDefault("0.11.0"));  // as `vllm --version` prints it
  EXPECT_TRUE(VllmMxfp4MarlinByDefault("v0.11"));
  EXPECT_TRUE(VllmMxfp4MarlinByDefault("v0.11.1rc4"));
  EXPECT_TRUE(VllmMxfp4MarlinByDefault("v0.11.2"));
  EXPECT_FALSE(VllmMxfp4MarlinByDefault("v0.12.0"));
  EXPECT_FALSE(VllmMxfp4MarlinByDefault("v0.12.0rc1"));
  EXPECT_FALSE(VllmMxfp4MarlinByDefault("v1.0.0"));
  EXPECT_FALSE(VllmMxfp4MarlinByDefault(""));
  EXPECT_FALSE(VllmMxfp4MarlinByDefault("nightly"));

  std::string why;
  Measurement m = Record();
  m.model = "openai/gpt-oss-20b";
  m.weights = "mxfp4";
  auto t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_TRUE(t->mxfp4_experts_marlin);
  // --detail names the experts' kernel the replay timed.
  auto profile = LoadEngineProfile("vllm");
  ASSERT_TRUE(profile.ok());
  ReplayDetail d;
  ASSERT_TRUE(RunReplay(*t, *profile, &d).ok());
  EXPECT_EQ(d.experts.rfind("mxfp4 on Marlin", 0), 0u) << d.experts;
  EXPECT_NE(ReplayDetailMarkdown(*t, d).find(", experts mxfp4 on Marlin"), std::string::npos);
  // A version written as vLLM prints it, without the v, is read the same
  // (not taken as an unreadable one, which is refused as V0's).
  m.engine_version = "0.11.0";
  auto bare = PlanReplay(m, {}, &why);
  ASSERT_TRUE(bare.has_value()) << why;
  EXPECT_TRUE(bare->mxfp4_experts_marlin);
  m.engine_version = "v0.12.0";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_FALSE(t->mxfp4_experts_marlin);
  ASSERT_TRUE(RunReplay(*t, *profile, &d).ok());
  EXPECT_EQ(d.experts.rfind("mxfp4 on OpenAI Triton", 0), 0u) << d.experts;
  m.engine_version = "";
  m.id = "";
  ReplayDefaults defaults;
  defaults.mxfp4_experts_marlin = true;
  t = PlanReplay(m, defaults, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_TRUE(t->mxfp4_experts_marlin);
}

// vLLM schedules asynchronously by default from v0.14 (PRs #27614 and
// #31998), n-gram speculation excepted; with a draft on the GPU its CPU
// then waits for each step's sampling. Qwen3.5-9B's MTP head takes the
// acceptance measured from gpustack's runs (0.45), other models the
// method's default (an empty list).
TEST(ReplayTest, VllmAsyncSchedulingByVersionAndTheCpuWaitingForDrafts) {
  EXPECT_FALSE(VllmAsyncSchedulingByDefault("v0.11.0", ""));
  EXPECT_FALSE(VllmAsyncSchedulingByDefault("v0.13.2", ""));
  EXPECT_TRUE(VllmAsyncSchedulingByDefault("v0.14.0", ""));
  EXPECT_TRUE(VllmAsyncSchedulingByDefault("0.14.0", ""));
  EXPECT_TRUE(VllmAsyncSchedulingByDefault("v0.17.1", "mtp"));
  EXPECT_FALSE(VllmAsyncSchedulingByDefault("v0.17.1", "ngram"));
  EXPECT_TRUE(VllmAsyncSchedulingByDefault("v1.0.0", "eagle"));
  EXPECT_FALSE(VllmAsyncSchedulingByDefault("", ""));

  std::string why;
  Measurement m = Record();
  auto t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_FALSE(t->async_scheduling);
  m.engine_flags = "--async-scheduling";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_TRUE(t->async_scheduling);
  EXPECT_FALSE(t->cpu_waits_for_sampling);

  m.engine_version = "v0.17.1";
  m.engine_flags = "";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_TRUE(t->async_scheduling);
  EXPECT_FALSE(t->cpu_waits_for_sampling);
  m.engine_flags = "--no-async-scheduling";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_FALSE(t->async_scheduling);

  m.engine_flags = R"(--speculative-config={"method":"mtp","num_speculative_tokens":1})";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_TRUE(t->async_scheduling);
  EXPECT_TRUE(t->cpu_waits_for_sampling);
  ASSERT_TRUE(t->speculative.has_value());
  EXPECT_TRUE(t->speculative->acceptance_rate.empty());  // Qwen3-8B: the default
  m.model = "Qwen/Qwen3.5-9B";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  ASSERT_TRUE(t->speculative.has_value());
  EXPECT_EQ(t->speculative->acceptance_rate, std::vector<double>{0.45});

  // --language-model-only: vLLM loads no vision tower (Qwen3.5-9B's 0.46B
  // parameters, `kvbill kv --model qwen3.5-9b`), so neither does the replay.
  EXPECT_GT(t->config.model.params.vision, 400'000'000);
  m.engine_flags += " --language-model-only";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_EQ(t->config.model.params.vision, 0);

  m.model = "Qwen/Qwen3-8B";
  m.engine_flags = R"(--speculative-config={"method":"ngram","num_speculative_tokens":3})";
  t = PlanReplay(m, {}, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_FALSE(t->async_scheduling);
  EXPECT_FALSE(t->cpu_waits_for_sampling);
  m.engine_flags += " --async-scheduling";
  EXPECT_FALSE(PlanReplay(m, {}, &why).has_value());
  EXPECT_EQ(why, "vLLM refuses --async-scheduling with n-gram speculation (vllm/config/vllm.py)");
}

// SGLang v0.5.3 switches --enable-dp-attention off when dp_size is 1, its
// default (server_args.py L950-952), after the flag has enlarged the memory
// reserve (L650-658): eight H200s replay one scheduler over the eight GPUs
// with mem_fraction_static 0.881 instead of 0.897 (the worked R in
// SglangSchedulerTest.DefaultsFollowTheGpuMemory) and the undivided chunk of
// 8,192. A dp_size above 1 (--dp, which argparse reads as --dp-size) would
// run data-parallel attention, which is not modelled.
TEST(ReplayTest, SglangDpAttentionWithoutADpSizeIsOffButShrinksThePool) {
  Measurement m = Record();
  m.engine = "sglang";
  m.engine_version = "v0.5.3";
  m.gpu_text = "H200 SXM";
  m.tp = 8;
  std::string why;
  m.engine_flags = "--tp 8";
  auto plain = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plain.has_value()) << why;
  EXPECT_DOUBLE_EQ(plain->config.memory_fraction, 0.897);
  for (const char* flags : {"--tp 8 --enable-dp-attention", "--tp-size 8 --enable_dp_attention",
                            "--tp 8 --enable-dp-attention --dp-size 1"}) {
    m.engine_flags = flags;
    auto plan = PlanReplay(m, {}, &why);
    ASSERT_TRUE(plan.has_value()) << flags << ": " << why;
    EXPECT_DOUBLE_EQ(plan->config.memory_fraction, 0.881) << flags;
    EXPECT_EQ(plan->config.gpus_per_replica, 8);
    EXPECT_EQ(plan->config.replicas, 1);
    EXPECT_EQ(plan->config.max_num_batched_tokens, 8192);
    EXPECT_EQ(plan->config.max_num_seqs, plain->config.max_num_seqs);
    EXPECT_TRUE(plan->async_scheduling);
  }
  // An explicit fraction still wins.
  m.engine_flags = "--tp 8 --enable-dp-attention --mem-fraction-static 0.85";
  auto fixed = PlanReplay(m, {}, &why);
  ASSERT_TRUE(fixed.has_value()) << why;
  EXPECT_DOUBLE_EQ(fixed->config.memory_fraction, 0.85);
  const std::pair<const char*, const char*> refused[] = {
      {"--tp 8 --enable-dp-attention --dp 8",
       "SGLang's --enable-dp-attention with dp_size 8 (data-parallel attention) is not modelled"},
      {"--tp 8 --enable-dp-attention --data-parallel-size=2",
       "SGLang's --enable-dp-attention with dp_size 2 (data-parallel attention) is not modelled"},
      {"--tp 8 --dp-size 2", "data-parallel attention is not modelled"},
  };
  for (const auto& [flags, reason] : refused) {
    m.engine_flags = flags;
    EXPECT_FALSE(PlanReplay(m, {}, &why).has_value()) << flags;
    EXPECT_EQ(why, reason);
  }
  // vLLM has no such flag: a record carrying it is left out as before.
  Measurement v = Record();
  v.engine_flags = "--enable-dp-attention";
  EXPECT_FALSE(PlanReplay(v, {}, &why).has_value());
  EXPECT_EQ(why, "data-parallel attention is not modelled");
}

// A published run served every request. SGLang caps requests at what its
// pool holds (min(context, pool) - 1); Qwen3-32B in BF16 on one H100 at
// SGLang's own memory fraction holds about 16,000 tokens, so 30,000-token
// prompts would be refused: the replay says the record had more memory
// than kvbill gives it, rather than report on the requests it kept.
TEST(ReplayTest, ASglangReplayThatWouldRefuseRequestsIsAnError) {
  Measurement m = Record();
  m.engine = "sglang";
  m.engine_version = "v0.5.3";
  m.model = "Qwen/Qwen3-32B";
  m.input_len = 30000;
  m.output_len = 10;
  m.num_prompts = 2;
  m.total_input_tokens = 60000;
  m.total_output_tokens = 20;
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  auto r = RunReplay(*plan, EngineProfile{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("the replay refused 2 request(s) of up to 30,010"),
            std::string::npos)
      << r.error().message();
  EXPECT_NE(r.error().message().find("which the record's engine served"), std::string::npos);
  // The same prompts at 8,000 tokens fit and replay.
  m.input_len = 8000;
  m.total_input_tokens = 16000;
  plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_TRUE(RunReplay(*plan, EngineProfile{}).ok());
}

TEST(ReplayTest, LimitFlagsThatAreNotPositiveLeaveTheRecordOutWithTheReason) {
  // A limit of 0 (or -3, or a word) would schedule nothing; a memory
  // fraction outside (0, 1] is no fraction: the record is not replayed, and
  // the reason names the flag and its value.
  const std::pair<const char*, const char*> cases[] = {
      {"sglang", "--chunked-prefill-size 0"}, {"vllm", "--max-num-seqs -3"},
      {"sglang", "--cuda-graph-max-bs lots"}, {"sglang", "--mem-fraction-static 1.5"},
      {"vllm", "--gpu-memory-utilization 0"},
  };
  const char* reasons[] = {
      "--chunked-prefill-size 0: must be a positive integer",
      "--max-num-seqs -3: must be a positive integer",
      "--cuda-graph-max-bs lots: must be a positive integer",
      "--mem-fraction-static 1.5: must be in (0, 1]",
      "--gpu-memory-utilization 0: must be in (0, 1]",
  };
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    Measurement m = Record();
    m.engine = cases[i].first;
    m.engine_flags = cases[i].second;
    std::string why;
    EXPECT_FALSE(PlanReplay(m, {}, &why).has_value()) << cases[i].second;
    EXPECT_EQ(why, reasons[i]);
  }
}

TEST(ReplayTest, SglangSpeculativeFlagsBecomeATree) {
  // The published Qwen3-8B EAGLE-3 run: depth 4, top-k 4, 16 tokens verified.
  std::string why;
  auto parse = [&why](const std::string& flags) {
    return SglangSpeculativeSpec(ParseEngineFlags(flags), &why);
  };
  const std::string tree_flags =
      "--speculative-algorithm EAGLE3 --speculative-draft-model-path Tengyunw/qwen3_8b_eagle3 "
      "--speculative-num-steps 4 --speculative-eagle-topk 4 --speculative-num-draft-tokens 16";
  auto tree = parse(tree_flags);
  ASSERT_TRUE(tree.has_value()) << why;
  EXPECT_EQ(tree->method, "eagle3");
  EXPECT_EQ(tree->num_speculative_tokens, 4);
  EXPECT_EQ(tree->topk, 4);
  EXPECT_EQ(tree->num_draft_tokens, 16);
  EXPECT_TRUE(ResolveSpeculative(*tree).ok());
  // Top-k 1: SGLang verifies depth + 1 whatever the flag says (2 + 1, not 4).
  auto chain = parse(
      "--speculative-algorithm EAGLE3 --speculative-draft-model-path x --speculative-num-steps 2 "
      "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4");
  ASSERT_TRUE(chain.has_value()) << why;
  EXPECT_EQ(chain->num_draft_tokens, 3);
  // EAGLE without a draft model: the model's own MTP layer (DeepSeek's).
  auto mtp = parse(
      "--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
      "--speculative-num-draft-tokens 2");
  ASSERT_TRUE(mtp.has_value()) << why;
  EXPECT_EQ(mtp->method, "mtp");
  EXPECT_FALSE(parse("--speculative-algorithm NGRAM"));
  EXPECT_EQ(why, "--speculative-algorithm NGRAM: only EAGLE, NEXTN and EAGLE3 are replayed");
  EXPECT_FALSE(parse("--speculative-algorithm EAGLE3"));
  EXPECT_EQ(why,
            "--speculative-algorithm EAGLE3 without --speculative-num-steps (SGLang then picks "
            "the tree per model)");
  // An SGLang record replays on SGLang's scheduler with the tree, and with
  // what SGLang sets when it speculates (server_args.py): at most 48
  // running requests and no overlap scheduler.
  Measurement m = Record();
  m.engine = "sglang";
  m.engine_flags = tree_flags;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_EQ(plan->config.scheduler, SchedulerKind::kSglang);
  EXPECT_EQ(plan->config.max_num_seqs, 48);
  EXPECT_FALSE(plan->async_scheduling);
  // Graphs up to 48 captured, but the memory reserve counts the H100's 256
  // (server_args.py sets the fraction before speculation caps the batch):
  // 0.810, worked in SglangSchedulerTest.DefaultsFollowTheGpuMemory (48
  // would give R = 512 + 12,288 + 96 + 128 + 2,048 = 15,072: 0.81509 ->
  // 0.815).
  EXPECT_EQ(plan->cuda_graph_max_batch, 48);
  EXPECT_DOUBLE_EQ(plan->config.memory_fraction, 0.810);
  ASSERT_TRUE(plan->speculative.has_value());
  EXPECT_EQ(plan->speculative->topk, 4);
  EXPECT_EQ(plan->speculative->num_draft_tokens, 16);
}

TEST(ReplayTest, DraftAcceptanceComesFromTheRunsTokensPerStep) {
  // gpustack's Qwen3-8B page, draft Tengyunw/qwen3_8b_eagle3 (mean ITL / mean
  // TPOT = tokens a verification step). The chain run b15 (steps 2):
  // 8.78 / 4.37 = 2.00915 = 1 + α + α², so α = (−1 + √(1 + 4 × 1.00915)) / 2
  // = (−1 + √5.0366) / 2 = (−1 + 2.24424) / 2 = 0.62212.
  const double alpha = ChainAcceptanceForTokensPerStep(8.78 / 4.37, 2);
  EXPECT_NEAR(alpha, 0.62212, 1e-4);
  // k 1: E = 1 + α, so 1.85 tokens a step is α 0.85.
  EXPECT_NEAR(ChainAcceptanceForTokensPerStep(1.85, 1), 0.85, 1e-9);
  // β for a tree of depth 2, top-k 2, all six candidates verified at α 0.5:
  // docs/engine.md works β 0.5 by hand to E = 2.3125, so 2.3125 gives back 0.5.
  EXPECT_NEAR(TreeRankDecayForTokensPerStep(2.3125, 0.5, 2, 2, 7), 0.5, 1e-9);
  // The table's values are those two derivations rounded to two digits
  // (the β one: the median of the seven runs of depth 4, top-k 4, 16 tokens,
  // 11.05/3.75, 11.69/4.07, 11.38/3.53, 8.74/2.67, 9.69/3.04, 10.54/3.34,
  // 13.06/4.82 -> the fourth largest, 10.54 / 3.34 = 3.1557).
  const DraftAcceptance* a = FindDraftAcceptance("Tengyunw/qwen3_8b_eagle3");
  ASSERT_NE(a, nullptr);
  EXPECT_NEAR(a->acceptance_rate, alpha, 0.005);
  EXPECT_NEAR(a->rank_decay, TreeRankDecayForTokensPerStep(10.54 / 3.34, alpha, 4, 4, 16), 0.005);
  // AngelSlim/Qwen3-8B_eagle3's one run, b09 (depth 4, top-k 4, 16 tokens):
  // 10.49 / 4.45 = 2.3573 tokens a step at Tengyunw's β. As a check of the
  // inverse: at α 0.5 and β 0.5 the depth-2, top-k-2 tree above gives
  // 2.3125, so 2.3125 at β 0.5 gives back α 0.5.
  EXPECT_NEAR(TreeAcceptanceForTokensPerStep(2.3125, 0.5, 2, 2, 7), 0.5, 1e-9);
  const DraftAcceptance* angel = FindDraftAcceptance("AngelSlim/Qwen3-8B_eagle3");
  ASSERT_NE(angel, nullptr);
  EXPECT_EQ(angel->rank_decay, a->rank_decay);
  EXPECT_NEAR(angel->acceptance_rate,
              TreeAcceptanceForTokensPerStep(10.49 / 4.45, a->rank_decay, 4, 4, 16), 0.005);
  EXPECT_LT(angel->acceptance_rate, a->acceptance_rate);  // fewer tokens a step than Tengyunw's
  EXPECT_EQ(FindDraftAcceptance("some/other-draft"), nullptr);
  // The flags of a run with that draft carry its α and β; another draft
  // keeps the method's defaults (an empty rate list, no β).
  std::string why;
  auto with_draft = [&why](const std::string& draft) {
    return SglangSpeculativeSpec(
        ParseEngineFlags("--speculative-algorithm EAGLE3 --speculative-draft-model-path " + draft +
                         " --speculative-num-steps 4 --speculative-eagle-topk 4 "
                         "--speculative-num-draft-tokens 16"),
        &why);
  };
  auto spec = with_draft("Tengyunw/qwen3_8b_eagle3");
  ASSERT_TRUE(spec.has_value()) << why;
  ASSERT_EQ(spec->acceptance_rate.size(), 1u);
  EXPECT_DOUBLE_EQ(spec->acceptance_rate[0], 0.62);
  EXPECT_EQ(spec->rank_decay, 0.26);
  auto other = with_draft("some/other-draft");
  ASSERT_TRUE(other.has_value()) << why;
  EXPECT_TRUE(other->acceptance_rate.empty());
  EXPECT_FALSE(other->rank_decay.has_value());
}

TEST(ReplayTest, ShareGptLengthsSumToTheRecordedTotalsWithinTheBenchmarkFilter) {
  Measurement m = Record();
  m.dataset = "sharegpt";
  m.input_len.reset();
  m.output_len.reset();
  m.num_prompts = 200;
  m.total_input_tokens = 200 * 220.0;
  m.total_output_tokens = 200 * 190.0;
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  Tokens in = 0, out = 0;
  for (const auto& reqs : plan->requests) {
    const Tokens p = reqs[0].PromptTokens();
    EXPECT_GE(p, 4);
    EXPECT_LE(p, 1024);
    EXPECT_LE(p + reqs[0].output, 2048);
    in += p;
    out += reqs[0].output;
  }
  // Whole-token rounding of a scale found by bisection: within 0.5%.
  EXPECT_NEAR(static_cast<double>(in), 44000, 220);
  EXPECT_NEAR(static_cast<double>(out), 38000, 190);
}

// Three requests of 1,000 + 100 tokens, one at a time (concurrency 1).
Measurement ThreeOneAtATime() {
  Measurement m = Record();
  m.concurrency = 1;
  m.num_prompts = 3;
  m.total_input_tokens = 3000;
  m.total_output_tokens = 300;
  return m;
}

// A guidellm record (gpustack/benchmark-runner): --profile constant at
// `rate`, n requests of 1,000 + 100 tokens.
Measurement Guidellm(double rate, std::int64_t n) {
  Measurement m = Record();
  m.client = BenchmarkClient::kGuidellm;
  m.client_profile = "constant";
  m.request_rate = rate;
  m.num_prompts = n;
  m.total_input_tokens = 1000.0 * static_cast<double>(n);
  m.total_output_tokens = 100.0 * static_cast<double>(n);
  return m;
}

TEST(ReplayTest, GuidellmConstantRateIsEvenlySpacedAndCappedAt512) {
  // --profile constant --rate 4: request k (from 1) goes at k / 4 s
  // (guidellm's AsyncConstantStrategy): 0.25, 0.5, 0.75, 1.0, 1.25 s.
  const Measurement m = Guidellm(4, 5);
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_EQ(plan->client, BenchmarkClient::kGuidellm);
  EXPECT_EQ(plan->config.client_max_tasks, 512);
  ASSERT_EQ(plan->tasks.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(plan->tasks[i].arrival_s, 0.25 * static_cast<double>(i + 1));
    EXPECT_EQ(plan->tasks[i].turns.size(), 1u);
  }
  // The same record from vllm bench serve: Poisson, no client cap.
  Measurement bench = m;
  bench.client = BenchmarkClient::kVllmBench;
  auto poisson = PlanReplay(bench, {}, &why);
  ASSERT_TRUE(poisson.has_value()) << why;
  EXPECT_EQ(poisson->config.client_max_tasks, 0);
  EXPECT_NE(poisson->tasks[1].arrival_s - poisson->tasks[0].arrival_s,
            poisson->tasks[2].arrival_s - poisson->tasks[1].arrival_s);
  // A profile guidellm has but kvbill does not replay is named.
  Measurement sweep = m;
  sweep.client_profile = "sweep";
  EXPECT_FALSE(PlanReplay(sweep, {}, &why).has_value());
  EXPECT_NE(why.find("--profile sweep"), std::string::npos) << why;
}

TEST(ReplayTest, GuidellmTpotCountsFromTheSendOverEveryOutputToken) {
  // Three requests 1,000 s apart (rate 0.001): each runs alone, identical,
  // so e2e is the same for all. guidellm's TPOT is (last token − sent) /
  // output = e2e / 100; the duration runs from the first send (1,000 s) to
  // the last finish (3,000 s + e2e).
  const Measurement m = Guidellm(0.001, 3);
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  auto r = RunReplay(*plan, EngineProfile{});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_NEAR(r->tpot_ms_mean, r->e2e_ms_mean / 100, 1e-9 * r->e2e_ms_mean);
  EXPECT_NEAR(r->duration_s, 2000 + r->e2e_ms_mean / 1000, 1e-6);
  // vllm bench's TPOT of the same requests: (e2e − TTFT) / 99, smaller.
  Measurement bench = m;
  bench.client = BenchmarkClient::kVllmBench;
  auto bench_plan = PlanReplay(bench, {}, &why);
  ASSERT_TRUE(bench_plan.has_value()) << why;
  bench_plan->tasks = plan->tasks;  // the same arrivals
  bench_plan->requests = plan->requests;
  auto b = RunReplay(*bench_plan, EngineProfile{});
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_NEAR(b->e2e_ms_mean, r->e2e_ms_mean, 1e-9 * r->e2e_ms_mean);
  EXPECT_NEAR(b->tpot_ms_mean, (r->e2e_ms_mean - r->ttft_ms_mean) / 99, 1e-6);
}

TEST(ReplayTest, GuidellmMeanTpotIsWeightedByOutputTokens) {
  // Two lone requests (rate 0.001: 1,000 s apart) with 10 and 100 output
  // tokens. guidellm v0.5.3 weights each request's (last token - sent) /
  // output by its output tokens, so the mean is (e2e_1 + e2e_2) / 110 =
  // 2 * mean e2e / 110, not the plain mean of e2e_1 / 10 and e2e_2 / 100
  // (which the short request's TTFT would dominate).
  const Measurement m = Guidellm(0.001, 2);
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  ASSERT_EQ(plan->requests.size(), 2u);
  plan->requests[0].front().output = 10;
  plan->requests[1].front().output = 100;
  auto r = RunReplay(*plan, EngineProfile{});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_NEAR(r->tpot_ms_mean, 2 * r->e2e_ms_mean / 110, 1e-9 * r->e2e_ms_mean);
}

TEST(ReplayTest, GuidellmQueuesPast512AtTheClientAndTimesFromTheSend) {
  // 1,024 requests at 10^6 req/s (all within a millisecond). guidellm sends
  // 512, the rest wait at the client and go as slots free, their clocks
  // starting then; the server never holds more than 512. Read as vllm
  // bench (no cap), all 1,024 wait in the server's queue with their clocks
  // running. Same arrivals, same work, served first come first served
  // either way: a request's first token comes at about the same time, but
  // the capped client starts its clock later for the second half, so its
  // mean TTFT and E2E are lower (the client-side wait is in neither).
  const Measurement m = Guidellm(1e6, 1024);
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  auto capped = RunReplay(*plan, EngineProfile{});
  ASSERT_TRUE(capped.ok()) << capped.error().message();
  ReplayPlan open = *plan;
  open.config.client_max_tasks = 0;
  auto uncapped = RunReplay(open, EngineProfile{});
  ASSERT_TRUE(uncapped.ok()) << uncapped.error().message();
  EXPECT_LT(capped->ttft_ms_mean, uncapped->ttft_ms_mean);
  EXPECT_LT(capped->e2e_ms_mean, uncapped->e2e_ms_mean);
}

TEST(ReplayTest, MetricsAreComputedAsTheBenchmarkReportsThem) {
  // One request at a time (concurrency 1) of 1,000 + 100 tokens: TTFT is
  // the prefill iteration plus any frontend time; TPOT the mean decode step.
  const Measurement m = ThreeOneAtATime();
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EngineProfile profile;
  profile.params.frontend_per_request_s = 0.5;  // dominates, to be seen in TTFT
  auto r = RunReplay(*plan, profile);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_GT(r->ttft_ms_mean, 500);
  EXPECT_LT(r->ttft_ms_mean, 600);
  // Three requests back to back: the duration covers three frontends,
  // three prefills and 3 x 99 decode steps.
  EXPECT_NEAR(r->duration_s, 3 * (r->ttft_ms_mean / 1000 + 99 * r->tpot_ms_mean / 1000), 1e-6);
  EXPECT_NEAR(r->output_tok_s, 300 / r->duration_s, 1e-9);
  // Each request lives its TTFT and 99 decode steps.
  EXPECT_NEAR(r->e2e_ms_mean, r->ttft_ms_mean + 99 * r->tpot_ms_mean, 1e-6);
}

TEST(ReplayTest, DetailCountsTheIterationsOfAReplayByKind) {
  // Three requests of 1,000 + 100 tokens one after another (concurrency 1),
  // no frontend time: each is one prompt-only iteration (1,000 tokens, under
  // the 8,192 budget) and 99 decode-only iterations of one sequence.
  Measurement m = ThreeOneAtATime();
  m.itl_ms_p50 = 7.5;
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  const EngineProfile profile;
  ReplayDetail d;
  auto r = RunReplay(*plan, profile, &d);
  ASSERT_TRUE(r.ok()) << r.error().message();
  // The metrics are those of the replay without detail (event == step).
  auto plain = RunReplay(*plan, profile);
  ASSERT_TRUE(plain.ok());
  EXPECT_NEAR(r->duration_s, plain->duration_s, 1e-9 * plain->duration_s);
  EXPECT_NEAR(d.metrics.tpot_ms_mean, plain->tpot_ms_mean, 1e-9 * plain->tpot_ms_mean);
  EXPECT_EQ(d.requests, 3);
  EXPECT_EQ(d.prompt_tokens, 3000);
  EXPECT_EQ(d.prefill_tokens, 3000);  // nothing recomputed
  EXPECT_EQ(d.preemptions, 0);
  EXPECT_EQ(d.prefill_only.count, 3);
  EXPECT_DOUBLE_EQ(d.prefill_only.prefill_tokens, 3000);
  EXPECT_EQ(d.decode_only.count, 3 * 99);
  EXPECT_DOUBLE_EQ(d.decode_only.decodes, 3 * 99);
  EXPECT_EQ(d.mixed.count, 0);
  EXPECT_EQ(d.peak_batch, 1);
  EXPECT_EQ(d.peak_decodes, 1);
  EXPECT_EQ(d.pool_tokens, d.pool_blocks * 16);
  EXPECT_GE(d.pool_tokens, 1100);  // a request fits
  // TTFT is the prompt iteration, TPOT the mean decode step, and the GPU is
  // never idle: the iterations add up to the duration.
  EXPECT_NEAR(1000 * d.prefill_only.seconds / 3, r->ttft_ms_mean, 1e-6);
  EXPECT_NEAR(1000 * d.decode_only.seconds / 297, r->tpot_ms_mean, 1e-6);
  EXPECT_NEAR(d.prefill_only.seconds + d.decode_only.seconds, r->duration_s, 1e-6);
  // ITL: 297 decode steps, each request's at contexts 1,000 .. 1,098. The
  // median (rank 149 of 297, every step three times) is the step at context
  // 1,049, the middle of each request's 99; a step's time grows linearly
  // with its context, so that is the mean step, TPOT. The 99th percentile
  // (rank 295) is the last step, the longest.
  EXPECT_NEAR(d.itl_ms_p50, r->tpot_ms_mean, 1e-3 * r->tpot_ms_mean);
  EXPECT_GT(d.itl_ms_p99, d.itl_ms_p50);
  // Every request's gaps are the same 99 steps: the mean gap is the mean
  // TPOT, and so is each request's TPOT, hence their median.
  EXPECT_NEAR(d.itl_ms_mean, r->tpot_ms_mean, 1e-9 * r->tpot_ms_mean);
  EXPECT_NEAR(d.tpot_ms_p50, r->tpot_ms_mean, 1e-9 * r->tpot_ms_mean);
  const std::string md = ReplayDetailMarkdown(*plan, d);
  EXPECT_NE(md.find("## r\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| itl_ms_p50 | 7.50 | "), std::string::npos) << md;
  EXPECT_NE(md.find("| tpot_ms_mean | — | "), std::string::npos) << md;  // not in the record
  EXPECT_NE(md.find("| prompt chunks only | 3 | "), std::string::npos) << md;
}

// A prompt in several chunks gives its first token at its last one: the
// earlier chunks are not gaps between tokens. The three requests above with
// a budget of 256 tokens: each prompt runs in four prompt-only chunks (256,
// 256, 256, 232), then 99 decode steps at the same contexts as with one
// chunk, so every ITL statistic is as with one chunk (a gap counted from the
// first chunk would add three chunks to each request's first gap and make
// the 99th percentile, rank 295 of 297, one of those three).
TEST(ReplayTest, AChunkedPromptsEarlierChunksAreNotGapsBetweenTokens) {
  Measurement m = ThreeOneAtATime();
  m.itl_ms_p50 = 7.5;
  std::string why;
  auto whole = PlanReplay(m, {}, &why);
  ASSERT_TRUE(whole.has_value()) << why;
  ReplayPlan chunked = *whole;
  chunked.config.max_num_batched_tokens = 256;
  const EngineProfile profile;
  ReplayDetail one, four;
  ASSERT_TRUE(RunReplay(*whole, profile, &one).ok());
  ASSERT_TRUE(RunReplay(chunked, profile, &four).ok());
  EXPECT_EQ(four.prefill_only.count, 12);
  EXPECT_EQ(four.decode_only.count, 3 * 99);
  EXPECT_DOUBLE_EQ(four.itl_ms_p50, one.itl_ms_p50);
  EXPECT_DOUBLE_EQ(four.itl_ms_p99, one.itl_ms_p99);
  EXPECT_DOUBLE_EQ(four.itl_ms_mean, one.itl_ms_mean);
}

// Each record's plan with the defaults (each must plan).
std::vector<ReplayPlan> PlansOf(std::initializer_list<const Measurement*> records) {
  std::vector<ReplayPlan> plans;
  for (const Measurement* m : records) {
    std::string why;
    auto plan = PlanReplay(*m, {}, &why);
    EXPECT_TRUE(plan.has_value()) << m->id << ": " << why;
    if (plan) plans.push_back(*plan);
  }
  return plans;
}

// Gaps as the client sees them, worked by hand. Prompt-only iterations of
// 0.1 s (2 prompts) and 0.2 s (3 prompts), then a decode iteration of 0.05 s
// with 10 decodes: the 2 sequences first served wait 0.2 + 0.05 = 0.25 s,
// the next 3 wait 0.05 s, the 5 decoding before wait 0.1 + 0.2 + 0.05 =
// 0.35 s; then a decode iteration of 0.04 s, 10 gaps of 0.04 s. Sorted:
// 0.04 x10, 0.05 x3, 0.25 x2, 0.35 x5 (20 gaps): the median (rank 10) is
// 0.04, rank 15 (p75) 0.25, rank 20 (p99) 0.35.
TEST(ReplayTest, InterTokenGapsCountThePromptOnlyIterationsBetweenTokens) {
  const std::vector<IterationEntry> log = {
      {0.1, 2, 0, 200, 2}, {0.2, 3, 0, 300, 3}, {0.05, 10, 10, 0, 0}, {0.04, 10, 10, 0, 0}};
  const InterTokenGaps gaps(log);
  EXPECT_DOUBLE_EQ(gaps.Percentile(50), 0.04);
  EXPECT_DOUBLE_EQ(gaps.Percentile(75), 0.25);
  EXPECT_DOUBLE_EQ(gaps.Percentile(99), 0.35);
  // Mean: (0.04 x 10 + 0.05 x 3 + 0.25 x 2 + 0.35 x 5) / 20 = 2.8 / 20.
  EXPECT_DOUBLE_EQ(gaps.Mean(), 0.14);
  // More prompts than decodes (one whose sequence does not decode yet): the
  // oldest are served first.
  const std::vector<IterationEntry> partial = {{0.1, 4, 0, 400, 4}, {0.05, 3, 3, 0, 0}};
  EXPECT_DOUBLE_EQ(InterTokenGaps(partial).Percentile(100), 0.05);
  // A long prompt in two prompt-only chunks of 0.5 s, the first not ending
  // it (first_tokens 0), then a decode iteration of 0.05 s: the prompt's
  // sequence got its first token at the end of the second chunk, so its gap
  // is 0.05 s; the one sequence decoding before waited both chunks, 1.05 s.
  // (Counting the first chunk as a first token would give 0.55 and 0.05.)
  const std::vector<IterationEntry> chunked = {
      {0.5, 1, 0, 2048, 0}, {0.5, 1, 0, 2048, 1}, {0.05, 2, 2, 0, 0}};
  const InterTokenGaps c(chunked);
  EXPECT_DOUBLE_EQ(c.Percentile(50), 0.05);
  EXPECT_DOUBLE_EQ(c.Percentile(100), 1.05);
  EXPECT_DOUBLE_EQ(InterTokenGaps({}).Percentile(50), 0);
}

// A record that names no engine version (vllm bench --save-result) runs as
// --scenario says (ReplayDefaults::async_scheduling), synchronously without
// one; a record with a version keeps that version's default, and a flag
// beats both.
TEST(ReplayTest, AVersionlessRecordSchedulesAsTheScenarioSays) {
  std::string why;
  Measurement m = Record();
  m.engine_version = "";
  m.dataset = "bench";  // what ReadMeasurements makes of a --save-result file
  m.input_lens.assign(10, 1000);
  m.output_lens.assign(10, 100);
  ReplayDefaults defaults;
  auto t = PlanReplay(m, defaults, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_FALSE(t->async_scheduling);
  defaults.async_scheduling = true;
  t = PlanReplay(m, defaults, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_TRUE(t->async_scheduling);
  m.engine_flags = "--no-async-scheduling";
  t = PlanReplay(m, defaults, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_FALSE(t->async_scheduling);
  m.engine_flags = "";
  m.engine_version = "v0.11.0";  // synchronous by default, whatever the scenario
  m.dataset = "random";
  t = PlanReplay(m, defaults, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_FALSE(t->async_scheduling);
}

// The validation page's ITL section: a record's median ITL beside the
// step-mode replay's (whose median, as above, is the mean decode step, the
// replay's TPOT); a record flagged itl_reported_zero is left out; a
// record the fit leaves out is marked and kept out of the medians.
TEST(ReplayTest, InterTokenLatencySectionComparesTheMedianStep) {
  Measurement a = ThreeOneAtATime();
  a.id = "a";
  a.itl_ms_p50 = 5.0;
  Measurement zero = a;
  zero.id = "zero";
  zero.quality_flags = {"itl_reported_zero"};
  Measurement out = a;
  out.id = "out";
  const std::vector<ReplayPlan> plans = PlansOf({&a, &zero, &out});
  ASSERT_EQ(plans.size(), 3u);
  const EngineProfile profile;
  ReplayDetail d;
  auto plain = RunReplay(plans[0], profile, &d);
  ASSERT_TRUE(plain.ok());
  EXPECT_NEAR(d.itl_ms_p50, plain->tpot_ms_mean, 1e-3 * plain->tpot_ms_mean);
  const std::string md =
      InterTokenLatencyMarkdown(plans, profile, {FitExclusion{"out", "a slow machine"}});
  const double ratio = d.itl_ms_p50 / 5.0;
  char row[160];
  std::snprintf(row, sizeof row,
                "| a | random 1000/100 x3, concurrency 1 | 1 | 5.0 | %.1f | %.2f |", d.itl_ms_p50,
                ratio);
  EXPECT_NE(md.find(row), std::string::npos) << row << "\n" << md;
  EXPECT_EQ(md.find("| zero |"), std::string::npos) << md;
  EXPECT_NE(md.find("| out (not fitted) |"), std::string::npos) << md;
  char summary[160];
  std::snprintf(summary, sizeof summary, "Median ratio over the records fitted: %.2f (n = 1); %.2f",
                ratio, ratio);
  EXPECT_NE(md.find(summary), std::string::npos) << summary << "\n" << md;
  EXPECT_NE(md.find("256 or more (n = 0)"), std::string::npos) << md;
}

// Evaluate adds a median-ITL point for the records whose ITL compares (not
// guidellm's, not one flagged itl_reported_zero), the step-mode replay's
// median; Stats counts them apart from the duration and latency points.
TEST(ReplayTest, EvaluateFitsTheMedianItlWhereItCompares) {
  Measurement a = ThreeOneAtATime();
  a.id = "a";
  a.itl_ms_p50 = 5.0;
  a.duration_s = 3.0;
  Measurement zero = a;
  zero.id = "zero";
  zero.quality_flags = {"itl_reported_zero"};
  Measurement g = Guidellm(1.0, 3);
  g.id = "g";
  g.itl_ms_p50 = 5.0;
  g.duration_s = 3.0;
  const std::vector<ReplayPlan> plans = PlansOf({&a, &zero, &g});
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_TRUE(ItlComparable(plans[0]));
  EXPECT_FALSE(ItlComparable(plans[1]));
  EXPECT_FALSE(ItlComparable(plans[2]));
  // 4 output tokens a request (3 gaps, all while the others are admitted):
  // under kItlMinMeanOutput = 32, the median gap is not a decode step.
  Measurement few = a;
  few.output_len = 4;
  few.total_output_tokens = 12;
  std::string why;
  auto few_plan = PlanReplay(few, {}, &why);
  ASSERT_TRUE(few_plan.has_value()) << why;
  EXPECT_FALSE(ItlComparable(*few_plan));
  const EngineProfile profile;
  ReplayDetail d;
  ASSERT_TRUE(RunReplay(plans[0], profile, &d).ok());
  const std::vector<MetricPoint> points = Evaluate(plans, profile, nullptr);
  std::vector<MetricPoint> itl;
  for (const MetricPoint& p : points) {
    if (p.metric == kItlMetric) itl.push_back(p);
  }
  ASSERT_EQ(itl.size(), 1u);
  EXPECT_EQ(itl[0].record, "a");
  EXPECT_DOUBLE_EQ(itl[0].measured, 5.0);
  EXPECT_DOUBLE_EQ(itl[0].predicted, d.itl_ms_p50);
  // Duration for all three; the ITL point only in the ITL count.
  EXPECT_EQ(Stats(points).points, 3);
  EXPECT_EQ(Stats(points, true).points, 1);
}

// SGLang on a hybrid Gated DeltaNet model (Qwen3.5-9B: 24 linear-attention
// layers): from the mamba radix cache on (v0.5.3.post2) the cache stays on
// with its no_buffer strategy and SGLang turns the overlap scheduler off
// (server_args.py _handle_mamba_radix_cache at v0.5.9); --disable-radix-cache
// keeps the overlap. v0.5.3 forced the radix cache off and kept the overlap.
TEST(ReplayTest, SglangHybridModelTakesItsVersionsStateRules) {
  Measurement m = Record();
  m.engine = "sglang";
  m.engine_version = "v0.5.9";
  m.model = "Qwen/Qwen3.5-9B";
  std::string why;
  auto plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  ASSERT_TRUE(plan->sglang_state.has_value());
  EXPECT_TRUE(plan->sglang_state->mamba_radix_cache);
  EXPECT_TRUE(plan->sglang_state->radix_cache);
  EXPECT_FALSE(plan->async_scheduling);
  m.engine_flags = "--disable-radix-cache --max-running-requests 64";
  plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_FALSE(plan->sglang_state->radix_cache);
  EXPECT_EQ(plan->sglang_state->max_running_requests, 64);
  EXPECT_TRUE(plan->async_scheduling);
  m.engine_flags = "";
  m.engine_version = "v0.5.3";
  plan = PlanReplay(m, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_FALSE(plan->sglang_state->mamba_radix_cache);
  EXPECT_FALSE(plan->sglang_state->radix_cache);
  EXPECT_TRUE(plan->async_scheduling);
  // A model without state layers keeps SGLang's plain rules.
  Measurement dense = Record();
  dense.engine = "sglang";
  dense.engine_version = "v0.5.9";
  plan = PlanReplay(dense, {}, &why);
  ASSERT_TRUE(plan.has_value()) << why;
  EXPECT_FALSE(plan->sglang_state.has_value());
  EXPECT_TRUE(plan->async_scheduling);
}

}  // namespace
}  // namespace KVBILL_TEST_FILE_ID
}  // namespace kvbill
