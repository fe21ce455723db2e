#include "kvbill/cost/provider_cache.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "cost/provider_caches.h"

namespace kvbill {
namespace {

struct ProviderEntry {
  const char* name;
  Result<std::unique_ptr<ProviderCache>> (*make)(std::string_view model,
                                                 const ProviderCacheOptions& options);
};

// Every provider rule set, by name. Adding one: a file in src/cost/, a
// factory in provider_caches.h, a row here, a section in docs/billing.md.
constexpr ProviderEntry kProviders[] = {
    {"anthropic", MakeAnthropicCache},
    {"openai", MakeOpenAiCache},
    {"deepseek", MakeDeepSeekCache},
    {"gemini", MakeGeminiCache},
};

std::uint64_t Fold(std::uint64_t state, const ContentPiece& run) {
  return HashCombine(
      HashCombine(HashCombine(state, run.identity), static_cast<std::uint64_t>(run.offset)),
      static_cast<std::uint64_t>(run.tokens));
}

}  // namespace

PrefixHashes::PrefixHashes(std::span<const ContentPiece> pieces) {
  for (const ContentPiece& piece : pieces) {
    if (piece.tokens <= 0) continue;
    if (!runs_.empty() && runs_.back().identity == piece.identity &&
        runs_.back().offset + runs_.back().tokens == piece.offset) {
      runs_.back().tokens += piece.tokens;
    } else {
      runs_.push_back(piece);
    }
  }
  std::uint64_t state = kChainSeed;
  for (const ContentPiece& run : runs_) {
    starts_.push_back(tokens_);
    before_.push_back(state);
    state = Fold(state, run);
    tokens_ += run.tokens;
  }
}

std::uint64_t PrefixHashes::At(Tokens position) const {
  if (position <= 0) return kChainSeed;
  // The run holding token position - 1.
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), position - 1);
  const auto i = static_cast<std::size_t>(it - starts_.begin()) - 1;
  ContentPiece cut = runs_[i];
  cut.tokens = position - starts_[i];
  return Fold(before_[i], cut);
}

void PrefixEntries::Expire(Seconds now_s) {
  while (!expiries_.empty() && expiries_.top().first <= now_s) {
    const auto [expiry, key] = expiries_.top();
    expiries_.pop();
    const auto it = last_use_s_.find(key);
    if (it != last_use_s_.end() && it->second + ttl_s_ <= now_s) last_use_s_.erase(it);
  }
}

void PrefixEntries::Put(Tokens position, std::uint64_t hash, Seconds now_s) {
  const Key key{position, hash};
  last_use_s_[key] = now_s;
  expiries_.push({now_s + ttl_s_, key});
}

Tokens PrefixEntries::Longest(const PrefixHashes& prefix, Tokens limit) const {
  auto it = last_use_s_.upper_bound(Key{limit, std::numeric_limits<std::uint64_t>::max()});
  while (it != last_use_s_.begin()) {
    const Tokens position = std::prev(it)->first.first;
    if (position <= 0) break;
    if (last_use_s_.contains(Key{position, prefix.At(position)})) return position;
    it = last_use_s_.lower_bound(Key{position, 0});
  }
  return 0;
}

Result<std::unique_ptr<ProviderCache>> MakeProviderCache(std::string_view provider,
                                                         std::string_view model,
                                                         const ProviderCacheOptions& options) {
  for (const ProviderEntry& entry : kProviders) {
    if (provider != entry.name) continue;
    const std::string name(provider);
    if (name != "gemini" && (options.explicit_cache || options.prefix_tokens != 0)) {
      return Error(name + ": explicit caches (mode, prefix_tokens) are a gemini rule");
    }
    if (name != "openai" && options.write_fee != WriteFee::kByModel) {
      return Error(name + ": write_fee is an openai option");
    }
    return entry.make(model, options);
  }
  std::string known;
  for (const ProviderEntry& entry : kProviders)
    known += (known.empty() ? "" : "|") + std::string(entry.name);
  return Error("unknown provider \"" + std::string(provider) + "\" (one of " + known + ")");
}

std::vector<std::string> ProviderCacheNames() {
  std::vector<std::string> names;
  for (const ProviderEntry& entry : kProviders) names.emplace_back(entry.name);
  return names;
}

Tokens AnthropicMinimumCacheableTokens(std::string_view model) {
  // Longest prefix first: "claude-opus-4" must not catch "claude-opus-4-6".
  static constexpr std::pair<std::string_view, Tokens> kMinimum[] = {
      {"claude-opus-4-8", 1024}, {"claude-opus-4-7", 2048},       {"claude-opus-4-6", 4096},
      {"claude-opus-4-5", 4096}, {"claude-haiku-4-5", 4096},      {"claude-3-5-haiku", 2048},
      {"claude-3-haiku", 2048},  {"claude-mythos-preview", 2048}, {"claude-opus-5", 512},
      {"claude-fable-5", 512},   {"claude-mythos-5", 512},
  };
  for (const auto& [prefix, tokens] : kMinimum) {
    if (model.starts_with(prefix)) return tokens;
  }
  return 1024;
}

}  // namespace kvbill
