// Change notifications: the mount table (poll POLLPRI on mountinfo) and block
// devices coming and going (udev). Both only say "look again".
#pragma once

#include <functional>

#include "event_loop.hpp"

struct udev;
struct udev_monitor;

namespace trimd {

class MountWatcher {
 public:
  MountWatcher(EventLoop& loop, std::function<void()> on_change);
  ~MountWatcher();

 private:
  EventLoop& loop_;
  UniqueFd fd_;
};

class UdevWatcher {
 public:
  // Without a udev daemon (containers) it still works: events come from the
  // kernel netlink group instead. Never throws; logs when it cannot watch.
  // Devices of `subsystem` only (block devices by default).
  UdevWatcher(EventLoop& loop, std::function<void()> on_change, const char* subsystem = "block");
  ~UdevWatcher();

 private:
  EventLoop& loop_;
  struct udev* udev_ = nullptr;
  struct udev_monitor* monitor_ = nullptr;
  int fd_ = -1;
};

}  // namespace trimd
