#include "kvbill/report/table.h"

#include <algorithm>
#include <cctype>

namespace kvbill {
namespace {

// Display width: counts UTF-8 code points, not bytes.
std::size_t Width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

// A number, alone or with its unit: "3.550 s", "$141.60", "1,234", "-5%",
// "-" (none). Prose that starts with a digit is not one.
bool NumberCell(const std::string& cell) {
  if (cell.empty()) return false;
  const unsigned char c = static_cast<unsigned char>(cell[0]);
  const bool numeric = std::isdigit(c) != 0 || c == '-' || c == '+' || c == '$' || c == '.';
  return numeric && std::count(cell.begin(), cell.end(), ' ') <= 1;
}

// Text of three words or more ("20 request(s) refused over ..."): its
// column is a text column.
bool Prose(const std::string& cell) { return std::count(cell.begin(), cell.end(), ' ') >= 2; }

}  // namespace

std::string Table::ToText() const {
  std::vector<std::size_t> width(header_.size(), 0);
  for (std::size_t i = 0; i < header_.size(); ++i) width[i] = Width(header_[i]);
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], Width(row[i]));
    }
  }
  std::vector<bool> text(header_.size(), false);
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size() && i < text.size(); ++i) {
      if (Prose(row[i])) text[i] = true;
    }
  }
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string out;
    for (std::size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : "";
      const std::string pad(width[i] - Width(cell), ' ');
      if (i > 0) out += "  ";
      if (!header && i > 0 && !text[i] && NumberCell(cell)) {
        out += pad + cell;
      } else {
        out += cell + (i + 1 < width.size() ? pad : "");
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_, true);
  std::size_t total = 0;
  for (std::size_t i = 0; i < width.size(); ++i) total += width[i] + (i > 0 ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_) out += line(row, false);
  return out;
}

std::string CsvCell(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Table::ToCsv() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out += ",";
      out += CsvCell(cells[i]);
    }
    return out + "\n";
  };
  std::string out = line(header_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace kvbill
