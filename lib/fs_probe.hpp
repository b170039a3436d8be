// Questions asked of a mounted filesystem itself (ioctls on the mount point).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "planner.hpp"

namespace trimd {

class FsProber {
 public:
  virtual ~FsProber() = default;
  // The filesystem UUID, lower-case with dashes; nothing when unknown.
  virtual std::optional<std::string> uuid(const std::string& mount_point,
                                          const std::string& source_device) = 0;
  // Geometry for the planner. `device_size` is what sysfs says of the device.
  virtual FsGeometry geometry(const std::string& mount_point, const std::string& fs_type,
                              std::uint64_t device_size) = 0;
};

// FS_IOC_GETFSUUID, then libblkid-free fallbacks (/dev/disk/by-uuid);
// XFS_IOC_FSGEOMETRY for xfs allocation groups.
class SystemFsProber final : public FsProber {
 public:
  std::optional<std::string> uuid(const std::string& mount_point,
                                  const std::string& source_device) override;
  FsGeometry geometry(const std::string& mount_point, const std::string& fs_type,
                      std::uint64_t device_size) override;
};

}  // namespace trimd
