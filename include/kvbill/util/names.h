// Names a user types: comparison that forgives case and separators, and the
// "did you mean" suggestion for a name that matched nothing. Pure functions;
// the catalogs that use them are in hardware/catalog_names.h, the commands and
// flags in src/cli/.
//
// Suggestions are the candidates at the smallest edit distance from what was
// typed (Damerau-Levenshtein with adjacent transpositions, so "simulte" and
// "simluate" are both one edit from "simulate"), compared in lower case, when
// that distance is at most a third of the longer name (at least 1, at most 3).
// A candidate that starts with what was typed (3 characters or more: an
// abbreviation) comes first; one that what was typed starts with ("report"
// for "reports-v2") comes last. Ties keep the candidates' order, so the same
// inputs give the same text; candidates that differ only in case are
// suggested once, as first given.
#ifndef KVBILL_UTIL_NAMES_H_
#define KVBILL_UTIL_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

namespace kvbill {

// `text` in ASCII lower case.
std::string LowerAscii(std::string_view text);

// `text` in lower case without spaces, '-', '_' and '.': the form in which
// "NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3" and "nvidia_h100_80gb_hbm3"
// are the same name.
std::string SquashName(std::string_view text);

// The optimal-string-alignment edit distance between `a` and `b` (insert,
// delete, substitute, swap two neighbours; each costs 1), case as given.
int EditDistance(std::string_view a, std::string_view b);

// The candidates closest to `typed` under the rule above, best first, at most
// `max_suggestions` of them; empty when none is close enough.
std::vector<std::string> ClosestNames(std::string_view typed,
                                      const std::vector<std::string>& candidates,
                                      std::size_t max_suggestions = 3);

// "a", "a or b", "a, b or c" (with `serial_comma`: "a, b, or c").
std::string JoinWithOr(const std::vector<std::string>& items, bool serial_comma = false);

// "did you mean X?" / "did you mean X or Y?" / "did you mean X, Y or Z?" for
// ClosestNames(typed, candidates), each name prefixed with `prefix` ("--" for
// flags); "" when nothing is close.
std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates,
                       std::string_view prefix = "");

}  // namespace kvbill

#endif  // KVBILL_UTIL_NAMES_H_
