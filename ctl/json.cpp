#include "json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace trimctl {

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string json_array(const std::vector<std::string>& elements) {
  std::string out = "[";
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ",";
    out += elements[i];
  }
  return out + "]";
}

namespace {

std::string newline_and_indent(int depth) { return "\n" + std::string(2 * static_cast<std::size_t>(depth), ' '); }

}  // namespace

std::string json_pretty(std::string_view compact) {
  std::string out;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < compact.size(); ++i) {
    const char c = compact[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < compact.size()) out += compact[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; out += c; break;
      case '{':
      case '[':
        out += c;
        if (i + 1 < compact.size() && (compact[i + 1] == '}' || compact[i + 1] == ']'))
          out += compact[++i];  // empty: stays "{}" or "[]"
        else
          out += newline_and_indent(++depth);
        break;
      case '}':
      case ']': out += newline_and_indent(--depth) + c; break;
      case ',': out += "," + newline_and_indent(depth); break;
      case ':': out += ": "; break;
      default: out += c;
    }
  }
  return out;
}

JsonObject& JsonObject::field(std::string_view key, std::string_view json) {
  if (!body_.empty()) body_ += ",";
  body_ += json_quote(key);
  body_ += ":";
  body_ += json;
  return *this;
}

JsonObject& JsonObject::string(std::string_view key, std::string_view value) {
  return field(key, json_quote(value));
}

JsonObject& JsonObject::number(std::string_view key, uint64_t value) {
  return field(key, std::to_string(value));
}

JsonObject& JsonObject::number(std::string_view key, double value) {
  return field(key, json_number(value));
}

JsonObject& JsonObject::boolean(std::string_view key, bool value) {
  return field(key, value ? "true" : "false");
}

JsonObject& JsonObject::strings(std::string_view key, const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  quoted.reserve(values.size());
  for (const auto& value : values) quoted.push_back(json_quote(value));
  return field(key, json_array(quoted));
}

JsonObject& JsonObject::raw(std::string_view key, std::string_view json) {
  return field(key, json);
}

JsonObject& JsonObject::append(const JsonObject& other) {
  if (!body_.empty() && !other.body_.empty()) body_ += ",";
  body_ += other.body_;
  return *this;
}

}  // namespace trimctl
