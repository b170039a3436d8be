// What no human output of trimctl may hold: the bytes and code points a
// terminal acts on instead of showing (C0 controls but the line feed that
// ends each line, DEL, C1 controls), the bidi and line-separator code points
// (ctl/terminal_text.hpp), and bytes that are not UTF-8 (a terminal that is
// not in UTF-8 mode takes a lone 0x9b for a CSI).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "utf8.hpp"

namespace trimctl_test {

// The first thing in `out` a terminal would obey or reorder by, named with
// its offset; "" when there is none.
inline std::string first_unsafe_in(std::string_view out) {
  static constexpr std::string_view kUnsafeSequences[] = {
      "\xd8\x9c",                      // U+061C
      "\xe2\x80\x8e", "\xe2\x80\x8f",  // U+200E, U+200F
      "\xe2\x80\xa8", "\xe2\x80\xa9",  // U+2028, U+2029
      "\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x80\xae",  // U+202A..E
      "\xe2\x81\xa6", "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9",  // U+2066..U+2069
  };
  const auto at = [](std::size_t offset, const std::string& what) {
    return what + " at byte " + std::to_string(offset);
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto byte = static_cast<unsigned char>(out[i]);
    if ((byte < 0x20 && byte != '\n') || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", byte);
      return at(i, std::string("control byte ") + hex);
    }
    const auto next = i + 1 < out.size() ? static_cast<unsigned char>(out[i + 1]) : 0;
    if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) return at(i, "a C1 control");
    for (const auto sequence : kUnsafeSequences)
      if (out.substr(i, sequence.size()) == sequence) return at(i, "a bidi or separator mark");
  }
  return trimd::is_valid_utf8(out) ? "" : "bytes that are not UTF-8";
}

}  // namespace trimctl_test
