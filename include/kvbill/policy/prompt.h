// Prompt: the pieces of one request's prompt, sharing storage with the
// prompts it extends.
//
// An agent re-sends its whole context every turn, so the prompt of turn k+1
// is usually the prompt of turn k plus the new turn's pieces. Stored as a
// full list per request, a task of n turns would hold O(n^2) pieces (10,000
// turns adding two pieces each: 10^8 pieces, gigabytes). A Prompt instead
// views the first size() pieces of a buffer that only ever grows at its end:
// copying a Prompt shares the buffer, and appending to a Prompt whose view
// ends where the buffer ends extends the buffer in place, leaving every
// other view unchanged. Appending to a Prompt that is a strict prefix of its
// buffer copies its pieces to a buffer of its own first. A task's prompts
// then hold O(n) pieces in all.
//
// Pointers and spans into a Prompt stay valid until a Prompt sharing its
// buffer appends (the buffer may move); plan first, then read. Prompts that
// share a buffer must not be appended to from two threads at once (the
// planner builds one task's requests on one thread).
#ifndef KVBILL_POLICY_PROMPT_H_
#define KVBILL_POLICY_PROMPT_H_

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <span>
#include <vector>

#include "kvbill/cache/block_hash.h"
#include "kvbill/trace/trace.h"

namespace kvbill {

struct PromptPiece {
  ContentPiece content;
  SpanKind kind = SpanKind::kOther;

  bool operator==(const PromptPiece&) const = default;
};

class Prompt {
 public:
  Prompt() = default;
  Prompt(std::initializer_list<PromptPiece> pieces);
  Prompt(std::vector<PromptPiece> pieces);  // NOLINT(google-explicit-constructor)

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const PromptPiece* data() const { return buffer_ ? buffer_->data() : nullptr; }
  const PromptPiece* begin() const { return data(); }
  const PromptPiece* end() const { return data() + size_; }
  const PromptPiece& operator[](std::size_t i) const { return (*buffer_)[i]; }
  const PromptPiece& front() const { return (*buffer_)[0]; }
  const PromptPiece& back() const { return (*buffer_)[size_ - 1]; }
  operator std::span<const PromptPiece>() const {  // NOLINT(google-explicit-constructor)
    return {data(), size_};
  }
  std::vector<PromptPiece> ToVector() const { return {begin(), end()}; }

  void push_back(const PromptPiece& piece);

  // Whether this prompt's first other.size() pieces are `other`'s: O(1) when
  // both view one buffer, else a comparison of the pieces.
  bool StartsWith(const Prompt& other) const;

  // Whether both view one buffer (for tests and memory accounting).
  bool SharesStorageWith(const Prompt& other) const { return buffer_ && buffer_ == other.buffer_; }

  friend bool operator==(const Prompt& a, const Prompt& b);
  friend bool operator==(const Prompt& a, const std::vector<PromptPiece>& b);

 private:
  std::shared_ptr<std::vector<PromptPiece>> buffer_;
  std::size_t size_ = 0;
};

}  // namespace kvbill

#endif  // KVBILL_POLICY_PROMPT_H_
