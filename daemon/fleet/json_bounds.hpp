// What etcd (or whoever answers in its place) sends is parsed only once its
// shape is known to be small: its bytes, its nesting depth and its number
// of values are counted in one linear pass over the text, before any
// allocation. A 10 MiB body of "{}," or a 2 MB nested array costs a scan,
// not a parse into gigabytes (docs/fleet.md, "Trust").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace trimd::etcd {

struct JsonLimits {
  std::size_t max_bytes;
  std::size_t max_depth;   // nested objects and arrays
  std::size_t max_values;  // containers and elements, roughly the nodes a parse makes
};

// Every reply and stream message of etcd's gateway: a range of 1,024 claims
// is ~300 KiB and 3 levels deep; a watch message 5 levels.
inline constexpr JsonLimits kEtcdReplyLimits{1u << 20, 16, 65536};

enum class JsonFault { None, TooLarge, TooDeep, TooManyValues, NotJson };
const char* to_string(JsonFault fault);

struct BoundedJson {
  nlohmann::json value;  // discarded unless fault == None
  JsonFault fault = JsonFault::None;
  std::string error;  // "nested deeper than 16 levels", ...; empty with a value
};

// The shape of `text` within `limits`, without parsing it.
JsonFault measure_json(std::string_view text, const JsonLimits& limits);

// `text` parsed when its shape is within `limits`.
BoundedJson parse_bounded(std::string_view text, const JsonLimits& limits);

}  // namespace trimd::etcd
