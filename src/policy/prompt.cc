#include "kvbill/policy/prompt.h"

#include <algorithm>
#include <utility>

namespace kvbill {

Prompt::Prompt(std::initializer_list<PromptPiece> pieces)
    : Prompt(std::vector<PromptPiece>(pieces)) {}

Prompt::Prompt(std::vector<PromptPiece> pieces)
    : buffer_(std::make_shared<std::vector<PromptPiece>>(std::move(pieces))),
      size_(buffer_->size()) {}

void Prompt::push_back(const PromptPiece& piece) {
  if (!buffer_) {
    buffer_ = std::make_shared<std::vector<PromptPiece>>();
  } else if (buffer_->size() != size_) {
    // Another view extended the buffer past this one: copy this view out.
    buffer_ = std::make_shared<std::vector<PromptPiece>>(begin(), end());
  }
  buffer_->push_back(piece);
  ++size_;
}

bool Prompt::StartsWith(const Prompt& other) const {
  if (other.size_ > size_) return false;
  if (other.size_ == 0 || SharesStorageWith(other)) return true;
  return std::equal(other.begin(), other.end(), begin());
}

bool operator==(const Prompt& a, const Prompt& b) { return a.size_ == b.size_ && a.StartsWith(b); }

bool operator==(const Prompt& a, const std::vector<PromptPiece>& b) {
  return a.size_ == b.size() && std::equal(b.begin(), b.end(), a.begin());
}

}  // namespace kvbill
