// Where trimctl's output goes and what it may assume there: how wide the
// terminal is and whether to colour, decided as systemd's tools decide
// (COLUMNS, TIOCGWINSZ; SYSTEMD_COLORS, NO_COLOR, TERM=dumb, a tty).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace trimctl {

struct Terminal {
  bool tty = false;         // stdout is a terminal
  std::size_t columns = 0;  // the width to fit; 0 = no limit
  bool colors = false;
};

// What the decision reads, so tests can hand it any environment.
struct TerminalFacts {
  std::function<const char*(const char*)> getenv;
  bool stdout_tty = false;
  std::optional<std::size_t> window_columns;  // TIOCGWINSZ on stdout
};

// $COLUMNS when it is a number, else the window's width on a terminal,
// else no limit: a pipe gets whole lines, as a script wants them.
// Colours: $SYSTEMD_COLORS says yes or no outright; else $NO_COLOR or
// TERM=dumb say no; else colours exactly when stdout is a terminal.
Terminal decide_terminal(const TerminalFacts& facts);
// The same, for this process.
Terminal detect_terminal();

// $SYSTEMD_COLORS: a boolean (1/yes/true/on, 0/no/false/off) or a colour
// depth ("16", "256", "24bit": yes); nothing when unset or unreadable.
std::optional<bool> parse_colors_setting(const char* value);

// Display width in terminal cells: UTF-8 code points.
std::size_t display_width(std::string_view text);

// At most `width` cells, the middle replaced by "…" (for paths, whose two
// ends say most) or the end (for prose). Text that fits is left alone.
std::string ellipsize_middle(std::string_view text, std::size_t width);
std::string ellipsize_end(std::string_view text, std::size_t width);
// The same, the start replaced ("…nvme0n1p2": a device's tail names it).
std::string ellipsize_start(std::string_view text, std::size_t width);

// Prose broken at spaces into lines of at most `width` cells (a longer
// word stands alone), continuation lines indented by `indent`; each line
// ends in '\n'. Width 0: one line.
std::string wrap_words(std::string_view text, std::size_t width, std::size_t indent);

enum class Color { None, Green, Yellow, Red, Underline };

// `text` wrapped in the colour's escape sequence when `enabled`.
std::string paint(std::string_view text, Color color, bool enabled);

}  // namespace trimctl
