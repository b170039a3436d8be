#include "terminal_text.hpp"

#include "utf8.hpp"

namespace trimctl {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_byte_escape(std::string& out, unsigned char byte) {
  out += "\\x";
  out += kHex[byte >> 4];
  out += kHex[byte & 0xf];
}

void append_code_point_escape(std::string& out, char32_t code) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 0xf];
}

// The code point of the valid UTF-8 character `bytes`.
char32_t code_point(std::string_view bytes) {
  const auto lead = static_cast<unsigned char>(bytes[0]);
  if (bytes.size() == 1) return lead;
  char32_t code = lead & (0x7f >> bytes.size());
  for (std::size_t i = 1; i < bytes.size(); ++i)
    code = (code << 6) | (static_cast<unsigned char>(bytes[i]) & 0x3f);
  return code;
}

bool is_control(char32_t code) { return code < 0x20 || (code >= 0x7f && code <= 0x9f); }

// Marks that reorder what follows (or end such a run), and breaks that some
// terminals and viewers take for the end of a line.
bool is_bidi_or_break(char32_t code) {
  return code == 0x061c || code == 0x200e || code == 0x200f || (code >= 0x202a && code <= 0x202e) ||
         (code >= 0x2066 && code <= 0x2069) || code == 0x2028 || code == 0x2029;
}

}  // namespace

std::string terminal_text(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size();) {
    const std::size_t length = trimd::utf8_char_length(raw.substr(i));
    if (length == 0) {  // not UTF-8 (or NUL): the byte alone
      append_byte_escape(out, static_cast<unsigned char>(raw[i]));
      ++i;
      continue;
    }
    const std::string_view bytes = raw.substr(i, length);
    const char32_t code = code_point(bytes);
    if (is_control(code))
      for (const char byte : bytes) append_byte_escape(out, static_cast<unsigned char>(byte));
    else if (is_bidi_or_break(code))
      append_code_point_escape(out, code);
    else
      out += bytes;
    i += length;
  }
  return out;
}

std::string text_line(std::string_view text, Color color, bool colors) {
  return paint(terminal_text(text), color, colors) + "\n";
}

std::string text_paragraph(std::string_view text, std::size_t width, std::size_t indent,
                           Color color, bool colors) {
  const std::string wrapped = wrap_words(terminal_text(text), width, indent);
  std::string out;
  for (std::size_t start = 0; start < wrapped.size();) {
    const auto end = wrapped.find('\n', start);
    out += paint(std::string_view(wrapped).substr(start, end - start), color, colors) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace trimctl
