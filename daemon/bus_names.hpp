// The fixed names of trimd's bus API (docs/design.md) and the pure helpers that
// turn engine values into bus values. No sd-bus here: unit-tested directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "time.hpp"

namespace trimd::bus {

inline constexpr const char* kBusName = "org.trimd.trimd1";
inline constexpr const char* kManagerPath = "/org/trimd/trimd1";
inline constexpr const char* kFilesystemPathPrefix = "/org/trimd/trimd1/filesystem/";
inline constexpr const char* kManagerInterface = "org.trimd.trimd1.Manager";
inline constexpr const char* kFilesystemInterface = "org.trimd.trimd1.Filesystem";
inline constexpr const char* kPolkitAction = "org.trimd.trimd1.manage";

// One object path element for an arbitrary string, as sd_bus_path_encode()
// does it: every byte outside [A-Za-z0-9] becomes "_xx" (lower-case hex), and
// the empty string becomes "_". Reversible, so clients can map back.
std::string escape_path_element(std::string_view text);
// The inverse; nothing when `element` is not a valid escape.
std::optional<std::string> unescape_path_element(std::string_view element);

// A D-Bus string must be valid UTF-8; a mount point or device name need not
// be. Every name goes out through escape_bytes() (utf8.hpp): unchanged when
// valid UTF-8 without a backslash, "/mnt/caf\xe9" for the Latin-1 bytes of
// "/mnt/café", "/mnt/a\x5cb" for "/mnt/a\b", so distinct names stay distinct.
std::string bus_string(std::string_view text);
// The raw bytes a caller names in that form; nothing when `text` is not
// such a form (a lone backslash).
std::optional<std::string> raw_from_bus_string(std::string_view text);
std::vector<std::string> bus_strings(const std::vector<std::string>& texts);

// /org/trimd/trimd1/filesystem/<escaped id>
std::string filesystem_object_path(std::string_view id);

// Bus timestamps are microseconds since the epoch, 0 = never.
std::uint64_t timestamp_usec(const std::optional<TimePoint>& t);
// Bus durations are microseconds, never negative.
std::uint64_t duration_usec(Duration d);

}  // namespace trimd::bus
