// A table of strings rendered as aligned text (numbers right-aligned) or CSV.
#ifndef KVBILL_REPORT_TABLE_H_
#define KVBILL_REPORT_TABLE_H_

#include <string>
#include <vector>

namespace kvbill {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}

  // Precondition: row has as many cells as the header.
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  // Columns separated by two spaces, a rule under the header. A number (a
  // cell that starts with a digit, sign, '.' or '$', alone or with one
  // word: "3.550 s") outside the first column is right-aligned, unless its
  // column is a text column (one of its cells has three words or more:
  // "20 request(s) refused ..."), whose cells all stay left-aligned.
  std::string ToText() const;

  // RFC 4180 CSV: cells with commas, quotes or newlines are quoted.
  std::string ToCsv() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Quotes one CSV cell when needed.
std::string CsvCell(const std::string& cell);

}  // namespace kvbill

#endif  // KVBILL_REPORT_TABLE_H_
