// UTF-8 as D-Bus and TOML want it, for names the kernel hands over as bytes
// (mount points, device names) that need not be UTF-8 at all, and the one
// escaping that shows such names wherever text must be UTF-8 (the bus, the
// state file, metrics labels, the text log). docs/design.md explains the choice.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trimd {

// The length of the valid UTF-8 character at the front of `text`, or 0 when
// there is none. Valid as sd-bus judges it: shortest form, no NUL, no UTF-16
// surrogates, no noncharacters, nothing past U+10FFFF.
std::size_t utf8_char_length(std::string_view text);

bool is_valid_utf8(std::string_view text);

// Arbitrary bytes as valid UTF-8, reversibly, as systemd-escape writes them:
// each byte that is not part of a valid UTF-8 character, and each backslash,
// becomes "\xNN" (lower-case hex). A name that is valid UTF-8 and holds no
// backslash comes out unchanged: "/mnt/caf\xe9" for the Latin-1 bytes of
// "/mnt/café", "/mnt/a\x5cb" for "/mnt/a\b".
std::string escape_bytes(std::string_view raw);

// escape_bytes(), and control characters (line feed, tab, ESC, DEL, ...)
// escaped the same way too: for a line of text that must stay one line.
std::string escape_bytes_for_line(std::string_view raw);

// The inverse of both: "\xNN" (either case) becomes the byte NN, any other
// character stands for itself; nothing when a backslash starts anything
// but "\xNN" (such text was not written by escape_bytes()).
std::optional<std::string> unescape_bytes(std::string_view escaped);

}  // namespace trimd
