#include "table.hpp"

#include <algorithm>
#include <numeric>

#include "terminal_text.hpp"

namespace trimctl {

namespace {

using Grid = std::vector<std::vector<Cell>>;

std::vector<std::size_t> natural_widths(const std::vector<Column>& columns, const Grid& rows) {
  std::vector<std::size_t> widths;
  for (const auto& column : columns) widths.push_back(display_width(column.header));
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i].text));
  return widths;
}

std::size_t total_width(const std::vector<std::size_t>& widths) {
  if (widths.empty()) return 0;
  return std::accumulate(widths.begin(), widths.end(), std::size_t{0}) + widths.size() - 1;
}

// Every cell as a terminal may show it, before anything is measured.
Grid escaped(Grid rows) {
  for (auto& row : rows)
    for (auto& cell : row) {
      cell.text = terminal_text(cell.text);
      cell.compact = terminal_text(cell.compact);
    }
  return rows;
}

Grid with_compact_cells(Grid rows) {
  for (auto& row : rows)
    for (auto& cell : row)
      if (!cell.compact.empty()) cell.text = cell.compact;
  return rows;
}

std::size_t spare(const Column& column, std::size_t width) {
  if (column.ellipsize == Ellipsize::Never) return 0;
  const std::size_t floor = std::max(column.min_width, display_width(column.header));
  return width > floor ? width - floor : 0;
}

// Takes cells, one at a time, from the ellipsizable column first in
// shrink order with the most to spare, until the table fits or none has
// any to spare.
void shrink_to(std::vector<std::size_t>& widths, const std::vector<Column>& columns,
               std::size_t limit) {
  while (total_width(widths) > limit) {
    std::size_t best = widths.size();
    for (std::size_t i = 0; i < widths.size(); ++i) {
      if (spare(columns[i], widths[i]) == 0) continue;
      const bool earlier =
          best == widths.size() || columns[i].shrink_order < columns[best].shrink_order;
      const bool roomier = best != widths.size() &&
                           columns[i].shrink_order == columns[best].shrink_order &&
                           spare(columns[i], widths[i]) > spare(columns[best], widths[best]);
      if (earlier || roomier) best = i;
    }
    if (best == widths.size()) return;
    --widths[best];
  }
}

std::string fitted(const std::string& text, Ellipsize ellipsize, std::size_t width) {
  switch (ellipsize) {
    case Ellipsize::Start: return ellipsize_start(text, width);
    case Ellipsize::Middle: return ellipsize_middle(text, width);
    case Ellipsize::End: return ellipsize_end(text, width);
    case Ellipsize::Never: break;
  }
  return text;
}

std::string render_row(const std::vector<Cell>& row, const std::vector<Column>& columns,
                       const std::vector<std::size_t>& widths, bool colors) {
  std::string line;
  for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
    const std::string text = fitted(row[i].text, columns[i].ellipsize, widths[i]);
    line += paint(text, row[i].color, colors);
    // Padding stays outside the colour; the last column is not padded.
    if (i + 1 < row.size()) line += std::string(widths[i] - display_width(text) + 1, ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

}  // namespace

std::string render_table(const std::vector<Column>& columns, const Grid& rows,
                         const TableStyle& style) {
  Grid cells = escaped(rows);
  std::vector<std::size_t> widths = natural_widths(columns, cells);
  const bool limited = style.width > 0 && !style.full;
  if (limited && total_width(widths) > style.width) {
    cells = with_compact_cells(std::move(cells));
    widths = natural_widths(columns, cells);
    shrink_to(widths, columns, style.width);
  }
  std::string out;
  if (style.legend) {
    std::vector<Cell> header;
    for (const auto& column : columns) header.push_back({column.header, "", Color::Underline});
    out += render_row(header, columns, widths, style.colors);
  }
  for (const auto& row : cells) out += render_row(row, columns, widths, style.colors);
  return out;
}

}  // namespace trimctl
