// A JSON string literal, for the places that write JSON by hand (trimctl
// --json, trimd --log-format=json): no library needed for flat output.
#pragma once

#include <string>
#include <string_view>

namespace trimd {

// `text` in double quotes: " and \ escaped, \n \r \t by name, other control
// characters as \u00XX; every other byte as it is (JSON text is UTF-8: the
// caller decides what to do with bytes that are not).
std::string json_quote(std::string_view text);

}  // namespace trimd
