#include "terminal.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>

namespace trimctl {

namespace {

std::optional<std::size_t> columns_from(const char* text) {
  if (!text || !*text) return std::nullopt;
  std::size_t value = 0;
  const char* end = text + std::char_traits<char>::length(text);
  const auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end || value == 0 || value > 65535) return std::nullopt;
  return value;
}

std::string lowercase(const char* text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The first `cells` code points of `text`, as bytes.
std::string_view head(std::string_view text, std::size_t cells) {
  std::size_t at = 0;
  for (std::size_t seen = 0; at < text.size(); ++at) {
    if (is_continuation_byte(text[at])) continue;
    if (seen++ == cells) break;
  }
  return text.substr(0, at);
}

// The last `cells` code points of `text`, as bytes.
std::string_view tail(std::string_view text, std::size_t cells) {
  std::size_t at = text.size();
  for (std::size_t seen = 0; at > 0 && seen < cells;) {
    --at;
    if (!is_continuation_byte(text[at])) ++seen;
  }
  return text.substr(at);
}

constexpr std::string_view kEllipsis = "…";

std::optional<std::size_t> window_columns() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return std::nullopt;
}

}  // namespace

std::optional<bool> parse_colors_setting(const char* value) {
  if (!value) return std::nullopt;
  static constexpr std::array<const char*, 7> kYes{"1", "yes", "y", "true", "t", "on", "24bit"};
  static constexpr std::array<const char*, 6> kNo{"0", "no", "n", "false", "f", "off"};
  const std::string text = lowercase(value);
  if (text == "16" || text == "256") return true;
  for (const char* yes : kYes)
    if (text == yes) return true;
  for (const char* no : kNo)
    if (text == no) return false;
  return std::nullopt;
}

Terminal decide_terminal(const TerminalFacts& facts) {
  Terminal terminal;
  terminal.tty = facts.stdout_tty;
  if (const auto columns = columns_from(facts.getenv("COLUMNS")))
    terminal.columns = *columns;
  else if (facts.stdout_tty && facts.window_columns)
    terminal.columns = *facts.window_columns;

  const char* term = facts.getenv("TERM");
  if (const auto explicit_choice = parse_colors_setting(facts.getenv("SYSTEMD_COLORS")))
    terminal.colors = *explicit_choice;
  else if (facts.getenv("NO_COLOR") || (term && std::string_view(term) == "dumb"))
    terminal.colors = false;
  else
    terminal.colors = facts.stdout_tty;
  return terminal;
}

Terminal detect_terminal() {
  TerminalFacts facts;
  facts.getenv = [](const char* name) -> const char* { return std::getenv(name); };
  facts.stdout_tty = isatty(STDOUT_FILENO) == 1;
  if (facts.stdout_tty) facts.window_columns = window_columns();
  return decide_terminal(facts);
}

std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !is_continuation_byte(c); }));
}

std::string ellipsize_middle(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return "";
  const std::size_t kept = width - 1;
  // The end of a path names the filesystem best: it gets the odd cell.
  const std::size_t front = kept / 2;
  return std::string(head(text, front)) + std::string(kEllipsis) +
         std::string(tail(text, kept - front));
}

std::string ellipsize_end(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return "";
  std::string kept(head(text, width - 1));
  while (!kept.empty() && kept.back() == ' ') kept.pop_back();  // "all…", not "all …"
  return kept + std::string(kEllipsis);
}

std::string ellipsize_start(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return "";
  return std::string(kEllipsis) + std::string(tail(text, width - 1));
}

std::string wrap_words(std::string_view text, std::size_t width, std::size_t indent) {
  if (width == 0 || display_width(text) <= width) return std::string(text) + "\n";
  std::string out;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    const std::size_t indent_now = out.empty() ? 0 : indent;
    if (!line.empty() && indent_now + display_width(line) + 1 + display_width(word) > width) {
      out += std::string(indent_now, ' ') + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
  }
  if (!line.empty()) out += std::string(out.empty() ? 0 : indent, ' ') + line + "\n";
  return out;
}

std::string paint(std::string_view text, Color color, bool enabled) {
  if (!enabled || color == Color::None || text.empty()) return std::string(text);
  const char* start = "";
  switch (color) {
    case Color::Green: start = "\x1b[0;32m"; break;
    case Color::Yellow: start = "\x1b[0;1;33m"; break;
    case Color::Red: start = "\x1b[0;1;31m"; break;
    case Color::Underline: start = "\x1b[0;4m"; break;
    case Color::None: break;
  }
  return start + std::string(text) + "\x1b[0m";
}

}  // namespace trimctl
