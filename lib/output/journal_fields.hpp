// What trimd's journal sink sends, as plain data: the fields of one entry,
// the syslog priority of a spdlog level, and systemd's check that stderr
// really is the journal (JOURNAL_STREAM).
#pragma once

#include <sys/types.h>

#include <spdlog/common.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "log_event.hpp"

namespace trimd {

// syslog(3) priorities: critical 2, error 3, warning 4, info 6, debug and trace 7.
int syslog_priority(spdlog::level::level_enum level);

// journald's rule: 1-64 of A-Z, 0-9 and "_", not starting with "_" (those
// are trusted fields the journal sets) nor a digit.
bool valid_journal_field_name(std::string_view name);

// "MESSAGE=...", "PRIORITY=...", "SYSLOG_IDENTIFIER=...", then `extra` in
// order; extra fields with invalid names are dropped, and so are the ones
// above, which only the sink may set.
std::vector<std::string> journal_entry(std::string_view message, int priority,
                                       std::string_view identifier, const LogFields& extra);

// One entry of journal_entry() as one line of JSON, in the shape of
// "journalctl -o json": {"__REALTIME_TIMESTAMP":"<usec>","MESSAGE":"...",...},
// every value a string, a value that is not valid UTF-8 an array of its bytes
// (as journalctl does), no newline at the end. A name given twice keeps its
// first place and its last value. --log-format=json writes these,
// so one reader serves both trimd's stderr and the journal.
std::string json_log_line(std::int64_t realtime_usec, const std::vector<std::string>& entry);

// JOURNAL_STREAM is "<device>:<inode>" of the stream systemd connected to
// stdout/stderr: true when it names the file `fd_dev`/`fd_ino` (fstat(2) of
// stderr), so a redirected stderr of a child is not mistaken for it.
bool journal_stream_matches(std::string_view journal_stream, dev_t fd_dev, ino_t fd_ino);

}  // namespace trimd
