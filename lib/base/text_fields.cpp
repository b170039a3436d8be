#include "text_fields.hpp"

namespace trimd {

std::vector<std::string_view> split_fields(std::string_view line, std::string_view blanks) {
  std::vector<std::string_view> fields;
  std::size_t pos = line.find_first_not_of(blanks);
  while (pos != std::string_view::npos) {
    const std::size_t end = line.find_first_of(blanks, pos);
    fields.push_back(line.substr(pos, end == std::string_view::npos ? end : end - pos));
    pos = line.find_first_not_of(blanks, end);
  }
  return fields;
}

}  // namespace trimd
