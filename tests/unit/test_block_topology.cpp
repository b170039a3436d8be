#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "block_topology.hpp"
#include "ci_rule.hpp"

namespace trimd {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

fs::path make_temp_dir(const std::string& prefix) {
  std::string templ = (fs::path(::testing::TempDir()) / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return templ;
}

void write_file(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << content << "\n";
}

struct Queue {
  std::uint64_t discard_granularity = 0;
  std::uint64_t discard_max_bytes = 0;
  bool rotational = false;
};

constexpr Queue kSsd{4096, 2147450880, false};
constexpr Queue kSpinningDisk{0, 0, true};

// A sysfs tree laid out like the kernel's: devices under devices/, reached
// through relative symlinks from dev/block/M:m and class/block/<name>.
class FakeSysfs {
 public:
  FakeSysfs() : root_(make_temp_dir("fake-sysfs")) {}
  ~FakeSysfs() { fs::remove_all(root_); }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  const fs::path& root() const { return root_; }

  fs::path add_disk(const std::string& parent, const std::string& name, const std::string& devno,
                    std::uint64_t sectors, Queue queue) {
    const fs::path dir = root_ / "devices" / parent / "block" / name;
    add_device(dir, devno, sectors);
    write_file(dir / "queue" / "discard_granularity", std::to_string(queue.discard_granularity));
    write_file(dir / "queue" / "discard_max_bytes", std::to_string(queue.discard_max_bytes));
    write_file(dir / "queue" / "rotational", queue.rotational ? "1" : "0");
    fs::create_directories(dir / "slaves");
    return dir;
  }

  fs::path add_partition(const fs::path& disk, const std::string& name, const std::string& devno,
                         std::uint64_t sectors) {
    const fs::path dir = disk / name;
    add_device(dir, devno, sectors);
    write_file(dir / "partition", name.substr(name.find_last_not_of("0123456789") + 1));
    return dir;
  }

  void stack(const fs::path& holder, const fs::path& slave) {
    link(holder / "slaves" / slave.filename(), slave);
  }

  void add_btrfs(const std::string& fsid, const std::vector<fs::path>& members) {
    for (const auto& member : members)
      link(root_ / "fs" / "btrfs" / fsid / "devices" / member.filename(), member);
  }

 private:
  void add_device(const fs::path& dir, const std::string& devno, std::uint64_t sectors) {
    write_file(dir / "dev", devno);
    write_file(dir / "size", std::to_string(sectors));
    link(root_ / "dev" / "block" / devno, dir);
    link(root_ / "class" / "block" / dir.filename(), dir);
  }

  static void link(const fs::path& at, const fs::path& target) {
    fs::create_directories(at.parent_path());
    fs::create_directory_symlink(fs::relative(target, at.parent_path()), at);
  }

  fs::path root_;
};

constexpr const char* kSata = "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0";
constexpr const char* kNvme = "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0";
constexpr const char* kVirtual = "virtual";

MountEntry mount_of(unsigned major, unsigned minor, const std::string& source,
                    const std::string& fs_type = "ext4") {
  MountEntry mount;
  mount.major = major;
  mount.minor = minor;
  mount.source = source;
  mount.fs_type = fs_type;
  mount.mount_point = "/mnt/test";
  return mount;
}

std::vector<std::string> names(const std::vector<BlockDisk>& disks) {
  std::vector<std::string> out;
  for (const auto& disk : disks) out.push_back(disk.name);
  return out;
}

class SysfsInventory : public ::testing::Test {
 protected:
  FakeSysfs sysfs;
  SysfsBlockInventory inventory{sysfs.root()};
};

TEST_F(SysfsInventory, DescribesAWholeDiskFromItsQueueAndSize) {
  sysfs.add_disk(kSata, "sda", "8:0", 1953525168, kSsd);
  const BlockDisk sda = inventory.describe(8, 0);
  EXPECT_EQ(sda.name, "sda");
  EXPECT_EQ(sda.major, 8u);
  EXPECT_EQ(sda.minor, 0u);
  EXPECT_EQ(sda.size_bytes, 1953525168ull * 512);
  EXPECT_EQ(sda.discard_granularity, kSsd.discard_granularity);
  EXPECT_EQ(sda.discard_max_bytes, kSsd.discard_max_bytes);
  EXPECT_FALSE(sda.rotational);
  EXPECT_TRUE(sda.supports_discard());
}

TEST_F(SysfsInventory, DescribesAPartitionWithItsDisksQueue) {
  const fs::path sdb = sysfs.add_disk(kSata, "sdb", "8:16", 7814037168, kSpinningDisk);
  sysfs.add_partition(sdb, "sdb1", "8:17", 2048000);
  const BlockDisk sdb1 = inventory.describe(8, 17);
  EXPECT_EQ(sdb1.name, "sdb1");
  EXPECT_EQ(sdb1.size_bytes, 2048000ull * 512);
  EXPECT_TRUE(sdb1.rotational);
  EXPECT_FALSE(sdb1.supports_discard());
}

TEST_F(SysfsInventory, LeavesTheNameEmptyForAnUnknownDevice) {
  const BlockDisk unknown = inventory.describe(9, 9);
  EXPECT_EQ(unknown.name, "");
  EXPECT_EQ(unknown.major, 9u);
  EXPECT_EQ(unknown.minor, 9u);
}

TEST_F(SysfsInventory, MapsAPartitionToItsWholeDisk) {
  const fs::path nvme = sysfs.add_disk(kNvme, "nvme0n1", "259:0", 1000215216, kSsd);
  sysfs.add_partition(nvme, "nvme0n1p2", "259:2", 998115328);
  const Topology topology = inventory.topology_of(mount_of(259, 2, "/dev/nvme0n1p2"));
  EXPECT_THAT(names(topology.devices), ElementsAre("nvme0n1p2"));
  EXPECT_THAT(names(topology.disks), ElementsAre("nvme0n1"));
  EXPECT_EQ(topology.disks[0].size_bytes, 1000215216ull * 512);
  EXPECT_EQ(topology.devices[0].discard_max_bytes, kSsd.discard_max_bytes);
}

TEST_F(SysfsInventory, GoesDownThroughStackedDevicesToTheLeafDisks) {
  // dm-0 (LVM) over md0 (raid1 of sdb1 + sdc1) and over nvme0n1p1.
  const fs::path sdb = sysfs.add_disk(kSata, "sdb", "8:16", 1000000, kSsd);
  const fs::path sdc = sysfs.add_disk(kSata, "sdc", "8:32", 1000000, kSsd);
  const fs::path nvme = sysfs.add_disk(kNvme, "nvme0n1", "259:0", 2000000, kSsd);
  const fs::path md0 = sysfs.add_disk(kVirtual, "md0", "9:0", 999000, kSsd);
  const fs::path dm0 = sysfs.add_disk(kVirtual, "dm-0", "254:0", 2900000, {512, 1048576, false});
  sysfs.stack(md0, sysfs.add_partition(sdb, "sdb1", "8:17", 999900));
  sysfs.stack(md0, sysfs.add_partition(sdc, "sdc1", "8:33", 999900));
  sysfs.stack(dm0, md0);
  sysfs.stack(dm0, sysfs.add_partition(nvme, "nvme0n1p1", "259:1", 1999000));

  const Topology topology = inventory.topology_of(mount_of(254, 0, "/dev/mapper/vg0-data"));
  EXPECT_THAT(names(topology.devices), ElementsAre("dm-0"));
  EXPECT_EQ(topology.devices[0].discard_max_bytes, 1048576u);  // dm-0's own queue
  EXPECT_THAT(names(topology.disks), ElementsAre("sdb", "sdc", "nvme0n1"));
}

TEST_F(SysfsInventory, ListsADiskUnderSeveralSlavesOnce) {
  const fs::path sda = sysfs.add_disk(kSata, "sda", "8:0", 1000000, kSsd);
  const fs::path dm1 = sysfs.add_disk(kVirtual, "dm-1", "254:1", 900000, kSsd);
  sysfs.stack(dm1, sysfs.add_partition(sda, "sda2", "8:2", 400000));
  sysfs.stack(dm1, sysfs.add_partition(sda, "sda3", "8:3", 500000));
  EXPECT_THAT(names(inventory.topology_of(mount_of(254, 1, "/dev/dm-1")).disks),
              ElementsAre("sda"));
}

TEST_F(SysfsInventory, StopsAtACycleOfSlaves) {
  const fs::path dm2 = sysfs.add_disk(kVirtual, "dm-2", "254:2", 1000, kSsd);
  const fs::path dm3 = sysfs.add_disk(kVirtual, "dm-3", "254:3", 1000, kSsd);
  sysfs.stack(dm2, dm3);
  sysfs.stack(dm3, dm2);
  const Topology topology = inventory.topology_of(mount_of(254, 2, "/dev/dm-2"));
  EXPECT_THAT(names(topology.devices), ElementsAre("dm-2"));
  EXPECT_FALSE(topology.disks.empty());
}

TEST_F(SysfsInventory, TakesEveryMemberOfAMultiDeviceBtrfs) {
  // Device names that exist on no machine: only sysfs can resolve them.
  const fs::path sdx = sysfs.add_disk(kSata, "sdx", "65:112", 500000, kSsd);
  const fs::path sdy = sysfs.add_disk(kSata, "sdy", "65:128", 500000, kSpinningDisk);
  sysfs.add_disk(kSata, "sdz", "65:144", 500000, kSsd);  // another filesystem's
  sysfs.add_btrfs("0b5d2ec4-1f7a-4a55-9c3e-7d2d6f9e8a10", {sdx, sdy});
  const Topology topology = inventory.topology_of(mount_of(0, 41, "/dev/sdy", "btrfs"));
  EXPECT_THAT(names(topology.devices), ElementsAre("sdx", "sdy"));
  EXPECT_THAT(names(topology.disks), ElementsAre("sdx", "sdy"));
  EXPECT_EQ(topology.devices[1].major, 65u);
  EXPECT_EQ(topology.devices[1].minor, 128u);
}

TEST_F(SysfsInventory, FindsTheBtrfsOfAPartitionMember) {
  const fs::path sdx = sysfs.add_disk(kSata, "sdx", "65:112", 500000, kSsd);
  const fs::path sdx1 = sysfs.add_partition(sdx, "sdx1", "65:113", 400000);
  sysfs.add_btrfs("5e4a0b1c-0000-4000-8000-000000000001", {sdx1});
  const Topology topology = inventory.topology_of(mount_of(0, 42, "/dev/sdx1", "btrfs"));
  EXPECT_THAT(names(topology.devices), ElementsAre("sdx1"));
  EXPECT_THAT(names(topology.disks), ElementsAre("sdx"));
}

TEST_F(SysfsInventory, ResolvesAnAnonymousDeviceNumberThroughTheSourceName) {
  sysfs.add_disk(kSata, "sdx", "65:112", 500000, kSsd);
  const Topology topology = inventory.topology_of(mount_of(0, 50, "/dev/sdx", "fuseblk"));
  EXPECT_THAT(names(topology.devices), ElementsAre("sdx"));
}

// The source is a real device node of this machine; the fake tree knows its
// number under another name, so the answer shows which path was taken.
TEST_F(SysfsInventory, ResolvesAnAnonymousDeviceNumberThroughStatOfTheSource) {
  std::optional<fs::path> node;
  struct stat st {};
  std::error_code error;
  for (fs::directory_iterator it("/dev", error), end; !error && it != end && !node;
       it.increment(error))
    if (::stat(it->path().c_str(), &st) == 0 && S_ISBLK(st.st_mode)) node = it->path();
  if (!node) TRIMD_SKIP_OR_FAIL("no block device node in /dev");
  const std::string devno =
      std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  sysfs.add_disk(kVirtual, "stat-found", devno, 1000, kSsd);
  const Topology topology = inventory.topology_of(mount_of(0, 51, node->string(), "btrfs"));
  EXPECT_THAT(names(topology.devices), ElementsAre("stat-found"));
}

TEST_F(SysfsInventory, ReturnsAnEmptyTopologyWithoutABlockDevice) {
  sysfs.add_disk(kSata, "sda", "8:0", 1000000, kSsd);
  EXPECT_THAT(inventory.topology_of(mount_of(0, 23, "tmpfs", "tmpfs")).devices, IsEmpty());
  EXPECT_THAT(inventory.topology_of(mount_of(0, 35, "nas.lan:/export", "nfs4")).devices, IsEmpty());
  EXPECT_THAT(inventory.topology_of(mount_of(0, 36, "/dev/no-such-disk")).devices, IsEmpty());
  const Topology gone = inventory.topology_of(mount_of(8, 5, "/dev/sda5"));  // not in sysfs
  EXPECT_THAT(gone.devices, IsEmpty());
  EXPECT_THAT(gone.disks, IsEmpty());
}

}  // namespace
}  // namespace trimd
