#include "json.hpp"

#include <cmath>
#include <cstdint>

namespace trimctl {

namespace {

// Below 2^53 every whole double is exactly an integer.
constexpr double kExactIntegers = 9007199254740992.0;

}  // namespace

Json json_number(double value) {
  if (!std::isfinite(value)) return nullptr;
  if (value == std::trunc(value) && std::fabs(value) < kExactIntegers)
    return static_cast<std::int64_t>(value);
  return value;
}

std::string json_text(const Json& document, JsonMode mode) {
  // D-Bus strings are valid UTF-8; should one not be, replace it, never throw.
  return document.dump(mode == JsonMode::Pretty ? 2 : -1, ' ', false,
                       Json::error_handler_t::replace);
}

}  // namespace trimctl
