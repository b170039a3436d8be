// Mount points as callers name them (raw, or escaped as bus_string() shows
// them), checked and turned into the manager's filesystem ids, with an error
// that says what is wrong with a bad one. Only the sizes are checked before
// the caller is authorized; everything costs time linear in what the caller
// sent, which is bounded.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sdbus-c++/Error.h>

#include "manager.hpp"

namespace trimd::bus {

// What one call may name: a path no longer than PATH_MAX (four times that
// in its escaped form, "\xNN" per byte), and a list that a real client never
// comes near. org.trimd.trimd1(5) documents these.
inline constexpr std::size_t kMaxPathBytes = 4096;
inline constexpr std::size_t kMaxBusPathBytes = 4 * kMaxPathBytes;
inline constexpr std::size_t kMaxMountPoints = 4096;
inline constexpr std::size_t kMaxTotalPathBytes = 1 << 20;

// What the system says about a path trimd does not track.
struct UntrackedPath {
  bool exists = false;
  // Set when the path is a mount point: why trimd leaves it alone (empty
  // when not known, e.g. mounted since the last scan).
  std::optional<std::string> skip_reason;
};
using PathInspector = std::function<UntrackedPath(const std::string& path)>;

// Throws InvalidArgument (naming the size, never echoing the text) when one
// path, or the list, breaks one of the bounds above. Cheap: callers run it
// before asking polkit, so an oversized call is not kept while it answers.
void check_bus_path_size(std::string_view path);
void check_mount_point_list(const std::vector<std::string>& mount_points);

// "/mnt/./data/" -> "/mnt/data", "/a/b/../c" -> "/a/c", in one pass.
// Throws InvalidArgument for a relative or overlong path.
std::string normalize_mount_point(std::string_view path);

// The error for an absolute path that the manager does not track:
// NotFound (missing, or not a mount point) or NotSupported (skipped).
sdbus::Error untracked_path_error(const std::string& path, const UntrackedPath& facts);

// One id per mount point, in order; throws the error for the first bad one.
std::vector<std::string> ids_for_mount_points(const Manager& manager,
                                              const std::vector<std::string>& mount_points,
                                              const PathInspector& inspect);

// The live system's answer: stat() and a fresh mount table scan.
UntrackedPath inspect_live_path(const std::string& path);

}  // namespace trimd::bus
