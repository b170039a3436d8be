// Reading the documentation in the source tree: files, man page sections,
// and words as roff writes them. For the tests in tests/docs.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace trimd_docs {

inline const std::string kSource = TRIMD_SOURCE_DIR;

// A file below the top of the source tree ("man/trimd.8").
inline std::string source_file(const std::string& path) {
  std::ifstream in(kSource + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text of one section of a man page (".SH NAME" up to the next .SH).
inline std::string man_section(const std::string& man, const std::string& heading) {
  const auto start = man.find("\n.SH " + heading + "\n");
  if (start == std::string::npos) return "";
  const auto end = man.find("\n.SH ", start + 1);
  return man.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// How text is written in roff source: '-' and '"' escaped.
inline std::string roff(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '-')
      out += "\\-";
    else if (c == '"')
      out += "\\(dq";
    else
      out += c;
  }
  return out;
}

}  // namespace trimd_docs
