#include "bus_mount_points.hpp"

#include <filesystem>
#include <system_error>

#include "bus_errors.hpp"
#include "bus_names.hpp"
#include "system_view.hpp"

namespace trimd::bus {

namespace {

sdbus::Error invalid(const std::string& message) {
  return make_error(ErrorKind::InvalidArgument, message);
}

// Adds one segment of an absolute path to `out` (the normal form so far,
// "" for the root), or steps back one for "..", as the kernel would.
void append_segment(std::string& out, std::string_view segment) {
  if (segment.empty() || segment == ".") return;
  if (segment == "..") {
    const std::size_t slash = out.rfind('/');
    out.resize(slash == std::string::npos ? 0 : slash);
    return;
  }
  out += '/';
  out += segment;
}

// The filesystem a caller names: by the raw bytes its escaped form stands
// for (bus_string()), else by the text as given (a hand-typed path whose
// backslash is no escape, or whose unescaped form is not mounted). `path`
// is the raw path an error should name.
struct Named {
  std::optional<std::string> id;
  std::string path;
};

Named resolve(const Manager& manager, const std::string& given) {
  const auto raw = raw_from_bus_string(given);
  if (!raw || *raw == given) {
    std::string path = normalize_mount_point(given);
    return {manager.id_for_mount_point(path), path};
  }
  std::string path = normalize_mount_point(*raw);
  if (auto id = manager.id_for_mount_point(path)) return {id, path};
  if (given.size() <= kMaxPathBytes)
    if (auto id = manager.id_for_mount_point(normalize_mount_point(given))) return {id, path};
  return {std::nullopt, path};
}

}  // namespace

void check_bus_path_size(std::string_view path) {
  if (path.size() > kMaxBusPathBytes)
    throw invalid("a path of " + std::to_string(path.size()) + " bytes: at most " +
                  std::to_string(kMaxBusPathBytes) + " (PATH_MAX, escaped) are accepted");
}

void check_mount_point_list(const std::vector<std::string>& mount_points) {
  if (mount_points.size() > kMaxMountPoints)
    throw invalid(std::to_string(mount_points.size()) + " mount points in one call: at most " +
                  std::to_string(kMaxMountPoints) + " are accepted");
  std::size_t total = 0;
  for (const auto& path : mount_points) {
    check_bus_path_size(path);
    total += path.size();
  }
  if (total > kMaxTotalPathBytes)
    throw invalid(std::to_string(total) + " bytes of mount points in one call: at most " +
                  std::to_string(kMaxTotalPathBytes) + " are accepted");
}

std::string normalize_mount_point(std::string_view path) {
  if (path.size() > kMaxPathBytes)
    throw invalid("a path of " + std::to_string(path.size()) + " bytes: at most " +
                  std::to_string(kMaxPathBytes) + " (PATH_MAX) are accepted");
  if (path.empty() || path.front() != '/')
    throw invalid("relative path '" + std::string(path) + "': mount points must be absolute");
  std::string normal;
  normal.reserve(path.size());
  std::size_t begin = 1;
  while (begin <= path.size()) {
    std::size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    append_segment(normal, path.substr(begin, end - begin));
    begin = end + 1;
  }
  return normal.empty() ? "/" : normal;
}

sdbus::Error untracked_path_error(const std::string& path, const UntrackedPath& facts) {
  const std::string quoted = "'" + path + "'";
  if (facts.skip_reason && !facts.skip_reason->empty())
    return make_error(ErrorKind::NotSupported, quoted + " is not trimmed: " + *facts.skip_reason);
  if (facts.skip_reason)
    return make_error(ErrorKind::NotSupported,
                      quoted + " is not a filesystem trimd tracks (see trimd --dry-run)");
  if (facts.exists) return make_error(ErrorKind::NotFound, quoted + " is not a mount point");
  return make_error(ErrorKind::NotFound, quoted + " does not exist");
}

std::vector<std::string> ids_for_mount_points(const Manager& manager,
                                              const std::vector<std::string>& mount_points,
                                              const PathInspector& inspect) {
  check_mount_point_list(mount_points);
  std::vector<std::string> ids;
  ids.reserve(mount_points.size());
  for (const auto& given : mount_points) {
    const Named named = resolve(manager, given);
    if (!named.id) throw untracked_path_error(named.path, inspect(named.path));
    ids.push_back(*named.id);
  }
  return ids;
}

UntrackedPath inspect_live_path(const std::string& path) {
  UntrackedPath facts;
  std::error_code error;
  facts.exists = std::filesystem::exists(path, error);
  if (!facts.exists) return facts;
  // Only on this error path: a scan probes every mounted filesystem.
  const Discovery found = SystemView().scan();
  for (const auto& skipped : found.skipped)
    if (skipped.mount.mount_point == path) facts.skip_reason = skipped.reason;
  if (!facts.skip_reason)
    for (const auto& tracked : found.tracked)
      if (tracked.mount.mount_point == path) facts.skip_reason = "";
  return facts;
}

}  // namespace trimd::bus
