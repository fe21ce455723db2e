#include "kvbill/util/names.h"

#include <algorithm>

namespace kvbill {

std::string LowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string SquashName(std::string_view text) {
  std::string out;
  for (char c : LowerAscii(text)) {
    if (c != ' ' && c != '-' && c != '_' && c != '.') out += c;
  }
  return out;
}

int EditDistance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  // d[i][j]: distance between a[0, i) and b[0, j); three rows suffice.
  std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
  for (std::size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= n; ++i) {
    current[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= m; ++j) {
      const int substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      int best = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, before[j - 2] + 1);
      }
      current[j] = best;
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

std::vector<std::string> ClosestNames(std::string_view typed,
                                      const std::vector<std::string>& candidates,
                                      std::size_t max_suggestions) {
  const std::string t = LowerAscii(typed);
  struct Scored {
    int score;  // edit distance; 0 for an abbreviation
    std::size_t order;
  };
  std::vector<Scored> scored;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] == typed) continue;  // not a suggestion: what was typed
    const std::string c = LowerAscii(candidates[i]);
    const int distance = EditDistance(t, c);
    const int allowed = std::clamp(static_cast<int>(std::max(t.size(), c.size()) / 3), 1, 3);
    if (t.size() >= 3 && c.starts_with(t)) {
      scored.push_back({0, i});  // an abbreviation
    } else if (distance <= allowed) {
      scored.push_back({distance, i});
    } else if (t.size() >= 3 && t.starts_with(c)) {
      scored.push_back({3, i});  // the name with more after it
    }
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const Scored& x, const Scored& y) { return x.score < y.score; });
  // Names that differ only in case are one suggestion (the first given).
  std::vector<std::string> out, lower;
  for (const Scored& s : scored) {
    if (out.size() == max_suggestions) break;
    const std::string l = LowerAscii(candidates[s.order]);
    if (std::find(lower.begin(), lower.end(), l) == lower.end()) {
      out.push_back(candidates[s.order]);
      lower.push_back(l);
    }
  }
  return out;
}

std::string DidYouMean(std::string_view typed, const std::vector<std::string>& candidates,
                       std::string_view prefix) {
  const std::vector<std::string> names = ClosestNames(typed, candidates);
  if (names.empty()) return "";
  std::vector<std::string> prefixed;
  for (const std::string& n : names) prefixed.push_back(std::string(prefix) + n);
  return "did you mean " + JoinWithOr(prefixed) + "?";
}

std::string JoinWithOr(const std::vector<std::string>& items, bool serial_comma) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      out += i + 1 < items.size() ? ", " : serial_comma && items.size() > 2 ? ", or " : " or ";
    }
    out += items[i];
  }
  return out;
}

}  // namespace kvbill
