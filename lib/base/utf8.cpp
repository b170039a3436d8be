#include "utf8.hpp"

namespace trimd {

namespace {

constexpr char kHex[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_hex_escape(std::string& out, unsigned char c) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// Copies valid characters, escapes the rest and whatever `also` names.
template <typename Also>
std::string escape(std::string_view raw, Also also) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size();) {
    const auto c = static_cast<unsigned char>(raw[i]);
    const std::size_t n = utf8_char_length(raw.substr(i));
    if (n == 0 || c == '\\' || (n == 1 && also(c))) {
      append_hex_escape(out, c);
      ++i;
    } else {
      out.append(raw.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace

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

std::string escape_bytes(std::string_view raw) {
  return escape(raw, [](unsigned char) { return false; });
}

std::string escape_bytes_for_line(std::string_view raw) { return escape(raw, is_control); }

std::optional<std::string> unescape_bytes(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '\\') {
      out += escaped[i];
      continue;
    }
    if (escaped.size() - i < 4 || escaped[i + 1] != 'x') return std::nullopt;
    const int high = hex_value(escaped[i + 2]);
    const int low = hex_value(escaped[i + 3]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 3;
  }
  return out;
}

}  // namespace trimd
