#include "loopfs_cleanup.hpp"

#include <fcntl.h>
#include <linux/loop.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include "loopfs.hpp"

namespace trimd::test::cleanup {

namespace fs = std::filesystem;

namespace {

// ---- the table the fatal-signal handler and atexit() clean up from ----------
// The handler runs plain syscalls on fixed buffers only: async-signal-safe.

constexpr std::size_t kSlots = 32;
constexpr std::size_t kPathBytes = 512;
enum SlotState : int { kFree, kBusy, kLive };

struct CleanupSlot {
  std::atomic<int> state{kFree};
  std::atomic<int> loop_fd{-1};
  std::atomic<bool> mounted{false};
  char dir[kPathBytes];
  char mount_point[kPathBytes];
  char backing_file[kPathBytes];
};
CleanupSlot g_slots[kSlots];

void copy_path(char (&to)[kPathBytes], const std::string& from) {
  std::memcpy(to, from.c_str(), from.size() + 1);
}

}  // namespace

int claim_slot(const std::string& dir, const std::string& mount_point, const std::string& file) {
  for (const std::string* path : {&dir, &mount_point, &file})
    if (path->size() >= kPathBytes) throw std::length_error("temp path too long: " + *path);
  for (std::size_t i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kBusy)) continue;
    copy_path(g_slots[i].dir, dir);
    copy_path(g_slots[i].mount_point, mount_point);
    copy_path(g_slots[i].backing_file, file);
    g_slots[i].state = kLive;
    return static_cast<int>(i);
  }
  throw std::runtime_error("more than " + std::to_string(kSlots) + " loop images at once");
}

void release_slot(int slot) {
  if (slot >= 0) g_slots[slot].state = kFree;
}

// What the handler must undo changes as the image is attached and mounted.
void publish_loop_fd(int slot, int fd) {
  if (slot >= 0) g_slots[slot].loop_fd = fd;
}
void publish_mounted(int slot, bool mounted) {
  if (slot >= 0) g_slots[slot].mounted = mounted;
}

namespace {

void clean_up_slot(CleanupSlot& slot) noexcept {
  if (slot.mounted.exchange(false)) ::umount2(slot.mount_point, MNT_DETACH);
  if (const int fd = slot.loop_fd.exchange(-1); fd >= 0) {
    ::ioctl(fd, LOOP_CLR_FD, 0);
    ::close(fd);  // autoclear finishes the detach on the last close
  }
  ::unlink(slot.backing_file);
  ::rmdir(slot.mount_point);
  ::rmdir(slot.dir);
}

void clean_up_all_slots() noexcept {
  for (auto& slot : g_slots)
    if (slot.state == kLive) clean_up_slot(slot);
}

void clean_up_and_die(int signal_number) {
  clean_up_all_slots();
  ::raise(signal_number);  // SA_RESETHAND: the default action now kills us
}

void install_cleanup_handlers() {
  std::atexit(clean_up_all_slots);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // not ours
    struct sigaction action {};
    action.sa_handler = clean_up_and_die;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig, &action, nullptr);
  }
}

// ---- leftovers of runs that died by SIGKILL (a ctest timeout) ---------------

constexpr const char* kDirPrefix = "trimd-loopfs-";

bool older_than_a_minute(const fs::path& path) {
  std::error_code ec;
  const auto modified = fs::last_write_time(path, ec);
  return !ec && fs::file_time_type::clock::now() - modified > std::chrono::minutes(1);
}

// A dir whose image exists but whose flock we can take belongs to a dead
// process. Its loop is autoclear, so the unmount also frees the loop device.
void sweep_stale_images() {
  std::error_code ec;
  for (fs::directory_iterator it(fs::temp_directory_path(), ec), end; !ec && it != end;
       it.increment(ec)) {
    const fs::path dir = it->path();
    if (dir.filename().string().rfind(kDirPrefix, 0) != 0) continue;
    // Without an image the owner may still be between mkdtemp() and flock().
    if (!fs::exists(dir / "image.img") && !older_than_a_minute(dir)) continue;
    const int lock = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock < 0) continue;
    if (::flock(lock, LOCK_EX | LOCK_NB) == 0) {
      const std::string mount_point = (dir / "mnt").string();
      if (is_mounted(mount_point)) ::umount2(mount_point.c_str(), MNT_DETACH);
      std::error_code remove_ec;
      if (!is_mounted(mount_point)) fs::remove_all(dir, remove_ec);
    }
    ::close(lock);
  }
}

}  // namespace

void prepare_process_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    install_cleanup_handlers();
    sweep_stale_images();
  });
}

std::string make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / (std::string(kDirPrefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  return pattern;
}

}  // namespace trimd::test::cleanup
