// How trimd's objects and events read in trimctl's output, in text and
// in JSON: shared by status, trim --wait and monitor.
#pragma once

#include <cstdint>
#include <string>

#include "client.hpp"
#include "json_fwd.hpp"
#include "options.hpp"

namespace trimctl {

Json manager_json(const ManagerInfo& manager);
Json filesystem_json(const FilesystemInfo& filesystem);

// One property value: JSON, and text for people ("50%", "1.5 GiB", a
// timestamp) chosen by what the property is.
Json property_json(const PropertyValue& value);
std::string property_text(const std::string& name, const PropertyValue& value);
// Every property as one JSON object, or as "Name=value Name=value".
Json properties_json(const PropertyMap& properties);
std::string properties_text(const PropertyMap& properties);

// Whether Progress belongs to a current pass: one that runs, or that has
// begun and is held (paused, or waiting for idle disks again).
bool pass_under_way(const FilesystemInfo& filesystem);

// "success, 1.2 GiB trimmed in 4.1s (waited 52s)": `usec` is the pass's
// wall time, `wait_usec` the part of it spent waiting.
std::string trim_result_text(const std::string& result, uint64_t bytes, uint64_t usec,
                             uint64_t wait_usec = 0);
// "7 GiB trimmed in 12 passes, 1 failed; 5 chunks preempted, 3 pauses for foreground I/O"
std::string lifetime_text(const LifetimeInfo& life);

// Whether to advise against the filesystem's online discard: synchronous
// only (btrfs discard=async is batched in the background already).
bool warn_about_inline_discard(const FilesystemInfo& filesystem);
// What status says about a takeover (taken over, not possible, failed), or
// "" when there is nothing to say (ctl/takeover.cpp).
std::string takeover_note(const FilesystemInfo& filesystem);
// The warning status prints for a filesystem mounted with 'discard'.
std::string inline_discard_warning(const std::string& mount_point);

}  // namespace trimctl
