// Just enough JSON writing for trimctl's --json output (no parsing: the
// commands only ever produce it), so the client needs no extra library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json_string.hpp"

namespace trimctl {

using trimd::json_quote;  // `text` as a JSON string literal, quotes included

// Shortest text that reads back as the same double; null when not finite.
std::string json_number(double value);

// `elements` (each already JSON) as an array.
std::string json_array(const std::vector<std::string>& elements);

// Compact JSON (as JsonObject writes it) indented two spaces a level,
// one member or element a line, for people.
std::string json_pretty(std::string_view compact);

// Builds one object, fields in the order they are added.
class JsonObject {
 public:
  JsonObject& string(std::string_view key, std::string_view value);
  JsonObject& number(std::string_view key, uint64_t value);
  JsonObject& number(std::string_view key, double value);
  JsonObject& boolean(std::string_view key, bool value);
  JsonObject& strings(std::string_view key, const std::vector<std::string>& values);
  // `json` is inserted as it is (an object or array built elsewhere).
  JsonObject& raw(std::string_view key, std::string_view json);
  // The members of `other`, after the ones already here.
  JsonObject& append(const JsonObject& other);

  std::string str() const { return "{" + body_ + "}"; }

 private:
  JsonObject& field(std::string_view key, std::string_view json);
  std::string body_;
};

}  // namespace trimctl
