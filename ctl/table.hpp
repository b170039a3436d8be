// The status table: columns as wide as their widest cell, one space apart
// (as systemctl prints them), fitted to the terminal when it is narrower.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "terminal.hpp"

namespace trimctl {

// Where "…" replaces what does not fit: paths lose their middle, device
// names their (redundant) start, prose its end.
enum class Ellipsize { Never, Start, Middle, End };

struct Column {
  Column(std::string header_text, Ellipsize how = Ellipsize::Never, std::size_t min = 0,
         int order = 0)
      : header(std::move(header_text)), ellipsize(how), min_width(min), shrink_order(order) {}
  std::string header;
  Ellipsize ellipsize = Ellipsize::Never;
  std::size_t min_width = 0;  // an ellipsized cell keeps at least this much
  int shrink_order = 0;       // lower gives up its cells first
};

struct Cell {
  Cell(std::string cell_text, std::string compact_text = "", Color cell_color = Color::None)
      : text(std::move(cell_text)), compact(std::move(compact_text)), color(cell_color) {}
  std::string text;
  // A shorter way to say the same ("3 days ago" for a timestamp and its
  // age), used when the table does not fit; empty: there is none.
  std::string compact;
  Color color = Color::None;
};

struct TableStyle {
  std::size_t width = 0;  // 0: no limit
  bool full = false;      // never shorten a cell (--full)
  bool legend = true;     // the header line
  bool colors = false;
};

// Cells are escaped first (terminal_text.hpp), so a field from trimd can
// neither steer the terminal nor leave its row, and widths count what shows.
// To fit `style.width`: first every cell with a compact form uses it, then
// the ellipsizable columns give up cells, by shrink_order and among equals
// the one with most to spare first, down to their minimum. What still
// does not fit runs over, as with systemctl.
std::string render_table(const std::vector<Column>& columns,
                         const std::vector<std::vector<Cell>>& rows, const TableStyle& style);

}  // namespace trimctl
