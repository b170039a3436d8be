#include "mount_instance.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "unique_fd.hpp"

namespace trimd {

namespace {

// Linux 6.8 uapi; Debian 12's headers predate them.
constexpr unsigned kStatxMntIdUnique = 0x00004000U;
constexpr unsigned long kNsGetMntnsId = _IOR(0xb7, 0x5, std::uint64_t);

std::string read_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

std::uint64_t read_namespace_id() {
  const UniqueFd fd(::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
  std::uint64_t id = 0;
  if (fd.get() < 0 || ::ioctl(fd.get(), kNsGetMntnsId, &id) < 0) return 0;
  return id;
}

std::uint64_t unique_mount_id(const std::string& mount_point) {
  struct statx stx {};
  if (::statx(AT_FDCWD, mount_point.c_str(), AT_SYMLINK_NOFOLLOW, kStatxMntIdUnique, &stx) < 0)
    return 0;
  return (stx.stx_mask & kStatxMntIdUnique) ? stx.stx_mnt_id : 0;
}

}  // namespace

std::vector<std::string> options_but_discard(const std::vector<std::string>& super_options) {
  std::vector<std::string> kept;
  std::copy_if(super_options.begin(), super_options.end(), std::back_inserter(kept),
               [](const std::string& o) {
                 return o != "discard" && o != "nodiscard" && o.rfind("discard=", 0) != 0;
               });
  return kept;
}

MountInstance probe_mount_instance(const std::string& mount_point,
                                   const std::vector<std::string>& super_options) {
  // Neither changes while the process runs.
  static const std::string boot_id = read_boot_id();
  static const std::uint64_t namespace_id = read_namespace_id();
  return {boot_id, namespace_id, unique_mount_id(mount_point), options_but_discard(super_options)};
}

MountMatch match_mount(const MountInstance& recorded, const MountInstance& now) {
  if (recorded.boot_id.empty() || now.boot_id.empty()) return MountMatch::Unknown;
  if (recorded.boot_id != now.boot_id) return MountMatch::Other;  // rebooted since
  const bool comparable = recorded.namespace_id != 0 && recorded.namespace_id == now.namespace_id &&
                          recorded.mount_id != 0 && now.mount_id != 0;
  if (comparable) return recorded.mount_id == now.mount_id ? MountMatch::Same : MountMatch::Other;
  // trimd restarted in a mount namespace of its own (systemd's sandbox): its
  // mounts are copies with new ids. The options are all that is left to go by.
  return recorded.options == now.options ? MountMatch::Same : MountMatch::Other;
}

}  // namespace trimd
