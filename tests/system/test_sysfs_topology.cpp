// The block topology against the real /sys, with real loop devices and
// filesystems: root, /dev/loop-control and mkfs tools, hence the system tier.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/loop.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "block_topology.hpp"
#include "loopfs.hpp"
#include "mountinfo.hpp"

namespace trimd {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

fs::path make_temp_dir(const std::string& prefix) {
  std::string templ = (fs::path(::testing::TempDir()) / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return templ;
}

std::vector<std::string> names(const std::vector<BlockDisk>& disks) {
  std::vector<std::string> out;
  for (const auto& disk : disks) out.push_back(disk.name);
  return out;
}

// ---- The real /sys, with a real loop device (root only) ----

// A loop device over a sparse file, detached on every exit path.
class LoopDevice {
 public:
  LoopDevice(const fs::path& dir, const std::string& name, off_t size) {
    const fs::path backing = dir / (name + ".img");
    const int file = ::open(backing.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (file < 0) throw std::runtime_error("cannot make " + backing.string());
    if (::ftruncate(file, size) != 0) {
      ::close(file);
      throw std::runtime_error("cannot size " + backing.string());
    }
    const int control = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    for (int attempt = 0; control >= 0 && fd_ < 0 && attempt < 10; ++attempt) {
      const int number = ::ioctl(control, LOOP_CTL_GET_FREE);
      if (number < 0) break;
      number_ = static_cast<unsigned>(number);
      path_ = device_node(dir);
      const int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
      loop_config config{};
      config.fd = static_cast<__u32>(file);
      config.info.lo_flags = LO_FLAGS_AUTOCLEAR;  // gone even if this process dies
      if (fd >= 0 && ::ioctl(fd, LOOP_CONFIGURE, &config) == 0)
        fd_ = fd;
      else if (fd >= 0)
        ::close(fd);  // taken by someone else meanwhile: try the next
    }
    if (control >= 0) ::close(control);
    ::close(file);
    if (fd_ < 0) throw std::runtime_error("cannot attach a loop device");
  }
  ~LoopDevice() {
    ::ioctl(fd_, LOOP_CLR_FD, 0);
    ::close(fd_);
  }
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;

  const std::string& path() const { return path_; }
  std::string name() const { return "loop" + std::to_string(number_); }
  unsigned number() const { return number_; }

 private:
  // Without udev, /dev/loopN may not exist yet for a new N: make a node.
  std::string device_node(const fs::path& dir) const {
    const std::string dev_path = "/dev/" + name();
    struct stat st {};
    if (::stat(dev_path.c_str(), &st) == 0) return dev_path;
    const fs::path node = dir / name();
    ::mknod(node.c_str(), S_IFBLK | 0600, makedev(7, number_));
    return node.string();
  }

  unsigned number_ = 0;
  std::string path_;
  int fd_ = -1;
};

class MountGuard {
 public:
  MountGuard(const std::string& source, const fs::path& target, const std::string& type,
             const std::string& data = "")
      : target_(target) {
    fs::create_directories(target);
    if (::mount(source.c_str(), target.c_str(), type.c_str(), 0, data.c_str()) != 0)
      throw std::runtime_error("mount " + source + " failed");
  }
  ~MountGuard() { ::umount2(target_.c_str(), MNT_DETACH); }
  MountGuard(const MountGuard&) = delete;
  MountGuard& operator=(const MountGuard&) = delete;

 private:
  fs::path target_;
};

// Mounts made from here on stay in this test process's own namespace.
void enter_private_mount_namespace() {
  ASSERT_EQ(::unshare(CLONE_NEWNS), 0);
  ASSERT_EQ(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0);
}

std::optional<MountEntry> live_mount_at(const fs::path& mount_point) {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  for (auto& mount : parse_mountinfo(text.str()))
    if (mount.mount_point == mount_point.string()) return mount;
  return std::nullopt;
}

int run(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()); }

class RealSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    dir_ = make_temp_dir("trimd-real-sysfs");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
  SysfsBlockInventory inventory;  // the real /sys
};

TEST_F(RealSysfs, DescribesAnAttachedLoopDeviceAsDiscardCapable) {
  const LoopDevice loop(dir_, "plain", 64 << 20);
  const BlockDisk disk = inventory.describe(7, loop.number());
  EXPECT_EQ(disk.name, loop.name());
  EXPECT_EQ(disk.size_bytes, 64u << 20);
  EXPECT_GT(disk.discard_max_bytes, 0u);
  EXPECT_GT(disk.discard_granularity, 0u);
}

TEST_F(RealSysfs, TopologyOfAMountedLoopDeviceIsThatLoopDevice) {
  REQUIRE_TOOLS_OR_FAIL("mkfs.ext4");
  const LoopDevice loop(dir_, "ext4", 64 << 20);
  ASSERT_EQ(run("mkfs.ext4 -q -F " + loop.path()), 0);
  enter_private_mount_namespace();
  const MountGuard mounted(loop.path(), dir_ / "mnt", "ext4");
  const auto mount = live_mount_at(dir_ / "mnt");
  ASSERT_TRUE(mount.has_value());
  const Topology topology = inventory.topology_of(*mount);
  EXPECT_THAT(names(topology.devices), ElementsAre(loop.name()));
  EXPECT_THAT(names(topology.disks), ElementsAre(loop.name()));
  ASSERT_FALSE(topology.devices.empty());
  EXPECT_GT(topology.devices[0].discard_max_bytes, 0u);
}

TEST_F(RealSysfs, TopologyOfATwoDeviceBtrfsListsBothLoopDevices) {
  REQUIRE_TOOLS_OR_FAIL("mkfs.btrfs");
  const LoopDevice first(dir_, "btrfs-a", 160 << 20);
  const LoopDevice second(dir_, "btrfs-b", 160 << 20);
  ASSERT_EQ(run("mkfs.btrfs -q -f -d raid1 -m raid1 " + first.path() + " " + second.path()), 0);
  enter_private_mount_namespace();
  const MountGuard mounted(first.path(), dir_ / "mnt", "btrfs", "device=" + second.path());
  const auto mount = live_mount_at(dir_ / "mnt");
  ASSERT_TRUE(mount.has_value());
  EXPECT_EQ(mount->major, 0u);  // anonymous: only the source leads to the devices
  std::vector<std::string> expected = {first.name(), second.name()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names(inventory.topology_of(*mount).devices), expected);
}

}  // namespace
}  // namespace trimd
