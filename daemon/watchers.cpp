#include "watchers.hpp"

#include <fcntl.h>
#include <libudev.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "errno_error.hpp"

namespace trimd {

MountWatcher::MountWatcher(EventLoop& loop, std::function<void()> on_change)
    : loop_(loop), fd_(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) {
  if (fd_.get() < 0) throw_errno("open /proc/self/mountinfo");
  // The kernel flags a changed mount table with EPOLLPRI|EPOLLERR; reading
  // the file to the end re-arms it (done by the rescan itself).
  loop_.add(fd_.get(), EPOLLPRI | EPOLLERR, [this, on_change](std::uint32_t) {
    char buffer[4096];
    ::lseek(fd_.get(), 0, SEEK_SET);
    while (::read(fd_.get(), buffer, sizeof buffer) > 0) {
    }
    on_change();
  });
}

MountWatcher::~MountWatcher() { loop_.remove(fd_.get()); }

UdevWatcher::UdevWatcher(EventLoop& loop, std::function<void()> on_change, const char* subsystem)
    : loop_(loop) {
  udev_ = udev_new();
  if (!udev_) {
    spdlog::warn("udev unavailable; {} devices are only noticed when looked at again", subsystem);
    return;
  }
  monitor_ = udev_monitor_new_from_netlink(udev_, "udev");
  if (!monitor_ ||
      udev_monitor_filter_add_match_subsystem_devtype(monitor_, subsystem, nullptr) < 0 ||
      udev_monitor_enable_receiving(monitor_) < 0) {
    spdlog::warn("cannot listen to udev events of {} devices: {}", subsystem, std::strerror(errno));
    return;
  }
  fd_ = udev_monitor_get_fd(monitor_);
  loop_.add(fd_, EPOLLIN, [this, on_change](std::uint32_t) {
    bool any = false;
    while (udev_device* device = udev_monitor_receive_device(monitor_)) {
      const char* action = udev_device_get_action(device);
      spdlog::debug("udev: {} {}", action ? action : "?", udev_device_get_sysname(device));
      udev_device_unref(device);
      any = true;
    }
    if (any) on_change();
  });
}

UdevWatcher::~UdevWatcher() {
  if (fd_ >= 0) loop_.remove(fd_);
  if (monitor_) udev_monitor_unref(monitor_);
  if (udev_) udev_unref(udev_);
}

}  // namespace trimd
