// trimd's log as the system tests read it: --log-format=json lines, each a
// flat object of string fields. Tests match MESSAGE_ID= and fields such as
// MOUNT_POINT=, never the wording of MESSAGE, which is for people.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "log_event.hpp"

namespace trimd::test {

using LogEntry = std::map<std::string, std::string>;

// The fields of one JSON log line (read with nlohmann::json); nothing for a
// line that is not one (a crash message, sanitizer output). Arrays (values
// that are not UTF-8) come back as their bytes.
std::optional<LogEntry> parse_log_line(std::string_view line);

// The entries of `text` (a whole log) of kind `id`, about `mount_point`
// when one is given, in order.
std::vector<LogEntry> entries_of(std::string_view text, EventId id,
                                 const std::string& mount_point = {});

// A field as a number; throws when it is missing or not one.
std::uint64_t field_u64(const LogEntry& entry, const std::string& name);

// The log rendered for people (test failure messages): "PRIORITY MESSAGE"
// per JSON line, other lines as they are.
std::string readable_log(std::string_view text);

}  // namespace trimd::test
