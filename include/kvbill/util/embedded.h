// Data files compiled into the binary: the bundled catalogs under scenarios/
// (models/*.json, gpus.json, ...), so kvbill runs from any directory.
#ifndef KVBILL_UTIL_EMBEDDED_H_
#define KVBILL_UTIL_EMBEDDED_H_

#include <optional>
#include <string_view>
#include <vector>

namespace kvbill {

struct EmbeddedFileEntry {
  std::string_view path;  // relative to scenarios/, e.g. "models/qwen3-32b.json"
  std::string_view contents;
};

// Every embedded file, sorted by path. Defined in a generated source.
const std::vector<EmbeddedFileEntry>& EmbeddedFileTable();

// The contents of one embedded file, or nullopt.
std::optional<std::string_view> EmbeddedFile(std::string_view path);

}  // namespace kvbill

#endif  // KVBILL_UTIL_EMBEDDED_H_
