// ProviderCache: a model of an API provider's prompt cache, keyed by prompt
// prefix. Requests are served in time order; each is split into tokens read
// from the cache, tokens written to it and uncached input, as the provider
// bills them (api_bill.h prices the split). The rules per provider are in
// docs/billing.md#provider-caching-rules; one implementation per file in
// src/cost/, chosen by name from the table in provider_cache.cc:
//
//   anthropic  explicit breakpoints, one at the end of each request's prompt
//              (as coding agents place it). A request reads the longest
//              prefix that an earlier request wrote at its breakpoint and
//              that is still alive: written or read less than the lifetime
//              ago (ttl_s 300, refreshed on every read; or 3600). Alive means
//              now - last_use < ttl_s, so an entry used at t = 0 is gone at
//              exactly t = ttl_s. The tokens from there to the request's own
//              breakpoint are written (1.25x input for 300 s, 2x for 3600 s).
//              A prompt shorter than the model's minimum cacheable length is
//              neither written nor read.
//   openai     automatic: a prompt of at least 1,024 tokens is cached in
//              128-token steps (1,024, 1,152, ...), no write fee; a request
//              reads the longest alive step; retention ttl_s (default 300)
//              since last use.
//              With write_fee (default for GPT-5.6 models), the tokens from
//              the read to the prompt's last step are cache writes, priced
//              at the sheet's cache_write_5m (GPT-5.6: 1.25x input), and
//              ttl_s defaults to 1,800.
//   deepseek   automatic disk cache in 64-token units from 64 tokens, no write
//              fee; retention ttl_s (default 10,800: the low end of the
//              "a few hours to a few days" DeepSeek documents).
//   gemini     implicit (default): automatic, from the model's minimum
//              (GeminiMinimumCacheableTokens) in 128-token steps, no write
//              fee, retention ttl_s (default 300; Google publishes none).
//              explicit: named caches of a prefix (prefix_tokens, or 0 for
//              the whole prompt of a request that finds no live cache),
//              alive for ttl_s (default 3,600) from creation, not refreshed
//              by reads. A request reads the longest live cache that is a
//              prefix of its prompt; the rest is input. Creating a cache is
//              a separate charge (Creations()): its tokens at the input price
//              and storage per token-hour for the whole ttl_s.
//
// Identity: two prefixes are the same tokens when their content pieces
// (cache/block_hash.h) agree, compared by PrefixHashes below.
#ifndef KVBILL_COST_PROVIDER_CACHE_H_
#define KVBILL_COST_PROVIDER_CACHE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kvbill/cache/block_hash.h"
#include "kvbill/cost/api_bill.h"
#include "kvbill/util/result.h"
#include "kvbill/util/units.h"

namespace kvbill {

// Chained hashes of a prompt's prefixes at any position, in O(log pieces).
// Pieces are merged into maximal runs (same identity, consecutive offsets)
// first, so splitting a piece never changes a hash:
//   h(0) = kChainSeed
//   h(p) = fold of the runs covering [0, p), the last one cut at p, each as
//          s = HashCombine(HashCombine(HashCombine(s, identity), offset), length)
class PrefixHashes {
 public:
  explicit PrefixHashes(std::span<const ContentPiece> pieces);

  Tokens tokens() const { return tokens_; }
  // The hash of the first `position` tokens. Precondition: 0 <= position <= tokens().
  std::uint64_t At(Tokens position) const;

 private:
  std::vector<ContentPiece> runs_;
  std::vector<Tokens> starts_;         // token position of each run
  std::vector<std::uint64_t> before_;  // hash state before each run
  Tokens tokens_ = 0;
};

enum class WriteFee { kByModel, kOn, kOff };

struct ProviderCacheOptions {
  // Lifetime since last use, seconds; 0 means the provider's default
  // (anthropic 300, openai 300 or 1,800 with write_fee, deepseek 10,800,
  // gemini 300 implicit or 3,600 explicit, from creation). Anthropic accepts
  // 300 or 3600.
  Seconds ttl_s = 0;
  // Minimum cacheable prompt, tokens; 0 means the provider's (and for
  // anthropic and gemini the model's) default.
  Tokens min_cacheable_tokens = 0;
  // openai: cache writes billed (GPT-5.6 and later). kByModel: on for model
  // ids starting "gpt-5.6", off otherwise.
  WriteFee write_fee = WriteFee::kByModel;
  // gemini: false = implicit caching, true = explicit caches.
  bool explicit_cache = false;
  // gemini explicit: the cached prefix length, tokens; 0 = the whole prompt
  // of a request that finds no live cache ("first_request").
  Tokens prefix_tokens = 0;
};

class ProviderCache {
 public:
  virtual ~ProviderCache() = default;

  // Serves one request at `now_s` (never earlier than the previous call's)
  // whose prompt is `pieces`: returns its input, cache write and cache read
  // tokens (output 0; they sum to the prompt) and updates the cache.
  virtual CallUsage Serve(Seconds now_s, std::span<const ContentPiece> pieces) = 0;

  // Marks the first `prefix_tokens` of `pieces` as written at `now_s` by a
  // request outside the replay (a cache warmed before a log starts).
  // Precondition: 0 <= prefix_tokens <= the prompt.
  virtual void Seed(Seconds now_s, std::span<const ContentPiece> pieces, Tokens prefix_tokens) = 0;

  // The caches created so far that are charged outside the requests
  // (creation and storage; api_bill.h PriceCacheCreations), in time order.
  // Empty for every rule but gemini explicit; seeded caches are not charged.
  virtual std::vector<CacheCreation> Creations() const { return {}; }

  // True when the client places the breakpoint (anthropic): a request's
  // prompt then ends at its breakpoint, and tokens the client sends after it
  // are input. False for automatic caches, which choose their own positions.
  virtual bool ClientBreakpoints() const { return false; }
};

// The cache of `provider` for `model` (a price sheet id, e.g.
// "claude-sonnet-4-5"). Errors: `unknown provider "x" (one of
// anthropic|openai|deepseek|gemini)`, `anthropic: ttl_s must be 300 or 3600,
// got 60`, `openai: ttl_s must be positive, got -1`, `gemini:
// prefix_tokens 500 is below the model's minimum of 2048`.
Result<std::unique_ptr<ProviderCache>> MakeProviderCache(std::string_view provider,
                                                         std::string_view model,
                                                         const ProviderCacheOptions& options);

// The names MakeProviderCache accepts.
std::vector<std::string> ProviderCacheNames();

// Anthropic's minimum cacheable prompt for a model id, from the prompt
// caching page of Anthropic's documentation (as of 2026-10, "Cache
// limitations"): 512 tokens for Claude Opus 5, Fable 5 and Mythos 5; 2,048
// for Opus 4.7 and Mythos Preview; 4,096 for Opus 4.6, Opus 4.5 and Haiku
// 4.5; 2,048 for Haiku 3.5 and Haiku 3; 1,024 for every other model (Opus
// 4.8, Sonnet 5, Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus 4, Sonnet 4...).
Tokens AnthropicMinimumCacheableTokens(std::string_view model);

// Gemini's minimum cacheable prompt for a model id, from the context caching
// page of the Gemini API documentation (updated 2026-07-07): 4,096 tokens for
// Gemini 3 and later models, 2,048 for Gemini 2.5 Pro, Flash and (not
// listed there, taken as its family's) Flash-Lite.
Tokens GeminiMinimumCacheableTokens(std::string_view model);

}  // namespace kvbill

#endif  // KVBILL_COST_PROVIDER_CACHE_H_
