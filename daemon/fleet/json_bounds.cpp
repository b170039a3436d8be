#include "json_bounds.hpp"

#include <fmt/format.h>

namespace trimd::etcd {

const char* to_string(JsonFault fault) {
  switch (fault) {
    case JsonFault::None: return "none";
    case JsonFault::TooLarge: return "too large";
    case JsonFault::TooDeep: return "too deep";
    case JsonFault::TooManyValues: return "too many values";
    case JsonFault::NotJson: return "not JSON";
  }
  return "unknown";
}

// One pass: brackets outside strings open and close levels, commas and
// brackets count values. Mismatched brackets are left to the parser.
JsonFault measure_json(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) return JsonFault::TooLarge;
  std::size_t depth = 0;
  std::size_t values = 1;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '{':
      case '[':
        if (++depth > limits.max_depth) return JsonFault::TooDeep;
        values += 2;  // the container and its first element
        break;
      case '}':
      case ']':
        if (depth > 0) --depth;
        break;
      case ',': ++values; break;
      default: break;
    }
    if (values > limits.max_values) return JsonFault::TooManyValues;
  }
  return JsonFault::None;
}

BoundedJson parse_bounded(std::string_view text, const JsonLimits& limits) {
  BoundedJson out;
  out.fault = measure_json(text, limits);
  switch (out.fault) {
    case JsonFault::None: break;
    case JsonFault::TooLarge:
      out.error = fmt::format("{} bytes, over the bound of {}", text.size(), limits.max_bytes);
      return out;
    case JsonFault::TooDeep:
      out.error = fmt::format("nested deeper than {} levels", limits.max_depth);
      return out;
    case JsonFault::TooManyValues:
      out.error = fmt::format("more than {} JSON values", limits.max_values);
      return out;
    case JsonFault::NotJson: return out;
  }
  out.value = nlohmann::json::parse(text, nullptr, false);
  if (out.value.is_discarded()) {
    out.fault = JsonFault::NotJson;
    out.error = "not JSON";
  }
  return out;
}

}  // namespace trimd::etcd
