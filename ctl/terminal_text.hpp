// What trimctl shows people is mostly text it did not write: mount points and
// device names from the kernel, reasons and results from trimd, hosts and
// mount points that fleet peers wrote to etcd. Any of it may hold what a
// terminal obeys instead of showing (ESC sequences that set the title, clear
// the screen or move the cursor; CR, BEL, DEL, C1 controls) or what makes it
// show text out of order (bidi overrides). Human output escapes them at its
// edge, as systemd's tools do; --json does not (JSON escapes them its own
// way, and carries the text as trimd sent it).
//
// Every human line leaves through one of three doors, all of which escape:
// render_table() (table.hpp) for tables, text_paragraph() for prose and
// text_line() for everything else (the progress bars of trim --wait, redrawn
// in place, escape each line with terminal_text() alone). Text is escaped
// before it is measured, so widths and ellipsizing count the escaped form.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "terminal.hpp"

namespace trimctl {

// `raw` with nothing a terminal would act on. Each byte of a C0 control
// (tab and line feed included: a field stays on its line), DEL, a C1 control
// (U+0080..U+009F) and anything that is not valid UTF-8 becomes "\xNN"
// (lower-case hex): "\x1b", "\x7f", "\xc2\x9b". The bidi controls (U+061C,
// U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and the line and paragraph
// separators (U+2028, U+2029) become "\uNNNN": "\u202e". All other UTF-8
// passes untouched, and so does the backslash: a name trimd already escaped
// ("/mnt/caf\xe9") reads as trimd names it. Escaping escaped text changes
// nothing.
std::string terminal_text(std::string_view raw);

// One line for a person: `text` escaped, painted, and ended by '\n'.
std::string text_line(std::string_view text, Color color = Color::None, bool colors = false);

// Prose for a person: `text` escaped, then wrapped at spaces into lines of
// at most `width` cells (0: one line), continuation lines indented by
// `indent`, each line painted on its own (a pager that chops lines keeps no
// colour open).
std::string text_paragraph(std::string_view text, std::size_t width, std::size_t indent,
                           Color color = Color::None, bool colors = false);

}  // namespace trimctl
