// The plain-text log (stderr when trimd runs outside the journal): one line
// per message whatever a mount point holds. Line feeds, other control
// characters and bytes that are not UTF-8 are escaped as on the bus
// (escape_bytes_for_line()), so a line cannot be split or forged.
#pragma once

#include <memory>

#include <spdlog/formatter.h>

namespace trimd {

// "2026-12-02 07:36:55.123 info: <escaped message>", level in colour where
// the sink does colour.
std::unique_ptr<spdlog::formatter> text_log_formatter();

}  // namespace trimd
