// trimctl's --json output: documents built with nlohmann::json, whose
// ordered_json keeps members in the order they are added, printed on one
// line (--json, --json=short) or indented (--json=pretty).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "json_fwd.hpp"
#include "options.hpp"

namespace trimctl {

// A double as trimctl has always written it: a whole number without ".0"
// ("0", "1"), null when it is not finite.
Json json_number(double value);

// `document` as --json=MODE prints it, without the newline: one line for
// Short, two spaces a level and one member or element a line for Pretty.
// The one place that serializes, so only json.cpp compiles the dumper.
std::string json_text(const Json& document, JsonMode mode);

}  // namespace trimctl
