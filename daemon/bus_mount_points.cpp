#include "bus_mount_points.hpp"

#include <filesystem>
#include <system_error>

#include "bus_errors.hpp"
#include "system_view.hpp"

namespace trimd::bus {

std::string normalize_mount_point(std::string_view path) {
  if (path.empty() || path.front() != '/')
    throw make_error(ErrorKind::InvalidArgument,
                     "relative path '" + std::string(path) + "': mount points must be absolute");
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
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
  std::vector<std::string> ids;
  for (const auto& given : mount_points) {
    const std::string path = normalize_mount_point(given);
    auto id = manager.id_for_mount_point(path);
    if (!id) throw untracked_path_error(path, inspect(path));
    ids.push_back(*id);
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
