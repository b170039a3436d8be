#include "utf8.hpp"

namespace trimd {

std::size_t utf8_char_length(std::string_view text) {
  if (text.empty()) return 0;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return lead == 0 ? 0 : 1;
  std::size_t length = 0;
  char32_t code = 0;
  if ((lead & 0xe0) == 0xc0) {
    length = 2;
    code = lead & 0x1f;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3;
    code = lead & 0x0f;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i) & 0x3f);
  }
  constexpr char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  const bool valid = code >= kShortest[length] && code < 0x110000 &&
                     (code & 0xfffff800) != 0xd800 && !(code >= 0xfdd0 && code <= 0xfdef) &&
                     (code & 0xfffe) != 0xfffe;
  return valid ? length : 0;
}

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_char_length(text.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace trimd
