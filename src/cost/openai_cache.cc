// OpenAI's automatic prompt cache (docs/billing.md#openai): from 1,024
// tokens, hits in 128-token steps, no write fee (GPT-5.6 and later: a write
// fee), retention a parameter. The step cache here serves DeepSeek's and
// Gemini's implicit rules too.
#include <algorithm>
#include <sstream>
#include <string>

#include "cost/provider_caches.h"

namespace kvbill {
namespace {

class StepPrefixCache : public ProviderCache {
 public:
  StepPrefixCache(Tokens min_tokens, Tokens step_tokens, Seconds ttl_s, bool write_fee)
      : min_tokens_(min_tokens),
        step_tokens_(step_tokens),
        write_fee_(write_fee),
        entries_(ttl_s) {}

  CallUsage Serve(Seconds now_s, std::span<const ContentPiece> pieces) override {
    const PrefixHashes prefix(pieces);
    entries_.Expire(now_s);
    CallUsage usage;
    usage.cache_read = entries_.Longest(prefix, prefix.tokens());
    usage.input = prefix.tokens() - usage.cache_read;
    if (write_fee_ && prefix.tokens() >= min_tokens_) {
      // The steps past the read are written; the tail after the last step is input.
      const Tokens last_step = prefix.tokens() / step_tokens_ * step_tokens_;
      usage.cache_write_5m = std::max<Tokens>(0, last_step - usage.cache_read);
      usage.input -= usage.cache_write_5m;
    }
    PutSteps(now_s, prefix, prefix.tokens());
    return usage;
  }

  void Seed(Seconds now_s, std::span<const ContentPiece> pieces, Tokens prefix_tokens) override {
    PutSteps(now_s, PrefixHashes(pieces), prefix_tokens);
  }

 private:
  // Entries at every step in [min_tokens_, tokens].
  void PutSteps(Seconds now_s, const PrefixHashes& prefix, Tokens tokens) {
    const Tokens first = (min_tokens_ + step_tokens_ - 1) / step_tokens_ * step_tokens_;
    for (Tokens p = first; p <= tokens; p += step_tokens_) entries_.Put(p, prefix.At(p), now_s);
  }

  Tokens min_tokens_;
  Tokens step_tokens_;
  bool write_fee_;
  PrefixEntries entries_;
};

}  // namespace

std::unique_ptr<ProviderCache> NewStepPrefixCache(Tokens min_tokens, Tokens step_tokens,
                                                  Seconds ttl_s, bool write_fee) {
  return std::make_unique<StepPrefixCache>(min_tokens, step_tokens, ttl_s, write_fee);
}

bool OpenAiChargesCacheWrites(std::string_view model) { return model.starts_with("gpt-5.6"); }

Result<std::unique_ptr<ProviderCache>> MakeOpenAiCache(std::string_view model,
                                                       const ProviderCacheOptions& options) {
  if (options.ttl_s < 0) {
    std::ostringstream out;
    out << "openai: ttl_s must be positive, got " << options.ttl_s;
    return Error(out.str());
  }
  const bool write_fee = options.write_fee == WriteFee::kByModel
                             ? OpenAiChargesCacheWrites(model)
                             : options.write_fee == WriteFee::kOn;
  const Tokens min_tokens = options.min_cacheable_tokens > 0 ? options.min_cacheable_tokens : 1024;
  const Seconds default_ttl_s = write_fee ? 1'800 : 300;
  return NewStepPrefixCache(min_tokens, 128, options.ttl_s == 0 ? default_ttl_s : options.ttl_s,
                            write_fee);
}

}  // namespace kvbill
