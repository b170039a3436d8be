// trimctl's JSON document type, only declared: for headers that name it
// without building documents, so the files that include them and build
// none do without nlohmann/json.hpp (seconds of compile time each).
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace trimctl {

using Json = nlohmann::ordered_json;

}  // namespace trimctl
