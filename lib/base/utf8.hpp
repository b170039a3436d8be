// UTF-8 as D-Bus and TOML want it, for names the kernel hands over as bytes
// (mount points, device names) that need not be UTF-8 at all.
#pragma once

#include <cstddef>
#include <string_view>

namespace trimd {

// The length of the valid UTF-8 character at the front of `text`, or 0 when
// there is none. Valid as sd-bus judges it: shortest form, no NUL, no UTF-16
// surrogates, no noncharacters, nothing past U+10FFFF.
std::size_t utf8_char_length(std::string_view text);

bool is_valid_utf8(std::string_view text);

}  // namespace trimd
