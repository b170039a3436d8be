// Log lines that matter beyond their text: each carries a MESSAGE_ID= of its
// kind and fields such as MOUNT_POINT=, so that the journal can be queried
// ("journalctl MESSAGE_ID=... MOUNT_POINT=/home"). Sinks that know no fields
// (stderr) print the text alone. trimd(8) lists the ids.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>
#include <vector>

namespace trimd {

// What happened, for a program to tell without reading the wording:
// journalctl MESSAGE_ID=..., or the MESSAGE_ID field of --log-format=json.
// The kinds and their ids are listed once, in event_ids.def.
enum class EventId {
#define TRIMD_EVENT(name, id) name,
#include "event_ids.def"
#undef TRIMD_EVENT
};
inline constexpr EventId kAllEventIds[] = {
#define TRIMD_EVENT(name, id) EventId::name,
#include "event_ids.def"
#undef TRIMD_EVENT
};

// 128 bits as 32 lowercase hex digits, fixed forever for each kind.
std::string_view message_id(EventId id);

// A journal field: NAME is upper case letters, digits and "_" (journal
// rules); a value may hold any text.
struct LogField {
  std::string name;
  std::string value;
  bool operator==(const LogField&) const = default;
};
using LogFields = std::vector<LogField>;

// Logs `message` at `level` through the default logger, with MESSAGE_ID=
// and `fields` for the sinks that read current_log_fields().
void log_event(EventId id, spdlog::level::level_enum level, const LogFields& fields,
               std::string_view message);

// The fields of the log_event() call being logged on this thread; empty for
// plain spdlog calls. Sinks run on the logging thread, so they see them.
const LogFields& current_log_fields();

}  // namespace trimd
