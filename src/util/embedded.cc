#include "kvbill/util/embedded.h"

namespace kvbill {

std::optional<std::string_view> EmbeddedFile(std::string_view path) {
  for (const EmbeddedFileEntry& e : EmbeddedFileTable()) {
    if (e.path == path) return e.contents;
  }
  return std::nullopt;
}

}  // namespace kvbill
